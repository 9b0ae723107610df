"""The pods of a workload restarted by eviction (`restart: evict`), and which of them are old.

Pure. A workload whose pod template must not be patched (an operator owns it and would revert the patch,
or the user chose eviction) is restarted by evicting its pods that started before the change, a few per
pass, and nothing is stored about the progress: a pod created (by the API server's clock, at second
granularity) strictly after the last content change of every changed source runs the new config; one
created in the same second or before may not, and is evicted. When no pod of the workload is old the
hash is recorded. Pods are found by the workload's selector and kept only when the workload controls
them: a Deployment through a ReplicaSet it controls, a StatefulSet or DaemonSet directly.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from reconcile.model.freshness import parse_timestamp
from reconcile.values import value


@value
class Pod:
    """What eviction needs of one pod (from its metadata only)."""

    name: str
    created: datetime | None
    terminating: bool


@dataclass(frozen=True)
class Eviction:
    """A decision's eviction: the pods to evict in this pass (oldest first), how many pods are still
    old, and how many the workload has; no pod to evict means every pod is newer than the change."""

    pods: tuple[str, ...]
    old: int
    total: int
    fallback: bool = False
    """It carries out a restart not effective by its deadline (`onIneffective: evict`): pods older than
    that restart are evicted, and when none is left the restart is recorded complete."""


PodsRead = tuple[Pod, ...] | str
"""A workload's controlled pods as the read stage found them, or why listing them failed."""


def controller_uid(metadata: Mapping[str, Any]) -> str | None:
    """The uid of the object's controlling ownerReference."""
    owners = metadata.get("ownerReferences")
    for owner in owners if isinstance(owners, list) else ():
        if isinstance(owner, Mapping) and owner.get("controller") is True:
            uid = owner.get("uid")
            return str(uid) if uid else None
    return None


def controlled_pods(
    workload_uid: str, pods: Iterable[Mapping[str, Any]], replicasets: Iterable[Mapping[str, Any]] = ()
) -> tuple[Pod, ...]:
    """The pods (metadata) the workload controls: directly, or through one of `replicasets` it controls."""
    owners = {workload_uid}
    for rs in replicasets:
        metadata = rs.get("metadata")
        if isinstance(metadata, Mapping) and controller_uid(metadata) == workload_uid:
            owners.add(str(metadata.get("uid") or ""))
    return tuple(
        pod_of(metadata)
        for pod in pods
        if isinstance(metadata := pod.get("metadata"), Mapping) and controller_uid(metadata) in owners
    )


def any_pods(pods: Iterable[Mapping[str, Any]]) -> tuple[Pod, ...]:
    """The pods (metadata) of a label selector's list, whoever controls them (an operator's pods are
    often controlled by a StatefulSet or an instance object of its own, not by the resource)."""
    return tuple(pod_of(metadata) for pod in pods if isinstance(metadata := pod.get("metadata"), Mapping))


def pod_of(metadata: Mapping[str, Any]) -> Pod:
    return Pod(
        str(metadata.get("name") or ""),
        parse_timestamp(metadata.get("creationTimestamp")),
        bool(metadata.get("deletionTimestamp")),
    )


def old_pods(pods: Iterable[Pod], changed: datetime) -> list[Pod]:
    """The pods not terminating yet that were created before or in the second of `changed`, oldest first
    (an unknown creation time counts as old)."""
    old = [p for p in pods if not p.terminating and (p.created is None or p.created <= changed)]
    return sorted(old, key=lambda p: (p.created or datetime.min.replace(tzinfo=changed.tzinfo), p.name))


def evict_batch(max_unavailable: Any, otherwise: int = 1) -> int:
    """Pods evicted per pass: the workload's `maxUnavailable` where it is a positive integer, else
    `otherwise` (the setting `evictPerPass`)."""
    if isinstance(max_unavailable, int) and not isinstance(max_unavailable, bool) and max_unavailable > 0:
        return max_unavailable
    return otherwise
