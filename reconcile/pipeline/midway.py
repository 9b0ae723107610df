"""The workload kinds a light walk lists whole once the cluster past its sample turns out heavy.

A light pass (pipeline/streamed_walk.py, `walk_on`) plans from its sample, the first namespaces in key order,
and lists no kind in full. The sample can mislead: a first install cut by its budget adopts a stretch of
namespaces, and the next pass's sample may be that stretch, in sync, while the namespaces after it have
never been seen. Each of those then reads its workloads' specs with a namespace list or GETs per kind:
at 10x the benchmark's cluster about 700 requests a pass, where the list of a whole kind is about 150
pages. So the walk counts, since its sample, what each kind's workloads needed, and opens the cluster-wide
list of whole objects of a kind as soon as the rest of the walk, at that rate, would read more than the
list's pages (`policy.reads.choose_kind_whole_midway`). The list starts at the first namespace and passes
by those already walked; it is one page of whole objects held, as for a kind planned in full.

The whole objects are only a shortcut: a workload they do not hold (a list out of key order, or one that
fails) is read as it would have been, so nothing is decided from less than its own object.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from reconcile.errors import RehashError
from reconcile.kube.client import KubeClient
from reconcile.model.kinds import Kind
from reconcile.model.workload import Listed
from reconcile.pipeline.namespace_stream import NamespaceStream, take_each
from reconcile.policy.reads import choose_kind_whole_midway, pages
from reconcile.policy.triage import Triage

log = logging.getLogger(__name__)


def whole_page_size(page_size: int, kinds: int) -> int:
    """Objects per page of a list of whole workloads when `kinds` of them are open at once: whole objects
    are several times the size of metadata, so together they are one page of `page_size` objects."""
    return max(1, page_size // max(1, kinds))


class MidwayLists:
    """The cluster-wide lists of whole workloads a light walk opens as it goes, and the counts since its
    sample that decide them. `totals` are the objects of each kind the workload lists hold, cluster-wide."""

    def __init__(
        self,
        client: KubeClient,
        totals: Mapping[Kind, int | None],
        *,
        field_selector: str | None,
        page_size: int,
    ) -> None:
        self.client = client
        self.totals = dict(totals)
        self.field_selector = field_selector
        # One page of each kind that holds any workload may be open at once.
        self.page = whole_page_size(page_size, sum(1 for n in self.totals.values() if n))
        self.streams: dict[Kind, NamespaceStream] = {}
        self.opened: set[Kind] = set()
        """Kinds whose whole list was opened (and may have failed since): never opened twice."""
        self.needing: Counter[Kind] = Counter()
        self.reads: Counter[Kind] = Counter()
        """Kind -> namespaces walked where some of its workloads needed their spec: each took a namespace
        list or GETs of the kind."""
        self.since: dict[Kind, int] = {}
        """Kind -> objects the walk had taken before the first namespace where one of its workloads needed
        its spec: the rate of reads is counted from there."""

    def take(self, namespace: str) -> dict[Kind, list[dict[str, Any]]]:
        """The whole objects of the namespace from the lists opened so far; `PassCut` is raised."""
        return dict(take_each(self.streams, namespace, self.failed))

    def count(
        self, workloads: Sequence[Listed], triage: Triage, whole: Mapping[Kind, object], at: int
    ) -> None:
        """Count one walked namespace, which the walk reached having taken `at` objects: the workloads
        needing their spec, and the reads that took where its kind's whole list did not give them."""
        needing: set[Kind] = set()
        for workload in workloads:
            if workload.uid in triage.need_spec:
                self.needing[workload.kind] += 1
                needing.add(workload.kind)
        for kind in needing:
            self.since.setdefault(kind, at)
            if kind not in whole:
                self.reads[kind] += 1

    def open_heavy(self, seen: int, remaining: int) -> None:
        """Open the whole list of each kind the rest of the walk would read with more requests than it
        has pages, the walk having taken `seen` objects with `remaining` left."""
        for kind, start in self.since.items():
            total = self.totals.get(kind)
            if kind in self.opened or total is None:
                continue
            choice = choose_kind_whole_midway(
                needing=self.needing[kind],
                reads=self.reads[kind],
                walked=seen - start,
                remaining=remaining,
                whole_pages=pages(total, self.page),
            )
            if not choice.lists:
                continue
            log.info("%s listed whole from here on: %s", kind.plural, choice.why)
            self.opened.add(kind)
            items = self.client.list_items(
                kind.collection_path(None), field_selector=self.field_selector, limit=self.page
            )
            self.streams[kind] = NamespaceStream(items)

    def failed(self, kind: Kind, exc: RehashError) -> None:
        # Nothing is lost: the workloads the list would have given are read per namespace, as before it.
        log.warning("the whole list of %s failed (%s): their specs are read per namespace", kind.plural, exc)
