"""Read, the second stage of a pass and its only I/O: one batch's snapshot.

For the batch's workloads the stage reads, in this order: the whole objects triage said are needed
(unless a full list of their kind was already read), the metadata of the sources whose records may be
reused, and the content of the sources that must be hashed anyway (first sight: content straight away,
never metadata first). Then the trusted workloads whose recorded sources changed are read in full, and
the content of the changed sources is hashed. Whether each read is one list or GETs by name is the read
strategy's call (`policy.reads`). The status of rollouts we started is not read here: that is bookkeeping,
which the pass does after the pending work of every batch (run.py, `check_rollouts`). Each request asks
the pass budget first; when it is refused the stage stops and returns what it has, and the decide stage
defers what is unknown.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import Executor

from reconcile.policy.decide import (
    Rules,
    Snapshot,
    confirm_recorded,
    content_needed,
    key_of,
    recorded_sources,
    target_from_records,
)
from reconcile.errors import PassCut, RehashError
from reconcile.pipeline.fetch import SourceReader
from reconcile.kube.client import KubeClient
from reconcile.model.kinds import Kind
from reconcile.policy.decision import decide_early
from reconcile.model.sources import NamespaceSources, Selection, SourceKey
from reconcile.model.workload import Listed, Target, read_target
from reconcile.policy.triage import Batch, Triage
from reconcile.pipeline.views import Census, FullViews, read_full

log = logging.getLogger(__name__)


class ReadStage:
    """Reads snapshots for the batches of one pass (or for `explain` and re-decisions)."""

    def __init__(
        self,
        client: KubeClient,
        executor: Executor,
        reader: SourceReader,
        rules: Rules,
        prefetched: Mapping[str, Target | RehashError] | None = None,
    ) -> None:
        self.client = client
        self.executor = executor
        self.reader = reader
        self.rules = rules
        self.prefetched = dict(prefetched or {})
        self.census: Census = {}
        """Objects per (namespace, kind) as listing counted them: the size of a list of workloads."""

    def read_batch(self, batch: Batch, triage: Triage) -> tuple[Snapshot, bool]:
        """The batch's snapshot, and whether the budget cut its reads short."""
        namespace = batch.namespace
        views = FullViews()
        sources = NamespaceSources(namespace)
        stale: set[str] = set()
        trusted = [w for w in batch.workloads if w.uid in triage.trusted]
        try:
            wanted = [w for w in batch.workloads if w.uid in triage.need_spec]
            views = self.read_views(wanted)
            sources = self.read_sources(namespace, views.targets, trusted)
            if not sources.cut:
                stale = {w.uid for w in trusted if confirm_recorded(w, sources, self.rules) is None}
                # Stale but still trusted: decided from the records, without reading the workload.
                unread = [t for w in trusted if w.uid in stale and (t := target_from_records(w))]
                known = {t.uid for t in unread}
                more = self.read_views([w for w in trusted if w.uid in stale and w.uid not in known])
                views.targets += unread
                views.merge(more)
                if more.targets:
                    sources.merge(self.read_metadata(namespace, more.targets, [], known=sources))
                if not sources.cut:
                    sources.merge(
                        self.reader.contents(namespace, content_needed(views.targets, sources, self.rules))
                    )
        except PassCut:
            sources.cut = True
        snapshot = Snapshot(
            sources=sources,
            full={t.uid: t for t in views.targets},
            failed={uid: reason for uid, reason in views.failed.items()},
            gone=frozenset(views.gone),
            stale=frozenset(stale),
        )
        return snapshot, sources.cut or views.cut

    def read_views(self, listed: Sequence[Listed]) -> FullViews:
        """Whole objects of these workloads: from a full list read earlier, else by GET or namespace list."""
        views = FullViews()
        rest: list[Listed] = []
        for workload in listed:
            got = self.prefetched.pop(workload.uid, None)
            if got is None:
                rest.append(workload)
            else:
                views.settle(workload, got, self.rules.discovery)
        views.merge(read_full(self.client, self.executor, rest, self.rules.discovery, self.census))
        return views

    def read_sources(
        self, namespace: str, targets: Sequence[Target], trusted: Sequence[Listed]
    ) -> NamespaceSources:
        """Identities (and, where they must be hashed anyway, contents) of the sources these workloads use."""
        content: dict[SourceKey, set[Selection]] = {}
        for target in targets:
            if decide_early(target) is not None:
                continue
            reusable = recorded_sources(target, self.rules)
            for ref in target.discovery.references:
                if key_of(ref) not in reusable:
                    content.setdefault(key_of(ref), set()).add(ref.keys)
        sources = self.reader.contents(namespace, content) if content else NamespaceSources(namespace)
        if not sources.cut:
            sources.merge(self.read_metadata(namespace, targets, trusted, known=sources))
        return sources

    def read_metadata(
        self,
        namespace: str,
        targets: Sequence[Target],
        trusted: Sequence[Listed],
        *,
        known: NamespaceSources,
    ) -> NamespaceSources:
        """Metadata of referenced sources the snapshot does not know yet, and search-mode lists."""
        wanted: dict[str, set[str]] = {}
        search: set[str] = set()
        refs = [ref for w in trusted for ref in w.discovery.references]
        for target in targets:
            if decide_early(target) is None:
                refs += target.discovery.references
                if target.discovery.match_annotations:
                    search |= set(target.discovery.search_kinds)
        for ref in refs:
            if not known.knows(key_of(ref)):
                wanted.setdefault(ref.kind, set()).add(ref.name)
        search -= known.searched
        if not wanted and not search:
            return NamespaceSources(namespace)
        return self.reader.survey(namespace, wanted, frozenset(search))


def prefetch_kinds(
    client: KubeClient,
    kinds: Iterable[Kind],
    wanted: Mapping[str, Listed],
    rules: Rules,
    *,
    scopes: Sequence[str | None] = (None,),
    field_selector: str | None = None,
) -> dict[str, Target | RehashError]:
    """One paged full list per kind and scope (a namespace, or None: cluster-wide), keeping slim views of
    the `wanted` workloads only. A failed list is not a failure of its workloads: they are read one by
    one in their batches."""
    out: dict[str, Target | RehashError] = {}
    for kind in kinds:
        for scope in scopes:
            try:
                for item in client.list_items(kind.collection_path(scope), field_selector=field_selector):
                    uid = str((item.get("metadata") or {}).get("uid", ""))
                    if uid in wanted:
                        out[uid] = read_target(item, kind, rules.discovery)
            except PassCut:
                raise
            except RehashError as exc:
                log.info(
                    "listing %s of %s in full failed (%s); reading them one by one",
                    kind.plural,
                    scope or "the cluster",
                    exc,
                )
    return out
