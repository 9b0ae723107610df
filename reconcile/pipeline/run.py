"""One reconcile pass: list, then batch by batch plan (decide or ask, read, repeat) → write, under one time
budget, then the checks of the rollouts it watches; one result value at the end.

```
walk = Walker(...).open(epoch)                # pipeline/walk.py: the listing, and its batches
for batch, triage in walk.batches:
    planned = plan_batch(stage, batch, ...)   # pipeline/planner.py: rounds of policy.answer and reads
    written = writes.write_batch(planned)     # pipeline/writes.py: limits, holds, writes, conflicts
deliver the held notifications, write them    # pipeline/notifier.py, then writes.write_delivered
check the watched rollouts                    # pipeline/rollouts.py
return PassResult(outcomes, ...)              # policy/result.py: what output/ makes every row from
```

Every batch's writes are done before the next batch is read, so every pass leaves durable progress; the
rollout checks come after the pending work of every batch (policy/priority.py). One `Budget` is asked
before every request: what it did not reach is `deferred` with the reason `pass budget`, and a pass that
may not fit its budget starts where a time-derived rotation says, so no namespace is starved
(docs/large-clusters.md, "Time budget"). A failed list fails its scope visibly; a failed workload is reported
and the pass goes on.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime

from reconcile.kube.client import KubeClient
from reconcile.model.annotations import Annotations
from reconcile.model.choices import DryRun
from reconcile.model.workload import Listed
from reconcile.pipeline.budget import Budget
from reconcile.pipeline.listing import say_foreign
from reconcile.pipeline.notifier import Notifier
from reconcile.pipeline.planner import open_stage, plan_batch, rules_for
from reconcile.pipeline.read import ReadStage
from reconcile.pipeline.reports import publish_reports
from reconcile.pipeline.rollouts import RolloutChecks, Watch, watch_of
from reconcile.pipeline.walk import Walker
from reconcile.pipeline.write import Writer, Written
from reconcile.pipeline.writes import PassWrites
from reconcile.policy.decision import (
    WRITING_ACTIONS,
    Action,
    Decision,
    defer_for_budget,
    defer_for_stop,
)
from reconcile.policy.outcome import Outcome
from reconcile.policy.outcomes import Outcomes
from reconcile.policy.planned import Planned
from reconcile.policy.result import PassResult
from reconcile.policy.rules import Rules
from reconcile.policy.triage import Batch, Triage
from reconcile.settings.table import Settings

log = logging.getLogger(__name__)


def run_pass(
    settings: Settings,
    client: KubeClient,
    *,
    budget: Budget | None = None,
    hash_key: bytes | None = None,
    now: Callable[[], datetime] = lambda: datetime.now(UTC),
    epoch: Callable[[], float] = time.time,
    progress: Callable[[int, int], None] | None = None,
) -> PassResult:
    """Run one pass and return its result (never raises for per-workload or per-scope failures).

    `budget` must be the one the client's gate asks, so that listing, reading and writing share it."""
    budget = budget or Budget(settings.limits.timeout)
    rules = rules_for(settings, hash_key, now())
    with ThreadPoolExecutor(max_workers=settings.limits.concurrency, thread_name_prefix="rehash") as executor:
        stage = open_stage(settings, client, executor, rules)
        walked = PassRun(settings, client, stage, rules, budget).run(epoch(), progress)
    return replace(
        walked,
        contents_fetched=stage.reader.contents_fetched,
        duration=budget.elapsed(),
        api=client.stats.snapshot(),
    )


@dataclass
class Batches:
    """What the batches of a pass left: their outcomes in walk order, and what the end of the pass needs."""

    outcomes: Outcomes = field(default_factory=Outcomes)
    watches: list[Watch] = field(default_factory=list)
    event_failures: dict[str, str] = field(default_factory=dict)
    """namespace -> an Event the server refused there."""
    unreadable: dict[tuple[str, str, str], Outcome] = field(default_factory=dict)
    """The sources that could not be read, one row each however many workloads use them."""

    def add(self, written: Sequence[Written], *, dry_run: bool) -> None:
        for item in written:
            self.outcomes.append(outcome_of(item.planned, item.decision, dry_run=dry_run))
            source = item.decision.unreadable
            if source is not None:
                key = (source.kind, source.namespace, source.name)
                self.unreadable.setdefault(key, Outcome.unreadable_source(source))
            watch = watch_of(item.planned, item.decision, dry_run=dry_run)
            if watch is not None:
                self.watches.append(watch)
            if item.event_failure is not None:
                self.event_failures.setdefault(*item.event_failure)


Later = tuple[Listed, Decision, str | None]
"""What a stage after the batches made of a workload: its decision, and our last rollout's status."""


