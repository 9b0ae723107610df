"""What a pass knows of the ConfigMaps and Secrets of one namespace: pure data, no I/O.

The read stage fills these values (`fetch.SourceReader`); the decide stage reads them and nothing else,
so every decision can be tested as a table. Only identities, a few annotation flags and sealed content
digests are kept, never Secret data.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, NamedTuple

from reconcile.errors import RehashError
from reconcile.model.csi import KIND as MOUNTS_KIND
from reconcile.model.csi import Mounts
from reconcile.model.references import BOOLEANS, NONE, DiscoverySettings, quote_text
from reconcile.values import value

Selection = frozenset[str] | None  # the keys a reference uses; None: the whole object


class SourceKey(NamedTuple):
    """One ConfigMap or Secret of a namespace; `name` "*" stands for every object of the kind (a list)."""

    kind: str
    name: str

    @property
    def label(self) -> str:
        return f"{self.kind}/{self.name}"

    @classmethod
    def whole(cls, kind: str) -> SourceKey:
        return cls(kind, "*")

    @classmethod
    def mounts(cls) -> SourceKey:
        """The key a failed read of the namespace's CSI mounts is kept under."""
        return cls(MOUNTS_KIND, "*")

    @classmethod
    def selection(cls, kind: str, selector: str) -> SourceKey:
        """The key a failed list of the sources `selector` selects is kept under ("?" is in no name)."""
        return cls(kind, f"?{selector}")


@value(slots=True)
class SourceMeta:
    """Identity of one existing source and the few annotation flags the pass reads from it."""

    kind: str
    name: str
    uid: str
    resource_version: str
    flags: frozenset[str] = frozenset()
    malformed: tuple[str, ...] = ()
    """Flag annotations whose value is neither "true" nor "false", described with their value (bad input
    fails closed: the workloads that would read them are skipped, naming them)."""

    @property
    def label(self) -> str:
        return f"{self.kind}/{self.name}"

    def annotations(self) -> dict[str, str]:
        """The flags as an annotations map, for refs.source_ignored / source_matches."""
        return dict.fromkeys(self.flags, "true")

    def problems(self, keys: Iterable[str]) -> list[str]:
        """The malformed flags among `keys`, as `configmap/app: kube-rehash.io/ignore: "yes" is not ...`."""
        wanted = set(keys)
        return [f"{self.label}: {m}" for m in self.malformed if m.partition(":")[0] in wanted]


def flag_keys(settings: DiscoverySettings) -> frozenset[str]:
    """Annotation keys whose value matters on a source (ignore and match, own and compat)."""
    keys = {f"{settings.prefix}/ignore", f"{settings.prefix}/match"}
    if "reloader" in settings.compat:
        keys |= {"reloader.stakater.com/ignore", "reloader.stakater.com/match"}
    return frozenset(keys)


def read_meta(kind: str, obj: Mapping[str, Any], interesting: frozenset[str]) -> SourceMeta | None:
    metadata = obj.get("metadata")
    if not isinstance(metadata, Mapping) or not isinstance(metadata.get("name"), str):
        return None
    annotations = metadata.get("annotations")
    flags: frozenset[str] = NONE
    malformed: tuple[str, ...] = ()
    if isinstance(annotations, Mapping):
        flags = frozenset(k for k in interesting if annotations.get(k) == "true") or NONE
        malformed = tuple(
            f'{k}: {quote_text(str(annotations[k]))} is not "true" or "false"'
            for k in sorted(interesting)
            if k in annotations and annotations[k] not in BOOLEANS
        )
    return SourceMeta(
        kind,
        metadata["name"],
        str(metadata.get("uid", "")),
        str(metadata.get("resourceVersion", "")),
        flags,
        malformed,
    )


@value(slots=True)
class Hashed:
    """A source's sealed content token and the identity of the exact version that was hashed."""

    token: str
    uid: str
    resource_version: str
    changed_at: datetime | None = None
    """When that version's content last changed, from its managedFields (`freshness`); None: unknown."""


@dataclass
class NamespaceSources:
    """What the pass knows of one namespace's sources: found (with identity), confirmed absent, unreadable
    (a name, or `SourceKey.whole(kind)` for a failed list), and content digests. A key in none of
    these was not reached (the budget cut the reads short: `cut`)."""

    namespace: str
    found: dict[SourceKey, SourceMeta] = field(default_factory=dict)
    listed: set[str] = field(default_factory=set)
    """Kinds listed completely: every object of the kind in the namespace is in `found`."""
    searched: set[str] = field(default_factory=set)
    """Kinds whose search-mode matches are known: listed, or not searchable (`fetch: get` Secrets)."""
    selected: dict[tuple[str, str], frozenset[str]] = field(default_factory=dict)
    """(kind, label selector) -> the names of the sources it selects (listed: each also in `found`)."""
    mounts: Mounts | None = None
    """The namespace's Secrets Store CSI mounts, once read for a workload that uses the driver."""
    absent: set[SourceKey] = field(default_factory=set)
    broken: dict[SourceKey, RehashError] = field(default_factory=dict)
    tokens: dict[tuple[SourceKey, Selection], Hashed] = field(default_factory=dict)
    cut: bool = False

    def hashed_by_label(self) -> dict[str, Hashed]:
        """The hashed version of each source by its label (`secret/db`): its identity and change time are
        the same for every key selection hashed of it."""
        return {key.label: hashed for (key, _keys), hashed in self.tokens.items()}

    def of_kind(self, kind: str) -> Iterable[SourceMeta]:
        return (m for k, m in sorted(self.found.items()) if k.kind == kind)

    def is_absent(self, key: SourceKey) -> bool:
        return key in self.absent or (key.kind in self.listed and key not in self.found)

    def knows(self, key: SourceKey) -> bool:
        """Whether the identity of `key` is established (found or absent) or known to be unreadable."""
        return key in self.found or self.is_absent(key) or self.failure(key) is not None

    def failure(self, key: SourceKey) -> RehashError | None:
        return self.broken.get(key) or (
            self.broken.get(SourceKey.whole(key.kind)) if key not in self.found else None
        )

    def merge(self, other: NamespaceSources) -> None:
        self.found.update(other.found)
        self.listed |= other.listed
        self.searched |= other.searched
        self.selected.update(other.selected)
        self.mounts = other.mounts or self.mounts
        self.absent |= other.absent - other.found.keys()
        self.absent -= other.found.keys()
        self.broken.update(other.broken)
        self.tokens.update(other.tokens)
        self.cut |= other.cut
