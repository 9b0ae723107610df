"""List paging with `limit` and `continue`, with etcd's consistent-snapshot semantics.

The first page of a paged list keeps the full matching entry list as a snapshot; continue tokens
name the snapshot and an offset, so later pages see the list exactly as it was at the first
request's resourceVersion. Snapshots expire by age or capacity, like etcd compaction, and a token
whose snapshot is gone answers 410 Expired, which clients must handle by relisting.
"""

from __future__ import annotations

import base64
import json
import threading
import time
import uuid
from collections import OrderedDict
from dataclasses import dataclass

from .entry import Entry, dumps
from .errors import ApiError

# kube-apiserver 1.37's wording (apimachinery errors.NewResourceExpired via the etcd3 store), checked by
# tests/chaos_real/test_compaction.py. kube-apiserver also puts an "inconsistent" continue token in the
# Status's metadata; the simulator offers none (a known limit, docs/conformance.md).
EXPIRED_MESSAGE = (
    "The provided continue parameter is too old to display a consistent list result. "
    "You can start a new list without the continue parameter, or use the continue token in this response "
    "to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent "
    "list - objects that were created, modified, or deleted between the time the first chunk was returned "
    "and now may show up in the list."
)


@dataclass(frozen=True)
class ListPage:
    """One page of a list: entries in (namespace, name) order, the list's resourceVersion, paging data."""

    entries: list[Entry]
    resource_version: str
    continue_token: str
    remaining: int | None


@dataclass
class _Snapshot:
    entries: list[Entry]
    rv: int
    created: float


class Snapshots:
    """Open list snapshots; thread-safe."""

    def __init__(self, *, ttl: float = 300.0, capacity: int = 512) -> None:
        self._lock = threading.Lock()
        self._open: OrderedDict[str, _Snapshot] = OrderedDict()
        self.ttl = ttl
        self.capacity = capacity

    def clear(self) -> None:
        with self._lock:
            self._open.clear()

    def first_page(self, entries: list[Entry], rv: int, limit: int, *, counted: bool) -> ListPage:
        if not limit or limit >= len(entries):
            return ListPage(entries, str(rv), "", None)
        snap_id = uuid.uuid4().hex[:16]
        snapshot = _Snapshot(entries, rv, time.monotonic())
        with self._lock:
            self._open[snap_id] = snapshot
            while len(self._open) > self.capacity:
                self._open.popitem(last=False)
        return self._page(snapshot, snap_id, 0, limit, counted=counted)

    def resume(self, token: str, limit: int, *, counted: bool) -> ListPage:
        snap_id, offset = _decode(token)
        with self._lock:
            snapshot = self._open.get(snap_id)
            if snapshot is None or time.monotonic() - snapshot.created > self.ttl:
                self._open.pop(snap_id, None)
                raise ApiError(410, EXPIRED_MESSAGE, reason="Expired")
        return self._page(snapshot, snap_id, offset, limit, counted=counted)

    def _page(self, snapshot: _Snapshot, snap_id: str, offset: int, limit: int, *, counted: bool) -> ListPage:
        total = len(snapshot.entries)
        end = total if not limit else min(offset + limit, total)
        page = snapshot.entries[offset:end]
        if end >= total:
            with self._lock:
                self._open.pop(snap_id, None)
            return ListPage(page, str(snapshot.rv), "", None)
        last = page[-1].obj["metadata"] if page else {}
        token = base64.urlsafe_b64encode(
            dumps(
                {
                    "v": "meta.k8s.io/v1",
                    "rv": snapshot.rv,
                    "start": f"{last.get('namespace', '')}/{last.get('name', '')}\u0000",
                    "snapshot": snap_id,
                    "offset": end,
                }
            )
        ).decode()
        return ListPage(page, str(snapshot.rv), token, total - end if counted else None)


def _decode(token: str) -> tuple[str, int]:
    try:
        data = json.loads(base64.urlsafe_b64decode(token.encode() + b"=" * (-len(token) % 4)))
        if data.get("v") != "meta.k8s.io/v1":
            raise ValueError("incorrect encoded start resourceVersion (version meta.k8s.io/v1)")
        return str(data["snapshot"]), int(data["offset"])
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise ApiError(400, f"invalid continue token: continue key is not valid: {exc}") from None
