"""Restart windows and rollout health end to end.

Windows are computed from the current UTC time (one that ended a minute ago, one that contains now), so
the tests are deterministic; they run on both backends. The health tests that set a workload's status by
hand run on the simulator only (it runs no controllers); tests/real/test_rollout_health.py covers health
with real controllers.
"""

from __future__ import annotations

import json
import re
import time
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from tests.e2e.conftest import Backend, configmap, deployment, env_from, template_hash

WEB = "Deployment/shop/web"
WEB_PATH = "/apis/apps/v1/namespaces/shop/deployments/web"
WINDOW = "kube-rehash.io/restart-window"
ROLLOUT = "kube-rehash.io/rollout"
WATCH = {"kube-rehash.io/watch": "true"}
DEFERRED = re.compile(
    r"^outside restart window; opens (\d{4}-\d\d-\d\dT(\d\d:\d\d):00Z); configmap/app changed$"
)


def closed_window() -> str:
    """Every day, a window that ended a minute ago: it next opens in about 24 hours."""
    now = datetime.now(UTC)
    return f"* {now - timedelta(minutes=10):%H:%M}-{now - timedelta(minutes=1):%H:%M}"


def open_window() -> str:
    now = datetime.now(UTC)
    return f"* {now - timedelta(minutes=5):%H:%M}-{now + timedelta(minutes=10):%H:%M}"


def app(
    cluster: Backend, *names: str, annotations: dict[str, str] | None = None, kind: str = "Deployment"
) -> None:
    cluster.add(configmap("app", {"a": "1"}))
    for name in names or ("web",):
        cluster.add(
            deployment(name, env_from("configmap", "app"), annotations=annotations or WATCH, kind=kind)
        )


def row(result: Any, name: str = "web") -> dict[str, Any]:
    (found,) = [w for w in result.report["workloads"] if w["name"] == name]
    return found  # type: ignore[no-any-return]


def record(cluster: Backend, resource: str = "deployments", name: str = "web") -> dict[str, Any]:
    return json.loads(cluster.get(resource, "shop", name)["metadata"]["annotations"][ROLLOUT])  # type: ignore[no-any-return]


def events(cluster: Backend, reason: str) -> list[dict[str, Any]]:
    return cluster.events("shop", reason)


def workload_gets(cluster: Backend, path: str = WEB_PATH) -> list[Any]:
    return [e for e in cluster.requests("GET") if e.path == path]


def change(cluster: Backend, value: str) -> None:
    cluster.edit("configmaps", "shop", "app", {"data": {"a": value}})


# --- restart windows ---------------------------------------------------------------------------------


