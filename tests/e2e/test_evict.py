"""Restart by eviction end to end on the simulator: `kube-rehash.io/restart: evict` never patches the pod
template; each pass evicts a bounded number of the pods that started before the change (oldest first,
through pods/eviction, never a DELETE), a PodDisruptionBudget's refusal keeps the pod and names the
budget, and once every pod is newer than the change the hash is recorded and the row is `in-sync`.

The simulator runs no controller, so the test plays the Deployment's: it seeds the ReplicaSet and pods
and creates a replacement for each evicted pod. Its ConfigMaps carry a managedFields entry timed at their
last content change (`Simulator(content_times=True)`), as kube-apiserver's do. tests/real/test_evict.py
runs the same story with the real controllers.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from rehash_simulator import Simulator
from tests.e2e.conftest import Backend, Cluster, configmap, deployment, env_from, template_hash
from tests.evicting import EVICT, change, pod, pods, seed

pytestmark = pytest.mark.sim_only("the test plays the controllers: it seeds pods and replaces evicted ones")


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[Backend]:
    with Simulator(content_times=True).start() as sim:
        yield Cluster(sim, tmp_path)


def row(result: Any) -> dict[str, Any]:
    return result.row("Deployment", "web")  # type: ignore[no-any-return]


def evictions(cluster: Backend) -> list[str]:
    return [e.path.split("/")[-2] for e in cluster.requests("POST") if e.path.endswith("/eviction")]


@pytest.mark.slow
def test_an_operator_owned_deployment_is_restarted_by_eviction_pod_by_pod_without_a_template_change(
    cluster: Backend,
) -> None:
    rs = seed(cluster)
    first = cluster.run()
    assert row(first)["action"] == "adopt", first.report
    template = cluster.get("deployments", "shop", "web")["spec"]["template"]
    change(cluster)
    cluster.clear_log()
    evicted: list[str] = []
    for step in range(3):
        result = cluster.run()
        assert (row(result)["action"], result.code) == ("rollout", 0), result.report
        (gone,) = evictions(cluster)
        assert gone == f"web-1-{step}"  # oldest first, one per pass (maxUnavailable defaults to one)
        assert f"evicted {gone}" in row(result)["reason"] and "configmap/app changed" in row(result)["reason"]
        evicted.append(gone)
        cluster.add(pod(f"web-2-{step}", rs))  # the ReplicaSet's replacement
        cluster.clear_log()
    done = cluster.run()
    assert row(done)["action"] == "in-sync" and "pods restarted by eviction" in row(done)["reason"], (
        done.report
    )
    assert evictions(cluster) == []
    web = cluster.get("deployments", "shop", "web")
    assert web["spec"]["template"] == template and template_hash(web) is None
    assert web["metadata"]["annotations"]["kube-rehash.io/config-hash"] == row(done)["hash"]
    assert "kube-rehash.io/last-rollout" in web["metadata"]["annotations"]  # min-interval counts from it
    assert pods(cluster) == ["stray", "web-2-0", "web-2-1", "web-2-2"]
    cluster.clear_log()
    steady = cluster.run()
    assert row(steady)["action"] == "in-sync" and cluster.writes() == []
    assert len(cluster.sim.store.list("replicasets", "shop")) == 1


def test_the_tool_never_deletes_a_pod_and_evicts_only_pods_older_than_the_change(cluster: Backend) -> None:
    rs = seed(cluster, strategy={"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 5}})
    cluster.run()
    change(cluster)
    cluster.add(pod("web-new", rs))  # started after the change: never evicted
    cluster.clear_log()
    result = cluster.run()
    assert sorted(evictions(cluster)) == ["web-1-0", "web-1-1", "web-1-2"]  # maxUnavailable allows all
    assert "3 of 4 pods started before the change" in row(result)["reason"]
    assert [e for e in cluster.requests("DELETE")] == []
    assert pods(cluster) == ["stray", "web-new"]
    bodies = [json.loads(e.body) for e in cluster.requests("POST") if e.path.endswith("/eviction")]
    assert all(b["apiVersion"] == "policy/v1" and b["kind"] == "Eviction" for b in bodies)


@pytest.mark.slow
def test_a_disruption_budget_that_allows_nothing_keeps_every_pod_and_names_the_budget(
    cluster: Backend,
) -> None:
    seed(cluster, replicas=2, stray=False)
    cluster.add(
        {
            "apiVersion": "policy/v1",
            "kind": "PodDisruptionBudget",
            "metadata": {"name": "web-pdb", "namespace": "shop"},
            "spec": {"minAvailable": 2, "selector": {"matchLabels": {"app": "web"}}},
        }
    )
    cluster.run()
    change(cluster)
    for _ in range(2):
        result = cluster.run()
        assert (row(result)["action"], result.code) == ("deferred", 0), result.report
        assert "disruption budget web-pdb" in row(result)["reason"], row(result)["reason"]
    assert pods(cluster) == ["web-1-0", "web-1-1"]
    assert cluster.requests("DELETE") == []


def test_plan_and_explain_name_the_pods_that_would_be_evicted_and_evict_none(cluster: Backend) -> None:
    seed(cluster)
    cluster.run()
    change(cluster)
    cluster.clear_log()
    plan = cluster.cli("plan", "-o", "json")
    assert row(plan)["action"] == "rollout" and "evicts web-1-0" in row(plan)["reason"], plan.stdout
    explained = cluster.cli("explain", "deployment/web", "-n", "shop", "-o", "json")
    doc = json.loads(explained.stdout)
    assert doc["action"] == "rollout" and "evicts web-1-0" in doc["reason"], doc
    assert cluster.writes() == [] and len(pods(cluster)) == 4


def test_a_malformed_restart_annotation_skips_the_workload_naming_it(cluster: Backend) -> None:
    cluster.add(configmap("app", {"a": "1"}))
    cluster.add(
        deployment(
            "web", env_from("configmap", "app"), annotations={**EVICT, "kube-rehash.io/restart": "kill"}
        )
    )
    result = cluster.run()
    assert row(result)["action"] == "skipped" and "kube-rehash.io/restart" in row(result)["reason"]
    assert cluster.writes() == []


def test_a_server_dry_run_asks_for_the_evictions_with_dry_run_and_keeps_every_pod(cluster: Backend) -> None:
    seed(cluster)
    adopted = row(cluster.run())["hash"]
    change(cluster)
    cluster.clear_log()
    result = cluster.run("--dry-run=server")
    assert row(result)["action"] == "rollout" and result.report["dry_run"] is True
    (asked,) = [e for e in cluster.requests("POST") if e.path.endswith("/eviction")]
    assert asked.query.get("dryRun") == "All"
    assert len(pods(cluster)) == 4
    web = cluster.get("deployments", "shop", "web")
    assert web["metadata"]["annotations"]["kube-rehash.io/config-hash"] == adopted
    assert row(cluster.run())["action"] == "rollout"  # the real pass still has the work to do


@pytest.mark.slow
def test_min_interval_counts_from_the_end_of_a_restart_by_eviction(cluster: Backend) -> None:
    rs = seed(cluster, replicas=1, stray=False)
    cluster.edit(
        "deployments", "shop", "web", {"metadata": {"annotations": {"kube-rehash.io/min-interval": "1h"}}}
    )
    cluster.run()
    change(cluster)
    assert row(cluster.run())["action"] == "rollout"
    cluster.add(pod("web-2-0", rs))
    assert row(cluster.run())["action"] == "in-sync"
    cluster.edit("configmaps", "shop", "app", {"data": {"a": "3"}})
    held = row(cluster.run())
    assert held["action"] == "deferred" and "min-interval" in held["reason"], held
    assert pods(cluster) == ["web-2-0"]
