"""Harness of tests/real: helpers to drive the session's real control plane (the `control` fixture of
tests/conftest.py, shared with tests/e2e) with kubectl and kube-rehash.

Why: these tests prove behaviour the simulator cannot (real controllers turning our patch into ReplicaSets,
ControllerRevisions and Jobs; real RBAC and audit). The binaries come from `make control-plane`; without them
the tests skip locally with a clear message but fail under CI=true or KUBE_REHASH_REAL=1, so CI never silently
skips.
"""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.cluster.controlplane import ControlPlane
from tests.e2e.backends import Result

__all__ = ["DEPLOYMENT_STEADY", "Kube", "Result", "install_csi_crd", "kube", "rollout", "wait_until"]

BIN = Path(sys.executable).parent
CLI = str(BIN / "kube-rehash")
KUBECTL = str(BIN / "kubectl")
PREFIX = "kube-rehash.io"
HASH = f"{PREFIX}/config-hash"

# What a pass with nothing to do reports for a Deployment: `in-sync`, with nothing written. (kube-apiserver
# bumps a Deployment's metadata.generation on any annotation change; the bookkeeping predicts it, see
# Kind.annotations_bump_generation, and test_rollouts.py::test_steady_pass_writes_nothing_to_a_deployment.)
DEPLOYMENT_STEADY = frozenset({"in-sync"})


