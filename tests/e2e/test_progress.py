"""A mass change under a tight budget makes progress in every pass, at the shipped request rate.

Run as a user would (the installed CLI, no config file: the shipped qps 20), with `--timeout` far too short
for the whole change: 120 Deployments of one namespace share one Secret, which is rotated. Checked per pass:
it rolls at least one Deployment until all are rolled, whatever state the earlier rollouts are in (on the real
server the deployment controller rolls them and writes their status; on the simulator nothing ever finishes a
rollout, as with a stuck image pull). Across passes: each Deployment rolls exactly once (on the real server,
exactly one new ReplicaSet each), and no guarded patch of ours fails (no 409/422): the guards test only what
someone else could have changed.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from tests.e2e.conftest import Backend, Result, configmap, deployment, secret

TIMEOUT = "5"
MAX_PASSES = 14


def pod(i: int, shared: str = "shared") -> dict[str, Any]:
    env_from = [{"configMapRef": {"name": f"cfg-{i}"}}, {"secretRef": {"name": shared}}]
    return {"containers": [{"name": "app", "image": "app:1", "envFrom": env_from}]}


def seed(cluster: Backend, namespaces: dict[str, int]) -> None:
    for ns, count in namespaces.items():
        cluster.add(secret("shared", {"p": "x"}, ns=ns))
        for i in range(count):
            cluster.add(configmap(f"cfg-{i}", {"v": "1"}, ns=ns), deployment(f"app-{i}", pod(i), ns=ns))


def converge(cluster: Backend, *args: str) -> list[Result]:
    """Passes until nothing is pending (every workload decided and nothing left to write)."""
    passes = []
    for _ in range(MAX_PASSES):
        result = cluster.run("--timeout", TIMEOUT, *args)
        assert result.code == 0, result.stderr
        passes.append(result)
        summary = result.report["summary"]
        if not summary["deferred"] and not summary["adopt"] and not summary["rollout"]:
            return passes
    raise AssertionError(f"no convergence in {MAX_PASSES} passes: {[p.report['summary'] for p in passes]}")


def rolled(result: Result) -> list[str]:
    return [f"{w['namespace']}/{w['name']}" for w in result.report["workloads"] if w["action"] == "rollout"]


def rotate_and_roll(cluster: Backend, namespaces: dict[str, int], *args: str) -> list[Result]:
    """Adopt everything, rotate every namespace's shared Secret, then pass until every rollout is done;
    checks that each pass rolled something until none was pending, and that no guard failed."""
    seed(cluster, namespaces)
    converge(cluster, *args)
    if cluster.name == "real":  # each Deployment's first ReplicaSet, before the change
        for ns, count in namespaces.items():
            for i in range(count):
                cluster.wait_rolled_out("deployments", ns, f"app-{i}", timeout=120)
    for ns in namespaces:
        cluster.edit("secrets", ns, "shared", {"stringData": {"p": "rotated"}})
    cluster.clear_log()
    passes = converge(cluster, *args)
    counts = [len(rolled(p)) for p in passes]
    total = sum(namespaces.values())
    assert sum(counts) == total, counts
    pending = [i for i, _ in enumerate(counts) if sum(counts[:i]) < total]
    assert all(counts[i] > 0 for i in pending), f"a pass with rollouts pending rolled nothing: {counts}"
    each = Counter(name for p in passes for name in rolled(p))
    assert set(each.values()) == {1}, f"rolled more than once: {[n for n, c in each.items() if c > 1]}"
    refused = [r for r in cluster.writes() if r.status in (409, 422)]
    assert not refused, f"guarded patches refused: {[(r.method, r.path, r.status) for r in refused]}"
    return passes


@pytest.mark.slow
def test_a_shared_secret_rotated_under_120_deployments_rolls_some_in_every_pass(cluster: Backend) -> None:
    rotate_and_roll(cluster, {"mass": 120}, "-n", "mass")
    if cluster.name == "real":
        for i in range(120):
            cluster.wait_rolled_out("deployments", "mass", f"app-{i}", timeout=120)
        owners = Counter(
            rs["metadata"]["ownerReferences"][0]["name"] for rs in cluster.list("replicasets", "mass")
        )
        assert set(owners.values()) == {2}, "each Deployment: its first ReplicaSet and exactly one new one"


@pytest.mark.slow
@pytest.mark.sim_only("rollouts that never finish: the simulator runs no controller")
def test_rollouts_that_never_finish_do_not_starve_pending_ones(cluster: Backend) -> None:
    """240 Deployments in 6 namespaces whose rollouts stay `progressing` forever: their health checks
    come after the pending rollouts, so every pass rolls some until all are rolled."""
    passes = rotate_and_roll(cluster, {f"team-{n}": 40 for n in range(6)})
    last = passes[-1].report["workloads"]
    assert {w.get("rollout_status") for w in last} == {"progressing"}, "every rollout is still watched"
