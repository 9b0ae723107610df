"""The CronJob's pod for real: the built image, run as the shipped manifests say, against the real API server.

Why: tests/real/test_rbac.py runs the CLI from the venv with a kubeconfig. Here the pieces users install
meet as they do in a cluster: the image from the Dockerfile (make image), the rendered CronJob's pod spec
(args, env, the config mount, read-only root, UID 65532, the /tmp emptyDir), and the in-cluster service
account path of reconcile/kube/auth.py (a TokenRequest token with ca.crt and namespace, and
KUBERNETES_SERVICE_HOST/PORT). Each overlay adopts, rolls exactly once after a ConfigMap change, then
reports in-sync, with no 403 for the service account in the audit log. And the pod passes Pod Security
Admission `restricted`: the namespace is labelled to enforce it, the Job controller creates the pod, while
a pod without runAsNonRoot is refused there.
"""

from __future__ import annotations

import functools
import os
import re
import secrets
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.cluster.controlplane import REPO, ControlPlane
from tests.image.pod import PodRun, built_image, run_pod
from tests.real.conftest import (
    DEPLOYMENT_STEADY,
    Kube,
    configmap,
    namespace_gone,
    no_terminating_namespaces,
    pod_spec,
    secret,
    wait_until,
    workload,
)
from tests.real.test_rbac import SA_USER, TEAMS  # TEAMS: the namespaces cronjob/namespaced grants

RESTRICTED = {"pod-security.kubernetes.io/enforce": "restricted"}
# The overlays users apply: name -> (resources, components), relative to cronjob/.
OVERLAYS = {
    "cluster": (["cluster"], []),
    "namespaced+secrets-get-only": (["namespaced"], ["components/secrets-get-only"]),
}


@pytest.fixture(scope="module")
def image() -> str:
    """The built image (make image); its tests are marked `image`."""
    return built_image()


@dataclass
class Installed:
    """One overlay applied to the cluster, with the kube-rehash namespace enforcing PSA `restricted`."""

    overlay: str
    kube: Kube
    kustomization: Path

    @property
    def cp(self) -> ControlPlane:
        return self.kube.cp

    def pod(self) -> dict[str, Any]:
        """The pod spec of the CronJob as the API server stores it (defaults filled in)."""
        cronjob = self.cp.api("GET", "/apis/batch/v1/namespaces/kube-rehash/cronjobs/kube-rehash")
        pod: dict[str, Any] = cronjob["spec"]["jobTemplate"]["spec"]["template"]["spec"]
        return pod


def _kustomization(tmp: Path, overlay: str) -> Path:
    """A kustomization of the overlay as a user would write it (the component added to the overlay)."""
    resources, components = OVERLAYS[overlay]
    directory = tmp / "overlay"
    directory.mkdir()
    document = {
        "apiVersion": "kustomize.config.k8s.io/v1beta1",
        "kind": "Kustomization",
        # kustomize takes relative paths only
        "resources": [os.path.relpath(REPO / "cronjob" / r, directory) for r in resources],
        "components": [os.path.relpath(REPO / "cronjob" / c, directory) for c in components],
    }
    (directory / "kustomization.yaml").write_text(yaml.safe_dump(document))
    return directory


@pytest.fixture(params=list(OVERLAYS))
def installed(request: pytest.FixtureRequest, kube: Kube, tmp_path: Path) -> Iterator[Installed]:
    cp = kube.cp
    # A cluster-wide pass sees every namespace: let the other tests' namespaces finish terminating first.
    wait_until("other tests' namespaces to be deleted", lambda: no_terminating_namespaces(cp), 180)
    for ns, labels in (("kube-rehash", RESTRICTED), *((team, {}) for team in TEAMS)):
        namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns, "labels": labels}}
        cp.api("POST", "/api/v1/namespaces", namespace)
    kustomization = _kustomization(tmp_path, request.param)
    kube.kubectl("apply", "-k", str(kustomization))
    # Pods are started on demand here; the schedule must not start any meanwhile.
    kube.kubectl("patch", "cronjob/kube-rehash", "-n", "kube-rehash", "-p", '{"spec":{"suspend":true}}')
    # The keyed hash's key, as the README's install creates it.
    Kube(cp, "kube-rehash", tmp_path).apply(secret("kube-rehash-hash-key", {"key": secrets.token_hex(32)}))
    try:
        yield Installed(request.param, kube, kustomization)
    finally:
        kube.kubectl("delete", "-k", str(kustomization), "--ignore-not-found", "--wait=false")
        for ns in ("kube-rehash", *TEAMS):
            cp.request("DELETE", f"/api/v1/namespaces/{ns}")
        for ns in ("kube-rehash", *TEAMS):
            wait_until(f"namespace {ns} to be deleted", functools.partial(namespace_gone, cp, ns), 180)


# -- the text report the CronJob's args ask for ------------------------------------------------------------

Report = tuple[dict[tuple[str, str, str], str], dict[str, int]]


def _report(run: PodRun) -> Report:
    """The text report on stdout: {(kind, namespace, name): action} of the rows, and the summary counts."""
    lines = run.stdout.strip().splitlines()
    assert lines, f"no report (exit {run.code}): {run.stderr}"
    summary = re.fullmatch(r"(\d+) workloads?: (.*) in [\d.]+s", lines[-1])
    assert summary, f"no summary line: {run.stdout}"
    counts = {"workloads": int(summary[1])}
    counts.update({action: int(n) for n, action in re.findall(r"(\d+) ([a-z-]+)", summary[2])})
    rows = {}
    if len(lines) > 1:
        assert lines[0].split()[:4] == ["ACTION", "KIND", "NAMESPACE", "NAME"], run.stdout
        for line in lines[1:-1]:
            action, kind, namespace, name = line.split()[:4]
            rows[(kind, namespace, name)] = action
    return rows, counts


