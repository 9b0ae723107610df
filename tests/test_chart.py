"""The Helm chart charts/kube-rehash, checked with the real, pinned helm (`make helm`, tools/helm/go.mod).

Why: the chart is a second way to install the same objects as the Kustomize overlays under cronjob/; these
tests render both and compare them, so the two cannot drift. They also run `helm lint --strict` over a values
matrix and prove values.schema.json rejects bad values with a message naming the field.

Without the helm binary the `helm` fixture (tests/conftest.py) skips locally and fails under CI=true or
KUBE_REHASH_REAL=1, as the control plane does: CI never skips them silently. Marker `helm`.
"""

from __future__ import annotations

import base64
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
CHART = ROOT / "charts" / "kube-rehash"
KUBECTL = ROOT / ".venv" / "bin" / "kubectl"
CRONJOB_DIR = ROOT / "cronjob"

pytestmark = pytest.mark.helm

Doc = dict[str, Any]

# The values of each overlay: (kustomize directory or components, helm --set flags).
MATRIX: dict[str, tuple[list[str], list[str]]] = {
    "cluster": (["cluster"], []),
    "namespaced": (["namespaced"], ["--set", "scope.namespaces={team-a,team-b}"]),
    "namespaced+secrets-get-only": (
        ["namespaced", "components/secrets-get-only"],
        ["--set", "scope.namespaces={team-a,team-b}", "--set", "secretsGetOnly=true"],
    ),
    "cluster+secrets-get-only": (
        ["cluster", "components/secrets-get-only"],
        ["--set", "secretsGetOnly=true"],
    ),
    "sharded": (["sharded"], ["--set", "shards=4"]),
    "cluster+evict": (["cluster", "components/evict"], ["--set", "evict=true"]),
    "namespaced+evict": (
        ["namespaced", "components/evict"],
        ["--set", "scope.namespaces={team-a,team-b}", "--set", "evict=true"],
    ),
    "cluster+openreports": (["cluster", "components/openreports"], ["--set", "openreports=true"]),
    "namespaced+openreports": (
        ["namespaced", "components/openreports"],
        ["--set", "scope.namespaces={team-a,team-b}", "--set", "openreports=true"],
    ),
}
# Further values lint and the servers' validation cover (no overlay renders them).
EXTRA_VALUES: dict[str, list[str]] = {
    "everything": [
        "--set",
        "image.digest=sha256:" + "a" * 64,
        "--set",
        "imagePullSecrets[0].name=regcred",
        "--set",
        "nodeSelector.disktype=ssd",
        "--set",
        "tolerations[0].key=dedicated,tolerations[0].operator=Exists,tolerations[0].effect=NoSchedule",
        "--set",
        "pushgateway=http://pushgateway.monitoring:9091",
        "--set",
        "commonLabels.team=platform",
        "--set",
        "commonAnnotations.owner=platform",
        "--set",
        "serviceAccount.annotations.example\\.com/role=kube-rehash",
        "--set",
        "hashKey.existingSecret=my-key",
        "--set-json",
        "config.qps=5.5",  # --set reads 5.5 as a string
        "--set",
        "config.compat={reloader}",
        "--set",
        "config.restartWindow=Mon-Fri 22:00-06:00 Europe/Berlin",
        "--set",
        "config.timeout=120",
    ],
    "existing-service-account": [
        "--set",
        "serviceAccount.create=false",
        "--set",
        "serviceAccount.name=robot",
    ],
}


def helm_binary() -> Path:
    """The pinned helm (`make helm`): .cache/helm/<version from tools/helm/go.mod>/helm, or $HELM_CACHE's."""
    gomod = (ROOT / "tools" / "helm" / "go.mod").read_text(encoding="utf-8")
    match = re.search(r"^\s*(?:require\s+)?helm\.sh/helm/v4\s+(v\S+)", gomod, re.MULTILINE)
    assert match, "tools/helm/go.mod does not require helm.sh/helm/v4"
    cache = Path(os.environ.get("HELM_CACHE", ROOT / ".cache" / "helm"))
    return cache / match.group(1) / "helm"


