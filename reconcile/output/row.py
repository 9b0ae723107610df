"""One row of a pass's report: a workload (or a scope named `*`) and what the pass did with it.

Rows carry names of configs and hash values only, never content (output/report.py is the document they
go into; output/rows.py how a pass holds them).
"""

from __future__ import annotations

from typing import Any

from reconcile.model.bookkeeping import STALLED
from reconcile.model.workload import Listed
from reconcile.policy.decision import Action, Decision, Deferral
from reconcile.values import value


@value(slots=True)
class Row:
    kind: str
    namespace: str
    name: str
    action: str
    reason: str
    configs: tuple[str, ...] = ()
    hash: str | None = None
    previous: str | None = None
    rollout_status: str | None = None
    """complete, progressing or stalled: our unfinished rollout's status read in this pass."""
    deferral: Deferral | None = None
    """Why a `deferred` row was left to a later pass (the metric's label; not in the JSON)."""

    @classmethod
    def of(cls, target: Listed, decision: Decision) -> Row:
        return cls(
            kind=target.kind.kind,
            namespace=target.namespace,
            name=target.name,
            action=decision.action.value,
            reason=decision.reason,
            configs=decision.configs,
            hash=decision.config_hash,
            previous=decision.previous,
            rollout_status=decision.rollout.status.value if decision.rollout else None,
            deferral=decision.deferral,
        )

    @classmethod
    def scope_failure(cls, kind: str, namespace: str, reason: str) -> Row:
        """A whole scope (a kind in a namespace, or everywhere) that could not be read: name `*`."""
        return cls(kind=kind, namespace=namespace, name="*", action=Action.FAILED.value, reason=reason)

    @classmethod
    def scope_deferred(cls, kind: str, namespace: str, reason: str, why: Deferral) -> Row:
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
        """A whole scope's row (failed or not reached), not one workload's."""
        return self.name == "*"

    @property
    def by_budget(self) -> bool:
        return self.deferral is Deferral.BUDGET

    @property
    def stalled(self) -> bool:
        return self.rollout_status == STALLED

    def to_json(self) -> dict[str, Any]:
        doc: dict[str, Any] = {
            "kind": self.kind,
            "namespace": self.namespace,
            "name": self.name,
            "action": self.action,
            "reason": self.reason,
            "configs": list(self.configs),
            "hash": self.hash,
            "previous": self.previous,
        }
        if self.rollout_status is not None:
            doc["rollout_status"] = self.rollout_status
        return doc
