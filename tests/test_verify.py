"""A patch is not a restart until the kind's own evidence says so (model/verify.py, model/rollouts.py): each
watched rollout is judged from what the rollout-health check read, and a restart without its evidence by the
rollout deadline is `not-effective` with its likely cause, recorded once, never rolled again."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from reconcile.model.bookkeeping import (
    COMPLETE,
    NOT_EFFECTIVE,
    PROGRESSING,
    STALLED,
    Bookkeeping,
    RolloutRecord,
)
from reconcile.model.health import RolloutStatus
from reconcile.model.kinds import DEPLOYMENT, ROLLOUT, STATEFULSET, Health, Kind
from reconcile.model.knobs import Evidence, Knob, PodSelection
from reconcile.model.pods import Pod
from reconcile.model.rollouts import RolloutCheck, check, not_effective_message, record_move
from reconcile.model.verify import Cause, Verdict, describe
from reconcile.model.workload import Listed
from tests.workloads import DISCOVERY

AT = datetime(2026, 11, 21, 12, 0, tzinfo=UTC)
DEADLINE = timedelta(minutes=10)
EARLY, LATE = AT + timedelta(minutes=2), AT + timedelta(minutes=11)
OURS = "v1:ours"
RECORD = RolloutRecord(5, AT, ("configmap/app",), PROGRESSING)
OBSERVED = {"observedGeneration": 5}
DONE = {**OBSERVED, "replicas": 2, "updatedReplicas": 2, "availableReplicas": 2, "readyReplicas": 2}
WIDGET = Kind(
    "example.kube-rehash.io",
    "v1",
    "widgets",
    kind="Widget",
    template=None,
    annotations="/metadata/annotations",
    knob=Knob.TIMESTAMP,
    knob_key="example.io/restartedAt",
    pod_selection=PodSelection(labels="app={name}"),
)


def listed(kind: Kind = DEPLOYMENT, record: RolloutRecord = RECORD, config_hash: str = OURS) -> Listed:
    return Listed(kind, "shop", "web", "w1", DISCOVERY, Bookkeeping(config_hash, rollout=record))


def view(status: dict[str, Any], restarted: str | None = OURS, **spec: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"metadata": {"generation": 5}, "spec": {"replicas": 2, **spec}, "status": status}
    if restarted is not None:
        out["restarted"] = restarted
    if spec.get("paused") is True:
        out["paused"] = True
    return out


def judged(
    subject: Listed, obj: dict[str, Any], now: datetime, pods: list[Pod] | None = None
) -> RolloutCheck:
    found = check(subject, obj, now=now, deadline=DEADLINE, pods=pods)
    assert found is not None
    return found


def pod(name: str, created: datetime, terminating: bool = False) -> Pod:
    return Pod(name, created, terminating)


# --- built-in kinds: their status rules, and the template still holding our hash --------------------------


def test_a_deployment_whose_rollout_completed_with_our_hash_in_its_template_is_effective() -> None:
    found = judged(listed(), view(DONE), EARLY)
    assert (found.status, found.verdict) == (RolloutStatus.COMPLETE, Verdict(True))
    assert record_move(found) == COMPLETE


def test_a_paused_deployment_is_progressing_until_the_deadline_then_not_effective_because_it_is_held() -> (
    None
):
    status = {**OBSERVED, "replicas": 2, "updatedReplicas": 0, "readyReplicas": 2, "availableReplicas": 2}
    early, late = (
        judged(listed(), view(status, paused=True), EARLY),
        judged(listed(), view(status, paused=True), LATE),
    )
    assert early.status is RolloutStatus.PROGRESSING and record_move(early) is None
    assert (late.status, late.cause) == (RolloutStatus.NOT_EFFECTIVE, Cause.HELD)
    assert record_move(late) == NOT_EFFECTIVE


def test_a_template_reverted_by_its_owner_completes_by_the_status_rules_but_is_not_effective() -> None:
    reverted = view(DONE, restarted="v1:the-owners")
    assert judged(listed(), reverted, EARLY).status is RolloutStatus.PROGRESSING  # nothing concluded yet
    late = judged(listed(), reverted, LATE)
    assert (late.status, late.cause) == (RolloutStatus.NOT_EFFECTIVE, Cause.REVERTED)
    assert judged(listed(), view(DONE, restarted=None), LATE).cause is Cause.REVERTED  # stripped: the same


def test_a_change_its_controller_never_observed_is_ignored() -> None:
    late = judged(listed(), view({"observedGeneration": 4, "replicas": 2}), LATE)
    assert (late.status, late.cause) == (RolloutStatus.NOT_EFFECTIVE, Cause.IGNORED)


def test_a_slow_or_stuck_rollout_stays_what_its_rules_say_past_the_deadline() -> None:
    slow = {**OBSERVED, "replicas": 3, "updatedReplicas": 1, "readyReplicas": 2}
    assert judged(listed(), view(slow), LATE).status is RolloutStatus.PROGRESSING
    stuck = {"observedGeneration": 5, "replicas": 1, "updatedReplicas": 1, "readyReplicas": 0}
    found = judged(listed(STATEFULSET), view(stuck, replicas=1), LATE)
    assert found.status is RolloutStatus.STALLED and record_move(found) == STALLED


def test_a_superseded_template_hash_is_not_a_revert() -> None:
    subject = Listed(
        DEPLOYMENT, "shop", "web", "w1", DISCOVERY, Bookkeeping(OURS, rollout=RECORD, superseded="v1:s")
    )
    assert judged(subject, view(DONE, restarted="v1:s"), LATE).status is RolloutStatus.COMPLETE


def test_a_workload_ref_rollout_restarted_through_restart_at_is_not_reverted_for_lack_of_a_template() -> None:
    status = {"phase": "Healthy", "observedGeneration": 5, "restartedAt": "2026-11-21T12:00:00Z"}
    found = judged(listed(ROLLOUT), view(status, restarted=None, restartAt="2026-11-21T12:00:00Z"), LATE)
    assert found.status is RolloutStatus.COMPLETE


# --- custom kinds: their pods, a status field -------------------------------------------------------------


def test_a_custom_kind_is_not_judged_without_its_pods_and_is_complete_when_every_pod_is_newer() -> None:
    subject = listed(WIDGET, config_hash=OURS)
    assert check(subject, view({}, restarted="2026-11-21T12:00:00Z"), now=EARLY, deadline=DEADLINE) is None
    new = [
        pod("a", AT + timedelta(seconds=5)),
        pod("b", AT + timedelta(seconds=9)),
        pod("old", AT, terminating=True),
    ]
    found = judged(subject, view({}, restarted="2026-11-21T12:00:00Z"), EARLY, new)
    assert (found.status, found.verdict) == (RolloutStatus.COMPLETE, Verdict(True))


def test_pods_that_started_before_the_restart_make_it_not_effective_at_the_deadline_only() -> None:
    subject = listed(WIDGET)
    pods = [pod("a", AT - timedelta(hours=1)), pod("b", AT + timedelta(seconds=5))]
    obj = view({}, restarted="2026-11-21T12:00:00Z")
    assert judged(subject, obj, EARLY, pods).status is RolloutStatus.PROGRESSING
    late = judged(subject, obj, LATE, pods)
    assert (late.status, late.cause) == (RolloutStatus.NOT_EFFECTIVE, Cause.NOT_RESTARTED)
    assert judged(subject, obj, LATE, []).cause is Cause.NOT_RESTARTED  # no pod at all proves nothing
    assert judged(subject, view({}, restarted=None), LATE, pods).cause is Cause.REVERTED  # our time is gone


def test_a_set_that_reports_its_pods_updated_while_they_are_the_old_pods_was_updated_in_place() -> None:
    in_place = Kind(
        **{
            **WIDGET.__dict__,
            "knob": Knob.HASH,
            "knob_key": None,
            "health": Health.DEPLOYMENT,
            "evidence": Evidence.PODS,
        }
    )
    old = [pod("a", AT - timedelta(hours=1)), pod("b", AT - timedelta(hours=1))]
    late = judged(listed(in_place), view(DONE), LATE, old)
    assert (late.status, late.cause) == (RolloutStatus.NOT_EFFECTIVE, Cause.IN_PLACE)


def test_a_one_shot_annotation_its_operator_never_removed_was_ignored() -> None:
    one_shot = Kind(
        **{**WIDGET.__dict__, "knob": Knob.ONE_SHOT, "knob_key": "strimzi.io/manual-rolling-update"}
    )
    old = [pod("a", AT - timedelta(hours=1))]
    assert judged(listed(one_shot), view({}, restarted="true"), LATE, old).cause is Cause.IGNORED
    assert judged(listed(one_shot), view({}, restarted=None), LATE, old).cause is Cause.NOT_RESTARTED


@pytest.mark.parametrize(
    ("restarted_at", "status"),
    [
        ("2026-11-21T12:00:00Z", RolloutStatus.COMPLETE),
        ("2026-11-21T11:00:00Z", RolloutStatus.NOT_EFFECTIVE),
        (None, RolloutStatus.NOT_EFFECTIVE),
    ],
)
def test_a_status_time_at_or_after_the_restart_is_its_evidence(
    restarted_at: str | None, status: RolloutStatus
) -> None:
    timed = Kind(
        **{
            **WIDGET.__dict__,
            "knob": Knob.FIELD,
            "knob_key": None,
            "knob_field": "spec.restartAt",
            "pod_selection": None,
            "evidence": Evidence.STATUS_TIME,
            "evidence_field": "status.restartedAt",
        }
    )
    found = judged(listed(timed), view({} if restarted_at is None else {"restartedAt": restarted_at}), LATE)
    assert found.status is status
    assert found.cause is (None if status is RolloutStatus.COMPLETE else Cause.IGNORED)


def test_a_status_field_that_moved_since_the_restart_is_its_evidence() -> None:
    revisions = Kind(
        **{
            **WIDGET.__dict__,
            "knob": Knob.HASH,
            "knob_key": None,
            "pod_selection": None,
            "evidence": Evidence.STATUS_CHANGE,
            "evidence_field": "status.latestCreatedRevisionName",
        }
    )
    record = RolloutRecord(5, AT, ("configmap/app",), PROGRESSING, before="web-00001")
    moved = judged(listed(revisions, record), view({"latestCreatedRevisionName": "web-00002"}), EARLY)
    assert moved.status is RolloutStatus.COMPLETE
    same = judged(listed(revisions, record), view({"latestCreatedRevisionName": "web-00001"}), LATE)
    assert (same.status, same.cause) == (RolloutStatus.NOT_EFFECTIVE, Cause.IGNORED)


# --- the record: once, never twice -------------------------------------------------------------------------


def test_a_restart_not_effective_is_recorded_once_and_later_completes_when_its_evidence_comes() -> None:
    status = {**OBSERVED, "replicas": 2, "updatedReplicas": 0, "readyReplicas": 2}
    already = RolloutRecord(5, AT, ("configmap/app",), NOT_EFFECTIVE, "held")
    assert record_move(judged(listed(record=already), view(status, paused=True), LATE)) is None
    assert record_move(judged(listed(record=already), view(DONE), LATE)) == COMPLETE


def test_the_event_names_the_sources_the_time_and_the_cause_never_a_value() -> None:
    status = {**OBSERVED, "replicas": 2, "updatedReplicas": 0}
    found = judged(listed(), view(status, paused=True), LATE)
    assert not_effective_message(listed(), found, LATE) == (
        "the restart kube-rehash started at 2026-11-21T12:00:00Z when configmap/app changed has not taken "
        "effect after 11m: it is paused: its controller replaces no pods until it is resumed "
        "(Deployment shop/web)"
    )


def test_how_a_restart_was_verified_reads_as_words() -> None:
    assert describe(None) == "not verified"
    assert describe(Verdict(True)) == "effective"
    assert describe(Verdict(False, Cause.IN_PLACE)).startswith("its pods were updated in place")
