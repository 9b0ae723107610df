"""Paged lists: the pages of one list call, and its items, each once, within the pass's memory budget.

Expired `continue` tokens. A paged list reads one etcd snapshot; when etcd compacts it away before the
last page (a busy cluster, a slow pass), the next `continue` request answers 410 Expired. client-go's
pager then reads the whole list in one unpaged response; here the list starts again from its first page,
paged as before, and skips what it already gave (`ListedItems`: the API server returns a list in
storage-key order), so no answer is larger than a page, whatever the collection holds. The pages before
the point reached are read back to back, with nothing done for their items, so a fresh snapshot reaches it
long before etcd compacts again. A 410 on the first page (no token) is raised as Gone: there is no token to
blame. We restart on any 410 to a `continue` request, since the token's snapshot is the only thing such a
request can have lost. A list restarts as long as each start got further than the one before (more objects
read before its token expired): one whose tokens expire before it gets anywhere (etcd compacting faster than
it pages) fails as Gone, a failed scope the next pass reads again.

Pages too large. A page whose answer passes the pass's budget for one answer (`AnswerTooLarge`, from
kube/exchange.py) is asked again with half the objects, down to one; a single object too large for the
budget (or a server that ignores `limit`) fails the list, naming it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import Future
from itertools import chain
from typing import Any

from reconcile.errors import AnswerTooLarge, Gone
from reconcile.kube.ahead import Arrived, give_up
from reconcile.kube.page_size import PageLimits
from reconcile.kube.pages import LazyItems, object_count

log = logging.getLogger(__name__)

Fetch = Callable[[str | None, int], dict[str, Any]]
"""Reads one page: (continue token or None for the first page, objects it asks for) -> the decoded page."""
SendAhead = Callable[[str | None, int], Future[Arrived[dict[str, Any]]] | None]


class ListPager(Iterator[dict[str, Any]]):
    """Iterates over the pages (List objects) of one list call, following `continue` tokens.

    `fetch(token, limit)` reads one page. After an expired token the list starts again (see the module
    docstring): `restarted` turns True, and the pages from the new start repeat items yielded before, which
    a caller collecting items skips (`ListedItems` does). With `send_ahead`, the request for the next page
    is sent as soon as a page gives its token, on another thread (kube/ahead.py; it may decline, and the
    page is then requested when reached), so the caller works on one page while the next one travels; that
    page is decoded here, when the caller reaches it, and what its request raised is raised then, as if it
    had been sent then. Only for a list its caller reads to the end: a caller that stops early leaves one
    request made for nothing.
    """

    def __init__(
        self,
        fetch: Fetch,
        limits: PageLimits,
        send_ahead: SendAhead | None = None,
        on_restart: Callable[[], None] | None = None,
    ) -> None:
        self._fetch = fetch
        self._on_restart = on_restart
        """Told of each restart: a restart is counted with the report's retries, as a 410."""
        self.limits = limits
        self._send_ahead = send_ahead
        self._pending: Future[Arrived[dict[str, Any]]] | None = None
        self._token: str | None = None
        self._done = False
        self._reached = 0
        """Objects the list's pages have given since it (re)started."""
        self._best = 0
        """Objects it had reached when its token last expired: a restart must get further."""
        self.restarted = False
        self.held = False
        """No page is sent ahead while held (`release`): the caller is still deciding whether to go on."""

    def __iter__(self) -> ListPager:
        return self

    def __next__(self) -> dict[str, Any]:
        if self._done:
            raise StopIteration
        pending, self._pending = self._pending, None
        try:
            page = self._next_page(pending)
        except Exception:
            self._done = True
            raise
        self._reached += page_objects(page)
        metadata = page.get("metadata")
        token = metadata.get("continue") if isinstance(metadata, dict) else None
        self._token = str(token) if token else None
        self._done = self._token is None
        if not self.held:
            self._ahead()
        return page

    def _next_page(self, pending: Future[Arrived[dict[str, Any]]] | None) -> dict[str, Any]:
        """The next page: the one sent ahead, else requested now; asked again smaller while too large,
        and from the list's start again after an expired token."""
        while True:
            try:
                if pending is not None:
                    arrived, pending = pending, None
                    return arrived.result()()
                return self._fetch(self._token, self.limits.limit)
            except AnswerTooLarge as exc:
                if not self.limits.shrink():
                    raise AnswerTooLarge(f"{exc}, even for a page of one object") from None
                log.info(
                    "a list page was too large (%s); asking for %d objects a page", exc, self.limits.limit
                )
            except Gone:
                if self._token is None or self._reached <= self._best:
                    raise
                self._best, self._reached = self._reached, 0
                self._token = None
                self.restarted = True
                if self._on_restart is not None:
                    self._on_restart()
                log.info("list continue token expired; reading the list again from its first page")

    def close(self) -> None:
        """Give the list up: no page more is read, and a page sent ahead is let go when it arrives."""
        self._done = True
        pending, self._pending = self._pending, None
        if pending is not None:
            give_up(pending)

    def release(self) -> None:
        """End `held`: the next page is sent ahead now, if there is one."""
        self.held = False
        self._ahead()

    def start(self) -> None:
        """Send the first page's request ahead now (where pages are sent ahead), before the caller reaches
        it: a caller opening several lists it will walk in step has their first pages travel together."""
        if self._send_ahead is not None and self._token is None and self._pending is None and not self._done:
            self._pending = self._send_ahead(None, self.limits.limit)

    def _ahead(self) -> None:
        if self._send_ahead is not None and self._token is not None and self._pending is None:
            self._pending = self._send_ahead(self._token, self.limits.limit)


