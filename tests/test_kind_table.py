"""A kind is one entry: everything that differs by workload kind hangs off its `Kind` in model/kinds.py, so
no code of the pass (pipeline, policy, model) asks a kind's name, and a new kind is one entry (the
CloneSet preset: tests/e2e/test_preset_kinds.py)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from reconcile.model.kinds import DAEMONSET, DEPLOYMENT, ROLLOUT, STATEFULSET, PodOwnership
from reconcile.model.presets import CLONESET

ROOT = Path(__file__).resolve().parent.parent / "reconcile"
NAMES = ("Deployment", "StatefulSet", "DaemonSet", "CronJob", "Rollout", "ReplicaSet", "CloneSet")
QUOTED = "|".join(NAMES)
ASKED = re.compile(rf"""["']({QUOTED})["']|kind\.kind\s*(==|!=|\bin\b|\bnot in\b)""")


@pytest.mark.parametrize(
    "path",
    sorted(p for layer in ("pipeline", "policy", "model") for p in (ROOT / layer).glob("*.py")),
    ids=lambda p: f"{p.parent.name}/{p.name}",
)
def test_no_code_of_the_pass_asks_a_kinds_name(path: Path) -> None:
    if path.name in ("kinds.py", "presets.py"):  # the kind table itself
        return
    asked = [
        f"{path.name}:{n}: {line.strip()}"
        for n, line in enumerate(path.read_text().splitlines(), 1)
        if ASKED.search(line)
    ]
    assert asked == []


def test_pods_point_at_their_workload_as_the_kinds_entry_says() -> None:
    hashed = {"pod-template-hash": "5d9c7", "rollouts-pod-template-hash": "77f"}
    assert DEPLOYMENT.pods is not None and ROLLOUT.pods is not None and STATEFULSET.pods is not None
    assert DEPLOYMENT.pods.workload_of("ReplicaSet", "web-5d9c7", hashed) == "web"
    assert DEPLOYMENT.pods.workload_of("ReplicaSet", "web-other", hashed) is None
    assert ROLLOUT.pods.workload_of("ReplicaSet", "api-77f", hashed) == "api"
    assert STATEFULSET.pods.workload_of("StatefulSet", "db", {}) == "db"
    assert DAEMONSET.pods == PodOwnership("DaemonSet") and CLONESET.pods is None