def _pass(installed: Installed, image: str, tmp: Path) -> Report:
    run = run_pod(installed.cp, image, installed.pod(), namespace="kube-rehash", workdir=tmp, timeout=300)
    assert run.code == 0, f"exit {run.code}\n{run.stdout}\n{run.stderr}"
    # Logs are JSON lines (--log-format json) and never carry the token (a JWT starts with eyJ).
    assert "eyJ" not in run.stdout + run.stderr
    return _report(run)


def adopt_roll_once_then_in_sync(installed: Installed, image: str, tmp_path: Path) -> None:
    """The CronJob's pod, run three times from the image as the installed ServiceAccount: it adopts a workload
    in each team namespace, rolls each once after a ConfigMap change (exactly one new ReplicaSet), then finds
    them in sync, with no 403 in the audit log (and only `get` on Secrets where the install says so)."""
    cp = installed.cp
    teams = [Kube(cp, ns, tmp_path) for ns in TEAMS]
    for team in teams:
        team.apply(
            configmap("app-config", {"round": "0"}),
            secret("app-secret", {"token": "round-0"}),
            workload("Deployment", "app", pod_spec(("app-config",), ("app-secret",)), replicas=1),
        )
    for team in teams:
        team.wait_settled("Deployment", "app")
    mark = cp.audit_mark()

    rows, counts = _pass(installed, image, tmp_path)
    assert {rows.get(("Deployment", ns, "app")) for ns in TEAMS} == {"adopt"}, rows
    assert counts.get("failed", 0) == 0, counts

    before = {team.ns: {rs["metadata"]["uid"] for rs in team.replicasets("app")} for team in teams}
    for team in teams:
        team.apply(configmap("app-config", {"round": "1"}))
    rows, counts = _pass(installed, image, tmp_path)
    assert {rows.get(("Deployment", ns, "app")) for ns in TEAMS} == {"rollout"}, rows
    for team in teams:
        team.wait_settled("Deployment", "app")
        team.wait_observed("Deployment", "app")
        new = [rs for rs in team.replicasets("app") if rs["metadata"]["uid"] not in before[team.ns]]
        assert len(new) == 1, f"{team.ns}: {len(new)} new ReplicaSets"

    rows, counts = _pass(installed, image, tmp_path)
    assert {rows.get(("Deployment", ns, "app")) for ns in TEAMS} == {"in-sync"}, rows
    assert set(counts) - {"workloads"} <= DEPLOYMENT_STEADY, counts
    assert counts["in-sync"] >= len(TEAMS), counts

    requests = cp.audit(since=mark, user=SA_USER)
    assert requests, "the pod's requests are the service account's"
    assert [f"{e.verb} {e.resource}" for e in requests if e.code == 403] == []
    secret_reads = {e.verb for e in requests if e.resource == "secrets"}
    if "secrets-get-only" in installed.overlay:  # KUBE_REHASH_FETCH=get reached the pod
        assert secret_reads == {"get"}, secret_reads


@pytest.mark.image
def test_the_cronjob_pod_adopts_rolls_once_then_is_in_sync_with_its_in_cluster_credentials(
    installed: Installed, image: str, tmp_path: Path
) -> None:
    adopt_roll_once_then_in_sync(installed, image, tmp_path)


# -- Pod Security Admission ---------------------------------------------------------------------------------


def _violating_pod(name: str) -> dict[str, Any]:
    """The CronJob's container as a bare pod without any securityContext: no runAsNonRoot, no seccomp."""
    container = {"name": "kube-rehash", "image": "ghcr.io/kube-rehash/kube-rehash:0.1.0", "args": ["version"]}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {"containers": [container]},
    }


# The pod spec is the same in every overlay but for args and env: proven once, with cronjob/cluster.
@pytest.mark.parametrize("installed", ["cluster"], indirect=True)
def test_the_job_controller_creates_the_cronjob_pod_where_pod_security_restricted_is_enforced(
    installed: Installed,
) -> None:
    kube, cp = installed.kube, installed.cp
    labels = cp.api("GET", "/api/v1/namespaces/kube-rehash")["metadata"]["labels"]
    assert labels["pod-security.kubernetes.io/enforce"] == "restricted"

    kube.kubectl("create", "job", "--from=cronjob/kube-rehash", "kube-rehash-now", "-n", "kube-rehash")

    def pods() -> list[dict[str, Any]]:
        path = "/api/v1/namespaces/kube-rehash/pods?labelSelector=job-name%3Dkube-rehash-now"
        return list(cp.api("GET", path)["items"])

    wait_until("the Job controller to create the pod", lambda: len(pods()) == 1, 60)
    assert pods()[0]["spec"]["securityContext"]["runAsNonRoot"] is True
    events = cp.api("GET", "/api/v1/namespaces/kube-rehash/events")["items"]
    assert [e["message"] for e in events if e["reason"] == "FailedCreate"] == []

    # The check has teeth: the same container without a securityContext is refused there ...
    status, answer = cp.request("POST", "/api/v1/namespaces/kube-rehash/pods", _violating_pod("bare"))
    assert status == 403, answer
    assert 'violates PodSecurity "restricted:latest"' in answer["message"]
    assert "runAsNonRoot" in answer["message"]
    # ... and admitted (dry run) in a namespace without the label.
    path = f"/api/v1/namespaces/{kube.ns}/pods?dryRun=All"
    status, answer = cp.request("POST", path, _violating_pod("bare"))
    assert status == 201, answer
