"""A decision and what it is made of: the action, why a workload was deferred, the observed state of its
sources; and the ways a decision is left to a later pass.

The values every stage hands on: the decision table (policy/table.py) makes them, the writes carry them out,
the outcomes (policy/outcome.py) report them.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace
from enum import StrEnum
from typing import Any

from reconcile.model.bookkeeping import SourceRecord, sorted_records
from reconcile.model.hashing import SourceToken, combine, key_fingerprint
from reconcile.model.pods import Eviction
from reconcile.model.rollouts import RolloutCheck
from reconcile.model.workload import Listed, Target
from reconcile.values import value


class Action(StrEnum):
    ROLLOUT = "rollout"
    ADOPT = "adopt"
    IN_SYNC = "in-sync"
    REFRESH = "refresh"
    NOTIFY = "notify"
    DEFERRED = "deferred"
    SKIPPED = "skipped"
    FAILED = "failed"


WRITING_ACTIONS = frozenset({Action.ROLLOUT, Action.ADOPT, Action.REFRESH, Action.NOTIFY})
METADATA_ACTIONS = frozenset({Action.ADOPT, Action.REFRESH, Action.NOTIFY})
"""Writes that record the hash on the workload's metadata only: no pod-template change, no restart."""


class Deferral(StrEnum):
    """Why a workload was left to a later pass: the label of `kube_rehash_deferred{reason}`."""

    BUDGET = "pass budget"
    MAX_ROLLOUTS = "max-rollouts"
    MIN_INTERVAL = "min-interval"
    WINDOW = "window"
    SETTLE = "settle"
    WAVE = "wave"
    DISRUPTION_BUDGET = "disruption budget"
    STOPPED = "stopped"


class Skip(StrEnum):
    """Why a workload was `skipped`: the label of `kube_rehash_skipped{reason}`. The first five are bad
    input its owners can fix (BAD_INPUT); the others are by design."""

    MALFORMED = "malformed annotation"
    MISSING_SOURCE = "missing source"
    UNREADABLE_SOURCE = "unreadable source"
    NO_TEMPLATE = "no pod template"
    CANNOT_EVICT = "cannot evict"
    KEY = "hash key"
    IGNORED = "ignored"
    OWNED = "owned"
    SUSPENDED = "suspended"
    NOT_MOUNTED = "not mounted"
    GONE = "gone"


BAD_INPUT = frozenset(
    {Skip.MALFORMED, Skip.MISSING_SOURCE, Skip.UNREADABLE_SOURCE, Skip.NO_TEMPLATE, Skip.CANNOT_EVICT}
)
"""Skips that stay until someone fixes the workload or its sources (the alert's)."""


def skip(reason: str, why: Skip, **fields: Any) -> Decision:
    """A workload left alone in this pass, saying why; nothing is written."""
    return Decision(Action.SKIPPED, reason, skip=why, **fields)


@value
class Observed:
    """The current state of a workload's sources, as far as this pass established it."""

    config_hash: str
    records: tuple[SourceRecord, ...]
    key_fingerprint: str = ""
    missing_required: tuple[str, ...] = ()
    complete: bool = True
    """The records cover every reference (no ignored source, no search mode), so a later pass may
    trust them while the workload's generation is unchanged."""


def observed_from(
    records: Iterable[SourceRecord],
    hash_key: bytes | None,
    *,
    missing: tuple[str, ...] = (),
    complete: bool = True,
) -> Observed:
    """The observed state of these records: sorted, with their combined hash under the pass's key."""
    ordered = sorted_records(records)
    config_hash = combine((SourceToken(r.kind, r.name, r.token) for r in ordered), hash_key)
    return Observed(config_hash, ordered, key_fingerprint(hash_key), missing, complete)


def stamp_generation(target: Target, observed: Observed) -> int | None:
    """The generation to record with a write that leaves the spec as it is (None: nothing to trust)."""
    return target.generation if observed.complete else None


