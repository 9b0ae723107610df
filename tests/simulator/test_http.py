"""HTTP conventions: Status bodies, content negotiation, metadata-only lists, dry run, paging expiry."""

from __future__ import annotations

import pytest
from simhelpers import call, configmap, deployment

from rehash_simulator import Simulator
from rehash_simulator.paging import EXPIRED_MESSAGE

META_LIST = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"
META_ONE = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1"


@pytest.fixture
def seeded(sim: Simulator) -> Simulator:
    sim.store.create(configmap("a", data={"secret-ish": "value"}))
    sim.store.create(configmap("b", data={"k": "v"}))
    sim.store.create(
        {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": "s", "namespace": "shop"},
            "stringData": {"password": "hunter2"},
        }
    )
    sim.store.create(deployment("web"))
    return sim


def test_metadata_only_list_shape(seeded: Simulator) -> None:
    for path in ("/api/v1/namespaces/shop/configmaps", "/api/v1/secrets"):
        reply = call(seeded, "GET", path, accept=f"{META_LIST},application/json")
        assert reply.status == 200
        assert reply.headers["Content-Type"] == META_LIST
        assert b'"data"' not in reply.body and b"hunter2" not in reply.body
        body = reply.json()
        assert body["kind"] == "PartialObjectMetadataList"
        assert body["apiVersion"] == "meta.k8s.io/v1"
        assert set(body["metadata"]) == {"resourceVersion"}
        for item in body["items"]:
            assert set(item) == {"kind", "apiVersion", "metadata"}
            assert item["kind"] == "PartialObjectMetadata" and item["apiVersion"] == "meta.k8s.io/v1"
            assert {"name", "namespace", "uid", "resourceVersion", "creationTimestamp"} <= set(
                item["metadata"]
            )


def test_metadata_only_get(seeded: Simulator) -> None:
    reply = call(seeded, "GET", "/api/v1/namespaces/shop/configmaps/a", accept=META_ONE)
    assert reply.json()["kind"] == "PartialObjectMetadata" and "data" not in reply.json()
    refused = call(seeded, "GET", "/api/v1/namespaces/shop/configmaps/a", accept=META_LIST)
    assert refused.status == 406 and refused.json()["reason"] == "NotAcceptable"


def test_full_list_items_and_kind(seeded: Simulator) -> None:
    body = call(seeded, "GET", "/apis/apps/v1/deployments").json()
    assert body["kind"] == "DeploymentList" and body["apiVersion"] == "apps/v1"
    assert [i["metadata"]["name"] for i in body["items"]] == ["web"]


def test_table(seeded: Simulator) -> None:
    accept = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"
    body = call(seeded, "GET", "/api/v1/namespaces/shop/configmaps", accept=accept).json()
    assert body["kind"] == "Table"
    assert [c["name"] for c in body["columnDefinitions"]] == ["Name", "Age"]
    assert [r["cells"][0] for r in body["rows"]] == ["a", "b"]
    assert body["rows"][0]["object"]["kind"] == "PartialObjectMetadata"


def test_unknown_paths_and_methods(sim: Simulator) -> None:
    assert call(sim, "GET", "/apis/nope/v1/things").status == 404
    assert call(sim, "GET", "/api/v1/namespaces/shop/services").status == 404
    reply = call(sim, "PUT", "/api/v1/configmaps", {})
    assert reply.status == 405 and reply.json()["reason"] == "MethodNotAllowed"


def test_create_generate_name_and_already_exists(sim: Simulator) -> None:
    obj = configmap("", data={"a": "b"})
    obj["metadata"] = {"generateName": "gen-", "namespace": "shop"}
    call(
        sim,
        "POST",
        "/api/v1/namespaces",
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "shop"}},
    )
    created = call(sim, "POST", "/api/v1/namespaces/shop/configmaps", obj)
    assert created.status == 201
    name = created.json()["metadata"]["name"]
    assert name.startswith("gen-") and len(name) == 9
    again = call(sim, "POST", "/api/v1/namespaces/shop/configmaps", created.json())
    assert again.status == 409 and again.json()["reason"] == "AlreadyExists"


def test_dry_run_stores_nothing(seeded: Simulator) -> None:
    rv = seeded.store.resource_version
    created = call(seeded, "POST", "/api/v1/namespaces/shop/configmaps?dryRun=All", configmap("new"))
    assert created.status == 201 and created.json()["metadata"]["name"] == "new"
    patched = call(
        seeded,
        "PATCH",
        "/api/v1/namespaces/shop/configmaps/a?dryRun=All",
        {"data": {"x": "y"}},
        content_type="application/merge-patch+json",
    )
    assert patched.status == 200 and patched.json()["data"]["x"] == "y"
    current = seeded.store.get("configmaps", "shop", "a")
    put = call(seeded, "PUT", "/api/v1/namespaces/shop/configmaps/a?dryRun=All", {**current, "data": {}})
    assert put.status == 200
    invalid = call(seeded, "POST", "/api/v1/namespaces/shop/configmaps?dryRun=All", configmap("Bad_Name"))
    assert invalid.status == 422
    assert seeded.store.resource_version == rv
    assert not seeded.store.exists("configmaps", "shop", "new")
    assert seeded.store.get("configmaps", "shop", "a")["data"] == {"secret-ish": "value"}


