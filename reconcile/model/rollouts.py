"""Watching the rollouts kube-rehash started, between the status rules (health.py) and a pass.

Pure. A pass reads the status of a workload only while its recorded rollout (annotation `rollout`, see
targets.RolloutRecord) is unfinished, so the steady state stays metadata-only. This module says which
workloads those are, judges the status read with the pass's clock, and words what a stalled rollout's
Event says: the sources whose change started it (names, never values) and for how long it has stalled.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any

from reconcile.model.bookkeeping import COMPLETE, PROGRESSING, STALLED, RolloutRecord
from reconcile.model.health import PROGRESS_DEADLINE_EXCEEDED, RolloutStatus, rollout_status
from reconcile.model.times import parse_time
from reconcile.model.workload import Listed
from reconcile.values import value


@value
class RolloutCheck:
    """Our recorded rollout of one workload and its status as read in this pass."""

    record: RolloutRecord
    status: RolloutStatus
    stalled_since: datetime | None = None


def watched(subject: Listed) -> RolloutRecord | None:
    """The recorded rollout whose status this pass must read: ours, unfinished, of a kind with rules."""
    record = subject.bookkeeping.rollout
    if record is None or record.finished or subject.kind.health is None:
        return None
    return record


def check(
    subject: Listed, obj: Mapping[str, Any], *, now: datetime, deadline: timedelta
) -> RolloutCheck | None:
    """The status of the subject's watched rollout from `obj` (the workload, or its status view)."""
    record = watched(subject)
    if record is None or subject.kind.health is None:
        return None
    status = rollout_status(
        subject.kind.health,
        obj,
        written_generation=record.generation,
        rolled_at=record.at,
        now=now,
        deadline=deadline,
    )
    since = stalled_since(obj, record, deadline) if status is RolloutStatus.STALLED else None
    return RolloutCheck(record, status, since)


def stalled_since(obj: Mapping[str, Any], record: RolloutRecord, deadline: timedelta) -> datetime:
    """When the rollout became stalled: a Deployment's ProgressDeadlineExceeded condition says; for the
    kinds without a deadline condition it is `deadline` after our rollout."""
    status = obj.get("status")
    conditions = status.get("conditions") if isinstance(status, Mapping) else None
    for condition in conditions if isinstance(conditions, list) else ():
        if isinstance(condition, Mapping) and condition.get("reason") == PROGRESS_DEADLINE_EXCEEDED:
            when = parse_time(condition.get("lastTransitionTime")) or parse_time(
                condition.get("lastUpdateTime")
            )
            if when is not None:
                return max(when, record.at)
    return record.at + deadline


def stall_message(subject: Listed, found: RolloutCheck, now: datetime) -> str:
    """The RolloutStalled Event's message: names of the changed sources and the stall's age."""
    since = found.stalled_since or now
    changed = ", ".join(found.record.changed) or "its ConfigMaps/Secrets"
    return (
        f"the rollout kube-rehash started when {changed} changed has stalled "
        f"for {format_age(now - since)} ({subject.kind.kind} {subject.namespace}/{subject.name})"
    )


def format_age(age: timedelta) -> str:
    """`45s`, `12m`, `3h5m`, `2d4h`: coarse, as people read an age."""
    seconds = max(0, int(age.total_seconds()))
    if seconds < 60:
        return f"{seconds}s"
    minutes, hours, days = seconds // 60, seconds // 3600, seconds // 86400
    if hours < 1:
        return f"{minutes}m"
    if days < 1:
        return f"{hours}h{minutes % 60}m" if minutes % 60 else f"{hours}h"
    return f"{days}d{hours % 24}h" if hours % 24 else f"{days}d"


def record_move(found: RolloutCheck) -> str | None:
    """The state our rollout's record moves to after this check (None: it stays): `stalled` once (its
    Event is sent with that move, so two passes never report one stall twice), `complete` when done, so
    its status is not read again."""
    if found.status is RolloutStatus.STALLED and found.record.state == PROGRESSING:
        return STALLED
    if found.status is RolloutStatus.COMPLETE:
        return COMPLETE
    return None
