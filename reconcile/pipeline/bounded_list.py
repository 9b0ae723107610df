"""Lists of a source kind whose size is not known: a namespace's first page is the probe, and a
cluster-wide list stops at its cap.

Where a pass does not know how many objects a collection holds, the first page asks for at most the
objects a list may move for the wanted ones (`list_limit`), with no `limit=1` probe first: a probe would
make two requests where one does for the common namespace that holds a few dozen objects (at 10x the
benchmark's cluster, 2,000 of a first install's requests). A page without a continue token was the whole
list, and one with a token says, by its `remainingItemCount`, whether the rest is still worth listing
(`keep_listing`). Stopped early, the list has wasted no more than
a list the bound allows; the wanted objects it did not show are then read by name, so a pass never takes
an incomplete list for a whole one (`BoundedList.whole`).

A cluster-wide list with a field selector (Secrets without Helm releases) is not told its size by its
first page either; it is read while it has shown no more than `cluster_list_cap` objects (`CappedList`),
and past that the walk reads the kind namespace by namespace, as after a failed list.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from reconcile.errors import ListOverCap
from reconcile.kube.client import KubeClient, ListedItems
from reconcile.policy.reads import Costs, Read, keep_listing, list_limit


class BoundedList:
    """The items of one list, page by page, stopped where the strategy says the rest is not worth it.

    Iterate it once (a list read again from its first page after an expired token gives its first items
    again: its readers keep them by name); afterwards `whole` says whether every object of the collection
    was shown (only then
    may a name it did not show be taken as absent, and the list serve the namespace's later batches), and
    `total` how many objects the collection holds, where the pages told (so later batches of the same
    namespace weigh list or GET without listing again)."""

    def __init__(
        self,
        client: KubeClient,
        path: str,
        read: Read,
        wanted: int,
        *,
        costs: Costs,
        field_selector: str | None = None,
        metadata_only: bool = False,
    ) -> None:
        self.whole = False
        self.total: int | None = None
        self._pages = client.list_pages(
            path,
            field_selector=field_selector,
            metadata_only=metadata_only,
            limit=list_limit(read, wanted, costs=costs),
            lazy=True,
        )
        self._read = read
        self._wanted = wanted
        self._costs = costs

    def __iter__(self) -> Iterator[dict[str, Any]]:
        listed = 0
        counted_from_start = False
        for page in self._pages:
            if self._pages.restarted and not counted_from_start:  # read again from its first page
                listed, counted_from_start = 0, True
            for item in page.get("items") or []:
                listed += 1
                yield item
            metadata = page.get("metadata") or {}
            if not metadata.get("continue"):
                self.whole, self.total = True, listed
                return
            remaining = metadata.get("remainingItemCount")
            more = remaining if isinstance(remaining, int) else None
            self.total = None if more is None else listed + more
            if not keep_listing(self._read, self._wanted, listed=listed, remaining=more, costs=self._costs):
                return


class CappedList:
    """A cluster-wide list read only while it has shown at most `cap` objects: the page that passes the cap
    raises `ListOverCap` where it is reached (`NamespaceStream` and the cluster survey take it like a failed
    list, and read the kind namespace by namespace from there). Iterate it, or its `chunks`, once."""

    def __init__(self, items: ListedItems, cap: int) -> None:
        self._items = items
        self._cap = cap

    def __iter__(self) -> Iterator[dict[str, Any]]:
        for chunk in self.chunks():
            yield from chunk

    def chunks(self) -> Iterator[list[dict[str, Any]]]:
        listed = 0
        for chunk in self._items.chunks():
            listed += len(chunk)
            if listed > self._cap:
                self._items.close()
                raise ListOverCap(f"the list passed {self._cap} objects, the most its wanted sources justify")
            yield chunk
