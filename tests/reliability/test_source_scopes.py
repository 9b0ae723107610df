"""A ConfigMap or Secret the pass may not read fails its own row and skips only the workloads that reference
it."""

from __future__ import annotations

from tests.e2e.conftest import Cluster, configmap, deployment, env_from
from tests.reliability.test_scopes_and_signals import limited_kubeconfig, rbac


def test_a_forbidden_secret_fails_its_own_row_and_skips_only_the_workloads_that_need_it(
    cluster: Cluster,
) -> None:
    cluster.add(
        configmap("app", {"x": "1"}),
        {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "db", "namespace": "shop"}, "data": {}},
        deployment("web", env_from("configmap", "app")),
        deployment("api", env_from("secret", "db")),
    )
    docs = rbac(namespaces=None, workload_resources=("deployments", "statefulsets", "daemonsets"))
    docs[0]["rules"][4]["resources"] = ["configmaps"]
    cluster.sim.load_rbac(docs)
    result = cluster.cli("run", "-o", "json", "--kubeconfig", limited_kubeconfig(cluster), kubeconfig=False)
    assert result.code == 1
    assert result.actions() == {
        "Deployment/shop/web": "adopt",
        "Deployment/shop/api": "skipped",
        "Secret/shop/db": "failed",
    }
    assert cluster.sim.log.count(status=403) == 1
    rows = {w["name"]: w for w in result.report["workloads"]}
    assert 'secrets "db" is forbidden' in rows["db"]["reason"]
    assert rows["api"]["reason"].startswith("secret/db cannot be read (")
