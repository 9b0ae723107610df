"""Roll once a change has settled: one restart for a rotation written in steps.

A credential rotation often writes a username and a password, or two Secrets, seconds or minutes apart. A
pass between the two writes would restart the pods onto a half-rotated pair, and the next pass restart them
again. With a settle window, a workload whose changed sources changed less than the window ago is
`deferred`; it rolls once, when every changed source has been quiet for the window.

Stateless: each source's last content change is its own (`freshness.content_changed_at`, from the
managedFields the API server writes), so nothing has to be remembered between passes. A source whose change
time is unknown (no managedFields) does not hold the workload back. The times are the API server's clock,
compared with the pass's: a skew between the two shifts the window by as much.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from reconcile.model.rollouts import format_age
from reconcile.model.sources import NamespaceSources
from reconcile.model.times import format_duration, format_time
from reconcile.policy.decision import Action, Decision, Deferral, defer

HELD = (Action.ROLLOUT, Action.NOTIFY)
"""What a settle window holds: a restart, or a notification of one."""


def last_changes(decision: Decision, sources: NamespaceSources) -> dict[str, datetime]:
    """When each of the decision's changed sources last changed, where that is known."""
    hashed = sources.hashed_by_label()
    return {
        label: at
        for label in decision.changed
        if label in hashed and (at := hashed[label].changed_at) is not None
    }


def hold_unsettled(
    decision: Decision, sources: NamespaceSources, settle: timedelta | None, now: datetime
) -> Decision:
    """`decision` deferred while a changed source changed less than `settle` ago (None, 0: never)."""
    if not settle or decision.action not in HELD:
        return decision
    times = last_changes(decision, sources)
    if not times:
        return decision
    latest = max(times.values())
    quiet_at = latest + settle
    if now >= quiet_at:
        return decision
    newest = sorted(label for label, at in times.items() if at == latest)[0]
    return defer(
        decision,
        Deferral.SETTLE,
        f"{decision.reason}; settling: {newest} changed {format_age(now - latest)} ago, rolls once its "
        f"changed sources have been quiet for {format_duration(settle)} (from {format_time(quiet_at)})",
    )
