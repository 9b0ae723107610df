"""The simulator's pods/eviction subresource answers as kube-apiserver 1.37's (evictions.py): 201 and the
pod gone, 404 for a missing pod, a budget's 429 naming it, 500 for two budgets, terminal pods evicted
whatever the budget says, RBAC on `pods/eviction`, and managedFields timed at a content change."""

from __future__ import annotations

from typing import Any

import pytest
from simhelpers import call

from rehash_simulator import Simulator

EVICTION = "/api/v1/namespaces/shop/pods/{}/eviction"


def pod(name: str, phase: str = "Running") -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "shop", "labels": {"app": "web"}},
        "spec": {"containers": [{"name": "app", "image": "app:1"}]},
        "status": {"phase": phase, "conditions": [{"type": "Ready", "status": "True"}]},
    }


def budget(name: str, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": name, "namespace": "shop"},
        "spec": {"selector": {"matchLabels": {"app": "web"}}, **spec},
    }


def eviction(name: str) -> dict[str, Any]:
    return {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": name, "namespace": "shop"}}


@pytest.fixture
def sim() -> Any:
    with Simulator(content_times=True).start() as simulator:
        yield simulator


def test_an_eviction_deletes_the_pod_and_answers_201_success(sim: Simulator) -> None:
    sim.store.create(pod("a"))
    reply = call(sim, "POST", EVICTION.format("a"), eviction("a"))
    assert reply.status == 201 and reply.json()["status"] == "Success"
    assert not sim.store.exists("pods", "shop", "a")
    assert call(sim, "POST", EVICTION.format("a"), eviction("a")).status == 404


def test_a_dry_run_eviction_keeps_the_pod(sim: Simulator) -> None:
    sim.store.create(pod("a"))
    assert call(sim, "POST", EVICTION.format("a") + "?dryRun=All", eviction("a")).status == 201
    assert sim.store.exists("pods", "shop", "a")


def test_a_budget_that_allows_no_disruption_refuses_with_429_naming_it(sim: Simulator) -> None:
    sim.store.create_many([pod("a"), pod("b"), budget("web", minAvailable=2)])
    reply = call(sim, "POST", EVICTION.format("a"), eviction("a"))
    assert reply.status == 429 and reply.json()["reason"] == "TooManyRequests"
    assert reply.json()["message"] == "Cannot evict pod as it would violate the pod's disruption budget."
    (cause,) = reply.json()["details"]["causes"]
    assert cause == {
        "reason": "DisruptionBudget",
        "message": "The disruption budget web needs 2 healthy pods and has 2 currently",
    }
    assert sim.store.exists("pods", "shop", "a")


@pytest.mark.parametrize("spec", [{"minAvailable": 1}, {"maxUnavailable": 1}, {"minAvailable": "50%"}])
def test_a_budget_with_room_lets_one_pod_go(sim: Simulator, spec: dict[str, Any]) -> None:
    rs = sim.store.create(
        {
            "apiVersion": "apps/v1",
            "kind": "ReplicaSet",
            "metadata": {"name": "web", "namespace": "shop"},
            "spec": {"replicas": 2},
        }
    )
    owned = [
        {
            "apiVersion": "apps/v1",
            "kind": "ReplicaSet",
            "name": "web",
            "uid": rs["metadata"]["uid"],
            "controller": True,
        }
    ]
    pods = [pod("a"), pod("b")]
    for p in pods:
        p["metadata"]["ownerReferences"] = owned
    sim.store.create_many([*pods, budget("web", **spec)])
    assert call(sim, "POST", EVICTION.format("a"), eviction("a")).status == 201
    assert call(sim, "POST", EVICTION.format("b"), eviction("b")).status == 429


@pytest.mark.parametrize("phase", ["Succeeded", "Failed", "Pending"])
def test_a_pod_not_running_is_evicted_whatever_the_budget(sim: Simulator, phase: str) -> None:
    sim.store.create_many([pod("done", phase), budget("web", minAvailable=5)])
    assert call(sim, "POST", EVICTION.format("done"), eviction("done")).status == 201


def test_two_budgets_for_one_pod_are_an_internal_error(sim: Simulator) -> None:
    sim.store.create_many([pod("a"), budget("one", minAvailable=0), budget("two", minAvailable=0)])
    assert call(sim, "POST", EVICTION.format("a"), eviction("a")).status == 500


def test_an_eviction_naming_another_pod_is_a_bad_request(sim: Simulator) -> None:
    sim.store.create(pod("a"))
    assert call(sim, "POST", EVICTION.format("a"), eviction("b")).status == 400


def test_evicting_needs_create_on_pods_eviction(sim: Simulator) -> None:
    sim.store.create(pod("a"))
    sim.add_token("t", "someone")
    role = {"apiGroups": [""], "resources": ["pods"], "verbs": ["create", "delete", "list"]}
    sim.load_rbac(
        [
            {"kind": "ClusterRole", "metadata": {"name": "r"}, "rules": [role]},
            {
                "kind": "ClusterRoleBinding",
                "metadata": {"name": "r"},
                "roleRef": {"kind": "ClusterRole", "name": "r"},
                "subjects": [{"kind": "User", "name": "someone"}],
            },
        ]
    )
    assert call(sim, "POST", EVICTION.format("a"), eviction("a"), token="t").status == 403


def test_content_times_time_a_content_change_and_keep_it_across_other_writes(sim: Simulator) -> None:
    sim.store.create(
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "c", "namespace": "shop"},
            "data": {"a": "1"},
        }
    )
    (entry,) = sim.store.get("configmaps", "shop", "c")["metadata"]["managedFields"]
    assert entry["fieldsV1"] == {"f:data": {}} and entry["time"].endswith("Z")
    sim.store.patch_merge("configmaps", "shop", "c", {"metadata": {"labels": {"x": "y"}}})
    assert sim.store.get("configmaps", "shop", "c")["metadata"]["managedFields"] == [entry]
    assert (
        "managedFields"
        not in Simulator().store.create(
            {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "shop"}}
        )["metadata"]
    )
