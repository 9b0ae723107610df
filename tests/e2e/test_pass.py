"""The reconcile pass end to end: each contract rule, observed through the report, the server's state
and its request log (the simulator's, or the real server's audit log), on both backends."""

from __future__ import annotations

import json
from typing import Any

import pytest

from reconcile.policy.audit import CHANGE_CAUSE
from tests.e2e.conftest import (
    Backend,
    configmap,
    cronjob,
    deployment,
    env_from,
    env_key,
    secret,
    template_hash,
)

WEB = "Deployment/shop/web"


def strip_ours(obj: dict[str, Any]) -> dict[str, Any]:
    """The object without server bookkeeping, without kube-rehash's own annotations (its change cause
    included) and without the revision the Deployment controller of a real cluster counts in its own
    annotation."""
    copy: dict[str, Any] = {**obj, "metadata": dict(obj["metadata"])}
    for key in ("resourceVersion", "generation", "managedFields"):
        copy["metadata"].pop(key, None)
    copy["metadata"]["annotations"] = {
        k: v
        for k, v in (copy["metadata"].get("annotations") or {}).items()
        if not k.startswith(("kube-rehash.io/", "deployment.kubernetes.io/")) and k != CHANGE_CAUSE
    }
    copy.pop("status", None)
    spec = copy.get("spec", {})
    if "template" in spec:
        tmeta = dict(spec["template"].get("metadata") or {})
        tann = {
            k: v for k, v in (tmeta.get("annotations") or {}).items() if not k.startswith("kube-rehash.io/")
        }
        tmeta["annotations"] = tann
        if not tann:
            tmeta.pop("annotations")
        copy["spec"] = {**spec, "template": {**spec["template"], "metadata": tmeta}}
    return copy


def test_first_pass_adopts_without_touching_the_pod_template(cluster: Backend) -> None:
    cluster.add(configmap("app", {"a": "1"}), deployment("web", env_from("configmap", "app")))
    before = cluster.get("deployments", "shop", "web")
    result = cluster.run()
    assert result.code == 0, result.stderr
    assert result.actions() == {WEB: "adopt"}
    after = cluster.get("deployments", "shop", "web")
    assert after["spec"] == before["spec"]
    assert after["metadata"]["annotations"]["kube-rehash.io/config-hash"].startswith("v1:")
    assert result.report["summary"]["adopt"] == 1 and result.report["dry_run"] is False


def test_a_change_rolls_once_and_changes_nothing_but_our_annotations(cluster: Backend) -> None:
    cluster.add(configmap("app", {"a": "1"}), deployment("web", env_from("configmap", "app")))
    cluster.run()
    before = cluster.get("deployments", "shop", "web")
    cluster.edit("configmaps", "shop", "app", {"data": {"a": "2"}})
    cluster.clear_log()
    result = cluster.run()
    row = result.report["workloads"][0]
    assert (row["action"], row["configs"]) == ("rollout", ["configmap/app"])
    assert row["previous"] != row["hash"]
    after = cluster.get("deployments", "shop", "web")
    assert template_hash(after) == row["hash"]
    assert after["metadata"]["generation"] == before["metadata"]["generation"] + 1
    assert strip_ours(after) == strip_ours(before)
    assert after["metadata"]["annotations"][CHANGE_CAUSE] == "kube-rehash: configmap/app changed"
    patches = [e for e in cluster.writes() if e.method == "PATCH"]
    assert len(patches) == 1


@pytest.mark.sim_only("the content type of a request: the audit log does not record it")
def test_a_rollout_is_one_json_patch(cluster: Backend) -> None:
    cluster.add(configmap("app", {"a": "1"}), deployment("web", env_from("configmap", "app")))
    cluster.run()
    cluster.edit("configmaps", "shop", "app", {"data": {"a": "2"}})
    cluster.clear_log()
    assert cluster.run().actions() == {WEB: "rollout"}
    (patch,) = [e for e in cluster.writes() if e.method == "PATCH"]
    assert patch.content_type == "application/json-patch+json"


