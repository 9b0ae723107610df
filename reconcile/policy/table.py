"""What to do with each workload: the decision table of the contract, as pure functions.

Inputs are the slim `Target` (what the cluster stored), the `Observed` state of its sources (what the content
is now), the pass's clock and the default restart windows; the output is a `Decision` (policy/decision.py)
with a human reason. No I/O, so every rule is tested as a table without any server.

Restart windows belong here, not in the writer: a rollout held back is a decision (`deferred`, with when
the window opens), made before --max-rollouts counts, and the same for a pass, `explain` and a
re-decision. Nothing is remembered: the next pass inside a window finds the stored hash still differs
and rolls once, however often the content changed meanwhile.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime
from functools import lru_cache

from reconcile.model.annotations import WindowSetting
from reconcile.model.bookkeeping import Bookkeeping, SourceRecord
from reconcile.model.choices import OnChange
from reconcile.model.times import format_time
from reconcile.model.windows import ALWAYS_OPEN, RestartWindows, WindowError, format_deferral, parse_windows
from reconcile.model.workload import Listed, Target, stamp_holds
from reconcile.policy.decision import (
    Action,
    Decision,
    Deferral,
    Observed,
    Skip,
    bounded_join,
    defer,
    join,
    skip,
    stamp_generation,
)
from reconcile.policy.rekey import (
    changed_identities,
    describe_key,
    key_change,
    rekeyed_reason,
    unkeyed_reason,
)


def notifies(target: Listed | Target, notify_default: bool) -> bool:
    """Whether a content change of `target` is notified instead of rolled: its on-change annotation,
    else the config's `onChange`."""
    if target.on_change is not None:
        return target.on_change is OnChange.NOTIFY
    return notify_default


@lru_cache(maxsize=256)
def _parse_cached(value: str) -> RestartWindows | WindowError:
    try:
        return parse_windows(value)
    except WindowError as exc:
        return exc


def window_problem(setting: WindowSetting | None) -> str | None:
    """The `skipped` reason of a malformed restart-window annotation (None when absent or valid)."""
    if setting is None:
        return None
    parsed = _parse_cached(setting.value)
    if isinstance(parsed, WindowError):
        return f"malformed {setting.annotation} {setting.value!r}: {parsed}; nothing written"
    return None


def windows_of(setting: WindowSetting | None, default: RestartWindows) -> RestartWindows:
    """The workload's windows: its annotation (an empty value is always open), else the config's."""
    if setting is None:
        return default
    parsed = _parse_cached(setting.value)
    return ALWAYS_OPEN if isinstance(parsed, WindowError) else parsed


def settle_listed(target: Listed) -> Decision | None:
    """Decisions the list facts alone settle: opted out, operator-owned, a malformed annotation (every
    pass, whatever was recorded before: bad input fails closed), a malformed restart window."""
    if target.discovery.ignored:
        return skip("ignored: the workload is annotated to be ignored", Skip.IGNORED)
    # Eviction leaves the template alone; some operators honour the knob on what they own (Strimzi).
    if target.owner is not None and not (target.evicts or target.kind.owner_honours_knob):
        return skip(
            f"owned by {target.owner}, whose controller would revert the patch; "
            "target that resource instead, or restart its pods by eviction (restart: evict)",
            Skip.OWNED,
        )
    if target.problems:
        return skip(f"malformed annotation: {'; '.join(target.problems)}; nothing written", Skip.MALFORMED)
    problem = window_problem(target.restart_window)
    if problem is not None:
        return skip(problem, Skip.MALFORMED)
    return None


def decide_early(target: Target) -> Decision | None:
    """Decisions that need no source at all: those of the list facts, then suspended and nothing to patch."""
    settled = settle_listed(target.listed)
    if settled is not None:
        return settled
    if target.suspended:
        return skip(f"{target.kind.kind} is suspended", Skip.SUSPENDED)
    if not target.template_present:
        where = target.kind.template or target.kind.annotations_pointer
        return skip(f"no pod template at {where}: nothing to roll; nothing written", Skip.NO_TEMPLATE)
    return None


def changed_sources(
    before: tuple[SourceRecord, ...] | None, now: tuple[SourceRecord, ...]
) -> tuple[str, ...]:
    """Labels of sources whose content token differs from the stored records (all, if none stored)."""
    if before is None:
        return tuple(r.label for r in now)
    old = {(r.kind, r.name): r.token for r in before}
    new = {(r.kind, r.name): r.token for r in now}
    return tuple(
        f"{k}/{n}" for (k, n) in sorted(old.keys() | new.keys()) if old.get((k, n)) != new.get((k, n))
    )


def note_for(target: Target) -> str:
    """What the user should know about how pods pick up a template change."""
    if not target.kind.rolls_pods:
        return "recorded on the job template; the next Jobs use the new config"
    if target.on_delete:
        return "updateStrategy OnDelete: pods restart only when deleted (restart: evict evicts them)"
    if target.paused:
        return f"{target.kind.kind} is paused: the rollout happens on resume"
    return ""


def decide(
    target: Target,
    observed: Observed,
    *,
    now: datetime,
    first_sight_rollout: bool = False,
    notify: bool = False,
    windows: RestartWindows = ALWAYS_OPEN,
) -> Decision:
    """The action for one workload whose sources were all read (see `decide_early` for the rest).

    `windows` is the config's default restart window; a rollout of a kind that restarts pods is
    `deferred` outside the workload's windows (adoption, refresh, notification and CronJobs never are).
    `notify` is the config's `onChange: notify` (see `notifies`)."""
    notified = notifies(target, notify)
    planned = _decide(target, observed, now=now, first_sight_rollout=first_sight_rollout, notified=notified)
    if notified:
        if planned.action is Action.ROLLOUT and planned.previous is None:
            return replace(
                planned, action=Action.ADOPT, reason="first sight (on-change: notify): hash recorded"
            )
        if planned.action is Action.ROLLOUT or planned.deferral is Deferral.MIN_INTERVAL:
            return _notification(planned)
    if planned.action is not Action.ROLLOUT or not target.kind.rolls_pods:
        return planned
    closed = format_deferral(windows_of(target.restart_window, windows), now)
    if closed is None:
        return planned
    return defer(planned, Deferral.WINDOW, join(closed, planned.reason))


