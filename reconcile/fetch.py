"""Reading ConfigMaps and Secrets gently: metadata first, content only for what changed.

Per namespace the planner picks metadata gets by name (few references; needs only `get`) or one
metadata list (many references, or search mode), with server-side filters where they exist (Helm
release Secrets are never listed). A pass over the whole cluster may instead list a kind once,
cluster-wide, when the kind's objects are few enough per referenced one (see `CLUSTER_LIST_RATIO`).
Content is downloaded only for sources whose identity, version or key selection differs from what the
workload recorded, and is dropped as soon as it is hashed: only digests are kept, never Secret data.
"""

from __future__ import annotations

import logging
from collections.abc import Collection, Iterable, Mapping
from concurrent.futures import Executor
from dataclasses import dataclass, field
from typing import Any, Literal

from reconcile.errors import Forbidden, NotFound, RehashError
from reconcile.hashing import source_token
from reconcile.kube.client import KubeClient
from reconcile.kube.kinds import CONFIGMAPS, SECRETS, Resource
from reconcile.refs import DiscoverySettings, is_true

FetchMode = Literal["auto", "list", "get"]
SourceKey = tuple[str, str]  # (kind, name)
RESOURCES: dict[str, Resource] = {"configmap": CONFIGMAPS, "secret": SECRETS}
HELM_RELEASE_FILTER = "type!=helm.sh/release.v1"
# Up to this many wanted names of one kind in a namespace, metadata gets by name beat a metadata list:
# a list returns every object of the namespace (most unreferenced), gets only the wanted ones, in
# parallel over kept-alive connections. Measured with `make bench` (docs/performance.md).
GET_THRESHOLD = 40
# A whole-cluster pass lists a kind cluster-wide (metadata only, paged) when the cluster holds at most this
# many objects of the kind per referenced one. A metadata GET moves a ~300-byte body plus the request's
# headers (the bearer token alone is often ~1 KB) and costs the API server a full authn/authz/audit
# cycle; a list item moves ~300 bytes, about 40 once a page over 128 KiB is gzipped (docs/performance.md).
CLUSTER_LIST_RATIO = 16

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class SourceMeta:
    """Identity of one existing source and the few annotation flags the pass reads from it."""

    kind: str
    name: str
    uid: str
    resource_version: str
    flags: frozenset[str] = frozenset()

    def annotations(self) -> dict[str, str]:
        """The flags as an annotations map, for refs.source_ignored / source_matches."""
        return dict.fromkeys(self.flags, "true")


def flag_keys(settings: DiscoverySettings) -> frozenset[str]:
    """Annotation keys whose value matters on a source (ignore and match, own and compat)."""
    keys = {f"{settings.prefix}/ignore", f"{settings.prefix}/match"}
    if "reloader" in settings.compat:
        keys |= {"reloader.stakater.com/ignore", "reloader.stakater.com/match"}
    return frozenset(keys)


def read_meta(kind: str, obj: Mapping[str, Any], interesting: frozenset[str]) -> SourceMeta | None:
    metadata = obj.get("metadata")
    if not isinstance(metadata, Mapping) or not isinstance(metadata.get("name"), str):
        return None
    annotations = metadata.get("annotations")
    flags: frozenset[str] = frozenset()
    if isinstance(annotations, Mapping):
        flags = frozenset(k for k in interesting if is_true(annotations.get(k)))
    return SourceMeta(
        kind, metadata["name"], str(metadata.get("uid", "")), str(metadata.get("resourceVersion", "")), flags
    )


@dataclass
class NamespaceSources:
    """What one namespace's survey found: existing sources by (kind, name); lists are complete per kind."""

    namespace: str
    found: dict[SourceKey, SourceMeta] = field(default_factory=dict)
    listed: set[str] = field(default_factory=set)

    def of_kind(self, kind: str) -> Iterable[SourceMeta]:
        return (m for (k, _), m in sorted(self.found.items()) if k == kind)

    def merge(self, other: NamespaceSources) -> None:
        self.found.update(other.found)
        self.listed |= other.listed


