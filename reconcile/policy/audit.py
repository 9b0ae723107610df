"""What a rollout leaves for people auditing it: the change cause and the Events, by name only.

`kubectl rollout history` shows a revision's `kubernetes.io/change-cause`, which the Deployment controller
copies from the Deployment's metadata onto the ReplicaSet it starts (and the StatefulSet and DaemonSet
controllers onto their ControllerRevisions), so a rollout sets it on the workload in the same patch. Events
name the changed source in `related` and take the `events.k8s.io/v1` shape where the server serves that API
(the core/v1 shape otherwise). Both name sources and keys, never content.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from datetime import datetime
from enum import StrEnum
from typing import Any

from reconcile.model.bookkeeping import SourceRecord
from reconcile.model.kinds import EVENTS
from reconcile.model.times import format_time
from reconcile.model.workload import Listed
from reconcile.policy.decision import Decision

COMPONENT = "kube-rehash"
CHANGE_CAUSE = "kubernetes.io/change-cause"
CHANGE_CAUSE_LIMIT = 1024
"""Most characters of a change cause: a long list of sources is cut, saying how many were left out."""
EVENTS_V1 = "events.k8s.io/v1"
MESSAGE_LIMIT = 1024
"""The API server refuses an Event's note over 1 kB; the core message is cut the same."""

# A source's record kind → the reference Kubernetes names it by (apiVersion, Kind, namespaced).
SOURCE_KINDS: dict[str, tuple[str, str, bool]] = {
    "configmap": ("v1", "ConfigMap", True),
    "secret": ("v1", "Secret", True),
    "secretproviderclass": ("secrets-store.csi.x-k8s.io/v1", "SecretProviderClass", True),
}


class EventApi(StrEnum):
    """The Event API a pass writes to: events.k8s.io/v1 where the server serves it, else core/v1."""

    CORE = "v1"
    EVENTS_V1 = EVENTS_V1


def change_cause(decision: Decision) -> str:
    """`kube-rehash: secret/db changed (keys: password)`, one clause per changed source (every source on
    first sight), with the key names the records keep (none: the whole object is used)."""
    labels = decision.changed or decision.configs
    records = decision.observed.records if decision.observed is not None else ()
    keys = {record.label: record.keys for record in records}
    clauses = [clause(label, keys.get(label, ())) for label in labels] or ["config changed"]
    text = "kube-rehash: " + "; ".join(clauses)
    if len(text) <= CHANGE_CAUSE_LIMIT:
        return text
    for kept in range(len(clauses) - 1, 0, -1):
        shorter = "kube-rehash: " + "; ".join(clauses[:kept]) + f"; and {len(clauses) - kept} more changed"
        if len(shorter) <= CHANGE_CAUSE_LIMIT:
            return shorter
    return text[: CHANGE_CAUSE_LIMIT - 1] + "…"


def clause(label: str, keys: tuple[str, ...]) -> str:
    return f"{label} changed (keys: {', '.join(keys)})" if keys else f"{label} changed"


def related_source(
    namespace: str, changed: Iterable[str], records: Iterable[SourceRecord] = ()
) -> dict[str, Any] | None:
    """The object reference of the first changed source (its uid where the records have it), for an
    Event's `related`; None when nothing changed or the source is not of a kind Kubernetes can name."""
    label = next(iter(changed), None)
    if label is None or "/" not in label:
        return None
    kind, name = label.split("/", 1)
    known = SOURCE_KINDS.get(kind)
    if known is None:
        return None
    api_version, kind_name, namespaced = known
    ref: dict[str, Any] = {"apiVersion": api_version, "kind": kind_name, "name": name}
    if namespaced:
        ref["namespace"] = namespace
    uid = next((r.uid for r in records if r.label == label and r.uid and ":" not in r.uid), "")
    if uid:
        ref["uid"] = uid
    return ref


def event_name(target: Listed, now: datetime, reason: str) -> str:
    suffix = hashlib.sha256(f"{target.uid}/{reason}/{now.isoformat()}".encode()).hexdigest()[:10]
    return f"{target.name[:240]}.{suffix}"


def regarding(target: Listed) -> dict[str, Any]:
    return {
        "apiVersion": target.kind.api_version,
        "kind": target.kind.kind,
        "namespace": target.namespace,
        "name": target.name,
        "uid": target.uid,
    }


def build_event(
    target: Listed,
    *,
    reason: str,
    message: str,
    warning: bool,
    now: datetime,
    action: str,
    related: dict[str, Any] | None = None,
    api: EventApi = EventApi.CORE,
) -> dict[str, Any]:
    """An Event on the workload in the shape of `api`. The message names sources, never their values."""
    metadata = {"name": event_name(target, now, reason), "namespace": target.namespace}
    kind = "Warning" if warning else "Normal"
    if api is EventApi.EVENTS_V1:
        event: dict[str, Any] = {
            "apiVersion": EVENTS_V1,
            "kind": "Event",
            "metadata": metadata,
            "eventTime": now.strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
            "reportingController": COMPONENT,
            "reportingInstance": COMPONENT,
            "action": action,
            "reason": reason,
            "regarding": regarding(target),
            "note": message[:MESSAGE_LIMIT],
            "type": kind,
        }
    else:
        stamp = format_time(now)
        event = {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": metadata,
            "involvedObject": regarding(target),
            "reason": reason,
            "message": message[:MESSAGE_LIMIT],
            "type": kind,
            "action": action,
            "source": {"component": COMPONENT},
            "reportingComponent": COMPONENT,
            "reportingInstance": COMPONENT,
            "firstTimestamp": stamp,
            "lastTimestamp": stamp,
            "count": 1,
        }
    if related is not None:
        event["related"] = related
    return event


def events_path(target: Listed, api: EventApi = EventApi.CORE) -> str:
    if api is EventApi.EVENTS_V1:
        return f"/apis/{EVENTS_V1}/namespaces/{target.namespace}/events"
    return EVENTS.collection_path(target.namespace)


def serves_events_v1(resource_list: dict[str, Any]) -> bool:
    """Whether a `/apis/events.k8s.io/v1` discovery document offers `create` on `events`."""
    for resource in resource_list.get("resources") or ():
        if isinstance(resource, dict) and resource.get("name") == "events":
            return "create" in (resource.get("verbs") or ())
    return False
