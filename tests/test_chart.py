"""The Helm chart charts/kube-rehash, checked with the real, pinned helm (`make helm`, tools/helm/go.mod).

Why: the chart is a second way to install the same objects as the Kustomize overlays under cronjob/; these
tests render both and compare them, so the two cannot drift. They also run `helm lint --strict` over a values
matrix and prove values.schema.json rejects bad values with a message naming the field.

Without the helm binary the `helm` fixture (tests/conftest.py) skips locally and fails under CI=true or
KUBE_REHASH_REAL=1, as the control plane does: CI never skips them silently. Marker `helm`.
"""

from __future__ import annotations

import base64
import importlib.util
import os
import re
import shutil
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

# The image name of the Kustomize overlays (cronjob/base/cronjob.yaml), which a user's overlay replaces with
# `images:`; the chart has no default image (it refuses an empty image.repository), so every render sets it.
IMAGE = ("--set", "image.repository=ghcr.io/kube-rehash/kube-rehash")
NAMESPACED = ("--set", "scope.namespaces={team-a,team-b}")
# Every optional feature's permissions withheld (kustomize: the overlay's own components removed, "-name").
MINIMAL_PARTS = ["-secrets-store-csi", "-run-on-change", "components/without-argo-rollouts"]
MINIMAL_VALUES = ["--set", "argoRollouts=false,secretsStoreCsi=false,runOnChange=false"]

