"""Forbidden scopes, an unreachable or untrusted API, SIGTERM and --timeout, through the installed CLI."""

from __future__ import annotations

import base64
import os
import signal
import socket
import subprocess
import threading
import time
from typing import Any

import pytest
import yaml

from rehash_simulator import Simulator
from tests.e2e.conftest import CLI, Cluster, configmap, deployment, env_from
from tests.reliability.helpers import template_hash_changes

LIMITED = "limited-token-for-rbac-tests"
SA_USER = "system:serviceaccount:ops:rehash"


def rbac(*, namespaces: tuple[str, ...] | None, workload_resources: tuple[str, ...]) -> list[dict[str, Any]]:
    """A ClusterRole for the pass, bound cluster-wide (namespaces None) or by RoleBinding per namespace."""
    role = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": {"name": "rehash"},
        "rules": [
            {"apiGroups": ["apps"], "resources": list(workload_resources), "verbs": ["get", "list", "patch"]},
            {"apiGroups": ["batch"], "resources": ["cronjobs"], "verbs": ["get", "list", "patch"]},
            {"apiGroups": ["batch"], "resources": ["jobs"], "verbs": ["create"]},
            {"apiGroups": ["argoproj.io"], "resources": ["rollouts"], "verbs": ["get", "list", "patch"]},
            {"apiGroups": [""], "resources": ["configmaps", "secrets"], "verbs": ["get", "list"]},
            {"apiGroups": [""], "resources": ["events"], "verbs": ["create"]},
        ],
    }
    subject = [{"kind": "ServiceAccount", "name": "rehash", "namespace": "ops"}]
    ref = {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "rehash"}
    if namespaces is None:
        bindings = [
            {
                "apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": "ClusterRoleBinding",
                "metadata": {"name": "rehash"},
                "roleRef": ref,
                "subjects": subject,
            }
        ]
    else:
        bindings = [
            {
                "apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": "RoleBinding",
                "metadata": {"name": "rehash", "namespace": ns},
                "roleRef": ref,
                "subjects": subject,
            }
            for ns in namespaces
        ]
    return [role, *bindings]


def limited_kubeconfig(cluster: Cluster) -> str:
    cluster.sim.add_token(LIMITED, SA_USER)
    return str(cluster.sim.write_kubeconfig(cluster.tmp / "limited", token=LIMITED))


def test_a_forbidden_namespace_fails_its_scope_once_and_the_rest_is_processed(cluster: Cluster) -> None:
    for ns in ("a", "b", "c"):
        cluster.add(
            configmap("app", {"x": "1"}, ns=ns), deployment("web", env_from("configmap", "app"), ns=ns)
        )
    cluster.sim.load_rbac(rbac(namespaces=("a", "c"), workload_resources=("deployments",)))
    kc = limited_kubeconfig(cluster)
    result = cluster.cli(
        "run", "-o", "json", "-n", "a", "-n", "b", "-n", "c", "--kubeconfig", kc, kubeconfig=False
    )
    assert result.code == 1, result.stderr
    actions = result.actions()
    assert actions["Deployment/a/web"] == "adopt" and actions["Deployment/c/web"] == "adopt"
    assert actions["Deployment/b/*"] == "failed"
    row = next(w for w in result.report["workloads"] if w["namespace"] == "b" and w["kind"] == "Deployment")
    assert f'User "{SA_USER}" cannot list resource "deployments"' in row["reason"]
    assert 'in the namespace "b"' in row["reason"]
    forbidden = cluster.sim.log.entries(status=403, path="/namespaces/b/deployments")
    assert len(forbidden) == 1  # never retried
    assert result.report["api"]["retries_total"] == 0


def test_a_forbidden_kind_fails_its_scope_and_the_other_kinds_are_processed(cluster: Cluster) -> None:
    cluster.add(
        configmap("app", {"x": "1"}),
        deployment("web", env_from("configmap", "app")),
        deployment("db", env_from("configmap", "app"), kind="StatefulSet"),
    )
    cluster.sim.load_rbac(rbac(namespaces=None, workload_resources=("deployments", "daemonsets")))
    result = cluster.cli("run", "-o", "json", "--kubeconfig", limited_kubeconfig(cluster), kubeconfig=False)
    assert result.code == 1, result.stderr
    assert result.actions() == {"Deployment/shop/web": "adopt", "StatefulSet/*/*": "failed"}
    row = next(w for w in result.report["workloads"] if w["kind"] == "StatefulSet")
    assert "statefulsets.apps is forbidden" in row["reason"]
    assert cluster.sim.log.count(status=403) == 1


