"""RBAC for real: the shipped overlays (cronjob/cluster, cronjob/namespaced) grant exactly what a pass needs,
and so does the cluster overlay with every optional feature's permissions withheld.

Why: tests/test_rbac_proof.py reasons about the rules; here the real kube-apiserver enforces them. Each
overlay is rendered with the real `kubectl kustomize` and applied, full passes (adoption, rollouts, Events,
and with the features on a run-on-change Job, a Secrets Store CSI workload and an Argo Rollout) run with the
service account's own token and the CronJob's own arguments and environment, and the audit log shows no
403; then every rule of the role, removed alone, makes a pass fail visibly (exit 1 and a failed row), so no
rule is dead weight.
"""

from __future__ import annotations

import copy
import functools
import json
import os
import secrets
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.cluster import argo_rollouts
from tests.cluster.controlplane import ControlPlane
from tests.e2e.conftest import csi_pod_spec
from tests.prerequisites import skip_or_fail
from tests.real.conftest import (
    CLI,
    PREFIX,
    Kube,
    Result,
    configmap,
    cronjob,
    install_csi_crd,
    namespace_gone,
    no_terminating_namespaces,
    pod_spec,
    rollout,
    secret,
    wait_until,
    workload,
)
from tests.test_chart import MINIMAL_PARTS, kustomize

SA_USER = "system:serviceaccount:kube-rehash:kube-rehash"
SA_GROUPS = ["system:serviceaccounts", "system:serviceaccounts:kube-rehash", "system:authenticated"]
TEAMS = ("team-a", "team-b")
# Workloads whose template each round changes just before their sources: the pass then asks when their
# current template started (skipIfPodsNewer: ReplicaSets listed, a ControllerRevision read by name,
# ControllerRevisions listed), so every rule for those reads is used, and they still roll.
BUMPED = (("Deployment", "app"), ("StatefulSet", "db"), ("DaemonSet", "agent"))
# The overlays applied: (overlay, then components removed "-name" or added, as tests/test_chart.py's
# kustomize takes them), and whether the optional features' permissions are granted.
INSTALLS: dict[str, tuple[list[str], bool]] = {
    "cluster": (["cluster"], True),
    "namespaced": (["namespaced"], True),
    "cluster-minimal": (["cluster", *MINIMAL_PARTS], False),
}


