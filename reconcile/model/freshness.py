"""One restart per sync: are a workload's pods already newer than the change of its sources?

A GitOps sync that applies a ConfigMap and the Deployment using it together already starts a rollout
whose pods read the new ConfigMap; rolling them again for the hash change is the double restart users
of the peers complain about (Reloader #992). So when a workload's hash changed but its current pod
template was started by its controller strictly after the last content change of every changed
source, the pass records the new hash without a rollout (`refresh`).

Pure: the two times and their comparison, from objects the read stage fetched.
- A source's last content change: the newest `metadata.managedFields[].time` among the entries that own
  `data`, `binaryData` or `stringData` (never earlier than its `creationTimestamp`). No managedFields, an
  owner without a time, or no entry owning content: unknown.
- When the workload's current template started: the `creationTimestamp` of the newest ReplicaSet of a
  Deployment (highest `deployment.kubernetes.io/revision`, which must be the Deployment's own revision),
  of the ControllerRevision a StatefulSet's `status.updateRevision` names, of the newest ControllerRevision
  of a DaemonSet (whose `deprecated.daemonset.template.generation` must be the DaemonSet's). Only when the
  controller has observed the current generation, and only for kinds whose every pod is replaced by a
  template change (not OnDelete, not a StatefulSet partition, not paused); Argo Rollouts are not covered.

Both times are written by the same API server (managedFields times and creationTimestamps are its clock,
at second granularity), so clock skew between machines plays no part. Equal seconds (the common case of
one `kubectl apply` or GitOps sync) are decided by the API server's own order instead: the pass lists the
workload's ReplicaSets or ControllerRevisions exactly as they were at the changed source's
resourceVersion (`resourceVersionMatch=Exact`); when the current template's object was not there yet, it
was created after that source's last write. Any other doubt means no answer here, and the workload rolls
as it would without this rule.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from reconcile.model.kinds import Revisions
from reconcile.values import value

CONTENT_FIELDS = ("f:data", "f:binaryData", "f:stringData")
REVISION = "deployment.kubernetes.io/revision"
TEMPLATE_GENERATION = "deprecated.daemonset.template.generation"


def parse_timestamp(text: Any) -> datetime | None:
    """An API server timestamp (RFC 3339, `Z`), truncated to the second; None when absent or unreadable."""
    if not isinstance(text, str) or not text:
        return None
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    if moment.tzinfo is None:
        return None
    return moment.astimezone(UTC).replace(microsecond=0)


def _metadata(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    metadata = obj.get("metadata")
    return metadata if isinstance(metadata, Mapping) else {}


def content_changed_at(obj: Mapping[str, Any]) -> datetime | None:
    """When the content of a ConfigMap or Secret last changed, from its managedFields (None: unknown)."""
    metadata = _metadata(obj)
    entries = metadata.get("managedFields")
    if not isinstance(entries, list) or not entries:
        return None
    newest: datetime | None = None
    for entry in entries:
        if not isinstance(entry, Mapping):
            return None
        fields = entry.get("fieldsV1")
        if not isinstance(fields, Mapping) or not any(key in fields for key in CONTENT_FIELDS):
            continue
        moment = parse_timestamp(entry.get("time"))
        if moment is None:  # an owner of the content whose time is unknown: doubt
            return None
        newest = moment if newest is None else max(newest, moment)
    if newest is None:  # nobody owns the content (emptied, or written without a manager): doubt
        return None
    created = parse_timestamp(metadata.get("creationTimestamp"))
    return max(newest, created) if created is not None else newest


@value
class Lineage:
    """What a full view of a workload says about the controller's record of its current template."""

    kind: Revisions
    """How its controller records templates (`Kind.revisions`)."""
    uid: str
    generation: int | None
    observed_generation: int | None
    selector: tuple[tuple[str, str], ...]
    """`spec.selector.matchLabels`, sorted: the label selector of the ReplicaSet/ControllerRevision list."""
    revision: str | None = None
    """Deployment: its `deployment.kubernetes.io/revision` annotation. DaemonSet: its template generation
    annotation. StatefulSet: `status.updateRevision`."""
    every_pod_replaced: bool = True
    """False when a template change leaves some pods as they are (OnDelete, a partition, paused)."""

    @property
    def settled(self) -> bool:
        """The controller has observed the current spec, so its newest revision is the current template."""
        return (
            self.every_pod_replaced
            and self.generation is not None
            and self.observed_generation == self.generation
            and bool(self.revision)
        )

    @property
    def label_selector(self) -> str:
        return ",".join(f"{key}={value}" for key, value in self.selector)


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _get(obj: Any, *path: str) -> Any:
    for key in path:
        if not isinstance(obj, Mapping):
            return None
        obj = obj.get(key)
    return obj


