"""Which workloads a pass covers: its namespace scope (all, or the namespaces given with -n), the opted-in
workloads of every enabled kind in it, listed metadata-only, page by page, keeping only slim views, and,
for a shard, its share of them.

A shard lists the same workloads as the unsharded pass and keeps its share (reconcile/policy/sharding.py): every
shard must see every opted-in workload to compute the same split without coordination, and one
cluster-wide list per kind costs each shard as many requests as the whole pass's lists. With -n, every
shard lists every given namespace, for the same reason. The workloads of a namespace split between shards
are read (with their sources) by each shard that keeps some of them: the pass reads sources per namespace
from the workloads it keeps, so nothing else needs to know about shards.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Protocol, TypeVar

from reconcile.errors import NotFound, PassCut, RehashError, Stopped
from reconcile.kube.client import KubeClient, namespace_exclusions
from reconcile.model.kinds import Kind
from reconcile.policy.decision import Deferral
from reconcile.model.references import DiscoverySettings, opt_in_keys
from reconcile.output.report import Row
from reconcile.config.settings import Settings, Shard
from reconcile.policy.sharding import WorkloadKey, plan_shards
from reconcile.model.workload import Listed, read_listed

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Scope:
    """Where to list workloads: namespace by namespace (given with -n: never a cluster-wide request),
    or cluster-wide (`namespaces` None)."""

    namespaces: tuple[str, ...] | None = None


def covers_whole_cluster(settings: Settings) -> bool:
    """True when the pass owns every namespace: no namespace list, no shard (`Scope()` below)."""
    return not settings.namespaces and settings.shard is None


def scope_namespaces(settings: Settings) -> Scope:
    """The namespaces to list: those given with -n less the excluded ones, else the whole cluster (the
    excluded namespaces are then left out by a field selector)."""
    if settings.namespaces:
        return Scope(namespaces=tuple(sorted(set(settings.namespaces) - set(settings.exclude_namespaces))))
    return Scope()


def namespace_of(item: dict[str, object]) -> str:
    metadata = item.get("metadata")
    return str(metadata.get("namespace", "")) if isinstance(metadata, dict) else ""


def annotations_of(item: dict[str, object]) -> Iterable[str]:
    metadata = item.get("metadata")
    annotations = metadata.get("annotations") if isinstance(metadata, dict) else None
    return annotations if isinstance(annotations, dict) else ()


@dataclass
class Listing:
    """What listing the workloads established: the opted-in ones in scope (a shard: its share), a failed
    or deferred scope row per list that did not complete, and how many objects of each kind every
    namespace holds (opted in or not): the size of a list of them, for the read strategy."""

    workloads: list[Listed] = field(default_factory=list)
    failures: list[Row] = field(default_factory=list)
    census: Counter[tuple[str, str]] = field(default_factory=Counter)
    """(namespace, plural) -> objects listed."""


def list_targets(settings: Settings, client: KubeClient, discovery: DiscoverySettings) -> Listing:
    """Opted-in workloads of every enabled kind in scope (a shard: its share of them), and a failed scope
    row for each list that failed."""
    scope = scope_namespaces(settings)
    listing = Listing()
    for kind in settings.kinds:
        list_kind(settings, client, discovery, kind, scope, into=listing)
    if settings.shard is not None:
        listing.workloads = shard_share(listing.workloads, settings.shard)
    return listing


class Workload(Protocol):
    """What the shard split reads of a listed workload."""

    @property
    def kind(self) -> Kind: ...
    @property
    def namespace(self) -> str: ...
    @property
    def name(self) -> str: ...


W = TypeVar("W", bound=Workload)


def workload_key(workload: Workload) -> WorkloadKey:
    kind = workload.kind
    return workload.namespace, f"{kind.group}/{kind.plural}/{workload.name}"


def shard_share(targets: list[W], shard: Shard) -> list[W]:
    """The targets `shard` owns of all the opted-in `targets` every shard listed."""
    plan = plan_shards((workload_key(t) for t in targets), shard.count)
    mine = plan.members(shard.index)
    kept = [t for t in targets if workload_key(t) in mine]
    split = {ns: shards for ns, shards in plan.split_namespaces().items() if shard.index in shards}
    log.info(
        "shard %d/%d: %d of %d opted-in workloads (shard sizes %s); namespaces shared with other shards: %s",
        shard.index,
        shard.count,
        len(kept),
        len(targets),
        plan.sizes(),
        ", ".join(f"{ns} (shards {', '.join(map(str, s))})" for ns, s in sorted(split.items())) or "none",
    )
    return kept


def list_kind(
    settings: Settings,
    client: KubeClient,
    discovery: DiscoverySettings,
    kind: Kind,
    scope: Scope,
    *,
    into: Listing,
) -> None:
    """One kind's opted-in workloads in scope, page by page, keeping only their slim views."""
    excluded = ",".join(namespace_exclusions(settings.exclude_namespaces))
    candidate = opt_in_keys(discovery).intersection
    listing = into
    targets = listing.workloads
    failures = listing.failures
    scopes: list[str | None] = list(scope.namespaces) if scope.namespaces is not None else [None]
    for namespace in scopes:
        path = kind.collection_path(namespace)
        try:
            for item in client.list_items(
                path, field_selector=None if namespace else excluded or None, metadata_only=True
            ):
                listing.census[(namespace_of(item), kind.plural)] += 1
                if not candidate(annotations_of(item)):  # no opt-in annotation at all
                    continue
                target = read_listed(item, kind, discovery)
                if target.discovery.opted_in:
                    targets.append(target)
        except NotFound:
            log.info("%s are not served by this cluster; skipping the kind", kind.plural)
            break
        except PassCut as exc:  # not reached: the budget ran out, or the pass was stopped
            why = Deferral.STOPPED if isinstance(exc, Stopped) else Deferral.BUDGET
            failures.append(Row.scope_deferred(kind.kind, namespace or "*", f"{exc}; not listed", why))
        except RehashError as exc:
            failures.append(Row.scope_failure(kind.kind, namespace or "*", f"list failed: {exc}"))
