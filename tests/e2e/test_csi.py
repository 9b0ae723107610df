"""Secrets Store CSI rotation, end to end on the simulator: the tests play the driver's writes (one
SecretProviderClassPodStatus per pod and SecretProviderClass, `status.objects[]` with each mounted object's
id and version) and the controllers' (pods owned by the Deployment's ReplicaSet). The driver itself needs a
kubelet: it cannot run here. tests/real/test_csi.py plays the same on the real control plane."""

from __future__ import annotations

import pytest

from tests.e2e.conftest import (
    Backend,
    configmap,
    csi_pod_spec,
    csi_status,
    deployment,
    owned_pod,
    template_hash,
)

pytestmark = pytest.mark.sim_only("plays the controllers' pods (tests/real/test_csi.py: the real server)")

SPC = "vault-db"  # csi_pod_spec's SecretProviderClass


def rotate(cluster: Backend, pod_name: str, versions: dict[str, str]) -> None:
    objects = [{"id": f"secret/{k}", "version": v} for k, v in sorted(versions.items())]
    cluster.edit(
        "secretproviderclasspodstatuses", "shop", f"{pod_name}-shop-{SPC}", {"status": {"objects": objects}}
    )


def seeded(cluster: Backend) -> None:
    cluster.add(deployment("api", csi_pod_spec()), configmap("unrelated", {"a": "1"}))
    cluster.add(
        owned_pod("api-abc12-aaaaa", "api"),
        owned_pod("api-abc12-bbbbb", "api"),
        owned_pod("web-abc12-ccccc", "web"),
    )
    cluster.add(
        csi_status("api-abc12-aaaaa", {"db-password": "v1"}),
        csi_status("api-abc12-bbbbb", {"db-password": "v1"}),
        csi_status("web-abc12-ccccc", {"db-password": "v7"}),
    )
    first = cluster.run()
    assert first.actions() == {"Deployment/shop/api": "adopt"}, first.stdout
    assert first.row("Deployment", "api")["configs"] == [f"secretproviderclass/{SPC}"]


def test_a_rotated_version_rolls_once_and_the_new_pods_are_in_sync(cluster: Backend) -> None:
    seeded(cluster)
    assert cluster.run().actions() == {"Deployment/shop/api": "in-sync"}
    rotate(cluster, "api-abc12-aaaaa", {"db-password": "v2"})  # the driver reached one pod so far
    rolled = cluster.run()
    assert rolled.actions() == {"Deployment/shop/api": "rollout"}
    assert f"secretproviderclass/{SPC}" in rolled.row("Deployment", "api")["reason"]
    assert template_hash(cluster.get("deployments", "shop", "api")) == rolled.row("Deployment", "api")["hash"]
    rotate(cluster, "api-abc12-bbbbb", {"db-password": "v2"})  # the driver reaches the other pod
    assert cluster.run().actions() == {"Deployment/shop/api": "in-sync"}
    # the rollout's new pods mount the newest version; the old ones go away
    for name in ("api-abc12-aaaaa", "api-abc12-bbbbb"):
        cluster.sim.store.delete("pods", "shop", name)
        cluster.sim.store.delete("secretproviderclasspodstatuses", "shop", f"{name}-shop-{SPC}")
    cluster.add(
        owned_pod("api-def34-ddddd", "api", "def34"), csi_status("api-def34-ddddd", {"db-password": "v2"})
    )
    assert cluster.run().actions() == {"Deployment/shop/api": "in-sync"}


def test_another_workloads_rotation_rolls_nothing(cluster: Backend) -> None:
    seeded(cluster)
    rotate(cluster, "web-abc12-ccccc", {"db-password": "v8"})
    assert cluster.run().actions() == {"Deployment/shop/api": "in-sync"}


def test_pods_without_a_status_object_are_skipped_with_a_reason_and_nothing_written(cluster: Backend) -> None:
    cluster.add(deployment("api", csi_pod_spec()), owned_pod("api-abc12-aaaaa", "api"))
    result = cluster.run()
    assert result.code == 0 and result.actions() == {"Deployment/shop/api": "skipped"}
    assert "no SecretProviderClassPodStatus" in result.row("Deployment", "api")["reason"]
    assert cluster.writes() == []


def test_a_steady_pass_without_csi_workloads_reads_no_pods_or_statuses(cluster: Backend) -> None:
    cluster.add(
        configmap("app", {"a": "1"}), deployment("web", annotations={"kube-rehash.io/configmaps": "app"})
    )
    cluster.run()
    cluster.clear_log()
    cluster.run()
    assert not [
        r for r in cluster.requests() if r.path.endswith(("/pods", "/secretproviderclasspodstatuses"))
    ]
