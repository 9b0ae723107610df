"""Write, the last stage of a pass: guarded patches, Events and run-on-change Jobs, batch by batch.

A batch's writes are done before the next batch is read, so every pass leaves durable progress. A
failed precondition (422 from a JSON-patch `test`, or 409) means someone changed the workload after we
read it: read it again and decide again through the same planner entry point as the pass, a bounded
number of times, so nobody's change is lost and two overlapping passes never roll a workload twice for
one change. A write the budget no longer allows is `deferred`; `--max-rollouts` counts over the pass.

Rollout health is bookkeeping, not a rollout: a stalled rollout of ours gets one RolloutStalled Event,
sent only after a guarded metadata patch moved its record to `stalled` (so a later or overlapping pass
never sends it again), and a complete one is recorded `complete` so its status is not read again.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from reconcile.errors import Conflict, Invalid, PassCut, RehashError
from reconcile.kube.client import KubeClient, PatchType
from reconcile.model.annotations import Annotations
from reconcile.model.bookkeeping import COMPLETE, PROGRESSING, STALLED
from reconcile.model.health import RolloutStatus
from reconcile.model.rollouts import RolloutCheck, stall_message
from reconcile.model.workload import Listed, Target
from reconcile.output.report import Row
from reconcile.pipeline.evictions import carry_out
from reconcile.policy.decide import Planned
from reconcile.policy.decision import (
    METADATA_ACTIONS,
    WRITING_ACTIONS,
    Action,
    Decision,
    Observed,
    apply_budget,
    defer_for_budget,
    defer_for_stop,
)
from reconcile.policy.landed import shows_write
from reconcile.policy.patches import (
    build_event,
    build_job,
    build_patch,
    events_path,
    jobs_path,
    rollout_state_patch,
)
from reconcile.policy.priority import write_rank

log = logging.getLogger(__name__)
MAX_REDECIDE = 3
Redecide = Callable[[Target], tuple[Target, Decision]]


@dataclass(frozen=True)
class WriteOptions:
    dry_run: str = "none"
    """none, client (no write request at all) or server (writes sent with dryRun=All)."""
    events: bool = True
    max_rollouts: int | None = None
    concurrency: int = 4
    hold_notify: bool = False
    """Leave `notify` decisions unwritten, for after the webhook's delivery (pipeline/notifier.py)."""


