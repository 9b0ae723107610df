"""One reconcile pass: list, then batch by batch triage → read → decide → write, under one time budget,
then the bookkeeping of the rollouts it watches.

The pass lists the opted-in workloads metadata-only, triages them (pure), and walks its scope in batches
(a namespace, or a slice of a large one). A whole-cluster pass with more than `streamAbove` of them keeps
only their tally and walks the cluster namespace by namespace as its lists stream (pipeline/streamed.py),
so its memory does not grow with the cluster; both walks hand the same batches to the same stages. For
each batch it reads one snapshot, decides every workload from it, and writes the decisions before the next
batch is read, so every pass leaves durable progress.
Only then does it check the status of the rollouts it started and update their records
(`check_rollouts`): pending work comes first (policy.priority). One `Budget` is asked before every
request: what it did not reach is `deferred` with the reason `pass budget`, and a pass that may not fit
its budget starts where a time-derived rotation says, so no namespace is starved (docs/performance.md,
"Time budget"). A failed list fails its scope visibly; a failed workload is reported and the pass goes on.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any

from reconcile.config.settings import Settings
from reconcile.errors import PassCut, RehashError
from reconcile.kube.client import KubeClient, namespace_exclusions
from reconcile.model.annotations import Annotations
from reconcile.model.kinds import Kind
from reconcile.model.rollouts import watched
from reconcile.model.workload import Listed, status_view
from reconcile.output.report import Report, Row
from reconcile.output.rows import Rows
from reconcile.pipeline.budget import Budget
from reconcile.pipeline.listing import Listing, list_targets, say_foreign
from reconcile.pipeline.notifier import Notifier
from reconcile.pipeline.planner import open_stage, plan_batch, redecide, rules_for
from reconcile.pipeline.read import ReadStage, prefetch_kinds
from reconcile.pipeline.scope import covers_whole_cluster
from reconcile.pipeline.streamed import StreamedBatches
from reconcile.pipeline.views import read_objects
from reconcile.pipeline.write import WriteOptions, Writer
from reconcile.policy.decide import Planned, with_rollout
from reconcile.policy.decision import WRITING_ACTIONS, Action, Decision, defer_for_budget, defer_for_stop
from reconcile.policy.priority import health_hold
from reconcile.policy.reads import Costs, estimate_reads, request_seconds, requests_to_read
from reconcile.policy.rules import Rules
from reconcile.policy.tally import Tally, WalkPlan, plan_walk
from reconcile.policy.triage import (
    Batch,
    Triage,
    plan_batches,
    rotate,
    rotation_start,
    wanted_sources,
)

log = logging.getLogger(__name__)
ROTATE_ABOVE = 0.5
"""A pass whose reads are estimated to take more than this share of the budget left for reading starts at
a rotated batch: the estimate is rough (policy/reads.py), so passes that might not reach the end of the
walk spread their starts, and no namespace is starved (docs/performance.md, "Time budget")."""


def run_pass(
    settings: Settings,
    client: KubeClient,
    *,
    budget: Budget | None = None,
    hash_key: bytes | None = None,
    now: Callable[[], datetime] = lambda: datetime.now(UTC),
    epoch: Callable[[], float] = time.time,
    progress: Callable[[int, int], None] | None = None,
) -> Report:
    """Run one pass and return its report (never raises for per-workload or per-scope failures).

    `budget` must be the one the client's gate asks, so that listing, reading and writing share it."""
    budget = budget or Budget(settings.timeout)
    rules = rules_for(settings, hash_key, now())
    with ThreadPoolExecutor(max_workers=settings.concurrency, thread_name_prefix="rehash") as executor:
        walk = PassWalk(settings, client, open_stage(settings, client, executor, rules), rules, budget)
        walk.run(epoch(), progress)
    report = walk.report
    report.contents_fetched = walk.stage.reader.contents_fetched
    report.duration = budget.elapsed()
    report.api = client.stats.snapshot()
    return report