@pytest.mark.slow
def test_a_steady_pass_after_a_rollout_sends_no_writes_and_no_content_reads(cluster: Backend) -> None:
    cluster.add(configmap("app", {"a": "1"}), secret("db", {"pw": "x"}))
    cluster.add(deployment("web", env_from("configmap", "app")), deployment("api", env_from("secret", "db")))
    cluster.run()
    cluster.edit("configmaps", "shop", "app", {"data": {"a": "2"}})
    cluster.run()
    cluster.wait_rolled_out("deployments", "shop", "web")
    cluster.run()  # records a finished rollout as complete (real server), nothing on the simulator
    cluster.clear_log()
    result = cluster.run()
    assert set(result.actions().values()) == {"in-sync"}
    assert cluster.writes() == []
    assert result.report["configs_fetched"] == 0


@pytest.mark.sim_only("the Accept header of a request: the audit log does not record it")
def test_a_steady_pass_reads_sources_metadata_only(cluster: Backend) -> None:
    cluster.add(configmap("app", {"a": "1"}), secret("db", {"pw": "x"}))
    cluster.add(deployment("web", env_from("configmap", "app")), deployment("api", env_from("secret", "db")))
    cluster.run()
    cluster.clear_log()
    assert set(cluster.run().actions().values()) == {"in-sync"}
    full_source_reads = [
        e
        for e in cluster.requests("GET")
        if ("/configmaps" in e.path or "/secrets" in e.path)
        and "as=PartialObjectMetadata" not in (e.accept or "")
    ]
    assert full_source_reads == []


def test_a_change_to_a_key_the_workload_does_not_read_restarts_nothing(cluster: Backend) -> None:
    cluster.add(
        configmap("app", {"used": "1", "other": "1"}), deployment("web", env_key("configmap", "app", "used"))
    )
    cluster.run()
    cluster.edit("configmaps", "shop", "app", {"data": {"other": "2"}})
    assert cluster.run().actions() == {WEB: "refresh"}
    cluster.edit("configmaps", "shop", "app", {"data": {"used": "2"}})
    assert cluster.run().actions() == {WEB: "rollout"}


def test_a_configmap_and_a_secret_changed_together_roll_once(cluster: Backend) -> None:
    pod = env_from("configmap", "app")
    pod["containers"][0]["envFrom"].append({"secretRef": {"name": "db"}})
    cluster.add(configmap("app", {"a": "1"}), secret("db", {"pw": "1"}), deployment("web", pod))
    cluster.run()
    cluster.edit("configmaps", "shop", "app", {"data": {"a": "2"}})
    cluster.edit("secrets", "shop", "db", {"stringData": {"pw": "2"}})
    row = cluster.run().report["workloads"][0]
    assert row["action"] == "rollout" and "configmap/app, secret/db changed" in row["reason"]
    assert len([e for e in cluster.writes() if e.method == "PATCH"]) == 2  # adopt + one rollout


def test_a_missing_required_source_skips_and_writes_nothing(cluster: Backend) -> None:
    cluster.add(deployment("web", env_from("configmap", "nope")))
    result = cluster.run()
    row = result.report["workloads"][0]
    assert row["action"] == "skipped" and "missing required configmap/nope" in row["reason"]
    assert result.code == 0 and cluster.writes() == []


def test_an_optional_missing_source_hashes_as_absent_and_its_creation_rolls(cluster: Backend) -> None:
    cluster.add(deployment("web", env_from("configmap", "maybe", optional=True)))
    assert cluster.run().actions() == {WEB: "adopt"}
    cluster.add(configmap("maybe", {"a": "1"}))
    assert cluster.run().actions() == {WEB: "rollout"}


