"""One reconcile pass: list, then batch by batch triage → read → decide → write, under one time budget.

The pass lists the opted-in workloads metadata-only, triages them (pure), and walks its scope in batches
(a namespace, or a slice of a large one). For each batch it reads one snapshot, decides every workload
from it, and writes the decisions before the next batch is read, so every pass leaves durable progress.
One `Budget` is asked before every request: what it did not reach is `deferred` with the reason `pass
budget`, and a pass that may not fit its budget starts where a time-derived rotation says, so no
namespace is starved (docs/performance.md, "Time budget"). A failed list fails its scope visibly; a
failed workload is reported and the pass goes on.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime

from reconcile.budget import Budget
from reconcile.decide import decide_batch
from reconcile.errors import PassCut, RehashError
from reconcile.kube.client import KubeClient, namespace_exclusions
from reconcile.listing import covers_whole_cluster, list_targets
from reconcile.plan import WRITING_ACTIONS, Action, Decision, defer_for_budget, defer_for_stop
from reconcile.planner import open_stage, redecide, rules_for
from reconcile.read import ReadStage, prefetch_kinds
from reconcile.report import Report, Row
from reconcile.settings import Settings
from reconcile.targets import Annotations, Listed
from reconcile.triage import (
    Batch,
    Triage,
    kinds_to_list_in_full,
    plan_batches,
    rotate,
    rotation_start,
    triage_listed,
    wanted_counts,
    wanted_sources,
)
from reconcile.write import WriteOptions, Writer

log = logging.getLogger(__name__)
# Requests a workload that needs its spec costs, about (its object, its sources' content, its write):
# the estimate that decides whether a pass may not fit its budget and must rotate its start.
REQUESTS_PER_FULL_READ = 4
# Seconds per request assumed when no rate limit is set (qps 0), for the same estimate.
UNLIMITED_REQUEST_SECONDS = 0.005


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
    with ThreadPoolExecutor(max_workers=settings.concurrency, thread_name_prefix="rehash") as executor:
        walk = PassWalk(
            settings,
            client,
            open_stage(settings, client, executor, rules_for(settings, hash_key, now())),
            budget,
        )
        walk.run(epoch(), progress)
    report = walk.report
    report.contents_fetched = walk.stage.reader.contents_fetched
    report.duration = budget.elapsed()
    report.api = client.stats.snapshot()
    return report


class PassWalk:
    """The batches of one pass, walked in order under the budget."""

    def __init__(self, settings: Settings, client: KubeClient, stage: ReadStage, budget: Budget) -> None:
        self.settings = settings
        self.client = client
        self.stage = stage
        self.budget = budget
        self.report = Report(dry_run=settings.dry_run != "none")
        options = WriteOptions(settings.dry_run, settings.events, settings.max_rollouts, settings.concurrency)
        self.writer = Writer(
            client,
            options,
            keys=Annotations(settings.prefix),
            now=stage.rules.now,
            redecide=lambda target: redecide(stage, target),
        )

    def run(self, epoch: float, progress: Callable[[int, int], None] | None) -> None:
        listed, failures = list_targets(self.settings, self.client, self.stage.rules.discovery)
        self.report.extend(failures)
        triage = triage_listed(listed, self.stage.rules.fingerprint)
        self.prepare(listed, triage)
        batches = plan_batches(listed)
        start = 0
        if self.may_not_fit(listed, triage):
            start = rotation_start(len(batches), epoch, self.settings.timeout)
            log.info("the pass may not fit its budget: starting at batch %d of %d", start, len(batches))
        done = 0
        for batch in rotate(batches, start):
            self.report.extend(self.walk_batch(batch, triage))
            done += len(batch.workloads)
            if progress is not None:
                progress(done, len(listed))
        self.report.extend(self.writer.failure_rows())
        self.report.budget_exhausted = self.budget.exhausted
        self.report.interrupted = self.budget.stop.is_set()

    def prepare(self, listed: Sequence[Listed], triage: Triage) -> None:
        """Reads that serve many batches: full lists (cluster-wide, or per namespace under -n) of kinds most
        of whose workloads need their spec, and in a whole-cluster pass cluster-wide source metadata for the
        workloads confirmable from their records; the reader learns what each namespace will want."""
        wanted = wanted_sources(listed, triage)
        self.stage.reader.expect(wanted)
        try:
            if kinds := kinds_to_list_in_full(listed, triage):
                unseen = {w.uid: w for w in listed if w.uid in triage.need_spec}
                # Scoped by -n: one list per namespace, not per batch of a large one; else cluster-wide.
                scopes: Sequence[str | None] = [None]
                selector = ",".join(namespace_exclusions(self.settings.exclude_namespaces)) or None
                if self.settings.namespaces:
                    scopes, selector = sorted({w.namespace for w in listed}), None
                self.stage.prefetched.update(
                    prefetch_kinds(
                        self.client, kinds, unseen, self.stage.rules, scopes=scopes, field_selector=selector
                    )
                )
            if covers_whole_cluster(self.settings):
                namespaces = {w.namespace for w in listed}
                self.stage.reader.survey_cluster(
                    wanted_counts(wanted), namespaces, self.settings.exclude_namespaces
                )
        except PassCut:
            log.info("the pass budget ran out while reading the cluster's workloads and sources")
        except RehashError as exc:  # best effort: the batches read what these could not
            log.warning("reading the cluster's workloads in full failed (%s); reading them by batch", exc)

    def may_not_fit(self, listed: Sequence[Listed], triage: Triage) -> bool:
        """An estimate of the requests the batches need against the budget left for reading."""
        full = sum(1 for w in listed if w.uid in triage.need_spec and w.uid not in self.stage.prefetched)
        first_sight = sum(1 for w in listed if w.uid in triage.need_spec)
        recorded = sum(len(w.discovery.references) for w in listed if w.uid in triage.trusted)
        estimate = full + (REQUESTS_PER_FULL_READ - 1) * first_sight
        if not covers_whole_cluster(self.settings) or self.settings.fetch != "auto":
            estimate += recorded
        qps = self.settings.qps
        seconds = estimate / qps if qps > 0 else estimate * UNLIMITED_REQUEST_SECONDS
        return seconds > 0.5 * (self.budget.remaining() - self.budget.reserve)

    def walk_batch(self, batch: Batch, triage: Triage) -> list[Row]:
        if not self.budget.may_read():
            self.budget.exhausted |= not self.budget.stop.is_set()
            return [Row.of(w, self.unreached(w, triage)) for w in batch.workloads]
        snapshot, _cut = self.stage.read_batch(batch, triage)
        decisions = decide_batch(batch.workloads, triage.settled, snapshot, self.stage.rules)
        if self.budget.stop.is_set():
            decisions = [(s, self.stopped(d)) for s, d in decisions]
        return self.writer.write_batch(decisions)

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
