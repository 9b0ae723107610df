"""The cluster-wide lists of every workload kind, read in step a namespace at a time: one listing that a
large pass can both plan from and walk.

A whole-cluster pass lists each workload kind once, metadata-only, and takes the namespaces from all the lists
together, in the order the lists meet them (pipeline/namespace_stream.py). It holds the opted-in workloads'
views until there are more than `streamAbove` of them; a smaller cluster is then listed whole and held. A
larger one stops there: what it has seen is a sample of the cluster (whole namespaces, every kind), and the
lists stay open where they stopped. The pass then either walks on from them, deciding each namespace as it is
taken, so the workloads are listed once (pipeline/streamed_walk.py, `ListedWalk`); or, when the sample says
the pass is heavy (a kind worth listing in full, a pass that may not fit its budget), it tallies the rest of
the lists and walks the cluster with a second listing planned from the whole tally (`finish`). Either way no
page is read twice, and at most one page per kind is held at a time.

Walking by the first namespace any list still holds (`next_namespace`) passes nothing by, whatever
order a server lists in: a namespace that a list gives out of order is taken twice, never lost.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from reconcile.errors import NotFound, PassCut, RehashError, Stopped
from reconcile.kube.client import KubeClient, ListedItems
from reconcile.model.kinds import Kind
from reconcile.model.references import DiscoverySettings, reads_template_annotations
from reconcile.model.workload import Listed
from reconcile.pipeline.namespace_stream import NamespaceStream, each_alive, next_namespace, take_each
from reconcile.policy.decision import Deferral
from reconcile.policy.outcome import Outcome
from reconcile.settings.table import Settings

log = logging.getLogger(__name__)


class WorkloadLists:
    """The open cluster-wide metadata lists of the enabled workload kinds, and what they have shown.

    `failures` receives a failed scope row per list that fails and a deferred one per list the budget
    cut; `note` counts each object taken of a namespace in scope and gives its view, if opted in (the
    listing's `note_listed`, as for a list read kind by kind)."""

    def __init__(
        self,
        settings: Settings,
        client: KubeClient,
        discovery: DiscoverySettings,
        *,
        field_selector: str | None,
        covers: Callable[[str], bool],
        note: Callable[[dict[str, object], Kind, str], Listed | None],
        failures: list[Outcome],
    ) -> None:
        metadata_only = not reads_template_annotations(discovery)
        self.lists: dict[Kind, ListedItems] = {
            kind: client.list_items(
                kind.collection_path(None),
                field_selector=field_selector,
                metadata_only=metadata_only,
                read_ahead=True,
            )
            for kind in settings.scope.kinds
        }
        self._started = False
        """The lists' first pages were requested (`_start_lists`)."""
        self.streams = {kind: NamespaceStream(items) for kind, items in self.lists.items()}
        self.ended: set[Kind] = set()
        """Kinds whose list failed, was cut, or is not served: not listed whole."""
        self.seen = 0
        """Objects of every kind taken so far, opted in or not."""
        self.covers = covers
        self.note = note
        self.failures = failures

    @property
    def total(self) -> int | None:
        """Objects all the lists hold, where every server said (None: some list did not tell)."""
        sizes = [items.total for kind, items in self.lists.items() if kind not in self.ended]
        return None if any(size is None for size in sizes) else sum(s for s in sizes if s is not None)

    @property
    def listed_kinds(self) -> list[Kind]:
        """The kinds whose list has not failed (complete once `upcoming` returns None)."""
        return [kind for kind in self.lists if kind not in self.ended]

    def upcoming(self) -> str | None:
        """The next namespace to take, None once every list is over; `PassCut` is raised."""
        if not self._started:
            self._start_lists()
        return next_namespace(self.streams, self.failed)

    def _start_lists(self) -> None:
        """The first list's first page alone (a pass's first request proves the server and the credentials:
        rejected ones cost one request), then the other lists' first pages together, sent ahead."""
        self._started = True
        for _ in each_alive(self.streams, NamespaceStream.upcoming, self.failed):
            break  # the first list that answers: one whose list failed is left out, as `next_namespace` does
        for items in self.lists.values():
            items.start()  # sends nothing for a list already read or failed

    def take(self, namespace: str) -> list[Listed]:
        """The opted-in workloads of `namespace` in scope, from every list still open; `PassCut` is raised."""
        workloads: list[Listed] = []
        if not self.covers(namespace):
            for _ in take_each(self.streams, namespace, self.failed, pass_by=False):
                pass
            return workloads
        for kind, items in take_each(self.streams, namespace, self.failed, pass_by=False):
            self.seen += len(items)
            workloads += [view for item in items if (view := self.note(item, kind, namespace))]
        return workloads

    def disordered(self) -> list[Kind]:
        """The kinds whose list came out of key order (so far)."""
        return [kind for kind, stream in self.streams.items() if stream.disordered]

    def failed(self, kind: Kind, exc: RehashError) -> None:
        self.ended.add(kind)
        if isinstance(exc, NotFound):
            log.info("%s are not served by this cluster; skipping the kind", kind.plural)
            return
        self.failures.append(Outcome.scope_failure(kind.kind, "*", f"list failed: {exc}"))

    def cut(self, exc: PassCut) -> None:
        """The budget ran out, or the pass was stopped, before the lists still open were read to their
        end: a deferred scope row for each."""
        why = Deferral.STOPPED if isinstance(exc, Stopped) else Deferral.BUDGET
        for kind, stream in self.streams.items():
            if stream.over:
                continue
            self.ended.add(kind)
            self.failures.append(Outcome.scope_deferred(kind.kind, "*", f"{exc}; not listed", why))
        self.streams.clear()
