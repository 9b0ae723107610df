"""The `events.k8s.io/v1` view of Events, as kube-apiserver serves it: one store, two shapes.

kube-apiserver keeps one Event per object and converts between the core/v1 shape (`involvedObject`,
`message`, `source`, `count`, `firstTimestamp`) and the events.k8s.io/v1 one (`regarding`, `note`,
`reportingController`, `deprecated*`): an Event created through either API is read through both. The
simulator does the same: a request to events.k8s.io/v1 is served by the core `events` resource, its body
converted to the core shape on the way in and the answer back on the way out.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from .errors import ApiError, invalid

GROUP = "events.k8s.io"
API_VERSION = "events.k8s.io/v1"
Response = tuple[int, bytes, str]
# events.k8s.io/v1 field → core/v1 field, for those that are renamed (the rest keep their names).
RENAMED = {
    "regarding": "involvedObject",
    "note": "message",
    "reportingController": "reportingComponent",
    "deprecatedSource": "source",
    "deprecatedCount": "count",
    "deprecatedFirstTimestamp": "firstTimestamp",
    "deprecatedLastTimestamp": "lastTimestamp",
}
REQUIRED = ("eventTime", "reportingController", "reportingInstance", "action", "reason")


def to_core(event: dict[str, Any]) -> dict[str, Any]:
    """An events.k8s.io/v1 Event in the core/v1 shape the store keeps, checked as the server checks a
    new one (`eventTime`, `reportingController`, `reportingInstance`, `action` and `reason` required)."""
    name = str((event.get("metadata") or {}).get("name") or "")
    missing = [(field, "Required value") for field in REQUIRED if not event.get(field)]
    if missing:  # validated as the core Event it is stored as: no group in the Status
        error = invalid("Event", "", name, missing)
        for cause in (error.details or {}).get("causes", []):
            cause["reason"] = "FieldValueRequired"
        raise error
    if len(str(event.get("note") or "")) > 1024:
        raise invalid("Event", "", name, [("note", "Invalid value: can have at most 1024 characters")])
    core = {RENAMED.get(key, key): value for key, value in event.items()}
    core["apiVersion"] = "v1"
    # What the server stores for the deprecated core fields an events.k8s.io/v1 Event leaves unset.
    core.setdefault("source", {})
    core.setdefault("firstTimestamp", None)
    core.setdefault("lastTimestamp", None)
    return core


def to_v1(event: dict[str, Any]) -> dict[str, Any]:
    """A stored (core/v1) Event as events.k8s.io/v1 shows it."""
    back = {core: v1 for v1, core in RENAMED.items()}
    converted = {back.get(key, key): value for key, value in event.items()}
    if "apiVersion" in converted:  # a list's items carry none
        converted["apiVersion"] = API_VERSION
    return converted


def convert_answer(payload: bytes) -> bytes:
    """An answer of the core events resource (an Event or an EventList) in the events.k8s.io/v1 shape;
    any other answer (a Status, a metadata-only view) as it is."""
    try:
        doc = json.loads(payload)
    except ValueError:
        return payload
    if not isinstance(doc, dict):
        return payload
    if doc.get("kind") == "Event":
        doc = to_v1(doc)
    elif doc.get("kind") == "EventList":
        doc["apiVersion"] = API_VERSION
        doc["items"] = [to_v1(item) for item in doc.get("items") or []]
    else:
        return payload
    return json.dumps(doc, separators=(",", ":")).encode()


def serve(method: str, body: bytes, as_core: Callable[[bytes], Response]) -> Response:
    """Serve one events.k8s.io/v1 request through the core events resource (`as_core(body)`)."""
    if method in ("PUT", "PATCH"):
        raise ApiError(405, "the kube-rehash simulator serves events.k8s.io/v1 for get, list, create, delete")
    if method == "POST":
        try:
            event = json.loads(body)
        except ValueError as exc:
            raise ApiError(400, f"couldn't get version/kind; json parse error: {exc}") from None
        if not isinstance(event, dict) or event.get("apiVersion") not in (None, API_VERSION):
            raise ApiError(400, f"the API version in the data does not match the expected {API_VERSION}")
        body = json.dumps(to_core(event)).encode()
    code, payload, content_type = as_core(body)
    return code, convert_answer(payload), content_type
