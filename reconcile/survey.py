"""Surveying a namespace's ConfigMaps and Secrets for a set of workloads, failing only what must fail.

One survey reads the metadata of every source the workloads need (by name or by list, see `fetch`). When it
fails, the namespace is surveyed again source by source, so a 403 on one Secret fails only the workloads that
need that Secret, and the request that already failed is not sent twice.
"""

from __future__ import annotations

from collections import defaultdict

from reconcile.errors import ApiError, RehashError
from reconcile.fetch import RESOURCES, NamespaceSources, SourceReader
from reconcile.targets import Target


def survey_safely(
    reader: SourceReader, namespace: str, targets: list[Target], known: NamespaceSources | None = None
) -> tuple[NamespaceSources, dict[str, RehashError]]:
    """Survey the namespace's sources the targets need (less those `known` already has); after a
    failure, source by source so only the workloads needing an unreadable source fail."""
    try:
        return survey(reader, namespace, targets, known), {}
    except RehashError as exc:
        return survey_each(reader, namespace, targets, exc, known)


def wanted_sources(
    targets: list[Target], known: NamespaceSources | None = None
) -> tuple[dict[str, set[str]], frozenset[str]]:
    """Names per kind and search-mode kinds the targets need, less what `known` already covers."""
    wanted: dict[str, set[str]] = defaultdict(set)
    search: set[str] = set()
    for target in targets:
        for ref in target.discovery.references:
            wanted[ref.kind].add(ref.name)
        if target.discovery.match_annotations:
            search |= target.discovery.search_kinds
    if known is not None:
        search -= known.listed
        for kind, names in wanted.items():
            names -= {n for n in names if (kind, n) in known.found or kind in known.listed}
    return wanted, frozenset(search)


def wanted_counts(by_namespace: dict[str, list[Target]]) -> dict[str, int]:
    """Referenced sources per kind over all namespaces (a searched kind counts once per namespace)."""
    counts: dict[str, int] = defaultdict(int)
    for targets in by_namespace.values():
        wanted, search = wanted_sources(targets)
        for kind in wanted.keys() | search:
            counts[kind] += max(len(wanted.get(kind, ())), 1)
    return dict(counts)


def survey(
    reader: SourceReader, namespace: str, targets: list[Target], known: NamespaceSources | None = None
) -> NamespaceSources:
    wanted, search = wanted_sources(targets, known)
    return reader.survey(namespace, wanted, search)


def needed_labels(target: Target) -> set[str]:
    """`kind/name` of each declared source and `kind/*` of each kind the target reads (lists)."""
    labels = {f"{ref.kind}/{ref.name}" for ref in target.discovery.references}
    kinds = {ref.kind for ref in target.discovery.references}
    if target.discovery.match_annotations:
        kinds |= target.discovery.search_kinds
    return labels | {f"{kind}/*" for kind in kinds}


def survey_each(
    reader: SourceReader,
    namespace: str,
    targets: list[Target],
    first: RehashError,
    known: NamespaceSources | None = None,
) -> tuple[NamespaceSources, dict[str, RehashError]]:
    """After a failed survey: survey source by source, so only the workloads needing an unreadable
    source fail (a 403 on one Secret must not fail its neighbours). The request that already failed
    is not sent again; a failed list makes its whole kind unreadable."""
    wanted, search = wanted_sources(targets, known)
    merged = NamespaceSources(namespace)
    broken: dict[str, RehashError] = {}
    first_path = first.path if isinstance(first, ApiError) else None
    for kind in ("configmap", "secret"):
        resource = RESOURCES[kind]
        if first_path == resource.collection_path(namespace):
            broken[f"{kind}/*"] = first
            continue
        units: list[tuple[dict[str, set[str]], frozenset[str], str]] = []
        if kind in search:
            units.append(({}, frozenset({kind}), f"{kind}/*"))
        units += [({kind: {name}}, frozenset(), f"{kind}/{name}") for name in sorted(wanted.get(kind, ()))]
        for names, kinds, label in units:
            if label != f"{kind}/*" and first_path == resource.object_path(namespace, label.split("/", 1)[1]):
                broken[label] = first
                continue
            try:
                part = reader.survey(namespace, names, kinds)
            except RehashError as exc:
                listed = isinstance(exc, ApiError) and exc.path == resource.collection_path(namespace)
                broken[f"{kind}/*" if listed else label] = exc
                continue
            merged.merge(part)
    return merged, broken
