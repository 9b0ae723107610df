"""Cluster-wide lists consumed a namespace at a time: how a large pass holds one namespace, not the cluster.

The API server returns a cluster-wide list in etcd's key order (`namespace/name`), so each namespace's
objects come together, and lists of different resources meet the namespaces in the same order. A pass
that walks the cluster namespace by namespace (pipeline/streamed_walk.py) opens one list per resource it needs
and takes each namespace's objects from all of them in step; only the page each list is on, and the
objects of the namespace being walked, are held. The list's own pager asks the budget for each page and
resumes after an expired token (KubeClient.list_items).

That order is checked, never trusted: an older watch cache or an aggregated API may list in another order,
and an object passed by because it sorted before the namespace being walked would vanish from the pass.
Each stream notes when an object sorts before the one read just before it (`disordered`), and `drain`
reads what is left once the walk is over, so a disorder anywhere in the list is seen; the walk then
recovers what it passed by (pipeline/streamed_walk.py) instead of dropping it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from itertools import groupby
from operator import itemgetter
from typing import Any, TypeVar

from reconcile.errors import PassCut, RehashError
from reconcile.model.order import namespace_order


def namespace_of(item: dict[str, Any]) -> str:
    metadata = item.get("metadata")
    namespace = metadata.get("namespace", "") if metadata.__class__ is dict else ""
    return namespace if namespace.__class__ is str else str(namespace)


class NamespaceStream:
    """One cluster-wide list, read as far as the namespace asked for and no further.

    A list that gives its objects a page at a time (`ListedItems.chunks`) is walked by runs: a page is
    split once into its stretches of one namespace, and a namespace is taken or passed by a stretch at a
    time, so the per-object work is one look at each object's namespace (every object of a steady pass
    passes here). Any other iterator is walked an object at a time."""

    def __init__(self, items: Iterable[dict[str, Any]]) -> None:
        chunks = getattr(items, "chunks", None)
        self._chunks: Iterator[list[dict[str, Any]]] = (
            chunks() if callable(chunks) else ([item] for item in items)
        )
        self._page: list[Any] = []
        """The current page: its objects, each stretch None once taken or passed by."""
        self._runs: list[tuple[str, int, int]] = []
        """The current page's stretches of one namespace: (namespace, start, end)."""
        self._run = 0
        """The index in `_runs` of the head: the stretch to take or pass by next."""
        self._head = False
        self._head_at = namespace_order("")
        """`namespace_order` of the head's namespace, computed once per namespace."""
        self._head_namespace = ""
        self._over = False
        self._last = ""
        self.disordered = False
        """An object came after one that sorts after it: the list is not in key order."""

    def take(self, namespace: str, *, pass_by: bool = True) -> list[dict[str, Any]]:
        """The objects of `namespace`, passing by those of the namespaces before it (`pass_by` False: the
        next objects while they are of `namespace`, stopping at any other). What the list raises (a failed
        page, the budget's cut) is raised here, and the stream is then over."""
        mark = namespace_order(namespace)
        taken: list[dict[str, Any]] = []
        while self._peek():
            at = self._head_at
            if at != mark:
                if at > mark or not pass_by:
                    break
            else:
                _namespace, start, end = self._runs[self._run]
                taken += self._page[start:end]
            self._pass_head()
        return taken

    @property
    def over(self) -> bool:
        """Every object of the list was taken or passed by."""
        return self._over and not self._head

    def upcoming(self) -> str | None:
        """The namespace of the next object (its page read if need be), None once the list is over."""
        return self._head_namespace if self._peek() else None

    def drain(self) -> None:
        """Read the rest of the list, only to learn whether it was in key order: the walk is over. On a
        sorted list this is usually the page already read; what the list raises is raised here."""
        while self._peek():
            self._pass_head()

    def _pass_head(self) -> None:
        """The head stretch is taken or passed by: its objects are let go (the page holds them no longer),
        so a page's objects are freed as the walk goes through it, not all at its end."""
        _namespace, start, end = self._runs[self._run]
        self._page[start:end] = [None] * (end - start)
        self._head = False
        self._run += 1

    def _peek(self) -> bool:
        """Whether there is a head stretch (the next page read if need be); a new namespace's order is
        computed, and checked against the list's order so far, as the walk reaches it."""
        if self._head or self._over:
            return self._head
        try:
            while self._run >= len(self._runs):
                self._page = next(self._chunks)
                self._runs, self._run = runs_of(self._page), 0
        except StopIteration:
            self._over = True
            self._page, self._runs = [], []
            return False
        except BaseException:
            self._over = True
            raise
        namespace = self._runs[self._run][0]
        if namespace != self._head_namespace:  # a namespace's objects come together: once each
            self._head_namespace = namespace
            self._head_at = at = namespace_order(namespace)
            if at < self._last:
                self.disordered = True
            elif at > self._last:
                self._last = at
        self._head = True
        return True


