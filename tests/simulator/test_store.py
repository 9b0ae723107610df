"""Store semantics: server-owned fields, conflicts, generation, history, paging snapshots, speed."""

from __future__ import annotations

import base64
import re
import time

import pytest
from simhelpers import call, configmap, deployment

from rehash_simulator import Simulator
from rehash_simulator.errors import ApiError
from rehash_simulator.store import Store


def test_create_sets_server_fields() -> None:
    store = Store()
    before = int(store.resource_version)
    obj = store.create(deployment("web"))
    meta = obj["metadata"]
    assert re.fullmatch(r"[0-9a-f-]{36}", meta["uid"])
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", meta["creationTimestamp"])
    assert meta["generation"] == 1
    assert int(meta["resourceVersion"]) > before
    assert store.exists("namespaces", None, "shop")
    assert "generation" not in store.create(configmap("c"))["metadata"]


def test_secret_string_data_is_folded_into_data() -> None:
    store = Store()
    secret = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": "s", "namespace": "shop"},
        "data": {"a": base64.b64encode(b"old").decode()},
        "stringData": {"a": "new", "b": "two"},
    }
    stored = store.create(secret)
    assert "stringData" not in stored
    assert {k: base64.b64decode(v) for k, v in stored["data"].items()} == {"a": b"new", "b": b"two"}
    assert stored["type"] == "Opaque"


def test_update_conflict_and_generation() -> None:
    store = Store()
    first = store.create(deployment("web"))
    changed = store.update({**first, "metadata": {**first["metadata"], "labels": {"x": "y"}}})
    assert changed["metadata"]["generation"] == 1
    spec = dict(first["spec"], replicas=3)
    with pytest.raises(ApiError) as caught:
        store.update({**first, "spec": spec})
    assert caught.value.code == 409
    assert caught.value.message == (
        'Operation cannot be fulfilled on deployments.apps "web": the object has been modified; '
        "please apply your changes to the latest version and try again"
    )
    bumped = store.update({**changed, "spec": spec})
    assert bumped["metadata"]["generation"] == 2
    history = store.history("deployments", "shop", "web")
    assert [h["metadata"]["resourceVersion"] for h in history] == [
        first["metadata"]["resourceVersion"],
        changed["metadata"]["resourceVersion"],
        bumped["metadata"]["resourceVersion"],
    ]
    assert history[0]["spec"]["replicas"] == 1 and history[2]["spec"]["replicas"] == 3


def test_update_keeps_status_of_workloads() -> None:
    store = Store()
    obj = store.create({**deployment("web"), "status": {"observedGeneration": 1}})
    updated = store.update({**obj, "status": {"observedGeneration": 99}})
    assert updated["status"] == {"observedGeneration": 1}
    assert store.set_status("deployments", "shop", "web", {"readyReplicas": 1})["status"] == {
        "readyReplicas": 1
    }


def test_delete_and_already_exists() -> None:
    store = Store()
    store.create(configmap("c"))
    with pytest.raises(ApiError) as caught:
        store.create(configmap("c"))
    assert caught.value.code == 409 and caught.value.reason == "AlreadyExists"
    store.delete("configmaps", "shop", "c")
    with pytest.raises(ApiError) as gone:
        store.get("configmaps", "shop", "c")
    assert gone.value.code == 404
    assert len(store.history("configmaps", "shop", "c")) == 1


def test_invalid_name_is_422() -> None:
    with pytest.raises(ApiError) as caught:
        Store().create(configmap("Bad_Name"))
    assert caught.value.code == 422
    assert caught.value.message.startswith('ConfigMap "Bad_Name" is invalid: metadata.name: Invalid value')


def test_paging_is_a_consistent_snapshot() -> None:
    store = Store()
    store.create_many(configmap(f"c{i:02}") for i in range(10))
    first = store.list_page("configmaps", "shop", limit=4)
    assert [e.obj["metadata"]["name"] for e in first.entries] == ["c00", "c01", "c02", "c03"]
    assert first.remaining == 6
    store.delete("configmaps", "shop", "c05")
    store.create(configmap("c04a"))
    second = store.list_page("configmaps", "shop", limit=4, continue_token=first.continue_token)
    assert [e.obj["metadata"]["name"] for e in second.entries] == ["c04", "c05", "c06", "c07"]
    assert second.resource_version == first.resource_version
    third = store.list_page("configmaps", "shop", limit=4, continue_token=second.continue_token)
    assert [e.obj["metadata"]["name"] for e in third.entries] == ["c08", "c09"]
    assert third.continue_token == ""


def test_namespaced_create_over_http_needs_the_namespace(sim: Simulator) -> None:
    reply = call(sim, "POST", "/api/v1/namespaces/nope/configmaps", configmap("c", "nope"))
    assert reply.status == 404
    assert reply.json() == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": 'namespaces "nope" not found',
        "reason": "NotFound",
        "details": {"name": "nope", "kind": "namespaces"},
        "code": 404,
    }


def test_listing_ten_thousand_configmaps_in_pages_is_fast(sim: Simulator) -> None:
    started = time.perf_counter()
    sim.store.create_many(configmap(f"cm-{i:05}", f"ns-{i % 10}", {"key": "x" * 100}) for i in range(10_000))
    seeded = time.perf_counter() - started
    started = time.perf_counter()
    names: list[str] = []
    token = ""
    pages = 0
    while True:
        path = "/api/v1/configmaps?limit=500" + (f"&continue={token}" if token else "")
        body = call(sim, "GET", path).json()
        names.extend(item["metadata"]["name"] for item in body["items"])
        pages += 1
        token = body["metadata"].get("continue", "")
        if not token:
            break
    listed = time.perf_counter() - started
    assert pages == 20 and len(names) == 10_000 and len(set(names)) == 10_000
    assert seeded < 5 and listed < 3, (seeded, listed)
