"""Which namespaces a pass covers: those given with -n (less the excluded ones), else the whole cluster,
narrowed by `namespaceSelector`, with the field selector that leaves the excluded namespaces out of a
cluster-wide list."""

from __future__ import annotations

import logging
from dataclasses import dataclass

from reconcile.kube.client import KubeClient, namespace_exclusions
from reconcile.model.kinds import NAMESPACES
from reconcile.model.selectors import parse_selector
from reconcile.settings.table import Settings

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Scope:
    """Where to list workloads: namespace by namespace (given with -n: never a cluster-wide request),
    or cluster-wide (`namespaces` None)."""

    namespaces: tuple[str, ...] | None = None
    selected: frozenset[str] | None = None
    """The namespaces `namespaceSelector` matched (cluster-wide lists keep only their workloads); None:
    no selector."""

    def covers(self, namespace: str) -> bool:
        return self.selected is None or namespace in self.selected


def covers_whole_cluster(settings: Settings) -> bool:
    """True when the pass owns every namespace: no namespace list, no shard (`Scope()` below)."""
    return not settings.scope.namespaces and settings.scope.shard is None


def scope_namespaces(settings: Settings) -> Scope:
    """The namespaces to list: those given with -n less the excluded ones, else the whole cluster (the
    excluded namespaces are then left out by a field selector)."""
    if settings.scope.namespaces:
        return Scope(
            namespaces=tuple(sorted(set(settings.scope.namespaces) - set(settings.scope.exclude_namespaces)))
        )
    return Scope()


def select_namespaces(client: KubeClient, selector: str) -> frozenset[str]:
    """The names of the namespaces whose labels match `selector`: one metadata list, filtered by the API
    server (the selector was checked when the settings were loaded)."""
    path = NAMESPACES.collection_path()
    items = client.list_items(path, label_selector=parse_selector(selector).text, metadata_only=True)
    selected = frozenset(namespace_name(item) for item in items)
    shown = ", ".join(sorted(selected)[:10]) + (", ..." if len(selected) > 10 else "")
    log.info("namespaceSelector %r: %d namespaces (%s)", selector, len(selected), shown or "none")
    return selected


def namespace_name(item: dict[str, object]) -> str:
    metadata = item.get("metadata")
    name = metadata.get("name") if isinstance(metadata, dict) else None
    return name if isinstance(name, str) else ""


def workload_selector(settings: Settings) -> str | None:
    """The field selector of a cluster-wide list of workloads: the excluded namespaces left out."""
    return ",".join(namespace_exclusions(settings.scope.exclude_namespaces)) or None
