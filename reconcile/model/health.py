"""Rollout health: did the restart kube-rehash started finish, is it still going, or is it stuck?

A config change that crash-loops the new pods is the failure a config reloader causes most often, and nobody
watches a CronJob's rollouts. So until a rollout we started has finished, each pass reads the workload's
status and reports `complete`, `progressing` or `stalled` (`stalled` raises an Event and, with
`--fail-on-stalled`, fails the pass). This module is the pure decision over one object's
`metadata.generation`, `spec` and `status`; reading the object and remembering the rollout are the
caller's.

The rules follow `kubectl rollout status` (k8s.io/kubectl/pkg/polymorphichelpers/rollout_status.go) and the
controllers' status semantics:
- Every kind: nothing counts before the controller observed our change (`status.observedGeneration` at least
  the generation our patch produced; the object's own generation when ours is unknown, or when the object
  is younger than our write because it was re-created). Absent counters are 0, `spec.replicas` defaults to 1.
- Deployment: `stalled` when its `Progressing` condition has reason `ProgressDeadlineExceeded` (the
  Deployment's own `progressDeadlineSeconds`); `complete` when the updated replicas reach the desired
  count, no old replica is left, every updated replica is available and the desired count is ready (0
  replicas: at once). A paused Deployment is never `stalled`: it waits for a person, and rolls on resume.
- StatefulSet: `complete` when the desired count is ready and, with RollingUpdate, the update revision is
  current or every replica is updated; with a `partition` P, the replicas from ordinal P up are updated
  (`replicas - P`). With OnDelete pods change only when deleted: `complete` once every replica is updated.
- DaemonSet: `complete` when every node that should run the pod runs an updated, available one.
- StatefulSet and DaemonSet have no deadline condition: `stalled` when not complete `deadline` after our
  rollout, except with OnDelete (a person deletes the pods; waiting for them is not a stall).
- Argo Rollout: from `status.phase` (`Healthy` complete, `Degraded` stalled, anything else progressing); its
  controller applies the Rollout's own progress deadline. A restart asked through `spec.restartAt` is
  progressing until the controller records it done (`status.restartedAt` equal to it).
- A `Ready` condition (Knative, CloudNativePG, most operators): complete when it is True once the controller
  observed our generation; `stalled` when not `deadline` after our rollout.

Whether the restart took effect at all (its pods, or the kind's own evidence) is verify.py's question;
`not-effective` is the status a restart without its evidence gets once the deadline passed.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Any

from reconcile.model.kinds import Health

PROGRESS_DEADLINE_EXCEEDED = "ProgressDeadlineExceeded"
ON_DELETE = "OnDelete"


class RolloutStatus(StrEnum):
    """Where a rollout kube-rehash started stands (the report's `rollout_status`)."""

    COMPLETE = "complete"
    PROGRESSING = "progressing"
    STALLED = "stalled"
    NOT_EFFECTIVE = "not-effective"


@dataclass(frozen=True)
class _Facts:
    """What every kind's rule reads, with the defaults the API leaves out."""

    spec: Mapping[str, Any]
    status: Mapping[str, Any]
    observed: bool  # the controller has seen the generation our patch produced
    overdue: bool  # `deadline` has passed since our rollout


def rollout_status(
    rules: Health,
    obj: Mapping[str, Any],
    *,
    written_generation: int | None,
    rolled_at: datetime,
    now: datetime,
    deadline: timedelta,
) -> RolloutStatus:
    """The status of the rollout kube-rehash started at `rolled_at` on `obj`, judged by its kind's `rules`.

    `written_generation` is the `metadata.generation` our patch produced (None: unknown, the object's own
    is used). `deadline` is `rolloutDeadline`, used by the StatefulSet and DaemonSet rules only.
    """
    assess = _RULES[Health(rules)]
    facts = _Facts(
        spec=_mapping(obj.get("spec")),
        status=_mapping(obj.get("status")),
        observed=controller_observed(obj, written_generation),
        overdue=now - rolled_at > deadline,
    )
    return assess(facts)


def controller_observed(obj: Mapping[str, Any], written_generation: int | None) -> bool:
    """Whether the object's controller observed the generation our write produced (`status.observedGeneration`
    at least it; the object's own when ours is unknown or the object was re-created since)."""
    metadata = _mapping(obj.get("metadata"))
    target = _target_generation(written_generation, _optional_count(metadata.get("generation")))
    observed = _optional_count(_mapping(obj.get("status")).get("observedGeneration"))
    return observed is not None and observed >= target


def _target_generation(written: int | None, current: int | None) -> int:
    """The generation the controller must have observed: ours, unless the object was re-created since."""
    if written is None or (current is not None and current < written):
        written = current
    return max(1, written or 0)


def _assess_deployment(facts: _Facts) -> RolloutStatus:
    spec, status = facts.spec, facts.status
    if not facts.observed:
        return RolloutStatus.PROGRESSING
    paused = spec.get("paused") is True
    if not paused and _condition_reason(status, "Progressing") == PROGRESS_DEADLINE_EXCEEDED:
        return RolloutStatus.STALLED
    desired = _count(spec.get("replicas"), 1)
    updated = _count(status.get("updatedReplicas"))
    done = (
        updated >= desired
        and _count(status.get("replicas")) <= updated
        and _count(status.get("availableReplicas")) >= updated
        and _count(status.get("readyReplicas")) >= desired
    )
    return RolloutStatus.COMPLETE if done else RolloutStatus.PROGRESSING


def _assess_statefulset(facts: _Facts) -> RolloutStatus:
    spec, status = facts.spec, facts.status
    strategy = _mapping(spec.get("updateStrategy"))
    on_delete = strategy.get("type") == ON_DELETE
    desired = _count(spec.get("replicas"), 1)
    updated = _count(status.get("updatedReplicas"))
    if on_delete:
        rolled = updated >= desired
    else:
        partition = min(max(_count(_mapping(strategy.get("rollingUpdate")).get("partition")), 0), desired)
        current = status.get("currentRevision") == status.get("updateRevision")
        rolled = updated >= desired - partition if partition else current or updated >= desired
    done = facts.observed and rolled and _count(status.get("readyReplicas")) >= desired
    return _settle(done, facts.overdue and not on_delete)


def _assess_daemonset(facts: _Facts) -> RolloutStatus:
    spec, status = facts.spec, facts.status
    on_delete = _mapping(spec.get("updateStrategy")).get("type") == ON_DELETE
    desired = _count(status.get("desiredNumberScheduled"))
    done = (
        facts.observed
        and _count(status.get("updatedNumberScheduled")) >= desired
        and _count(status.get("numberAvailable")) >= desired
    )
    return _settle(done, facts.overdue and not on_delete)


def _assess_argo_rollout(facts: _Facts) -> RolloutStatus:
    # Older Argo Rollouts wrote observedGeneration as a string (a number, or a hash of the spec): only a
    # number the controller has not caught up with yet makes the phase stale.
    raw = facts.status.get("observedGeneration")
    if _optional_count(raw) is not None and not facts.observed:
        return RolloutStatus.PROGRESSING
    phase = facts.status.get("phase")
    if phase == "Healthy":
        return RolloutStatus.PROGRESSING if _restarting(facts) else RolloutStatus.COMPLETE
    if phase == "Degraded":
        return RolloutStatus.STALLED
    return RolloutStatus.PROGRESSING


def _restarting(facts: _Facts) -> bool:
    """A restart asked through `spec.restartAt` (kube-rehash's write for a `workloadRef` Rollout) that the
    controller has not finished: it evicts the pods started before that time, then copies it to
    `status.restartedAt` (argo-rollouts rollout/restart.go); the phase stays `Healthy` meanwhile."""
    asked = facts.spec.get("restartAt")
    if asked is None:
        return False
    done = facts.status.get("restartedAt")
    return done != asked and (_instant(done) is None or _instant(done) != _instant(asked))


def _assess_ready(facts: _Facts) -> RolloutStatus:
    ready = _condition_status(facts.status, "Ready") == "True"
    return _settle(facts.observed and ready, facts.overdue)


def _settle(done: bool, may_stall: bool) -> RolloutStatus:
    if done:
        return RolloutStatus.COMPLETE
    return RolloutStatus.STALLED if may_stall else RolloutStatus.PROGRESSING


_RULES: dict[Health, Callable[[_Facts], RolloutStatus]] = {
    Health.DEPLOYMENT: _assess_deployment,
    Health.STATEFULSET: _assess_statefulset,
    Health.DAEMONSET: _assess_daemonset,
    Health.ROLLOUT: _assess_argo_rollout,
    Health.READY: _assess_ready,
}


def _condition_reason(status: Mapping[str, Any], condition_type: str) -> str | None:
    conditions = status.get("conditions")
    if not isinstance(conditions, list):
        return None
    for condition in conditions:
        if isinstance(condition, Mapping) and condition.get("type") == condition_type:
            reason = condition.get("reason")
            return reason if isinstance(reason, str) else None
    return None


def _condition_status(status: Mapping[str, Any], condition_type: str) -> str | None:
    conditions = status.get("conditions")
    for condition in conditions if isinstance(conditions, list) else ():
        if isinstance(condition, Mapping) and condition.get("type") == condition_type:
            value = condition.get("status")
            return value if isinstance(value, str) else None
    return None


def _mapping(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _instant(value: object) -> datetime | None:
    """An RFC 3339 time as the API writes it (any offset; the controller writes UTC), else None."""
    if not isinstance(value, str):
        return None
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        return None
    return moment if moment.tzinfo is not None else None


def _count(value: object, default: int = 0) -> int:
    """A non-negative integer field, or `default` when it is absent (the API omits zeros) or not one."""
    number = _optional_count(value)
    return default if number is None else number


def _optional_count(value: object) -> int | None:
    """A non-negative integer field (also a decimal string, as older Argo Rollouts write), else None."""
    if isinstance(value, str) and value.isdecimal():
        value = int(value)
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    return None
