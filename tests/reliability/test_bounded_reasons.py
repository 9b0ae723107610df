"""Reasons in the report stay readable whatever the input: long lists are cut with a count."""

from __future__ import annotations

from tests.e2e.conftest import Cluster, deployment
from tests.reliability.helpers import in_process_pass

CM = "kube-rehash.io/configmaps"


def test_an_enormous_reference_list_is_skipped_with_a_bounded_reason(sim: Cluster) -> None:
    names = ",".join(f"n{i}" for i in range(5000))
    sim.add(deployment("huge", annotations={CM: names}))
    report = in_process_pass(sim.sim, sim.kubeconfig)
    row = {r.name: r for r in report.rows}["huge"]
    assert row.action == "skipped" and "missing required configmap/n0" in row.reason
    assert len(row.reason) < 2000, len(row.reason)
    assert "more" in row.reason