# -- before any work: unreachable, rejected credentials, untrusted certificate ----------------------


def assert_exit_4_one_line(result: Any, cluster: Cluster, needle: str) -> None:
    assert result.code == 4, (result.stdout, result.stderr)
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("kube-rehash: "), result.stderr
    assert needle in lines[0], lines[0]
    assert cluster.writes() == []


@pytest.mark.slow
def test_an_unreachable_api_is_one_line_exit_4_and_nothing_written(cluster: Cluster) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    doc = yaml.safe_load(cluster.kubeconfig.read_text())
    doc["clusters"][0]["cluster"]["server"] = f"https://127.0.0.1:{port}"
    path = cluster.tmp / "dead"
    path.write_text(yaml.safe_dump(doc))
    started = time.monotonic()
    result = cluster.cli("run", "--kubeconfig", str(path), "--timeout", "8", kubeconfig=False)
    assert time.monotonic() - started < 5
    assert result.code == 4 and result.stdout == "", (result.stdout, result.stderr)
    *retries, last = result.stderr.strip().splitlines()
    assert (
        last
        == f"kube-rehash: cannot reach the API server at https://127.0.0.1:{port} after 2 attempts: "
        + ("connection refused")
    )
    assert len(retries) == 1 and "WARNING" in retries[0] and "retry 1 in 0.50s" in retries[0], retries
    assert cluster.writes() == []


def test_rejected_credentials_are_one_line_exit_4_and_nothing_written(cluster: Cluster) -> None:
    cluster.add(configmap("app", {"x": "1"}), deployment("web", env_from("configmap", "app")))
    path = cluster.sim.write_kubeconfig(cluster.tmp / "bad-token", token="not-a-known-token-zzz")
    result = cluster.cli("run", "--kubeconfig", str(path), kubeconfig=False)
    assert_exit_4_one_line(result, cluster, "credentials rejected")
    verbose = cluster.cli("run", "-vvv", "--kubeconfig", str(path), kubeconfig=False)
    assert verbose.code == 4 and "credentials rejected" in verbose.stderr.splitlines()[-1]
    assert "not-a-known-token-zzz" not in verbose.stderr + verbose.stdout


def test_a_kubeconfig_with_the_wrong_ca_fails_tls_exit_4_and_nothing_written(cluster: Cluster) -> None:
    cluster.add(configmap("app", {"x": "1"}), deployment("web", env_from("configmap", "app")))
    other_ca = Simulator().ca_pem  # a different authority, never started
    doc = yaml.safe_load(cluster.kubeconfig.read_text())
    doc["clusters"][0]["cluster"]["certificate-authority-data"] = base64.b64encode(other_ca).decode()
    path = cluster.tmp / "wrong-ca"
    path.write_text(yaml.safe_dump(doc))
    result = cluster.cli("run", "--kubeconfig", str(path), kubeconfig=False)
    assert_exit_4_one_line(result, cluster, "TLS failure: [SSL: CERTIFICATE_VERIFY_FAILED]")
    assert f"checked against certificate-authority-data (kubeconfig {path} context " in result.stderr
    # the environment cannot switch verification off or route around it
    env = {"REQUESTS_CA_BUNDLE": "/dev/null", "CURL_CA_BUNDLE": "", "HTTPS_PROXY": "http://127.0.0.1:9"}
    again = cluster.cli("run", "--kubeconfig", str(path), env=env, kubeconfig=False)
    assert_exit_4_one_line(again, cluster, "TLS")


def test_proxy_and_ca_bundle_variables_change_nothing_for_a_good_kubeconfig(cluster: Cluster) -> None:
    cluster.add(configmap("app", {"x": "1"}), deployment("web", env_from("configmap", "app")))
    env = {"REQUESTS_CA_BUNDLE": "/nonexistent.pem", "HTTPS_PROXY": "http://127.0.0.1:9", "NO_PROXY": ""}
    result = cluster.run(env=env)
    assert result.code == 0, result.stderr
    assert result.actions() == {"Deployment/shop/web": "adopt"}