def _decide(
    target: Target, observed: Observed, *, now: datetime, first_sight_rollout: bool, notified: bool = False
) -> Decision:
    configs = tuple(r.label for r in observed.records)
    if observed.missing_required:
        missing = bounded_join(observed.missing_required)
        return skip(f"missing required {missing}; nothing written", Skip.MISSING_SOURCE, configs=configs)
    current = observed.config_hash
    book = target.bookkeeping
    stored = target.template_hash or book.config_hash
    if target.template_hash is not None and target.template_hash == book.superseded and book.config_hash:
        stored = book.config_hash  # the template's pods started after that change (freshness)
    reverted = reverted_template(target, current)
    if reverted:
        stored = book.config_hash  # rolled for this content already: never patched again in a loop
    if notified and book.config_hash:
        stored = (
            book.config_hash
        )  # notify mode records on metadata only: a template hash is an older rollout's
    base = Decision(
        Action.IN_SYNC, "", config_hash=current, previous=stored, configs=configs, observed=observed
    )
    if stored is None:
        if first_sight_rollout:
            return replace(
                base,
                action=Action.ROLLOUT,
                reason=join("first sight (firstSight: rollout)", note_for(target)),
            )
        return replace(base, action=Action.ADOPT, reason="first sight: hash recorded without a rollout")
    if stored != current:
        rekeyed = key_change(book, stored, observed.key_fingerprint)
        if rekeyed is not None and (keyed := decide_key_change(base, book, rekeyed)) is not None:
            return keyed
        known = book.records if rekeyed is None else None
        changed = changed_sources(known, observed.records)
        if rekeyed is not None and book.records is not None:
            changed = changed_identities(book.records, observed.records)
        what = (
            ", ".join(changed) + " changed"
            if changed and book.records is not None
            else "config content changed"
        )
        if rekeyed is not None:
            what += f" (hash key changed too: {describe_key(rekeyed[0])} → {describe_key(rekeyed[1])})"
        if target.min_interval and book.last_rollout and now - book.last_rollout < target.min_interval:
            until = format_time(book.last_rollout + target.min_interval)
            return defer(
                replace(base, changed=changed),
                Deferral.MIN_INTERVAL,
                f"{what}; min-interval holds it until {until}",
            )
        return replace(base, action=Action.ROLLOUT, reason=join(what, note_for(target)), changed=changed)
    if reverted:
        return replace(
            base,
            reason=f"content unchanged; the pod template holds {target.template_hash}, not the hash of our "
            "last rollout (reverted by its owner?): not rolled again for the same change",
        )
    if (
        book.config_hash != current
        or book.records != observed.records
        or book.key_fingerprint != observed.key_fingerprint
    ):
        return replace(
            base, action=Action.REFRESH, reason="content unchanged; bookkeeping updated without a rollout"
        )
    stamp = stamp_generation(target, observed)
    holds = stamp_holds(target.listed) if stamp is not None else book.generation is None
    if not holds or (stamp is not None and book.inputs != target.inputs):
        return replace(
            base,
            action=Action.REFRESH,
            reason="content unchanged; bookkeeping updated without a rollout (spec or annotations changed)",
        )
    if target.template_hash is None and target.kind.rolls_pods and book.last_rollout is not None:
        return replace(
            base, reason="content unchanged (pod template annotation absent, e.g. after a re-apply)"
        )
    return replace(base, reason="content unchanged")


def reverted_template(target: Target, current: str) -> bool:
    """Whether the pod template holds another hash than the one our last rollout wrote for the current
    content (neither it nor a superseded one): its owner put an older template back. Rolling again would
    be reverted again, in a loop; whether that restart took effect is the rollout check's question."""
    book = target.bookkeeping
    template = target.template_hash
    return (
        template is not None
        and book.config_hash == current
        and template not in (book.config_hash, book.superseded)
        and book.rollout is not None
        and book.last_rollout is not None
    )


def decide_key_change(base: Decision, book: Bookkeeping, fingerprints: tuple[str, str]) -> Decision | None:
    """A stored hash made under another key never rolls for that reason: a pass without a key leaves a
    keyed hash alone (`skipped`); a keyed pass whose records prove every source unchanged (same identity,
    version and key selection) re-records it under its own key (`refresh`). None: a source changed too
    (or the records cannot tell), so the content change rolls once as usual."""
    old, new = fingerprints
    if not new:
        return replace(
            base,
            action=Action.SKIPPED,
            reason=unkeyed_reason(old),
            skip=Skip.KEY,
        )
    observed = base.observed
    if book.records is None or observed is None or changed_identities(book.records, observed.records):
        return None
    return replace(
        base,
        action=Action.REFRESH,
        reason=rekeyed_reason(old, new),
    )


def _notification(planned: Decision) -> Decision:
    """A change of a workload in notify mode: the hash is recorded on its metadata, nothing restarts,
    so neither min-interval, windows nor --max-rollouts hold it back."""
    what = ", ".join(planned.changed) + " changed" if planned.changed else "config content changed"
    return replace(planned, action=Action.NOTIFY, reason=f"{what}; notified without a rollout", deferral=None)
