"""Under `compat: [reloader]` the pass follows Reloader where its users depend on it (docs/migration.md,
"Behaviour under compat"): search and match restart only for a matching source the pod spec references,
a reload list naming a source that does not exist yet keeps the others working, and a CronJob's change
starts one Job."""

from __future__ import annotations

from tests.e2e.conftest import Backend, configmap, cronjob, deployment, env_from

COMPAT = {"KUBE_REHASH_COMPAT": "reloader"}
MATCH = {"reloader.stakater.com/match": "true"}


def test_search_restarts_for_a_matching_referenced_source_and_never_for_an_unreferenced_one(
    cluster: Backend,
) -> None:
    cluster.add(
        configmap("app", {"a": "1"}, annotations=MATCH),
        configmap("elsewhere", {"a": "1"}, annotations=MATCH),
        configmap("plain", {"a": "1"}),
        deployment("api", env_from("configmap", "app"), annotations={"reloader.stakater.com/search": "true"}),
        deployment(
            "quiet", env_from("configmap", "plain"), annotations={"reloader.stakater.com/search": "true"}
        ),
    )
    adopted = {"Deployment/shop/api": "adopt", "Deployment/shop/quiet": "adopt"}
    assert cluster.run(env=COMPAT).actions() == adopted
    explained = cluster.cli("explain", "deployment/api", "-n", "shop", env=COMPAT)
    assert "configmap/app" in explained.stdout and "elsewhere" not in explained.stdout
    cluster.edit("configmaps", "shop", "elsewhere", {"data": {"a": "2"}})
    cluster.edit("configmaps", "shop", "plain", {"data": {"a": "2"}})  # referenced, but not matching
    assert cluster.run(env=COMPAT).actions() == {
        "Deployment/shop/api": "in-sync",
        "Deployment/shop/quiet": "in-sync",
    }
    cluster.edit("configmaps", "shop", "app", {"data": {"a": "2"}})
    rolled = cluster.run(env=COMPAT)
    assert rolled.actions() == {"Deployment/shop/api": "rollout", "Deployment/shop/quiet": "in-sync"}
    assert rolled.row("Deployment", "api")["reason"] == "configmap/app changed"


def test_a_reload_list_naming_a_source_not_created_yet_keeps_reloading_on_the_others(
    cluster: Backend,
) -> None:
    listed = {"configmap.reloader.stakater.com/reload": "a,later"}
    cluster.add(configmap("a", {"k": "1"}), deployment("api", annotations=listed))
    assert cluster.run(env=COMPAT).actions() == {"Deployment/shop/api": "adopt"}
    cluster.edit("configmaps", "shop", "a", {"data": {"k": "2"}})
    rolled = cluster.run(env=COMPAT)
    assert rolled.actions() == {"Deployment/shop/api": "rollout"}
    assert rolled.row("Deployment", "api")["reason"] == "configmap/a changed"
    assert cluster.run(env=COMPAT).actions() == {"Deployment/shop/api": "in-sync"}
    # Created at last, it is a change like any other: one rollout, then quiet.
    cluster.add(configmap("later", {"k": "1"}))
    assert cluster.run(env=COMPAT).actions() == {"Deployment/shop/api": "rollout"}
    assert cluster.run(env=COMPAT).actions() == {"Deployment/shop/api": "in-sync"}


def test_a_cronjob_opted_in_by_reloader_starts_one_job_per_change_unless_told_not_to(
    cluster: Backend,
) -> None:
    auto = {"reloader.stakater.com/auto": "true"}
    cluster.add(
        configmap("app", {"a": "1"}),
        cronjob("cj", env_from("configmap", "app"), annotations=auto),
        cronjob(
            "no-job",
            env_from("configmap", "app"),
            annotations={**auto, "kube-rehash.io/run-on-change": "false"},
        ),
    )
    cluster.run(env=COMPAT)
    cluster.edit("configmaps", "shop", "app", {"data": {"a": "2"}})
    rolled = cluster.run(env=COMPAT)
    assert rolled.actions() == {"CronJob/shop/cj": "rollout", "CronJob/shop/no-job": "rollout"}
    jobs = cluster.list("jobs", "shop")
    assert len(jobs) == 1 and jobs[0]["metadata"]["name"].startswith("cj-")
