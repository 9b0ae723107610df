"""Keys never restart anything: how a stored hash made under another hash key than the pass's is told
apart from a content change, and how that is said. A stored hash names its key by a fingerprint (in the
`sources` records, never the key); without records, only keyed (`v1k:`) and unkeyed (`v1:`) differ.
Pure; the decision table (`decision.decide_key_change`) applies it."""

from __future__ import annotations

from reconcile.model.bookkeeping import Bookkeeping, SourceRecord
from reconcile.model.hashing import HASH_VERSION

UNRECORDED = "?"
"""The fingerprint of a keyed stored hash whose records do not name its key."""


def key_change(book: Bookkeeping, stored: str, current: str) -> tuple[str, str] | None:
    """(stored, current) key fingerprints when the stored hash was made under another hash key than this
    pass's (`""`: unkeyed; `?`: a keyed hash whose key the records do not name); None: the same key."""
    if book.records is not None:
        if book.key_fingerprint == current:
            return None
        return book.key_fingerprint, current
    stored_keyed = stored.startswith(f"{HASH_VERSION}k:")
    if stored_keyed == bool(current):
        return None  # no records to tell keys apart: a differing hash is a content change
    return (UNRECORDED if stored_keyed else ""), current


def describe_key(fingerprint: str) -> str:
    if not fingerprint:
        return "unkeyed"
    return "an unrecorded key" if fingerprint == UNRECORDED else f"fingerprint {fingerprint}"


def changed_identities(before: tuple[SourceRecord, ...], now: tuple[SourceRecord, ...]) -> tuple[str, ...]:
    """Labels of sources whose identity, version or key selection differs from the records, or that were
    added or dropped: what changed whatever key sealed the tokens."""
    old = {(r.kind, r.name): (r.uid, r.resource_version, r.selection) for r in before}
    new = {(r.kind, r.name): (r.uid, r.resource_version, r.selection) for r in now}
    return tuple(
        f"{k}/{n}" for (k, n) in sorted(old.keys() | new.keys()) if old.get((k, n)) != new.get((k, n))
    )


def unkeyed_reason(old: str) -> str:
    """Why a pass without a key leaves a keyed stored hash alone."""
    return (
        f"stored hash was made with a hash key ({describe_key(old)}) and this pass has none: run with the "
        "cluster's key (--hash-key-secret NAMESPACE/NAME, or hashKeyFile); nothing written"
    )


def rekeyed_reason(old: str, new: str) -> str:
    """Why a stored hash is re-recorded under the pass's key without a rollout."""
    return f"hash key changed ({describe_key(old)} → {describe_key(new)}); sources unchanged: re-recorded"
