"""Seeded managedFields are served as a real server serves them, in metadata-only lists and single GETs,
and kept through writes: objects dressed by rehash_simulator.dress (what the benchmark's realistic shape
and `--seed-demo` seed) are what these lists then carry, as a real cluster's do."""

from __future__ import annotations

from simhelpers import call, configmap, deployment

from rehash_simulator import Simulator
from rehash_simulator.dress import LAST_APPLIED, dress

META_LIST = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"
META = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1"


def seeded(sim: Simulator) -> tuple[dict[str, object], dict[str, object]]:
    cm = dress(configmap("app", data={"a": "1"}), seed=3, deployer="kubectl-client-side-apply")
    app = dress(deployment("web"), seed=3, deployer="helm")
    sim.store.create_many([cm, app])
    return cm, app


def test_metadata_only_list_returns_seeded_managed_fields(sim: Simulator) -> None:
    cm, app = seeded(sim)
    configmaps = call(sim, "GET", "/api/v1/namespaces/shop/configmaps", accept=META_LIST).json()
    (item,) = configmaps["items"]
    assert item["kind"] == "PartialObjectMetadata"
    assert item["metadata"]["managedFields"] == cm["metadata"]["managedFields"]  # type: ignore[index]
    assert item["metadata"]["annotations"][LAST_APPLIED].endswith("\n")
    deployments = call(sim, "GET", "/apis/apps/v1/namespaces/shop/deployments", accept=META_LIST).json()
    managers = [m["manager"] for m in deployments["items"][0]["metadata"]["managedFields"]]
    assert managers[:2] == ["helm", "kube-controller-manager"]
    single = call(sim, "GET", "/apis/apps/v1/namespaces/shop/deployments/web", accept=META).json()
    assert single["metadata"]["managedFields"] == app["metadata"]["managedFields"]  # type: ignore[index]


def test_writes_keep_seeded_managed_fields_and_a_content_change_is_timed_by_its_write(sim: Simulator) -> None:
    cm, _ = seeded(sim)
    path = "/api/v1/namespaces/shop/configmaps/app"
    merge = "application/merge-patch+json"
    annotated = call(sim, "PATCH", path, {"metadata": {"annotations": {"x": "1"}}}, content_type=merge)
    assert annotated.json()["metadata"]["managedFields"] == cm["metadata"]["managedFields"]  # type: ignore[index]
    changed = call(sim, "PATCH", path, {"data": {"a": "2"}}, content_type=merge).json()
    (entry,) = changed["metadata"]["managedFields"]
    assert entry["fieldsV1"] == {"f:data": {}}
    assert entry["time"] >= changed["metadata"]["creationTimestamp"]  # not the seeded, older time
