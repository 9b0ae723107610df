"""Pages sent ahead: a list's next page requested while the pass works on the page before it.

A pass that walks its lists page by page waits for each page while the server builds it; a page requested as
soon as the page before it named its `continue` token travels while that page is worked on
(docs/engineering/performance-history.md, "Pages sent ahead"). Only the request runs on a read-ahead thread
(TLS, gzip, retries): the page is decoded by the caller when it reaches it, so the threads never both run the
JSON decoder.

What the pages sent ahead hold until they are reached is bounded (`AHEAD_BYTES`, counted from each list's
page before): on thin objects every list walked in step reads ahead, while pages that carry managedFields,
each several MB, go one or two at a time, and the pass's memory stays what it was without reading ahead.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Generic, TypeVar

import requests

AHEAD_THREADS = 8
"""Lists reading ahead at once: a pass walks the workload kinds and both source kinds in step."""

AHEAD_BYTES = 4 * 1024 * 1024
"""Most response bytes the pages sent ahead and not yet reached may hold together."""

T = TypeVar("T")


class ReadAhead:
    """The read-ahead threads of one client, and the bytes their pages hold until reached."""

    def __init__(self, *, threads: int = AHEAD_THREADS, limit: int | None = None) -> None:
        self._threads = threads
        self._limit = AHEAD_BYTES if limit is None else limit
        self._pool: ThreadPoolExecutor | None = None
        self._held = 0
        self._lock = threading.Lock()

    @property
    def held(self) -> int:
        """Bytes held (or expected) by pages sent ahead and not yet reached."""
        with self._lock:
            return self._held

    def send(
        self,
        request: Callable[[], requests.Response],
        expected: int,
        reach: Callable[[requests.Response], T],
    ) -> Future[Arrived[T]] | None:
        """`request` on a read-ahead thread, if the pages sent ahead, with this one counted at `expected`
        bytes (its list's page before), stay within the bound; None when they would not: the caller sends
        the request itself once it reaches the page. The future's result gives `reach(response)` when called
        (the page reached: its bytes no longer count); what `request` raised, the future raises. A page that
        will not be reached is let go with `give_up`."""
        with self._lock:
            if self._held + expected > self._limit:
                return None
            self._held += expected
            if self._pool is None:
                self._pool = ThreadPoolExecutor(self._threads, thread_name_prefix="rehash-ahead")
            pool = self._pool

        def run() -> Arrived[T]:
            try:
                response = request()
            except BaseException:
                self._count(-expected)
                raise
            size = len(response.content)
            self._count(size - expected)
            return Arrived(self, response, size, reach)

        return pool.submit(run)

    def close(self) -> None:
        """Stop the threads; a page sent ahead of a list given up on is not awaited."""
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=False, cancel_futures=True)

    def _count(self, delta: int) -> None:
        with self._lock:
            self._held += delta


class Arrived(Generic[T]):
    """A page sent ahead that has arrived: called, it is reached (decoded by `reach`); `discard` lets it go
    unread. Either way its bytes stop counting against the bound, once."""

    def __init__(
        self,
        ahead: ReadAhead,
        response: requests.Response,
        size: int,
        reach: Callable[[requests.Response], T],
    ) -> None:
        self._ahead = ahead
        self._response: requests.Response | None = response
        self._size = size
        self._reach = reach

    def __call__(self) -> T:
        response = self._let_go()
        if response is None:
            raise RuntimeError("a page sent ahead was reached after it was let go")
        return self._reach(response)

    def discard(self) -> None:
        self._let_go()

    def _let_go(self) -> requests.Response | None:
        response, self._response = self._response, None
        if response is not None:
            self._ahead._count(-self._size)
        return response


def give_up(pending: Future[Arrived[T]]) -> None:
    """A page sent ahead of a list given up on: its bytes stop counting when it arrives (now, if it has)."""
    pending.add_done_callback(_discard)


def _discard(done: Future[Arrived[T]]) -> None:
    if not done.cancelled() and done.exception() is None:
        done.result().discard()
