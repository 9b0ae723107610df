"""Restart by eviction, the write: the chosen pods evicted, or the hash recorded once every pod is new.

Writes only through the `pods/eviction` subresource (policy/v1 Eviction), never a pod DELETE, so the API
server applies every PodDisruptionBudget: a refusal (429) is an answer, not a fault, and is never retried
within the pass — the pod stays, the row is `deferred` naming the budget, and the next pass asks again.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from datetime import datetime

from reconcile.errors import NotFound, PassCut, RehashError, TooManyRequests
from reconcile.kube.client import KubeClient, PatchType
from reconcile.model.annotations import Annotations
from reconcile.model.bookkeeping import COMPLETE
from reconcile.model.kinds import PODS
from reconcile.model.times import format_time
from reconcile.model.workload import Listed, Target
from reconcile.policy.decision import Action, Decision, Deferral, bounded_join, defer
from reconcile.policy.patches import add_op, build_patch, metadata_path, rollout_state_patch

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Evicted:
    """What asking to evict a workload's chosen pods came to."""

    evicted: tuple[str, ...]
    refused: str | None = None
    """The API server's refusal (a PodDisruptionBudget's 429, naming the budget) that stopped the rest."""
    failed: str | None = None


def evict_pods(client: KubeClient, namespace: str, names: Iterable[str], *, dry_run: bool) -> Evicted:
    """Evict these pods one by one, stopping at the first refusal or failure; a pod gone already counts
    as evicted. PassCut (the budget) is raised to the writer."""
    evicted: list[str] = []
    for name in names:
        body = {
            "apiVersion": "policy/v1",
            "kind": "Eviction",
            "metadata": {"name": name, "namespace": namespace},
        }
        try:
            client.evict(PODS.object_path(namespace, name) + "/eviction", body, dry_run=dry_run)
        except NotFound:
            log.info("pod %s/%s was gone before its eviction", namespace, name)
        except TooManyRequests as exc:
            return Evicted(tuple(evicted), refused=exc.message)
        except PassCut:
            raise
        except RehashError as exc:
            return Evicted(tuple(evicted), failed=str(exc))
        else:
            log.info("evicted pod %s/%s", namespace, name)
        evicted.append(name)
    return Evicted(tuple(evicted))


def carry_out(
    client: KubeClient,
    target: Target,
    decision: Decision,
    *,
    dry_run: bool,
    keys: Annotations,
    now: datetime,
    emit: Callable[[Listed, str, str], None],
) -> Decision:
    """What a decision of `policy.evict` came to: the chosen pods evicted (`rollout`), a budget's refusal
    (`deferred`, naming it), or, when every pod is new, the hash recorded on metadata only (`in-sync`)."""
    eviction = decision.eviction
    assert eviction is not None
    changed = ", ".join(decision.changed or decision.configs) or "config"
    record = target.bookkeeping.rollout
    if not eviction.pods and eviction.fallback and record is not None:
        # The restart that did not take effect is done by eviction: its record is complete.
        ops = rollout_state_patch(target.listed, record, COMPLETE, keys)
        try:
            client.patch(
                target.kind.object_path(target.namespace, target.name),
                ops,
                patch_type=PatchType.JSON,
                dry_run=dry_run,
            )
        except PassCut:
            raise
        except RehashError as exc:
            return replace(decision, action=Action.FAILED, reason=f"recording the restart failed: {exc}")
        return decision
    if not eviction.pods:
        assert decision.observed is not None
        recorded = replace(decision, action=Action.REFRESH)
        ops = build_patch(target, recorded, decision.observed, now=now, keys=keys)
        # The restart is over: its time is the last rollout's, which min-interval counts from.
        ops.append(add_op(metadata_path(keys.last_rollout), format_time(now)))
        path = target.kind.object_path(target.namespace, target.name)
        try:
            client.patch(path, ops, patch_type=PatchType.JSON, dry_run=dry_run)
        except PassCut:
            raise
        except RehashError as exc:
            return replace(decision, action=Action.FAILED, reason=f"recording the hash failed: {exc}")
        return decision
    result = evict_pods(client, target.namespace, eviction.pods, dry_run=dry_run)
    done = bounded_join(result.evicted)
    if result.evicted:
        emit(target.listed, "ConfigChanged", f"kube-rehash evicted pods {done}: {changed} changed")
    if result.failed is not None:
        evicted = f"evicted {done}; " if result.evicted else ""
        return replace(
            decision, action=Action.FAILED, reason=f"{evicted}evicting pods failed: {result.failed}"
        )
    progress = f"{eviction.old} of {eviction.total} pods started before the change"
    if result.refused is not None and not result.evicted:
        pod = eviction.pods[0]
        return defer(
            decision,
            Deferral.DISRUPTION_BUDGET,
            f"{changed} changed; pod {pod} not evicted: {result.refused}; "
            f"a later pass tries again ({progress})",
        )
    refused = f"; then refused: {result.refused}" if result.refused is not None else ""
    return replace(decision, reason=f"{changed} changed; evicted {done} ({progress}){refused}")
