"""Watching the rollouts kube-rehash started, between the status rules (health.py), the evidence of a
restart (verify.py) and a pass.

Pure. A pass reads the status of a workload only while its recorded rollout (annotation `rollout`, see
bookkeeping.RolloutRecord) is unfinished, so the steady state stays metadata-only. This module says which
workloads those are, judges the status read with the pass's clock (and, for a kind whose restarts are
shown by its pods, the pods read with it), and words what the Events of a stalled rollout and of a restart
not effective say: the sources whose change started it (names, never values), for how long, and why.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any

from reconcile.model.bookkeeping import COMPLETE, NOT_EFFECTIVE, PROGRESSING, STALLED, RolloutRecord
from reconcile.model.health import (
    PROGRESS_DEADLINE_EXCEEDED,
    RolloutStatus,
    controller_observed,
    rollout_status,
)
from reconcile.model.knobs import Evidence
from reconcile.model.pods import Pod
from reconcile.model.times import format_time, parse_time
from reconcile.model.verify import CAUSES, Cause, Verdict, judge
from reconcile.model.workload import Listed
from reconcile.values import value

DECISIVE = frozenset({Cause.REVERTED, Cause.HELD, Cause.IGNORED})
"""The causes that make a rollout judged by its status rules not effective (a slow or stuck one is
`progressing` or `stalled`, as its rules say)."""


@value
class RolloutCheck:
    """Our recorded rollout of one workload and its status as read in this pass."""

    record: RolloutRecord
    status: RolloutStatus
    stalled_since: datetime | None = None
    verdict: Verdict | None = None
    """What the kind's evidence said of the restart (None: its restarts are not verified)."""

    @property
    def cause(self) -> Cause | None:
        return self.verdict.cause if self.verdict is not None and not self.verdict.effective else None


def watched(subject: Listed) -> RolloutRecord | None:
    """The recorded rollout whose status this pass must read: ours, unfinished, of a kind with status
    rules or evidence of its restarts."""
    record = subject.bookkeeping.rollout
    if record is None or record.finished or not subject.kind.watched:
        return None
    return record


def check(
    subject: Listed,
    obj: Mapping[str, Any],
    *,
    now: datetime,
    deadline: timedelta,
    pods: Sequence[Pod] | None = None,
) -> RolloutCheck | None:
    """The status of the subject's watched rollout from `obj` (the workload, or its status view) and,
    for a kind whose restarts its pods show, `pods` (None: not read; then it is not judged here)."""
    record = watched(subject)
    kind = subject.kind
    if record is None or (kind.verified_by is Evidence.PODS and pods is None):
        return None
    health = (
        rollout_status(
            kind.health,
            obj,
            written_generation=record.generation,
            rolled_at=record.at,
            now=now,
            deadline=deadline,
        )
        if kind.health is not None
        else RolloutStatus.PROGRESSING
    )
    book = subject.bookkeeping
    superseded = book.superseded is not None and obj.get("restarted") == book.superseded
    written = book.superseded if superseded else book.config_hash
    verdict = judge(
        kind,
        obj,
        record,
        written=written,
        complete=health is RolloutStatus.COMPLETE,
        observed=controller_observed(obj, record.generation),
        pods=pods,
    )
    status = judged_status(subject, health, verdict, overdue=now - record.at > deadline)
    since = stalled_since(obj, record, deadline) if status is RolloutStatus.STALLED else None
    return RolloutCheck(record, status, since, verdict)


def judged_status(
    subject: Listed, health: RolloutStatus, verdict: Verdict | None, *, overdue: bool
) -> RolloutStatus:
    """The status rules' word, unless the evidence says otherwise: a kind without rules is complete once
    its restart is proven; a restart without its evidence is not effective once the deadline passed: a
    reverted one always, a stalled one never (it restarted, and is stuck), and one of a kind judged by its
    rules only for a decisive cause (paused, ignored)."""
    kind = subject.kind
    if verdict is None:
        return health
    if verdict.effective:
        return health if kind.health is not None else RolloutStatus.COMPLETE
    by_rules = kind.verified_by is Evidence.STATUS
    stalled = health is RolloutStatus.STALLED  # it restarted, and is stuck: its rules' word stands
    decisive = verdict.cause is Cause.REVERTED or (
        not stalled and (verdict.cause in DECISIVE or not by_rules)
    )
    if overdue and decisive:
        return RolloutStatus.NOT_EFFECTIVE
    return RolloutStatus.PROGRESSING if health is RolloutStatus.COMPLETE else health


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


def not_effective_message(subject: Listed, found: RolloutCheck, now: datetime) -> str:
    """The RestartNotEffective Event's message: the changed sources' names, when we restarted, the cause."""
    changed = ", ".join(found.record.changed) or "its ConfigMaps/Secrets"
    cause = CAUSES[found.cause] if found.cause is not None else "no evidence of a restart"
    return (
        f"the restart kube-rehash started at {format_time(found.record.at)} when {changed} changed has not "
        f"taken effect after {format_age(now - found.record.at)}: {cause} "
        f"({subject.kind.kind} {subject.namespace}/{subject.name})"
    )


def record_move(found: RolloutCheck) -> str | None:
    """The state our rollout's record moves to after this check (None: it stays): `stalled` or
    `not-effective` once (its Event is sent with that move, so two passes never report one twice),
    `complete` when done, so its status is not read again."""
    if found.status is RolloutStatus.STALLED and found.record.state == PROGRESSING:
        return STALLED
    if found.status is RolloutStatus.NOT_EFFECTIVE and found.record.state in (PROGRESSING, STALLED):
        return NOT_EFFECTIVE
    if found.status is RolloutStatus.COMPLETE:
        return COMPLETE
    return None
