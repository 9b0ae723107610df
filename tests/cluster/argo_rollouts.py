"""The real Argo Rollouts controller on a test control plane: its CRDs installed and `rollouts-controller`
running under its own service account, for tests/real/test_argo_rollouts.py.

Why: kube-rehash's Rollout support (reconcile/model/kinds.py, model/workload_ref.py) follows Argo's
documentation, and the simulator stores Rollouts but runs no controller. Only the controller
shows which patch really starts new pods and what its status says afterwards. The binary and the CRDs come
from scripts/build-argo-rollouts.sh (pinned in tools/argo-rollouts/go.mod, CRDs copied from the module's
manifests/crds/); this module only installs and runs them. The controller gets an identity of its own (a
service account bound to cluster-admin), so the audit log tells its writes from kube-rehash's (`admin`).
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Iterator
from pathlib import Path

import yaml

from tests.cluster.controlplane import (
    REPO,
    Component,
    ControlPlane,
    ControlPlaneError,
    _get_ok,
    _spawn,
    _stop,
    free_port,
    wait_for,
)

MODULE = "github.com/argoproj/argo-rollouts"
GO_MOD = REPO / "tools" / "argo-rollouts" / "go.mod"
BINARY = "rollouts-controller"
NAMESPACE = "argo-rollouts"
ACCOUNT = "argo-rollouts"
USER = f"system:serviceaccount:{NAMESPACE}:{ACCOUNT}"
CRDS_API = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"


def pinned_version() -> str:
    """The argo-rollouts release tools/argo-rollouts/go.mod pins."""
    match = re.search(rf"^\s*(?:require\s+)?{re.escape(MODULE)}\s+(v\S+)", GO_MOD.read_text(), re.M)
    if not match:
        raise ControlPlaneError(f"{GO_MOD} does not require {MODULE}")
    return match[1]


def build_dir() -> Path:
    """Where `make argo-rollouts` puts the controller and its CRDs ($ARGO_ROLLOUTS_CACHE/<version>)."""
    cache = Path(os.environ.get("ARGO_ROLLOUTS_CACHE", REPO / ".cache" / "argo-rollouts"))
    return cache / pinned_version()


def missing() -> str | None:
    """Why the controller cannot run here (None: it can)."""
    built = build_dir()
    if not os.access(built / BINARY, os.X_OK) or not list((built / "crds").glob("*.yaml")):
        return (
            f"Argo Rollouts controller not built ({built} lacks {BINARY} or crds/): run `make argo-rollouts`"
        )
    return None


def install_crds(cp: ControlPlane, timeout: float = 60.0) -> None:
    """Every CRD of the pinned release (Rollout, AnalysisRun, AnalysisTemplate, ClusterAnalysisTemplate,
    Experiment: the controller watches them all), established; idempotent on a shared control plane."""
    names = []
    for path in sorted((build_dir() / "crds").glob("*.yaml")):
        crd = yaml.safe_load(path.read_text())
        status, body = cp.request("POST", CRDS_API, crd)
        if status not in (201, 409):
            raise ControlPlaneError(f"creating the CRD of {path.name} failed ({status}): {body!r}")
        names.append(crd["metadata"]["name"])

    def established() -> bool:
        for name in names:
            conditions = (cp.api("GET", f"{CRDS_API}/{name}").get("status") or {}).get("conditions") or []
            if not any(c.get("type") == "Established" and c.get("status") == "True" for c in conditions):
                return False
        return True

    wait_for("the Argo Rollouts CRDs to be established", established, timeout, [])


def controller_kubeconfig(cp: ControlPlane, path: Path) -> Path:
    """A kubeconfig for the controller's own service account (cluster-admin), from the TokenRequest API."""
    namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}}
    account = {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": ACCOUNT}}
    binding = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRoleBinding",
        "metadata": {"name": ACCOUNT},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "cluster-admin"},
        "subjects": [{"kind": "ServiceAccount", "name": ACCOUNT, "namespace": NAMESPACE}],
    }
    for collection, body in (
        ("/api/v1/namespaces", namespace),
        (f"/api/v1/namespaces/{NAMESPACE}/serviceaccounts", account),
        ("/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", binding),
    ):
        status, answer = cp.request("POST", collection, body)
        if status not in (201, 409):
            raise ControlPlaneError(f"creating {collection} failed ({status}): {answer!r}")
    request = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {}}
    token = cp.api("POST", f"/api/v1/namespaces/{NAMESPACE}/serviceaccounts/{ACCOUNT}/token", request)
    return cp.kubeconfig_with_token(token["status"]["token"], path, user=ACCOUNT)


@contextlib.contextmanager
def rollouts_controller(cp: ControlPlane, workdir: Path, timeout: float = 60.0) -> Iterator[Component]:
    """The CRDs installed and `rollouts-controller` running against `cp` until the block exits (log:
    workdir/rollouts-controller.log); every port picked at random, no leader election."""
    if reason := missing():
        raise ControlPlaneError(reason)
    install_crds(cp, timeout)
    kubeconfig = controller_kubeconfig(cp, workdir / "rollouts-controller.kubeconfig")
    healthz = free_port()
    argv = [
        str(build_dir() / BINARY),
        f"--kubeconfig={kubeconfig}",
        "--leader-elect=false",
        f"--healthzPort={healthz}",
        f"--metricsPort={free_port()}",
        "--loglevel=info",
    ]
    env = {**os.environ, "POD_NAMESPACE": NAMESPACE}  # where it looks for its notification settings
    component = _spawn(BINARY, argv, workdir, [], env)
    try:
        url = f"http://127.0.0.1:{healthz}/healthz"
        wait_for("the Argo Rollouts controller to serve /healthz", lambda: _get_ok(url), timeout, [component])
        yield component
    finally:
        _stop(component.proc)