def wait_until(what: str, probe: Callable[[], bool], timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not probe():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(0.25)


CSI_CRD = (
    Path(__file__).resolve().parents[1] / "data" / "secrets-store-csi" / "secretproviderclasspodstatuses.yaml"
)


def install_csi_crd(cp: ControlPlane) -> None:
    """The Secrets Store CSI driver's SecretProviderClassPodStatus CRD, established (idempotent: another
    test may have installed it on the shared control plane)."""
    crd = yaml.safe_load(CSI_CRD.read_text())
    status, _ = cp.request("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd)
    assert status in (201, 409), status
    path = f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{crd['metadata']['name']}"

    def established() -> bool:
        conditions = (cp.api("GET", path).get("status") or {}).get("conditions") or []
        return any(c.get("type") == "Established" and c.get("status") == "True" for c in conditions)

    wait_until("the SecretProviderClassPodStatus CRD to be established", established, 60)


def namespace_gone(cp: ControlPlane, name: str) -> bool:
    return cp.request("GET", f"/api/v1/namespaces/{name}")[0] == 404


def no_terminating_namespaces(cp: ControlPlane) -> bool:
    items = cp.api("GET", "/api/v1/namespaces")["items"]
    return all(ns.get("status", {}).get("phase") != "Terminating" for ns in items)


# -- the cluster, from a test's point of view ----------------------------------------------------------------


class Kube:
    """kubectl, the kube-rehash CLI and API reads on the session's control plane, for one namespace."""

    def __init__(self, cp: ControlPlane, namespace: str, tmp: Path) -> None:
        self.cp = cp
        self.ns = namespace
        self.tmp = tmp

    # kubectl and the API
    # ------------------------------------------------------------------------------------------

    def kubectl(self, *args: str, stdin: str | None = None, kubeconfig: Path | None = None) -> str:
        argv = [KUBECTL, "--kubeconfig", str(kubeconfig or self.cp.kubeconfig), *args]
        done = subprocess.run(argv, input=stdin, capture_output=True, text=True, timeout=120, check=False)
        assert done.returncode == 0, f"kubectl {' '.join(args)} failed: {done.stderr}"
        return done.stdout

    def apply(self, *objs: dict[str, Any]) -> None:
        """`kubectl apply` (client-side, as a CI pipeline would), into this namespace."""
        items = [{**o, "metadata": {"namespace": self.ns, **o["metadata"]}} for o in objs]
        self.kubectl(
            "apply", "-f", "-", stdin=json.dumps({"apiVersion": "v1", "kind": "List", "items": items})
        )

    def get(self, path: str) -> dict[str, Any]:
        """GET an API path; `{ns}` is replaced by this namespace."""
        answer: dict[str, Any] = self.cp.api("GET", path.format(ns=self.ns))
        return answer

    def obj(self, kind: str, name: str) -> dict[str, Any]:
        return self.get(f"{collection(kind, '{ns}')}/{name}")

    def patch(self, kind: str, name: str, body: dict[str, Any]) -> None:
        path = f"{collection(kind, self.ns)}/{name}"
        self.cp.api("PATCH", path, body, content_type="application/merge-patch+json")

    def owned(self, collection_path: str, owner: dict[str, Any]) -> list[dict[str, Any]]:
        """Objects of a collection (e.g. replicasets) whose ownerReferences name `owner`."""
        uid = owner["metadata"]["uid"]
        items = self.get(collection_path)["items"]
        return [i for i in items if any(r["uid"] == uid for r in i["metadata"].get("ownerReferences", []))]

    def replicasets(self, name: str) -> list[dict[str, Any]]:
        return self.owned("/apis/apps/v1/namespaces/{ns}/replicasets", self.obj("Deployment", name))

    def revisions(self, kind: str, name: str) -> list[dict[str, Any]]:
        return self.owned("/apis/apps/v1/namespaces/{ns}/controllerrevisions", self.obj(kind, name))

    def jobs(self) -> list[dict[str, Any]]:
        return list(self.get("/apis/batch/v1/namespaces/{ns}/jobs")["items"])

    # kube-rehash
    # --------------------------------------------------------------------------------------------------

    def rehash(self, *args: str, kubeconfig: Path | None = None, scoped: bool = True) -> Result:
        """`kube-rehash run -o json` (this namespace unless `scoped=False`); a report must come back."""
        argv = [CLI, "run", "-o", "json", "--kubeconfig", str(kubeconfig or self.cp.kubeconfig), *args]
        if scoped:
            argv += ["-n", self.ns]
        env = {k: v for k, v in os.environ.items() if not k.startswith(("KUBE_REHASH_", "KUBECONFIG"))}
        done = subprocess.run(argv, capture_output=True, text=True, timeout=180, env=env, check=False)
        result = Result(done.returncode, done.stdout, done.stderr, key=("kind", "name"))
        assert result.stdout.startswith("{"), f"no report (exit {result.code}): {result.stderr}"
        return result

    # waiting for controllers
    # ----------------------------------------------------------------------------------

    def settled(self, kind: str, name: str) -> bool:
        """The controller saw the latest spec; every replica runs the current template and is ready."""
        obj = self.obj(kind, name)
        spec, status = obj["spec"], obj.get("status", {})
        if status.get("observedGeneration", 0) < obj["metadata"]["generation"]:
            return False
        if kind == "Deployment":
            want = spec.get("replicas", 1)
            return bool(
                status.get("updatedReplicas") == want
                and status.get("readyReplicas") == want
                and status.get("availableReplicas") == want
                and status.get("replicas") == want
            )
        if kind == "StatefulSet":
            want = spec.get("replicas", 1)
            return bool(
                status.get("updateRevision") == status.get("currentRevision")
                and status.get("updatedReplicas") == want
                and status.get("readyReplicas") == want
            )
        if kind == "DaemonSet":
            want = status.get("desiredNumberScheduled", -1)
            return bool(
                want > 0
                and status.get("updatedNumberScheduled") == want
                and status.get("numberReady") == want
                and status.get("numberAvailable") == want
            )
        raise ValueError(kind)

    def wait_settled(self, kind: str, name: str, timeout: float = 90.0) -> None:
        wait_until(f"{kind}/{name} to finish rolling out", lambda: self.settled(kind, name), timeout)

    def wait_observed(self, kind: str, name: str) -> None:
        """The controller processed the latest spec; then a moment more for anything it might still create."""

        def observed() -> bool:
            obj = self.obj(kind, name)
            return bool(obj.get("status", {}).get("observedGeneration", 0) >= obj["metadata"]["generation"])

        wait_until(f"{kind}/{name} to be observed", observed, 30)
        time.sleep(1.0)


def collection(kind: str, ns: str) -> str:
    group = {
        "ConfigMap": "/api/v1",
        "Secret": "/api/v1",
        "Deployment": "/apis/apps/v1",
        "StatefulSet": "/apis/apps/v1",
        "DaemonSet": "/apis/apps/v1",
        "CronJob": "/apis/batch/v1",
        "Job": "/apis/batch/v1",
    }[kind]
    return f"{group}/namespaces/{ns}/{kind.lower()}s"


@pytest.fixture
def kube(control: ControlPlane, tmp_path: Path) -> Iterator[Kube]:
    """A fresh namespace of the session's control plane, deleted afterwards (the namespace controller)."""
    ns = f"t-{secrets.token_hex(4)}"
    control.api(
        "POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}
    )
    wait_until(
        "the default ServiceAccount of the namespace",
        lambda: control.request("GET", f"/api/v1/namespaces/{ns}/serviceaccounts/default")[0] == 200,
        30,
    )
    yield Kube(control, ns, tmp_path)
    control.request("DELETE", f"/api/v1/namespaces/{ns}")


# -- manifests -----------------------------------------------------------------------------------------------


def configmap(name: str, data: dict[str, str], **meta: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, **meta}, "data": data}


def secret(name: str, data: dict[str, str], **meta: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "type": "Opaque",
        "metadata": {"name": name, **meta},
        "stringData": data,
    }


def pod_spec(
    configmaps: tuple[str, ...] = (), secrets_: tuple[str, ...] = (), **extra: Any
) -> dict[str, Any]:
    """One container reading each ConfigMap and Secret whole (envFrom), the commonest use."""
    env_from = [{"configMapRef": {"name": n}} for n in configmaps] + [
        {"secretRef": {"name": n}} for n in secrets_
    ]
    return {"containers": [{"name": "app", "image": "registry.invalid/app:1", "envFrom": env_from}], **extra}


def workload(
    kind: str, name: str, spec: dict[str, Any], *, replicas: int = 2, **fields: Any
) -> dict[str, Any]:
    """A watched Deployment/StatefulSet/DaemonSet whose pods run `spec`."""
    body: dict[str, Any] = {
        "selector": {"matchLabels": {"app": name}},
        "template": {"metadata": {"labels": {"app": name}}, "spec": spec},
        **fields,
    }
    if kind != "DaemonSet":
        body["replicas"] = replicas
    if kind == "StatefulSet":
        body["serviceName"] = name
    if kind == "Deployment":  # fast, deterministic rolling updates on fake nodes
        body.setdefault(
            "strategy", {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}}
        )
    meta = {"name": name, "annotations": {f"{PREFIX}/watch": "true"}}
    return {"apiVersion": "apps/v1", "kind": kind, "metadata": meta, "spec": body}


