"""Conformance with the official `kubernetes` Python client, configured from the written kubeconfig."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from kubernetes import client, config
from kubernetes.client.rest import ApiException
from simhelpers import configmap, deployment

from rehash_simulator import Simulator


@pytest.fixture
def api(sim: Simulator, tmp_path: Path) -> client.ApiClient:
    cfg = client.Configuration()
    config.load_kube_config(
        config_file=str(sim.write_kubeconfig(tmp_path / "kc")), client_configuration=cfg, persist_config=False
    )
    with client.ApiClient(cfg) as api_client:
        yield api_client


def test_list_with_paging(sim: Simulator, api: Any) -> None:
    sim.store.create_many(configmap(f"c{i:02}") for i in range(7))
    core = client.CoreV1Api(api)
    names: list[str] = []
    token = None
    pages = 0
    while True:
        page = core.list_namespaced_config_map("shop", limit=3, _continue=token)
        names.extend(i.metadata.name for i in page.items)
        pages += 1
        token = page.metadata._continue
        if not token:
            break
    assert pages == 3 and names == [f"c{i:02}" for i in range(7)]
    everywhere = core.list_config_map_for_all_namespaces(label_selector="missing!=x")
    assert len(everywhere.items) == 7


def test_get_create_and_errors(sim: Simulator, api: Any) -> None:
    apps = client.AppsV1Api(api)
    core = client.CoreV1Api(api)
    core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name="shop")))
    made = apps.create_namespaced_deployment("shop", deployment("web"))
    assert made.metadata.generation == 1 and made.metadata.uid
    got = apps.read_namespaced_deployment("web", "shop")
    assert got.spec.template.spec.containers[0].image == "nginx:1"
    with pytest.raises(ApiException) as missing:
        apps.read_namespaced_deployment("nope", "shop")
    assert missing.value.status == 404
    with pytest.raises(ApiException) as exists:
        apps.create_namespaced_deployment("shop", deployment("web"))
    assert exists.value.status == 409
    stale = got
    apps.patch_namespaced_deployment("web", "shop", {"metadata": {"labels": {"x": "1"}}})
    with pytest.raises(ApiException) as conflict:
        apps.replace_namespaced_deployment("web", "shop", stale)
    assert conflict.value.status == 409
    with pytest.raises(ApiException) as invalid:
        apps.patch_namespaced_deployment(
            "web",
            "shop",
            [{"op": "test", "path": "/metadata/labels/x", "value": "2"}],
        )
    assert invalid.value.status == 422


def test_each_patch_type(sim: Simulator, api: Any) -> None:
    sim.store.create(deployment("web"))
    apps = client.AppsV1Api(api)
    apps.patch_namespaced_deployment(
        "web", "shop", {"spec": {"template": {"spec": {"containers": [{"name": "app", "image": "nginx:2"}]}}}}
    )
    apps.patch_namespaced_deployment(
        "web", "shop", {"metadata": {"annotations": {"m": "1"}}}, _content_type="application/merge-patch+json"
    )
    rv = sim.store.get("deployments", "shop", "web")["metadata"]["resourceVersion"]
    result = apps.patch_namespaced_deployment(
        "web",
        "shop",
        [
            {"op": "test", "path": "/metadata/resourceVersion", "value": rv},
            {"op": "add", "path": "/spec/template/metadata/annotations", "value": {"h": "abc"}},
        ],
    )
    assert result.spec.template.metadata.annotations == {"h": "abc"}
    stored = sim.store.get("deployments", "shop", "web")
    container = stored["spec"]["template"]["spec"]["containers"][0]
    assert container["image"] == "nginx:2" and container["env"] == [{"name": "A", "value": "1"}]
    assert stored["metadata"]["annotations"] == {"m": "1"}
    content_types = [e.content_type for e in sim.log.entries(method="PATCH")]
    assert content_types == [
        "application/strategic-merge-patch+json",
        "application/merge-patch+json",
        "application/json-patch+json",
    ]
    assert {e.user for e in sim.log.entries()} == {"kube-rehash-sim-admin"}
