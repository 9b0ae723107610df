"""The simulator's rollout controller does to a Deployment what kube-controller-manager does, as kube-rehash
sees it: the revision annotation moves after a template change without moving the generation (the controller
writes it through the status subresource), the status observes the generation, and the rollout completes
`seconds` later — the same sequence as on the real control plane."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client, config

from rehash_simulator import Simulator
from tests.cluster.controlplane import ControlPlane
from tests.e2e.conftest import deployment

REVISION = "deployment.kubernetes.io/revision"


def wait(probe: Callable[[], bool], timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not probe():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def complete(obj: dict[str, Any]) -> bool:
    status = obj.get("status") or {}
    return status.get("observedGeneration") == obj["metadata"]["generation"] and status.get(
        "updatedReplicas"
    ) == obj["spec"].get("replicas", 1) == status.get("availableReplicas")


def sequence(get: Callable[[], dict[str, Any]], change: Callable[[], None]) -> list[tuple[int, str | None]]:
    """(generation, revision) once the first rollout completed, and again after a template change."""
    seen = []
    for step in (None, change):
        if step is not None:
            step()
        wait(lambda: complete(get()) and REVISION in get()["metadata"].get("annotations", {}))
        obj = get()
        seen.append((obj["metadata"]["generation"], obj["metadata"]["annotations"].get(REVISION)))
    return seen


def annotate_template(obj: dict[str, Any]) -> None:
    obj["spec"]["template"]["metadata"].setdefault("annotations", {})["x"] = "1"


def simulated() -> list[tuple[int, str | None]]:
    with Simulator(rollout_seconds=0.2).start() as sim:
        sim.store.create(deployment("web", replicas=1))
        return sequence(
            lambda: sim.store.get("deployments", "shop", "web"),
            lambda: sim.store.mutate("deployments", "shop", "web", annotate_template),
        )


def test_rollouts_finish_after_the_set_time_and_never_without_the_controller() -> None:
    # The controller's revision write goes through the status subresource: the generation moves only with
    # the spec.
    assert simulated() == [(1, "1"), (2, "2")]
    with Simulator().start() as sim:
        sim.store.create(deployment("web", replicas=1))
        time.sleep(0.3)
        obj = sim.store.get("deployments", "shop", "web")
        assert obj["metadata"]["generation"] == 1 and "status" not in obj


@pytest.mark.real
def test_the_same_generations_and_revisions_as_kube_controller_manager(control: ControlPlane) -> None:
    ns = f"sim-rollouts-{int(time.time() * 1000) % 10**8}"
    control.api("POST", "/api/v1/namespaces", {"metadata": {"name": ns}})
    path = f"/apis/apps/v1/namespaces/{ns}/deployments"
    try:
        control.api("POST", path, deployment("web", ns=ns, replicas=1))

        def change() -> None:
            patch = {"spec": {"template": {"metadata": {"annotations": {"x": "1"}}}}}
            control.api("PATCH", f"{path}/web", patch, content_type="application/merge-patch+json")

        real = sequence(lambda: control.api("GET", f"{path}/web"), change)
    finally:
        control.request("DELETE", f"/api/v1/namespaces/{ns}")
    assert real == simulated()


def test_the_statuses_it_writes_are_valid_for_typed_clients(tmp_path: Path) -> None:
    """The official client's typed models refuse a status without the fields the API requires (the bench's
    naive script lists DaemonSets with it)."""
    with Simulator(rollout_seconds=0.0).start() as sim:
        sim.store.create(deployment("web", replicas=1))
        sim.store.create(deployment("db", kind="StatefulSet", replicas=1))
        sim.store.create(deployment("agent", kind="DaemonSet"))
        wait(lambda: all("status" in o for o in sim.store.list("daemonsets", "shop")))
        time.sleep(0.3)
        api = config.new_client_from_config(str(sim.write_kubeconfig(tmp_path / "kubeconfig")))
        apps = client.AppsV1Api(api)
        assert apps.list_daemon_set_for_all_namespaces().items[0].status.number_misscheduled == 0
        assert apps.list_stateful_set_for_all_namespaces().items[0].status.replicas == 1
        assert apps.list_deployment_for_all_namespaces().items[0].status.updated_replicas == 1
