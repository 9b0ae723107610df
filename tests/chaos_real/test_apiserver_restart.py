"""kube-apiserver SIGKILLed mid-pass and restarted a few seconds later (same etcd, port and certificates).

Why: a control-plane upgrade or an OOM kill drops every connection of a running pass at once, and the
server refuses connections until it is back. The pass must end within its budget + 5 s with exit 0 or 1
and no traceback, must never roll a workload twice for one change, and the next pass must finish what the
killed one left: counted as ReplicaSets per Deployment (one new ReplicaSet per change), from the API.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest

from tests.chaos_real.harness import Cluster, Figures, configmap, seed, template_hash
from tests.cluster.controlplane import AuditEntry

COUNT, SOURCES = 16, 4
# Slow enough (qps 10, pages of 4) that a pass takes several seconds and each moment below can be caught
# in the audit log; the kill happens right after the first such request completed.
SLOW = {"qps": 10, "pageSize": 4}
BUDGET = 40.0
DOWN_S = 3.0
MOMENTS: dict[str, Callable[[AuditEntry], bool]] = {
    "listing": lambda e: e.verb == "list" and e.resource == "deployments" and "limit=" in e.uri,
    "reads": lambda e: e.resource == "configmaps" and e.verb in ("get", "list"),
    "writes": lambda e: e.verb == "patch" and e.resource == "deployments" and 200 <= e.code < 300,
}


@pytest.mark.parametrize("moment", list(MOMENTS))
def test_a_killed_and_restarted_apiserver_ends_the_pass_in_time_and_rolls_each_change_exactly_once(
    plane: Cluster, moment: str
) -> None:
    """One kill per control plane: the controllers' own reconnection backoff grows with every restart
    (a second kill on the same plane left the Deployment controller idle for 30-70 s)."""
    cluster = plane
    ns = cluster.namespace("kill")
    names = seed(cluster, ns, COUNT, SOURCES)
    adopted = cluster.run("-n", ns)
    assert adopted.code == 0, adopted.stderr
    assert set(adopted.actions().values()) == {"adopt"}
    cluster.wait_observed(ns)
    assert cluster.rs_counts(ns) == dict.fromkeys(names, 1)

    # Every source changes: each Deployment must roll exactly once.
    cluster.apply(*(configmap(ns, f"cm{j}", {"v": "1"}) for j in range(SOURCES)))
    offset = cluster.audit_offset()
    proc, started = cluster.start("-n", ns, "--config", str(cluster.config(**SLOW)), timeout=BUDGET)
    hit = cluster.wait_for_request(offset, MOMENTS[moment], timeout=BUDGET, proc=proc)
    cluster.cp.kill_apiserver()
    time.sleep(DOWN_S)
    cluster.cp.start_apiserver()
    faulted = cluster.finish(proc, started, BUDGET)
    assert faulted.code in (0, 1), (hit, faulted.code, faulted.stderr[-2000:])
    rows = faulted.rows()
    deployments = {k: r for k, r in rows.items() if r["kind"] == "Deployment" and r["name"] in names}
    others = {k: (r["action"], r["reason"]) for k, r in rows.items() if k not in deployments}
    # Every Deployment has its row, unless the outage failed the list's scope (a `Deployment/<ns>/*` row:
    # a restarting kube-apiserver answers 403 until its RBAC caches are filled, and a 403 is final for a
    # pass); anything else is a failed scope too, and any failure is exit 1.
    assert all(action == "failed" for action, _ in others.values()), others
    assert len(deployments) == COUNT or f"Deployment/{ns}/*" in others, (len(deployments), others)
    # The only failures: those 403s (never a hang, a lost connection past the retries, or a traceback).
    failures = [r["reason"] for r in rows.values() if r["action"] == "failed"]
    assert all("403 Forbidden" in reason for reason in failures), failures
    assert faulted.code == (1 if others or "failed" in {r["action"] for r in deployments.values()} else 0)

    # The next pass (shipped defaults) finishes what the killed one left; the one after is steady.
    converge = cluster.run("-n", ns)
    assert converge.code == 0, converge.stderr
    assert set(converge.actions().values()) <= {"rollout", "in-sync", "refresh"}, converge.actions()
    steady = cluster.run("-n", ns)
    assert set(steady.actions().values()) == {"in-sync"}, steady.actions()

    cluster.wait_observed(ns)
    counts = cluster.rs_counts(ns)
    figures = Figures(f"kube-apiserver SIGKILLed during {moment}, back after {DOWN_S:.0f} s", injected=1)
    for result in (adopted, faulted, converge, steady):
        figures.count(result)
    figures.expected = COUNT
    figures.lost = sum(max(0, 2 - counts[n]) for n in names)
    figures.doubled = sum(max(0, counts[n] - 2) for n in names)
    figures.done = COUNT - figures.lost
    figures.notes["rolled by the faulted pass"] = sum(1 for a in faulted.actions().values() if a == "rollout")
    figures.notes.setdefault("failed scopes", []).extend(sorted(others.values()))
    figures.save()
    assert counts == dict.fromkeys(names, 2), counts
    # Each Deployment runs the template whose hash the steady pass agrees with.
    rows = steady.rows()
    for d in cluster.deployments(ns):
        key = f"Deployment/{ns}/{d['metadata']['name']}"
        assert template_hash(d["spec"]["template"]) == rows[key]["hash"], key
