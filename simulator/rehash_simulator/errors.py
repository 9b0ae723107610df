"""The simulator's API errors, each one rendered as a Kubernetes v1 `Status` body.

Every failure path of the simulator (store, selectors, patches, authorization, faults) raises an
`ApiError`; the HTTP layer turns it into the exact `Status` shape a real API server sends, so clients
written against Kubernetes (client-go in kubectl, the official Python client) parse it unchanged.
"""

from __future__ import annotations

import json
from typing import Any

_REASONS = {
    400: "BadRequest",
    401: "Unauthorized",
    403: "Forbidden",
    404: "NotFound",
    405: "MethodNotAllowed",
    406: "NotAcceptable",
    409: "Conflict",
    410: "Expired",
    415: "UnsupportedMediaType",
    422: "Invalid",
    429: "TooManyRequests",
    500: "InternalError",
    503: "ServiceUnavailable",
    504: "Timeout",
}


def default_reason(code: int) -> str:
    """The `reason` a real server pairs with an HTTP status code ("" when there is none)."""
    return _REASONS.get(code, "")


class ApiError(Exception):
    """An error response: HTTP code, Status reason, message and optional details."""

    def __init__(
        self,
        code: int,
        message: str,
        reason: str | None = None,
        details: dict[str, Any] | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.reason = default_reason(code) if reason is None else reason
        self.details = details
        self.headers = dict(headers or {})

    def status(self) -> dict[str, Any]:
        """The v1 Status body."""
        body: dict[str, Any] = {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
        }
        if self.reason:
            body["reason"] = self.reason
        if self.details is not None:
            body["details"] = self.details
        body["code"] = self.code
        return body

    def body(self) -> bytes:
        return json.dumps(self.status(), separators=(",", ":")).encode()


def qualified(plural: str, group: str) -> str:
    """`deployments.apps`, or `configmaps` for the core group."""
    return f"{plural}.{group}" if group else plural


def not_found(plural: str, group: str, name: str) -> ApiError:
    return ApiError(
        404,
        f'{qualified(plural, group)} "{name}" not found',
        details={"name": name, "group": group, "kind": plural} if group else {"name": name, "kind": plural},
    )


def already_exists(plural: str, group: str, name: str) -> ApiError:
    return ApiError(
        409,
        f'{qualified(plural, group)} "{name}" already exists',
        reason="AlreadyExists",
        details={"name": name, "group": group, "kind": plural} if group else {"name": name, "kind": plural},
    )


def conflict(plural: str, group: str, name: str) -> ApiError:
    return ApiError(
        409,
        f'Operation cannot be fulfilled on {qualified(plural, group)} "{name}": the object has been '
        "modified; please apply your changes to the latest version and try again",
        details={"name": name, "group": group, "kind": plural} if group else {"name": name, "kind": plural},
    )


def invalid(kind: str, group: str, name: str, causes: list[tuple[str, str]]) -> ApiError:
    """422 Invalid; `causes` are (field, message) pairs, e.g. ("metadata.name", 'Invalid value: ...')."""
    text = ", ".join(f"{field}: {msg}" for field, msg in causes)
    if len(causes) > 1:
        text = "[" + text + "]"
    details: dict[str, Any] = {"name": name, "kind": kind}
    if group:
        details["group"] = group
    details["causes"] = [
        {"reason": "FieldValueInvalid", "message": msg, "field": field} for field, msg in causes
    ]
    return ApiError(422, f'{kind}{"." + group if group else ""} "{name}" is invalid: {text}', details=details)


def bad_request(message: str) -> ApiError:
    return ApiError(400, message)


def patch_rejected(detail: str) -> ApiError:
    """A patch that decodes but cannot be applied (failed JSON-patch `test`, missing path): 422 with the
    generic message and empty details, as kube-apiserver answers (it does not say which op failed)."""
    del detail  # what failed is ours to know; kube-apiserver's answer does not carry it
    return ApiError(422, "the server rejected our request due to an error in our request", details={})


def name_mismatch(got: object, url_name: str) -> ApiError:
    return ApiError(400, f"the name of the object ({got}) does not match the name on the URL ({url_name})")


def namespace_mismatch() -> ApiError:
    return ApiError(
        400, "the namespace of the provided object does not match the namespace sent on the request"
    )


def api_version_mismatch(got: object, expected: str) -> ApiError:
    return ApiError(
        400, f"the API version in the data ({got}) does not match the expected API version ({expected})"
    )
