"""Dry runs, plan, namespace scoping, shards and explain, end to end."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.e2e.conftest import Backend, configmap, deployment, env_from, env_key, secret


def stored(obj: dict[str, Any]) -> dict[str, Any]:
    """What a writer stores: the object without the status and the bookkeeping a controller's status
    updates change on a real server (resourceVersion, managedFields)."""
    meta = {k: v for k, v in obj["metadata"].items() if k not in ("resourceVersion", "managedFields")}
    return {**{k: v for k, v in obj.items() if k != "status"}, "metadata": meta}


def changed_cluster(cluster: Backend) -> None:
    cluster.add(configmap("app", {"a": "1"}), deployment("web", env_from("configmap", "app")))
    cluster.run()
    cluster.edit("configmaps", "shop", "app", {"data": {"a": "2"}})
    cluster.clear_log()


def test_client_dry_run_sends_no_write_and_reports_what_would_happen(cluster: Backend) -> None:
    changed_cluster(cluster)
    before = cluster.get("deployments", "shop", "web")
    result = cluster.run("--dry-run")
    assert result.report["dry_run"] is True
    assert result.actions() == {"Deployment/shop/web": "rollout"}
    assert cluster.writes() == []
    assert stored(cluster.get("deployments", "shop", "web")) == stored(before)


def test_server_dry_run_sends_every_write_with_dry_run_all_and_stores_nothing(cluster: Backend) -> None:
    changed_cluster(cluster)
    before = cluster.get("deployments", "shop", "web")
    result = cluster.run("--dry-run=server")
    assert result.code == 0 and result.actions() == {"Deployment/shop/web": "rollout"}
    writes = cluster.writes()
    assert writes and all(w.query.get("dryRun") == "All" for w in writes)
    assert {w.method for w in writes} == {"PATCH", "POST"}  # the patch and its Event
    assert stored(cluster.get("deployments", "shop", "web")) == stored(before)
    assert cluster.events() == []
    text = cluster.cli("run", "--dry-run=server").stdout.splitlines()[-1]
    assert "server dry run: writes checked by the server with dryRun=All, none persisted" in text
    assert "nothing written" not in text


def test_plan_detailed_exitcode_is_3_with_pending_rollouts_and_0_without(cluster: Backend) -> None:
    changed_cluster(cluster)
    pending = cluster.cli("plan", "--detailed-exitcode")
    assert pending.code == 3, pending.stderr
    assert "rollout" in pending.stdout and "dry run: nothing written" in pending.stdout
    assert cluster.writes() == []
    cluster.run()
    assert cluster.cli("plan", "--detailed-exitcode").code == 0
    assert cluster.cli("plan").code == 0


def test_namespace_flag_never_lists_cluster_wide(cluster: Backend) -> None:
    cluster.add(configmap("app", {"a": "1"}), deployment("web", env_from("configmap", "app")))
    cluster.add(
        configmap("app", {"a": "1"}, ns="other"), deployment("web", env_from("configmap", "app"), ns="other")
    )
    result = cluster.run("-n", "shop")
    assert result.actions() == {"Deployment/shop/web": "adopt"}
    paths = [
        e.path
        for e in cluster.requests("GET")
        if not e.path.startswith(("/version", "/api/v1/namespaces/shop", "/apis/"))
    ]
    assert paths == []
    lists = [e.path for e in cluster.requests("GET") if e.path.startswith("/apis/")]
    assert lists and all("/namespaces/shop/" in p for p in lists)


@pytest.mark.sim_only("a cluster-wide pass: the real server holds other tests' namespaces")
def test_exclude_namespaces_from_config(cluster: Backend) -> None:
    cluster.add(configmap("app", {"a": "1"}), deployment("web", env_from("configmap", "app")))
    cluster.add(
        configmap("app", {"a": "1"}, ns="other"), deployment("web", env_from("configmap", "app"), ns="other")
    )
    config = cluster.config("excludeNamespaces: [other]\n")
    assert cluster.run("--config", str(config)).actions() == {"Deployment/shop/web": "adopt"}


def test_shards_cover_every_namespace_exactly_once(cluster: Backend) -> None:
    for i in range(8):
        ns = f"team-{i}"
        cluster.add(
            configmap("app", {"a": "1"}, ns=ns), deployment("web", env_from("configmap", "app"), ns=ns)
        )
    seen: list[str] = []
    for index in range(3):
        report = cluster.run("--shard", f"{index}/3", "--dry-run").report
        seen += [w["namespace"] for w in report["workloads"]]
    assert sorted(seen) == sorted(f"team-{i}" for i in range(8))
    env_shard = cluster.run("--dry-run", env={"JOB_COMPLETION_INDEX": "1", "KUBE_REHASH_SHARDS": "3"}).report
    assert {w["namespace"] for w in env_shard["workloads"]} == {
        w["namespace"] for w in cluster.run("--shard", "1/3", "--dry-run").report["workloads"]
    }


def test_a_bad_shard_is_a_usage_error(cluster: Backend) -> None:
    result = cluster.cli("run", "--shard", "4/4")
    assert result.code == 2 and "shard" in result.stderr


def test_explain_shows_references_keys_states_hashes_and_the_decision(cluster: Backend) -> None:
    pod = env_key("configmap", "app", "LEVEL")
    pod["containers"][0]["envFrom"] = [
        {"secretRef": {"name": "db"}},
        {"configMapRef": {"name": "opt", "optional": True}},
    ]
    cluster.add(
        configmap("app", {"LEVEL": "1", "X": "2"}),
        secret("db", {"pw": "s3cr3t-value"}),
        deployment("web", pod),
    )
    cluster.run()
    cluster.edit("configmaps", "shop", "app", {"data": {"LEVEL": "9"}})
    cluster.clear_log()
    text = cluster.cli("explain", "deployment/web", "-n", "shop")
    assert text.code == 0, text.stderr
    assert "configmap/app" in text.stdout and "keys LEVEL" in text.stdout
    assert "secret/db" in text.stdout and "all keys" in text.stdout
    assert "missing (optional: hashed as absent)" in text.stdout
    assert "decision:     rollout: configmap/app changed" in text.stdout
    assert "s3cr3t-value" not in text.stdout + text.stderr
    doc = json.loads(cluster.cli("explain", "deploy/web", "-n", "shop", "-o", "json").stdout)
    assert doc["action"] == "rollout" and doc["stored"]["metadata"] != doc["current"]
    assert cluster.writes() == []


def test_explain_of_an_unknown_kind_is_a_usage_error(cluster: Backend) -> None:
    result = cluster.cli("explain", "pod/x", "-n", "shop")
    assert result.code == 2 and "unknown kind" in result.stderr
    wrong_group = cluster.cli("explain", "deployments.batch/web", "-n", "shop")
    assert wrong_group.code == 2 and "unknown kind 'deployments.batch'" in wrong_group.stderr


def test_explain_takes_the_workload_as_kubectl_spells_it(cluster: Backend) -> None:
    changed_cluster(cluster)
    spellings = [("deployment/web",), ("deployments.apps/web",), ("Deployment.apps/web",), ("deploy", "web")]
    for spelling in spellings:
        result = cluster.cli("explain", *spelling, "-n", "shop")
        assert result.code == 0 and result.stdout.startswith("Deployment shop/web"), (spelling, result.stderr)


def test_explain_of_a_workload_that_is_not_there_says_so_in_one_line(cluster: Backend) -> None:
    cluster.add(configmap("app", {"a": "1"}))
    result = cluster.cli("explain", "deployment/nope", "-n", "shop")
    assert result.code == 1
    assert result.stderr.strip().splitlines() == [
        "kube-rehash: explain: Deployment shop/nope not found (another namespace: -n NS)"
    ]


def test_text_report_is_an_aligned_table_with_a_summary_line(cluster: Backend) -> None:
    changed_cluster(cluster)
    out = cluster.cli("run").stdout.splitlines()
    assert out[0].split() == ["ACTION", "KIND", "NAMESPACE", "NAME", "REASON"]
    assert out[1].startswith("rollout  Deployment")
    assert out[-1].startswith("1 workload: 1 rollout in ")
