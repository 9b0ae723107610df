"""The batches of a pass, in walk order: from its listing, held or streamed, as policy/walk.py chooses.

The pass lists the opted-in workloads metadata-only (pipeline/listing.py). A listing it holds is triaged
(pure), prepared with the reads that serve many batches (kinds most of whose workloads need their spec, listed
in full; in a whole-cluster pass the cluster-wide source surveys) and cut into batches. A whole-cluster pass
with more than `streamAbove` of them walks the cluster namespace by namespace as its lists stream
(pipeline/streamed_walk.py), on from its listing or after a tally. Whichever walk, the pass sees one iterator
of (batch, triage) and the scope outcomes of what could not be listed.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from reconcile.errors import PassCut, RehashError
from reconcile.kube.client import KubeClient, namespace_exclusions
from reconcile.kube.page_size import first_page_size
from reconcile.model.choices import Fetch
from reconcile.model.kinds import Kind
from reconcile.model.workload import Listed
from reconcile.pipeline.budget import Budget
from reconcile.pipeline.listing import Listing, list_targets
from reconcile.pipeline.read import ReadStage, prefetch_kinds
from reconcile.pipeline.scope import covers_whole_cluster
from reconcile.pipeline.streamed_walk import StreamedBatches
from reconcile.policy.outcome import Outcome
from reconcile.policy.rules import Rules
from reconcile.policy.tally import Tally, WalkPlan
from reconcile.policy.triage import Batch, Triage, plan_batches, rotate, rotation_start, wanted_sources
from reconcile.policy.walk import choose_walk, health_seconds, held_estimate, may_not_fit
from reconcile.settings.table import Settings

log = logging.getLogger(__name__)


@dataclass
class Walk:
    """One pass's batches and what its listing established besides them."""

    listing: Listing
    batches: Iterator[tuple[Batch, Triage]]
    total: int
    """Opted-in workloads the walk expects (for progress): counted, or estimated from a sample."""
    streamed: StreamedBatches | None = None
    problems: list[Outcome] = field(default_factory=list)

    def scope_outcomes(self) -> list[Outcome]:
        """The scopes that could not be listed or were not reached, once the batches are walked."""
        return [*self.problems, *(self.streamed.rows if self.streamed is not None else ())]


