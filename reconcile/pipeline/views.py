"""Reading whole workload objects for the ones a metadata-only list cannot settle.

Workloads are listed metadata-only (no pod specs). Only those triage says need their spec — first
sight, a spec or annotation change, a changed source — are read in full, by name or, when many of one
kind in a namespace need it, with one list of that namespace (a whole-cluster pass may already have
listed the kind in full, see `read.prefetch_kinds`).
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Iterable, Mapping
from concurrent.futures import Executor
from dataclasses import dataclass, field
from typing import Any

from reconcile.errors import NotFound, PassCut, RehashError
from reconcile.kube.client import KubeClient
from reconcile.model.references import DiscoverySettings
from reconcile.model.workload import Listed, Target, read_target
from reconcile.pipeline.fetch import costs_of, gather
from reconcile.policy.reads import Read, choose

log = logging.getLogger(__name__)
Census = Mapping[tuple[str, str], int]
"""(namespace, plural) -> objects of the kind the namespace holds, as listing counted them."""


@dataclass
class FullViews:
    """Whole-object views read for one batch, and the workloads that could not be read."""

    targets: list[Target] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)
    """uid -> why reading the workload failed."""
    gone: set[str] = field(default_factory=set)
    """uids of workloads deleted or opted out since they were listed: no report row."""
    cut: bool = False
    """The budget stopped the reads: workloads in none of the above were not reached."""

    def merge(self, other: FullViews) -> None:
        self.targets += other.targets
        self.failed.update(other.failed)
        self.gone |= other.gone
        self.cut |= other.cut

    def settle(
        self,
        listed: Listed,
        got: Mapping[str, Any] | Target | RehashError | None,
        discovery: DiscoverySettings,
    ) -> None:
        """File one read: a fresh view, a failure of this workload alone, or a workload gone."""
        if got is None or isinstance(got, NotFound):
            log.info("%s was deleted since it was listed", listed.ref)
            self.gone.add(listed.uid)
        elif isinstance(got, RehashError):
            self.failed[listed.uid] = f"reading the workload failed: {got}"
        else:
            fresh = got if isinstance(got, Target) else read_target(got, listed.kind, discovery)
            if not fresh.discovery.wants_row or fresh.uid != listed.uid:
                log.info("%s changed identity or opted out since it was listed", listed.ref)
                self.gone.add(listed.uid)
            else:
                self.targets.append(fresh)


def read_objects(
    client: KubeClient, executor: Executor, listed: Iterable[Listed], census: Census
) -> tuple[dict[str, Any], bool]:
    """The whole objects of these workloads by uid (a RehashError where one could not be read, None where
    it is gone), and whether the budget cut the reads short: per namespace and kind, one list or a GET
    each, as the read strategy says."""
    groups: dict[tuple[str, str], list[Listed]] = defaultdict(list)
    for workload in listed:
        groups[(workload.namespace, workload.kind.plural)].append(workload)
    objects: dict[str, Any] = {}
    one_by_one: list[Listed] = []
    for (namespace, plural), group in groups.items():
        choice = choose(Read.WORKLOADS, len(group), census.get((namespace, plural)), costs=costs_of(client))
        log.info("%s %s of %s: %s (%s)", Read.WORKLOADS, plural, namespace, choice.way, choice.why)
        if choice.lists:
            try:
                objects.update(list_group(client, group))
            except PassCut:
                return objects, True
        else:
            one_by_one.extend(group)

    def get_one(workload: Listed) -> dict[str, Any] | RehashError:
        # NotFound included: `settle` tells deleted from failed.
        return client.get_or_error(workload.kind.object_path(workload.namespace, workload.name))

    done, cut = gather(executor, get_one, one_by_one)
    objects.update((w.uid, got) for w, got in done)
    return objects, cut


def read_full(
    client: KubeClient,
    executor: Executor,
    listed: Iterable[Listed],
    discovery: DiscoverySettings,
    census: Census,
) -> FullViews:
    """Read each listed workload in full; failures settle that workload alone as `failed`."""
    out = FullViews()
    listed = list(listed)
    objects, out.cut = read_objects(client, executor, listed, census)
    for workload in listed:
        if workload.uid in objects:
            out.settle(workload, objects[workload.uid], discovery)
    return out


def list_group(client: KubeClient, group: list[Listed]) -> dict[str, Any]:
    """One namespaced list for many workloads of one kind; a failed list fails each of them."""
    first = group[0]
    wanted = {w.uid for w in group}
    try:
        found: dict[str, Any] = dict.fromkeys(wanted)  # not in the list: deleted since listed
        for item in client.list_items(first.kind.collection_path(first.namespace)):
            uid = str((item.get("metadata") or {}).get("uid"))
            if uid in wanted:
                found[uid] = item
        return found
    except PassCut:
        raise
    except RehashError as exc:
        return dict.fromkeys(wanted, exc)