def test_an_insecure_kubeconfig_is_the_only_way_to_skip_verification(cluster: Cluster) -> None:
    cluster.add(configmap("app", {"x": "1"}), deployment("web", env_from("configmap", "app")))
    doc = yaml.safe_load(cluster.kubeconfig.read_text())
    cluster_doc = doc["clusters"][0]["cluster"]
    del cluster_doc["certificate-authority-data"]
    cluster_doc["insecure-skip-tls-verify"] = True
    path = cluster.tmp / "insecure"
    path.write_text(yaml.safe_dump(doc))
    result = cluster.cli("run", "-o", "json", "--kubeconfig", str(path), kubeconfig=False)
    assert result.code == 0, result.stderr
    del cluster_doc["insecure-skip-tls-verify"]  # no CA and not insecure: the system store must fail
    path.write_text(yaml.safe_dump(doc))
    cluster.sim.log.clear()
    assert_exit_4_one_line(cluster.cli("run", "--kubeconfig", str(path), kubeconfig=False), cluster, "TLS")


# -- SIGTERM and --timeout --------------------------------------------------------------------------


def seed_changed(cluster: Cluster, count: int) -> list[str]:
    names = [f"w{i:02d}" for i in range(count)]
    cluster.add(configmap("app", {"a": "1"}), *(deployment(n, env_from("configmap", "app")) for n in names))
    assert cluster.run().code == 0
    cluster.edit("configmaps", "shop", "app", {"data": {"a": "2"}})
    cluster.sim.log.clear()
    return names


def test_sigterm_mid_pass_finishes_in_flight_patches_starts_none_and_prints_the_partial_report(
    cluster: Cluster,
) -> None:
    names = seed_changed(cluster, 12)
    started_at: list[float] = []
    first = threading.Event()

    def mark(_store: Any) -> None:
        started_at.append(time.monotonic())
        first.set()

    cluster.sim.faults.mutate(mark, method="PATCH")
    cluster.sim.faults.delay(1.0, method="PATCH")
    argv = [CLI, "run", "-o", "json", "--kubeconfig", str(cluster.kubeconfig)]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("KUBE_REHASH_", "KUBECONFIG"))}
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    assert first.wait(30)
    time.sleep(0.2)
    proc.send_signal(signal.SIGTERM)
    signalled = time.monotonic()
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 1, err
    import json

    report = json.loads(out)
    assert report["interrupted"] is True
    rows = {w["name"]: w for w in report["workloads"]}
    rolled = [n for n, w in rows.items() if w["action"] == "rollout"]
    deferred = [n for n, w in rows.items() if w["action"] == "deferred"]
    assert sorted(rolled + deferred) == names and rolled and deferred
    assert all("pass stopped" in rows[n]["reason"] for n in deferred)
    patches = cluster.sim.log.entries(method="PATCH")
    assert [e.status for e in patches] == [200] * len(rolled)  # every started patch finished
    assert all(t < signalled for t in started_at)  # none started after the signal
    for n in rolled:
        assert template_hash_changes(cluster.sim, "deployments", "shop", n) == 1
    # the next pass converges
    cluster.sim.faults.clear()
    after = cluster.run()
    assert after.code == 0
    assert {n for n, a in after.actions().items() if a == "rollout"} == {
        f"Deployment/shop/{n}" for n in deferred
    }
    for n in names:
        assert template_hash_changes(cluster.sim, "deployments", "shop", n) == 1


@pytest.mark.slow
def test_a_spent_budget_ends_the_pass_in_time_with_its_progress_written_and_exit_0(cluster: Cluster) -> None:
    # 12 rounds of 4 concurrent 1 s patches (12 s of work) against a 10 s budget: writes start until
    # the end of the budget, the in-flight ones finish, and the pass is over within the budget + 5 s.
    # Budget-bound deferral is not a failure: a CronJob draining a backlog must not be marked failed.
    seed_changed(cluster, 48)
    cluster.sim.faults.delay(1.0, method="PATCH")
    started = time.monotonic()
    result = cluster.run("--timeout", "10")
    elapsed = time.monotonic() - started
    assert result.code == 0, result.stderr
    assert result.report["duration_seconds"] < 10 + 5 and elapsed < 10 + 5 + 3
    summary = result.report["summary"]
    assert result.report["interrupted"] is False and result.report["budget_exhausted"] is True
    assert summary["rollout"] >= 1 and summary["deferred"] >= 1
    assert summary["rollout"] + summary["deferred"] == 48 and summary["failed"] == 0
    deferred = [w for w in result.report["workloads"] if w["action"] == "deferred"]
    assert all(w["reason"].startswith("pass budget") for w in deferred)
    assert result.report["budget_deferred"] == len(deferred)