def generation_after(target: Listed, generation: int | None, *, rollout: bool) -> int | None:
    """The generation the server holds after our patch: a rollout changes the pod template, part of the
    spec, so the server bumps it once (not for a kind whose rolling annotations live in metadata); a kind
    whose generation follows its annotations (`Kind.annotations_bump_generation`) is bumped by any write."""
    if generation is None:
        return None
    in_spec = rollout and target.kind.rollout_in_spec
    # Every write of ours changes the workload's annotations: a Deployment's generation moves with them.
    return generation + 1 if in_spec or target.kind.annotations_bump_generation else generation


@value
class Unreadable:
    """A source that could not be read by name (the server's error, a permission, content that does not
    decode): the pass reports it in a `failed` row of its own, once, and skips the workloads using it."""

    kind: str
    """`configmap` or `secret`."""
    namespace: str
    name: str
    error: str

    @property
    def label(self) -> str:
        return f"{self.kind}/{self.name}"


def skip_for_unreadable(source: Unreadable) -> Decision:
    """A workload one of whose sources cannot be read: nothing is known of its content, so nothing is
    written; the source's own row fails the pass."""
    reason = f"{source.label} cannot be read ({source.error}); nothing written"
    return skip(reason, Skip.UNREADABLE_SOURCE, configs=(source.label,), unreadable=source)


@value
class Decision:
    action: Action
    reason: str
    config_hash: str | None = None
    previous: str | None = None
    configs: tuple[str, ...] = ()
    changed: tuple[str, ...] = ()
    observed: Observed | None = None
    rollout: RolloutCheck | None = None
    """Our recorded, unfinished rollout of this workload and its status as read in this pass."""
    deferral: Deferral | None = None
    """Why it is `deferred` (set exactly when the action is DEFERRED)."""
    eviction: Eviction | None = None
    """Restart by eviction (`policy.evict`): the pods to evict, or none left (record the hash)."""
    unreadable: Unreadable | None = None
    """The source whose read failed (the decision is `skipped`)."""
    skip: Skip | None = None
    """Why it is `skipped` (set exactly when the action is SKIPPED)."""


def bounded_join(items: Sequence[str], limit: int = 10) -> str:
    """`a, b, c` with at most `limit` items, then `and N more`, so a reason stays one readable line."""
    shown = ", ".join(items[:limit])
    return f"{shown} and {len(items) - limit} more" if len(items) > limit else shown


def join(*parts: str) -> str:
    return "; ".join(p for p in parts if p)


def defer(decision: Decision, why: Deferral, reason: str) -> Decision:
    """`decision` left to a later pass, keeping what it found (hashes, configs, changed sources)."""
    return replace(decision, action=Action.DEFERRED, reason=reason, deferral=why)


def defer_for_budget(detail: str = "not reached before the pass's time budget ran out") -> Decision:
    """The decision of a workload the pass's time budget did not reach (or whose write it cut)."""
    return Decision(
        Action.DEFERRED, f"{Deferral.BUDGET}: {detail}; a later pass takes it", deferral=Deferral.BUDGET
    )


def defer_unwritten(decision: Decision, *, stopped: bool) -> Decision:
    """The decision of a write the pass could no longer send (its budget spent, or a SIGTERM): deferred,
    saying why, with what it had found."""
    if stopped:
        return defer_for_stop(decision)
    return replace(
        defer_for_budget(f"not written before the time budget ran out ({decision.reason})"),
        config_hash=decision.config_hash,
        previous=decision.previous,
        configs=decision.configs,
    )


def defer_for_stop(decision: Decision | None = None) -> Decision:
    """The decision of a workload a SIGTERM kept the pass from reaching, or from writing."""
    if decision is None:
        return Decision(
            Action.DEFERRED, "pass stopped (SIGTERM) before reaching it", deferral=Deferral.STOPPED
        )
    return defer(decision, Deferral.STOPPED, f"pass stopped (SIGTERM) before writing: {decision.reason}")