class PassWalk:
    """The batches of one pass, walked in order under the budget."""

    def __init__(
        self, settings: Settings, client: KubeClient, stage: ReadStage, rules: Rules, budget: Budget
    ) -> None:
        self.settings = settings
        self.client = client
        self.stage = stage
        self.rules = rules
        self.budget = budget
        self.report = Report(dry_run=settings.dry_run != "none")
        options = WriteOptions(
            settings.dry_run,
            settings.events,
            settings.max_rollouts,
            settings.concurrency,
            hold_notify=settings.webhook_secret is not None and settings.dry_run == "none",
        )
        self.writer = Writer(
            client,
            options,
            keys=Annotations(settings.prefix),
            now=rules.now,
            redecide=lambda target: redecide(stage, target, rules),
        )
        self.notifier = Notifier.for_pass(settings, client, self.writer, budget, now=rules.now)

    def run(self, epoch: float, progress: Callable[[int, int], None] | None) -> None:
        listing = list_targets(
            self.settings, self.client, self.rules.discovery, key_fingerprint=self.rules.fingerprint
        )
        self.stage.census = listing.census
        streamed: StreamedBatches | None = None
        plan = self.plan_walk(listing)
        if plan is not None and plan.one_listing:
            self.report.extend(listing.failures)
            streamed = StreamedBatches(self.settings, self.client, self.stage, self.rules, listing)
            self.hold_for_health(listing.tally, plan.scale)
            total = round(listing.tally.total * plan.scale)
            batches = streamed.walk_on(listing, plan)
        elif listing.streamed:
            listing.finish(self.rules.fingerprint)
            self.report.extend(listing.failures)
            streamed = StreamedBatches(self.settings, self.client, self.stage, self.rules, listing)
            total = listing.tally.total
            batches = self.plan_streamed(streamed, epoch)
        else:
            self.report.extend(listing.failures)
            total = len(listing.workloads)
            batches = self.plan_held(listing, epoch)
        done = 0
        watches: list[Watch] = []
        for batch, triage in batches:
            watches += self.walk_batch(batch, triage)
            done += len(batch.workloads)
            if progress is not None:
                progress(done, max(done, total))
        if streamed is not None:
            self.report.extend(streamed.rows)
        self.report.foreign_annotations = dict(sorted(listing.foreign.items()))
        say_foreign(listing.foreign)
        self.budget.release()
        delivered, unwritten = self.deliver_notifications()
        tracked = self.check_rollouts(watches, delivered, unwritten)
        self.report.rows = assemble_rows(self.report.rows, {**delivered, **tracked})
        self.report.extend(self.writer.failure_rows())
        self.report.budget_exhausted = self.budget.exhausted
        self.report.interrupted = self.budget.stop.is_set()

    def plan_walk(self, listing: Listing) -> WalkPlan | None:
        """For a listing stopped at its sample (pipeline/workload_lists.py): whether the walk goes on from
        its lists, or the rest is tallied first (`policy.tally.plan_walk`, and whether the light pass the
        sample says may not fit its budget). None: nothing to plan, the listing is held or tallied."""
        if listing.open is None or not listing.streamed:
            return None
        sample = listing.tally
        plan = plan_walk(
            sample,
            seen=listing.open.seen,
            total=listing.open.total,
            by_name=self.settings.fetch != "auto",
            rate_limited=self.settings.qps > 0,
        )
        if plan.one_listing:
            reads = sample.reads_estimate([], recorded_by_name=False, content_by_name=False)
            estimate = round(reads * plan.scale)
            if self.may_not_fit(estimate):
                why = f"the sample's reads, scaled, are about {estimate} requests: may not fit"
                plan = WalkPlan(False, why)
        log.info("one listing of the workloads: %s (%s)", "yes" if plan.one_listing else "no", plan.why)
        return plan

    def plan_held(self, listing: Listing, epoch: float) -> Iterator[tuple[Batch, Triage]]:
        """The batches of a pass that holds its listing, planned from its views and their tally."""
        listed, triage = listing.workloads, listing.triage()
        self.hold_for_health(listing.tally)
        self.prepare(listed, triage, listing.tally.kinds_in_full(rate_limited=self.settings.qps > 0))
        batches = plan_batches(listed)
        start = 0
        if self.may_not_fit(self.held_estimate(listed, triage)):
            start = rotation_start(len(batches), epoch, self.settings.timeout)
            log.info("the pass may not fit its budget: starting at batch %d of %d", start, len(batches))
        return ((batch, triage) for batch in rotate(batches, start))

    def plan_streamed(self, streamed: StreamedBatches, epoch: float) -> Iterator[tuple[Batch, Triage]]:
        """The batches of a pass that streams its listing (pipeline/streamed.py), planned from the tally."""
        tally = streamed.tally
        self.hold_for_health(tally)
        estimate = tally.reads_estimate(
            streamed.in_full,
            recorded_by_name=self.settings.fetch != "auto",
            content_by_name=self.settings.fetch == "get",
        )
        start = 0
        if self.may_not_fit(estimate):
            count = len(tally.workloads)
            start = rotation_start(count, epoch, self.settings.timeout)
            log.info("the pass may not fit its budget: starting at namespace %d of %d", start, count)
        return streamed.batches(start)

    def prepare(self, listed: Sequence[Listed], triage: Triage, kinds: Sequence[Kind]) -> None:
        """Reads that serve many batches: full lists (cluster-wide, or per namespace under -n) of kinds most
        of whose workloads need their spec, and in a whole-cluster pass cluster-wide source metadata for the
        workloads confirmable from their records; the reader learns what each namespace will want."""
        wanted = wanted_sources(listed, triage)
        self.stage.reader.expect({key: len(names) for key, names in wanted.items()})
        try:
            if kinds:
                unseen = {w.uid: w for w in listed if w.uid in triage.need_spec}
                # Scoped by -n: one list per namespace, not per batch of a large one; else cluster-wide.
                scopes: Sequence[str | None] = [None]
                selector = ",".join(namespace_exclusions(self.settings.exclude_namespaces)) or None
                if self.settings.namespaces:
                    scopes, selector = sorted({w.namespace for w in listed}), None
                self.stage.prefetched.update(
                    prefetch_kinds(
                        self.client,
                        kinds,
                        unseen,
                        self.rules.discovery,
                        scopes=scopes,
                        field_selector=selector,
                    )
                )
            if covers_whole_cluster(self.settings):
                self.stage.reader.survey_cluster(wanted, self.settings.exclude_namespaces)
        except PassCut:
            log.info("the pass budget ran out while reading the cluster's workloads and sources")
        except RehashError as exc:  # best effort: the batches read what these could not
            log.warning("reading the cluster's workloads in full failed (%s); reading them by batch", exc)

    def held_estimate(self, listed: Sequence[Listed], triage: Triage) -> int:
        """The requests the batches of a held listing need (`policy.reads.estimate_reads`)."""
        by_name = not covers_whole_cluster(self.settings) or self.settings.fetch != "auto"
        recorded = (w for w in listed if w.uid in triage.trusted)
        first_sight = [w for w in listed if w.uid in triage.need_spec]
        return estimate_reads(
            unread=sum(1 for w in first_sight if w.uid not in self.stage.prefetched),
            first_sight=len(first_sight),
            by_name=sum(len(w.discovery.references) for w in recorded) if by_name else 0,
            namespaces=None if self.settings.fetch == "get" else len({w.namespace for w in first_sight}),
        )

    def may_not_fit(self, estimate: int) -> bool:
        """Whether `estimate` requests may take more than `ROTATE_ABOVE` of the budget left for reading."""
        seconds = estimate * request_seconds(self.settings.qps)
        return seconds > ROTATE_ABOVE * (self.budget.remaining() - self.budget.reserve - self.budget.held)

    def hold_for_health(self, tally: Tally, scale: float = 1.0) -> None:
        """Keep a bounded share of the budget for the rollout-health checks after the pending work (of a
        sample's tally: `scale` times its count of them)."""
        groups = {key: round(n * scale) for key, n in tally.watched.items()}
        costs = Costs(self.settings.list_page_size)
        reads = sum(requests_to_read(n, self.stage.census.get(key), costs=costs) for key, n in groups.items())
        seconds = health_hold(
            reads + sum(groups.values()), request_seconds(self.settings.qps), self.settings.timeout
        )
        if seconds > 0:
            log.info(
                "%d rollouts watched: up to %.1f s of the budget kept for their checks",
                sum(groups.values()),
                seconds,
            )
        self.budget.hold(seconds)

    def walk_batch(self, batch: Batch, triage: Triage) -> list[Watch]:
        """One batch's pending work: read, decide, write; its rows go to the report, and what its watched
        rollouts need (a status read, a record update) is returned for `check_rollouts`."""
        kept: list[tuple[Planned | None, Row]]
        if not self.budget.may_read():
            self.budget.exhausted |= not self.budget.stop.is_set()
            planned = [Planned(w, self.unreached(w, triage)) for w in batch.workloads]
            kept = [(p, Row.of(p.listed, p.decision)) for p in planned]
        else:
            planned = plan_batch(self.stage, batch, triage, self.rules)
            if self.budget.stop.is_set():
                planned = [replace(p, decision=self.stopped(p.decision)) for p in planned]
            rows = self.writer.write_batch(planned)
            kept = [self.writer.for_tracking(item, row) for item, row in zip(planned, rows, strict=True)]
        self.report.extend(row for _, row in kept)
        return [Watch(item, row) for item, row in kept if item and needs_watch(item)]

    def deliver_notifications(self) -> tuple[dict[RowKey, Row], frozenset[str]]:
        """After the batches, the notifications they held: one webhook POST, then their records
        (pipeline/notifier.py). Returns the rows of the delivered workloads, by workload (they stand for
        the rows their batches left), and the uids of those whose records were not written."""
        held = self.writer.take_held()
        if self.notifier is None or not held:
            return {}, frozenset()
        outcome = self.notifier.deliver(held)
        self.report.extend(outcome.failures)
        return {row_key(row): row for row in outcome.rows}, outcome.unwritten

    def check_rollouts(
        self,
        watches: Sequence[Watch],
        delivered: Mapping[RowKey, Row] | None = None,
        unwritten: frozenset[str] = frozenset(),
    ) -> dict[RowKey, Row]:
        """After the pending work: read the status of watched rollouts nobody read in full this pass,
        oldest rollout first, as the budget allows (one list per namespace and kind where that is
        cheaper), then move the records of finished or stalled ones. A rollout left unchecked keeps its
        recorded state, without a request. Returns the rows of the watched workloads, by workload, over
        those their batches (or the delivery of their notifications) left."""
        delivered = delivered or {}
        unread = [w.listed for w in sorted(watches, key=lambda w: w.record_at) if w.decision.rollout is None]
        objects: dict[str, Any] = {}
        if unread and self.budget.may_read():
            try:
                objects, _cut = read_objects(self.client, self.stage.executor, unread, self.stage.census)
            except PassCut:
                log.info("the pass budget ran out before the rollouts' status was read")
        out: dict[RowKey, Row] = {}
        checked: list[tuple[Watch, Decision, Row]] = []
        for watch in watches:
            decision = watch.decision
            row = delivered.get(row_key(watch.row), watch.row)
            got = objects.get(watch.listed.uid)
            if decision.rollout is None and isinstance(got, Mapping) and same_uid(got, watch.listed):
                decision = with_rollout(watch.listed, decision, status_view(got), self.rules)
            elif isinstance(got, RehashError):
                log.warning("reading the rollout status of %s failed: %s", watch.listed.ref, got)
            if decision.rollout is None:  # not checked this pass: as recorded, without a request
                record = watched(watch.listed)
                if record is not None:
                    out[row_key(row)] = replace(row, rollout_status=record.state)
                continue
            # A held notification not delivered wrote nothing: its records are not the pass's to restamp.
            if watch.listed.uid in unwritten:
                decision = replace(decision, observed=None)
            status = decision.rollout.status.value if decision.rollout else None
            checked.append((watch, decision, replace(row, rollout_status=status)))
        rows = self.writer.track_all([(replace(w.planned, decision=d), row) for w, d, row in checked])
        out.update((row_key(row), row) for row in rows)
        return out

    def unreached(self, workload: Listed, triage: Triage) -> Decision:
        settled = triage.settled.get(workload.uid)
        if settled is not None:
            return settled
        if self.budget.stop.is_set():
            return defer_for_stop()
        return defer_for_budget()

    @staticmethod
    def stopped(decision: Decision) -> Decision:
        if decision.action is Action.DEFERRED:
            return decision
        if decision.action in WRITING_ACTIONS:
            return defer_for_stop(decision)
        return decision


