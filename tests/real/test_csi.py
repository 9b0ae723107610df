"""Secrets Store CSI rotation on the real control plane: its SecretProviderClassPodStatus CRD installed
(tests/data/secrets-store-csi/, written from the driver's documented API), the real Deployment controller
making the pods (kwok runs them), and the tests playing the driver's writes (it needs a kubelet: it cannot
run here). A rotated version: exactly one new ReplicaSet; steady: nothing; pods without a status: a clear
row, no rollout."""

from __future__ import annotations

from typing import Any

import pytest

from tests.cluster.controlplane import ControlPlane
from tests.e2e.conftest import csi_pod_spec, csi_status
from tests.real.conftest import DEPLOYMENT_STEADY, Kube, install_csi_crd, template_hash, wait_until, workload

STATUSES = "/apis/secrets-store.csi.x-k8s.io/v1/namespaces/{ns}/secretproviderclasspodstatuses"


@pytest.fixture(scope="session")
def csi_crd(control: ControlPlane) -> None:
    install_csi_crd(control)


def pods(kube: Kube, name: str) -> list[dict[str, Any]]:
    items = kube.get("/api/v1/namespaces/{ns}/pods")["items"]
    return [
        p
        for p in items
        if p["metadata"].get("labels", {}).get("app") == name and not p["metadata"].get("deletionTimestamp")
    ]


def mount(kube: Kube, versions: dict[str, str]) -> None:
    """The driver mounting the class into every current pod of `api` that has no status yet."""
    done = {s["status"]["podName"] for s in kube.get(STATUSES)["items"]}
    for pod in pods(kube, "api"):
        name = pod["metadata"]["name"]
        if name not in done:
            body = csi_status(name, versions, ns=kube.ns)
            kube.cp.api("POST", STATUSES.format(ns=kube.ns), body)


def rotate(kube: Kube, versions: dict[str, str]) -> None:
    """The driver's rotation: every existing status object rewritten with the new versions."""
    objects = [{"id": f"secret/{k}", "version": v} for k, v in sorted(versions.items())]
    for status in kube.get(STATUSES)["items"]:
        path = f"{STATUSES.format(ns=kube.ns)}/{status['metadata']['name']}"
        kube.cp.api(
            "PATCH", path, {"status": {"objects": objects}}, content_type="application/merge-patch+json"
        )


def test_rotation_rolls_once_steady_rolls_nothing_and_unmounted_pods_wait(kube: Kube, csi_crd: None) -> None:
    kube.apply(workload("Deployment", "api", csi_pod_spec(), replicas=2))
    kube.wait_settled("Deployment", "api")
    waiting = kube.rehash()
    assert waiting.actions() == {"Deployment/api": "skipped"}, waiting.stdout
    assert "no SecretProviderClassPodStatus" in waiting.row("Deployment", "api")["reason"]
    assert len(kube.replicasets("api")) == 1

    mount(kube, {"db-password": "v1"})
    assert kube.rehash().actions() == {"Deployment/api": "adopt"}
    kube.wait_observed("Deployment", "api")
    assert kube.rehash().actions()["Deployment/api"] in DEPLOYMENT_STEADY
    assert len(kube.replicasets("api")) == 1

    rotate(kube, {"db-password": "v2"})
    rolled = kube.rehash()
    assert rolled.actions() == {"Deployment/api": "rollout"}, rolled.stdout
    kube.wait_settled("Deployment", "api")
    wait_until("the old pods to go", lambda: len(pods(kube, "api")) == 2, 60)
    mount(kube, {"db-password": "v2"})  # the new pods mount the newest version
    replicasets = kube.replicasets("api")
    assert len(replicasets) == 2
    assert (
        template_hash(kube.obj("Deployment", "api")["spec"]["template"])
        == rolled.row("Deployment", "api")["hash"]
    )
    for _ in range(2):
        assert kube.rehash().actions()["Deployment/api"] in DEPLOYMENT_STEADY
    assert len(kube.replicasets("api")) == 2
