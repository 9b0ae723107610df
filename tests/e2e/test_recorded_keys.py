"""A workload that uses only some keys of a source, end to end: its change pass reads no workload.

Its records keep the key names it uses (format 2 of the `sources` bookkeeping), so when the source changes
the pass decides from the records and reads only the source's content: a change of a key it does not use
records the new version without a rollout, a change of a key it uses rolls it once, with one patch that
tests the generation. Beyond the cap on recorded names the workload is read, and `-v` says so. Seen in the
server's request log.
"""

from __future__ import annotations

from reconcile.model.bookkeeping import KEY_NAMES_MAX
from tests.e2e.conftest import Backend, configmap, deployment, env_key, template_hash

WEB = "Deployment/shop/web"
WORKLOAD_PATH = "/apis/apps/v1/namespaces/shop/deployments/web"


def workload_reads(cluster: Backend) -> int:
    return sum(1 for e in cluster.requests("GET") if e.path == WORKLOAD_PATH)


def methods(cluster: Backend) -> list[str]:
    return sorted(e.method for e in cluster.writes())


def test_a_change_pass_reads_no_workload_and_rolls_only_for_a_key_it_uses(cluster: Backend) -> None:
    cluster.add(configmap("app", {"a": "1", "b": "1"}), deployment("web", env_key("configmap", "app", "a")))
    assert cluster.run().actions() == {WEB: "adopt"}
    rolled = template_hash(cluster.get("deployments", "shop", "web"))

    cluster.clear_log()
    cluster.edit("configmaps", "shop", "app", {"data": {"b": "2"}})  # a key web does not use
    result = cluster.run()
    assert result.actions() == {WEB: "refresh"}
    assert workload_reads(cluster) == 0 and result.report["configs_fetched"] == 1
    assert methods(cluster) == ["PATCH"]  # the new version recorded; no Event
    assert template_hash(cluster.get("deployments", "shop", "web")) == rolled

    cluster.clear_log()
    cluster.edit("configmaps", "shop", "app", {"data": {"a": "2"}})  # the key it uses
    result = cluster.run()
    assert result.actions() == {WEB: "rollout"}
    assert result.row("Deployment", "web")["reason"].startswith("configmap/app changed")
    assert workload_reads(cluster) == 0 and result.report["configs_fetched"] == 1
    assert methods(cluster) == ["PATCH", "POST"]  # one guarded patch, one Event
    assert template_hash(cluster.get("deployments", "shop", "web")) not in (None, rolled)


def test_beyond_the_cap_a_change_reads_the_workload_and_says_so_at_v(cluster: Backend) -> None:
    names = [f"k{i:02}" for i in range(KEY_NAMES_MAX + 1)]
    env = [
        {"name": f"V{i}", "valueFrom": {"configMapKeyRef": {"name": "app", "key": key}}}
        for i, key in enumerate(names)
    ]
    spec = {"containers": [{"name": "app", "image": "app:1", "env": env}]}
    cluster.add(configmap("app", dict.fromkeys(names, "1")), deployment("web", spec))
    assert cluster.run().actions() == {WEB: "adopt"}
    cluster.clear_log()
    cluster.edit("configmaps", "shop", "app", {"data": {"k00": "2"}})
    result = cluster.run("-v")
    assert result.actions() == {WEB: "rollout"}
    assert workload_reads(cluster) == 1  # read: its records keep no key names of the source
    assert "keep no key names of a source used in part (e.g. configmap/app" in result.stderr
    assert "k00" not in result.stderr  # the source is named, never a key