@dataclass
class Install:
    """One overlay applied: its role, the pass its CronJob runs, the service account's kubeconfig."""

    overlay: str
    features: bool  # the permissions of Secrets Store CSI, run-on-change and Argo Rollouts are granted
    kube: Kube
    role_path: str  # API path of the (Cluster)Role whose rules are under test
    role: dict[str, Any]
    args: list[str]  # the CronJob container's args, with --config pointing at a local copy of its config
    env: dict[str, str]  # the CronJob container's environment
    kubeconfig: Path
    round: int = 0

    @property
    def cp(self) -> ControlPlane:
        return self.kube.cp

    @property
    def watched(self) -> int:
        """The workloads of each team a pass adopts and rolls: app, nightly, db, agent (and app-rollout)."""
        return 5 if self.features else 4

    def seed(self) -> None:
        """In each team namespace: sources and workloads using them, covering every rule of the role. With
        the features: a Secrets Store CSI workload (its pods and the driver's statuses are listed; without a
        status it is skipped, so it adds no adoption or rollout), a run-on-change CronJob, and an Argo
        Rollout running a Deployment's template through `spec.workloadRef` (the Rollout CRD only, no
        controller needed for kube-rehash's own requests). Without them, none of these."""
        extra: list[dict[str, Any]] = []
        nightly: dict[str, str] = {}
        if self.features:
            install_csi_crd(self.cp)
            if reason := argo_rollouts.missing():
                skip_or_fail(reason)
            argo_rollouts.install_crds(
                self.cp
            )  # a Rollout is patched (its spec.restartAt), its Deployment read
            template_source = workload(
                "Deployment", "app-template", pod_spec(configmaps=("app-config",)), replicas=0
            )
            del template_source["metadata"]["annotations"]  # only the Rollout running its template is watched
            extra = [
                workload("Deployment", "vault", csi_pod_spec(), replicas=1),
                template_source,
                rollout("app-rollout", workload_ref="app-template"),
            ]
            nightly = {f"{PREFIX}/run-on-change": "true"}
        for ns in TEAMS:
            team = Kube(self.cp, ns, self.kube.tmp)
            team.apply(
                configmap("app-config", {"round": "0"}),
                secret("app-secret", {"token": "round-0"}),
                workload(
                    "Deployment",
                    "app",
                    pod_spec(configmaps=("app-config",), secrets_=("app-secret",)),
                    replicas=1,
                ),
                cronjob("nightly", pod_spec(configmaps=("app-config",)), nightly or None),
                workload("StatefulSet", "db", pod_spec(configmaps=("app-config",)), replicas=1),
                workload("DaemonSet", "agent", pod_spec(configmaps=("app-config",))),
                *extra,
            )

    def change_sources(self) -> None:
        """New templates for the BUMPED workloads (observed by their controllers), then new content in every
        source: the next pass rolls, records Events and creates run-on-change Jobs."""
        self.round += 1
        for ns in TEAMS:
            team = Kube(self.cp, ns, self.kube.tmp)
            for kind, name in BUMPED:
                bump = {"metadata": {"annotations": {"round": str(self.round)}}}
                team.patch(kind, name, {"spec": {"template": bump}})
        for ns in TEAMS:
            team = Kube(self.cp, ns, self.kube.tmp)
            for kind, name in BUMPED:
                wait_until(f"{kind}/{name} observed", functools.partial(observed, team, kind, name), 30)
        for ns in TEAMS:
            team = Kube(self.cp, ns, self.kube.tmp)
            team.apply(configmap("app-config", {"round": str(self.round)}))
            team.apply(secret("app-secret", {"token": f"round-{self.round}"}))

    def rehash(self, *extra: str) -> Result:
        """The CronJob's own pass (its args and environment), with the service account's token."""
        argv = [CLI, "run", "-o", "json", "--kubeconfig", str(self.kubeconfig), *self.args, *extra]
        env = {k: v for k, v in os.environ.items() if not k.startswith(("KUBE_REHASH_", "KUBECONFIG"))}
        done = subprocess.run(
            argv, capture_output=True, text=True, timeout=180, env={**env, **self.env}, check=False
        )
        result = Result(done.returncode, done.stdout, done.stderr, key=("kind", "name"))
        assert result.stdout.startswith("{"), f"no report (exit {result.code}): {result.stderr}"
        return result

    def set_rules(self, rules: list[dict[str, Any]]) -> None:
        role = copy.deepcopy(self.role)
        role["rules"] = rules
        for key in ("resourceVersion", "managedFields", "uid", "creationTimestamp"):
            role["metadata"].pop(key, None)
        self.cp.api("PUT", self.role_path, role)

    def allowed(self, rule: dict[str, Any]) -> bool:
        """Whether the apiserver's authorizer grants the service account the rule's first permission."""
        attributes = {
            "verb": rule["verbs"][0],
            "group": rule["apiGroups"][0],
            "resource": rule["resources"][0],
            "namespace": "" if rule["resources"][0] == "namespaces" else TEAMS[0],
        }
        review = {
            "apiVersion": "authorization.k8s.io/v1",
            "kind": "SubjectAccessReview",
            "spec": {"user": SA_USER, "groups": SA_GROUPS, "resourceAttributes": attributes},
        }
        answer = self.cp.api("POST", "/apis/authorization.k8s.io/v1/subjectaccessreviews", review)
        return bool(answer["status"].get("allowed"))

    def denied(self, rule: dict[str, Any]) -> bool:
        return not self.allowed(rule)


def observed(team: Kube, kind: str, name: str) -> bool:
    obj = team.obj(kind, name)
    return bool(obj.get("status", {}).get("observedGeneration", 0) >= obj["metadata"]["generation"])


def _apply_overlay(kube: Kube, install: str, tmp: Path) -> Install:
    cp = kube.cp
    for ns in ("kube-rehash", *TEAMS):
        cp.api(
            "POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}
        )
    parts, features = INSTALLS[install]
    kube.kubectl("apply", "-f", str(rendered(tmp, parts)))
    # Our passes run here, on demand; the CronJob's own schedule must not start pods meanwhile.
    kube.kubectl("patch", "cronjob/kube-rehash", "-n", "kube-rehash", "-p", '{"spec":{"suspend":true}}')

    job = cp.api("GET", "/apis/batch/v1/namespaces/kube-rehash/cronjobs/kube-rehash")
    pod = job["spec"]["jobTemplate"]["spec"]["template"]["spec"]
    container = pod["containers"][0]
    config_map = next(v["configMap"]["name"] for v in pod["volumes"] if v["name"] == "config")
    config = yaml.safe_load(
        cp.api("GET", f"/api/v1/namespaces/kube-rehash/configmaps/{config_map}")["data"]["config.yaml"]
    )
    env = {e["name"]: e["value"] for e in container.get("env", [])}
    key = tmp / "hash-key"
    key.write_text(secrets.token_hex(32))
    config["hashKeyFile"] = str(key)  # the Secret the pod would mount
    local_config = tmp / "config.yaml"
    local_config.write_text(yaml.safe_dump(config))
    args = list(container["args"])
    assert args[0] == "run"
    args = args[1:]
    args[args.index("--config") + 1] = str(local_config)

    token = kube.kubectl("create", "token", "kube-rehash", "-n", "kube-rehash", "--duration=1h").strip()
    kubeconfig = cp.kubeconfig_with_token(token, tmp / "sa.kubeconfig", user="kube-rehash")
    if parts[0] == "cluster":
        role_path = "/apis/rbac.authorization.k8s.io/v1/clusterroles/kube-rehash"
    else:
        role_path = f"/apis/rbac.authorization.k8s.io/v1/namespaces/{TEAMS[0]}/roles/kube-rehash"
    role = cp.api("GET", role_path)
    return Install(parts[0], features, kube, role_path, role, args, env, kubeconfig)


