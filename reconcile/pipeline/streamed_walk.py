"""The batches of a pass too large to hold its listing, namespace by namespace as the lists stream.

A pass that holds its listing keeps a view of every opted-in workload from the listing to the end, and its
cluster-wide reads (kinds listed in full, source surveys) keep what every namespace wants: memory grows
with the cluster. Above `streamAbove` opted-in workloads the listing stops at a sample, its lists still open
(pipeline/workload_lists.py), and the walk goes one of two ways (policy/tally.py, `plan_walk`):

- **On from the listing** (`walk_on`, a light pass: steady, change): the sample's namespaces are walked,
  then each namespace as the open lists give it, with the source surveys chosen from the sample scaled to
  the cluster. The workloads are listed once; a kind whose namespaces past the sample turn out to need
  their specs is then also listed whole, from where the walk is (pipeline/midway.py).
- **After a tally** (`batches`, a heavy pass: a first install, sources read by name): the listing tallies
  the rest of its lists and this walk lists again, planned from the whole tally: one cluster-wide list per
  workload kind (of whole objects where the kind is listed in full, else of metadata) and per source kind
  surveyed cluster-wide, all in etcd's key order, taken a namespace at a time in step
  (pipeline/namespace_stream.py).

Each namespace's views are triaged, its share of the whole objects and surveys kept, its batches handed to
the pass; then it is dropped. What is held is one namespace and one page per list, whatever the cluster's
size.

A heavy pass that may not fit its budget starts at a rotated namespace: its lists pass by the namespaces
before it, and the namespaces after the end are reached by lists opened again from the start. A list
that fails leaves its kind out of the rest of the walk (a failed scope row, as when listing); when the
budget runs out or the pass is stopped between namespaces, each namespace not reached is one deferred
row, with the number of its opted-in workloads (the walk never saw their views), and for a light pass the
namespaces not yet listed are one more.

The heavy walk relies on the lists' key order but checks it (pipeline/namespace_stream.py): when a workload
list turns out not to be in key order, the walk ends by listing that kind again, held, and deciding the
workloads it had passed by, so no opted-in workload goes without a row, whatever order the server lists in.
The light walk takes namespaces as the listing does and passes no workload by: a whole list it opens midway
passes by the namespaces already walked, and a workload it does not give is read as before.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from reconcile.errors import PassCut, RehashError, Stopped
from reconcile.kube.client import KubeClient
from reconcile.kube.page_size import first_page_size
from reconcile.model.kinds import Kind
from reconcile.model.references import reads_template_annotations
from reconcile.model.workload import Listed
from reconcile.pipeline.listing import Listing, opted_in_view
from reconcile.pipeline.midway import MidwayLists, whole_page_size
from reconcile.pipeline.namespace_stream import NamespaceStream, take_each
from reconcile.pipeline.read import ReadStage, keep_wanted
from reconcile.pipeline.scope import workload_selector
from reconcile.policy.decision import Deferral
from reconcile.policy.outcome import Outcome
from reconcile.policy.rules import Rules
from reconcile.policy.tally import Tally, WalkPlan
from reconcile.policy.triage import Batch, Triage, plan_batches, triage_listed, wanted_sources
from reconcile.settings.table import Settings

log = logging.getLogger(__name__)


@dataclass
class Lists:
    """The cluster-wide lists of the workload kinds one stretch of the walk takes its namespaces from: of
    whole objects for the kinds listed in full (their views are read from the same objects), else of
    metadata."""

    streams: dict[Kind, NamespaceStream] = field(default_factory=dict)
    whole: set[str] = field(default_factory=set)
    """Plurals of the kinds listed as whole objects."""


class StreamedBatches:
    """The batches of a streamed pass, in walk order, with the rows of what the walk could not list."""

    def __init__(
        self, settings: Settings, client: KubeClient, stage: ReadStage, rules: Rules, listing: Listing
    ) -> None:
        self.settings = settings
        self.client = client
        self.stage = stage
        self.rules = rules
        self.kinds = list(listing.listed_kinds)
        self.tally: Tally = listing.tally
        self.in_full = [
            k for k in self.tally.kinds_in_full(rate_limited=settings.limits.qps > 0) if k in self.kinds
        ]
        self.rows: list[Outcome] = []
        """Failed lists of the walk, and the namespaces it did not reach."""
        self.seen: set[str] = set()
        """Uids of the workloads the walk took: what a list out of key order passed by is the rest."""
        self.disordered: set[Kind] = set()

    def batches(self, start: int = 0) -> Iterator[tuple[Batch, Triage]]:
        """Every namespace with opted-in workloads from the `start`-th in list order, then those before it."""
        order = self.tally.namespaces()
        stretches = [order[start:], order[:start]]
        for at, stretch in enumerate(stretches):
            if not stretch:
                continue
            try:
                lists = self.open_lists()
            except PassCut as exc:
                self.unreached([ns for s in stretches[at:] for ns in s], exc)
                return
            for i, namespace in enumerate(stretch):
                try:
                    workloads, whole = self.take(lists, namespace)
                    triage = triage_listed(workloads, self.rules.fingerprint)
                    self.prepare(namespace, workloads, triage, whole)
                except PassCut as exc:
                    self.unreached([*stretch[i:], *(ns for s in stretches[at + 1 :] for ns in s)], exc)
                    return
                for batch in plan_batches(workloads):
                    yield batch, triage
            try:
                self.check_order(lists, drain=at == 0)
            except PassCut:
                return
        yield from self.recover()

    def walk_on(self, listing: Listing, plan: WalkPlan) -> Iterator[tuple[Batch, Triage]]:
        """The batches of a pass that walks on from its listing's open lists (one listing of the
        workloads): the sample's namespaces first, then each namespace as the lists give it. The surveys
        open for the sources the sample recorded, scaled to the cluster. What the budget or a stop cuts
        off is one deferred row per sample namespace not reached and one for the rest of the lists."""
        lists = listing.open
        if lists is None:
            return
        lists.failures = self.rows
        held: dict[str, list[Listed]] = {}
        for workload in listing.workloads:
            held.setdefault(workload.namespace, []).append(workload)
        listing.workloads, listing.needs = [], {}
        namespace = ""
        try:
            wanted = plan.scaled(self.tally.recorded)
            self.stage.reader.stream_cluster(wanted, self.settings.scope.exclude_namespaces)
            while held:
                namespace = next(iter(held))
                yield from self.walk_namespace(namespace, held[namespace])
                del held[namespace]
            midway = MidwayLists(
                self.client,
                {kind: items.total for kind, items in lists.lists.items() if kind not in lists.ended},
                field_selector=workload_selector(self.settings),
                page_size=first_page_size(self.settings.reading.page_size),
            )
            while (upcoming := lists.upcoming()) is not None:
                namespace = upcoming
                reached = lists.seen
                workloads = lists.take(namespace)
                whole = midway.take(namespace)
                yield from self.walk_namespace(namespace, workloads, whole, (midway, reached))
                total = lists.total
                if total is not None:
                    midway.open_heavy(lists.seen, total - lists.seen)
            for kind in lists.disordered():
                log.warning(
                    "the cluster-wide list of %s is not in key order: its namespaces were walked as it gave "
                    "them, some more than once",
                    kind.plural,
                )
        except PassCut as exc:
            self.passed_by({ns: len(views) for ns, views in held.items()}, exc)
            why = Deferral.STOPPED if isinstance(exc, Stopped) else Deferral.BUDGET
            at = f"from namespace {namespace} on" if namespace and not held else "after the sample"
            reason = f"{exc}; the opted-in workloads {at} in list order were not listed"
            self.rows.append(Outcome.scope_deferred("*", "*", reason, why))

    def walk_namespace(
        self,
        namespace: str,
        workloads: list[Listed],
        whole: Mapping[Kind, Sequence[dict[str, Any]]] | None = None,
        midway: tuple[MidwayLists, int] | None = None,
    ) -> Iterator[tuple[Batch, Triage]]:
        if not workloads:
            return
        triage = triage_listed(workloads, self.rules.fingerprint)
        if midway is not None:
            counts, reached = midway
            counts.count(workloads, triage, whole or {}, reached)
        self.prepare(namespace, workloads, triage, whole or {})
        for batch in plan_batches(workloads):
            yield batch, triage

    def check_order(self, lists: Lists, *, drain: bool) -> None:
        """Note the workload lists that were not in key order. The first stretch's lists are read to
        their end (the walk passed by the namespaces before its start, so they have seen every object)."""
        for kind, stream in list(lists.streams.items()):
            if drain:
                try:
                    stream.drain()
                except PassCut:
                    raise
                except RehashError as exc:
                    self.list_failed(kind, exc)
                    continue
            if stream.disordered:
                self.disordered.add(kind)

    def recover(self) -> Iterator[tuple[Batch, Triage]]:
        """The workloads that lists out of key order passed by: each such kind listed again, held, and its
        workloads the walk did not take decided namespace by namespace."""
        for kind in sorted(self.disordered, key=lambda k: k.plural):
            log.warning(
                "the cluster-wide list of %s is not in key order: listing it again to decide the "
                "workloads the walk passed by",
                kind.plural,
            )
            missed: dict[str, list[Listed]] = {}
            try:
                for item in self.client.list_items(
                    kind.collection_path(None),
                    field_selector=workload_selector(self.settings),
                    metadata_only=not reads_template_annotations(self.rules.discovery),
                ):
                    view = opted_in_view(item, kind, self.rules.discovery)
                    if view is not None and view.uid not in self.seen:
                        missed.setdefault(view.namespace, []).append(view)
            except PassCut as exc:
                why = Deferral.STOPPED if isinstance(exc, Stopped) else Deferral.BUDGET
                reason = f"{exc}; its list was not in key order and was not read again"
                self.rows.append(Outcome.scope_deferred(kind.kind, "*", reason, why))
                return
            except RehashError as exc:
                self.list_failed(kind, exc)
                continue
            namespaces = sorted(missed)
            for i, namespace in enumerate(namespaces):
                workloads = missed[namespace]
                self.seen.update(w.uid for w in workloads)
                triage = triage_listed(workloads, self.rules.fingerprint)
                try:
                    self.prepare(namespace, workloads, triage, {})
                except PassCut as exc:
                    self.passed_by({ns: len(missed[ns]) for ns in namespaces[i:]}, exc)
                    return
                for batch in plan_batches(workloads):
                    yield batch, triage

    def open_lists(self) -> Lists:
        """The stretch's lists, opened, their first pages requested (`ListedItems.start`)."""
        selector = workload_selector(self.settings)
        lists = Lists(whole={k.plural for k in self.in_full})
        whole_page = whole_page_size(first_page_size(self.settings.reading.page_size), len(lists.whole))
        for kind in self.kinds:
            whole = kind.plural in lists.whole
            pages = self.client.list_items(
                kind.collection_path(None),
                field_selector=selector,
                metadata_only=not (whole or reads_template_annotations(self.rules.discovery)),
                limit=whole_page if whole else None,
                read_ahead=True,
            )
            pages.start()  # the kinds' first pages travel together, where they read ahead
            lists.streams[kind] = NamespaceStream(pages)
        self.stage.reader.stream_cluster(self.tally.recorded, self.settings.scope.exclude_namespaces)
        return lists

    def take(self, lists: Lists, namespace: str) -> tuple[list[Listed], dict[Kind, list[dict[str, Any]]]]:
        """The opted-in workloads of one namespace, from every workload list still open, and the whole
        objects the lists of kinds in full gave."""
        workloads: list[Listed] = []
        whole: dict[Kind, list[dict[str, Any]]] = {}
        for kind, items in take_each(lists.streams, namespace, self.list_failed):
            if kind.plural in lists.whole:
                whole[kind] = items
            workloads += [w for item in items if (w := opted_in_view(item, kind, self.rules.discovery))]
        self.seen.update(w.uid for w in workloads)
        return workloads, whole

    def prepare(
        self,
        namespace: str,
        workloads: Sequence[Listed],
        triage: Triage,
        whole: Mapping[Kind, Sequence[dict[str, Any]]],
    ) -> None:
        """What the namespace's batches read from the cluster-wide lists: the whole objects of its
        workloads that need them, and the identities of the sources its trusted workloads recorded."""
        wanted = wanted_sources(workloads, triage)
        self.stage.reader.expect({key: len(names) for key, names in wanted.items()})
        self.stage.reader.follow(namespace, wanted)
        unseen = {w.uid: w for w in workloads if w.uid in triage.need_spec}
        self.stage.prefetched.clear()
        for kind, items in whole.items():
            self.stage.prefetched.update(keep_wanted(items, kind, unseen, self.rules.discovery))

    def list_failed(self, kind: Kind, exc: RehashError) -> None:
        self.rows.append(Outcome.scope_failure(kind.kind, "*", f"list failed: {exc}"))

    def unreached(self, namespaces: Sequence[str], exc: PassCut) -> None:
        self.passed_by({ns: self.tally.workloads[ns] for ns in namespaces}, exc)

    def passed_by(self, counts: Mapping[str, int], exc: PassCut) -> None:
        """One deferred row per namespace the walk did not reach, with its count of opted-in workloads."""
        why = Deferral.STOPPED if isinstance(exc, Stopped) else Deferral.BUDGET
        log.info("%s: %d namespaces not reached", exc, len(counts))
        for namespace, count in counts.items():
            self.rows.append(
                Outcome.scope_deferred("*", namespace, f"{exc}; {count} opted-in workloads not reached", why)
            )
