"""Read, the second stage of a pass and its only I/O: whole workloads, source metadata, content digests.

The stage does exactly the reads it is asked for (`pipeline.planner` asks, from what `policy.needs`
computes between the reads) and imports no decision code. Whether each read is one list or GETs by name
is the read strategy's call (`policy.reads`, asked by the views and the source reader). The status of
rollouts we started is not read here: that is bookkeeping, which the pass does after the pending work
of every batch (run.py, `check_rollouts`). Each request asks the pass budget first; when it is refused the
stage raises `PassCut` or marks what it returns `cut`, and the decide stage defers what is unknown.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import Executor
from typing import Any

from reconcile.errors import PassCut, RehashError
from reconcile.kube.client import KubeClient
from reconcile.model.kinds import Kind
from reconcile.model.references import DiscoverySettings
from reconcile.model.sources import SourceKey
from reconcile.model.workload import Listed, Target, read_target
from reconcile.model.workload_ref import referenced_path, with_referenced_template
from reconcile.pipeline.fetch import SourceReader
from reconcile.pipeline.mounts import MountReader
from reconcile.pipeline.origins import read_origins
from reconcile.pipeline.pod_reads import read_pods
from reconcile.pipeline.views import Census, FullViews, read_full
from reconcile.policy.known import Known
from reconcile.policy.wants import Wants

log = logging.getLogger(__name__)


class ReadStage:
    """The reads of one pass (or of `explain` and re-decisions): whole workloads and, through its source
    reader, source metadata and content digests. It does what it is asked; what to ask is policy's."""

    def __init__(
        self,
        client: KubeClient,
        executor: Executor,
        reader: SourceReader,
        discovery: DiscoverySettings,
        prefetched: Mapping[str, Target | RehashError] | None = None,
    ) -> None:
        self.client = client
        self.executor = executor
        self.reader = reader
        self.discovery = discovery
        self.prefetched = dict(prefetched or {})
        self.census: Census = {}
        """Objects per (namespace, kind) as listing counted them: the size of a list of workloads."""
        self.mounts = MountReader(client)

    def read_views(self, listed: Sequence[Listed]) -> FullViews:
        """Whole objects of these workloads: from a full list read earlier, else by GET or namespace list."""
        views = FullViews()
        rest: list[Listed] = []
        for workload in listed:
            got = self.prefetched.pop(workload.uid, None)
            if got is None:
                rest.append(workload)
            else:
                views.settle(workload, got, self.discovery)
        views.merge(read_full(self.client, self.executor, rest, self.discovery, self.census))
        self.follow_workload_refs(views)
        return views

    def follow_workload_refs(self, views: FullViews) -> None:
        """Read the Deployment each workload with a `workloadRef` runs (model/workload_ref.py); a workload
        whose Deployment cannot be read fails alone."""
        for index, target in enumerate(views.targets):
            path = referenced_path(target)
            if path is None or target.workload_ref is None:
                continue
            got = self.client.get_or_error(path)
            if isinstance(got, RehashError):
                views.failed[target.uid] = (
                    f"reading its workloadRef Deployment/{target.workload_ref.name} failed: {got}"
                )
            else:
                views.targets[index] = with_referenced_template(target, got, self.discovery)
        views.targets = [t for t in views.targets if t.uid not in views.failed]

    def read(self, namespace: str, wants: Wants) -> Known:
        """One round's reads for a batch of `namespace`, as `policy.answer` asked: whole objects, or the
        content of sources, then the identities of those the content did not give, the CSI mounts, the
        objects of current pod templates and the pods of evicted workloads; stopped where the budget
        cuts them (`Known.cut`)."""
        got = Known.of(namespace)
        if wants.views:
            views = self.read_views(wants.views)
            got.views = {t.uid: t for t in views.targets}
            got.failed, got.gone, got.sources.cut = dict(views.failed), set(views.gone), views.cut
            return got
        sources = got.sources
        if wants.content:
            sources.merge(self.reader.contents(namespace, wants.content))
        metadata = {
            kind: {n for n in names if not sources.knows(SourceKey(kind, n))}
            for kind, names in wants.metadata.items()
        }
        metadata = {kind: names for kind, names in metadata.items() if names}
        if not sources.cut and (metadata or wants.search or wants.selections):
            search = wants.search - sources.searched
            sources.merge(self.reader.survey(namespace, metadata, search, wants.selections))
        if not sources.cut and wants.mounts:
            sources.merge(self.mounts.read(namespace))
        if not sources.cut and wants.origins:
            got.origins, refused, sources.cut = read_origins(self.client, self.executor, wants.origins)
            got.failed.update(refused)
        if not sources.cut and wants.pods:
            got.pods, sources.cut = read_pods(self.client, self.executor, wants.pods)
        return got


def prefetch_kinds(
    client: KubeClient,
    kinds: Iterable[Kind],
    wanted: Mapping[str, Listed],
    discovery: DiscoverySettings,
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
                out.update(
                    keep_wanted(
                        client.list_items(kind.collection_path(scope), field_selector=field_selector),
                        kind,
                        wanted,
                        discovery,
                    )
                )
            except PassCut:
                raise
            except RehashError as exc:
                prefetch_failed(kind, scope, exc)
    return out


def keep_wanted(
    items: Iterable[dict[str, Any]], kind: Kind, wanted: Mapping[str, Listed], discovery: DiscoverySettings
) -> dict[str, Target | RehashError]:
    """Slim views of the `wanted` workloads (by uid) among these whole objects of a kind."""
    out: dict[str, Target | RehashError] = {}
    for item in items:
        uid = str((item.get("metadata") or {}).get("uid", ""))
        if uid in wanted:
            out[uid] = read_target(item, kind, discovery, wanted[uid])
    return out


def prefetch_failed(kind: Kind, scope: str | None, exc: RehashError) -> None:
    log.info(
        "listing %s of %s in full failed (%s); reading them one by one",
        kind.plural,
        scope or "the cluster",
        exc,
    )