def rendered(tmp: Path, parts: list[str]) -> Path:
    """The objects of an overlay (`kubectl kustomize`), as one file to apply and delete."""
    path = tmp / "install.yaml"
    if not path.exists():
        path.write_text(yaml.safe_dump_all(kustomize(tmp, parts)), encoding="utf-8")
    return path


@pytest.fixture(params=list(INSTALLS))
def install(request: pytest.FixtureRequest, kube: Kube, tmp_path: Path) -> Iterator[Install]:
    cp = kube.cp
    # A cluster-wide pass sees every namespace: let the other tests' namespaces finish terminating first.
    wait_until("other tests' namespaces to be deleted", lambda: no_terminating_namespaces(cp), 180)
    installed = _apply_overlay(kube, request.param, tmp_path)
    try:
        yield installed
    finally:
        manifest = rendered(tmp_path, INSTALLS[request.param][0])
        kube.kubectl("delete", "-f", str(manifest), "--ignore-not-found", "--wait=false")
        for ns in ("kube-rehash", *TEAMS):
            cp.request("DELETE", f"/api/v1/namespaces/{ns}")
        for ns in ("kube-rehash", *TEAMS):
            wait_until(f"namespace {ns} to be deleted", functools.partial(namespace_gone, cp, ns), 180)


def _pass_args(rule: dict[str, Any]) -> tuple[str, ...]:
    """Only a sharded pass lists namespaces (shards spread them): run one for that rule."""
    return ("--shard", "0/2") if "namespaces" in rule["resources"] else ()


def test_overlay_grants_every_permission_a_pass_uses_and_no_rule_is_superfluous(install: Install) -> None:
    cp = install.cp
    install.seed()
    mark = cp.audit_mark()

    adopted = install.rehash()
    assert adopted.code == 0, adopted.stdout + adopted.stderr
    assert adopted.report["summary"]["adopt"] == install.watched * len(TEAMS), adopted.stdout
    install.change_sources()
    rolled = install.rehash()
    assert rolled.code == 0, rolled.stdout + rolled.stderr
    assert rolled.report["summary"]["rollout"] == install.watched * len(TEAMS), rolled.stdout
    assert rolled.failed() == []
    if install.overlay == "cluster":
        for shard in ("0/2", "1/2"):
            sharded = install.rehash("--shard", shard)
            assert sharded.code == 0, sharded.stdout + sharded.stderr

    requests = cp.audit(since=mark, user=SA_USER)
    assert [e for e in requests if e.code == 403] == []
    writes = {(e.verb, e.resource) for e in requests if e.is_write}
    features = {("patch", "rollouts"), ("create", "jobs")}
    assert {("patch", "deployments"), ("patch", "cronjobs"), ("create", "events")} <= writes
    assert features <= writes if install.features else not features & writes
    reads = {(e.verb, e.resource) for e in requests}
    assert {("list", "replicasets"), ("get", "controllerrevisions"), ("list", "controllerrevisions")} <= reads
    if install.features:
        assert ("get", "deployments") in reads  # the template a workloadRef Rollout runs
        assert {("list", "pods"), ("list", "secretproviderclasspodstatuses")} <= reads
    else:
        assert not [
            e for e in requests if e.resource in ("rollouts", "pods", "secretproviderclasspodstatuses")
        ]

    # Every rule, removed alone, makes a pass fail visibly.
    rules: list[dict[str, Any]] = install.role["rules"]
    for index, rule in enumerate(rules):
        install.set_rules(rules[:index] + rules[index + 1 :])
        wait_until("the rule's removal to take effect", functools.partial(install.denied, rule), 30)
        install.change_sources()
        mark = cp.audit_mark()
        broken = install.rehash(*_pass_args(rule))
        what = f"without rule {index} {json.dumps(rule)}"
        assert broken.code == 1, f"{what}: exit {broken.code}\n{broken.stdout}"
        assert broken.failed(), f"{what}: no failed row\n{broken.stdout}"
        assert any(e.code == 403 for e in cp.audit(since=mark, user=SA_USER)), what
        install.set_rules(rules)
        wait_until("the rule to be granted again", functools.partial(install.allowed, rule), 30)

    # With every rule back, the passes converge again.
    mark = cp.audit_mark()
    healed = install.rehash()
    assert healed.code == 0, healed.stdout + healed.stderr
    assert healed.failed() == []
    assert [e for e in cp.audit(since=mark, user=SA_USER) if e.code == 403] == []
