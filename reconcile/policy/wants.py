"""The reads a workload still needs before it can be decided: one field per kind of read.

`policy.answer` answers each workload of a batch with a decision or a `Wants`; the planner merges the wants
of the batch (`merge`) and hands them to the read stage in one call per round. A new input to a decision is
one field here and one reader method there.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import Enum

from reconcile.model.freshness import Change
from reconcile.model.sources import Selection, SourceKey
from reconcile.model.workload import Listed, Target


class Input(Enum):
    """The kinds of input a decision may wait for, each with what its workload is told when the pass's
    budget ended before it (`policy.decision.defer_for_budget`)."""

    SPEC = "not reached before the pass's time budget ran out"
    SOURCES = "its ConfigMaps/Secrets were not all read before the time budget ran out"
    CONTENT = "the content of its changed sources was not read before the budget ran out"
    ORIGIN = "when its current pod template started was not read before the budget ran out"
    PODS = "its pods were not listed before the budget ran out"


@dataclass(frozen=True)
class Wants:
    """What one workload (or, merged, a batch) still needs read."""

    views: tuple[Listed, ...] = ()
    """Workloads to read whole (from a full list read earlier, a namespace list or a GET)."""
    content: Mapping[SourceKey, frozenset[Selection]] = field(default_factory=dict)
    """Sources whose content to hash, for each key selection their references use."""
    metadata: Mapping[str, frozenset[str]] = field(default_factory=dict)
    """Source kind -> names whose identity to learn."""
    search: frozenset[str] = frozenset()
    """Source kinds to list whole for search mode."""
    selections: frozenset[tuple[str, str]] = frozenset()
    """(kind, label selector) lists of label-selected sources."""
    mounts: bool = False
    """The namespace's Secrets Store CSI mounts."""
    origins: tuple[tuple[Target, Mapping[str, Change]], ...] = ()
    """Workloads whose current pod template's object to read, with when each changed source changed."""
    pods: tuple[Target, ...] = ()
    """Workloads restarted by eviction whose pods to list."""

    @property
    def waits_for(self) -> Input:
        """The read this workload waits for first: what it is told when the budget ends before it."""
        if self.views:
            return Input.SPEC
        if self.content and not (self.metadata or self.search or self.selections or self.mounts):
            return Input.CONTENT
        if self.content or self.metadata or self.search or self.selections or self.mounts:
            return Input.SOURCES
        if self.origins:
            return Input.ORIGIN
        return Input.PODS

    def __bool__(self) -> bool:
        return bool(
            self.views
            or self.content
            or self.metadata
            or self.search
            or self.selections
            or self.mounts
            or self.origins
            or self.pods
        )

    def first(self) -> Wants:
        """What a round reads of these wants: whole objects alone (what they reference is not known
        before they are read, and a source read for them may then be read once, as content, rather
        than as metadata first), else everything."""
        return Wants(views=self.views) if self.views else self


def merge(wants: Iterable[Wants]) -> Wants:
    """The wants of a batch, each source and selection once."""
    views: dict[str, Listed] = {}
    content: dict[SourceKey, set[Selection]] = {}
    metadata: dict[str, set[str]] = {}
    search: set[str] = set()
    selections: set[tuple[str, str]] = set()
    mounts = False
    origins: dict[str, tuple[Target, Mapping[str, Change]]] = {}
    pods: dict[str, Target] = {}
    for want in wants:
        views.update((w.uid, w) for w in want.views)
        for key, keys in want.content.items():
            content.setdefault(key, set()).update(keys)
        for kind, names in want.metadata.items():
            metadata.setdefault(kind, set()).update(names)
        search |= want.search
        selections |= want.selections
        mounts |= want.mounts
        origins.update((t.uid, (t, changes)) for t, changes in want.origins)
        pods.update((t.uid, t) for t in want.pods)
    return Wants(
        tuple(views.values()),
        {key: frozenset(keys) for key, keys in content.items()},
        {kind: frozenset(names) for kind, names in metadata.items()},
        frozenset(search),
        frozenset(selections),
        mounts,
        tuple(origins.values()),
        tuple(pods.values()),
    )
