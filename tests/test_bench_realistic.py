"""The benchmark's realistic shape (`Shape(objects="realistic")`, rehash_simulator/dress.py): the same
cluster as the thin one, every object carrying what a real cluster adds, deterministically.

What each object must carry, as `python -m benchmarks.realistic_objects` measured on the real server:
a deployer's managedFields entry owning exactly the fields the object has (FieldsV1 keyed as the server
keys lists), kubectl's last-applied annotation on exactly the objects kubectl applied (and holding what
was applied), Helm's labels and release annotations on Helm's, a controller's status entry and a status
block on every workload, and Helm's storage-driver entry on every Helm release Secret."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import replace
from typing import Any

from benchmarks.generate import REALISTIC, Shape, generate
from rehash_simulator.dress import KUBECTL, LAST_APPLIED, fields_v1

SMALL = Shape(
    workloads=60,
    opted_in=20,
    namespaces=3,
    configmaps=120,
    secrets=90,
    helm_secrets=6,
    helm_min_kb=1,
    helm_max_kb=4,
    objects=REALISTIC,
)
WORKLOADS = {"Deployment", "StatefulSet", "DaemonSet", "CronJob"}


def managers(obj: dict[str, Any]) -> list[str]:
    return [m["manager"] for m in obj["metadata"]["managedFields"]]


def test_realistic_generator_is_deterministic_and_dresses_the_thin_cluster() -> None:
    first, again = generate(SMALL), generate(SMALL)
    assert json.dumps(first.objects) == json.dumps(again.objects)
    thin = generate(replace(SMALL, objects="thin"))
    assert first.references == thin.references
    for dressed, plain in zip(first.objects, thin.objects, strict=True):
        assert {k: v for k, v in dressed.items() if k not in ("metadata", "status")} == {
            k: v for k, v in plain.items() if k != "metadata"
        }


def test_every_object_carries_managed_fields_owning_its_own_fields() -> None:
    for obj in generate(SMALL).objects:
        if obj["kind"] == "Namespace":
            continue
        first = obj["metadata"]["managedFields"][0]
        owned = first["fieldsV1"]
        content = "data" if obj["kind"] in ("ConfigMap", "Secret") else "spec"
        expected = fields_v1({content: obj[content]}, update=first["operation"] == "Update")
        assert owned[f"f:{content}"] == expected[f"f:{content}"], obj["metadata"]["name"]
        labels = {key for key in owned["f:metadata"]["f:labels"] if key != "."}
        assert labels == {f"f:{key}" for key in obj["metadata"]["labels"]}


def test_containers_env_and_ports_are_keyed_as_the_server_keys_them() -> None:
    workload = next(o for o in generate(SMALL).objects if o["kind"] == "Deployment")
    spec = workload["metadata"]["managedFields"][0]["fieldsV1"]["f:spec"]["f:template"]["f:spec"]
    container = spec["f:containers"][f'k:{{"name":"{workload["metadata"]["name"]}"}}']
    assert 'k:{"containerPort":8080,"protocol":"TCP"}' in container["f:ports"]
    assert 'k:{"name":"SETTING_0"}' in container["f:env"]
    assert 'k:{"mountPath":"/tmp"}' in container["f:volumeMounts"]


def test_last_applied_exactly_where_kubectl_applied_and_holding_what_it_applied() -> None:
    objects = [o for o in generate(SMALL).objects if o["kind"] != "Namespace"]
    for obj in objects:
        annotations = obj["metadata"].get("annotations") or {}
        by_kubectl = managers(obj)[0] == KUBECTL
        assert (LAST_APPLIED in annotations) == by_kubectl
        if by_kubectl:
            applied = json.loads(annotations[LAST_APPLIED])
            assert applied["metadata"]["name"] == obj["metadata"]["name"]
            assert LAST_APPLIED not in applied["metadata"].get("annotations", {})
            assert "status" not in applied and "managedFields" not in applied["metadata"]
            assert {k: v for k, v in applied.items() if k not in ("metadata", "apiVersion", "kind")} == {
                k: v for k, v in obj.items() if k not in ("metadata", "status", "apiVersion", "kind")
            }
    deployers = Counter(managers(o)[0] for o in objects if o.get("type") != "helm.sh/release.v1")
    total = sum(deployers.values())
    assert 0.4 < deployers["helm"] / total < 0.6
    assert 0.2 < deployers["argocd-controller"] / total < 0.4
    assert 0.1 < deployers[KUBECTL] / total < 0.3


def test_helm_labels_workload_status_and_helm_release_entries() -> None:
    for obj in generate(SMALL).objects:
        meta = obj["metadata"]
        if obj.get("type") == "helm.sh/release.v1":
            assert [(m["manager"], m["operation"]) for m in meta["managedFields"]] == [("helm", "Update")]
            continue
        if obj["kind"] == "Namespace":
            continue
        assert {"app.kubernetes.io/name", "app.kubernetes.io/instance", "app.kubernetes.io/version"} <= set(
            meta["labels"]
        )
        if managers(obj)[0] == "helm":
            assert meta["labels"]["app.kubernetes.io/managed-by"] == "Helm"
            assert meta["annotations"]["meta.helm.sh/release-namespace"] == meta["namespace"]
        if obj["kind"] in WORKLOADS:
            assert obj["status"]
            status_entry = meta["managedFields"][1]
            assert (status_entry["manager"], status_entry.get("subresource")) == (
                "kube-controller-manager",
                "status",
            )
            if obj["kind"] != "CronJob":
                assert obj["spec"]["selector"]["matchLabels"] == obj["spec"]["template"]["metadata"]["labels"]
                assert "helm.sh/chart" not in obj["spec"]["selector"]["matchLabels"]
        else:
            assert "status" not in obj
