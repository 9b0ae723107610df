"""Two `kube-rehash run` processes started together on the same changes.

Why: a CronJob's `concurrencyPolicy: Forbid` is per CronJob; a manual `kubectl create job --from` or a
second installation can overlap a scheduled pass. Each workload must still roll once per change, counted
as ReplicaSets by the real Deployment controller; the loser of each race re-reads and sees our annotation.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from tests.chaos_real.harness import Cluster, Figures, configmap, seed

COUNT, SOURCES = 16, 4
ROUNDS = 2
BUDGET = 60.0


def deployment_patch(event: dict[str, Any]) -> bool:
    """A PATCH of a Deployment in the audit log (logged with its body: tests/cluster's audit policy)."""
    return event.get("verb") == "patch" and (event.get("objectRef") or {}).get("resource") == "deployments"


def sets_template(event: dict[str, Any]) -> bool:
    """Whether the logged JSON patch writes the pod template (a rollout), not only metadata (bookkeeping)."""
    ops = event.get("requestObject") or []
    return any(op["op"] != "test" and op["path"].startswith("/spec/template") for op in ops)


def test_two_passes_started_together_roll_each_change_exactly_once(plane: Cluster) -> None:
    cluster = plane
    ns = cluster.namespace("twice")
    names = seed(cluster, ns, COUNT, SOURCES)
    figures = Figures("two kube-rehash passes started together", injected=0)
    first = [cluster.start("-n", ns, timeout=BUDGET) for _ in range(2)]
    for proc, started in first:
        result = cluster.finish(proc, started, BUDGET)
        figures.count(result)
        assert result.code == 0, result.stderr
    cluster.wait_observed(ns)
    assert cluster.rs_counts(ns) == dict.fromkeys(names, 1), "adoption by two passes restarted something"

    for round_ in range(1, ROUNDS + 1):
        cluster.apply(*(configmap(ns, f"cm{j}", {"v": str(round_)}) for j in range(SOURCES)))
        offset = cluster.audit_offset()
        passes = [cluster.start("-n", ns, timeout=BUDGET) for _ in range(2)]
        figures.injected += 1
        results = [cluster.finish(proc, started, BUDGET) for proc, started in passes]
        rollouts: Counter[str] = Counter()
        for result in results:
            figures.count(result)
            assert result.code == 0, result.stderr
            for key, action in result.actions().items():
                assert action in ("rollout", "refresh", "in-sync"), (key, action)
                if action == "rollout":
                    rollouts[key] += 1
        # Between them the two reports claim each rollout once ...
        assert rollouts == Counter({f"Deployment/{ns}/{n}": 1 for n in names}), rollouts
        # ... and the audit log agrees: per Deployment, exactly one patch was accepted that rolled it
        # (others were refused by the JSON-patch test, or only rewrote bookkeeping after a re-read).
        patches = [e for e in cluster.audit_events(offset) if deployment_patch(e)]
        accepted = [e for e in patches if e["responseStatus"]["code"] == 200]
        rolled = Counter(e["objectRef"]["name"] for e in accepted if sets_template(e))
        assert rolled == Counter(dict.fromkeys(names, 1)), rolled
        refused = sum(1 for e in patches if e["responseStatus"]["code"] == 422)
        figures.notes[f"round {round_}: patches refused by the guard (422)"] = refused
        cluster.wait_observed(ns)
        counts = cluster.rs_counts(ns)
        figures.expected += COUNT
        figures.lost += sum(max(0, 1 + round_ - counts[n]) for n in names)
        figures.doubled += sum(max(0, counts[n] - 1 - round_) for n in names)
        figures.done = figures.expected - figures.lost
        assert counts == dict.fromkeys(names, 1 + round_), counts
    figures.save()
