"""The shipped RBAC is exactly enough: full passes as the shipped service account meet no 403, and
taking away any single permission (one verb on one resource) makes a pass fail visibly.

The rules come from the manifests rendered with the real `kubectl kustomize` and are enforced by the
simulator's authorizer; the scenario drives every code path that needs a permission: gets and lists
of sources (few and many references, search mode), namespace listing (shards), patches of every
kind, re-reads after a conflicting writer, Events, and a run-on-change Job.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from reconcile.kube.auth import AuthOptions, load_credentials
from reconcile.kube.client import KubeClient
from reconcile.model.choices import Fetch
from reconcile.output.report import Report
from reconcile.pipeline.run import run_pass
from reconcile.policy.reads import BOUNDS, Read
from reconcile.settings.table import Settings
from reconcile.settings.values import Shard
from rehash_simulator import Simulator
from tests.e2e.conftest import (
    configmap,
    cronjob,
    csi_pod_spec,
    csi_status,
    deployment,
    env_from,
    owned_pod,
    secret,
)

GET_THRESHOLD = BOUNDS[Read.SOURCE_METADATA].more_than

ROOT = Path(__file__).resolve().parent.parent
KUBECTL = str(Path(sys.executable).parent / "kubectl")
SA_USER = "system:serviceaccount:kube-rehash:kube-rehash"
SA_TOKEN = "sa-token-for-rbac-proof"
Atom = tuple[str, str, str]  # (apiGroup, resource, verb)


def render(overlay: str) -> list[dict[str, Any]]:
    out = subprocess.run(
        [KUBECTL, "kustomize", str(ROOT / overlay)], capture_output=True, text=True, check=True, timeout=60
    )
    return [d for d in yaml.safe_load_all(out.stdout) if d]


def rbac_docs(docs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [d for d in docs if d["kind"] in ("ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding")]


def atoms_of(rules: list[dict[str, Any]]) -> set[Atom]:
    return {
        (g, r, v)
        for rule in rules
        for g in rule["apiGroups"]
        for r in rule["resources"]
        for v in rule["verbs"]
    }


def without(docs: list[dict[str, Any]], atom: Atom) -> list[dict[str, Any]]:
    """The same RBAC documents with one permission removed from every role (one rule per atom)."""
    result = []
    for doc in docs:
        if doc["kind"] in ("ClusterRole", "Role"):
            rules = [
                {"apiGroups": [g], "resources": [r], "verbs": [v]}
                for g, r, v in sorted(atoms_of(doc["rules"]) - {atom})
            ]
            result.append({**doc, "rules": rules})
        else:
            result.append(doc)
    return result


def seed(sim: Simulator) -> None:
    """Workloads of every kind; one namespace with few references (gets), one with many (lists)."""
    store = sim.store
    store.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "kube-rehash"}})
    store.create_many(
        [
            configmap("app", {"a": "1"}, ns="few"),
            secret("db", {"pw": "1"}, ns="few"),
            deployment("web", env_from("configmap", "app"), ns="few"),
            deployment("db", env_from("secret", "db"), ns="few", kind="StatefulSet"),
            deployment("agent", env_from("configmap", "app"), ns="few", kind="DaemonSet"),
            deployment("canary", env_from("secret", "db"), ns="few", kind="Rollout"),
            cronjob(
                "report",
                env_from("configmap", "app"),
                ns="few",
                annotations={"kube-rehash.io/watch": "true", "kube-rehash.io/run-on-change": "true"},
            ),
            configmap("tagged", {"a": "1"}, ns="many", annotations={"kube-rehash.io/match": "true"}),
            deployment("searcher", ns="many", annotations={"kube-rehash.io/search": "true"}),
        ]
    )
    # A Secrets Store CSI workload, its pod and the driver's record of the mount (tests/e2e/test_csi.py).
    store.create_many(
        [
            deployment("vault", csi_pod_spec(), ns="few"),
            owned_pod("vault-abc12-aaaaa", "vault", ns="few"),
            csi_status("vault-abc12-aaaaa", {"pw": "v1"}, ns="few"),
        ]
    )
    names = [f"c{i}" for i in range(GET_THRESHOLD + 1)]  # more than the planner gets by name: lists
    store.create_many([configmap(n, {"a": "1"}, ns="many") for n in names])
    store.create_many([secret(n, {"a": "1"}, ns="many") for n in names])
    annotations = {"kube-rehash.io/configmaps": ",".join(names), "kube-rehash.io/secrets": ",".join(names)}
    store.create(deployment("big", ns="many", annotations=annotations))


def change_sources(sim: Simulator) -> None:
    for ns, kind, name in [
        ("few", "configmaps", "app"),
        ("few", "secrets", "db"),
        ("many", "configmaps", "c0"),
    ]:
        sim.store.patch_merge(kind, ns, name, {"data": {"zz": "Mg=="} if kind == "secrets" else {"zz": "2"}})
    sim.store.patch_merge("configmaps", "many", "tagged", {"data": {"a": "2"}})
    objects = [{"id": "secret/pw", "version": "v2"}]
    sim.store.patch_merge(
        "secretproviderclasspodstatuses",
        "few",
        "vault-abc12-aaaaa-few-vault-db",
        {"status": {"objects": objects}},
    )


def collide_once_per_kind(sim: Simulator) -> None:
    """A concurrent writer bumps each workload just before our first patch of its kind: re-read needed."""
    for plural in ("deployments", "statefulsets", "daemonsets", "cronjobs", "rollouts"):

        def touch(store: Any, plural: str = plural) -> None:
            for obj in store.list(plural):
                meta = obj["metadata"]
                store.patch_merge(
                    plural, meta["namespace"], meta["name"], {"metadata": {"labels": {"touched": "yes"}}}
                )

        sim.faults.mutate(touch, method="PATCH", path=f"/{plural}/", max_count=1)


def scenario(sim: Simulator, kubeconfig: Path) -> list[Report]:
    """Adopt (with conflicts), then roll after changes; sharded (lists every workload, keeps a share)."""
    client = KubeClient(load_credentials(AuthOptions(str(kubeconfig))))
    settings = Settings.of(kubeconfig=str(kubeconfig), shard=Shard(0, 1), timeout=60.0)
    try:
        collide_once_per_kind(sim)
        first = Report(run_pass(settings, client))
        sim.faults.clear()
        change_sources(sim)
        second = Report(run_pass(settings, client))
    finally:
        client.close()
    return [first, second]


@pytest.fixture(scope="module")
def cluster_rbac() -> list[dict[str, Any]]:
    return rbac_docs(render("cronjob/cluster"))


@pytest.fixture
def sim(tmp_path: Path) -> Iterator[tuple[Simulator, Path]]:
    with Simulator().start() as simulator:
        simulator.add_token(SA_TOKEN, SA_USER)
        seed(simulator)
        yield simulator, simulator.write_kubeconfig(tmp_path / "kubeconfig", token=SA_TOKEN)


def failures(reports: list[Report]) -> list[str]:
    return [
        f"{r.kind}/{r.namespace}/{r.name}: {r.reason}"
        for report in reports
        for r in report.rows
        if r.action == "failed"
    ]


def test_full_passes_as_the_shipped_service_account_meet_no_403(
    sim: tuple[Simulator, Path], cluster_rbac: list[dict[str, Any]]
) -> None:
    simulator, kubeconfig = sim
    simulator.load_rbac(cluster_rbac)
    reports = scenario(simulator, kubeconfig)
    assert failures(reports) == []
    assert simulator.log.count(status=403) == 0
    actions = {(r.namespace, r.name): r.action for r in reports[1].rows}
    assert actions[("few", "web")] == actions[("few", "db")] == actions[("many", "big")] == "rollout"
    assert (
        actions[("few", "agent")] == actions[("few", "canary")] == actions[("many", "searcher")] == "rollout"
    )
    assert actions[("few", "vault")] == "rollout"
    assert simulator.store.count("jobs") == 1 and simulator.store.list("events", "few")


EXPECTED_ATOMS = {
    ("", "configmaps", "get"),
    ("", "configmaps", "list"),
    ("", "secrets", "get"),
    ("", "secrets", "list"),
    ("events.k8s.io", "events", "create"),
    ("batch", "jobs", "create"),
    *{
        (g, r, v)
        for g, r in [
            ("apps", "deployments"),
            ("apps", "statefulsets"),
            ("apps", "daemonsets"),
            ("batch", "cronjobs"),
            ("argoproj.io", "rollouts"),
        ]
        for v in ("get", "list", "patch")
    },
    *{("apps", "replicasets", "list"), ("apps", "controllerrevisions", "get")},
    ("", "pods", "list"),
    ("secrets-store.csi.x-k8s.io", "secretproviderclasspodstatuses", "list"),
    ("apps", "controllerrevisions", "list"),
}
# skipIfPodsNewer's reads (when did a workload's current pod template start) happen only for a source
# whose managedFields tell when its content changed; the simulator keeps no managedFields and serves no
# ReplicaSets, so these are proven on the real kube-apiserver instead (tests/real/test_rbac.py).
REAL_ONLY_ATOMS = {
    ("apps", "replicasets", "list"),
    ("apps", "controllerrevisions", "get"),
    ("apps", "controllerrevisions", "list"),
}


def test_the_cluster_role_grants_exactly_the_expected_permissions(cluster_rbac: list[dict[str, Any]]) -> None:
    role = next(d for d in cluster_rbac if d["kind"] == "ClusterRole")
    assert atoms_of(role["rules"]) == EXPECTED_ATOMS


@pytest.mark.parametrize("atom", sorted(EXPECTED_ATOMS - REAL_ONLY_ATOMS), ids=lambda a: f"{a[2]}-{a[1]}")
def test_removing_any_single_permission_makes_a_pass_fail(
    atom: Atom, sim: tuple[Simulator, Path], cluster_rbac: list[dict[str, Any]]
) -> None:
    simulator, kubeconfig = sim
    simulator.load_rbac(without(cluster_rbac, atom))
    reports = scenario(simulator, kubeconfig)
    assert failures(reports), f"no pass failed without {atom}"
    assert simulator.log.count(status=403) > 0


def test_the_namespaced_overlay_needs_no_cluster_permission(tmp_path: Path) -> None:
    docs = rbac_docs(render("cronjob/namespaced"))
    assert {d["kind"] for d in docs} == {"Role", "RoleBinding"}
    namespaces = sorted({d["metadata"]["namespace"] for d in docs})
    with Simulator().start() as simulator:
        simulator.add_token(SA_TOKEN, SA_USER)
        simulator.load_rbac(docs)
        for ns in namespaces:
            simulator.store.create_many(
                [configmap("app", {"a": "1"}, ns=ns), deployment("web", env_from("configmap", "app"), ns=ns)]
            )
        kubeconfig = simulator.write_kubeconfig(tmp_path / "kubeconfig", token=SA_TOKEN)
        client = KubeClient(load_credentials(AuthOptions(str(kubeconfig))))
        settings = Settings.of(kubeconfig=str(kubeconfig), namespaces=tuple(namespaces), timeout=60.0)
        report = Report(run_pass(settings, client))
        client.close()
        assert failures([report]) == [] and simulator.log.count(status=403) == 0
        assert [r.action for r in report.rows] == ["adopt"] * len(namespaces)


def test_secrets_get_only_component_works_with_fetch_get(tmp_path: Path, sim: tuple[Simulator, Path]) -> None:
    overlay = tmp_path / "overlay"
    overlay.mkdir()
    up = os.path.relpath(ROOT / "cronjob", overlay)
    (overlay / "kustomization.yaml").write_text(
        f"resources: [{up}/cluster]\ncomponents: [{up}/components/secrets-get-only]\n"
    )
    out = subprocess.run(
        [KUBECTL, "kustomize", str(overlay)], capture_output=True, text=True, check=True, timeout=60
    )
    docs = rbac_docs([d for d in yaml.safe_load_all(out.stdout) if d])
    role = next(d for d in docs if d["kind"] == "ClusterRole")
    assert ("", "secrets", "list") not in atoms_of(role["rules"])
    simulator, kubeconfig = sim
    simulator.load_rbac(docs)
    client = KubeClient(load_credentials(AuthOptions(str(kubeconfig))))
    settings = Settings.of(kubeconfig=str(kubeconfig), timeout=60.0, fetch=Fetch.GET)
    report = Report(run_pass(settings, client))
    client.close()
    secret_lists = [e for e in simulator.log.entries() if e.method == "GET" and e.path.endswith("/secrets")]
    assert secret_lists == [] and simulator.log.count(status=403) == 0
    assert failures([report]) == []
    assert {r.action for r in report.rows} == {"adopt"}


def render_with(tmp_path: Path, component: str) -> list[dict[str, Any]]:
    """The cluster overlay plus one component, rendered with the real `kubectl kustomize`."""
    overlay = tmp_path / "overlay"
    overlay.mkdir()
    up = os.path.relpath(ROOT / "cronjob", overlay)
    (overlay / "kustomization.yaml").write_text(
        f"resources: [{up}/cluster]\ncomponents: [{up}/{component}]\n"
    )
    out = subprocess.run(
        [KUBECTL, "kustomize", str(overlay)], capture_output=True, text=True, check=True, timeout=60
    )
    return [d for d in yaml.safe_load_all(out.stdout) if d]


def test_namespace_selector_component_grants_exactly_list_on_namespaces_and_it_is_needed(
    tmp_path: Path, sim: tuple[Simulator, Path]
) -> None:
    docs = render_with(tmp_path, "components/namespace-selector")
    role = next(d for d in rbac_docs(docs) if d["kind"] == "ClusterRole")
    assert atoms_of(role["rules"]) == EXPECTED_ATOMS | {("", "namespaces", "list")}
    cronjob_env = next(d for d in docs if d["kind"] == "CronJob")["spec"]["jobTemplate"]["spec"]["template"]
    env = {e["name"]: e["value"] for e in cronjob_env["spec"]["containers"][0]["env"]}
    selector = env["KUBE_REHASH_NAMESPACE_SELECTOR"]
    simulator, kubeconfig = sim
    label = dict([selector.split("=")])
    simulator.store.patch_merge("namespaces", None, "few", {"metadata": {"labels": label}})
    settings = Settings.of(kubeconfig=str(kubeconfig), timeout=60.0, namespace_selector=selector)
    for rbac, allowed in (
        (rbac_docs(docs), True),
        (without(rbac_docs(docs), ("", "namespaces", "list")), False),
    ):
        simulator.load_rbac(rbac)
        client = KubeClient(load_credentials(AuthOptions(str(kubeconfig))))
        report = Report(run_pass(settings, client))
        client.close()
        if allowed:
            assert failures([report]) == [] and simulator.log.count(status=403) == 0
            assert {r.namespace for r in report.rows} == {"few"}
        else:
            assert failures([report]) and simulator.log.count(status=403) > 0
            assert [r.namespace for r in report.rows] == ["*"]