def rollout(
    name: str, spec: dict[str, Any] | None = None, *, workload_ref: str | None = None
) -> dict[str, Any]:
    """A watched Rollout of 2 replicas, canary without steps (promoted at once, so it completes on kwok):
    running `spec`, or the template of the Deployment `workload_ref`."""
    app = workload_ref or name
    body: dict[str, Any] = {
        "replicas": 2,
        "selector": {"matchLabels": {"app": app}},
        "strategy": {"canary": {"maxSurge": 1, "maxUnavailable": 0}},
    }
    if workload_ref is None:
        body["template"] = {"metadata": {"labels": {"app": app}}, "spec": spec}
    else:
        body["workloadRef"] = {"apiVersion": "apps/v1", "kind": "Deployment", "name": workload_ref}
    meta = {"name": name, "annotations": {f"{PREFIX}/watch": "true"}}
    return {"apiVersion": "argoproj.io/v1alpha1", "kind": "Rollout", "metadata": meta, "spec": body}


def cronjob(name: str, spec: dict[str, Any], annotations: dict[str, str] | None = None) -> dict[str, Any]:
    return {
        "apiVersion": "batch/v1",
        "kind": "CronJob",
        "metadata": {"name": name, "annotations": {f"{PREFIX}/watch": "true", **(annotations or {})}},
        "spec": {
            "schedule": "0 0 1 1 *",  # never during a test: every Job here is made on purpose
            "jobTemplate": {
                "spec": {"backoffLimit": 0, "template": {"spec": {**spec, "restartPolicy": "Never"}}}
            },
        },
    }


def template_hash(template: dict[str, Any]) -> str | None:
    """The kube-rehash hash annotation of a pod template (None when absent)."""
    value = template.get("metadata", {}).get("annotations", {}).get(HASH)
    return None if value is None else str(value)
