"""OpenReports on the real control plane, with the real CRD's schema: a tenant who may only `get` reports in
their namespace sees their stale and failed workloads, and a steady pass writes no report.

Why: only the real kube-apiserver validates and prunes a Report against the CRD's structural schema,
authorizes a server-side apply, and records in its audit log which requests a pass sent.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import yaml

from tests.cluster.controlplane import ControlPlane
from tests.real.conftest import PREFIX, Kube, configmap, pod_spec, wait_until, workload

CRD = Path(__file__).resolve().parents[1] / "data" / "openreports" / "reports.yaml"
REPORTS = "/apis/openreports.io/v1alpha1/namespaces/{ns}/reports"


def install_reports_crd(cp: ControlPlane) -> None:
    """The OpenReports Report CRD, established (idempotent: the control plane is shared)."""
    crd = yaml.safe_load(CRD.read_text())
    status, _ = cp.request("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd)
    assert status in (201, 409), status
    path = f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{crd['metadata']['name']}"

    def established() -> bool:
        conditions = (cp.api("GET", path).get("status") or {}).get("conditions") or []
        return any(c.get("type") == "Established" and c.get("status") == "True" for c in conditions)

    wait_until("the Report CRD to be established", established, 60)


def tenant_kubeconfig(kube: Kube) -> tuple[Path, str]:
    """A ServiceAccount of the namespace that may `get` reports there, and nothing else."""
    role = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "Role",
        "metadata": {"name": "report-reader"},
        "rules": [{"apiGroups": ["openreports.io"], "resources": ["reports"], "verbs": ["get"]}],
    }
    binding = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "RoleBinding",
        "metadata": {"name": "report-reader"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "report-reader"},
        "subjects": [{"kind": "ServiceAccount", "name": "tenant", "namespace": kube.ns}],
    }
    account = {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "tenant"}}
    kube.apply(account, role, binding)
    token = kube.kubectl("create", "token", "tenant", "-n", kube.ns, "--duration=10m").strip()
    return kube.cp.kubeconfig_with_token(token, kube.tmp / "tenant.kubeconfig", user="tenant"), token


def outside_its_window(name: str) -> dict[str, Any]:
    """A Deployment whose only restart window (a minute a day) opens in two hours."""
    opens = datetime.now(UTC) + timedelta(hours=2)
    window = f"* {opens:%H:%M}-{opens + timedelta(minutes=1):%H:%M}"
    manifest = workload("Deployment", name, pod_spec(configmaps=("app",)), replicas=1)
    manifest["metadata"]["annotations"][f"{PREFIX}/restart-window"] = window
    return manifest


def test_a_tenant_with_get_on_reports_sees_its_stale_and_failed_workloads_and_a_steady_pass_writes_none(
    kube: Kube,
) -> None:
    install_reports_crd(kube.cp)
    broken = workload("Deployment", "broken", pod_spec(configmaps=("app",)), replicas=1)
    broken["metadata"]["annotations"][f"{PREFIX}/configmap-selector"] = "tier in (web"
    kube.apply(
        configmap("app", {"mode": "blue"}),
        workload("Deployment", "web", pod_spec(configmaps=("app",)), replicas=1),
        outside_its_window("slow"),
        broken,
    )
    config = kube.tmp / "reports.yaml"
    config.write_text("reports: openreports\n")
    first = kube.rehash("--config", str(config))
    assert first.actions() == {
        "Deployment/web": "adopt",
        "Deployment/slow": "adopt",
        "Deployment/broken": "failed",
    }
    kube.apply(configmap("app", {"mode": "green"}))
    second = kube.rehash("--config", str(config))
    assert second.actions() == {
        "Deployment/web": "rollout",
        "Deployment/slow": "deferred",
        "Deployment/broken": "failed",
    }, second.stdout

    tenant, token = tenant_kubeconfig(kube)
    seen = json.loads(
        kube.kubectl("get", "report", "kube-rehash", "-n", kube.ns, "-o", "json", kubeconfig=tenant)
    )
    told = [(r["resources"][0]["name"], r["category"], r["result"]) for r in seen["results"]]
    assert told == [("broken", "failed", "error"), ("slow", "deferred", "warn")]
    slow = seen["results"][1]
    assert slow["properties"] == {"action": "deferred", "sources": "configmap/app"}
    assert slow["message"].startswith("outside restart window; opens "), slow["message"]
    assert seen["summary"] == {"pass": 1, "fail": 0, "warn": 1, "error": 1, "skip": 0}
    denied, _ = kube.cp.request("GET", f"/api/v1/namespaces/{kube.ns}/configmaps", token=token)
    assert denied == 403  # the tenant sees the report and nothing else

    mark = kube.cp.audit_mark()
    steady = kube.rehash("--config", str(config))
    assert steady.actions()["Deployment/slow"] == "deferred"
    calls = [(e.verb, e.resource) for e in kube.cp.audit(since=mark) if e.resource == "reports"]
    assert calls == [("list", "reports")]
    assert (
        kube.get(REPORTS + "/kube-rehash")["metadata"]["resourceVersion"]
        == seen["metadata"]["resourceVersion"]
    )


def test_the_components_rule_is_enough_to_create_a_report_by_server_side_apply_and_create_is_needed(
    kube: Kube,
) -> None:
    install_reports_crd(kube.cp)
    component = yaml.safe_load(
        (
            Path(__file__).resolve().parents[2] / "cronjob/components/openreports/kustomization.yaml"
        ).read_text()
    )
    rule = yaml.safe_load(component["patches"][1]["patch"])[0]["value"]
    role = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "Role",
        "metadata": {"name": "w"},
        "rules": [rule],
    }
    binding = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "RoleBinding",
        "metadata": {"name": "w"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "w"},
        "subjects": [{"kind": "ServiceAccount", "name": "writer", "namespace": kube.ns}],
    }
    kube.apply({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "writer"}}, role, binding)
    token = kube.kubectl("create", "token", "writer", "-n", kube.ns, "--duration=10m").strip()
    report = {
        "apiVersion": "openreports.io/v1alpha1",
        "kind": "Report",
        "metadata": {"name": "kube-rehash", "namespace": kube.ns},
        "summary": {"pass": 1},
        "results": [],
    }
    path = REPORTS.format(ns=kube.ns) + "/kube-rehash?fieldManager=kube-rehash&force=true"
    status, body = kube.cp.request(
        "PATCH", path, report, token=token, content_type="application/apply-patch+yaml"
    )
    assert status == 201, body["message"]
    listed, _ = kube.cp.request("GET", REPORTS.format(ns=kube.ns), token=token)
    assert listed == 200

    # Without `create`, the apply that would create the report is refused: `patch` alone is not enough.
    kube.apply({**role, "rules": [{**rule, "verbs": ["list", "patch"]}]})
    kube.cp.request("DELETE", REPORTS.format(ns=kube.ns) + "/kube-rehash")

    def refused() -> bool:
        answer = kube.cp.request(
            "PATCH", path, report, token=token, content_type="application/apply-patch+yaml"
        )
        return answer[0] == 403 and "cannot create resource" in answer[1]["message"]

    wait_until("the narrowed role to take effect", refused, 30)