def test_explicit_annotation_lists_search_mode_and_ignore(cluster: Backend) -> None:
    cluster.add(
        configmap("extra", {"a": "1"}),
        configmap("matched", {"a": "1"}, annotations={"kube-rehash.io/match": "true"}),
        configmap("quiet", {"a": "1"}, annotations={"kube-rehash.io/ignore": "true"}),
        deployment("explicit", annotations={"kube-rehash.io/configmaps": " extra , "}),
        deployment("searcher", annotations={"kube-rehash.io/search": "true"}),
        deployment("ignoring", env_from("configmap", "quiet")),
        deployment(
            "optout",
            env_from("configmap", "extra"),
            annotations={"kube-rehash.io/watch": "true", "kube-rehash.io/ignore": "true"},
        ),
        deployment("bystander", env_from("configmap", "extra"), annotations={}),
    )
    first = cluster.run()
    assert first.actions() == {
        "Deployment/shop/explicit": "adopt",
        "Deployment/shop/searcher": "adopt",
        "Deployment/shop/ignoring": "adopt",
        "Deployment/shop/optout": "skipped",
    }
    by_name = {w["name"]: w for w in first.report["workloads"]}
    assert by_name["explicit"]["configs"] == ["configmap/extra"]
    assert by_name["searcher"]["configs"] == ["configmap/matched"]
    assert by_name["ignoring"]["configs"] == []
    for name in ("extra", "matched", "quiet"):
        cluster.edit("configmaps", "shop", name, {"data": {"a": "2"}})
    assert cluster.run().actions() == {
        "Deployment/shop/explicit": "rollout",
        "Deployment/shop/searcher": "rollout",
        "Deployment/shop/ignoring": "in-sync",
        "Deployment/shop/optout": "skipped",
    }


def test_compat_annotations_of_reloader_wave_and_pod_reloader(cluster: Backend) -> None:
    cluster.add(
        configmap("app", {"a": "1"}),
        deployment("r", env_from("configmap", "app"), annotations={"reloader.stakater.com/auto": "true"}),
        deployment(
            "w", env_from("configmap", "app"), annotations={"wave.pusher.com/update-on-config-change": "true"}
        ),
        deployment("p", annotations={"pod-reloader.cs.sap.com/configmaps": "app"}),
    )
    assert cluster.run().actions() == {}
    config = cluster.config("compat: [reloader, wave, pod-reloader]\n")
    first = cluster.run("--config", str(config))
    assert set(first.actions().values()) == {"adopt"} and len(first.actions()) == 3
    cluster.edit("configmaps", "shop", "app", {"data": {"a": "2"}})
    assert set(cluster.run("--config", str(config)).actions().values()) == {"rollout"}


def test_operator_owned_and_suspended_workloads_are_skipped(cluster: Backend) -> None:
    owned = deployment("owned", env_from("configmap", "app"))
    owned["metadata"]["ownerReferences"] = [
        {
            "apiVersion": "db.example.com/v1",
            "kind": "Database",
            "name": "main",
            "uid": "x1",
            "controller": True,
        }
    ]
    cluster.add(
        configmap("app", {"a": "1"}), owned, cronjob("cj", env_from("configmap", "app"), suspend=True)
    )
    result = cluster.run()
    reasons = {w["name"]: (w["action"], w["reason"]) for w in result.report["workloads"]}
    assert reasons["owned"][0] == "skipped" and "owned by Database/main" in reasons["owned"][1]
    assert reasons["cj"][0] == "skipped" and "suspended" in reasons["cj"][1]
    assert cluster.writes() == []


def test_cronjob_hash_lives_on_the_job_template_and_run_on_change_creates_one_job(cluster: Backend) -> None:
    annotations = {"kube-rehash.io/watch": "true", "kube-rehash.io/run-on-change": "true"}
    cluster.add(
        configmap("app", {"a": "1"}), cronjob("cj", env_from("configmap", "app"), annotations=annotations)
    )
    cluster.run()
    assert cluster.list("jobs", "shop") == []
    cluster.edit("configmaps", "shop", "app", {"data": {"a": "2"}})
    result = cluster.run("--max-rollouts", "0")
    assert result.actions() == {"CronJob/shop/cj": "rollout"}
    cj = cluster.get("cronjobs", "shop", "cj")
    assert (
        template_hash(cj, ("spec", "jobTemplate", "spec", "template"))
        == result.report["workloads"][0]["hash"]
    )
    assert len(cluster.list("jobs", "shop")) == 1
    cluster.run()
    assert len(cluster.list("jobs", "shop")) == 1


@pytest.mark.sim_only("an Argo Rollout: the real server has no Rollout CRD")
def test_on_delete_and_paused_workloads_are_patched_with_a_reason(cluster: Backend) -> None:
    cluster.add(
        configmap("app", {"a": "1"}),
        deployment(
            "sts", env_from("configmap", "app"), kind="StatefulSet", updateStrategy={"type": "OnDelete"}
        ),
        deployment("paused", env_from("configmap", "app"), paused=True),
        deployment("ro", env_from("configmap", "app"), kind="Rollout"),
    )
    cluster.run()
    cluster.edit("configmaps", "shop", "app", {"data": {"a": "2"}})
    rows = {w["name"]: w for w in cluster.run().report["workloads"]}
    assert {n: r["action"] for n, r in rows.items()} == {
        "sts": "rollout",
        "paused": "rollout",
        "ro": "rollout",
    }
    assert "pods restart only when deleted" in rows["sts"]["reason"]
    assert "paused" in rows["paused"]["reason"]


