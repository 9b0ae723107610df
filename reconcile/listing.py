"""Which workloads a pass covers: its namespace scope (all, a list, or a shard's share) and the opted-in
workloads of every enabled kind in it, listed metadata-only, page by page, keeping only slim views."""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass

from reconcile.errors import NotFound, RehashError
from reconcile.kube.client import KubeClient
from reconcile.kube.kinds import NAMESPACES, Kind
from reconcile.refs import DiscoverySettings, opt_in_keys
from reconcile.report import Row
from reconcile.settings import Settings
from reconcile.sharding import assign_shard
from reconcile.targets import Target, read_listed

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Scope:
    """Where to list workloads: namespace by namespace (given with -n: never a cluster-wide request),
    or cluster-wide, optionally keeping only a shard's namespaces."""

    namespaces: tuple[str, ...] | None = None
    keep: frozenset[str] | None = None


def covers_whole_cluster(settings: Settings) -> bool:
    """True when the pass owns every namespace: no namespace list, no shard (`Scope()` below)."""
    return not settings.namespaces and settings.shard is None


def scope_namespaces(settings: Settings, client: KubeClient) -> Scope:
    excluded = set(settings.exclude_namespaces)
    shard = settings.shard
    if settings.namespaces:
        names = sorted(set(settings.namespaces) - excluded)
        return Scope(namespaces=tuple(assign_shard(names, shard.index, shard.count) if shard else names))
    if shard is None:  # covers_whole_cluster
        return Scope()
    # A shard lists cluster-wide and keeps its own namespaces: one list request per page instead of one
    # per kind and namespace, so the shards' request counts split evenly (each reads the whole list).
    items = client.list_items(NAMESPACES.collection_path(None), metadata_only=True)
    names = sorted({str(i["metadata"]["name"]) for i in items} - excluded)
    return Scope(keep=frozenset(assign_shard(names, shard.index, shard.count)))


def namespace_of(item: dict[str, object]) -> str:
    metadata = item.get("metadata")
    return str(metadata.get("namespace", "")) if isinstance(metadata, dict) else ""


def annotations_of(item: dict[str, object]) -> Iterable[str]:
    metadata = item.get("metadata")
    annotations = metadata.get("annotations") if isinstance(metadata, dict) else None
    return annotations if isinstance(annotations, dict) else ()


def list_targets(
    settings: Settings, client: KubeClient, discovery: DiscoverySettings
) -> tuple[list[Target], list[Row]]:
    """Opted-in workloads of every enabled kind in scope, and a failed scope row for each list that failed."""
    try:
        scope = scope_namespaces(settings, client)
    except RehashError as exc:  # an API error, or a connection that failed past its retries
        return [], [Row.scope_failure("Namespace", "*", f"listing namespaces failed: {exc}")]
    targets: list[Target] = []
    failures: list[Row] = []
    for kind in settings.kinds:
        listed, failed = list_kind(settings, client, discovery, kind, scope)
        targets += listed
        failures += failed
    return targets, failures


def list_kind(
    settings: Settings, client: KubeClient, discovery: DiscoverySettings, kind: Kind, scope: Scope
) -> tuple[list[Target], list[Row]]:
    """One kind's opted-in workloads in scope, page by page, keeping only their slim views."""
    excluded = ",".join(f"metadata.namespace!={n}" for n in sorted(settings.exclude_namespaces))
    candidate = opt_in_keys(discovery).intersection
    targets: list[Target] = []
    failures: list[Row] = []
    scopes: list[str | None] = list(scope.namespaces) if scope.namespaces is not None else [None]
    for namespace in scopes:
        path = kind.collection_path(namespace)
        try:
            for item in client.list_items(
                path, field_selector=None if namespace else excluded or None, metadata_only=True
            ):
                if scope.keep is not None and namespace_of(item) not in scope.keep:
                    continue
                if not candidate(annotations_of(item)):  # no opt-in annotation at all
                    continue
                target = read_listed(item, kind, discovery)
                if target.discovery.opted_in:
                    targets.append(target)
        except NotFound:
            log.info("%s are not served by this cluster; skipping the kind", kind.plural)
            break
        except RehashError as exc:
            failures.append(Row.scope_failure(kind.kind, namespace or "*", f"list failed: {exc}"))
    return targets, failures