def test_patch_content_types_over_http(seeded: Simulator) -> None:
    path = "/apis/apps/v1/namespaces/shop/deployments/web"
    assert call(seeded, "PATCH", path, {"a": 1}, content_type="application/json").status == 415
    reply = call(
        seeded,
        "PATCH",
        path,
        [{"op": "test", "path": "/metadata/name", "value": "x"}],
        content_type="application/json-patch+json",
    )
    assert reply.status == 422 and reply.json()["reason"] == "Invalid"
    apply = call(
        seeded, "PATCH", path, b"metadata: {labels: {a: b}}", content_type="application/apply-patch+yaml"
    )
    assert apply.status == 400
    ok = call(
        seeded,
        "PATCH",
        path + "?fieldManager=t",
        b"metadata: {labels: {a: b}}",
        content_type="application/apply-patch+yaml",
    )
    assert ok.status == 200 and ok.json()["metadata"]["labels"]["a"] == "b"


def test_expired_continue_is_410_and_fresh_list_works(sim: Simulator) -> None:
    sim.store.create_many(configmap(f"c{i}") for i in range(5))
    first = call(sim, "GET", "/api/v1/namespaces/shop/configmaps?limit=2").json()
    token = first["metadata"]["continue"]
    assert first["metadata"]["remainingItemCount"] == 3
    sim.faults.expire_continue()
    reply = call(sim, "GET", f"/api/v1/namespaces/shop/configmaps?limit=2&continue={token}")
    assert reply.status == 410
    assert reply.json() == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": EXPIRED_MESSAGE,  # kube-apiserver's text (tests/chaos_real/test_compaction.py)
        "reason": "Expired",
        "code": 410,
    }
    fresh = call(sim, "GET", "/api/v1/namespaces/shop/configmaps").json()
    assert len(fresh["items"]) == 5


def test_bad_continue_token_is_400(sim: Simulator) -> None:
    assert call(sim, "GET", "/api/v1/configmaps?limit=1&continue=garbage").status == 400


def test_unauthenticated_is_401(sim: Simulator) -> None:
    reply = call(sim, "GET", "/api/v1/configmaps", token="wrong")
    assert reply.status == 401
    assert reply.json()["reason"] == "Unauthorized" and reply.json()["message"] == "Unauthorized"


def test_request_log(seeded: Simulator) -> None:
    seeded.log.clear()
    call(seeded, "GET", "/api/v1/namespaces/shop/configmaps?limit=1")
    call(
        seeded,
        "PATCH",
        "/api/v1/namespaces/shop/configmaps/a",
        {"data": {"x": "y"}},
        content_type="application/merge-patch+json",
    )
    call(seeded, "GET", "/api/v1/namespaces/shop/configmaps/zzz")
    entries = seeded.log.entries()
    assert [(e.method, e.status) for e in entries] == [("GET", 200), ("PATCH", 200), ("GET", 404)]
    assert entries[0].query == {"limit": "1"}
    assert entries[1].content_type == "application/merge-patch+json" and entries[1].bytes_in > 0
    assert entries[1].user == "kube-rehash-sim-admin" and entries[1].bytes_out > 0
    assert seeded.log.by_method() == {"GET": 2, "PATCH": 1}
    assert seeded.log.by_status() == {200: 2, 404: 1}
    assert seeded.log.count(writes_only=True) == 1


def test_discovery(sim: Simulator) -> None:
    assert call(sim, "GET", "/version").json()["major"] == "1"
    assert call(sim, "GET", "/api").json()["versions"] == ["v1"]
    groups = {g["name"] for g in call(sim, "GET", "/apis").json()["groups"]}
    assert groups == {
        "apps",
        "batch",
        "argoproj.io",
        "apps.kruise.io",
        "secrets-store.csi.x-k8s.io",
        "policy",
        "events.k8s.io",
        "openreports.io",
    }
    apps = call(sim, "GET", "/apis/apps/v1").json()
    short = {r["name"]: r.get("shortNames") for r in apps["resources"]}
    assert short == {
        "deployments": ["deploy"],
        "statefulsets": ["sts"],
        "daemonsets": ["ds"],
        "replicasets": ["rs"],
    }
    assert call(sim, "GET", "/openapi/v2").status == 404