class Walker:
    """Lists the pass's workloads and opens the walk its listing calls for."""

    def __init__(
        self, settings: Settings, client: KubeClient, stage: ReadStage, rules: Rules, budget: Budget
    ) -> None:
        self.settings = settings
        self.client = client
        self.stage = stage
        self.rules = rules
        self.budget = budget

    def open(self, epoch: float) -> Walk:
        listing = list_targets(
            self.settings, self.client, self.rules.discovery, key_fingerprint=self.rules.fingerprint
        )
        self.stage.census = listing.census
        plan = self.plan_walk(listing)
        problems = list(listing.failures)
        if plan is not None and plan.one_listing:
            streamed = self.streamed(listing)
            self.hold_for_health(listing.tally, plan.scale)
            batches = streamed.walk_on(listing, plan)
            return Walk(listing, batches, round(listing.tally.total * plan.scale), streamed, problems)
        if listing.streamed:
            listing.finish(self.rules.fingerprint)
            problems = list(listing.failures)
            streamed = self.streamed(listing)
            return Walk(listing, self.walk_tallied(streamed, epoch), listing.tally.total, streamed, problems)
        return Walk(listing, self.walk_held(listing, epoch), len(listing.workloads), None, problems)

    def streamed(self, listing: Listing) -> StreamedBatches:
        return StreamedBatches(self.settings, self.client, self.stage, self.rules, listing)

    def seconds_left(self) -> float:
        """What is left of the budget for reading."""
        return self.budget.remaining() - self.budget.reserve - self.budget.held

    def plan_walk(self, listing: Listing) -> WalkPlan | None:
        """For a listing stopped at its sample: on from its lists, or a tally first (policy/walk.py). None:
        nothing to plan, the listing is held or tallied."""
        if listing.open is None or not listing.streamed:
            return None
        plan = choose_walk(
            listing.tally,
            seen=listing.open.seen,
            total=listing.open.total,
            by_name=self.settings.reading.fetch is not Fetch.AUTO,
            qps=self.settings.limits.qps,
            seconds_left=self.seconds_left(),
        )
        log.info("one listing of the workloads: %s (%s)", "yes" if plan.one_listing else "no", plan.why)
        return plan

    def walk_held(self, listing: Listing, epoch: float) -> Iterator[tuple[Batch, Triage]]:
        """The batches of a pass that holds its listing, planned from its views and their tally."""
        listed, triage = listing.workloads, listing.triage()
        self.hold_for_health(listing.tally)
        self.prepare(listed, triage, listing.tally.kinds_in_full(rate_limited=self.settings.limits.qps > 0))
        batches = plan_batches(listed)
        reading = self.settings.reading
        estimate = held_estimate(
            listed,
            triage,
            recorded_by_name=not covers_whole_cluster(self.settings) or reading.fetch is not Fetch.AUTO,
            content_by_name=reading.fetch is Fetch.GET,
            prefetched=self.stage.prefetched.keys(),
        )
        start = 0
        if may_not_fit(estimate, qps=self.settings.limits.qps, seconds_left=self.seconds_left()):
            start = rotation_start(len(batches), epoch, self.settings.limits.timeout)
            log.info("the pass may not fit its budget: starting at batch %d of %d", start, len(batches))
        return ((batch, triage) for batch in rotate(batches, start))

    def walk_tallied(self, streamed: StreamedBatches, epoch: float) -> Iterator[tuple[Batch, Triage]]:
        """The batches of a pass that tallied its listing (pipeline/streamed_walk.py), planned from the
        tally."""
        tally = streamed.tally
        self.hold_for_health(tally)
        estimate = tally.reads_estimate(
            streamed.in_full,
            recorded_by_name=self.settings.reading.fetch is not Fetch.AUTO,
            content_by_name=self.settings.reading.fetch is Fetch.GET,
        )
        start = 0
        if may_not_fit(estimate, qps=self.settings.limits.qps, seconds_left=self.seconds_left()):
            count = len(tally.workloads)
            start = rotation_start(count, epoch, self.settings.limits.timeout)
            log.info("the pass may not fit its budget: starting at namespace %d of %d", start, count)
        return streamed.batches(start)

    def hold_for_health(self, tally: Tally, scale: float = 1.0) -> None:
        """Keep a bounded share of the budget for the rollout-health checks after the pending work."""
        seconds = health_seconds(
            tally.watched,
            self.stage.census,
            page_size=first_page_size(self.settings.reading.page_size),
            qps=self.settings.limits.qps,
            timeout=self.settings.limits.timeout,
            scale=scale,
        )
        if seconds > 0:
            watched = round(sum(tally.watched.values()) * scale)
            log.info(
                "%d rollouts watched: up to %.1f s of the budget kept for their checks", watched, seconds
            )
        self.budget.hold(seconds)

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
                selector = ",".join(namespace_exclusions(self.settings.scope.exclude_namespaces)) or None
                if self.settings.scope.namespaces:
                    scopes, selector = sorted({w.namespace for w in listed}), None
                found = prefetch_kinds(
                    self.client, kinds, unseen, self.rules.discovery, scopes=scopes, field_selector=selector
                )
                self.stage.prefetched.update(found)
            if covers_whole_cluster(self.settings):
                self.stage.reader.survey_cluster(wanted, self.settings.scope.exclude_namespaces)
        except PassCut:
            log.info("the pass budget ran out while reading the cluster's workloads and sources")
        except RehashError as exc:  # best effort: the batches read what these could not
            log.warning("reading the cluster's workloads in full failed (%s); reading them by batch", exc)
