"""The benchmark's real-server scenario (benchmarks/real.py) at a tiny scale: what its figures must satisfy.

Why: `make bench` (with `--real-scale 0.25`) runs for minutes, for the run of record; this runs the same
code at 0.01x in seconds, so a broken scenario (or a counting bug: the audit filter, the seeding counted as
the tool's) is caught by `make test`, and the invariants the published table relies on are checked on real
figures: a steady pass writes nothing, a change pass patches exactly the workloads whose sources changed.
"""

from __future__ import annotations

from typing import Any

import pytest

from benchmarks.real import TOOLS, real_scenario
from tests.cluster.controlplane import ControlPlane

SCALE = 0.01  # 30 workloads (10 opted in), 1 namespace, 160 sources


@pytest.fixture(scope="module")
def measured(control: ControlPlane, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The scenario on a control plane of its own: its passes are cluster-wide, and the session's server
    (`control`, requested for its skip-or-fail rule on missing binaries) holds other suites' objects."""
    return real_scenario(SCALE, tmp_path_factory.mktemp("bench"), repeat=1, log=lambda _: None)


def test_every_pass_of_every_tool_is_counted_from_the_audit_log(measured: dict[str, Any]) -> None:
    assert measured["shape"]["workloads"] == 30
    assert measured["objects"] > 0
    for phase in ("steady", "change"):
        assert set(measured[phase]) == set(TOOLS)
    assert set(measured["first"]) == {"naive", "kube-rehash"}
    rows = [*measured["first"].values(), *measured["steady"].values(), *measured["change"].values()]
    rows += measured["defaults"].values()
    for row in rows:
        assert row["exit"] == 0, row
        assert row["requests"] > 0, row
        assert row["requests"] == sum(row["by_verb"].values()), row
        assert row["wall_s"] > 0
        # A guarded patch may lose to a controller's status write (409) and is retried; nothing else fails.
        assert row["errors"] == row["conflicts"], row
        assert row["list_uris"], "every tool lists the workloads"
        # Bytes are not in the audit log: the row must not pretend to know them.
        assert "bytes" not in row


def test_first_passes_adopt_every_opted_in_workload(measured: dict[str, Any]) -> None:
    opted_in = measured["shape"]["opted_in"]
    for first in (measured["first"]["kube-rehash"], measured["defaults"]["first"]):
        assert first["summary"]["adopt"] == opted_in, first["summary"]
        assert len(first["patched"]) == opted_in
    assert len(measured["first"]["naive"]["patched"]) == opted_in
    # The admin's seeding (some 200 creates) is not counted as the tool's.
    assert measured["first"]["kube-rehash"]["by_verb"].get("create", 0) == 0


def test_steady_passes_write_nothing(measured: dict[str, Any]) -> None:
    for tool, row in [*measured["steady"].items(), ("defaults", measured["defaults"]["steady"])]:
        assert row["writes"] == 0, (tool, row)
    rehash = measured["steady"]["kube-rehash"]["summary"]
    assert rehash["in-sync"] == measured["shape"]["opted_in"], rehash


def test_the_change_pass_patches_exactly_the_workloads_whose_sources_changed(
    measured: dict[str, Any],
) -> None:
    expected = measured["expected_patched"]
    assert measured["changed_sources"] >= 1
    assert expected, "the changed sources are referenced by at least one opted-in workload"
    assert measured["change"]["kube-rehash"]["patched"] == expected
    assert measured["change"]["kube-rehash"]["summary"]["rollout"] == len(expected)
    assert measured["change"]["naive"]["patched"] == expected
    assert measured["change"]["floor"]["writes"] == 0


def test_the_passes_after_a_change_converge_on_the_real_server_and_end_at_the_steady_cost(
    measured: dict[str, Any],
) -> None:
    """With the real controllers: every rollout completes and is recorded, no guarded patch of ours
    is refused, and the first pass after all rollouts completed costs what a steady pass costs."""
    steady = measured["steady"]["kube-rehash"]
    for after in (measured["after_change"], measured["defaults_after_change"]):
        assert after["converged"], after
        assert after["total_refused"] == 0, after
        last = after["passes"][-1]
        assert last["rollout_status"] == {} and last["writes"] == 0, last
        assert last["requests"] == steady["requests"], (last, steady)
    defaults = measured["defaults"]
    assert defaults["change"]["summary"]["rollout"] >= 1
