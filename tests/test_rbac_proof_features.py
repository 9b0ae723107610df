"""The permissions of each optional feature are withheld as the install docs say, and the rest is still
exactly enough: a Secrets Store CSI, run-on-change or Argo Rollouts feature switched off (its component
taken out of the overlay, or without-argo-rollouts added; the chart's secretsStoreCsi, runOnChange and
argoRollouts values render the same roles, tests/test_chart.py) leaves a pass over workloads that do not use
it without a 403, and a workload that still asks for it fails its own row with the 403, no other row.

The rules come from `kubectl kustomize` of a copy of cronjob/ edited as a user would, enforced by the
simulator's authorizer; the pass's settings come from the rendered config file and container env.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from reconcile.config.settings import load_settings
from reconcile.kube.auth import AuthOptions, load_credentials
from reconcile.kube.client import KubeClient
from reconcile.output.report import Report
from reconcile.pipeline.run import run_pass
from reconcile.settings.table import Settings
from rehash_simulator import Simulator
from tests.e2e.conftest import (
    configmap,
    cronjob,
    csi_pod_spec,
    csi_status,
    deployment,
    env_from,
    owned_pod,
)
from tests.test_chart import kustomize
from tests.test_rbac_proof import EXPECTED_ATOMS, SA_TOKEN, SA_USER, atoms_of, failures, rbac_docs

Doc = dict[str, Any]

# Each switch: how a user withholds it in Kustomize (overlay components removed, "-name", or added), the
# permissions it takes away, and the workloads that ask for it.
CSI = {("", "pods", "list"), ("secrets-store.csi.x-k8s.io", "secretproviderclasspodstatuses", "list")}
JOBS = {("batch", "jobs", "create")}
ROLLOUTS = {("argoproj.io", "rollouts", v) for v in ("get", "list", "patch")}
SWITCHES: dict[str, tuple[list[str], set[tuple[str, str, str]]]] = {
    "secrets-store-csi": (["-secrets-store-csi"], CSI),
    "run-on-change": (["-run-on-change"], JOBS),
    "argo-rollouts": (["components/without-argo-rollouts"], ROLLOUTS),
    "all": (
        ["-secrets-store-csi", "-run-on-change", "components/without-argo-rollouts"],
        CSI | JOBS | ROLLOUTS,
    ),
}


def rendered(tmp_path: Path, overlay: str, parts: list[str]) -> list[Doc]:
    return kustomize(tmp_path, [overlay, *parts])


def settings_of(docs: list[Doc], kubeconfig: Path, tmp_path: Path) -> Settings:
    """The pass the rendered CronJob runs (its config file and env, no hash key), against `kubeconfig`."""
    cronjob_doc = next(d for d in docs if d["kind"] == "CronJob")
    container = cronjob_doc["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"][0]
    config = yaml.safe_load(next(d for d in docs if d["kind"] == "ConfigMap")["data"]["config.yaml"])
    config["hashKeyFile"] = None
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    env = {e["name"]: e["value"] for e in container.get("env", [])}
    env.update(KUBE_REHASH_KUBECONFIG=str(kubeconfig), KUBE_REHASH_TIMEOUT="60")
    args = container["args"]
    namespaces = [a for i, a in enumerate(args) if i and args[i - 1] == "-n"]
    return load_settings(config_file=str(path), env=env, flags={"namespaces": namespaces or None})


def plain(ns: str) -> list[Doc]:
    """Workloads that use none of the optional features."""
    return [
        configmap("app", {"a": "1"}, ns=ns),
        deployment("web", env_from("configmap", "app"), ns=ns),
        deployment("db", env_from("configmap", "app"), ns=ns, kind="StatefulSet"),
        cronjob("nightly", env_from("configmap", "app"), ns=ns),
    ]


def asking(switch: str, ns: str) -> list[Doc]:
    """Workloads that ask for the withheld feature(s)."""
    csi = [
        deployment("vault", csi_pod_spec(), ns=ns),
        owned_pod("vault-abc12-aaaaa", "vault", ns=ns),
        csi_status("vault-abc12-aaaaa", {"pw": "v1"}, ns=ns),
    ]
    run_on_change = {"kube-rehash.io/watch": "true", "kube-rehash.io/run-on-change": "true"}
    jobs = [cronjob("report", env_from("configmap", "app"), ns=ns, annotations=run_on_change)]
    rollouts = [deployment("canary", env_from("configmap", "app"), ns=ns, kind="Rollout")]
    by_switch = {"secrets-store-csi": csi, "run-on-change": jobs, "argo-rollouts": rollouts}
    return by_switch[switch] if switch != "all" else [*csi, *jobs, *rollouts]


@pytest.fixture
def sim() -> Iterator[Simulator]:
    with Simulator().start() as simulator:
        simulator.add_token(SA_TOKEN, SA_USER)
        simulator.store.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "kube-rehash"}})
        yield simulator


def passes(sim: Simulator, settings: Settings, ns: str) -> list[Report]:
    """Adopt, change the ConfigMap (and the CSI driver's record), then the pass that must roll."""
    client = KubeClient(load_credentials(AuthOptions(settings.connection.kubeconfig)))
    try:
        first = Report(run_pass(settings, client))
        sim.store.patch_merge("configmaps", ns, "app", {"data": {"a": "2"}})
        status = f"vault-abc12-aaaaa-{ns}-vault-db"  # csi_status's name
        if sim.store.exists("secretproviderclasspodstatuses", ns, status):
            objects = {"status": {"objects": [{"id": "secret/pw", "version": "v2"}]}}
            sim.store.patch_merge("secretproviderclasspodstatuses", ns, status, objects)
        second = Report(run_pass(settings, client))
    finally:
        client.close()
    return [first, second]


@pytest.mark.parametrize("overlay", ["cluster", "namespaced"])
@pytest.mark.parametrize("switch", list(SWITCHES))
def test_a_withheld_feature_takes_exactly_its_permissions_away(
    tmp_path: Path, overlay: str, switch: str
) -> None:
    parts, atoms = SWITCHES[switch]
    kind = "ClusterRole" if overlay == "cluster" else "Role"
    roles = [d for d in rbac_docs(rendered(tmp_path, overlay, parts)) if d["kind"] == kind]
    assert roles
    for role in roles:
        assert atoms_of(role["rules"]) == EXPECTED_ATOMS - atoms


@pytest.mark.parametrize("overlay", ["cluster", "namespaced"])
@pytest.mark.parametrize("switch", list(SWITCHES))
def test_without_a_feature_a_pass_over_workloads_not_using_it_meets_no_403(
    sim: Simulator, tmp_path: Path, overlay: str, switch: str
) -> None:
    docs = rendered(tmp_path, overlay, SWITCHES[switch][0])
    sim.load_rbac(rbac_docs(docs))
    sim.store.create_many(plain("team-a"))
    kubeconfig = sim.write_kubeconfig(tmp_path / "kubeconfig", token=SA_TOKEN)
    reports = passes(sim, settings_of(docs, kubeconfig, tmp_path), "team-a")
    assert failures(reports) == [] and sim.log.count(status=403) == 0
    assert {r.name: r.action for r in reports[1].rows} == {
        "web": "rollout",
        "db": "rollout",
        "nightly": "rollout",
    }


@pytest.mark.parametrize("switch", ["secrets-store-csi", "run-on-change"])
def test_a_workload_asking_for_a_withheld_feature_fails_its_own_row_naming_the_403(
    sim: Simulator, tmp_path: Path, switch: str
) -> None:
    docs = rendered(tmp_path, "cluster", SWITCHES[switch][0])
    sim.load_rbac(rbac_docs(docs))
    sim.store.create_many([*plain("team-a"), *asking(switch, "team-a")])
    kubeconfig = sim.write_kubeconfig(tmp_path / "kubeconfig", token=SA_TOKEN)
    reports = passes(sim, settings_of(docs, kubeconfig, tmp_path), "team-a")
    asker, said = {
        "secrets-store-csi": ("vault", "Secrets Store CSI mounts: GET /api/v1/namespaces/team-a/pods: 403"),
        "run-on-change": (
            "report",
            "creating the run-on-change Job failed: POST /apis/batch/v1/namespaces/team-a/jobs: 403",
        ),
    }[switch]
    failed = {r.name: r.reason for report in reports for r in report.rows if r.action == "failed"}
    assert set(failed) == {asker}, failed
    assert said in failed[asker]
    assert {r.name: r.action for r in reports[1].rows if r.name != asker} == {
        "web": "rollout",
        "db": "rollout",
        "nightly": "rollout",
    }


def test_without_argo_rollouts_a_rollout_is_not_listed_and_nothing_is_forbidden(
    sim: Simulator, tmp_path: Path
) -> None:
    docs = rendered(tmp_path, "cluster", SWITCHES["argo-rollouts"][0])
    sim.load_rbac(rbac_docs(docs))
    sim.store.create_many([*plain("team-a"), *asking("argo-rollouts", "team-a")])
    kubeconfig = sim.write_kubeconfig(tmp_path / "kubeconfig", token=SA_TOKEN)
    reports = passes(sim, settings_of(docs, kubeconfig, tmp_path), "team-a")
    assert failures(reports) == [] and sim.log.count(status=403) == 0
    assert "canary" not in {r.name for report in reports for r in report.rows}
    assert not [e for e in sim.log.entries() if "/rollouts" in e.path]
