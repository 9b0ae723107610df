"""Conformance with real kubectl (client-go): discovery fallback, tables, selectors, every patch path."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from simhelpers import KUBECTL, configmap, deployment

from rehash_simulator import Simulator


@pytest.fixture
def seeded(sim: Simulator) -> Simulator:
    sim.store.create(deployment("web"))
    sim.store.create(deployment("db", "data"))
    sim.store.create(configmap("cfg", app="web"))
    sim.store.create(configmap("other", tier="db"))
    sim.store.create(
        {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": "plain", "namespace": "shop"},
            "stringData": {"a": "b"},
        }
    )
    sim.store.create(
        {
            "apiVersion": "v1",
            "kind": "Secret",
            "type": "helm.sh/release.v1",
            "metadata": {"name": "sh.helm.release.v1.web.v1", "namespace": "shop"},
            "data": {},
        }
    )
    return sim


def test_get_all_namespaces_table(seeded: Simulator, kubectl: Any) -> None:
    out = kubectl("get", "deploy", "-A").stdout.splitlines()
    assert out[0].split() == ["NAMESPACE", "NAME", "AGE"]
    assert [line.split()[:2] for line in out[1:]] == [["data", "db"], ["shop", "web"]]
    table_requests = seeded.log.entries(path="/deployments$")
    assert "as=Table" in table_requests[0].accept and table_requests[0].status == 200


def test_get_json(seeded: Simulator, kubectl: Any) -> None:
    body = json.loads(kubectl("get", "cm", "-n", "shop", "-o", "json").stdout)
    assert [i["metadata"]["name"] for i in body["items"]] == ["cfg", "other"]
    assert body["items"][0]["data"] == {"k": "v"}
    one = json.loads(kubectl("get", "configmap/cfg", "-n", "shop", "-o", "json").stdout)
    assert one["kind"] == "ConfigMap" and one["apiVersion"] == "v1"


def test_selectors(seeded: Simulator, kubectl: Any) -> None:
    names = kubectl("get", "cm", "-n", "shop", "-l", "app=web", "-o", "name").stdout.split()
    assert names == ["configmap/cfg"]
    names = kubectl("get", "cm", "-A", "-l", "tier notin (web),!app", "-o", "name").stdout.split()
    assert names == ["configmap/other"]
    secrets = kubectl("get", "secrets", "-A", "--field-selector", "type!=helm.sh/release.v1", "-o", "name")
    assert secrets.stdout.split() == ["secret/plain"]
    bad = kubectl("get", "cm", "-A", "--field-selector", "data.k=v", check=False)
    assert bad.returncode != 0 and "field label not supported: data.k" in bad.stderr


def test_annotate_label_and_patches(seeded: Simulator, kubectl: Any) -> None:
    kubectl("annotate", "deployment/web", "-n", "shop", "team=a")
    kubectl("label", "deploy", "web", "-n", "shop", "tier=front")
    kubectl("patch", "deploy", "web", "-n", "shop", "--type", "merge", "-p", '{"spec":{"replicas":3}}')
    kubectl(
        "patch",
        "deploy",
        "web",
        "-n",
        "shop",
        "--type",
        "json",
        "-p",
        '[{"op":"add","path":"/metadata/annotations/a~1b","value":"c"}]',
    )
    kubectl(
        "patch",
        "deploy",
        "web",
        "-n",
        "shop",
        "--type",
        "strategic",
        "-p",
        '{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"nginx:2"}]}}}}',
    )
    obj = seeded.store.get("deployments", "shop", "web")
    assert obj["metadata"]["annotations"] == {"team": "a", "a/b": "c"}
    assert obj["metadata"]["labels"]["tier"] == "front"
    assert obj["spec"]["replicas"] == 3
    container = obj["spec"]["template"]["spec"]["containers"][0]
    assert container["image"] == "nginx:2" and container["env"] == [{"name": "A", "value": "1"}]
    failed = kubectl(
        "patch",
        "deploy",
        "web",
        "-n",
        "shop",
        "--type",
        "json",
        "-p",
        '[{"op":"test","path":"/spec/replicas","value":9}]',
        check=False,
    )
    assert failed.returncode != 0
    assert not seeded.log.entries(path="^/openapi")  # kubectl needs no OpenAPI document for these
    patches = [e.content_type for e in seeded.log.entries(method="PATCH")]
    assert patches == [
        "application/merge-patch+json",
        "application/merge-patch+json",
        "application/merge-patch+json",
        "application/json-patch+json",
        "application/strategic-merge-patch+json",
        "application/json-patch+json",
    ]


def test_rollout_restart(seeded: Simulator, kubectl: Any) -> None:
    before = seeded.store.get("deployments", "shop", "web")
    assert "restarted" in kubectl("rollout", "restart", "deployment/web", "-n", "shop").stdout
    after = seeded.store.get("deployments", "shop", "web")
    assert "kubectl.kubernetes.io/restartedAt" in after["spec"]["template"]["metadata"]["annotations"]
    assert after["metadata"]["generation"] == before["metadata"]["generation"] + 1
    history = seeded.store.history("deployments", "shop", "web")
    assert len(history) == 2


def test_not_found_and_forbidden(seeded: Simulator, kubectl: Any, tmp_path: Path) -> None:
    missing = kubectl("get", "deploy", "nope", "-n", "shop", check=False)
    assert 'deployments.apps "nope" not found' in missing.stderr
    seeded.add_token("t", "system:serviceaccount:ops:kube-rehash")
    seeded.load_rbac({"kind": "ClusterRole", "metadata": {"name": "r"}, "rules": []})
    config = seeded.write_kubeconfig(tmp_path / "sa", token="t")
    result = subprocess.run(
        [KUBECTL, "--kubeconfig", str(config), "--cache-dir", str(tmp_path / "c"), "get", "deploy", "-A"],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert result.returncode != 0
    assert (
        'deployments.apps is forbidden: User "system:serviceaccount:ops:kube-rehash" cannot list resource '
        '"deployments" in API group "apps" at the cluster scope'
    ) in result.stderr
