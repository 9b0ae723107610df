"""Pinned histories (tests/robustness/regressions.json), replayed on the servers each names.

Each entry is a history a random run found or a case worth keeping: its `steps` replay as they were
printed, and every pass of it must keep every invariant of the checker, on the simulator and, where
`servers` names it, on the real control plane with its controllers running.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.robustness.conftest import Factory
from tests.robustness.runner import run_history
from tests.robustness.shrink import explain_failure

PINNED: list[dict[str, Any]] = json.loads((Path(__file__).parent / "regressions.json").read_text())


def cases() -> list[Any]:
    return [
        pytest.param(
            entry,
            server,
            id=f"{entry['name']}-{server}",
            marks=[pytest.mark.real] if server == "real" else [],
        )
        for entry in PINNED
        for server in entry["servers"]
    ]


@pytest.mark.parametrize(("entry", "server"), cases())
def test_a_pinned_history_keeps_every_invariant(
    request: pytest.FixtureRequest, entry: dict[str, Any], server: str
) -> None:
    servers: Factory = request.getfixturevalue(f"{server}_servers")
    outcome = run_history(servers, entry["steps"])
    assert not outcome.failed, explain_failure(None, entry["steps"], outcome, server)
    assert outcome.passes >= sum(1 for s in entry["steps"] if s["op"] == "pass")
    if any(s["op"] == "pass" and s["faults"] for s in entry["steps"]):
        assert outcome.failpoints.total() >= 1, "no failpoint of the history fired"
