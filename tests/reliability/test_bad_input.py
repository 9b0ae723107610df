"""Bad input in the cluster: every workload gets a correct hash or a clear skipped/failed reason, and the
pass never crashes. Objects are seeded straight into the simulator's store (as far as it accepts them)."""

from __future__ import annotations

import base64
import os
from typing import Any

import pytest

from tests.e2e.conftest import Cluster, configmap, deployment, env_from, env_key
from tests.reliability.helpers import HASH_KEY, actions, expected_hash, in_process_pass, template_hash_of

CM = "kube-rehash.io/configmaps"


def rows_by_name(report: Any) -> dict[str, Any]:
    return {r.name: r for r in report.rows}


def adopted_hash(c: Cluster, name: str) -> str:
    return str(c.get("deployments", "shop", name)["metadata"]["annotations"][HASH_KEY])


def test_malformed_reference_lists_skip_the_workload_naming_the_bad_values_and_write_nothing(
    sim: Cluster,
) -> None:
    """Bad input fails closed: a list with an invalid name is not half honoured (its valid names hashed,
    the rest noted) but skipped, naming the value, until it is fixed."""
    sim.add(configmap("app", {"a": "1"}), configmap("b", {"b": "1"}))
    sim.add(
        deployment("empty-items", annotations={CM: ",, ,"}),
        deployment("invalid-names", annotations={CM: "UPPER,a b,../x,app"}),
        deployment("duplicates", annotations={CM: "app,app, app ,b"}),
        deployment("non-ascii", annotations={CM: "café,名前,app"}),
        deployment(
            "nul", annotations={"kube-rehash.io/watch": "yes please", "kube-rehash.io/secrets": "\x00"}
        ),
    )
    report = in_process_pass(sim.sim, sim.kubeconfig)
    rows = rows_by_name(report)
    skipped = ("invalid-names", "non-ascii", "nul")
    assert {n: r.action for n, r in rows.items()} == {
        "duplicates": "adopt",
        **dict.fromkeys(skipped, "skipped"),
    }
    assert 'kube-rehash.io/configmaps: "UPPER" is not a valid name' in rows["invalid-names"].reason
    assert (
        'kube-rehash.io/configmaps: "caf\\u00e9" is not a valid name' in rows["non-ascii"].reason
    )  # escaped
    assert 'kube-rehash.io/watch: "yes please" is not "true" or "false"' in rows["nul"].reason
    for name in skipped:
        assert HASH_KEY not in sim.get("deployments", "shop", name)["metadata"]["annotations"]
    assert adopted_hash(sim, "duplicates") == expected_hash(
        sim.sim, "shop", [("configmap", "app", None), ("configmap", "b", None)]
    )
    # a list with no names at all references nothing: the workload is not opted in and not touched
    assert "empty-items" not in rows
    assert HASH_KEY not in sim.get("deployments", "shop", "empty-items")["metadata"]["annotations"]


def test_an_enormous_list_of_invalid_names_gives_a_bounded_reason(sim: Cluster) -> None:
    sim.add(configmap("app", {"a": "1"}))
    names = ",".join(["app", *(f"BAD{i}" for i in range(3000))])
    sim.add(deployment("noisy", annotations={CM: names}))
    row = rows_by_name(in_process_pass(sim.sim, sim.kubeconfig))["noisy"]
    assert row.action == "skipped" and len(row.reason) < 2000, len(row.reason)
    assert row.reason.endswith("and 2990 more problems; nothing written")


NO_TEMPLATE: dict[str, dict[str, Any]] = {
    "no-spec": {},
    "null-spec": {"spec": None},
    "no-template": {"spec": {"selector": {}}},
    "null-template": {"spec": {"template": None}},
}


@pytest.mark.parametrize("shape", sorted(NO_TEMPLATE))
def test_a_workload_without_a_pod_template_is_skipped_and_nothing_is_written(
    sim: Cluster, shape: str
) -> None:
    sim.add(configmap("app", {"a": "1"}))
    obj = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": shape, "namespace": "shop", "annotations": {CM: "app"}},
        **NO_TEMPLATE[shape],
    }
    sim.add(obj)
    for _ in range(2):
        report = in_process_pass(sim.sim, sim.kubeconfig)
        row = rows_by_name(report)[shape]
        assert row.action == "skipped", row
        assert "no pod template" in row.reason
        sim.edit("configmaps", "shop", "app", {"data": {"a": os.urandom(4).hex()}})
    assert sim.writes() == []


@pytest.mark.parametrize(
    "template",
    [
        {"metadata": None, "spec": None},
        {"metadata": {"annotations": None}},
        {"metadata": {"labels": {"x": "y"}}},
        {},
    ],
    ids=["null-metadata", "null-annotations", "no-annotations", "empty-template"],
)
def test_null_or_missing_template_metadata_is_created_by_the_rollout(sim: Cluster, template: Any) -> None:
    sim.add(configmap("app", {"a": "1"}))
    obj = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "shop", "annotations": {CM: "app"}},
        "spec": {"template": template},
    }
    sim.add(obj)
    assert actions(in_process_pass(sim.sim, sim.kubeconfig)) == {"Deployment/shop/web": "adopt"}
    sim.edit("configmaps", "shop", "app", {"data": {"a": "2"}})
    assert actions(in_process_pass(sim.sim, sim.kubeconfig)) == {"Deployment/shop/web": "rollout"}
    web = sim.get("deployments", "shop", "web")
    assert template_hash_of(web) == expected_hash(sim.sim, "shop", [("configmap", "app", None)])


