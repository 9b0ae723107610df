"""Notify mode end to end: a change of a workload annotated `kube-rehash.io/on-change: notify` (or of
any workload under `onChange: notify`) records the new hash on its metadata, emits one ConfigChanged Event
naming the changed sources, and never restarts anything: the pod template is left as it is, and on the real
server no new ReplicaSet appears."""

from __future__ import annotations

from typing import Any

from tests.e2e.conftest import Backend, configmap, deployment, secret

WEB = "Deployment/shop/web"
PLANTED = "planted-secret-value-7f3a9c"
NOTIFY = {"kube-rehash.io/watch": "true", "kube-rehash.io/on-change": "notify"}


def uses_both() -> dict[str, Any]:
    return {
        "containers": [
            {
                "name": "app",
                "image": "app:1",
                "envFrom": [{"configMapRef": {"name": "app"}}, {"secretRef": {"name": "creds"}}],
            }
        ]
    }


def template_annotations(cluster: Backend) -> dict[str, str]:
    obj = cluster.get("deployments", "shop", "web")
    return dict(obj["spec"]["template"]["metadata"].get("annotations") or {})


def replicasets(cluster: Backend) -> int:
    return len(cluster.list("replicasets", "shop"))


def seed(cluster: Backend, annotations: dict[str, str]) -> None:
    cluster.add(
        configmap("app", {"a": "1"}),
        secret("creds", {"password": "old"}),
        deployment("web", uses_both(), annotations=annotations),
    )
    assert cluster.run().actions() == {WEB: "adopt"}
    cluster.wait_rolled_out("deployments", "shop", "web")


def test_a_change_is_notified_once_with_one_event_and_never_restarts(cluster: Backend) -> None:
    seed(cluster, NOTIFY)
    template = template_annotations(cluster)
    sets = replicasets(cluster) if cluster.name != "sim" else 0
    assert sets == (0 if cluster.name == "sim" else 1)
    cluster.edit("configmaps", "shop", "app", {"data": {"a": "2"}})
    result = cluster.run()
    assert result.code == 0
    row = result.row("Deployment", "web")
    assert row["action"] == "notify"
    assert row["reason"] == "configmap/app changed; notified without a rollout"
    assert result.report["summary"]["notify"] == 1 and result.report["summary"]["rollout"] == 0
    events = cluster.events("shop", "ConfigChanged")
    assert [(e["type"], e["involvedObject"]["name"]) for e in events] == [("Normal", "web")]
    assert "configmap/app" in events[0]["message"]
    assert template_annotations(cluster) == template
    # Steady afterwards: nothing notified, no further Event.
    assert cluster.run().actions() == {WEB: "in-sync"}
    assert len(cluster.events("shop", "ConfigChanged")) == 1
    if cluster.name != "sim":  # the simulator runs no controllers and makes no ReplicaSets
        cluster.wait_rolled_out("deployments", "shop", "web")
        assert replicasets(cluster) == sets


def test_the_config_default_on_change_notify_applies_without_the_annotation(cluster: Backend) -> None:
    seed(cluster, {"kube-rehash.io/watch": "true"})
    config = cluster.config("onChange: notify\n")
    cluster.edit("configmaps", "shop", "app", {"data": {"a": "2"}})
    assert cluster.run("--config", str(config)).actions() == {WEB: "notify"}
    cluster.edit("configmaps", "shop", "app", {"data": {"a": "3"}})
    # Without the setting the default is rollout again.
    assert cluster.run().actions() == {WEB: "rollout"}


def test_a_secret_change_is_named_but_its_content_appears_nowhere(cluster: Backend) -> None:
    seed(cluster, NOTIFY)
    cluster.edit("secrets", "shop", "creds", {"stringData": {"password": PLANTED}})
    result = cluster.run("-vv")
    assert result.row("Deployment", "web")["action"] == "notify"
    events = cluster.events("shop", "ConfigChanged")
    assert len(events) == 1 and "secret/creds" in events[0]["message"]
    for text in (result.stdout, result.stderr, repr(events), repr(cluster.get("deployments", "shop", "web"))):
        assert PLANTED not in text


def test_plan_and_explain_show_the_notification_before_it_is_written(cluster: Backend) -> None:
    seed(cluster, NOTIFY)
    cluster.edit("configmaps", "shop", "app", {"data": {"a": "2"}})
    cluster.clear_log()
    planned = cluster.cli("plan", "-o", "json")
    assert planned.code == 0, planned.stderr
    assert planned.row("Deployment", "web")["action"] == "notify"
    explained = cluster.cli("explain", "deployment/web", "-n", "shop")
    assert explained.code == 0, explained.stderr
    assert "decision:     notify: configmap/app changed; notified without a rollout" in explained.stdout
    assert cluster.writes() == []
