"""Reading ConfigMaps and Secrets gently: metadata first, content only for what changed.

Per namespace the planner picks metadata gets by name (few references; needs only `get`) or one
metadata list (search mode, or many references where the namespace holds few enough objects per
referenced one), with server-side filters where they exist (Helm release Secrets are never listed). A
namespace's metadata list serves every batch of that namespace in the pass, so a large namespace cut
into batches is listed once, not once per batch. A pass over the whole cluster may instead list a kind
once, cluster-wide, when the kind's objects are few enough per referenced one (the read strategy,
`policy.reads`, decides every list-or-GET question).
Content is downloaded only for sources whose identity, version or key selection differs from what the
workload recorded, and is dropped as soon as it is hashed: only digests are kept, never Secret data.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Collection, Iterable, Mapping
from concurrent.futures import Executor
from itertools import groupby
from typing import Any, NamedTuple, TypeVar

from reconcile.errors import Forbidden, ListOverCap, NotFound, PassCut, RehashError
from reconcile.kube.client import KubeClient, ListedItems, namespace_exclusions
from reconcile.kube.pages import object_count
from reconcile.model.choices import Fetch
from reconcile.model.freshness import content_changed_at
from reconcile.model.hashing import source_token
from reconcile.model.kinds import CONFIGMAPS, SECRETS, Resource
from reconcile.model.references import DiscoverySettings
from reconcile.model.sources import (
    Hashed,
    NamespaceSources,
    Selection,
    SourceKey,
    SourceMeta,
    flag_keys,
    read_meta,
)
from reconcile.pipeline.bounded_list import BoundedList, CappedList
from reconcile.pipeline.namespace_stream import NamespaceStream, namespace_of, take_each
from reconcile.policy.reads import (
    Costs,
    Read,
    choose,
    choose_cluster_sources,
    cluster_list_cap,
    probes_cluster_size,
)

RESOURCES: dict[str, Resource] = {"configmap": CONFIGMAPS, "secret": SECRETS}

log = logging.getLogger(__name__)
T = TypeVar("T")
R = TypeVar("R")


class Fetched(NamedTuple):
    """A source read by name: its identity, and where its content was wanted, its tokens (or why its
    content could not be hashed)."""

    meta: SourceMeta
    tokens: dict[Selection, Hashed] | RehashError | None


class Plan(NamedTuple):
    """How a namespace's sources of a kind are read: `lists`, or GETs by name; `blind`: the namespace's size
    is not known, so the list is a `BoundedList` for this many wanted objects."""

    lists: bool
    blind: int | None = None


def gather(executor: Executor, fn: Callable[[T], R], items: Iterable[T]) -> tuple[list[tuple[T, R]], bool]:
    """`fn` over `items` in parallel; results of those that ran, and whether the budget cut any short.

    Other errors are the caller's to map per item, so `fn` returns them rather than raising."""
    futures = [(item, executor.submit(fn, item)) for item in items]
    done: list[tuple[T, R]] = []
    cut = False
    for item, future in futures:
        try:
            done.append((item, future.result()))
        except PassCut:
            cut = True
    return done, cut