def test_workload_metadata_without_annotations_is_not_opted_in_and_not_touched(sim: Cluster) -> None:
    obj = deployment("bare", env_from("configmap", "app"), annotations={})
    del obj["metadata"]["annotations"]
    sim.add(configmap("app", {"a": "1"}), obj)
    assert actions(in_process_pass(sim.sim, sim.kubeconfig)) == {}
    assert sim.writes() == []


def test_pod_specs_with_nulls_and_unknown_reference_forms_do_not_crash_the_pass(sim: Cluster) -> None:
    pod = {
        "containers": None,
        "initContainers": [
            None,
            {"name": "i", "envFrom": [None, {"fooRef": {"name": "app"}}, {"configMapRef": None}]},
        ],
        "volumes": [
            None,
            {"name": "x"},
            {"name": "y", "configMap": None},
            {"name": "z", "csi": {"driver": "d", "nodePublishSecretRef": {"name": "app"}}},
            {"name": "p", "projected": {"sources": [None, {"downwardAPI": {}}, {"configMap": {"name": 7}}]}},
        ],
    }
    sim.add(configmap("app", {"a": "1"}), deployment("odd", pod))
    report = in_process_pass(sim.sim, sim.kubeconfig)
    row = rows_by_name(report)["odd"]
    assert row.action == "adopt" and row.configs == ()


def test_huge_configmaps_and_secrets_hash_correctly(sim: Cluster) -> None:
    big = "x" * (3 * 1024 * 1024)
    blob = base64.b64encode(os.urandom(2 * 1024 * 1024)).decode()
    sim.add(
        configmap("big", {"k": big}),
        {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": "blob", "namespace": "shop"},
            "data": {"b": blob},
        },
    )
    pod = env_from("configmap", "big")
    pod["containers"][0]["envFrom"].append({"secretRef": {"name": "blob"}})
    sim.add(deployment("web", pod))
    report = in_process_pass(sim.sim, sim.kubeconfig)
    assert actions(report) == {"Deployment/shop/web": "adopt"}
    want = expected_hash(sim.sim, "shop", [("configmap", "big", None), ("secret", "blob", None)])
    assert adopted_hash(sim, "web") == want
    assert report.api["bytes_received"] > 5 * 1024 * 1024


def test_binary_data_and_non_utf8_bytes_hash_as_their_bytes(sim: Cluster) -> None:
    raw = bytes(range(256)) + b"\xff\xfe\x80"
    b64 = base64.b64encode(raw).decode()
    cm = configmap("bin", {"text": "é"})
    cm["binaryData"] = {"blob": b64}
    sim.add(
        cm,
        {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": "s", "namespace": "shop"},
            "data": {"k": b64},
        },
    )
    sim.add(deployment("a", env_from("configmap", "bin")), deployment("b", env_key("secret", "s", "k")))
    report = in_process_pass(sim.sim, sim.kubeconfig)
    assert set(actions(report).values()) == {"adopt"}
    assert adopted_hash(sim, "a") == expected_hash(sim.sim, "shop", [("configmap", "bin", None)])
    assert adopted_hash(sim, "b") == expected_hash(sim.sim, "shop", [("secret", "s", ["k"])])
    sim.edit("configmaps", "shop", "bin", {"binaryData": {"blob": base64.b64encode(raw[::-1]).decode()}})
    assert actions(in_process_pass(sim.sim, sim.kubeconfig))["Deployment/shop/a"] == "rollout"


def test_a_configmap_and_a_secret_with_the_same_name_are_distinct_sources(sim: Cluster) -> None:
    sim.add(
        configmap("same", {"k": "1"}),
        {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "same", "namespace": "shop"}, "data": {}},
    )
    pod = env_from("configmap", "same")
    pod["containers"][0]["envFrom"].append({"secretRef": {"name": "same"}})
    sim.add(deployment("both", pod), deployment("cm-only", env_from("configmap", "same")))
    report = in_process_pass(sim.sim, sim.kubeconfig)
    rows = rows_by_name(report)
    assert rows["both"].configs == ("configmap/same", "secret/same")
    assert adopted_hash(sim, "both") == expected_hash(
        sim.sim, "shop", [("configmap", "same", None), ("secret", "same", None)]
    )
    sim.edit("secrets", "shop", "same", {"stringData": {"new": "v"}})
    assert actions(in_process_pass(sim.sim, sim.kubeconfig)) == {
        "Deployment/shop/both": "rollout",
        "Deployment/shop/cm-only": "in-sync",
    }


def test_garbage_in_our_own_bookkeeping_annotations_is_rewritten_not_fatal(sim: Cluster) -> None:
    sim.add(configmap("app", {"a": "1"}))
    junk = {
        "kube-rehash.io/watch": "true",
        "kube-rehash.io/sources": '{"v":1,"k":7,"s":[["configmap"]]}',
        "kube-rehash.io/last-rollout": "yesterday",
    }
    sim.add(deployment("web", env_from("configmap", "app"), annotations=junk))
    row = rows_by_name(in_process_pass(sim.sim, sim.kubeconfig))["web"]
    assert row.action == "adopt"
    want = expected_hash(sim.sim, "shop", [("configmap", "app", None)])
    assert adopted_hash(sim, "web") == want
    # A malformed setting of the user's (not our bookkeeping) fails closed instead: skipped, named.
    sim.edit(
        "deployments", "shop", "web", {"metadata": {"annotations": {"kube-rehash.io/min-interval": "soon"}}}
    )
    row = rows_by_name(in_process_pass(sim.sim, sim.kubeconfig))["web"]
    assert row.action == "skipped" and "kube-rehash.io/min-interval: 'soon'" in row.reason