class Writer:
    """Applies one pass's decisions, batch by batch, and counts its rollouts against --max-rollouts."""

    def __init__(
        self,
        client: KubeClient,
        options: WriteOptions,
        *,
        keys: Annotations,
        now: datetime,
        redecide: Redecide,
    ) -> None:
        self.client = client
        self.options = options
        self.keys = keys
        self.now = now
        self.redecide = redecide
        self.server_dry_run = options.dry_run == "server"
        self.client_dry_run = options.dry_run == "client"
        self.rollouts = 0
        self.stopped = False
        self._lock = threading.Lock()
        self.event_failures: dict[str, str] = {}
        self.held: list[tuple[Target, Decision]] = []

    def write_batch(self, planned: Sequence[Planned], *, hold: bool = True) -> list[Row]:
        """Write one batch's decisions (rollouts past --max-rollouts deferred) and return its rows, in
        order. Rollouts and adoptions are sent first, then refreshes (policy.priority); rollout records
        are the pass's last work (`track_all`). `hold=False` writes held notifications after delivery."""
        planned = self.limit_rollouts(planned)
        if not any(self.may_write(item) for item in planned):
            return [self.write_one(item, hold=hold) for item in planned]  # steady: no thread pool
        order = sorted(range(len(planned)), key=lambda i: write_rank(planned[i].decision.action))
        rows: list[Row | None] = [None] * len(planned)
        workers = max(1, self.options.concurrency)
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="rehash-write") as pool:
            written = pool.map(lambda i: self.write_one(planned[i], hold=hold), order)
            for index, row in zip(order, written, strict=True):
                rows[index] = row
        return [row for row in rows if row is not None]

    def track_all(self, items: Sequence[tuple[Planned, Row]]) -> list[Row]:
        """`track` each checked rollout (record updates and stall Events), in parallel; rows in order."""
        if self.client_dry_run or not items:
            return [self.track(*item) for item in items]
        workers = max(1, self.options.concurrency)
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="rehash-track") as pool:
            return list(pool.map(lambda item: self.track(*item), items))

    def may_write(self, item: Planned) -> bool:
        """Whether writing this decision may send a patch: only a workload with a full view has one."""
        if self.client_dry_run:
            return False
        return item.decision.action in WRITING_ACTIONS and item.full is not None

    def limit_rollouts(self, planned: Sequence[Planned]) -> list[Planned]:
        limit = self.options.max_rollouts
        if limit is None:
            return list(planned)
        full = [(i, item.full, item.decision) for i, item in enumerate(planned) if item.full is not None]
        limited = apply_budget([(t, d) for _, t, d in full], max(0, limit - self.rollouts), limit=limit)
        out = list(planned)
        for (index, _, _), (target, decision) in zip(full, limited, strict=True):
            out[index] = replace(out[index], decision=decision)
            if decision.action is Action.ROLLOUT and target.kind.rolls_pods:
                self.rollouts += 1
        return out

    def recount(self, target: Target, before: Decision, after: Decision) -> Decision:
        """--max-rollouts over a re-decision: one that became a rollout takes a slot, or is deferred when
        none is left; one that no longer rolls gives its slot back."""
        limit = self.options.max_rollouts
        if limit is None or not target.kind.rolls_pods:
            return after
        was, now = before.action is Action.ROLLOUT, after.action is Action.ROLLOUT
        with self._lock:
            if now and not was:
                if self.rollouts >= limit:
                    return apply_budget([(target, after)], 0, limit=limit)[0][1]
                self.rollouts += 1
            elif was and not now:
                self.rollouts -= 1
        return after

    def failure_rows(self) -> list[Row]:
        """Events the user relies on but could not get are a failed scope, not a footnote in a log."""
        return [
            Row.scope_failure("Event", namespace, f"recording Events failed: {error}")
            for namespace, error in sorted(self.event_failures.items())
        ]

    def holds(self, decision: Decision) -> bool:
        """Whether this decision is a notification left for after the webhook's delivery."""
        return self.options.hold_notify and decision.action is Action.NOTIFY and not self.client_dry_run

    def take_held(self) -> list[tuple[Target, Decision]]:
        """The notifications held so far (see WriteOptions.hold_notify), handed over once."""
        with self._lock:
            held, self.held = self.held, []
        return held

    def write_one(self, item: Planned, *, hold: bool = True) -> Row:
        target, decision = item.full, item.decision
        if target is not None and evicting(decision) and not self.client_dry_run:
            try:
                done = carry_out(
                    self.client,
                    target,
                    decision,
                    dry_run=self.server_dry_run,
                    keys=self.keys,
                    now=self.now,
                    emit=lambda subject, reason, message: self.emit(subject, reason, message, warning=False),
                )
            except PassCut as exc:
                done = self.cut(exc, decision)
            return Row.of(target.listed, done)
        if target is None or not self.may_write(item):
            return Row.of(item.listed, decision)
        delivered = decision.config_hash if not hold and decision.action is Action.NOTIFY else None
        for attempt in range(MAX_REDECIDE + 1):
            if hold and self.holds(decision):
                with self._lock:
                    self.held.append((target, decision))
                return Row.of(target.listed, decision)
            if (
                delivered is not None
                and decision.action is Action.NOTIFY
                and decision.config_hash != delivered
            ):
                # Re-decided after a conflict: a newer change than the webhook told of; left to the next pass.
                reason = (
                    f"{decision.reason}; changed again after the webhook was sent: the next pass notifies it"
                )
                return Row.of(target.listed, replace(decision, reason=reason))
            if decision.action not in WRITING_ACTIONS:
                return Row.of(target.listed, decision)
            try:
                updated = self.patch(target, decision)
            except PassCut as exc:
                return Row.of(target.listed, self.cut(exc, decision))
            except (Conflict, Invalid) as exc:
                if attempt == MAX_REDECIDE:
                    return self.fail(target, decision, f"the workload kept changing under us: {exc}")
                log.info("%s changed since it was read (%s); reading it again", target.ref, exc.code)
                sent = target
                try:
                    target, redecided = self.redecide(target)
                except PassCut as cut:
                    return Row.of(target.listed, self.cut(cut, decision))
                except RehashError as again:
                    return self.fail(target, decision, f"re-reading after a conflict failed: {again}")
                if exc.unanswered_before and shows_write(target, sent, decision, self.now):
                    return self.landed(sent, decision)
                decision = self.recount(target, decision, redecided)
                continue
            except RehashError as exc:  # an API error, or a connection that failed past its retries
                return self.fail(target, decision, f"patch failed: {exc}")
            problem = self.after_write(target, decision, updated)
            if problem:
                return self.fail(target, decision, problem)
            return Row.of(target.listed, decision)
        raise AssertionError("unreachable")

    def landed(self, target: Target, decision: Decision) -> Row:
        """Our patch landed though its answer was lost (`policy.landed`): the row is what it was, and what
        follows a write follows (a run-on-change Job is made from the CronJob as it now is)."""
        log.info("%s: the answer to our patch was lost; the workload shows it landed", target.ref)
        updated: dict[str, Any] = {}
        if decision.action is Action.ROLLOUT and target.kind.runs_jobs and target.run_on_change:
            try:
                updated = self.client.get(target.kind.object_path(target.namespace, target.name))
            except RehashError as exc:
                return self.fail(target, decision, f"rolled out, but reading it for its Job failed: {exc}")
        problem = self.after_write(target, decision, updated)
        return self.fail(target, decision, problem) if problem else Row.of(target.listed, decision)

    def replaced_record(self, row: Row) -> bool:
        """Whether this pass's own rollout replaced the workload's rollout record: the old record's status
        no longer applies, and there is nothing to track."""
        return row.action == Action.ROLLOUT.value and self.options.dry_run == "none"

    def for_tracking(self, item: Planned, row: Row) -> tuple[Planned | None, Row]:
        """What the rollout checks at the end of the pass need of a written workload (None: nothing, as
        this pass's rollout replaced its record), and its row as it then stands. The full view is kept only
        where the record move stamps it again (`restamped`): a watched rollout keeps no whole workload."""
        if self.replaced_record(row):
            return None, replace(row, rollout_status=None)
        if item.full is None or restamped(item, row) is not None:  # most are in sync: no full view to drop
            return item, row
        return replace(item, full=None), row

    def track(self, item: Planned, row: Row) -> Row:
        """Record what became of our last rollout: `stalled` (then one Event) or `complete`. A rollout
        written in this pass replaces the record, so the old one's status no longer applies."""
        workload, decision = item.listed, item.decision
        found = decision.rollout
        if found is None or row.action == Action.FAILED.value:
            return row
        if self.replaced_record(row):
            return replace(row, rollout_status=None)
        # Written by this pass's own patch just now (a rollout replaced the record and returned above).
        written = restamped(item, row)
        if found.status is RolloutStatus.STALLED and found.record.state == PROGRESSING:
            if self.move(workload, found, STALLED, written):
                message = stall_message(workload, found, self.now)
                self.emit(workload, "RolloutStalled", f"kube-rehash: {message}", warning=True)
        elif found.status is RolloutStatus.COMPLETE:
            self.move(workload, found, COMPLETE, written)
        return row

    def move(
        self,
        subject: Listed,
        found: RolloutCheck,
        state: str,
        written: tuple[Target, Observed] | None = None,
    ) -> bool:
        """Move the rollout record to `state` with a guarded metadata-only patch; whether it was sent
        (a failed test means another pass or a new rollout replaced the record: nothing to do).
        `written`: the full view and the records this pass's adopt or refresh of the workload just
        stamped, which the patch stamps again (a Deployment's generation moves with every annotation
        write)."""
        if self.client_dry_run:
            return False
        ops = rollout_state_patch(subject, found.record, state, self.keys, written=written)
        path = subject.kind.object_path(subject.namespace, subject.name)
        try:
            self.client.patch(path, ops, patch_type=PatchType.JSON, dry_run=self.server_dry_run)
        except PassCut:
            log.info("rollout of %s not recorded %s: the pass may start no more requests", subject.ref, state)
            return False
        except (Conflict, Invalid) as exc:
            log.info("rollout record of %s changed since it was read (%s)", subject.ref, exc.code)
            return False
        except RehashError as exc:
            log.warning("recording the rollout of %s as %s failed: %s", subject.ref, state, exc)
            return False
        log.info("rollout of %s is %s", subject.ref, state)
        return True

    def cut(self, exc: PassCut, decision: Decision) -> Decision:
        """The decision a write the pass may no longer send becomes: deferred, saying why."""
        if exc.stops_pass:
            self.stopped = True
            return defer_for_stop(decision)
        return replace(
            defer_for_budget(f"not written before the time budget ran out ({decision.reason})"),
            config_hash=decision.config_hash,
            previous=decision.previous,
            configs=decision.configs,
        )

    def patch(self, target: Target, decision: Decision) -> dict[str, Any]:
        assert decision.observed is not None
        ops = build_patch(target, decision, decision.observed, now=self.now, keys=self.keys)
        path = target.kind.object_path(target.namespace, target.name)
        return self.client.patch(path, ops, patch_type=PatchType.JSON, dry_run=self.server_dry_run)

    def after_write(self, target: Target, decision: Decision, updated: dict[str, Any]) -> str | None:
        """Event and run-on-change Job after a rollout, Event after a notification; returns a problem
        that fails the workload. Events name the changed sources by kind and name, never content."""
        if decision.action is Action.NOTIFY:
            log.info("notified %s: %s", target.ref, decision.reason)
            changed = ", ".join(decision.changed) or "config"
            self.emit(
                target.listed, "ConfigChanged", f"kube-rehash notified: {changed} changed", warning=False
            )
            return None
        if decision.action is not Action.ROLLOUT:
            return None
        log.info("rolled %s: %s", target.ref, decision.reason)
        changed = ", ".join(decision.changed) or "config"
        self.emit(target.listed, "ConfigChanged", f"kube-rehash rolled out: {changed} changed", warning=False)
        if target.kind.runs_jobs and target.run_on_change and decision.config_hash:
            return self.create_job(target, updated, decision.config_hash)
        return None

    def create_job(self, target: Target, cronjob: dict[str, Any], config_hash: str) -> str | None:
        job = build_job(cronjob, config_hash)
        if job is None:
            return "rolled out, but the CronJob has no job template to run"
        try:
            self.client.create(jobs_path(target.namespace), job, dry_run=self.server_dry_run)
        except PassCut:
            return (
                "job template updated, but the pass budget ran out before the run-on-change Job was created"
            )
        except Conflict:
            log.info("job %s already exists (another pass created it)", job["metadata"]["name"])
        except RehashError as exc:
            return f"job template updated, but creating the run-on-change Job failed: {exc}"
        return None

    def fail(self, target: Target, decision: Decision, reason: str) -> Row:
        log.warning("%s failed: %s", target.ref, reason)
        self.emit(
            target.listed,
            "RolloutFailed",
            f"kube-rehash could not update the workload: {reason}",
            warning=True,
        )
        return Row.of(target.listed, replace(decision, action=Action.FAILED, reason=reason))

    def emit(self, target: Listed, reason: str, message: str, *, warning: bool) -> None:
        if not self.options.events or self.client_dry_run:
            return
        event = build_event(target, reason=reason, message=message, warning=warning, now=self.now)
        try:
            self.client.create(events_path(target), event, dry_run=self.server_dry_run)
        except PassCut:
            log.info("no Event on %s: the pass may start no more requests", target.ref)
        except RehashError as exc:
            log.warning("recording an Event on %s failed: %s", target.ref, exc)
            with self._lock:
                self.event_failures.setdefault(target.namespace, str(exc))


def evicting(decision: Decision) -> bool:
    """A restart by eviction to carry out (pipeline/pods.py): pods to evict, or the hash to record."""
    return decision.eviction is not None and decision.action in (Action.ROLLOUT, Action.IN_SYNC)


def restamped(item: Planned, row: Row) -> tuple[Target, Observed] | None:
    """The full view and the records this pass's adopt, refresh or notification of the workload just
    stamped (`row`), which a move of its rollout record stamps again: a Deployment's generation moves
    with every annotation write. None when the pass wrote no records of it."""
    observed = item.decision.observed
    if row.action in METADATA_ACTIONS and item.full is not None and observed is not None:
        return item.full, observed
    return None
