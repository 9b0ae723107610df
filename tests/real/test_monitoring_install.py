"""The packaged chart of `make dist` installed by helm into the real control plane, monitoring objects on.

Why: tests/test_monitoring.py proves the rules and the dashboard with promtool and `helm template`; here the
release's chart tarball (dist/kube-rehash-<version>.tgz) goes through `helm install` into kube-apiserver 1.37
with the Prometheus Operator's own PrometheusRule CRD (the module
github.com/prometheus-operator/prometheus-operator, pinned in tools/prometheus-operator/go.mod, fetched by
`go mod download`), whose structural schema prunes any field it does not know: the stored rule must equal
deploy/monitoring/kube-rehash.rules.yaml, the stored dashboard deploy/monitoring/kube-rehash.dashboard.json.
"""

from __future__ import annotations

import functools
import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from reconcile import __version__
from tests.cluster.controlplane import ControlPlane
from tests.prerequisites import skip_or_fail
from tests.real.conftest import namespace_gone, no_terminating_namespaces, wait_until
from tests.test_chart import IMAGE, run_helm

pytestmark = pytest.mark.helm

ROOT = Path(__file__).resolve().parent.parent.parent
MONITORING = ROOT / "deploy" / "monitoring"
OPERATOR = "github.com/prometheus-operator/prometheus-operator"
CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
RULE = "/apis/monitoring.coreos.com/v1/namespaces/kube-rehash/prometheusrules/kube-rehash"
DASHBOARD = "/api/v1/namespaces/kube-rehash/configmaps/kube-rehash-dashboard"


def operator_crd() -> dict[str, Any]:
    """The PrometheusRule CRD of the pinned Prometheus Operator module (in Go's module cache once fetched)."""
    if shutil.which("go") is None:
        skip_or_fail("the PrometheusRule CRD comes from a Go module: the 'go' tool is required")
    argv = ["go", "mod", "download", "-json", OPERATOR]
    done = subprocess.run(
        argv, cwd=ROOT / "tools" / "prometheus-operator", capture_output=True, text=True, check=False
    )
    info = json.loads(done.stdout or "{}")
    assert done.returncode == 0 and "Error" not in info, done.stdout + done.stderr
    path = (
        Path(info["Dir"])
        / "example"
        / "prometheus-operator-crd"
        / "monitoring.coreos.com_prometheusrules.yaml"
    )
    crd: dict[str, Any] = yaml.safe_load(path.read_text(encoding="utf-8"))
    return crd


def established(cp: ControlPlane, name: str) -> bool:
    conditions = (cp.api("GET", f"{CRDS}/{name}").get("status") or {}).get("conditions") or []
    return any(c.get("type") == "Established" and c.get("status") == "True" for c in conditions)


def test_helm_installs_the_packaged_chart_with_the_alert_rules_and_the_dashboard(
    control: ControlPlane, helm: Path, dist: Path
) -> None:
    crd = operator_crd()
    name = crd["metadata"]["name"]
    control.api("POST", CRDS, crd)
    kubeconfig = ["--kubeconfig", str(control.kubeconfig)]
    try:
        wait_until("the PrometheusRule CRD to be established", functools.partial(established, control, name))
        wait_until("other tests' namespaces to be deleted", lambda: no_terminating_namespaces(control), 180)
        chart = dist / f"kube-rehash-{__version__}.tgz"
        values = [
            *IMAGE,
            *(
                "--set",
                "monitoring.prometheusRule.enabled=true",
                "--set",
                "monitoring.dashboard.enabled=true",
            ),
            *("--set", "monitoring.prometheusRule.labels.release=prometheus"),
        ]
        run_helm(
            helm,
            "install",
            "kube-rehash",
            str(chart),
            "-n",
            "kube-rehash",
            "--create-namespace",
            *values,
            *kubeconfig,
        )
        try:
            rule = control.api("GET", RULE)
            assert rule["metadata"]["labels"]["release"] == "prometheus"
            rules = yaml.safe_load((MONITORING / "kube-rehash.rules.yaml").read_text(encoding="utf-8"))
            assert rule["spec"] == rules  # nothing pruned: every field is one the operator's schema knows
            board = control.api("GET", DASHBOARD)
            assert board["metadata"]["labels"]["grafana_dashboard"] == "1"
            dashboard = json.loads((MONITORING / "kube-rehash.dashboard.json").read_text(encoding="utf-8"))
            assert json.loads(board["data"]["kube-rehash.json"]) == dashboard
        finally:
            run_helm(
                helm,
                "uninstall",
                "kube-rehash",
                "-n",
                "kube-rehash",
                "--wait=false",
                *kubeconfig,
                check=False,
            )
            control.request("DELETE", "/api/v1/namespaces/kube-rehash")
            wait_until(
                "namespace kube-rehash to be deleted",
                functools.partial(namespace_gone, control, "kube-rehash"),
                180,
            )
    finally:
        control.request("DELETE", f"{CRDS}/{name}")
