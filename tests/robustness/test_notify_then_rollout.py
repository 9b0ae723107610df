"""A change notified while the template keeps an older rollout's hash rolls once when the workload leaves
notify mode, decided alike from its records and from a full read (the records must not say `in-sync`
where the decision table, reading the template, says `rollout`)."""

from __future__ import annotations

from pathlib import Path

from rehash_simulator import Simulator
from tests.e2e.backends import Cluster
from tests.e2e.conftest import configmap, deployment, env_from

NOTIFY = "onChange: notify\nqps: 0\n"
ROLLOUT = "qps: 0\n"


def rows(c: Cluster, config: str) -> dict[str, tuple[str, str]]:
    result = c.run("--config", str(c.config(config)))
    return {r["name"]: (r["action"], r["reason"]) for r in result.report["workloads"]}


def test_a_notified_change_rolls_once_after_the_config_leaves_notify_mode(tmp_path: Path) -> None:
    with Simulator().start() as sim:
        c = Cluster(sim, tmp_path)
        c.add(configmap("app", {"a": "0"}), deployment("web", env_from("configmap", "app")))
        assert rows(c, ROLLOUT)["web"][0] == "adopt"
        c.edit("configmaps", "shop", "app", {"data": {"a": "1"}})
        assert rows(c, ROLLOUT)["web"][0] == "rollout"
        c.edit("configmaps", "shop", "app", {"data": {"a": "2"}})
        assert rows(c, NOTIFY)["web"] == ("notify", "configmap/app changed; notified without a rollout")
        assert rows(c, NOTIFY)["web"][0] == "in-sync"  # still notified: nothing to do
        explained = c.cli("explain", "Deployment/web", "-n", "shop", "--config", str(c.config(ROLLOUT)))
        assert "decision:     rollout" in explained.stdout, explained.stdout
        assert rows(c, ROLLOUT)["web"][0] == "rollout"
        assert rows(c, ROLLOUT)["web"] == ("in-sync", "content unchanged")
        obj = c.get("deployments", "shop", "web")
        template = obj["spec"]["template"]["metadata"]["annotations"]["kube-rehash.io/config-hash"]
        assert template == obj["metadata"]["annotations"]["kube-rehash.io/config-hash"]