@dataclass(frozen=True)
class Watch:
    """A watched rollout of one workload, as its batch left it: the decision (with the rollout's status
    when the workload was read in full) and its row."""

    planned: Planned
    row: Row

    @property
    def listed(self) -> Listed:
        return self.planned.listed

    @property
    def decision(self) -> Decision:
        return self.planned.decision

    @property
    def record_at(self) -> datetime:
        record = self.listed.bookkeeping.rollout
        return record.at if record is not None else datetime.max.replace(tzinfo=UTC)


RowKey = tuple[str, str, str]


def row_key(row: Row) -> RowKey:
    return (row.kind, row.namespace, row.name)


def assemble_rows(rows: Iterable[Row], later: Mapping[RowKey, Row]) -> Rows:
    """The report's rows, made once at the end of a pass: each workload's row from its batch, or the row
    a later stage (the delivery of its notification, the check of its rollout) made of it."""
    if not later and isinstance(rows, Rows):
        return rows  # no row to replace: the rows as the batches made them, not packed again
    pending = dict(later)
    out = Rows(pending.pop(row_key(row), row) for row in rows)
    out.extend(pending.values())  # not expected: every later row's workload left a row in its batch
    return out


def needs_watch(item: Planned) -> bool:
    """Whether the health checks have something to do for this workload: a status judged from its full
    view (its record may move), or an unfinished rollout of ours whose status no read of the pass gave
    (a listed workload, or one decided from its records)."""
    decision = item.decision
    if decision.rollout is not None:
        return True
    if watched(item.listed) is None:
        return False
    return decision.action not in (Action.FAILED, Action.ROLLOUT, Action.SKIPPED)


def same_uid(obj: Mapping[str, Any], subject: Listed) -> bool:
    metadata = obj.get("metadata")
    return isinstance(metadata, Mapping) and str(metadata.get("uid", "")) == subject.uid
