"""The rollouts kube-rehash started, after a pass's pending work: their status read, their records moved.

Rollout health is bookkeeping, not a rollout, so it comes after every batch's pending work (policy/
priority.py). A workload whose rollout of ours is unfinished is watched: where its batch read it whole its
status is already known; the others are read now, oldest rollout first, as the budget allows (one list per
namespace and kind where that is cheaper), and, for a kind whose restarts its pods show (`Evidence.PODS`:
custom kinds only), its pods by the kind's selector. Then each record moves as `model.rollouts.record_move`
says: a stalled rollout gets one RolloutStalled Event and a restart not effective by its deadline one
RestartNotEffective Event, each sent only after a guarded metadata-only patch moved its record (so a later
or overlapping pass never sends it again, and never patches the workload again for that change), and a
complete one is recorded `complete` so its status is not read again. A rollout left unchecked keeps its
recorded state, without a request.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from concurrent.futures import Executor, ThreadPoolExecutor
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from reconcile.errors import Conflict, Invalid, PassCut, RehashError
from reconcile.model.bookkeeping import NOT_EFFECTIVE, STALLED
from reconcile.model.knobs import Evidence
from reconcile.model.pods import Pod
from reconcile.model.rollouts import (
    RolloutCheck,
    check,
    not_effective_message,
    record_move,
    stall_message,
    watched,
)
from reconcile.model.workload import Listed, Target, status_view
from reconcile.pipeline.pod_reads import selected_pods
from reconcile.pipeline.views import Census, read_objects
from reconcile.pipeline.write import Writer
from reconcile.policy.decide import with_rollout
from reconcile.policy.decision import METADATA_ACTIONS, Action, Decision, Observed
from reconcile.policy.patches import rollout_state_patch
from reconcile.policy.planned import Planned
from reconcile.policy.rules import Rules
from reconcile.values import value

log = logging.getLogger(__name__)
UNWATCHED = (Action.FAILED, Action.ROLLOUT, Action.SKIPPED)
"""What a workload whose status no read of the pass gave must not be watched after: a rollout of ours
that failed, was replaced, or is skipped now."""


@value
class Watch:
    """A watched rollout of one workload, as its batch left it: its decision (with the rollout's status
    when the workload was read whole), and what was written of it."""

    planned: Planned
    written: Decision
    """The decision as the write stage left it (what the workload's row says)."""

    @property
    def listed(self) -> Listed:
        return self.planned.listed

    @property
    def record_at(self) -> datetime:
        record = self.listed.bookkeeping.rollout
        return record.at if record is not None else datetime.max.replace(tzinfo=UTC)


def watch_of(planned: Planned, written: Decision, *, dry_run: bool) -> Watch | None:
    """What the checks need of a written workload (None: nothing): a status judged from its full view, or
    an unfinished rollout of ours whose status no read of the pass gave. A rollout this pass wrote
    replaced the record: the old one's status no longer applies. Only a workload the move stamps again
    (`restamped`) keeps its full view."""
    if written.action is Action.ROLLOUT and not dry_run:
        return None
    unchecked = planned.decision.rollout is None
    if unchecked and (watched(planned.listed) is None or written.action in UNWATCHED):
        return None
    if planned.full is not None and restamped(planned, written) is None:
        planned = replace(planned, full=None)
    return Watch(planned, written)


def restamped(planned: Planned, written: Decision) -> tuple[Target, Observed] | None:
    """The full view and the records this pass's adopt, refresh or notification of the workload just
    stamped, which a move of its rollout record stamps again: a Deployment's generation moves with every
    annotation write. None when the pass wrote no records of it."""
    observed = planned.decision.observed
    if written.action in METADATA_ACTIONS and planned.full is not None and observed is not None:
        return planned.full, observed
    return None


class RolloutChecks:
    """Reads the status of a pass's watched rollouts and moves their records."""

    def __init__(self, writer: Writer, executor: Executor, census: Census, rules: Rules) -> None:
        self.writer = writer
        self.executor = executor
        self.census = census
        self.rules = rules

    def check(self, watches: Sequence[Watch], *, may_read: bool) -> dict[str, tuple[Decision, str | None]]:
        """uid -> each watched workload's decision as written and its rollout's status: read in this pass
        (its record then moved), else the state recorded."""
        unread = [
            w.listed for w in sorted(watches, key=lambda w: w.record_at) if w.planned.decision.rollout is None
        ]
        objects: dict[str, Any] = {}
        if unread and may_read:
            try:
                objects, _cut = read_objects(self.writer.client, self.executor, unread, self.census)
            except PassCut:
                log.info("the pass budget ran out before the rollouts' status was read")
        checked: list[tuple[Watch, RolloutCheck]] = []
        out: dict[str, tuple[Decision, str | None]] = {}
        for watch in watches:
            found = self.status_of(watch, objects.get(watch.listed.uid))
            if found is None:
                record = watched(watch.listed)
                out[watch.listed.uid] = (watch.written, record.state if record is not None else None)
            else:
                out[watch.listed.uid] = (watch.written, found.status.value)
                checked.append((watch, found))
        self.move_all(checked)
        return out

    def status_of(self, watch: Watch, got: object) -> RolloutCheck | None:
        """The rollout's status: judged in its batch from its full view, or from the object read now."""
        if watch.planned.decision.rollout is not None:
            return watch.planned.decision.rollout
        if isinstance(got, Mapping) and same_uid(got, watch.listed):
            view = status_view(got, watch.listed.kind, self.writer.keys)
            if watch.listed.kind.verified_by is Evidence.PODS:
                return self.with_pods(watch.listed, got, view)
            checked = with_rollout(watch.listed, watch.planned.decision, view, self.rules)
            return checked.rollout
        if isinstance(got, RehashError):
            log.warning("reading the rollout status of %s failed: %s", watch.listed.ref, got)
        return None

    def with_pods(
        self, subject: Listed, obj: Mapping[str, Any], view: Mapping[str, Any]
    ) -> RolloutCheck | None:
        """The check of a kind whose restarts its pods show: its pods listed by its selector (one list)."""
        selection = subject.kind.pod_selection
        assert selection is not None
        selector = selection.selector_of(obj, subject.name)
        owner = subject.uid if selection.owned else None
        try:
            pods = selected_pods(self.writer.client, subject.namespace, selector, owner)
        except PassCut:
            log.info("the pass budget ran out before the pods of %s were listed", subject.ref)
            return None
        if isinstance(pods, str):
            log.warning("listing the pods of %s failed: %s", subject.ref, pods)
            return None
        found: tuple[Pod, ...] = pods
        rules = self.rules
        return check(subject, view, now=rules.now, deadline=rules.policy.rollout_deadline, pods=found)

    def move_all(self, checked: Sequence[tuple[Watch, RolloutCheck]]) -> None:
        movable = [(w, f) for w, f in checked if w.written.action is not Action.FAILED]
        if self.writer.client_dry_run or not movable:
            return
        workers = max(1, self.writer.concurrency)
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="rehash-track") as pool:
            list(pool.map(lambda item: self.move(*item), movable))

    def move(self, watch: Watch, found: RolloutCheck) -> None:
        """Move the record where `record_move` says, with a guarded metadata-only patch; a stall's Event
        only once that patch was accepted (a failed test means another pass or a new rollout replaced the
        record: nothing to do)."""
        state = record_move(found)
        if state is None:
            return
        subject = watch.listed
        written = restamped(watch.planned, watch.written)
        cause = found.cause.value if state == NOT_EFFECTIVE and found.cause is not None else ""
        ops = rollout_state_patch(
            subject, found.record, state, self.writer.keys, written=written, cause=cause
        )
        try:
            self.writer.send_patch(subject, ops)
        except PassCut:
            log.info("rollout of %s not recorded %s: the pass may start no more requests", subject.ref, state)
            return
        except (Conflict, Invalid) as exc:
            log.info("rollout record of %s changed since it was read (%s)", subject.ref, exc.code)
            return
        except RehashError as exc:
            log.warning("recording the rollout of %s as %s failed: %s", subject.ref, state, exc)
            return
        log.info("rollout of %s is %s", subject.ref, state)
        if state == STALLED:
            message = f"kube-rehash: {stall_message(subject, found, self.writer.now)}"
            self.writer.emit(
                subject,
                "RolloutStalled",
                message,
                warning=True,
                action="CheckRollout",
                changed=found.record.changed,
            )
        elif state == NOT_EFFECTIVE:
            message = f"kube-rehash: {not_effective_message(subject, found, self.writer.now)}"
            self.writer.emit(
                subject,
                "RestartNotEffective",
                message,
                warning=True,
                action="VerifyRestart",
                changed=found.record.changed,
            )


def same_uid(obj: Mapping[str, Any], subject: Listed) -> bool:
    metadata = obj.get("metadata")
    return isinstance(metadata, Mapping) and str(metadata.get("uid", "")) == subject.uid
