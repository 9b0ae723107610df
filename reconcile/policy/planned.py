"""A workload's decision with the full view it was decided from: what the planner hands the write stage.

Only a planned workload with a full view can be written: a patch needs the spec facts the view carries.
"""

from __future__ import annotations

from reconcile.model.workload import Listed, Target
from reconcile.policy.decision import Decision
from reconcile.values import value


@value
class Planned:
    """One workload's decision, with the full view it was decided from when the pass has one: only a
    planned workload with a full view can be written (a patch needs the spec facts)."""

    listed: Listed
    decision: Decision
    full: Target | None = None