def lineage_of(obj: Mapping[str, Any], kind: Revisions | None) -> Lineage | None:
    """The lineage facts of an object whose controller records its templates as `kind` says (None: a
    kind whose pods are never proven newer)."""
    if kind is None:
        return None
    metadata = _metadata(obj)
    labels = _get(obj, "spec", "selector", "matchLabels")
    selector = (
        tuple(sorted((str(k), str(v)) for k, v in labels.items())) if isinstance(labels, Mapping) else ()
    )
    annotations = metadata.get("annotations")
    annotations = annotations if isinstance(annotations, Mapping) else {}
    strategy = _get(obj, "spec", "updateStrategy", "type")
    replaced = strategy != "OnDelete"
    if kind == Revisions.DEPLOYMENT:
        revision = annotations.get(REVISION)
        replaced = _get(obj, "spec", "paused") is not True
    elif kind == Revisions.STATEFULSET:
        revision = _get(obj, "status", "updateRevision")
        partition = _get(obj, "spec", "updateStrategy", "rollingUpdate", "partition")
        replaced = replaced and not (_int(partition) or 0) > 0
    else:
        revision = annotations.get(TEMPLATE_GENERATION)
    return Lineage(
        kind=kind,
        uid=str(metadata.get("uid") or ""),
        generation=_int(metadata.get("generation")),
        observed_generation=_int(_get(obj, "status", "observedGeneration")),
        selector=selector,
        revision=str(revision) if isinstance(revision, (str, int)) and revision != "" else None,
        every_pod_replaced=replaced,
    )


def _owned(item: Mapping[str, Any], uid: str) -> bool:
    owners = _metadata(item).get("ownerReferences")
    return isinstance(owners, list) and any(
        isinstance(o, Mapping) and o.get("uid") == uid and o.get("controller") is True for o in owners
    )


def _annotation(item: Mapping[str, Any], key: str) -> Any:
    annotations = _metadata(item).get("annotations")
    return annotations.get(key) if isinstance(annotations, Mapping) else None


@dataclass(frozen=True)
class Origin:
    """The object that records a workload's current template: its name, when it was created, and the
    resourceVersions (of changed sources) at which it provably did not exist yet."""

    name: str
    started: datetime
    absent_at: frozenset[str] = frozenset()


@value
class Change:
    """A changed source: when its content last changed, and the resourceVersion that was read."""

    at: datetime | None
    resource_version: str


def template_origin(lineage: Lineage, items: Iterable[Mapping[str, Any]]) -> Origin | None:
    """The ReplicaSet (Deployment) or ControllerRevision (StatefulSet, DaemonSet) of the workload's
    current template, from their metadata; None on any doubt."""
    if not lineage.settled:
        return None
    owned = [item for item in items if _owned(item, lineage.uid)]
    current: Mapping[str, Any] | None
    if lineage.kind == Revisions.STATEFULSET:
        named = [item for item in owned if _metadata(item).get("name") == lineage.revision]
        current = named[0] if len(named) == 1 else None
    elif lineage.kind == Revisions.DEPLOYMENT:
        numbered = [(_revision_number(item), item) for item in owned]
        current = _single_max([(n, item) for n, item in numbered if n is not None])
        if current is not None and str(_revision_number(current)) != lineage.revision:
            current = None
    else:
        dated = [(parse_timestamp(_metadata(item).get("creationTimestamp")), item) for item in owned]
        if any(moment is None for moment, _ in dated):
            return None
        current = _single_max([(moment, item) for moment, item in dated if moment is not None])
        if current is not None and str(_annotation(current, TEMPLATE_GENERATION)) != lineage.revision:
            current = None
    if current is None:
        return None
    name = _metadata(current).get("name")
    started = parse_timestamp(_metadata(current).get("creationTimestamp"))
    return Origin(name, started) if isinstance(name, str) and name and started is not None else None


def names_in(page: Mapping[str, Any]) -> frozenset[str]:
    """The names of a list's items."""
    items = page.get("items")
    if not isinstance(items, list):
        return frozenset()
    return frozenset(n for item in items if isinstance(n := _metadata(item).get("name"), str))


def _revision_number(item: Mapping[str, Any]) -> int | None:
    text = _annotation(item, REVISION)
    return int(text) if isinstance(text, str) and text.isdigit() else None


def _single_max(ranked: Sequence[tuple[Any, Mapping[str, Any]]]) -> Mapping[str, Any] | None:
    """The item with the highest rank, when exactly one has it (a tie is doubt)."""
    if not ranked:
        return None
    top = max(rank for rank, _ in ranked)
    best = [item for rank, item in ranked if rank == top]
    return best[0] if len(best) == 1 else None


def _second(moment: datetime) -> datetime:
    return moment.replace(microsecond=0)


def tied_versions(changes: Mapping[str, Change], origin: Origin | None) -> tuple[str, ...]:
    """The resourceVersions at which the origin's absence must be checked: those of the changes in the
    very second the template started, when no change is known to be later (else nothing decides)."""
    if origin is None or not changes:
        return ()
    start = _second(origin.started)
    if any(c.at is None or _second(c.at) > start or not c.resource_version for c in changes.values()):
        return ()
    return tuple(
        sorted({c.resource_version for c in changes.values() if c.at is not None and _second(c.at) == start})
    )


def pods_newer(changes: Mapping[str, Change], origin: Origin | None) -> bool:
    """Whether every changed source changed before the current template started: strictly earlier at
    second granularity, or in the same second with the template's object provably absent at the
    source's resourceVersion. Anything unknown is doubt (False)."""
    if origin is None or not changes:
        return False
    start = _second(origin.started)
    for change in changes.values():
        if change.at is None or _second(change.at) > start:
            return False
        if _second(change.at) == start and change.resource_version not in origin.absent_at:
            return False
    return True


def fresh_reason(changed: Sequence[str], limit: int = 10) -> str:
    """`pods started after configmap/app, secret/db changed` (at most `limit` names, then how many more)."""
    shown = ", ".join(changed[:limit])
    more = f" and {len(changed) - limit} more" if len(changed) > limit else ""
    return f"pods started after {shown}{more} changed"