def test_max_rollouts_defers_the_rest_in_stable_order_and_later_passes_finish(cluster: Backend) -> None:
    cluster.add(
        configmap("app", {"a": "1"}), *(deployment(f"w{i}", env_from("configmap", "app")) for i in range(5))
    )
    cluster.run()
    cluster.edit("configmaps", "shop", "app", {"data": {"a": "2"}})
    first = cluster.run("--max-rollouts", "2")
    assert [w["action"] for w in first.report["workloads"]] == ["rollout"] * 2 + ["deferred"] * 3
    second = cluster.run("--max-rollouts", "2")
    assert [w["action"] for w in second.report["workloads"]] == ["in-sync"] * 2 + ["rollout"] * 2 + [
        "deferred"
    ]
    third = cluster.run("--max-rollouts", "2")
    assert [w["action"] for w in third.report["workloads"]] == ["in-sync"] * 4 + ["rollout"]


def test_min_interval_defers_a_second_rollout_that_comes_too_soon(cluster: Backend) -> None:
    annotations = {"kube-rehash.io/watch": "true", "kube-rehash.io/min-interval": "10m"}
    cluster.add(
        configmap("app", {"a": "1"}), deployment("web", env_from("configmap", "app"), annotations=annotations)
    )
    cluster.run()
    cluster.edit("configmaps", "shop", "app", {"data": {"a": "2"}})
    assert cluster.run().actions() == {WEB: "rollout"}
    cluster.edit("configmaps", "shop", "app", {"data": {"a": "3"}})
    row = cluster.run().report["workloads"][0]
    assert row["action"] == "deferred" and "min-interval" in row["reason"]


def test_first_sight_rollout_from_config(cluster: Backend) -> None:
    cluster.add(configmap("app", {"a": "1"}), deployment("web", env_from("configmap", "app")))
    config = cluster.config("firstSight: rollout\n")
    assert cluster.run("--config", str(config)).actions() == {WEB: "rollout"}


def test_a_stripped_template_annotation_with_unchanged_content_does_not_roll(cluster: Backend) -> None:
    cluster.add(configmap("app", {"a": "1"}), deployment("web", env_from("configmap", "app")))
    cluster.run()
    cluster.edit("configmaps", "shop", "app", {"data": {"a": "2"}})
    cluster.run()
    cluster.wait_rolled_out("deployments", "shop", "web")
    cluster.run()  # records a finished rollout as complete (real server), nothing on the simulator
    cluster.mutate(
        "deployments", "shop", "web", lambda o: o["spec"]["template"]["metadata"].pop("annotations")
    )
    cluster.clear_log()
    # The re-apply changed the spec (a new generation): the bookkeeping is refreshed on metadata only,
    # the template is left as it is, so nothing restarts.
    assert cluster.run().actions() == {WEB: "refresh"}
    (write,) = cluster.writes()
    assert write.method == "PATCH"
    if cluster.name == "sim":  # the audit log records no request body: the template check below proves it
        assert all(op["path"].startswith("/metadata/") for op in json.loads(write.body))
    assert "annotations" not in cluster.get("deployments", "shop", "web")["spec"]["template"]["metadata"]
    cluster.clear_log()
    assert cluster.run().actions() == {WEB: "in-sync"}
    assert cluster.writes() == []


def test_events_name_the_changed_configs(cluster: Backend) -> None:
    cluster.add(configmap("app", {"a": "1"}), deployment("web", env_from("configmap", "app")))
    cluster.run()
    cluster.edit("configmaps", "shop", "app", {"data": {"a": "2"}})
    cluster.run()
    events = cluster.events()
    assert [(e["reason"], e["involvedObject"]["name"]) for e in events] == [("ConfigChanged", "web")]
    assert "configmap/app" in events[0]["message"]