def runs_of(page: list[dict[str, Any]]) -> list[tuple[str, int, int]]:
    """The stretches of one namespace in a page, in order: (namespace, start, end)."""
    runs: list[tuple[str, int, int]] = []
    start = 0
    for namespace, stretch in groupby(namespaces_of(page)):
        end = start + len(list(stretch))
        runs.append((namespace, start, end))
        start = end
    return runs


_METADATA = itemgetter("metadata")
_NAMESPACE = itemgetter("namespace")


def namespaces_of(page: list[dict[str, Any]]) -> list[str]:
    """`namespace_of` each object of a page. Every object of a steady pass's lists passes here: a page whose
    objects all have a `dict` metadata holding a `str` namespace is read by C code alone, any other page
    object by object."""
    try:
        metadatas = list(map(_METADATA, page))
        if set(map(type, metadatas)) <= {dict}:
            namespaces: list[Any] = list(map(_NAMESPACE, metadatas))
            if set(map(type, namespaces)) <= {str}:
                return namespaces
    except (KeyError, TypeError):  # an object without metadata or namespace, or not a mapping
        pass
    return list(map(namespace_of, page))


K = TypeVar("K")


def take_each(
    streams: dict[K, NamespaceStream],
    namespace: str,
    failed: Callable[[K, RehashError], None],
    *,
    pass_by: bool = True,
) -> Iterator[tuple[K, list[dict[str, Any]]]]:
    """The namespace's objects from each of these streams (`NamespaceStream.take`). A stream whose list
    fails is told to `failed` and left out from then on; the budget's cut (`PassCut`) is raised."""
    return each_alive(streams, lambda stream: stream.take(namespace, pass_by=pass_by), failed)


def next_namespace(streams: dict[K, NamespaceStream], failed: Callable[[K, RehashError], None]) -> str | None:
    """The namespace of the first object any of these streams has next, None when all are over. A walk
    that takes it from every stream each time, without passing by (`take_each(..., pass_by=False)`),
    drops nothing, whatever order the lists come in (a namespace a list gives out of order is then taken
    again later). A stream whose list fails is told to `failed` and left out; `PassCut` is raised."""
    upcoming = [ns for _, ns in each_alive(streams, NamespaceStream.upcoming, failed) if ns is not None]
    return min(upcoming, key=namespace_order, default=None)


T = TypeVar("T")


def each_alive(
    streams: dict[K, NamespaceStream],
    read: Callable[[NamespaceStream], T],
    failed: Callable[[K, RehashError], None],
) -> Iterator[tuple[K, T]]:
    """`read` of each stream whose list has not failed; one that fails now is told to `failed` and removed
    from `streams`; the budget's cut (`PassCut`) is raised."""
    for key, stream in list(streams.items()):
        try:
            got = read(stream)
        except PassCut:
            raise
        except RehashError as exc:
            failed(key, exc)
            del streams[key]
            continue
        yield key, got
