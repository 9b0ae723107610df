"""The request log: one entry per HTTP request the simulator answered (or dropped).

Tests and benchmarks assert on it: "zero write requests in a dry run", "exactly one PATCH with this
content type", "the list was paged 20 times", bytes on the wire.
"""

from __future__ import annotations

import json
import re
import threading
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import IO

WRITE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})


@dataclass(frozen=True)
class LogEntry:
    """One request. `status` is 0 when the connection was reset without a response."""

    method: str
    path: str
    query: dict[str, str]
    content_type: str
    accept: str
    status: int
    bytes_in: int
    bytes_out: int
    user: str
    timestamp: float
    body: bytes = field(default=b"", repr=False)

    @property
    def is_write(self) -> bool:
        return self.method in WRITE_METHODS

    def to_json(self) -> str:
        """One JSON line without the request body (bodies may hold Secret data)."""
        doc = asdict(self)
        del doc["body"]
        return json.dumps(doc, separators=(",", ":"), sort_keys=True)


class RequestLog:
    """Thread-safe, append-only until `clear()`."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._entries: list[LogEntry] = []
        self._listeners: list[Callable[[LogEntry], None]] = []

    def append(self, entry: LogEntry) -> None:
        with self._lock:
            self._entries.append(entry)
            for listener in self._listeners:
                listener(entry)

    def subscribe(self, listener: Callable[[LogEntry], None]) -> None:
        """Call `listener` with every later entry, in order (under the log's lock: keep it quick)."""
        with self._lock:
            self._listeners.append(listener)

    def write_to(self, stream: IO[str]) -> None:
        """Mirror every later entry to `stream` as a flushed JSON line (for a separate-process reader)."""

        def write(entry: LogEntry) -> None:
            stream.write(entry.to_json() + "\n")
            stream.flush()

        self.subscribe(write)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()

    def entries(
        self,
        *,
        method: str | None = None,
        status: int | None = None,
        path: str | None = None,
        writes_only: bool = False,
    ) -> list[LogEntry]:
        """Entries in arrival order, filtered by method, status, path regex (searched) or write methods."""
        with self._lock:
            result = list(self._entries)
        if method is not None:
            result = [e for e in result if e.method == method.upper()]
        if status is not None:
            result = [e for e in result if e.status == status]
        if path is not None:
            pattern = re.compile(path)
            result = [e for e in result if pattern.search(e.path)]
        if writes_only:
            result = [e for e in result if e.is_write]
        return result

    def count(
        self,
        *,
        method: str | None = None,
        status: int | None = None,
        path: str | None = None,
        writes_only: bool = False,
    ) -> int:
        return len(self.entries(method=method, status=status, path=path, writes_only=writes_only))

    def writes(self) -> list[LogEntry]:
        return self.entries(writes_only=True)

    def by_method(self) -> dict[str, int]:
        return dict(Counter(e.method for e in self.entries()))

    def by_status(self) -> dict[int, int]:
        return dict(Counter(e.status for e in self.entries()))