class SourceReader:
    """Fetches source metadata and content tokens for the pass, counting what it downloads."""

    def __init__(
        self,
        client: KubeClient,
        executor: Executor,
        *,
        mode: FetchMode,
        settings: DiscoverySettings,
        hash_key: bytes | None,
    ) -> None:
        self.client = client
        self.executor = executor
        self.mode = mode
        self.interesting = flag_keys(settings)
        self.hash_key = hash_key
        self.contents_fetched = 0
        self._tokens: dict[tuple[str, str, str, str, str, frozenset[str] | None], Hashed] = {}
        # Kinds listed cluster-wide for this pass: kind -> namespace -> name -> metadata.
        self._cluster: dict[str, dict[str, dict[str, SourceMeta]]] = {}

    def survey_cluster(
        self, wanted: Mapping[str, int], namespaces: Collection[str], exclude: Collection[str] = ()
    ) -> None:
        """In `auto` mode, list each kind cluster-wide when that is the cheaper way to learn the identities
        of `wanted[kind]` referenced sources; keep what `namespaces` hold. A refused or failed list costs
        nothing but its requests: the namespace surveys then read that kind."""
        if self.mode != "auto":
            return
        jobs = {
            kind: self.executor.submit(self._list_cluster, kind, count, namespaces, exclude)
            for kind, count in sorted(wanted.items())
            if count > 0
        }
        for kind, job in jobs.items():
            try:
                listed = job.result()
            except Forbidden as exc:
                log.warning(
                    "may not list %ss cluster-wide (%s); reading them namespace by namespace "
                    "(fetch: get skips this attempt)",
                    kind,
                    exc,
                )
                continue
            except RehashError as exc:
                log.warning(
                    "listing %ss cluster-wide failed (%s); reading them namespace by namespace", kind, exc
                )
                continue
            if listed is not None:
                self._cluster[kind] = listed

    def _list_cluster(
        self, kind: str, wanted: int, namespaces: Collection[str], exclude: Collection[str]
    ) -> dict[str, dict[str, SourceMeta]] | None:
        path = RESOURCES[kind].collection_path(None)
        total = _object_count(next(self.client.list_pages(path, metadata_only=True, limit=1)))
        if total is None or total > CLUSTER_LIST_RATIO * wanted:
            return None
        terms = [HELM_RELEASE_FILTER] if kind == "secret" else []
        terms += [f"metadata.namespace!={n}" for n in sorted(exclude)]
        found: dict[str, dict[str, SourceMeta]] = {}
        for item in self.client.list_items(path, field_selector=",".join(terms) or None, metadata_only=True):
            namespace = str((item.get("metadata") or {}).get("namespace", ""))
            meta = read_meta(kind, item, self.interesting) if namespace in namespaces else None
            if meta is not None:
                found.setdefault(namespace, {})[meta.name] = meta
        return found

    def plan_kind(self, names: set[str], search: bool) -> Literal["list", "get"]:
        if search:
            return "list"
        if self.mode != "auto":
            return self.mode
        return "get" if len(names) <= GET_THRESHOLD else "list"

    def survey(
        self, namespace: str, wanted: Mapping[str, set[str]], search_kinds: frozenset[str]
    ) -> NamespaceSources:
        """Metadata of the wanted sources of one namespace (and, for search mode, of all of a kind)."""
        result = NamespaceSources(namespace)
        for kind in ("configmap", "secret"):
            names = wanted.get(kind, set())
            # Search mode needs a list; least-privilege `get` mode never lists Secrets, so there it
            # covers ConfigMaps only (documented with the fetch setting).
            search = kind in search_kinds and not (self.mode == "get" and kind == "secret")
            if not names and not search:
                continue
            cluster = self._cluster.get(kind)
            if cluster is not None:
                result.found.update({(kind, n): m for n, m in cluster.get(namespace, {}).items()})
                result.listed.add(kind)
                names = {n for n in names if (kind, n) not in result.found} if kind == "secret" else set()
            elif self.plan_kind(names, search) == "list":
                self._list(result, kind, helm_filter=kind == "secret")
                result.listed.add(kind)
                # A wanted Helm release Secret is filtered out of the list: confirm such names by get.
                names = {n for n in names if (kind, n) not in result.found} if kind == "secret" else set()
            self._get_each(result, kind, names)
        return result

    def _list(self, result: NamespaceSources, kind: str, *, helm_filter: bool) -> None:
        path = RESOURCES[kind].collection_path(result.namespace)
        selector = HELM_RELEASE_FILTER if helm_filter else None
        for item in self.client.list_items(path, field_selector=selector, metadata_only=True):
            meta = read_meta(kind, item, self.interesting)
            if meta is not None:
                result.found[(kind, meta.name)] = meta

    def _get_each(self, result: NamespaceSources, kind: str, names: set[str]) -> None:
        paths = [RESOURCES[kind].object_path(result.namespace, n) for n in sorted(names)]
        for obj in self.executor.map(self._get_or_none, paths, [True] * len(paths)):
            meta = read_meta(kind, obj, self.interesting) if obj is not None else None
            if meta is not None:
                result.found[(kind, meta.name)] = meta

    def _get_or_none(self, path: str, metadata_only: bool) -> dict[str, Any] | None:
        try:
            return self.client.get(path, metadata_only=metadata_only)
        except NotFound:
            return None

    def tokens(
        self, namespace: str, needs: Iterable[tuple[SourceMeta, frozenset[str] | None]]
    ) -> dict[tuple[str, str, frozenset[str] | None], Hashed | None]:
        """Content tokens for (source, key selection) pairs, downloading each source at most once.

        Each token comes with the uid and resourceVersion of the content actually hashed. A source
        deleted since the survey gives None (treated as missing by the caller).
        """
        pending: dict[SourceKey, list[frozenset[str] | None]] = {}
        out: dict[tuple[str, str, frozenset[str] | None], Hashed | None] = {}
        for meta, keys in needs:
            cached = self._tokens.get(
                (namespace, meta.kind, meta.name, meta.uid, meta.resource_version, keys)
            )
            if cached is not None:
                out[(meta.kind, meta.name, keys)] = cached
            else:
                pending.setdefault((meta.kind, meta.name), []).append(keys)
        paths = [RESOURCES[k].object_path(namespace, n) for (k, n) in pending]
        fetched = self.executor.map(self._get_or_none, paths, [False] * len(paths))
        for (kind, name), obj in zip(pending, fetched, strict=True):
            if obj is None:
                out.update({(kind, name, keys): None for keys in pending[(kind, name)]})
                continue
            self.contents_fetched += 1
            metadata = obj.get("metadata") or {}
            uid, version = str(metadata.get("uid", "")), str(metadata.get("resourceVersion", ""))
            for keys in pending[(kind, name)]:
                hashed = Hashed(source_token(kind, obj, keys, self.hash_key), uid, version)
                out[(kind, name, keys)] = hashed
                self._tokens[(namespace, kind, name, uid, version, keys)] = hashed
        return out


def _object_count(page: Mapping[str, Any]) -> int | None:
    """Objects in the whole list, from its first page (None when the server does not say)."""
    metadata = page.get("metadata") or {}
    items = len(page.get("items") or [])
    if not metadata.get("continue"):
        return items
    remaining = metadata.get("remainingItemCount")
    return items + remaining if isinstance(remaining, int) else None


@dataclass(frozen=True)
class Hashed:
    """A source's sealed content token and the identity of the exact version that was hashed."""

    token: str
    uid: str
    resource_version: str
