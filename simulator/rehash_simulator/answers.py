"""What the simulator's answers look like where the API leaves room: paging, counts, framing, order.

Why: a client's memory depends on details of the server's answers that no API contract fixes (how many
objects a page holds for a given `limit`, whether a list says how many objects remain, how a gzipped body is
framed, how long a continue token lives, the order of a list), and two simulators that each pass the
official client's and kubectl's checks can differ on every one of them. The benchmark varies them here
(`python -m rehash_simulator --answers FILE`, re-read on SIGHUP; `benchmarks/answers.py`) to find which of
them a pass's memory depends on. The defaults are what the simulator has always answered, which is what
kube-apiserver answers where the test control plane was checked (docs/conformance.md).

Each setting, by its key in the JSON file:

- `remainingItemCount`: `unselected` (kube-apiserver: on a page with a continue token of a list without a
  label or field selector), `always`, or `never`.
- `limit`: `exact` (a page holds `limit` objects, the last one fewer), or `ignored` (every list is one
  page: the whole collection, no continue token).
- `pageScale`: a page holds `limit` times this many objects (at least one): under 1 the server answers
  short pages, as a server filtering a page after reading it from storage can; above 1, more than asked.
- `pageCap`: at most this many objects a page whatever the `limit` (0: no cap).
- `pageFloor`: at least this many objects a page whatever the `limit` (0: none), as a server with a page
  size of its own that takes `limit` only as a wish above it.
- `gzip`: `length` (a body over `gzipThreshold` bytes is gzipped whole and sent with Content-Length),
  `chunked` (gzipped the same, sent with chunked transfer encoding in `chunkBytes` pieces and no
  Content-Length, as kube-apiserver's streaming gzip writer is framed), or `off` (never gzipped).
- `gzipThreshold`, `gzipLevel`, `chunkBytes`: as above (kube-apiserver: 128 KiB, level 1).
- `continueTtl`: seconds a list's continue token stays valid (kube-apiserver: until etcd compacts the
  revision, every 5 minutes by default; unset: the store's own, 300 s); past it the next page answers 410
  Expired.
- `order`: `key` (etcd's key order, `namespace/name`) or `scrambled` (a fixed order that is not).
"""

from __future__ import annotations

import gzip
import json
import math
import threading
from collections.abc import Mapping
from dataclasses import dataclass, replace
from enum import StrEnum
from pathlib import Path
from typing import Any

GZIP_THRESHOLD = 128 * 1024
"""kube-apiserver's defaultGzipThresholdBytes."""
GZIP_LEVEL = 1
"""kube-apiserver's defaultGzipContentEncodingLevel."""


class Count(StrEnum):
    UNSELECTED = "unselected"
    ALWAYS = "always"
    NEVER = "never"


class Limit(StrEnum):
    EXACT = "exact"
    IGNORED = "ignored"


class Framing(StrEnum):
    LENGTH = "length"
    CHUNKED = "chunked"
    OFF = "off"


class Order(StrEnum):
    KEY = "key"
    SCRAMBLED = "scrambled"


# JSON key -> field name.
KEYS = {
    "remainingItemCount": "remaining_item_count",
    "limit": "limit",
    "pageScale": "page_scale",
    "pageCap": "page_cap",
    "pageFloor": "page_floor",
    "gzip": "gzip",
    "gzipThreshold": "gzip_threshold",
    "gzipLevel": "gzip_level",
    "chunkBytes": "chunk_bytes",
    "continueTtl": "continue_ttl",
    "order": "order",
}
CONVERT: dict[str, Any] = {
    "remaining_item_count": Count,
    "limit": Limit,
    "page_scale": float,
    "page_cap": int,
    "page_floor": int,
    "gzip": Framing,
    "gzip_threshold": int,
    "gzip_level": int,
    "chunk_bytes": int,
    "continue_ttl": float,
    "order": Order,
}


