"""A kind's restart knob and its evidence, as data: what a rollout writes to make an operator's pods
restart, what shows it took effect, which pods are a resource's (and how a built-in kind's pods name it),
and where its own spec names ConfigMaps and Secrets. The values of `Kind`'s fields (model/kinds.py), kept
apart so the kind table stays short.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from reconcile.model.pointer import join_pointer, parse_path, resolve


class Knob(StrEnum):
    """What a rollout of a kind writes to make its pods restart: its restart knob."""

    HASH = "hash"
    """The config hash into the rolling annotations map (a pod template's: its controller rolls)."""
    TIMESTAMP = "timestamp"
    """The pass's time under `Kind.knob_key` in the rolling annotations map (`kubectl rollout restart`'s
    way; CloudNativePG, ECK, TiDB operator v2)."""
    FIELD = "field"
    """The pass's time into the field `Kind.knob_field` (Argo Rollouts' `spec.restartAt`)."""
    ONE_SHOT = "one-shot"
    """`Kind.knob_value` under `Kind.knob_key`, which the operator removes once it restarted (Strimzi)."""
    EVICT = "evict"
    """Its pods (`Kind.pod_selection`) evicted through pods/eviction; nothing of it changes but our
    bookkeeping."""


class Evidence(StrEnum):
    """What shows that a restart of a kind took effect (model/verify.py)."""

    STATUS = "status"
    """Its status rules (`Kind.health`) say complete for the generation our write produced, and the
    rolling annotations map still holds our hash (a controller replaces pods on a template change)."""
    PODS = "pods"
    """Every pod of it (`Kind.pod_selection`) was created after the restart."""
    STATUS_TIME = "status-time"
    """The status field `Kind.evidence_field` holds a time at or after the restart."""
    STATUS_CHANGE = "status-change"
    """The status field `Kind.evidence_field` moved from its value when we restarted it (Knative's newest
    Revision)."""


@dataclass(frozen=True)
class PodSelection:
    """Which pods are a custom resource's: a label selector, read from the resource at `selector` (a
    `matchLabels` map or a selector string) or given as `labels` (`{name}` stands for the resource's
    name), keeping only the pods it controls itself when `owned`; `owned` alone takes every pod of the
    namespace it controls (one list of the namespace's pods, metadata only)."""

    selector: str | None = None
    labels: str | None = None
    owned: bool = False

    def __post_init__(self) -> None:
        if self.selector is not None and self.labels is not None:
            raise ValueError("pods: give a selector field or a labels selector, not both")
        if self.selector is None and self.labels is None and not self.owned:
            raise ValueError("pods: give a selector field, a labels selector, or owned: true")
        if self.selector is not None:
            parse_path(self.selector)

    def selector_of(self, obj: Any, name: str) -> str | None:
        """The label selector of the resource's pods (None: its selector field is absent or empty)."""
        if self.labels is not None:
            return self.labels.replace("{name}", name)
        if self.selector is None:
            return None  # the pods it controls, whatever their labels
        found = resolve(obj, join_pointer(*parse_path(self.selector)))
        if isinstance(found, Mapping) and found:
            return ",".join(f"{k}={v}" for k, v in sorted(found.items()) if isinstance(v, str))
        return found if isinstance(found, str) and found else None


@dataclass(frozen=True)
class SpecReference:
    """A ConfigMap or Secret a resource names in its own spec: the field path of the name (`*` for every
    item of a list) and which of its keys is used: `key`, a fixed one; `key_field`, the field beside the
    name that holds it; neither, the whole object."""

    kind: str
    """`configmap` or `secret`."""
    name: str
    key: str | None = None
    key_field: str | None = None
    optional: bool = False

    def __post_init__(self) -> None:
        if self.kind not in ("configmap", "secret"):
            raise ValueError(f"a reference names a configmap or a secret, not {self.kind!r}")
        if self.key is not None and self.key_field is not None:
            raise ValueError(f"reference at {self.name}: give key or keyField, not both")
        parse_path(self.name)


@dataclass(frozen=True)
class PodOwnership:
    """How a kind's pods name their workload in their controlling ownerReference: the workload itself
    (`via` its own kind), or a ReplicaSet named `<workload>-<the pod's hash label>`."""

    via: str
    hash_label: str | None = None

    def workload_of(self, owner_kind: str, owner_name: str, labels: Mapping[str, Any]) -> str | None:
        """The workload's name, if a pod with this owner and these labels is one of its pods."""
        if owner_kind != self.via:
            return None
        if self.hash_label is None:
            return owner_name
        suffix = labels.get(self.hash_label)
        if isinstance(suffix, str) and suffix and owner_name.endswith(f"-{suffix}"):
            return owner_name[: -len(suffix) - 1]
        return None
