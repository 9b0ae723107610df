"""The rows of a report, held packed: the one thing a pass keeps for every workload until it ends.

A row names its workload, its configs and its hashes: about 500 bytes of Python objects, so ten thousand
rows would be the largest thing a streamed pass holds (pipeline/streamed.py keeps one namespace of
everything else). Rows are appended in blocks; a full block is packed (compact JSON, then `zlib` at its
fastest level), about a tenth of the objects' size, and unpacked only while it is read. Rows are never
replaced in place: the pass assembles its final rows once (pipeline/run.py `assemble_rows`). Rows hold
names and hashes only, never content.

What the report counts (rows per action, per reason deferred, stalled, scopes) and whether the rows came in
the report's order are noted as each row is appended, so the summary, the exit code and the metrics read
counts, and only the written report unpacks the rows (each read unpacks all of them).
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any, NamedTuple, overload

from reconcile.output.row import Row
from reconcile.policy.decision import Deferral

BLOCK = 256
"""Rows per packed block: big enough to compress well, small enough to unpack for one row."""

Packed = tuple[Any, ...]


class RowClass(NamedTuple):
    """What the report counts a row by."""

    action: str
    deferral: Deferral | None
    stalled: bool
    scope: bool


def class_of(row: Row) -> RowClass:
    return RowClass(row.action, row.deferral, row.stalled, row.is_scope)


def sort_key(row: Row) -> tuple[str, str, str]:
    """The report's order of rows: by namespace, kind and name."""
    return row.namespace, row.kind, row.name


def pack_row(row: Row) -> Packed:
    deferral = row.deferral.value if row.deferral is not None else None
    return (
        row.kind,
        row.namespace,
        row.name,
        row.action,
        row.reason,
        row.configs,
        row.hash,
        row.previous,
        row.rollout_status,
        deferral,
    )


def unpack_row(packed: Sequence[Any]) -> Row:
    kind, namespace, name, action, reason, configs, hash_, previous, status, deferral = packed
    return Row(
        kind,
        namespace,
        name,
        action,
        reason,
        tuple(configs),
        hash_,
        previous,
        status,
        Deferral(deferral) if deferral is not None else None,
    )


class Rows(Sequence[Row]):
    """A list of rows that keeps all but its last block packed."""

    def __init__(self, rows: Iterable[Row] = ()) -> None:
        self._blocks: list[bytes] = []
        self._open: list[Row] = []
        self._cached: tuple[int, list[Row]] | None = None
        self._classes: dict[RowClass, int] = {}
        self._last: tuple[str, str, str] | None = None
        self.in_order = True
        """Every row was appended in the report's order (`sort_key`)."""
        self.extend(rows)

    @property
    def classes(self) -> Mapping[RowClass, int]:
        """How many rows of each class (`RowClass`) were appended."""
        return self._classes

    def __len__(self) -> int:
        return len(self._blocks) * BLOCK + len(self._open)

    def append(self, row: Row) -> None:
        row_class = class_of(row)
        self._classes[row_class] = self._classes.get(row_class, 0) + 1
        key = sort_key(row)
        if self._last is not None and key < self._last:
            self.in_order = False
        self._last = key
        self._open.append(row)
        if len(self._open) == BLOCK:
            self._blocks.append(_pack(self._open))
            self._open = []

    def extend(self, rows: Iterable[Row]) -> None:
        for row in rows:
            self.append(row)

    @overload
    def __getitem__(self, index: int) -> Row: ...
    @overload
    def __getitem__(self, index: slice) -> list[Row]: ...
    def __getitem__(self, index: int | slice) -> Row | list[Row]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        block, at = self._locate(index)
        return self._block(block)[at]

    def __iter__(self) -> Iterator[Row]:
        for block in range(len(self._blocks)):
            yield from self._block(block)
        yield from list(self._open)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (Rows, list)):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Rows({list(self)!r})"

    def _locate(self, index: int) -> tuple[int, int]:
        size = len(self)
        if index < 0:
            index += size
        if not 0 <= index < size:
            raise IndexError("row index out of range")
        return divmod(index, BLOCK)

    def _block(self, block: int) -> list[Row]:
        """The rows of a block: the open one as it is, a packed one unpacked (the last one read is kept
        unpacked, as reads and rewrites come in runs)."""
        if block == len(self._blocks):
            return self._open
        if self._cached is None or self._cached[0] != block:
            self._cached = (block, [unpack_row(p) for p in json.loads(zlib.decompress(self._blocks[block]))])
        return self._cached[1]


def _pack(rows: Sequence[Row]) -> bytes:
    return zlib.compress(json.dumps([pack_row(r) for r in rows], separators=(",", ":")).encode(), 1)