# The values of each overlay: (kustomize directory, then components added or, as "-name", removed from the
# overlay's own list; helm --set flags).
MATRIX: dict[str, tuple[list[str], list[str]]] = {
    "cluster": (["cluster"], [*IMAGE]),
    "namespaced": (["namespaced"], [*IMAGE, *NAMESPACED]),
    "namespaced+secrets-get-only": (
        ["namespaced", "components/secrets-get-only"],
        [*IMAGE, *NAMESPACED, "--set", "secretsGetOnly=true"],
    ),
    "cluster+secrets-get-only": (
        ["cluster", "components/secrets-get-only"],
        [*IMAGE, "--set", "secretsGetOnly=true"],
    ),
    "sharded": (["sharded"], [*IMAGE, "--set", "shards=4"]),
    "cluster+evict": (["cluster", "components/evict"], [*IMAGE, "--set", "evict=true"]),
    "namespaced+evict": (
        ["namespaced", "components/evict"],
        [*IMAGE, *NAMESPACED, "--set", "evict=true"],
    ),
    "cluster+without-argo-rollouts": (
        ["cluster", "components/without-argo-rollouts"],
        [*IMAGE, "--set", "argoRollouts=false"],
    ),
    # Kustomize puts a later component's env entry first: listed so, the env reads as the chart renders it.
    "namespaced+without-argo-rollouts+secrets-get-only": (
        ["namespaced", "components/without-argo-rollouts", "components/secrets-get-only"],
        [*IMAGE, *NAMESPACED, "--set", "secretsGetOnly=true", "--set", "argoRollouts=false"],
    ),
    "cluster-secrets-store-csi": (
        ["cluster", "-secrets-store-csi"],
        [*IMAGE, "--set", "secretsStoreCsi=false"],
    ),
    "cluster-run-on-change": (["cluster", "-run-on-change"], [*IMAGE, "--set", "runOnChange=false"]),
    "cluster-minimal": (["cluster", *MINIMAL_PARTS], [*IMAGE, *MINIMAL_VALUES]),
    "namespaced-minimal+evict": (
        ["namespaced", *MINIMAL_PARTS, "components/evict"],
        [*IMAGE, *NAMESPACED, *MINIMAL_VALUES, "--set", "evict=true"],
    ),
    "cluster+openreports": (["cluster", "components/openreports"], [*IMAGE, "--set", "openreports=true"]),
    "namespaced+openreports": (
        ["namespaced", "components/openreports"],
        [*IMAGE, *NAMESPACED, "--set", "openreports=true"],
    ),
}
# Further values lint and the servers' validation cover (no overlay renders them).
EXTRA_VALUES: dict[str, list[str]] = {
    "everything": [
        *IMAGE,
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
        "--set",
        "config.restart=evict",
    ],
    "namespaced-by-config": [*IMAGE, "--set", "config.namespaces={team-a,team-b}"],
    "existing-service-account": [
        *IMAGE,
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
    """`helm template` with the overlays' image name (later flags may set another)."""
    args = ["template", "kube-rehash", str(CHART), "--namespace", "kube-rehash", *IMAGE, *flags]
    return [d for d in yaml.safe_load_all(run_helm(helm, *args).stdout) if d]


def cronjob_tree(tmp_path: Path, overlay: str, removed: list[str]) -> Path:
    """A copy of cronjob/ whose `overlay` lists none of the `removed` components: what a user who withholds
    those features' permissions edits in their copy of the overlay."""
    tree = tmp_path / "cronjob"
    shutil.copytree(CRONJOB_DIR, tree)
    kustomization = tree / overlay / "kustomization.yaml"
    text = kustomization.read_text(encoding="utf-8")
    for name in removed:
        line = f"  - ../components/{name}\n"
        assert line in text, f"cronjob/{overlay} does not list the component {name}"
        text = text.replace(line, "")
    kustomization.write_text(text, encoding="utf-8")
    return tree


def kustomize(tmp_path: Path, parts: list[str]) -> list[Doc]:
    """`kubectl kustomize` of an overlay, minus the components named "-name" (cronjob_tree), plus the
    components named after it through a throw-away kustomization."""
    removed = [p[1:] for p in parts[1:] if p.startswith("-")]
    added = [p for p in parts[1:] if not p.startswith("-")]
    tree = cronjob_tree(tmp_path, parts[0], removed) if removed else CRONJOB_DIR
    if not added:
        directory = tree / parts[0]
    else:
        directory = tmp_path / "overlay"
        directory.mkdir()
        up = os.path.relpath(tree, directory)
        components = ", ".join(f"{up}/{p}" for p in added)
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
    """The notes `helm install` prints (a client-side dry run: no cluster), without helm's own heading."""
    args = ["install", "kube-rehash", str(CHART), "--namespace", "kube-rehash", "--dry-run=client", *flags]
    out = run_helm(helm, *args).stdout
    return out[out.index("NOTES:\n") + len("NOTES:\n") :]


def test_install_notes_are_the_generated_text_the_chart_readme_shows(helm: Path) -> None:
    """What helm prints for the README's example install is gen-chart-notes.py's example, word for word
    (tests/test_chart_notes.py runs that example's commands against the simulator)."""
    notes = load_notes_generator()
    flags = notes.EXAMPLE_INSTALL.split(" charts/kube-rehash -n kube-rehash ", 1)[1].split()
    assert install_notes(helm, *flags) == notes.example()


def test_the_objects_the_install_notes_name_are_the_charts(helm: Path) -> None:
    """The CronJob the notes create a Job from, and the Secret they plan with, are rendered where named."""
    example = load_notes_generator().example()
    job = re.search(r"kubectl -n (\S+) create job --from=cronjob/(\S+) ", example)
    key = re.search(r"--hash-key-secret (\S+)/(\S+)", example)
    assert job and key
    docs = {
        (d["kind"], d["metadata"].get("namespace"), d["metadata"]["name"]): d for d in helm_template(helm)
    }
    assert ("CronJob", job.group(1), job.group(2)) in docs
    secret = docs[("Secret", key.group(1), key.group(2))]
    assert list(secret["data"]) == ["key"]  # the data key --hash-key-secret reads


def test_install_notes_follow_the_scope_the_key_secret_the_prefix_and_the_shards(helm: Path) -> None:
    flags = [*IMAGE, *NAMESPACED, "--set", "hashKey.existingSecret=my-key", "--set", "shards=3"]
    notes = install_notes(helm, *flags, "--set", "config.annotationPrefix=rehash.example.com")
    assert 'schedule "*/5 * * * *", in the namespaces team-a, team-b. Only' in notes
    assert "kube-rehash plan --hash-key-secret kube-rehash/my-key -n team-a -n team-b\n" in notes
    assert "kubectl -n kube-rehash logs -l job-name=kube-rehash-now --prefix\n" in notes
    assert "kubectl annotate deployment/web rehash.example.com/watch=true\n" in notes
    from_config = install_notes(helm, *IMAGE, "--set", "config.namespaces={team-c}")
    assert "in the namespaces team-c. Only" in from_config
    assert "kube-rehash plan --hash-key-secret kube-rehash/kube-rehash-hash-key -n team-c\n" in from_config


def test_an_empty_image_repository_is_refused_saying_how_to_build_and_set_it(helm: Path) -> None:
    result = run_helm(helm, "template", "kube-rehash", str(CHART), check=False)
    assert result.returncode != 0
    assert "image.repository is empty: no kube-rehash image is published. Build it" in result.stderr
    assert "(make image)" in result.stderr and "docs/release.md" in result.stderr
    values = yaml.safe_load((CHART / "values.yaml").read_text(encoding="utf-8"))
    assert values["image"]["repository"] == ""


def test_config_namespaces_alone_grants_roles_in_them_and_no_cluster_wide_permission(
    helm: Path, tmp_path: Path
) -> None:
    docs = helm_template(helm, "--set", "config.namespaces={team-a,team-b}")
    kinds = {(d["kind"], d["metadata"].get("namespace", "")) for d in docs}
    assert not {k for k, _ in kinds} & {"ClusterRole", "ClusterRoleBinding"}
    assert {k for k in kinds if k[0] in ("Role", "RoleBinding")} == {
        (kind, ns) for kind in ("Role", "RoleBinding") for ns in ("team-a", "team-b")
    }
    overlay = {
        d["metadata"]["namespace"]: d for d in kustomize(tmp_path, ["namespaced"]) if d["kind"] == "Role"
    }
    for role in (d for d in docs if d["kind"] == "Role"):
        assert role["rules"] == overlay[role["metadata"]["namespace"]]["rules"]
    config = yaml.safe_load(next(d for d in docs if d["kind"] == "ConfigMap")["data"]["config.yaml"])
    assert config["namespaces"] == ["team-a", "team-b"]
    cronjob = next(d for d in docs if d["kind"] == "CronJob")
    args = cronjob["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"][0]["args"]
    assert "-n" not in args  # the pass reads them from its config file


def test_scope_and_config_namespaces_that_differ_are_refused(helm: Path) -> None:
    args = ["template", "kube-rehash", str(CHART), *IMAGE, *NAMESPACED, "--set", "config.namespaces={team-a}"]
    result = run_helm(helm, *args, check=False)
    assert result.returncode != 0
    assert 'scope.namespaces ["team-a","team-b"] and config.namespaces ["team-a"] differ' in result.stderr
    same = helm_template(helm, *NAMESPACED, "--set", "config.namespaces={team-a,team-b}")
    assert {d["metadata"]["namespace"] for d in same if d["kind"] == "Role"} == {"team-a", "team-b"}


ROLLOUTS_RULE = {"apiGroups": ["argoproj.io"], "resources": ["rollouts"], "verbs": ["get", "list", "patch"]}
EVICT_RULE = {"apiGroups": [""], "resources": ["pods/eviction"], "verbs": ["create"]}


def _role(docs: list[Doc]) -> Doc:
    return next(d for d in docs if d["kind"] == "ClusterRole")


def _env(docs: list[Doc]) -> dict[str, str]:
    cronjob = next(d for d in docs if d["kind"] == "CronJob")
    container = cronjob["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"][0]
    return {e["name"]: e["value"] for e in container.get("env", [])}


def test_the_rollouts_rule_follows_the_kinds_the_pass_lists(helm: Path) -> None:
    assert ROLLOUTS_RULE in _role(helm_template(helm))["rules"]
    without = helm_template(
        helm, "--set", "argoRollouts=false", "--set", "config.kinds={Deployment,CloneSet}"
    )
    assert ROLLOUTS_RULE not in _role(without)["rules"]
    assert _env(without) == {"KUBE_REHASH_KINDS": "Deployment,CloneSet"}
    fewer_kinds = helm_template(helm, "--set", "config.kinds={Deployment,CronJob}")
    assert ROLLOUTS_RULE not in _role(fewer_kinds)["rules"] and _env(fewer_kinds) == {}


def test_restart_evict_in_the_config_grants_eviction_without_the_evict_value(helm: Path) -> None:
    assert EVICT_RULE not in _role(helm_template(helm))["rules"]
    by_config = _role(helm_template(helm, "--set", "config.restart=evict"))["rules"]
    assert by_config == _role(helm_template(helm, "--set", "evict=true"))["rules"]
    assert EVICT_RULE in by_config


def test_the_values_and_readme_document_every_permission_switch() -> None:
    values = yaml.safe_load((CHART / "values.yaml").read_text(encoding="utf-8"))
    readme = (CHART / "README.md").read_text(encoding="utf-8")
    defaults = {"argoRollouts": True, "secretsStoreCsi": True, "runOnChange": True, "evict": False}
    assert {k: values[k] for k in defaults} == defaults
    for name in defaults:
        assert f"| `{name}` |" in readme


def test_the_chart_readme_and_notes_name_no_issue_or_project_history() -> None:
    for path in (CHART / "README.md", CHART / "templates" / "NOTES.txt", CHART / "values.yaml"):
        text = path.read_text(encoding="utf-8")
        assert not re.search(r"(?i)\bissue\b|#\d+|\bround\b|\bno longer\b", text), path.name


def load_notes_generator() -> Any:
    """scripts/gen-chart-notes.py as a module (its name is not an identifier)."""
    spec = importlib.util.spec_from_file_location("gen_chart_notes", ROOT / "scripts" / "gen-chart-notes.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


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
    result = run_helm(helm, "template", "kube-rehash", str(CHART), *IMAGE, "--set", flag, check=False)
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
        *IMAGE,
        "--set",
        "config.namespaceSelector=team=payments",
        "--set",
        "scope.namespaces={team-a}",
        check=False,
    )
    assert namespaced.returncode != 0 and "needs the cluster scope" in namespaced.stderr
    from_config = run_helm(
        helm,
        "template",
        "kube-rehash",
        str(CHART),
        *IMAGE,
        "--set",
        "config.namespaceSelector=team=payments",
        "--set",
        "config.namespaces={team-a}",
        check=False,
    )
    assert from_config.returncode != 0 and "needs the cluster scope" in from_config.stderr
