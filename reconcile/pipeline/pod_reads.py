"""Restart by eviction, the reads: the pods of a workload (evictions.py is the write).

Only for the workloads `policy.evict` says must restart by eviction in this pass: one metadata-only list
of the namespace's pods by the workload's `matchLabels`, plus, for a Deployment, one of its ReplicaSets
(the owner chain: only pods of a ReplicaSet the Deployment controls are its own). A custom resource's pods
are found by its kind's pod selection (`Kind.pod_selection`: a label selector, and whether it controls
them itself); the same read shows whether a restart of such a kind took effect (pipeline/rollouts.py).
"""

from __future__ import annotations

from collections.abc import Iterable
from concurrent.futures import Executor

from reconcile.errors import PassCut, RehashError
from reconcile.kube.client import KubeClient
from reconcile.model.kinds import PODS, REPLICASETS, Revisions
from reconcile.model.pods import PodsRead, any_pods, controlled_pods
from reconcile.model.workload import Target
from reconcile.pipeline.fetch import gather


def selected_pods(
    client: KubeClient, namespace: str, selector: str | None, owner_uid: str | None
) -> PodsRead:
    """The pods (metadata) a label selector finds, those `owner_uid` controls when it is given; or why
    listing them failed. No selector finds the pods `owner_uid` controls among the namespace's, and
    nothing without an owner (never every pod of the namespace)."""
    if not selector and owner_uid is None:
        return ()
    try:
        pods = list(
            client.list_items(
                PODS.collection_path(namespace), label_selector=selector or None, metadata_only=True
            )
        )
    except PassCut:
        raise
    except RehashError as exc:
        return str(exc)
    return controlled_pods(owner_uid, pods) if owner_uid is not None else any_pods(pods)


def list_pods(client: KubeClient, target: Target) -> PodsRead:
    """The pods the workload controls (metadata), or why listing them failed (a 403 included)."""
    selection = target.kind.pod_selection
    if target.lineage is None and selection is not None:
        owner = target.uid if selection.owned else None
        return selected_pods(client, target.namespace, target.pod_selector, owner)
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
