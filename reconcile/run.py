"""One reconcile pass: list opted-in workloads, read their sources, decide, write, report.

The pass holds only slim `Target` views and content digests, namespace by namespace. A failed list
fails its scope visibly (a report row with the Status message); a failed workload is reported and
the pass goes on. Writes stop as soon as the pass is asked to stop or runs out of time budget.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections import defaultdict
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime

from reconcile.apply import Writer
from reconcile.errors import RehashError
from reconcile.fetch import NamespaceSources, SourceMeta, SourceReader
from reconcile.hashing import ABSENT, key_fingerprint, selection_tag
from reconcile.kube.client import KubeClient
from reconcile.listing import covers_whole_cluster, list_targets
from reconcile.plan import (
    Action,
    Decision,
    Observed,
    apply_budget,
    decide,
    decide_early,
    observed_from,
    sort_key,
)
from reconcile.refs import DiscoverySettings, Reference, source_ignored, source_matches
from reconcile.report import Report
from reconcile.settings import Settings
from reconcile.survey import needed_labels, survey, survey_safely, wanted_counts
from reconcile.targets import Annotations, SourceRecord, Target, read_target, records_trusted
from reconcile.views import confirm_recorded, read_full

log = logging.getLogger(__name__)
# Seconds kept in reserve at the end of the time budget, so the report is always printed.
STOP_MARGIN = 5.0
# ...but never more than this share of the budget, so a short --timeout still leaves time to write.
STOP_MARGIN_SHARE = 0.2


@dataclass
class PassContext:
    settings: Settings
    client: KubeClient
    executor: ThreadPoolExecutor
    reader: SourceReader
    discovery: DiscoverySettings
    keys: Annotations
    hash_key: bytes | None
    stop: threading.Event
    stop_at: float
    now: datetime
    report: Report = field(default_factory=Report)

    def stopping(self) -> bool:
        margin = min(STOP_MARGIN, self.settings.timeout * STOP_MARGIN_SHARE)
        return self.stop.is_set() or time.monotonic() > self.stop_at - margin


def open_context(
    settings: Settings,
    client: KubeClient,
    executor: ThreadPoolExecutor,
    *,
    hash_key: bytes | None,
    stop: threading.Event | None = None,
    now: datetime | None = None,
) -> PassContext:
    """Everything one pass (or one `explain`) shares: settings, client, source reader, clock, budget."""
    discovery = DiscoverySettings(prefix=settings.prefix, compat=frozenset(settings.compat))
    ctx = PassContext(
        settings=settings,
        client=client,
        executor=executor,
        reader=SourceReader(client, executor, mode=settings.fetch, settings=discovery, hash_key=hash_key),
        discovery=discovery,
        keys=Annotations(settings.prefix),
        hash_key=hash_key,
        stop=stop or threading.Event(),
        stop_at=time.monotonic() + settings.timeout,
        now=now or datetime.now(UTC),
    )
    ctx.report.dry_run = settings.dry_run != "none"
    return ctx


def run_pass(
    settings: Settings,
    client: KubeClient,
    *,
    hash_key: bytes | None = None,
    stop: threading.Event | None = None,
    now: Callable[[], datetime] = lambda: datetime.now(UTC),
    progress: Callable[[int, int], None] | None = None,
) -> Report:
    """Run one pass and return its report (never raises for per-workload or per-scope failures)."""
    started = time.monotonic()
    with ThreadPoolExecutor(max_workers=settings.concurrency, thread_name_prefix="rehash") as executor:
        ctx = open_context(settings, client, executor, hash_key=hash_key, stop=stop, now=now())
        planned = plan_all(ctx)
        planned = apply_budget(planned, settings.max_rollouts)
        Writer(ctx, redecide=lambda t: redecide(ctx, t)).write_all(planned, progress=progress)
    ctx.report.contents_fetched = ctx.reader.contents_fetched
    ctx.report.duration = time.monotonic() - started
    ctx.report.api = client.stats.snapshot()
    return ctx.report


def plan_all(ctx: PassContext) -> list[tuple[Target, Decision]]:
    by_namespace: dict[str, list[Target]] = defaultdict(list)
    targets, failures = list_targets(ctx.settings, ctx.client, ctx.discovery)
    for row in failures:
        ctx.report.add(row)
    for target in targets:
        by_namespace[target.namespace].append(target)
    if covers_whole_cluster(ctx.settings):
        ctx.reader.survey_cluster(
            wanted_counts(by_namespace), set(by_namespace), ctx.settings.exclude_namespaces
        )
    planned: list[tuple[Target, Decision]] = []
    for namespace in sorted(by_namespace):
        targets = sorted(by_namespace.pop(namespace), key=sort_key)
        planned.extend(plan_namespace(ctx, namespace, targets))
    return planned


def plan_namespace(ctx: PassContext, namespace: str, listed: list[Target]) -> list[tuple[Target, Decision]]:
    """Decide every listed workload of one namespace, reading whole objects only where needed."""
    fingerprint = key_fingerprint(ctx.hash_key)
    settled: dict[str, tuple[Target, Decision]] = {}
    trusted: list[Target] = []
    untrusted: list[Target] = []
    for target in listed:
        early = decide_early(target)
        if early is not None:
            settled[target.uid] = (target, early)
        elif records_trusted(target, fingerprint):
            trusted.append(target)
        else:
            untrusted.append(target)
    full = read_full(ctx.client, ctx.executor, untrusted, ctx.discovery)
    sources, broken = survey_safely(ctx.reader, namespace, full.targets + trusted)
    stale: list[Target] = []
    for target in trusted:
        decision = confirm_recorded(
            target, sources, broken, discovery=ctx.discovery, hash_key=ctx.hash_key, now=ctx.now
        )
        if decision is None:
            stale.append(target)
        else:
            settled[target.uid] = (target, decision)
    if stale:  # a recorded source changed: read these in full, and survey what they add
        more = read_full(ctx.client, ctx.executor, stale, ctx.discovery)
        extra, extra_broken = survey_safely(ctx.reader, namespace, more.targets, known=sources)
        sources.merge(extra)
        broken.update(extra_broken)
        full.merge(more)
    settled.update(full.settled)
    ready = [t for t in full.targets if not any(label in broken for label in needed_labels(t))]
    prefetch(ctx, namespace, ready, sources)
    for target in full.targets:
        early = decide_early(target)
        if early is None:
            unreadable = [broken[label] for label in needed_labels(target) if label in broken]
            if unreadable:
                reason = f"reading ConfigMaps/Secrets of {namespace} failed: {unreadable[0]}"
                early = Decision(Action.FAILED, reason)
            else:
                early = evaluate(ctx, target, sources)
        settled[target.uid] = (target, early)
    return [settled[t.uid] for t in listed if t.uid not in full.gone]


def references_of(ctx: PassContext, target: Target, sources: NamespaceSources) -> list[Reference]:
    """Declared references plus, in search mode, every matching source of the namespace."""
    refs = list(target.discovery.references)
    if target.discovery.match_annotations:
        named = {(r.kind, r.name) for r in refs}
        for kind in sorted(target.discovery.search_kinds):
            for meta in sources.of_kind(kind):
                if (kind, meta.name) not in named and source_matches(meta.annotations(), target.discovery):
                    refs.append(Reference(kind, meta.name, None, True))
    return refs


def evaluate(ctx: PassContext, target: Target, sources: NamespaceSources) -> Decision:
    """Establish the current hash (reusing recorded tokens where identity is unchanged) and decide."""
    try:
        observed = observe(ctx, target, sources)
    except RehashError as exc:
        return Decision(Action.FAILED, f"reading sources failed: {exc}")
    decision = decide(
        target, observed, now=ctx.now, first_sight_rollout=ctx.settings.first_sight == "rollout"
    )
    if target.problems:
        decision = replace(decision, reason=f"{decision.reason} (note: {'; '.join(target.problems)})")
    return decision


Need = tuple[Reference, SourceMeta]


def classify(
    ctx: PassContext, target: Target, sources: NamespaceSources
) -> tuple[list[SourceRecord], list[str], list[Need], bool]:
    """Split a target's sources into reusable records, missing required ones, and those needing
    content; the flag says whether the records will cover every reference (none ignored, no search)."""
    book = target.bookkeeping
    known = {}
    if book.records is not None and book.key_fingerprint == key_fingerprint(ctx.hash_key):
        known = {(r.kind, r.name, r.uid, r.resource_version, r.selection): r for r in book.records}
    records: list[SourceRecord] = []
    missing: list[str] = []
    needs: list[Need] = []
    complete = not target.discovery.match_annotations
    for ref in references_of(ctx, target, sources):
        meta = sources.found.get((ref.kind, ref.name))
        if meta is not None and source_ignored(meta.annotations(), ctx.discovery):
            complete = False
            continue
        selection = selection_tag(ref.keys)
        if meta is None:
            note_absent(ref, records, missing)
            continue
        reuse = known.get((ref.kind, ref.name, meta.uid, meta.resource_version, selection))
        if reuse is not None:
            records.append(reuse)
        else:
            needs.append((ref, meta))
    return records, missing, needs, complete


def note_absent(ref: Reference, records: list[SourceRecord], missing: list[str]) -> None:
    """A source that does not exist: hashed as absent when optional, else a missing requirement."""
    if ref.optional:
        records.append(SourceRecord(ref.kind, ref.name, "", "", selection_tag(ref.keys), ABSENT))
    else:
        missing.append(f"{ref.kind}/{ref.name}")


def prefetch(ctx: PassContext, namespace: str, targets: list[Target], sources: NamespaceSources) -> None:
    """Hash every changed source of the namespace in one batch, so each is downloaded once even when
    workloads select different keys of it. A failure here is not lost: each workload then meets it
    again in `observe` and fails alone."""
    needs = [(meta, ref.keys) for t in targets for ref, meta in classify(ctx, t, sources)[2]]
    if needs:
        with contextlib.suppress(RehashError):
            ctx.reader.tokens(namespace, needs)


def observe(ctx: PassContext, target: Target, sources: NamespaceSources) -> Observed:
    records, missing, needs, complete = classify(ctx, target, sources)
    hashed = ctx.reader.tokens(target.namespace, [(meta, ref.keys) for ref, meta in needs])
    for ref, meta in needs:
        got = hashed[(meta.kind, meta.name, ref.keys)]
        if got is None:  # deleted since the survey
            note_absent(ref, records, missing)
            continue
        records.append(
            SourceRecord(
                ref.kind, ref.name, got.uid, got.resource_version, selection_tag(ref.keys), got.token
            )
        )
    return observed_from(records, ctx.hash_key, missing=tuple(missing), complete=complete)


def redecide(ctx: PassContext, target: Target) -> tuple[Target, Decision]:
    """After a failed precondition: read the workload again and decide from scratch."""
    obj = ctx.client.get(target.kind.object_path(target.namespace, target.name))
    fresh = read_target(obj, target.kind, ctx.discovery)
    early = (
        decide_early(fresh) if fresh.discovery.opted_in else Decision(Action.SKIPPED, "no longer opted in")
    )
    if early is not None:
        return fresh, early
    sources = survey(ctx.reader, fresh.namespace, [fresh])
    return fresh, evaluate(ctx, fresh, sources)
