"""Content negotiation and response bodies for objects and lists.

Clients choose a representation with `Accept`: the full object, `PartialObjectMetadata(List)` (the
metadata-only form controllers use to list cheaply) or a `Table` (what `kubectl get` prints). Lists
are assembled from each entry's cached bytes, so large lists cost a join, not a re-serialization.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from .entry import Entry
from .errors import ApiError
from .paging import ListPage
from .resources import ResourceType

FULL = "full"
META = "meta"
TABLE = "table"


@dataclass(frozen=True)
class Representation:
    """What to send: FULL, META or TABLE, and the response Content-Type."""

    form: str
    content_type: str
    meta_version: str = "v1"


def _parse_accept(accept: str) -> list[tuple[str, dict[str, str]]]:
    result: list[tuple[str, dict[str, str]]] = []
    for raw in accept.split(","):
        parts = [p.strip() for p in raw.split(";") if p.strip()]
        if not parts:
            continue
        params: dict[str, str] = {}
        for p in parts[1:]:
            key, _, value = p.partition("=")
            params[key.strip().lower()] = value.strip().strip('"')
        result.append((parts[0].lower(), params))
    return result


def negotiate(accept: str | None, *, is_list: bool) -> Representation:
    """Pick the first acceptable media type in the client's order; 406 when none is."""
    if not accept or not accept.strip():
        return Representation(FULL, "application/json")
    for media, params in _parse_accept(accept):
        if media not in ("application/json", "application/*", "*/*"):
            continue
        as_kind = params.get("as")
        if as_kind is None:
            return Representation(FULL, "application/json")
        if params.get("g") != "meta.k8s.io" or params.get("v") != "v1":
            continue
        version = params["v"]
        if as_kind == "Table":
            return Representation(TABLE, f"application/json;as=Table;g=meta.k8s.io;v={version}", version)
        wanted = "PartialObjectMetadataList" if is_list else "PartialObjectMetadata"
        if as_kind == wanted:
            return Representation(META, f"application/json;as={wanted};g=meta.k8s.io;v={version}", version)
    raise ApiError(
        406,
        "only the following media types are accepted: application/json, application/yaml, "
        "application/vnd.kubernetes.protobuf",
        reason="NotAcceptable",
    )


def human_age(timestamp: str, now: datetime | None = None) -> str:
    """A short age like kubectl prints: 42s, 5m, 3h, 12d."""
    try:
        created = datetime.strptime(timestamp, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
    except ValueError:
        return "<unknown>"
    seconds = int(((now or datetime.now(UTC)) - created).total_seconds())
    if seconds < 0:
        return "<invalid>"
    if seconds < 120:
        return f"{seconds}s"
    if seconds < 3 * 3600:
        return f"{seconds // 60}m"
    if seconds < 48 * 3600:
        return f"{seconds // 3600}h"
    return f"{seconds // 86400}d"


_COLUMNS = [
    {
        "name": "Name",
        "type": "string",
        "format": "name",
        "description": "Name must be unique within a namespace.",
        "priority": 0,
    },
    {
        "name": "Age",
        "type": "string",
        "format": "",
        "description": "CreationTimestamp is a timestamp representing the server time when this object "
        "was created.",
        "priority": 0,
    },
]


def _row(entry: Entry, include: str, version: str) -> dict[str, Any]:
    meta = entry.obj["metadata"]
    row: dict[str, Any] = {"cells": [meta["name"], human_age(meta.get("creationTimestamp", ""))]}
    if include == "Object":
        row["object"] = entry.obj
    elif include != "None":
        row["object"] = {
            "kind": "PartialObjectMetadata",
            "apiVersion": f"meta.k8s.io/{version}",
            "metadata": meta,
        }
    return row


def _list_meta(page: ListPage) -> dict[str, Any]:
    meta: dict[str, Any] = {"resourceVersion": page.resource_version}
    if page.continue_token:
        meta["continue"] = page.continue_token
    if page.remaining is not None:
        meta["remainingItemCount"] = page.remaining
    return meta


def table(entries: list[Entry], meta: dict[str, Any], include: str, version: str) -> bytes:
    body = {
        "kind": "Table",
        "apiVersion": f"meta.k8s.io/{version}",
        "metadata": meta,
        "columnDefinitions": _COLUMNS,
        "rows": [_row(e, include, version) for e in entries],
    }
    return json.dumps(body, separators=(",", ":")).encode()


def object_body(entry: Entry, rep: Representation, include: str = "") -> bytes:
    if rep.form == META:
        return entry.meta
    if rep.form == TABLE:
        return table(
            [entry],
            {"resourceVersion": entry.obj["metadata"].get("resourceVersion", "")},
            include,
            rep.meta_version,
        )
    return entry.full


def list_body(rtype: ResourceType, page: ListPage, rep: Representation, include: str = "") -> bytes:
    meta = _list_meta(page)
    if rep.form == TABLE:
        return table(page.entries, meta, include, rep.meta_version)
    if rep.form == META:
        head = {
            "kind": "PartialObjectMetadataList",
            "apiVersion": f"meta.k8s.io/{rep.meta_version}",
            "metadata": meta,
        }
        items = b",".join(e.meta for e in page.entries)
    else:
        head = {"kind": f"{rtype.kind}List", "apiVersion": rtype.api_version, "metadata": meta}
        items = b",".join(e.item for e in page.entries)
    prefix = json.dumps(head, separators=(",", ":")).encode()[:-1]
    return prefix + b',"items":[' + items + b"]}"