class PassRun:
    """The batches of one pass, walked in order under the budget, and the end of the pass."""

    def __init__(
        self, settings: Settings, client: KubeClient, stage: ReadStage, rules: Rules, budget: Budget
    ) -> None:
        self.settings = settings
        self.stage = stage
        self.rules = rules
        self.budget = budget
        self.dry_run = settings.output.dry_run
        self.writer = Writer(
            client,
            dry_run=self.dry_run,
            events=settings.output.events,
            keys=Annotations(settings.scope.prefix),
            now=rules.now,
            concurrency=settings.limits.concurrency,
        )
        self.writes = PassWrites(
            self.writer,
            stage,
            rules,
            max_rollouts=settings.policy.max_rollouts,
            webhook=settings.notify.webhook_secret is not None,
        )
        self.notifier = Notifier.for_pass(settings, client, budget, now=rules.now)
        self.walker = Walker(settings, client, stage, rules, budget)

    def run(self, epoch: float, progress: Callable[[int, int], None] | None) -> PassResult:
        walk = self.walker.open(epoch)
        done = Batches()
        seen = 0
        for batch, triage in walk.batches:
            done.add(self.walk_batch(batch, triage), dry_run=self.dry_run is not DryRun.NONE)
            seen += len(batch.workloads)
            if progress is not None:
                progress(seen, max(seen, walk.total))
        say_foreign(walk.listing.foreign)
        self.budget.release()
        later, failures = self.deliver_notifications(done)
        checks = RolloutChecks(self.writer, self.stage.executor, self.stage.census, self.rules)
        for uid, (decision, status) in checks.check(done.watches, may_read=self.budget.may_read()).items():
            listed, delivered, _ = later.get(uid, (None, decision, None))
            later[uid] = (listed or self.watched(done, uid), delivered, status)
        outcomes = assemble(done.outcomes, later)
        outcomes.extend(walk.scope_outcomes())
        outcomes.extend(done.unreadable.values())
        outcomes.extend(failures)
        outcomes.extend(
            Outcome.scope_failure("Event", namespace, f"recording Events failed: {error}")
            for namespace, error in sorted(done.event_failures.items())
        )
        outcomes.extend(publish_reports(self.settings, self.writer.client, outcomes))
        return PassResult(
            outcomes,
            dry_run=self.dry_run is not DryRun.NONE,
            server_dry_run=self.dry_run is DryRun.SERVER,
            budget_exhausted=self.budget.exhausted,
            interrupted=self.budget.stop.is_set(),
            foreign_annotations=dict(sorted(walk.listing.foreign.items())),
        )

    @staticmethod
    def watched(done: Batches, uid: str) -> Listed:
        return next(w.listed for w in done.watches if w.listed.uid == uid)

    def walk_batch(self, batch: Batch, triage: Triage) -> list[Written]:
        """One batch's pending work: planned, then written (what it comes to is returned)."""
        if not self.budget.may_read():
            self.budget.exhausted |= not self.budget.stop.is_set()
            unreached = [Planned(w, self.unreached(w, triage)) for w in batch.workloads]
            return [Written(p, p.decision) for p in unreached]
        planned = plan_batch(self.stage, batch, triage, self.rules)
        if self.budget.stop.is_set():
            planned = [replace(p, decision=stopped(p.decision)) for p in planned]
        return self.writes.write_batch(planned)

    def deliver_notifications(self, done: Batches) -> tuple[dict[str, Later], list[Outcome]]:
        """After the batches, the notifications they held (pipeline/writes.py, `deliver_held`): what
        became of them by uid (it stands for what their batches left) and a failed delivery's scope
        outcome; a held notification whose record was not written keeps no records of ours to stamp
        again."""
        delivered = self.writes.deliver_held(self.notifier)
        later: dict[str, Later] = {}
        for written in delivered.written:
            later[written.planned.listed.uid] = (written.planned.listed, written.decision, None)
            if written.event_failure is not None:
                done.event_failures.setdefault(*written.event_failure)
        done.watches = [unstamped(w) if w.listed.uid in delivered.unwritten else w for w in done.watches]
        return later, delivered.failures

    def unreached(self, workload: Listed, triage: Triage) -> Decision:
        settled = triage.settled.get(workload.uid)
        if settled is not None:
            return settled
        if self.budget.stop.is_set():
            return defer_for_stop()
        return defer_for_budget()


def unstamped(watch: Watch) -> Watch:
    """A watch whose held notification was not written: its records are not the pass's to stamp again."""
    planned = watch.planned
    return replace(watch, planned=replace(planned, decision=replace(planned.decision, observed=None)))


def stopped(decision: Decision) -> Decision:
    """A decision a SIGTERM keeps from being written."""
    if decision.action is Action.DEFERRED or decision.action not in WRITING_ACTIONS:
        return decision
    return defer_for_stop(decision)


def outcome_of(planned: Planned, written: Decision, *, dry_run: bool) -> Outcome:
    """A workload's outcome from what its write came to; a rollout this pass wrote replaced the record of
    the last one, so that one's status no longer applies."""
    if written.action is Action.ROLLOUT and not dry_run and written.rollout is not None:
        written = replace(written, rollout=None)
    return Outcome.of(planned.listed, written)


def assemble(outcomes: Outcomes, later: Mapping[str, Later]) -> Outcomes:
    """The pass's outcomes, made once at the end: each workload's from its batch, or the one a later stage
    (the delivery of its notification, the check of its rollout) made of it."""
    if not later:
        return outcomes
    by_key = {}
    for listed, decision, status in later.values():
        by_key[(listed.kind.kind, listed.namespace, listed.name)] = Outcome.of(listed, decision, status)
    out = Outcomes(by_key.pop((o.kind, o.namespace, o.name), o) for o in outcomes)
    out.extend(by_key.values())  # not expected: every later outcome's workload left one in its batch
    return out