class ListedItems(Iterator[dict[str, Any]]):
    """The items of one paged list, each once: after a restart (an expired token) the list resumes after
    the last item yielded. The API server returns a list in storage-key order (`namespace/name`, or
    `name`), so comparing keys needs only the last one, where a set of every uid would grow with the list
    (an object created or re-created behind that point during the list is left for the next pass, as a
    list started a moment earlier would have missed it).

    Once its first page is read, `total` is how many objects the collection held, where the server said
    (a pass that walks several lists in step weighs its plan on their sizes: pipeline/listing.py)."""

    def __init__(self, pager: ListPager) -> None:
        self.total: int | None = None
        self.read = False
        """The first page was read."""
        self._pager = pager
        self._chunks: Iterator[list[dict[str, Any]]] = self._walk(pager)
        self._items: Iterator[dict[str, Any]] = chain.from_iterable(self._chunks)

    def __iter__(self) -> ListedItems:
        return self

    def __next__(self) -> dict[str, Any]:
        return next(self._items)

    def size(self) -> int | None:
        """Read the first page now, sending none ahead of it, and give `total` (None: the server did not
        say): for a caller that decides from the list's size whether it is worth reading on (`go_on`) or
        dropping, which then costs that one page. Before iterating."""
        if not self.read:
            self._pager.held = True
            first = next(self._chunks, None)
            if first is not None:
                self._chunks = chain([first], self._chunks)
                self._items = chain.from_iterable(self._chunks)
        return self.total

    def close(self) -> None:
        """Give the list up: it yields nothing more, not even a page already read (`ListPager.close`)."""
        self._pager.close()
        self._chunks = iter(())
        self._items = iter(())

    def go_on(self) -> None:
        """After `size`: the list is read on, its next page sent ahead now where it reads ahead."""
        self._pager.release()

    def start(self) -> None:
        """Before the first item is taken: its page is requested now, on a read-ahead thread, where the list
        reads ahead (`ListPager.start`) and the server has accepted the credentials once (before that, the
        page is requested when reached: the first contact goes alone). A list its caller may not read costs
        that page all the same."""
        if not self.read:
            self._pager.start()

    def chunks(self) -> Iterator[list[dict[str, Any]]]:
        """The same items, a decoded page at a time (an object at a time where a page's items are decoded
        as they are reached: kube/pages.py), for a reader with per-page work to share; not to be mixed with
        iterating the items."""
        return self._chunks

    def _walk(self, pager: ListPager) -> Iterator[list[dict[str, Any]]]:
        last: str | None = None  # the key of the last item yielded, taken only once the list restarted
        previous: Mapping[str, Any] | None = None
        for page in pager:
            if not self.read:
                self.read, self.total = True, object_count(page)
            if pager.restarted and last is None and previous is not None:
                last = storage_key(previous)
            items = page.get("items") or []
            if last is None and isinstance(items, list):
                if items:
                    previous = items[-1]
                    yield items
                continue
            for item in items:  # decoded one by one (kube/pages.py), or past a restart: each key checked
                if last is not None:
                    key = storage_key(item)
                    if key <= last:
                        continue
                    last = key
                previous = item
                yield [item]


def page_objects(page: Mapping[str, Any]) -> int:
    """The objects a decoded page holds (a list, or items decoded as they are reached: kube/pages.py)."""
    items = page.get("items")
    return len(items) if isinstance(items, (list, LazyItems)) else 0


def storage_key(item: Mapping[str, Any]) -> str:
    """The order the API server lists objects in: etcd's key, `namespace/name` (or `name`)."""
    metadata = item.get("metadata") or {}
    namespace = metadata.get("namespace")
    name = str(metadata.get("name", ""))
    return f"{namespace}/{name}" if namespace else name