def test_a_change_outside_the_window_is_deferred_with_the_opening_and_nothing_written(
    cluster: Backend,
) -> None:
    window = closed_window()
    app(cluster, annotations={**WATCH, WINDOW: window})
    assert cluster.run().actions() == {WEB: "adopt"}  # adoption restarts nothing: never held back
    change(cluster, "2")
    cluster.clear_log()
    result = cluster.run()
    assert result.code == 0
    found = row(result)
    assert found["action"] == "deferred"
    match = DEFERRED.match(found["reason"])
    assert match is not None, found["reason"]
    opens = datetime.strptime(match[1], "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
    assert match[2] == window.split()[1].split("-")[0]
    assert timedelta(hours=23) < opens - datetime.now(UTC) < timedelta(hours=24)
    assert cluster.writes() == []


def test_the_config_default_holds_workloads_without_the_annotation_and_the_annotation_overrides_it(
    cluster: Backend,
) -> None:
    app(cluster, "web")
    cluster.add(deployment("api", env_from("configmap", "app"), annotations={**WATCH, WINDOW: open_window()}))
    cluster.add(deployment("ops", env_from("configmap", "app"), annotations={**WATCH, WINDOW: ""}))
    config = cluster.config(f'restartWindow: "{closed_window()}"\n')
    assert set(cluster.run("--config", str(config)).actions().values()) == {"adopt"}
    change(cluster, "2")
    result = cluster.run("--config", str(config))
    assert result.actions() == {
        "Deployment/shop/api": "rollout",
        "Deployment/shop/ops": "rollout",  # an empty annotation lifts the default: always open
        WEB: "deferred",
    }
    assert row(result, "web")["reason"].startswith("outside restart window; opens ")


@pytest.mark.slow
def test_a_held_back_change_rolls_once_when_the_window_opens_even_after_several_changes(
    cluster: Backend,
) -> None:
    app(cluster, annotations={**WATCH, WINDOW: closed_window()})
    cluster.run()
    before = cluster.get("deployments", "shop", "web")
    for value in ("2", "3"):
        change(cluster, value)
        assert cluster.run("--max-rollouts", "0").actions() == {WEB: "deferred"}
    assert template_hash(cluster.get("deployments", "shop", "web")) == template_hash(before)
    cluster.edit("deployments", "shop", "web", {"metadata": {"annotations": {WINDOW: open_window()}}})
    cluster.clear_log()
    result = cluster.run()
    assert result.actions() == {WEB: "rollout"}
    patches = [e for e in cluster.writes() if e.method == "PATCH"]
    assert len(patches) == 1  # one patch, the rollout (only Events besides)
    assert template_hash(cluster.get("deployments", "shop", "web")) == row(result)["hash"]
    assert cluster.run().actions() == {WEB: "in-sync"}
    assert len(events(cluster, "ConfigChanged")) == 1


def test_a_window_deferral_does_not_count_against_max_rollouts(cluster: Backend) -> None:
    app(cluster, "a-held", annotations={**WATCH, WINDOW: closed_window()})
    cluster.add(deployment("b-open", env_from("configmap", "app")))
    cluster.run()
    change(cluster, "2")
    result = cluster.run("--max-rollouts", "1")
    assert result.actions() == {"Deployment/shop/a-held": "deferred", "Deployment/shop/b-open": "rollout"}


def test_a_malformed_annotation_skips_the_workload_naming_it_and_writes_nothing(cluster: Backend) -> None:
    app(cluster)
    cluster.run()
    cluster.edit("deployments", "shop", "web", {"metadata": {"annotations": {WINDOW: "Mon-Fri 25:00-06:00"}}})
    cluster.clear_log()
    result = cluster.run()
    found = row(result)
    assert found["action"] == "skipped" and result.code == 0
    assert found["reason"].startswith(f"malformed {WINDOW} 'Mon-Fri 25:00-06:00': window 1")
    assert "25:00" in found["reason"] and cluster.writes() == []
    assert workload_gets(cluster) == []  # found from the metadata-only list


# --- rollout health ----------------------------------------------------------------------------------


def rolled(
    cluster: Backend, *args: str, resource: str = "deployments", kind: str = "Deployment"
) -> dict[str, Any]:
    app(cluster, kind=kind)
    cluster.run(*args)
    change(cluster, "2")
    result = cluster.run(*args)
    assert row(result)["action"] == "rollout", result.report
    return record(cluster, resource)


def stall(cluster: Backend, generation: int) -> None:
    def set_status(obj: dict[str, Any]) -> None:
        obj["status"] = {
            "observedGeneration": generation,
            "replicas": 2,
            "updatedReplicas": 1,
            "conditions": [
                {
                    "type": "Progressing",
                    "status": "False",
                    "reason": "ProgressDeadlineExceeded",
                    "lastTransitionTime": "2020-01-01T00:00:00Z",
                }
            ],
        }

    cluster.mutate("deployments", "shop", "web", set_status)


def complete(cluster: Backend, generation: int) -> None:
    def set_status(obj: dict[str, Any]) -> None:
        obj["status"] = {
            "observedGeneration": generation,
            "replicas": 1,
            "updatedReplicas": 1,
            "readyReplicas": 1,
            "availableReplicas": 1,
        }

    cluster.mutate("deployments", "shop", "web", set_status)


def test_a_rollout_records_generation_time_and_changed_names_in_the_same_patch(cluster: Backend) -> None:
    recorded = rolled(cluster)
    obj = cluster.get("deployments", "shop", "web")
    assert recorded["g"] == obj["metadata"]["generation"]
    assert recorded["c"] == ["configmap/app"] and recorded["s"] == "progressing"
    assert abs(
        datetime.strptime(recorded["t"], "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC) - datetime.now(UTC)
    ) < (timedelta(minutes=1))
    assert "2" not in json.dumps(recorded["c"])  # names only, never values


@pytest.mark.slow
@pytest.mark.sim_only("a status set by hand: the simulator runs no controller")
def test_a_stalled_rollout_is_reported_with_one_event_across_passes_and_fails_only_on_request(
    cluster: Backend,
) -> None:
    recorded = rolled(cluster)
    stall(cluster, recorded["g"])
    template = template_hash(cluster.get("deployments", "shop", "web"))
    cluster.clear_log()
    first = cluster.run()
    assert first.code == 0
    assert (row(first)["action"], row(first)["rollout_status"]) == ("in-sync", "stalled")
    summary = first.report["summary"]
    assert summary["stalled"] == 1 and summary["in-sync"] == 1 and summary["workloads"] == 1
    patches = [json.loads(e.body) for e in cluster.writes() if e.method == "PATCH"]
    assert len(patches) == 1 and all(op["path"].startswith("/metadata/") for op in patches[0])
    assert template_hash(cluster.get("deployments", "shop", "web")) == template
    assert record(cluster)["s"] == "stalled"
    second = cluster.run()
    assert row(second)["rollout_status"] == "stalled" and second.code == 0
    (event,) = events(cluster, "RolloutStalled")
    assert event["type"] == "Warning" and "configmap/app" in event["message"]
    assert re.search(r"has stalled for \d+s \(Deployment shop/web\)$", event["message"]), event["message"]
    failing = cluster.run("--fail-on-stalled")
    assert failing.code == 1 and failing.report["summary"]["stalled"] == 1
    assert cluster.cli("plan", "-o", "json", "--fail-on-stalled").code == 1
    assert len(events(cluster, "RolloutStalled")) == 1


@pytest.mark.sim_only("a status set by hand: the simulator runs no controller")
def test_a_dry_run_reports_the_status_and_writes_nothing(cluster: Backend) -> None:
    recorded = rolled(cluster)
    stall(cluster, recorded["g"])
    cluster.clear_log()
    result = cluster.run("--dry-run")
    assert row(result)["rollout_status"] == "stalled" and cluster.writes() == []
    assert record(cluster)["s"] == "progressing" and events(cluster, "RolloutStalled") == []


@pytest.mark.sim_only("a status set by hand: the simulator runs no controller")
def test_a_complete_rollout_is_recorded_once_and_its_status_not_read_again(cluster: Backend) -> None:
    recorded = rolled(cluster)
    cluster.clear_log()
    progressing = cluster.run()
    assert row(progressing)["rollout_status"] == "progressing" and cluster.writes() == []
    assert len(workload_gets(cluster)) == 1
    complete(cluster, recorded["g"])
    done = cluster.run()
    assert row(done)["rollout_status"] == "complete" and row(done)["action"] == "in-sync"
    assert record(cluster)["s"] == "complete"
    cluster.clear_log()
    steady = cluster.run()
    assert "rollout_status" not in row(steady) and row(steady)["action"] == "in-sync"
    assert workload_gets(cluster) == [] and cluster.writes() == []


def test_a_steady_pass_without_an_unfinished_rollout_reads_no_workload(cluster: Backend) -> None:
    app(cluster)
    cluster.run()
    cluster.clear_log()
    result = cluster.run()
    assert "rollout_status" not in row(result) and result.report["summary"]["stalled"] == 0
    assert workload_gets(cluster) == []


@pytest.mark.sim_only("a status set by hand: the simulator runs no controller")
def test_a_new_change_while_stalled_still_rolls_and_replaces_the_record(cluster: Backend) -> None:
    recorded = rolled(cluster)
    stall(cluster, recorded["g"])
    cluster.run()
    change(cluster, "3")
    result = cluster.run()
    assert row(result)["action"] == "rollout" and "rollout_status" not in row(result)
    replaced = record(cluster)
    assert replaced["s"] == "progressing" and replaced["g"] > recorded["g"]


@pytest.mark.sim_only("a rollout that never completes: a real StatefulSet controller completes it")
def test_a_statefulset_that_never_completes_is_stalled_by_the_rollout_deadline(cluster: Backend) -> None:
    config = cluster.config("rolloutDeadline: 1s\n")
    rolled(cluster, "--config", str(config), resource="statefulsets", kind="StatefulSet")
    time.sleep(1.5)
    result = cluster.run("--config", str(config))
    assert row(result)["rollout_status"] == "stalled" and result.report["summary"]["stalled"] == 1
    (event,) = events(cluster, "RolloutStalled")
    assert event["involvedObject"]["kind"] == "StatefulSet"
    assert record(cluster, "statefulsets")["s"] == "stalled"


@pytest.mark.sim_only("a status set by hand: the simulator runs no controller")
def test_explain_shows_the_window_and_the_recorded_rollout(cluster: Backend) -> None:
    recorded = rolled(cluster)
    stall(cluster, recorded["g"])
    result = cluster.cli("explain", "deployment/web", "-n", "shop", "-o", "json")
    doc = json.loads(result.stdout)
    assert doc["restart_window"]["windows"] == "always open" and doc["restart_window"]["open_now"] is True
    assert doc["rollout"]["status"] == "stalled" and doc["rollout"]["changed"] == ["configmap/app"]
    text = cluster.cli("explain", "deployment/web", "-n", "shop").stdout
    assert "restart window: always open" in text and "status stalled" in text


@pytest.mark.sim_only("a status set by hand: the simulator runs no controller")
def test_a_pass_that_refreshes_a_workload_whose_rollout_completed_leaves_a_stamp_the_next_pass_trusts(
    cluster: Backend,
) -> None:
    """Found on the real server: the refresh patch stamped the generation it predicted, then a second
    patch in the same pass (the record's move to `complete`) bumped a Deployment's generation past it, so
    every next pass read the workload in full and refreshed it once more."""
    rolled(cluster)

    def new_image_rolled_out(obj: dict[str, Any]) -> None:
        obj["spec"]["template"]["spec"]["containers"][0]["image"] = "app:2"

    cluster.mutate("deployments", "shop", "web", new_image_rolled_out)
    complete(cluster, cluster.get("deployments", "shop", "web")["metadata"]["generation"])
    refreshed = cluster.run()
    assert row(refreshed)["action"] == "refresh" and row(refreshed)["rollout_status"] == "complete"
    cluster.clear_log()
    steady = cluster.run()
    assert row(steady)["action"] == "in-sync", row(steady)
    assert workload_gets(cluster) == [] and cluster.writes() == []
    assert record(cluster)["s"] == "complete"