class SourceReader:
    """Reads source metadata and content for the pass, counting the contents it downloads."""

    def __init__(
        self,
        client: KubeClient,
        executor: Executor,
        *,
        mode: Fetch,
        settings: DiscoverySettings,
        hash_key: bytes | None,
    ) -> None:
        self.client = client
        self.executor = executor
        self.mode = mode
        self.interesting = flag_keys(settings)
        self.hash_key = hash_key
        self.contents_fetched = 0
        # Kinds listed cluster-wide for this pass: kind -> namespace -> name -> metadata, kept only for the
        # names the pass wants (`_cluster_names`), so memory follows the referenced sources, not the cluster.
        self._cluster: dict[str, dict[str, dict[str, SourceMeta]]] = {}
        self._cluster_names: Mapping[tuple[str, str], Collection[str]] = {}
        # Of a kind whose cluster-wide list stopped at its cap (`CappedList`): the namespaces it showed in
        # full, the only ones `_cluster` answers for (no entry: every namespace).
        self._covered: dict[str, frozenset[str]] = {}
        # In a pass that walks the cluster namespace by namespace: the open cluster-wide lists, per kind,
        # of which `_cluster` holds the current namespace's share (`stream_cluster`, `follow`).
        self._streams: dict[str, NamespaceStream] = {}
        # Whether `_cluster` comes from such streams: what they did not show may still exist (a list not in
        # key order shows an object after its namespace was passed), so absence is confirmed by name.
        self._streamed = False
        # This pass's lists of the current namespace (kind -> name -> metadata): its later batches reuse
        # them. Only one namespace is kept (batches come namespace by namespace), so memory stays bounded.
        self._lists: dict[tuple[str, str], dict[str, SourceMeta]] = {}
        # This pass's label-selector lists of the current namespace, (namespace, kind, selector) -> name ->
        # metadata: one list per namespace and selector, shared by every workload and batch using it.
        self._selections: dict[tuple[str, str, str], dict[str, SourceMeta]] = {}
        # Objects per (namespace, kind), counted from this pass's cluster-wide lists.
        self._counts: dict[tuple[str, str], int] = {}
        # Recorded sources per (namespace, kind) of the pass's trusted workloads (`expect`).
        self._expected: Mapping[tuple[str, str], int] = {}
        self._lock = threading.Lock()

    def expect(self, wanted: Mapping[tuple[str, str], int]) -> None:
        """The sources per (namespace, kind) the whole pass will want, so that a namespace's metadata is
        listed when its batches together want enough of it, though each batch alone wants few."""
        self._expected = dict(wanted)

    def survey_cluster(
        self, wanted: Mapping[tuple[str, str], Collection[str]], exclude: Collection[str] = ()
    ) -> None:
        """In `auto` mode, list each kind cluster-wide when that is the cheaper way to learn the identities
        of the referenced sources `wanted` names per (namespace, kind); keep only those, as the pages stream
        by. A refused or failed list costs nothing but its requests: the namespace surveys then read that
        kind."""
        if self.mode is not Fetch.AUTO:
            return
        self._cluster_names = wanted
        self._covered = {}
        counts: dict[str, int] = {}
        for (_namespace, kind), names in wanted.items():
            counts[kind] = counts.get(kind, 0) + len(names)
        jobs = {
            kind: self.executor.submit(self._list_cluster, kind, count, exclude)
            for kind, count in sorted(counts.items())
            if count > 0
        }
        for kind, job in jobs.items():
            try:
                listed = job.result()
            except PassCut:
                raise
            except RehashError as exc:
                _cluster_list_failed(kind, exc)
                continue
            if listed is not None:
                self._cluster[kind], covered = listed
                if covered is not None:
                    self._covered[kind] = covered

    def stream_cluster(self, wanted: Mapping[str, int], exclude: Collection[str] = ()) -> None:
        """`survey_cluster` for a pass that walks the cluster namespace by namespace: open the cluster-wide
        list of each kind whose `wanted` referenced sources make it the cheaper way; `follow` then keeps
        each namespace's share of it as the walk reaches that namespace."""
        # Lists of an earlier stretch of the walk are past the namespaces a new stretch starts with.
        self._streams = {}
        if self.mode is not Fetch.AUTO:
            return
        counts = {kind: count for kind, count in sorted(wanted.items()) if count > 0}
        # The lists whose own first page tells their size travel together (`ListedItems.start`).
        opened = {
            kind: self._open_cluster_list(kind, exclude)
            for kind, count in counts.items()
            if not probes_cluster_size(count)
        }
        for items in opened.values():
            items.start()
        for kind, count in counts.items():
            try:
                listed = self._cluster_items(kind, count, exclude, opened.pop(kind, None))
            except PassCut:
                for items in opened.values():
                    items.close()
                raise
            except RehashError as exc:
                _cluster_list_failed(kind, exc)
                continue
            if listed is not None:
                self._streams[kind] = NamespaceStream(listed)

    def follow(self, namespace: str, wanted: Mapping[tuple[str, str], Collection[str]]) -> None:
        """The walk reached `namespace`, whose workloads want these sources: keep what the open
        cluster-wide lists (`stream_cluster`) show of them, and nothing of the namespaces before it."""
        self._cluster_names = wanted
        self._cluster = {}
        self._covered = {}
        self._streamed = True
        for kind, items in take_each(self._streams, namespace, _cluster_list_failed):
            found: dict[str, dict[str, SourceMeta]] = {}
            self._keep_run(kind, namespace, items, found)  # taken for this namespace: all of it
            self._cluster[kind] = found
            if self._streams[kind].disordered:
                log.warning(
                    "the cluster-wide list of %ss is not in key order; reading them namespace by namespace",
                    kind,
                )
                del self._streams[kind]

    def _list_cluster(
        self, kind: str, wanted: int, exclude: Collection[str]
    ) -> tuple[dict[str, dict[str, SourceMeta]], frozenset[str] | None] | None:
        """What the cluster-wide list of a kind shows of the wanted sources, and, where it stopped at its cap,
        the namespaces it showed in full (None: all of them); None when the kind is not listed."""
        items = self._cluster_items(kind, wanted, exclude)
        if items is None:
            return None
        found: dict[str, dict[str, SourceMeta]] = {}
        shown: list[str] = []
        try:
            self._gather(kind, items, found, shown)
        except ListOverCap as exc:
            log.info(
                "%ss cluster-wide: %s; kept for the %d namespaces it showed in full, the others read "
                "namespace by namespace",
                kind,
                exc,
                len(shown),
            )
            return found, frozenset(shown)
        return found, None

    def _cluster_items(
        self, kind: str, wanted: int, exclude: Collection[str], opened: ListedItems | None = None
    ) -> Iterable[dict[str, Any]] | None:
        """The cluster-wide metadata list of a kind, if the read strategy chooses it for `wanted` sources.
        Its first page tells how many objects it holds, where the server says; where it does not (a field
        selector), it is read only up to its cap (`CappedList`). For a few wanted sources a `limit=1` probe
        asks the size before the list (`probes_cluster_size`). `opened`: the list, opened already."""
        items = opened
        if items is None and probes_cluster_size(wanted):
            total = self._size(RESOURCES[kind].collection_path(None))
        else:
            items = items or self._open_cluster_list(kind, exclude)
            total = items.size()
        choice = choose_cluster_sources(wanted, total, costs=costs_of(self.client))
        log.info("%ss cluster-wide: %s (%s)", kind, choice.way, choice.why)
        if not choice.lists:
            if items is not None:
                items.close()
            return None
        if items is None:
            return self._open_cluster_list(kind, exclude)
        items.go_on()
        return items if total is not None else CappedList(items, cluster_list_cap(wanted))

    def _open_cluster_list(self, kind: str, exclude: Collection[str]) -> ListedItems:
        """The cluster-wide metadata list of a kind (Helm releases and excluded namespaces filtered out by
        the server), not yet read."""
        terms = [f for f in (RESOURCES[kind].list_filter,) if f]
        selector = ",".join(terms + namespace_exclusions(exclude)) or None
        path = RESOURCES[kind].collection_path(None)
        return self.client.list_items(path, field_selector=selector, metadata_only=True, read_ahead=True)

    def _gather(
        self,
        kind: str,
        items: Iterable[dict[str, Any]],
        found: dict[str, dict[str, SourceMeta]],
        shown: list[str],
    ) -> None:
        """Of these listed objects, the metadata of those the pass wants, by namespace and name, into `found`
        (every object is counted: a namespace's size, for the read strategy, without a probe), noting in
        `shown` each namespace once all its objects were seen (a list that stops midway has shown those
        namespaces in full, and no other)."""
        for namespace, grouped in groupby(items, key=namespace_of):  # a namespace's objects come together
            self._keep_run(kind, namespace, list(grouped), found)
            shown.append(namespace)

    def _keep_run(
        self, kind: str, namespace: str, run: list[dict[str, Any]], found: dict[str, dict[str, SourceMeta]]
    ) -> None:
        """Of the listed objects of one namespace, the metadata of those the pass wants, into `found`; all of
        them are counted."""
        key = (namespace, kind)
        self._counts[key] = self._counts.get(key, 0) + len(run)
        names = self._cluster_names.get(key)
        if not names:
            return
        for item in run:
            metadata = item.get("metadata")
            if metadata.__class__ is dict and metadata.get("name") in names:
                meta = read_meta(kind, item, self.interesting)
                if meta is not None:
                    found.setdefault(namespace, {})[meta.name] = meta

    def plan_kind(
        self,
        namespace: str,
        kind: str,
        names: Collection[str],
        *,
        search: bool = False,
        content: bool = False,
    ) -> Plan:
        """How to read `names` of a kind in a namespace: one list of the namespace, or GETs by name (the read
        strategy decides: `policy.reads`). Metadata is wanted for every source the whole pass wants there,
        as one list serves every batch of the namespace; content for what this batch wants. Where the
        namespace's size is not known, the list's own first page tells it (`BoundedList`)."""
        if search:
            return Plan(lists=True)
        wanted = len(names) if content else max(len(names), self._expected.get((namespace, kind), 0))
        read = Read.SOURCE_CONTENT if content else Read.SOURCE_METADATA
        costs = costs_of(self.client)
        choice = choose(read, wanted, None, costs=costs, mode=self.mode)
        plan = Plan(lists=choice.lists)
        if choice.lists and self.mode is Fetch.AUTO:  # worth a list by count: the namespace's size decides
            total = self._count(namespace, kind)
            if total is None:
                plan = Plan(lists=True, blind=wanted)
            else:
                choice = choose(read, wanted, total, costs=costs)
                plan = Plan(lists=choice.lists)
        log.info("%s of %ss in %s: %s (%s)", read, kind, namespace, choice.way, choice.why)
        return plan

    def _count(self, namespace: str, kind: str) -> int | None:
        """Objects of a kind in the namespace, from this pass's list of it or its cluster-wide list, where
        there is one (None: not known)."""
        known = self._known_list(namespace, kind)
        if known is not None:  # the same filter as a content list of the kind (Helm releases left out)
            return len(known)
        return self._counts.get((namespace, kind))

    def _items(
        self, namespace: str, kind: str, plan: Plan, *, content: bool
    ) -> Iterable[dict[str, Any]] | BoundedList:
        """The items of the namespace's list of a kind (Helm releases filtered out), as the plan says."""
        path = RESOURCES[kind].collection_path(namespace)
        selector = RESOURCES[kind].list_filter
        if plan.blind is None:
            return self.client.list_items(path, field_selector=selector, metadata_only=not content)
        read = Read.SOURCE_CONTENT if content else Read.SOURCE_METADATA
        costs = costs_of(self.client)
        only_metadata = not content
        return BoundedList(
            self.client,
            path,
            read,
            plan.blind,
            costs=costs,
            field_selector=selector,
            metadata_only=only_metadata,
        )

    def _size(self, path: str) -> int | None:
        """Objects in the collection at `path`, from a `limit=1` metadata list (None: not told)."""
        return object_count(next(self.client.list_pages(path, metadata_only=True, limit=1)))

    def _known_list(self, namespace: str, kind: str) -> Mapping[str, SourceMeta] | None:
        """Every object of a kind in the namespace, if this pass already listed it here."""
        with self._lock:
            return self._lists.get((namespace, kind))

    def _from_cluster(self, result: NamespaceSources, kind: str, names: set[str]) -> bool:
        """Settle `names` from the cluster-wide list when it covered every one of them (it kept only the
        names the pass wanted): found, or absent; a Secret the list did not show may be a Helm release the
        list filtered out, and a list streamed a namespace at a time may show an object late, so those are
        confirmed by name. False: the namespace survey reads them."""
        cluster = self._cluster.get(kind)
        kept = self._cluster_names.get((result.namespace, kind), ())
        if cluster is None or not names or not names <= set(kept):
            return False
        covered = self._covered.get(kind)
        if covered is not None and result.namespace not in covered:
            return False
        listed = cluster.get(result.namespace, {})
        result.found.update({SourceKey(kind, n): listed[n] for n in names if n in listed})
        missing = {n for n in names if n not in listed}
        if RESOURCES[kind].list_filter or self._streamed:
            self._get_each(result, kind, missing, content=False)
        else:
            result.absent |= {SourceKey(kind, n) for n in missing}
        return True

    def _remember(self, namespace: str, kind: str, listed: dict[str, SourceMeta]) -> None:
        with self._lock:
            if any(ns != namespace for ns, _ in self._lists):
                self._lists.clear()
            self._lists[(namespace, kind)] = listed

    def survey(
        self,
        namespace: str,
        wanted: Mapping[str, set[str]],
        search_kinds: frozenset[str],
        selected: frozenset[tuple[str, str]] = frozenset(),
    ) -> NamespaceSources:
        """Metadata of the wanted sources of one namespace (and, for search mode, of all of a kind; for
        label-selected sources, of those each selector selects).

        Failures are kept per source (a 403 on one Secret fails only the workloads that need it); a
        failed list marks its kind unreadable and its wanted names are read one by one instead."""
        result = NamespaceSources(namespace)
        for kind, selector in sorted(selected):
            try:
                self._select(result, kind, selector)
            except PassCut:
                result.cut = True
                return result
        for kind, resource in RESOURCES.items():
            names = set(wanted.get(kind, set()))
            # Search mode needs a list; least-privilege `get` mode never lists Secrets, so there it
            # covers ConfigMaps only (documented with the fetch setting).
            search = kind in search_kinds and not (self.mode is Fetch.GET and resource.confidential)
            if kind in search_kinds and not search:
                result.searched.add(kind)
            if not names and not search:
                continue
            if not search and self._from_cluster(result, kind, names):
                continue
            listed = self._known_list(namespace, kind)
            whole = listed is not None
            if listed is None:
                try:
                    plan = self.plan_kind(namespace, kind, names, search=search)
                    if plan.lists:
                        listed, whole = self._list(namespace, kind, plan)
                except PassCut:
                    result.cut = True
                    return result
                except RehashError as exc:
                    result.broken[SourceKey.whole(kind)] = exc
            if listed is not None:
                result.found.update({SourceKey(kind, n): m for n, m in listed.items()})
                if whole:
                    result.listed.add(kind)
                    result.searched.add(kind)
                    names = self._unlisted(result, kind, names)
                else:
                    names = {n for n in names if n not in listed}
            self._get_each(result, kind, names, content=False)
        return result

    def _select(self, result: NamespaceSources, kind: str, selector: str) -> None:
        """The sources of a kind one label selector selects in the namespace: one metadata list with the
        selector as its `labelSelector`, made once per pass and namespace for every workload using it."""
        key = (result.namespace, kind, selector)
        with self._lock:
            members = self._selections.get(key)
        if members is None:
            if self.mode is Fetch.GET and RESOURCES[kind].confidential:
                failure = RehashError("fetch: get never lists Secrets, so a secret-selector cannot be read")
                result.broken[SourceKey.selection(kind, selector)] = failure
                return
            path = RESOURCES[kind].collection_path(result.namespace)
            terms = RESOURCES[kind].list_filter
            members = {}
            try:
                items = self.client.list_items(
                    path, label_selector=selector, field_selector=terms, metadata_only=True
                )
                for item in items:
                    meta = read_meta(kind, item, self.interesting)
                    if meta is not None:
                        members[meta.name] = meta
            except PassCut:
                raise
            except RehashError as exc:
                result.broken[SourceKey.selection(kind, selector)] = exc
                return
            with self._lock:
                if any(ns != result.namespace for ns, _, _ in self._selections):
                    self._selections.clear()
                self._selections[key] = members
        result.found.update({SourceKey(kind, n): m for n, m in members.items()})
        result.selected[(kind, selector)] = frozenset(members)

    @staticmethod
    def _unlisted(result: NamespaceSources, kind: str, names: set[str]) -> set[str]:
        """Wanted names a complete list did not show: only Secrets can hide there (a Helm release is
        filtered out of the list), so confirm those by name; a missing ConfigMap is absent."""
        if not RESOURCES[kind].list_filter:
            return set()
        return {n for n in names if SourceKey(kind, n) not in result.found}

    def _list(self, namespace: str, kind: str, plan: Plan) -> tuple[dict[str, SourceMeta], bool]:
        """The metadata of the objects of a kind in the namespace (Helm releases filtered out), and whether
        that is every one of them; a whole list is kept for the namespace's later batches in this pass."""
        items = self._items(namespace, kind, plan, content=False)
        listed: dict[str, SourceMeta] = {}
        for item in items:
            meta = read_meta(kind, item, self.interesting)
            if meta is not None:
                listed[meta.name] = meta
        whole = self._settle(namespace, kind, items)
        if whole:
            self._remember(namespace, kind, listed)
        return listed, whole

    def _settle(self, namespace: str, kind: str, items: object) -> bool:
        """Whether a list of the namespace's objects of a kind showed every one; a list stopped early keeps
        the size its pages told, for the namespace's later batches."""
        if not isinstance(items, BoundedList):
            return True
        if items.total is not None:
            with self._lock:
                self._counts[(namespace, kind)] = items.total
        return items.whole

    def contents(self, namespace: str, wants: Mapping[SourceKey, Collection[Selection]]) -> NamespaceSources:
        """The content tokens of the wanted sources for each key selection, with their identity: by name,
        or with one content list of the namespace where many of a kind are wanted (`plan_kind`). A source
        is downloaded once however many selections of it are wanted; only digests are kept."""
        result = NamespaceSources(namespace)
        by_kind: dict[str, set[str]] = {}
        for key in wants:
            by_kind.setdefault(key.kind, set()).add(key.name)
        for kind, wanted in sorted(by_kind.items()):
            names = wanted
            try:
                plan = self.plan_kind(namespace, kind, names, content=True)
                if plan.lists:
                    hashed = self._list_contents(result, kind, wants, plan)
                    whole = kind in result.listed
                    names = self._unlisted(result, kind, wanted) if whole else wanted - hashed
            except PassCut:
                result.cut = True
                return result
            except RehashError as exc:
                log.info("listing %ss of %s failed (%s); reading them by name", kind, namespace, exc)
            self._get_each(result, kind, names, content=True, wants=wants)
        return result

    def _list_contents(
        self,
        result: NamespaceSources,
        kind: str,
        wants: Mapping[SourceKey, Collection[Selection]],
        plan: Plan,
    ) -> set[str]:
        """Hash the wanted sources a content list of the namespace shows, each as it is reached (only its
        digest is kept, never more than one object's content at once); the names it showed. Only a whole
        list marks the kind listed (a name it did not show is absent) and serves later batches."""
        shown: set[str] = set()
        listed: dict[str, SourceMeta] = {}
        items = self._items(result.namespace, kind, plan, content=True)
        for item in items:
            meta = read_meta(kind, item, self.interesting)
            if meta is None:
                continue
            key = SourceKey(kind, meta.name)
            result.found[key] = listed[meta.name] = meta
            if key in wants:
                self._record(result, key, self._tokens(key, item, meta, wants[key]))
                shown.add(meta.name)
        if self._settle(result.namespace, kind, items):
            result.listed.add(kind)
            self._remember(result.namespace, kind, listed)
        return shown

    def _get_each(
        self,
        result: NamespaceSources,
        kind: str,
        names: Collection[str],
        *,
        content: bool,
        wants: Mapping[SourceKey, Collection[Selection]] | None = None,
    ) -> None:
        keys = [SourceKey(kind, n) for n in sorted(names)]
        resource = RESOURCES[kind]

        def fetch(key: SourceKey) -> Fetched | RehashError | None:
            """One source read by name, hashed in the worker: what comes back holds no content."""
            got = self.client.get_or_error(
                resource.object_path(result.namespace, key.name), metadata_only=not content
            )
            if isinstance(got, RehashError):
                return None if isinstance(got, NotFound) else got
            meta = read_meta(kind, got, self.interesting)
            if meta is None:
                return None
            tokens = self._tokens(key, got, meta, wants[key]) if content and wants is not None else None
            return Fetched(meta, tokens)

        done, cut = gather(self.executor, fetch, keys)
        result.cut |= cut
        for key, got in done:
            if got is None:
                result.absent.add(key)
            elif isinstance(got, RehashError):
                result.broken[key] = got
            else:
                result.found[key] = got.meta
                if got.tokens is not None:
                    self._record(result, key, got.tokens)

    def _tokens(
        self, key: SourceKey, obj: Mapping[str, Any], meta: SourceMeta, selections: Collection[Selection]
    ) -> dict[Selection, Hashed] | RehashError:
        """The content tokens of one source for each key selection, with the identity they were hashed at
        (a time, never content, kept next to each digest); the error of undecodable content."""
        changed_at = content_changed_at(obj)
        try:
            return {
                keys: Hashed(
                    source_token(key.kind, obj, keys, self.hash_key),
                    meta.uid,
                    meta.resource_version,
                    changed_at,
                )
                for keys in selections
            }
        except RehashError as exc:
            return exc

    def _record(
        self, result: NamespaceSources, key: SourceKey, tokens: dict[Selection, Hashed] | RehashError
    ) -> None:
        """A source's content, downloaded and hashed: its tokens, or (undecodable) a failure of the
        workloads that use it."""
        self.contents_fetched += 1
        if isinstance(tokens, RehashError):
            result.broken[key] = tokens
            return
        result.tokens.update(((key, keys), hashed) for keys, hashed in tokens.items())


def costs_of(client: KubeClient) -> Costs:
    """What a read through this client costs: its page size, and its rate limit."""
    return Costs(client.options.page_size)


def _cluster_list_failed(kind: str, exc: RehashError) -> None:
    if isinstance(exc, ListOverCap):
        log.info("%ss cluster-wide: %s; reading the rest namespace by namespace", kind, exc)
    elif isinstance(exc, Forbidden):
        log.warning(
            "may not list %ss cluster-wide (%s); reading them namespace by namespace "
            "(fetch: get skips this attempt)",
            kind,
            exc,
        )
    else:
        log.warning("listing %ss cluster-wide failed (%s); reading them namespace by namespace", kind, exc)
