"""The four patch content types, as pure functions and through the store."""

from __future__ import annotations

import json

import pytest
from simhelpers import deployment

from rehash_simulator import patches
from rehash_simulator.errors import ApiError
from rehash_simulator.store import Store


def test_merge_patch_rfc7386() -> None:
    target = {"a": "b", "c": {"d": "e", "f": "g"}, "l": [1, 2]}
    patch = {"a": "z", "c": {"f": None}, "l": [3], "n": {"x": None}}
    assert patches.merge_patch(target, patch) == {"a": "z", "c": {"d": "e"}, "l": [3], "n": {}}
    assert target["c"] == {"d": "e", "f": "g"}


def test_strategic_merges_containers_env_and_volumes_by_name() -> None:
    spec = deployment("web")["spec"]["template"]["spec"]
    spec["volumes"] = [{"name": "v1", "emptyDir": {}}]
    patch = {
        "containers": [
            {"name": "app", "env": [{"name": "B", "value": "2"}, {"name": "A", "value": "9"}]},
            {"name": "sidecar", "image": "busybox"},
        ],
        "volumes": [{"name": "v2", "emptyDir": {}}],
        "nodeSelector": {"disk": "ssd"},
    }
    merged = patches.strategic_merge(spec, patch)
    assert [c["name"] for c in merged["containers"]] == ["app", "sidecar"]
    assert merged["containers"][0]["image"] == "nginx:1"
    assert merged["containers"][0]["env"] == [{"name": "A", "value": "9"}, {"name": "B", "value": "2"}]
    assert [v["name"] for v in merged["volumes"]] == ["v1", "v2"]


def test_strategic_replaces_other_lists() -> None:
    assert patches.strategic_merge({"args": ["a", "b"]}, {"args": ["c"]}) == {"args": ["c"]}


def test_json_patch_operations_and_escapes() -> None:
    doc = {"metadata": {"annotations": {"a/b": "1", "t~x": "2"}}, "list": [1, 2, 3]}
    ops = [
        {"op": "replace", "path": "/metadata/annotations/a~1b", "value": "10"},
        {"op": "test", "path": "/metadata/annotations/t~0x", "value": "2"},
        {"op": "add", "path": "/list/-", "value": 4},
        {"op": "add", "path": "/list/0", "value": 0},
        {"op": "remove", "path": "/list/1"},
        {"op": "copy", "from": "/list/0", "path": "/copied"},
        {"op": "move", "from": "/copied", "path": "/moved"},
        {"op": "add", "path": "/metadata/labels", "value": {"k": "v"}},
    ]
    result = patches.json_patch(doc, ops)
    assert result == {
        "metadata": {"annotations": {"a/b": "10", "t~x": "2"}, "labels": {"k": "v"}},
        "list": [0, 2, 3, 4],
        "moved": 0,
    }


@pytest.mark.parametrize(
    "ops",
    [
        [{"op": "test", "path": "/a", "value": "other"}],
        [{"op": "test", "path": "/missing", "value": "x"}],
        [{"op": "replace", "path": "/missing/deep", "value": 1}],
        [{"op": "remove", "path": "/nope"}],
        [{"op": "add", "path": "/l/9", "value": 1}],
    ],
)
def test_json_patch_failures_are_422(ops: list[dict[str, object]]) -> None:
    with pytest.raises(ApiError) as caught:
        patches.json_patch({"a": "b", "l": []}, ops)
    assert caught.value.code == 422
    assert caught.value.reason == "Invalid"
    assert caught.value.message == "the server rejected our request due to an error in our request"


def test_unknown_content_type_is_415() -> None:
    with pytest.raises(ApiError) as caught:
        patches.decode(b"{}", "application/json")
    assert caught.value.code == 415
    assert caught.value.reason == "UnsupportedMediaType"


def test_undecodable_body_is_400() -> None:
    with pytest.raises(ApiError) as caught:
        patches.decode(b"{nope", patches.MERGE)
    assert caught.value.code == 400


@pytest.fixture
def store() -> Store:
    s = Store()
    s.create(deployment("web"))
    return s


def test_store_patch_each_type(store: Store) -> None:
    store.patch("deployments", "shop", "web", {"metadata": {"labels": {"m": "1"}}}, patches.MERGE)
    store.patch(
        "deployments",
        "shop",
        "web",
        json.dumps(
            {"spec": {"template": {"spec": {"containers": [{"name": "app", "image": "nginx:2"}]}}}}
        ).encode(),
        patches.STRATEGIC,
    )
    store.patch(
        "deployments",
        "shop",
        "web",
        [{"op": "add", "path": "/metadata/labels/j", "value": "2"}],
        patches.JSON_PATCH,
    )
    obj = store.patch(
        "deployments",
        "shop",
        "web",
        b"metadata:\n  labels:\n    a: '3'\n",
        patches.APPLY,
        field_manager="test",
    )
    assert obj["metadata"]["labels"] == {"app": "web", "m": "1", "j": "2", "a": "3"}
    assert obj["spec"]["template"]["spec"]["containers"][0]["env"] == [{"name": "A", "value": "1"}]
    assert obj["spec"]["template"]["spec"]["containers"][0]["image"] == "nginx:2"
    assert obj["metadata"]["generation"] == 2


def test_apply_requires_field_manager(store: Store) -> None:
    with pytest.raises(ApiError) as caught:
        store.patch("deployments", "shop", "web", b"metadata: {}", patches.APPLY)
    assert caught.value.code == 400
    assert "fieldManager: Required value" in caught.value.message


def test_resource_version_in_patch_is_a_precondition(store: Store) -> None:
    rv = store.get("deployments", "shop", "web")["metadata"]["resourceVersion"]
    with pytest.raises(ApiError) as caught:
        store.patch(
            "deployments", "shop", "web", {"metadata": {"resourceVersion": "1", "labels": {"x": "y"}}}
        )
    assert caught.value.code == 409
    assert "the object has been modified" in caught.value.message
    ok = [
        {"op": "test", "path": "/metadata/resourceVersion", "value": rv},
        {"op": "add", "path": "/metadata/labels/x", "value": "y"},
    ]
    assert store.patch("deployments", "shop", "web", ok, patches.JSON_PATCH)["metadata"]["labels"]["x"] == "y"
    with pytest.raises(ApiError) as stale:
        store.patch("deployments", "shop", "web", ok, patches.JSON_PATCH)
    assert stale.value.code == 422
    with pytest.raises(ApiError) as replaced:
        store.patch(
            "deployments",
            "shop",
            "web",
            [{"op": "replace", "path": "/metadata/resourceVersion", "value": rv}],
            patches.JSON_PATCH,
        )
    assert replaced.value.code == 409


def test_immutable_fields(store: Store) -> None:
    for patch, code in (
        ({"metadata": {"uid": "other"}}, 422),
        ({"metadata": {"name": "other"}}, 400),
        ({"metadata": {"namespace": "other"}}, 400),
    ):
        with pytest.raises(ApiError) as caught:
            store.patch("deployments", "shop", "web", patch)
        assert caught.value.code == code
    assert store.get("deployments", "shop", "web")["metadata"]["name"] == "web"


def test_patch_missing_object_is_404(store: Store) -> None:
    with pytest.raises(ApiError) as caught:
        store.patch("deployments", "shop", "nope", {"metadata": {"labels": {"a": "b"}}})
    assert caught.value.code == 404
    assert caught.value.message == 'deployments.apps "nope" not found'
