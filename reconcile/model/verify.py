"""Was a restart kube-rehash started effective? A patch is no restart until the kind's own evidence says so.

Pure. For Deployments, StatefulSets and DaemonSets under their own controllers a patched template is a
restart; where an operator or an in-place updater stands between the template and the pods it may not be:
the owner reverts the template, the pods are updated in place, or the change is ignored. So each watched
rollout is judged, from what the rollout-health check already read, by the evidence its kind names
(`Kind.verified_by`):

- `status`: its status rules (health.py) say complete, and the rolling annotations map still holds what
  our rollout wrote (the status view's `restarted`);
- `pods`: every pod of it (its pod selection, read only for kinds that name this evidence) was created
  after our rollout;
- `status-time`: a status field holds a time at or after our rollout (Argo Rollouts' `status.restartedAt`);
- `status-change`: a status field moved from its value when we rolled (Knative's newest Revision).

Until the rollout deadline passes nothing is concluded from a missing proof. After it, a restart without
its evidence is not effective, with the likeliest cause (`Cause`); the caller records that once, sends one
Event, and never patches again for the same change.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from enum import StrEnum
from typing import Any

from reconcile.model.bookkeeping import RolloutRecord
from reconcile.model.freshness import parse_timestamp
from reconcile.model.kinds import Kind
from reconcile.model.knobs import Evidence, Knob
from reconcile.model.pods import Pod
from reconcile.model.pointer import join_pointer, parse_path, resolve
from reconcile.values import value


class Cause(StrEnum):
    """Why a restart did not take effect (the row's reason and the Event name it)."""

    REVERTED = "reverted"
    """The rolling annotations map no longer holds what our rollout wrote: its owner rebuilt it."""
    IN_PLACE = "in-place"
    """Its controller says updated, but its pods are the pods that ran before: updated in place."""
    IGNORED = "ignored"
    """Its controller did not act on the change: our generation unobserved, or no evidence moved."""
    HELD = "held"
    """It is paused: its controller replaces no pods until it is resumed."""
    NOT_RESTARTED = "not-restarted"
    """Pods that started before the change still run (or none of its pods was found)."""


CAUSES: dict[Cause, str] = {
    Cause.REVERTED: "its pod template no longer holds the change (reverted by its owner?)",
    Cause.IN_PLACE: "its pods were updated in place, not restarted: they started before the change",
    Cause.IGNORED: "its controller did not act on the change (annotation ignored?)",
    Cause.HELD: "it is paused: its controller replaces no pods until it is resumed",
    Cause.NOT_RESTARTED: "pods that started before the change still run",
}


@value
class Verdict:
    """What the evidence says of one restart: proven (`effective`), or not (with the cause it points to;
    a cause is only final once the rollout deadline passed)."""

    effective: bool
    cause: Cause | None = None


def judge(
    kind: Kind,
    view: Mapping[str, Any],
    record: RolloutRecord,
    *,
    written: str | None,
    complete: bool,
    observed: bool,
    pods: Sequence[Pod] | None,
) -> Verdict | None:
    """The verdict on our rollout `record` of a workload of `kind` from its status `view` (health.py's
    input plus `restarted`, the value of ours the rolling map holds; `paused`). `written`: the value our
    rollout wrote there (the config hash, or None where the knob writes a time); `complete`: its status
    rules say complete; `observed`: its controller saw the generation our write produced; `pods`: its pods
    (None: not read). None: the kind's restarts are not verified, or its evidence was not read."""
    evidence = kind.verified_by
    if evidence is None or (evidence is Evidence.PODS and pods is None):
        return None
    reverted = reverted_map(kind, view, written)
    if evidence is Evidence.STATUS:
        proven = complete and not reverted
    elif evidence is Evidence.PODS:
        assert pods is not None
        proven = restarted_pods(pods, record.at)
    elif evidence is Evidence.STATUS_TIME:
        moment = parse_timestamp(field(view, kind.evidence_field))
        proven = moment is not None and moment >= record.at.replace(microsecond=0)
    else:
        now = field(view, kind.evidence_field)
        proven = now is not None and now != record.before
    if proven:
        return Verdict(True)
    return Verdict(False, cause_of(kind, view, reverted=reverted, complete=complete, observed=observed))


def cause_of(kind: Kind, view: Mapping[str, Any], *, reverted: bool, complete: bool, observed: bool) -> Cause:
    """The likeliest cause of a restart without its evidence, in order: reverted, paused, not observed,
    a one-shot annotation the operator never removed, updated in place, pods not restarted."""
    if reverted:
        return Cause.REVERTED
    if view.get("paused") is True:
        return Cause.HELD
    if not observed and kind.rollout_in_spec:
        return Cause.IGNORED
    if kind.knob is Knob.ONE_SHOT and view.get("restarted") == kind.knob_value:
        return Cause.IGNORED
    if complete and kind.verified_by is Evidence.PODS:
        return Cause.IN_PLACE
    if kind.verified_by in (Evidence.STATUS_TIME, Evidence.STATUS_CHANGE):
        return Cause.IGNORED
    return Cause.NOT_RESTARTED


def reverted_map(kind: Kind, view: Mapping[str, Any], written: str | None) -> bool:
    """Whether the rolling annotations map lost what our rollout wrote: the hash (the `hash` knob), or
    the time of a `timestamp` knob. A one-shot annotation is removed by its operator: not a revert."""
    restarted = view.get("restarted")
    spec = view.get("spec")
    if (
        restarted is None
        and kind.restart_at is not None
        and isinstance(spec, Mapping)
        and "restartAt" in spec
    ):
        return False  # it runs a referenced template: the rollout wrote `restart_at`, not the hash
    if kind.knob is Knob.HASH:
        return written is not None and restarted != written
    if kind.knob is Knob.TIMESTAMP:
        return restarted is None
    return False


def restarted_pods(pods: Sequence[Pod], at: datetime) -> bool:
    """Every running pod was created in the second of the restart `at` or later (creation times are the API
    server's, at second granularity: an operator that restarts at once re-creates its pods in that very
    second; a pod whose creation time is unknown is old); no pod at all proves nothing."""
    running = [p for p in pods if not p.terminating]
    cut = at.replace(microsecond=0)
    return bool(running) and all(p.created is not None and p.created >= cut for p in running)


def field(view: Mapping[str, Any], path: str | None) -> str | None:
    """A text field of the status view by field path (None: absent or not text)."""
    if path is None:
        return None
    found = resolve(view, join_pointer(*parse_path(path)))
    return found if isinstance(found, str) else None


def describe(verdict: Verdict | None) -> str:
    """How a restart was verified, for `explain` and the reasons: `effective`, or the cause's words."""
    if verdict is None:
        return "not verified"
    if verdict.effective:
        return "effective"
    return CAUSES[verdict.cause] if verdict.cause is not None else "not effective"
