"""How many objects each page of a list asks for: why a metadata-only list read to its end asks for more.

Every page costs a request: the server's work to start a list from its `continue` token, the pass's work to
send it and take its response (TLS, gzip, the HTTP stack, the budget's gate), and, at a rate limit, a token
of the budget. A metadata-only list of small objects (a ConfigMap's or Secret's metadata is 300-600 bytes of
JSON, its one managedFields entry included) pays that per 150-300 KB at client-go's 500 objects a page,
and a whole-cluster steady pass is nearly all such pages (docs/engineering/performance-history.md, "Pages that
grow"). So where the user left `pageSize` unset, a list that reads ahead (one its caller reads to the end:
kube/ahead.py) asks for its next page by the bytes of the page before: as many objects as fit both in
`PAGE_BYTES` of response and in `KEPT_BYTES` of what the pass keeps of them (the page without the
managedFields and last-applied annotation it drops: kube/pages.py), at least `PAGE_SIZE`, at most
`GROWN_PAGE_SIZE`, in whole multiples of `PAGE_SIZE`. The multiples make each grown page the union of
consecutive pages of a list paged at `PAGE_SIZE`, so the list's last page is never a smaller remainder than
the fixed-size list's: the API server gzips only responses over 128 KiB, and a remainder just under that would
travel uncompressed. The two bounds are the two costs of a page: its response text is alive while it is
decoded, and what it keeps is alive while the pass walks it and the next page is read ahead. So a real
server's ConfigMaps and Secrets (~580 bytes of response each, half of it one managedFields entry) grow to
`GROWN_PAGE_SIZE`, while objects whose kept metadata is over 512 bytes (the benchmark simulator's workloads,
~600 bytes of annotations and labels) stay at `PAGE_SIZE`, and so do objects that carry a pod template's
managedFields or a last-applied annotation (several KiB each): what a page holds in memory stays bounded by
bytes, not by objects.

A `pageSize` the user gives is every page's size: a page never asks for more or fewer objects than that.
The API server serves each `continue` request with its own `limit` (the token holds where the list is,
not how it was paged).
"""

from __future__ import annotations

PAGE_SIZE = 500
"""Objects a list page asks for where `pageSize` is unset: client-go's pager's default."""

GROWN_PAGE_SIZE = 1000
"""Most objects a page of a growing list asks for."""

PAGE_BYTES = 1024 * 1024
"""Response bytes (before gzip) a page of a growing list is sized for, from the page before it: 1,000
objects of up to 1 KiB each. kube-apiserver's metadata-only ConfigMaps and Secrets, created with a few keys,
are 555-593 bytes each with their one managedFields entry (measured on the test control plane:
docs/engineering/performance-history.md, "Pages that grow on a real server"), so a bound of 512 KiB would
keep every page of a
real server at 500; objects with a last-applied annotation or a pod template's managedFields (several KiB)
stay there."""

KEPT_BYTES = 512 * 1024
"""Bytes of text a page of a growing list keeps once its items are slimmed, from the page before it:
1,000 objects of up to 512 bytes each. Bounded apart from `PAGE_BYTES` because the kept items are what
stays alive: a 1 MiB bound alone grows the simulator's workload pages (~600 bytes each, nothing to drop) to
1,000 objects and the 10x steady pass's peak RSS by 4 MiB (52.7-53.1 against 48.6-49.3 MiB in `make bench`:
docs/engineering/performance-history.md, "Memory")."""


class PageLimits:
    """The `limit` of each next page of one list: fixed, or growing by the bytes of the page before; and,
    whatever the list, never so many objects that a page would pass `page_bytes` of answer (the pass's
    memory budget: kube/memory.py), nor more than half as many again after an answer too large."""

    __slots__ = ("_base", "_most", "_page_bytes", "limit")

    def __init__(self, base: int, most: int | None = None, *, page_bytes: int | None = None) -> None:
        self._base = base
        self._most = max(base, most if most is not None else base)
        self._page_bytes = page_bytes
        self.limit = base
        """What the next page asks for."""

    @property
    def grows(self) -> bool:
        return self._most > self._base

    def note(self, objects: int, size: int, kept: int | None = None) -> float:
        """After a page of `objects` objects in `size` bytes of which the pass keeps `kept` (all of them
        when not given): the next page's limit is set; returns what the next page is expected to weigh in
        bytes, relative to this one (1.0 for a fixed size). A server that sends more objects than a page
        asked for is asked for fewer in the same proportion."""
        before = self.limit
        kept = size if kept is None else kept
        if objects <= 0 or size <= 0:
            return 1.0
        over = max(1.0, objects / before)  # how many times more than asked (kube-apiserver: exactly as asked)
        if self.grows:
            fits = PAGE_BYTES * objects // size
            if kept > 0:
                fits = min(fits, KEPT_BYTES * objects // kept)
            self.limit = min(self._most, max(self._base, fits // self._base * self._base))
            if over > 1.0:
                self.limit = max(1, min(self.limit, int(fits / over)))
        if self._page_bytes is not None and size * self.limit * over > self._page_bytes * objects:
            self.limit = max(1, int(self._page_bytes * objects / size / over))
            self._base = self._most = min(self._base, self.limit)
        return self.limit / before

    def shrink(self) -> bool:
        """After an answer too large for the budget: the next page asks for half as many objects, and the
        list never grows past that again. False when a page of one object was too large already."""
        if self.limit <= 1:
            return False
        self.limit = max(1, self.limit // 2)
        self._base = self._most = min(self._base, self.limit)
        return True


def first_page_size(page_size: int | None) -> int:
    """Objects a list page asks for: the `pageSize` setting, or where unset the first page of a growing
    list (`PAGE_SIZE`)."""
    return page_size if page_size is not None else PAGE_SIZE
