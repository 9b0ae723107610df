"""The outcomes of a pass, held packed: the one thing a pass keeps for every workload until it ends.

An outcome names its workload, its configs and its hashes: about 500 bytes of Python objects, so ten thousand
of them would be the largest thing a streamed pass holds (pipeline/streamed_walk.py keeps one namespace of
everything else). They are appended in blocks; a full block is packed (compact JSON, then `zlib` at its
fastest level), about a tenth of the objects' size, and unpacked only while it is read. An outcome is never
replaced in place: the pass assembles its final outcomes once (pipeline/run.py). Names and hashes only, never
content.

What the report counts (outcomes per action, per reason deferred, stalled, scopes) and whether they came in
the report's order are noted as each is appended, so the summary, the exit code and the metrics read
counts, and only the written report unpacks them (each read unpacks all of them).
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any, NamedTuple, overload

from reconcile.policy.decision import Deferral, Skip
from reconcile.policy.outcome import Outcome

BLOCK = 256
"""Outcomes per packed block: big enough to compress well, small enough to unpack for one outcome."""

Packed = tuple[Any, ...]


class OutcomeClass(NamedTuple):
    """What the report counts a outcome by."""

    action: str
    deferral: Deferral | None
    stalled: bool
    scope: bool
    not_effective: bool = False
    skip: Skip | None = None


def class_of(outcome: Outcome) -> OutcomeClass:
    return OutcomeClass(
        outcome.action,
        outcome.deferral,
        outcome.stalled,
        outcome.is_scope,
        outcome.not_effective,
        outcome.skip,
    )


def sort_key(outcome: Outcome) -> tuple[str, str, str]:
    """The report's order of outcomes: by namespace, kind and name."""
    return outcome.namespace, outcome.kind, outcome.name


def pack_outcome(outcome: Outcome) -> Packed:
    deferral = outcome.deferral.value if outcome.deferral is not None else None
    return (
        outcome.kind,
        outcome.namespace,
        outcome.name,
        outcome.action,
        outcome.reason,
        outcome.configs,
        outcome.hash,
        outcome.previous,
        outcome.rollout_status,
        deferral,
        outcome.skip.value if outcome.skip is not None else None,
    )


def unpack_outcome(packed: Sequence[Any]) -> Outcome:
    kind, namespace, name, action, reason, configs, hash_, previous, status, deferral, skip = packed
    return Outcome(
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
        Skip(skip) if skip is not None else None,
    )


class Outcomes(Sequence[Outcome]):
    """A list of outcomes that keeps all but its last block packed."""

    def __init__(self, outcomes: Iterable[Outcome] = ()) -> None:
        self._blocks: list[bytes] = []
        self._open: list[Outcome] = []
        self._cached: tuple[int, list[Outcome]] | None = None
        self._classes: dict[OutcomeClass, int] = {}
        self._last: tuple[str, str, str] | None = None
        self.in_order = True
        """Every outcome was appended in the report's order (`sort_key`)."""
        self.extend(outcomes)

    @property
    def classes(self) -> Mapping[OutcomeClass, int]:
        """How many outcomes of each class (`OutcomeClass`) were appended."""
        return self._classes

    def __len__(self) -> int:
        return len(self._blocks) * BLOCK + len(self._open)

    def append(self, outcome: Outcome) -> None:
        outcome_class = class_of(outcome)
        self._classes[outcome_class] = self._classes.get(outcome_class, 0) + 1
        key = sort_key(outcome)
        if self._last is not None and key < self._last:
            self.in_order = False
        self._last = key
        self._open.append(outcome)
        if len(self._open) == BLOCK:
            self._blocks.append(_pack(self._open))
            self._open = []

    def sorted(self) -> Iterator[Outcome]:
        """The outcomes by namespace, kind and name, each unpacked as it is read, so they are never all
        unpacked at once. A pass appends them in that order but for its scope outcomes and a rotated start:
        outcomes already in order are read as they are, others through a sorted index of their keys."""
        if self.in_order:
            return iter(self)
        keys = sorted((sort_key(o), i) for i, o in enumerate(self))
        return (self[i] for _, i in keys)

    def extend(self, outcomes: Iterable[Outcome]) -> None:
        for outcome in outcomes:
            self.append(outcome)

    @overload
    def __getitem__(self, index: int) -> Outcome: ...
    @overload
    def __getitem__(self, index: slice) -> list[Outcome]: ...
    def __getitem__(self, index: int | slice) -> Outcome | list[Outcome]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        block, at = self._locate(index)
        return self._block(block)[at]

    def __iter__(self) -> Iterator[Outcome]:
        for block in range(len(self._blocks)):
            yield from self._block(block)
        yield from list(self._open)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (Outcomes, list)):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Outcomes({list(self)!r})"

    def _locate(self, index: int) -> tuple[int, int]:
        size = len(self)
        if index < 0:
            index += size
        if not 0 <= index < size:
            raise IndexError("outcome index out of range")
        return divmod(index, BLOCK)

    def _block(self, block: int) -> list[Outcome]:
        """The outcomes of a block: the open one as it is, a packed one unpacked (the last one read is kept
        unpacked, as reads and rewrites come in runs)."""
        if block == len(self._blocks):
            return self._open
        if self._cached is None or self._cached[0] != block:
            self._cached = (
                block,
                [unpack_outcome(p) for p in json.loads(zlib.decompress(self._blocks[block]))],
            )
        return self._cached[1]


def _pack(outcomes: Sequence[Outcome]) -> bytes:
    return zlib.compress(json.dumps([pack_outcome(r) for r in outcomes], separators=(",", ":")).encode(), 1)