@dataclass(frozen=True)
class Answers:
    """One choice of every setting (see the module docstring)."""

    remaining_item_count: Count = Count.UNSELECTED
    limit: Limit = Limit.EXACT
    page_scale: float = 1.0
    page_cap: int = 0
    page_floor: int = 0
    gzip: Framing = Framing.LENGTH
    gzip_threshold: int = GZIP_THRESHOLD
    gzip_level: int = GZIP_LEVEL
    chunk_bytes: int = 8192
    continue_ttl: float | None = None
    """None: the store's own (300 s unless a test set it)."""
    order: Order = Order.KEY

    @classmethod
    def from_mapping(cls, doc: Mapping[str, Any]) -> Answers:
        """The settings a JSON document names, the rest at their defaults; ValueError for an unknown key
        or value."""
        unknown = sorted(set(doc) - set(KEYS))
        if unknown:
            raise ValueError(f"unknown answer settings: {', '.join(unknown)} (known: {', '.join(KEYS)})")
        values = {KEYS[key]: CONVERT[KEYS[key]](value) for key, value in doc.items()}
        answers = replace(cls(), **values)
        if (
            answers.page_scale <= 0
            or min(answers.page_cap, answers.page_floor) < 0
            or answers.chunk_bytes <= 0
        ):
            raise ValueError("pageScale must be > 0, pageCap and pageFloor >= 0, and chunkBytes > 0")
        return answers

    def as_mapping(self) -> dict[str, Any]:
        return {key: getattr(self, name) for key, name in KEYS.items()}

    def counted(self, selected: bool) -> bool:
        """Whether a page with a continue token says how many objects remain."""
        if self.remaining_item_count is Count.UNSELECTED:
            return not selected
        return self.remaining_item_count is Count.ALWAYS

    def page_objects(self, limit: int) -> int:
        """Objects a page holds for a request's `limit` (0: the rest of the list)."""
        if self.limit is Limit.IGNORED:
            return 0
        count = max(1, math.floor(limit * self.page_scale), self.page_floor) if limit else 0
        if self.page_cap:
            count = min(count, self.page_cap) if count else self.page_cap
        return count

    def frame(self, payload: bytes, accepts_gzip: bool) -> tuple[bytes, dict[str, str]]:
        """The body as sent, and the headers that frame it (Content-Length, or chunked transfer
        encoding; Content-Encoding when gzipped)."""
        if self.gzip is Framing.OFF or not accepts_gzip or len(payload) <= self.gzip_threshold:
            return payload, {"Content-Length": str(len(payload))}
        body = gzip.compress(payload, compresslevel=self.gzip_level)
        coding = {"Content-Encoding": "gzip", "Vary": "Accept-Encoding"}
        if self.gzip is Framing.LENGTH:
            return body, {"Content-Length": str(len(body)), **coding}
        step = self.chunk_bytes
        chunks = (body[at : at + step] for at in range(0, len(body), step))
        wire = b"".join(b"%x\r\n%s\r\n" % (len(chunk), chunk) for chunk in chunks) + b"0\r\n\r\n"
        return wire, {"Transfer-Encoding": "chunked", **coding}


class AnswerSetting:
    """The answers in force, replaced whole (thread-safe); optionally read from a JSON file."""

    def __init__(self, answers: Answers | None = None, path: Path | None = None) -> None:
        self._lock = threading.Lock()
        self._answers = answers or Answers()
        self.path = path
        if path is not None:
            self.reload()

    @property
    def current(self) -> Answers:
        with self._lock:
            return self._answers

    def set(self, answers: Answers) -> None:
        with self._lock:
            self._answers = answers

    def reload(self) -> Answers:
        """Read the file again (an empty or missing file: the defaults)."""
        text = self.path.read_text() if self.path is not None and self.path.exists() else ""
        answers = Answers.from_mapping(json.loads(text) if text.strip() else {})
        self.set(answers)
        return answers
