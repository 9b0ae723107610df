"""Secrets Store CSI mounts as sources (reconcile/model/csi.py): which pods are a workload's, which
version of each object counts while the driver rotates pod by pod, and the record each class makes."""

from __future__ import annotations

from typing import Any

from reconcile.model.csi import Mounts, MountStatus, mount_records, pod_owner, read_status
from tests.e2e.conftest import csi_status, owned_pod


def status(pod: str, version: str, rv: str, spc: str = "vault-db") -> MountStatus:
    return MountStatus(pod, spc, True, (("secret/pw", version),), rv)


def test_a_pod_belongs_to_the_deployment_its_replicaset_is_named_after() -> None:
    assert pod_owner(owned_pod("web-api-abc12-xxxxx", "web-api")) == ("Deployment", "web-api")
    stray: dict[str, Any] = owned_pod("web-abc12-xxxxx", "web")
    stray["metadata"]["labels"]["pod-template-hash"] = "other"  # a bare ReplicaSet's pod: no Deployment
    assert pod_owner(stray) is None
    sts = {"metadata": {"ownerReferences": [{"kind": "StatefulSet", "name": "db", "controller": True}]}}
    assert pod_owner(sts) == ("StatefulSet", "db")
    assert pod_owner({"metadata": {"ownerReferences": [{"kind": "StatefulSet", "name": "db"}]}}) is None


def test_a_status_is_read_as_the_driver_writes_it() -> None:
    item = csi_status("api-abc12-aaaaa", {"pw": "v1", "user": "v3"})
    item["metadata"]["resourceVersion"] = "42"
    assert read_status(item) == MountStatus(
        "api-abc12-aaaaa", "vault-db", True, (("secret/pw", "v1"), ("secret/user", "v3")), "42"
    )
    assert read_status({"metadata": {}, "status": {"podName": "p"}}) is None


def test_a_half_rotated_set_hashes_as_the_rollouts_new_pods_do() -> None:
    owners = {"a": ("Deployment", "api"), "b": ("Deployment", "api"), "c": ("Deployment", "api")}
    half = Mounts(owners, (status("a", "v2", "20"), status("b", "v1", "10")))
    rolled = Mounts(owners, (status("c", "v2", "30"),))
    before = Mounts(owners, (status("a", "v1", "5"), status("b", "v1", "10")))
    token = {
        name: mount_records("Deployment", "api", ["vault-db"], m, None)
        for name, m in (("half", half), ("rolled", rolled), ("before", before))
    }
    assert token["half"] == token["rolled"] != token["before"]


def test_another_workloads_pods_and_unmounted_statuses_do_not_count() -> None:
    owners = {"a": ("Deployment", "api"), "w": ("Deployment", "web")}
    mine = Mounts(owners, (status("a", "v1", "1"),))
    with_web = Mounts(owners, (status("a", "v1", "1"), status("w", "v9", "9")))
    assert mount_records("Deployment", "api", ["vault-db"], mine, None) == mount_records(
        "Deployment", "api", ["vault-db"], with_web, None
    )
    unmounted = Mounts(owners, (MountStatus("a", "vault-db", False, (("secret/pw", "v1"),), "1"),))
    reason = mount_records("Deployment", "api", ["vault-db"], unmounted, None)
    assert (
        isinstance(reason, str)
        and "no SecretProviderClassPodStatus of secretproviderclass/vault-db" in reason
    )


def test_the_token_is_keyed_in_keyed_mode() -> None:
    mounts = Mounts({"a": ("Deployment", "api")}, (status("a", "v1", "1"),))
    plain = mount_records("Deployment", "api", ["vault-db"], mounts, None)
    keyed = mount_records("Deployment", "api", ["vault-db"], mounts, b"k" * 32)
    assert not isinstance(plain, str) and not isinstance(keyed, str)
    assert plain[0].label == keyed[0].label == "secretproviderclass/vault-db"
    assert plain[0].token != keyed[0].token
