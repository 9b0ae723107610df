"""What became of one workload in a pass (or of a scope, named `*`): the value every stage's result ends
in, and the only thing a pass keeps for every workload until it ends.

An outcome carries names of configs and hash values only, never content; output/report.py makes the
report's rows from them, policy/outcomes.py is how a pass holds them.
"""

from __future__ import annotations

from reconcile.model.bookkeeping import NOT_EFFECTIVE, STALLED
from reconcile.model.kinds import SOURCE_KIND_NAMES
from reconcile.model.workload import Listed
from reconcile.policy.decision import Action, Decision, Deferral, Skip, Unreadable
from reconcile.values import value


@value(slots=True)
class Outcome:
    kind: str
    namespace: str
    name: str
    action: str
    reason: str
    configs: tuple[str, ...] = ()
    hash: str | None = None
    previous: str | None = None
    rollout_status: str | None = None
    """complete, progressing, stalled or not-effective: our unfinished rollout's status read in this pass."""
    deferral: Deferral | None = None
    """Why a `deferred` row was left to a later pass (the metric's label; not in the JSON)."""
    skip: Skip | None = None
    """Why a `skipped` row was left alone (the metric's label; not in the JSON)."""

    @classmethod
    def of(cls, target: Listed, decision: Decision, rollout_status: str | None = None) -> Outcome:
        """The outcome of a workload's decision; `rollout_status` where the pass knows our last rollout's
        status other than from the decision (its record, when its status was not read)."""
        if rollout_status is None and decision.rollout is not None:
            rollout_status = decision.rollout.status.value
        return cls(
            kind=target.kind.kind,
            namespace=target.namespace,
            name=target.name,
            action=decision.action.value,
            reason=decision.reason,
            configs=decision.configs,
            hash=decision.config_hash,
            previous=decision.previous,
            rollout_status=rollout_status,
            deferral=decision.deferral,
            skip=decision.skip,
        )

    @classmethod
    def scope_failure(cls, kind: str, namespace: str, reason: str) -> Outcome:
        """A whole scope (a kind in a namespace, or everywhere) that could not be read: name `*`."""
        return cls(kind=kind, namespace=namespace, name="*", action=Action.FAILED.value, reason=reason)

    @classmethod
    def unreadable_source(cls, source: Unreadable) -> Outcome:
        """A ConfigMap or Secret that could not be read: its own row, once per pass, which fails the pass
        (the workloads using it are `skipped`)."""
        return cls(
            kind=SOURCE_KIND_NAMES[source.kind],
            namespace=source.namespace,
            name=source.name,
            action=Action.FAILED.value,
            reason=f"cannot be read: {source.error}; the workloads using it are skipped",
        )

    @classmethod
    def scope_deferred(cls, kind: str, namespace: str, reason: str, why: Deferral) -> Outcome:
        """A scope the pass did not reach (its budget ran out, or it was stopped): name `*`."""
        return cls(
            kind=kind,
            namespace=namespace,
            name="*",
            action=Action.DEFERRED.value,
            reason=reason,
            deferral=why,
        )

    @property
    def is_scope(self) -> bool:
        """A whole scope's outcome (failed or not reached), not one workload's."""
        return self.name == "*"

    @property
    def by_budget(self) -> bool:
        return self.deferral is Deferral.BUDGET

    @property
    def stalled(self) -> bool:
        return self.rollout_status == STALLED

    @property
    def not_effective(self) -> bool:
        return self.rollout_status == NOT_EFFECTIVE
