"""The chart's rendered objects validated against Kubernetes 1.29's own OpenAPI v3 schemas.

Why: the chart supports Kubernetes 1.29 and up, but the test control plane is 1.37 (there is no 1.29 server
here). The schemas ship in the k8s.io/kubernetes@v1.29.15 module (api/openapi-spec/v3/*.json), fetched with
`go mod download` from the Go module proxy into the Go module cache (so a second run reads the cache).

What is validated: every object `helm template` renders for each values set of tests/test_chart.py, against
the schema of its group/version/kind (components/schemas, $refs resolved) with the JSON-schema validator
jsonschema (Draft 7 semantics: types, enums, required fields). Made strict like `--validate=strict`: every
object schema with `properties` and no `additionalProperties` is closed, so a field 1.29 does not know (one
added after 1.29) fails. Not validated: formats (int32, date-time), x-kubernetes-* extensions (int-or-string
is accepted as any value), and server-side rules (defaulting, admission, CEL).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import zipfile
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from tests.test_chart import CHART, EXTRA_VALUES, MATRIX, run_helm

pytestmark = pytest.mark.helm

K8S = "k8s.io/kubernetes@v1.29.15"
SPECS = {  # apiVersion -> the spec file of its group/version
    "v1": "api__v1_openapi.json",
    "batch/v1": "apis__batch__v1_openapi.json",
    "rbac.authorization.k8s.io/v1": "apis__rbac.authorization.k8s.io__v1_openapi.json",
}
GROUP_PREFIX = {
    "v1": "io.k8s.api.core.v1",
    "batch/v1": "io.k8s.api.batch.v1",
    "rbac.authorization.k8s.io/v1": "io.k8s.api.rbac.v1",
}


def _close(node: Any) -> None:
    """Close every object schema that lists its properties (strict: unknown fields are errors)."""
    if isinstance(node, dict):
        if "properties" in node and "additionalProperties" not in node:
            node["additionalProperties"] = False
        for value in node.values():
            _close(value)
    elif isinstance(node, list):
        for value in node:
            _close(value)


@pytest.fixture(scope="module")
def specs() -> dict[str, dict[str, Any]]:
    if shutil.which("go") is None:
        pytest.fail("the 'go' tool is required to fetch the Kubernetes 1.29 OpenAPI spec", pytrace=False)
    done = subprocess.run(
        ["go", "mod", "download", "-json", K8S],
        capture_output=True,
        text=True,
        check=False,
        cwd=Path(__file__).resolve().parent.parent / "tools" / "helm",
    )
    assert done.returncode == 0, done.stderr
    archive = json.loads(done.stdout)["Zip"]
    out = {}
    with zipfile.ZipFile(archive) as zf:
        for api_version, name in SPECS.items():
            document = json.loads(zf.read(f"{K8S}/api/openapi-spec/v3/{name}"))
            _close(document)
            out[api_version] = document
    return out


def test_closing_the_schemas_rejects_an_unknown_field(specs: dict[str, dict[str, Any]]) -> None:
    """The validation has teeth: a CronJob with a field 1.29 does not have fails."""
    errors = _errors(
        specs,
        {
            "apiVersion": "batch/v1",
            "kind": "CronJob",
            "metadata": {"name": "x"},
            "spec": {"schedule": "* * * * *", "jobTemplate": {"spec": {"template": {}}}, "noSuchField": 1},
        },
    )
    assert any("noSuchField" in e for e in errors), errors


def _errors(specs: dict[str, dict[str, Any]], obj: dict[str, Any]) -> list[str]:
    document = specs[obj["apiVersion"]]
    ref = f"#/components/schemas/{GROUP_PREFIX[obj['apiVersion']]}.{obj['kind']}"
    schema = {"$ref": ref, "components": document["components"]}
    validator = jsonschema.Draft7Validator(schema)
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(obj)]


@pytest.mark.parametrize("name", [*MATRIX, *EXTRA_VALUES])
def test_rendered_objects_are_valid_kubernetes_1_29(
    helm: Path, specs: dict[str, dict[str, Any]], name: str
) -> None:
    flags = MATRIX[name][1] if name in MATRIX else EXTRA_VALUES[name]
    out = run_helm(helm, "template", "kube-rehash", str(CHART), "--namespace", "kube-rehash", *flags).stdout
    docs = [d for d in yaml.safe_load_all(out) if d]
    assert docs
    for doc in docs:
        assert doc["apiVersion"] in SPECS, f"{doc['apiVersion']} is not checked here"
        assert _errors(specs, doc) == [], f"{name}: {doc['kind']}/{doc['metadata']['name']}"
