"""In which order a pass spends its budget: what changes the cluster first, bookkeeping last.

The rule (docs/large-clusters.md, "Time budget"): within a pass's budget, writes that change the cluster
(rollouts and adoptions) come before refreshes, and all of a batch's writes before the next batch is read;
rollout-health checks (reading the status of rollouts we started) and rollout-record updates come after
the pending work of every batch, oldest rollout first. So a rollout stuck on an image pull never keeps a
pending change from rolling. When rollouts are watched, a bounded share of the budget is held back for
their checks (at most `HEALTH_SHARE` of the timeout, less when the checks need less): a pass whose
pending work does not fit still checks some, one whose pending work fits gives them all the time left.
A watched rollout the pass did not check is reported with its recorded state, without a request.
"""

from __future__ import annotations

from reconcile.policy.decision import Action

# Most of the budget health checks may hold back from the pending work when both do not fit.
HEALTH_SHARE = 0.25
# Write ranks: lower first within a batch (a notification stands for the rollout it replaces).
_RANK = {Action.ROLLOUT: 0, Action.ADOPT: 0, Action.NOTIFY: 0, Action.REFRESH: 1}


def write_rank(action: Action) -> int:
    """Rollouts, notifications and adoptions first, then refreshes, then the rest (which send nothing)."""
    return _RANK.get(action, 2)


def health_hold(requests: int, request_seconds: float, timeout: float) -> float:
    """Seconds held back for the rollout-health checks of a pass: what their `requests` (reads, and a
    record update each) take at the pass's rate, but never more than `HEALTH_SHARE` of the budget."""
    if requests <= 0:
        return 0.0
    return min(HEALTH_SHARE * timeout, requests * request_seconds)
