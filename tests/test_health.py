"""Rollout health: the decision table of each kind, after kubectl rollout status and the controllers."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reconcile.model.health import RolloutStatus, rollout_status
from reconcile.model.kinds import Health
from reconcile.model.presets import KNOWN_KINDS, PRESET_KINDS

COMPLETE, PROGRESSING, STALLED = RolloutStatus.COMPLETE, RolloutStatus.PROGRESSING, RolloutStatus.STALLED
ROLLED_AT = datetime(2026, 3, 2, 12, 0, tzinfo=UTC)
DEADLINE = timedelta(minutes=10)
EARLY = timedelta(minutes=1)
LATE = timedelta(minutes=11)
WRITTEN = 2  # the generation our patch produced

Obj = dict[str, Any]


def status_of(
    kind: str, obj: Obj, elapsed: timedelta = EARLY, written: int | None = WRITTEN
) -> RolloutStatus:
    return rollout_status(
        kind, obj, written_generation=written, rolled_at=ROLLED_AT, now=ROLLED_AT + elapsed, deadline=DEADLINE
    )


def workload(spec: Obj | None = None, generation: int = WRITTEN, **status: Any) -> Obj:
    return {"metadata": {"name": "x", "generation": generation}, "spec": spec or {}, "status": status}


def progressing_condition(reason: str) -> list[Obj]:
    return [
        {"type": "Available", "status": "True", "reason": "MinimumReplicasAvailable"},
        {"type": "Progressing", "status": "False", "reason": reason},
    ]


# --- Deployment ---------------------------------------------------------------------------------------

ROLLED_DEPLOYMENT = {
    "observedGeneration": 2,
    "replicas": 3,
    "updatedReplicas": 3,
    "readyReplicas": 3,
    "availableReplicas": 3,
}


def deployment(spec: Obj | None = None, generation: int = WRITTEN, **changes: Any) -> Obj:
    """A rolled-out Deployment of 3 replicas with `spec` and status `changes` applied (None removes a key)."""
    full_spec = {k: v for k, v in {"replicas": 3, **(spec or {})}.items() if v is not None}
    status = {k: v for k, v in {**ROLLED_DEPLOYMENT, **changes}.items() if v is not None}
    return workload(full_spec, generation, **status)


@pytest.mark.parametrize(
    ("obj", "elapsed", "expected"),
    [
        (deployment(), EARLY, COMPLETE),
        (deployment(conditions=progressing_condition("NewReplicaSetAvailable")), EARLY, COMPLETE),
        # The controller has not seen our change yet: the counters describe the old template.
        (deployment(observedGeneration=1), EARLY, PROGRESSING),
        (deployment(observedGeneration=None), EARLY, PROGRESSING),
        (deployment(observedGeneration=3), EARLY, COMPLETE),  # a later change, also rolled out
        (deployment(updatedReplicas=2), EARLY, PROGRESSING),
        (deployment(replicas=4), EARLY, PROGRESSING),  # an old replica is still terminating
        (deployment(availableReplicas=2), EARLY, PROGRESSING),
        (deployment(readyReplicas=2, availableReplicas=3), EARLY, PROGRESSING),
        # Stalled is the Deployment's own verdict (progressDeadlineSeconds), not kube-rehash's deadline.
        (
            deployment(updatedReplicas=1, conditions=progressing_condition("ProgressDeadlineExceeded")),
            EARLY,
            STALLED,
        ),
        (deployment(updatedReplicas=1), LATE, PROGRESSING),
        # A deadline condition from before our change was observed is stale.
        (
            deployment(observedGeneration=1, conditions=progressing_condition("ProgressDeadlineExceeded")),
            EARLY,
            PROGRESSING,
        ),
        # spec.replicas defaults to 1.
        (
            deployment(
                {"replicas": None}, replicas=1, updatedReplicas=1, readyReplicas=1, availableReplicas=1
            ),
            EARLY,
            COMPLETE,
        ),
        (
            deployment(
                {"replicas": None}, replicas=1, updatedReplicas=0, readyReplicas=1, availableReplicas=1
            ),
            EARLY,
            PROGRESSING,
        ),
        # Zero replicas: nothing to restart once the change is observed (the API omits zero counters).
        (workload({"replicas": 0}, observedGeneration=2), EARLY, COMPLETE),
        (workload({"replicas": 0}, observedGeneration=1), LATE, PROGRESSING),
        # Paused: the rollout happens on resume, so it waits for a person and is never stalled.
        (deployment({"paused": True}, updatedReplicas=0, replicas=3), LATE, PROGRESSING),
        (
            deployment(
                {"paused": True},
                updatedReplicas=0,
                conditions=progressing_condition("ProgressDeadlineExceeded"),
            ),
            LATE,
            PROGRESSING,
        ),
        (deployment({"paused": True}, conditions=progressing_condition("DeploymentPaused")), EARLY, COMPLETE),
    ],
)
def test_deployment(obj: Obj, elapsed: timedelta, expected: RolloutStatus) -> None:
    assert status_of("Deployment", obj, elapsed) is expected


def test_without_our_generation_the_objects_own_generation_must_be_observed() -> None:
    assert (
        status_of("Deployment", deployment(generation=3, observedGeneration=2), written=None) is PROGRESSING
    )
    assert status_of("Deployment", deployment(generation=3, observedGeneration=3), written=None) is COMPLETE


def test_a_recreated_object_younger_than_our_write_needs_only_its_own_generation_observed() -> None:
    obj = deployment(generation=1, observedGeneration=1)

    assert status_of("Deployment", obj, written=5) is COMPLETE


# --- StatefulSet --------------------------------------------------------------------------------------


def statefulset(strategy: Obj | None = None, replicas: int | None = 3, **changes: Any) -> Obj:
    status = {
        "observedGeneration": 2,
        "replicas": 3,
        "readyReplicas": 3,
        "updatedReplicas": 3,
        "currentRevision": "web-new",
        "updateRevision": "web-new",
        **changes,
    }
    spec: Obj = {"updateStrategy": strategy or {"type": "RollingUpdate", "rollingUpdate": {"partition": 0}}}
    if replicas is not None:
        spec["replicas"] = replicas
    return workload(spec, **{k: v for k, v in status.items() if v is not None})


PARTITION_2 = {"type": "RollingUpdate", "rollingUpdate": {"partition": 2}}
ON_DELETE = {"type": "OnDelete"}


@pytest.mark.parametrize(
    ("obj", "elapsed", "expected"),
    [
        (statefulset(), EARLY, COMPLETE),
        (statefulset({"type": "RollingUpdate"}), EARLY, COMPLETE),  # no rollingUpdate: partition 0
        (statefulset(currentRevision="web-old", updatedReplicas=1), EARLY, PROGRESSING),
        (statefulset(currentRevision="web-old", updatedReplicas=1), LATE, STALLED),
        # Every replica updated and ready; the controller moves currentRevision on its next sync.
        (statefulset(currentRevision="web-old"), EARLY, COMPLETE),
        (statefulset(readyReplicas=2), EARLY, PROGRESSING),
        (statefulset(readyReplicas=2), LATE, STALLED),
        (statefulset(observedGeneration=1), EARLY, PROGRESSING),
        (statefulset(observedGeneration=1), LATE, STALLED),  # the controller never saw the change
        (statefulset(observedGeneration=None), LATE, STALLED),
        # A partition: only ordinals >= 2 are updated, so one of three replicas.
        (statefulset(PARTITION_2, currentRevision="web-old", updatedReplicas=1), EARLY, COMPLETE),
        (statefulset(PARTITION_2, currentRevision="web-old", updatedReplicas=0), EARLY, PROGRESSING),
        (statefulset(PARTITION_2, currentRevision="web-old", updatedReplicas=0), LATE, STALLED),
        (
            statefulset(PARTITION_2, currentRevision="web-old", updatedReplicas=1, readyReplicas=2),
            EARLY,
            PROGRESSING,
        ),
        (
            statefulset(
                {"type": "RollingUpdate", "rollingUpdate": {"partition": 5}},
                currentRevision="web-old",
                updatedReplicas=0,
            ),
            LATE,
            COMPLETE,  # a partition above the replica count holds every pod back
        ),
        # OnDelete: pods change only when a person deletes them; waiting for that is never a stall.
        (statefulset(ON_DELETE, currentRevision="web-old", updatedReplicas=0), EARLY, PROGRESSING),
        (statefulset(ON_DELETE, currentRevision="web-old", updatedReplicas=0), LATE, PROGRESSING),
        (statefulset(ON_DELETE, currentRevision="web-old", updatedReplicas=3), LATE, COMPLETE),
        # spec.replicas defaults to 1; zero replicas is complete once observed.
        (
            statefulset(replicas=None, readyReplicas=1, updatedReplicas=1, currentRevision="web-old"),
            EARLY,
            COMPLETE,
        ),
        (statefulset(replicas=None, readyReplicas=0), EARLY, PROGRESSING),
        (workload({"replicas": 0}, observedGeneration=2), EARLY, COMPLETE),
    ],
)
def test_statefulset(obj: Obj, elapsed: timedelta, expected: RolloutStatus) -> None:
    assert status_of("StatefulSet", obj, elapsed) is expected


def test_stalled_only_strictly_past_the_deadline() -> None:
    obj = statefulset(readyReplicas=2)

    assert status_of("StatefulSet", obj, DEADLINE) is PROGRESSING
    assert status_of("StatefulSet", obj, DEADLINE + timedelta(seconds=1)) is STALLED


# --- DaemonSet ----------------------------------------------------------------------------------------


def daemonset(strategy: str = "RollingUpdate", **changes: Any) -> Obj:
    status = {
        "observedGeneration": 2,
        "desiredNumberScheduled": 4,
        "currentNumberScheduled": 4,
        "updatedNumberScheduled": 4,
        "numberReady": 4,
        "numberAvailable": 4,
        **changes,
    }
    return workload(
        {"updateStrategy": {"type": strategy}}, **{k: v for k, v in status.items() if v is not None}
    )


@pytest.mark.parametrize(
    ("obj", "elapsed", "expected"),
    [
        (daemonset(), EARLY, COMPLETE),
        (daemonset(updatedNumberScheduled=3), EARLY, PROGRESSING),
        (daemonset(updatedNumberScheduled=3), LATE, STALLED),
        (daemonset(numberAvailable=3), EARLY, PROGRESSING),
        (daemonset(numberAvailable=3), LATE, STALLED),
        (daemonset(observedGeneration=1), EARLY, PROGRESSING),
        (daemonset(observedGeneration=1), LATE, STALLED),
        (workload({}, observedGeneration=2), EARLY, COMPLETE),  # no node should run it
        (daemonset("OnDelete", updatedNumberScheduled=0), LATE, PROGRESSING),
        (daemonset("OnDelete"), EARLY, COMPLETE),
    ],
)
def test_daemonset(obj: Obj, elapsed: timedelta, expected: RolloutStatus) -> None:
    assert status_of("DaemonSet", obj, elapsed) is expected


# --- Argo Rollout -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "elapsed", "expected"),
    [
        ({"phase": "Healthy", "observedGeneration": 2}, EARLY, COMPLETE),
        ({"phase": "Degraded", "observedGeneration": 2}, EARLY, STALLED),
        ({"phase": "Progressing", "observedGeneration": 2}, EARLY, PROGRESSING),
        ({"phase": "Progressing", "observedGeneration": 2}, LATE, PROGRESSING),  # its own deadline applies
        ({"phase": "Paused", "observedGeneration": 2}, LATE, PROGRESSING),
        ({"observedGeneration": 2}, EARLY, PROGRESSING),
        # A phase from before our change was observed is stale.
        ({"phase": "Healthy", "observedGeneration": 1}, EARLY, PROGRESSING),
        ({"phase": "Degraded", "observedGeneration": 1}, EARLY, PROGRESSING),
        # Older Argo Rollouts write observedGeneration as a string: a number, or a hash of the spec.
        ({"phase": "Healthy", "observedGeneration": "1"}, EARLY, PROGRESSING),
        ({"phase": "Healthy", "observedGeneration": "2"}, EARLY, COMPLETE),
        ({"phase": "Healthy", "observedGeneration": "7d9f8c6b5"}, EARLY, COMPLETE),
        ({"phase": "Healthy"}, EARLY, COMPLETE),
    ],
)
def test_argo_rollout(status: Obj, elapsed: timedelta, expected: RolloutStatus) -> None:
    assert status_of("Rollout", workload({"replicas": 3}, **status), elapsed) is expected


RESTART_AT = "2026-03-01T12:00:00Z"


@pytest.mark.parametrize(
    ("restarted_at", "expected"),
    [
        (None, PROGRESSING),  # the controller is still evicting the pods started before spec.restartAt
        ("2026-02-01T08:00:00Z", PROGRESSING),  # an earlier restart's record
        (RESTART_AT, COMPLETE),
        ("2026-03-01T13:00:00+01:00", COMPLETE),  # the same instant, another offset
    ],
)
def test_an_argo_rollout_restarting_through_restart_at_completes_when_the_restart_is_recorded(
    restarted_at: str | None, expected: RolloutStatus
) -> None:
    status = {"phase": "Healthy", "observedGeneration": "2"}
    if restarted_at is not None:
        status["restartedAt"] = restarted_at
    assert status_of("Rollout", workload({"replicas": 3, "restartAt": RESTART_AT}, **status)) is expected


# --- every kind ---------------------------------------------------------------------------------------


def test_each_kind_entry_names_its_rules_and_only_kinds_with_rules_are_watched() -> None:
    assert {k.kind: k.health for k in KNOWN_KINDS} == {
        "Deployment": Health.DEPLOYMENT,
        "StatefulSet": Health.STATEFULSET,
        "DaemonSet": Health.DAEMONSET,
        "CronJob": None,
        "Rollout": Health.ROLLOUT,
        "CloneSet": Health.DEPLOYMENT,
        "Cluster": Health.READY,
        "Elasticsearch": None,
        "StrimziPodSet": None,
        "PostgresCluster": None,
        "PDGroup": None,
        "TiKVGroup": None,
        "TiDBGroup": None,
        "TiFlashGroup": None,
        "Service": Health.READY,
    }
    assert [k.kind for k in KNOWN_KINDS if k.watched] == [
        "Deployment",
        "StatefulSet",
        "DaemonSet",
        "Rollout",
        *(k.kind for k in PRESET_KINDS),
    ]
    with pytest.raises(ValueError, match="'Widget' is not a valid Health"):
        status_of("Widget", workload())


def test_the_statuses_are_the_report_strings() -> None:
    assert [str(s) for s in RolloutStatus] == ["complete", "progressing", "stalled", "not-effective"]


def test_a_malformed_object_is_progressing_not_an_error() -> None:
    obj: Obj = {"metadata": None, "spec": "x", "status": {"observedGeneration": True, "conditions": "x"}}

    for kind in tuple(Health):
        assert status_of(kind, obj) is PROGRESSING


counters = st.one_of(st.none(), st.integers(0, 4))


@given(
    kind=st.sampled_from(tuple(Health)),
    status=st.fixed_dictionaries(
        {},
        optional={
            name: counters
            for name in (
                "observedGeneration",
                "replicas",
                "updatedReplicas",
                "readyReplicas",
                "availableReplicas",
                "desiredNumberScheduled",
                "updatedNumberScheduled",
                "numberAvailable",
            )
        }
        | {"phase": st.sampled_from(["Healthy", "Degraded", "Progressing", "Paused"])},
    ),
    replicas=counters,
    strategy=st.sampled_from(["RollingUpdate", "OnDelete"]),
    elapsed=st.timedeltas(min_value=timedelta(0), max_value=timedelta(hours=1)),
)
def test_only_statefulsets_daemonsets_and_ready_conditions_stall_on_our_clock_only_past_the_deadline(
    kind: str, status: Obj, replicas: int | None, strategy: str, elapsed: timedelta
) -> None:
    spec: Obj = {"updateStrategy": {"type": strategy}}
    if replicas is not None:
        spec["replicas"] = replicas
    obj = workload(spec, **{k: v for k, v in status.items() if v is not None})

    early, late = status_of(kind, obj, min(elapsed, DEADLINE)), status_of(kind, obj, elapsed + LATE)

    if kind in ("Deployment", "Rollout"):
        assert early is late  # their own controllers decide; our clock plays no part
    else:
        assert early is not STALLED
        assert (early is COMPLETE) is (late is COMPLETE)  # completeness never depends on the clock
        if early is PROGRESSING:
            on_delete = strategy == "OnDelete" and kind != "Ready"  # a Ready condition knows no strategy
            assert late is (PROGRESSING if on_delete else STALLED)
