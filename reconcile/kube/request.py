"""One API request as a value: what is sent, how its answer is read, and which failures may be retried.

Building a request is pure (no session, no clock): the client (kube/client.py) builds one per call and hands
it to its send policy (kube/exchange.py), which owns everything that decides whether and when it goes out
again. A list's page requests share one parameter builder (`ListQuery`), so a list's first page, its next
pages and its pages after a restart carry the same selectors and `Accept` header.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

JSON = "application/json"
ACCEPT_METADATA = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json"
ACCEPT_METADATA_LIST = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json"
RETRIED_STATUS = frozenset({429, 500, 502, 503, 504})
DEFAULT_FIELD_MANAGER = "kube-rehash"


class PatchType(StrEnum):
    """Content type of a PATCH body."""

    JSON = "application/json-patch+json"
    MERGE = "application/merge-patch+json"
    STRATEGIC = "application/strategic-merge-patch+json"
    APPLY = "application/apply-patch+yaml"
    """Server-side apply (a JSON body is YAML too)."""


@dataclass(frozen=True)
class Request:
    """One request: `verb` is what the pass's budget and the request counters know it by (get, list,
    patch, create)."""

    verb: str
    method: str
    path: str
    params: Mapping[str, str] = field(default_factory=dict)
    body: bytes | None = None
    content_type: str | None = None
    accept: str = JSON
    retried: frozenset[int] = RETRIED_STATUS
    """Statuses answered by another attempt (others are the request's error)."""

    @property
    def creates(self) -> bool:
        """A POST: one that may have reached the server is never sent again (no double create)."""
        return self.verb == "create"

    @property
    def label(self) -> str:
        return f"{self.method} {self.path}"


def encode_body(body: Any) -> bytes:
    """A request body as compact JSON."""
    return json.dumps(body, separators=(",", ":")).encode()


def get(path: str, *, metadata_only: bool = False) -> Request:
    return Request("get", "GET", path, accept=ACCEPT_METADATA if metadata_only else JSON)


def write_params(
    dry_run: bool, field_manager: str = DEFAULT_FIELD_MANAGER, *, force: bool = False
) -> dict[str, str]:
    params = {"fieldManager": field_manager}
    if force:
        params["force"] = "true"
    if dry_run:
        params["dryRun"] = "All"
    return params


def patch(
    path: str,
    body: Any,
    *,
    patch_type: PatchType,
    dry_run: bool = False,
    field_manager: str = DEFAULT_FIELD_MANAGER,
    force: bool = False,
) -> Request:
    params = write_params(dry_run, field_manager, force=force)
    return Request("patch", "PATCH", path, params, encode_body(body), patch_type.value)


def create(
    path: str, body: Any, *, dry_run: bool = False, field_manager: str = DEFAULT_FIELD_MANAGER
) -> Request:
    """POST to a collection; of network failures only those where nothing was sent are retried."""
    return Request("create", "POST", path, write_params(dry_run, field_manager), encode_body(body), JSON)


def evict(path: str, body: Any, *, dry_run: bool = False) -> Request:
    """POST a policy/v1 Eviction to a pod's `eviction` subresource. A 429 is a PodDisruptionBudget's answer
    (its cause names the budget), not retried: retrying it within the pass helps nobody."""
    params = write_params(dry_run)
    return Request("create", "POST", path, params, encode_body(body), JSON, retried=RETRIED_STATUS - {429})


@dataclass(frozen=True)
class ListQuery:
    """What every page request of one list carries: its path, selectors and `Accept` header."""

    path: str
    label_selector: str | None = None
    field_selector: str | None = None
    metadata_only: bool = False

    @property
    def selectors(self) -> dict[str, str]:
        selectors: dict[str, str] = {}
        if self.label_selector:
            selectors["labelSelector"] = self.label_selector
        if self.field_selector:
            selectors["fieldSelector"] = self.field_selector
        return selectors

    def page(self, token: str | None, limit: int) -> Request:
        """The request of one page: the first (`token` None) or the one a `continue` token names."""
        params = {**self.selectors, "limit": str(limit)}
        if token:
            params["continue"] = token
        accept = ACCEPT_METADATA_LIST if self.metadata_only else JSON
        return Request("list", "GET", self.path, params, accept=accept)

    def at(self, resource_version: str) -> Request:
        """One unpaged metadata-only list exactly as the collection was at `resource_version`
        (`resourceVersionMatch=Exact`; a 410 when etcd compacted that version away)."""
        params = {"resourceVersion": resource_version, "resourceVersionMatch": "Exact", **self.selectors}
        return Request("list", "GET", self.path, params, accept=ACCEPT_METADATA_LIST)
