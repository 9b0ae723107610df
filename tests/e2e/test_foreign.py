"""Foreign annotations are named: with a compat rule off, a pass that lists workloads carrying that peer's
annotations says how many and which setting would honour them (one log line at the default verbosity and
the report's `foreign_annotations`), from the lists it makes anyway."""

from __future__ import annotations

from tests.e2e.conftest import Backend, configmap, deployment, env_from


def seed_peers(cluster: Backend) -> None:
    pod = env_from("configmap", "app")
    cluster.add(
        configmap("app", {"a": "1"}),
        deployment("ours", pod),
        deployment("r1", pod, annotations={"reloader.stakater.com/auto": "true"}),
        deployment("r2", pod, annotations={"configmap.reloader.stakater.com/reload": "app"}),
        deployment("w", pod, annotations={"wave.pusher.com/update-on-config-change": "true"}),
    )


def test_peers_annotations_with_compat_off_are_counted_and_the_setting_named(cluster: Backend) -> None:
    seed_peers(cluster)
    cluster.clear_log()
    result = cluster.run()
    assert result.actions() == {"Deployment/shop/ours": "adopt"}
    assert result.report["foreign_annotations"] == {"reloader": 2, "wave": 1}
    assert (
        "2 carry reloader.stakater.com" in result.stderr and "1 carry wave.pusher.com (wave)" in result.stderr
    )
    assert "set compat: [reloader, wave]" in result.stderr
    text = cluster.cli("plan")
    assert "set compat: [reloader, wave]" in text.stderr  # at the default verbosity


def test_an_enabled_peer_is_honoured_and_no_longer_named(cluster: Backend) -> None:
    seed_peers(cluster)
    result = cluster.run(env={"KUBE_REHASH_COMPAT": "reloader"})
    assert result.actions() == {
        "Deployment/shop/ours": "adopt",
        "Deployment/shop/r1": "adopt",
        "Deployment/shop/r2": "adopt",
    }
    assert result.report["foreign_annotations"] == {"wave": 1}
    assert "set compat: [wave]" in result.stderr


def test_reloader_annotations_on_the_pod_template_are_honoured_with_compat_on(cluster: Backend) -> None:
    """Reloader reads its annotations on the workload and on its pod template (the workload's win)."""
    on_template = deployment("tpl", env_from("configmap", "app"), annotations={})
    on_template["spec"]["template"]["metadata"]["annotations"] = {"reloader.stakater.com/auto": "true"}
    overruled = deployment(
        "off", env_from("configmap", "app"), annotations={"reloader.stakater.com/auto": "false"}
    )
    overruled["spec"]["template"]["metadata"]["annotations"] = {"reloader.stakater.com/auto": "true"}
    cluster.add(configmap("app", {"a": "1"}), on_template, overruled)
    compat = {"KUBE_REHASH_COMPAT": "reloader"}
    assert cluster.run(env=compat).actions() == {"Deployment/shop/tpl": "adopt"}
    assert cluster.run(env=compat).actions() == {"Deployment/shop/tpl": "in-sync"}
    cluster.edit("configmaps", "shop", "app", {"data": {"a": "2"}})
    rolled = cluster.run(env=compat)
    assert rolled.actions() == {"Deployment/shop/tpl": "rollout"}
    assert rolled.row("Deployment", "tpl")["reason"] == "configmap/app changed"
    assert cluster.run(env=compat).actions() == {"Deployment/shop/tpl": "in-sync"}
    assert cluster.run().actions() == {}  # compat off: the template's annotations are not read
