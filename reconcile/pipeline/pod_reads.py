"""Restart by eviction, the reads: the pods of a workload (evictions.py is the write).

Only for the workloads `policy.evict` says must restart by eviction in this pass: one metadata-only list
of the namespace's pods by the workload's `matchLabels`, plus, for a Deployment, one of its ReplicaSets
(the owner chain: only pods of a ReplicaSet the Deployment controls are its own).
"""

from __future__ import annotations

from collections.abc import Iterable
from concurrent.futures import Executor

from reconcile.errors import PassCut, RehashError
from reconcile.kube.client import KubeClient
from reconcile.model.kinds import PODS, REPLICASETS, Revisions
from reconcile.model.pods import PodsRead, controlled_pods
from reconcile.model.workload import Target
from reconcile.pipeline.fetch import gather


def list_pods(client: KubeClient, target: Target) -> PodsRead:
    """The pods the workload controls (metadata), or why listing them failed (a 403 included)."""
    lineage = target.lineage
    assert lineage is not None
    selector = lineage.label_selector or None
    try:
        pods = list(
            client.list_items(
                PODS.collection_path(target.namespace), label_selector=selector, metadata_only=True
            )
        )
        replicasets = (
            list(
                client.list_items(
                    REPLICASETS.collection_path(target.namespace), label_selector=selector, metadata_only=True
                )
            )
            if target.kind.revisions == Revisions.DEPLOYMENT  # its pods belong to its ReplicaSets
            else []
        )
    except PassCut:
        raise
    except RehashError as exc:
        return str(exc)
    return controlled_pods(target.uid, pods, replicasets)


def read_pods(
    client: KubeClient, executor: Executor, targets: Iterable[Target]
) -> tuple[dict[str, PodsRead], bool]:
    """uid -> the controlled pods of each workload (or why not), and whether the budget cut the reads."""
    done, cut = gather(executor, lambda t: list_pods(client, t), targets)
    return {target.uid: pods for target, pods in done}, cut