def run_helm(helm: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    """helm with an empty, private configuration (no repositories, no plugins, no kubeconfig of the user)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("HELM_") and k != "KUBECONFIG"}
    home = ROOT / ".cache" / "helm" / "home"
    env.update(
        HELM_CONFIG_HOME=str(home / "config"),
        HELM_CACHE_HOME=str(home / "cache"),
        HELM_DATA_HOME=str(home / "data"),
    )
    result = subprocess.run([str(helm), *args], capture_output=True, text=True, env=env, check=False)
    if check:
        assert result.returncode == 0, f"helm {' '.join(args)} failed ({result.returncode}): {result.stderr}"
    return result


def helm_template(helm: Path, *flags: str) -> list[Doc]:
    out = run_helm(helm, "template", "kube-rehash", str(CHART), "--namespace", "kube-rehash", *flags).stdout
    return [d for d in yaml.safe_load_all(out) if d]


def kustomize(tmp_path: Path, parts: list[str]) -> list[Doc]:
    """`kubectl kustomize` of an overlay, plus components through a throw-away kustomization."""
    if len(parts) == 1:
        directory = CRONJOB_DIR / parts[0]
    else:
        directory = tmp_path / "-".join(p.replace("/", "_") for p in parts)
        directory.mkdir()
        up = os.path.relpath(CRONJOB_DIR, directory)
        components = ", ".join(f"{up}/{p}" for p in parts[1:])
        (directory / "kustomization.yaml").write_text(
            f"resources: [{up}/{parts[0]}]\ncomponents: [{components}]\n", encoding="utf-8"
        )
    result = subprocess.run(
        [str(KUBECTL), "kustomize", str(directory)], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, f"kubectl kustomize {directory} failed: {result.stderr}"
    return [d for d in yaml.safe_load_all(result.stdout) if d]


# What the comparison normalises, and why (nothing else):
# - Helm's own labels (app.kubernetes.io/instance, managed-by, version, helm.sh/chart): Helm's release
#   bookkeeping, which kustomize has no notion of; removed from the chart's objects.
# - The ConfigMap's name suffix (kube-rehash-config-<hash>): kustomize's configMapGenerator names it
#   after its content; the chart's ConfigMap is kube-rehash-config. Removed from the kustomize side (and from
#   the CronJob's reference to it).
# - The config file inside the ConfigMap compared parsed (YAML), not as text: the overlay's copy carries
#   comments and its own key order, helm's toYaml sorts keys.
# - The chart's Secret kube-rehash-hash-key (the generated key): kustomize leaves the Secret to the user
#   (README: Install), so it is compared separately (test_generated_hash_key_is_mounted).
HELM_LABELS = (
    "app.kubernetes.io/instance",
    "app.kubernetes.io/managed-by",
    "app.kubernetes.io/version",
    "helm.sh/chart",
)
SUFFIXED = re.compile(r"^(kube-rehash-config)-[a-z0-9]{10}$")


def _strip_labels(meta: Doc) -> None:
    labels = meta.get("labels") or {}
    for key in HELM_LABELS:
        labels.pop(key, None)


def normalise(docs: list[Doc]) -> dict[tuple[str, str, str], Doc]:
    out: dict[tuple[str, str, str], Doc] = {}
    for doc in docs:
        if doc["kind"] == "Secret":
            continue
        meta = doc["metadata"]
        _strip_labels(meta)
        if m := SUFFIXED.match(meta["name"]):
            meta["name"] = m.group(1)
        if doc["kind"] == "ConfigMap":
            doc["data"] = {k: yaml.safe_load(v) for k, v in doc["data"].items()}
        if doc["kind"] == "CronJob":
            template = doc["spec"]["jobTemplate"]["spec"]["template"]
            _strip_labels(template["metadata"])
            for volume in template["spec"]["volumes"]:
                if "configMap" in volume and (m := SUFFIXED.match(volume["configMap"]["name"])):
                    volume["configMap"]["name"] = m.group(1)
        out[(doc["kind"], meta.get("namespace", ""), meta["name"])] = doc
    return out


def test_chart_version_is_the_project_version() -> None:
    chart = yaml.safe_load((CHART / "Chart.yaml").read_text(encoding="utf-8"))
    init = (ROOT / "reconcile" / "__init__.py").read_text(encoding="utf-8")
    match = re.search(r'__version__ = "([^"]+)"', init)
    assert match
    assert chart["apiVersion"] == "v2" and chart["name"] == "kube-rehash"
    assert chart["version"] == match.group(1) and chart["appVersion"] == match.group(1)


def test_values_schema_is_generated_from_the_config_schema() -> None:
    result = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "gen-chart-schema.py"), "--check"], check=False
    )
    assert result.returncode == 0, "values.schema.json is stale: run python scripts/gen-chart-schema.py"


def test_default_config_values_are_the_overlay_config() -> None:
    """values.yaml's `config` + shards/pushgateway are cronjob/base/config.yaml, key for key."""
    values = yaml.safe_load((CHART / "values.yaml").read_text(encoding="utf-8"))
    base = yaml.safe_load((CRONJOB_DIR / "base" / "config.yaml").read_text(encoding="utf-8"))
    assert {**values["config"], "shards": values["shards"], "pushgateway": values["pushgateway"]} == base


@pytest.mark.parametrize("name", [*MATRIX, *EXTRA_VALUES])
def test_helm_lint_strict(helm: Path, name: str) -> None:
    flags = MATRIX[name][1] if name in MATRIX else EXTRA_VALUES[name]
    result = run_helm(helm, "lint", "--strict", str(CHART), "--namespace", "kube-rehash", *flags, check=False)
    assert result.returncode == 0, f"helm lint --strict ({name}): {result.stdout}{result.stderr}"


@pytest.mark.parametrize("name", list(MATRIX))
def test_chart_renders_the_kustomize_overlay(helm: Path, tmp_path: Path, name: str) -> None:
    parts, flags = MATRIX[name]
    chart = normalise(helm_template(helm, *flags))
    overlay = normalise(kustomize(tmp_path, parts))
    assert sorted(chart) == sorted(overlay)
    for key, doc in overlay.items():
        assert chart[key] == doc, f"{key} differs between the chart and cronjob/{'+'.join(parts)}"


def test_generated_hash_key_is_mounted(helm: Path) -> None:
    docs = helm_template(helm)
    secrets = [d for d in docs if d["kind"] == "Secret"]
    assert [s["metadata"]["name"] for s in secrets] == ["kube-rehash-hash-key"]
    assert len(base64.b64decode(secrets[0]["data"]["key"])) == 32  # the value itself is never printed
    cronjob = next(d for d in docs if d["kind"] == "CronJob")
    volumes = cronjob["spec"]["jobTemplate"]["spec"]["template"]["spec"]["volumes"]
    assert {"secretName": "kube-rehash-hash-key"}.items() <= next(
        v["secret"] for v in volumes if v["name"] == "hash-key"
    ).items()


def test_generated_hash_key_is_kept_on_uninstall_with_common_annotations_too(helm: Path) -> None:
    docs = helm_template(helm, "--set", "commonAnnotations.team=platform")
    secret = next(d for d in docs if d["kind"] == "Secret")
    assert secret["metadata"]["annotations"] == {"helm.sh/resource-policy": "keep", "team": "platform"}
    assert secret["metadata"]["labels"]["app.kubernetes.io/name"] == "kube-rehash"


def test_existing_hash_key_secret_is_not_generated(helm: Path) -> None:
    docs = helm_template(helm, "--set", "hashKey.existingSecret=my-key")
    assert not [d for d in docs if d["kind"] == "Secret"]
    cronjob = next(d for d in docs if d["kind"] == "CronJob")
    volumes = cronjob["spec"]["jobTemplate"]["spec"]["template"]["spec"]["volumes"]
    assert next(v for v in volumes if v["name"] == "hash-key")["secret"]["secretName"] == "my-key"


def install_notes(helm: Path, *flags: str) -> str:
    """The NOTES `helm install` prints (a client-side dry run: no cluster)."""
    args = ["install", "kube-rehash", str(CHART), "--namespace", "kube-rehash", "--dry-run=client", *flags]
    out = run_helm(helm, *args).stdout
    return out[out.index("NOTES:") :]


def test_install_notes_say_how_to_run_a_pass_now_read_it_and_plan_with_the_clusters_key(helm: Path) -> None:
    notes = install_notes(helm)
    assert "kubectl -n kube-rehash create job --from=cronjob/kube-rehash kube-rehash-now" in notes
    assert "kubectl -n kube-rehash logs job/kube-rehash-now" in notes
    assert "get secret kube-rehash-hash-key -o jsonpath='{.data.key}' | base64 -d > kube-rehash.key" in notes
    assert "KUBE_REHASH_HASH_KEY_FILE=kube-rehash.key kube-rehash plan\n" in notes
    assert "ghcr.io/kube-rehash/kube-rehash:" in notes and "image.repository" in notes


def test_install_notes_follow_the_scope_the_key_secret_and_the_shards(helm: Path) -> None:
    flags = ["--set", "scope.namespaces={team-a,team-b}", "--set", "hashKey.existingSecret=my-key"]
    notes = install_notes(helm, *flags, "--set", "shards=3")
    assert "in the namespaces team-a, team-b" in notes
    assert "get secret my-key -o jsonpath" in notes
    assert "kube-rehash plan -n team-a -n team-b\n" in notes
    assert "logs -l job-name=kube-rehash-now --prefix" in notes


@pytest.mark.parametrize(
    ("flag", "field"),
    [
        ("config.qps=-1", "qps"),
        ("config.fetch=sometimes", "fetch"),
        ("shards=0", "shards"),
        ("config.unknownKey=1", "unknownKey"),
        ("image.pullPolicy=Sometimes", "pullPolicy"),
    ],
)
def test_values_schema_rejects_bad_values(helm: Path, flag: str, field: str) -> None:
    result = run_helm(helm, "template", "kube-rehash", str(CHART), "--set", flag, check=False)
    assert result.returncode != 0, f"--set {flag} rendered"
    assert "values don't meet the specifications of the schema" in result.stderr, result.stderr
    assert field in result.stderr, result.stderr


def test_namespace_selector_grants_list_on_namespaces_in_cluster_scope_only(
    helm: Path, tmp_path: Path
) -> None:
    docs = helm_template(helm, "--set", "config.namespaceSelector=team=payments")
    role = next(d for d in docs if d["kind"] == "ClusterRole")
    component = next(
        d
        for d in kustomize(tmp_path, ["cluster", "components/namespace-selector"])
        if d["kind"] == "ClusterRole"
    )
    assert role["rules"] == component["rules"]
    assert {"apiGroups": [""], "resources": ["namespaces"], "verbs": ["list"]} in role["rules"]
    config = yaml.safe_load(next(d for d in docs if d["kind"] == "ConfigMap")["data"]["config.yaml"])
    assert config["namespaceSelector"] == "team=payments"
    unset = next(d for d in helm_template(helm) if d["kind"] == "ClusterRole")
    assert not [r for r in unset["rules"] if "namespaces" in r["resources"]]
    namespaced = run_helm(
        helm,
        "template",
        "kube-rehash",
        str(CHART),
        "--set",
        "config.namespaceSelector=team=payments",
        "--set",
        "scope.namespaces={team-a}",
        check=False,
    )
    assert namespaced.returncode != 0 and "needs the cluster scope" in namespaced.stderr
