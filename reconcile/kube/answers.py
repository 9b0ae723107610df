"""Reading what the API server answered: a JSON object, a list page (decoded whole, item by item, or as
slim metadata: kube/pages.py), or the typed error of a Status, which never carries a token, a header or a
request body."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import requests

from reconcile.errors import MAX_BODY_EXCERPT, ApiError, api_error_for
from reconcile.json_text import load_json
from reconcile.kube.pages import read_metadata_page, read_page

Decode = Callable[[requests.Response, str, str], tuple[dict[str, Any], int]]
"""A list page's decoder: (the page, the length of the text it keeps), from the response, method and path."""


def decode(response: requests.Response, method: str, path: str) -> dict[str, Any]:
    """The response's JSON object (an empty body: an empty object)."""
    if not response.content:
        return {}
    try:
        document = load_json(response.content)
    except ValueError:
        document = None
    if not isinstance(document, dict):
        raise not_an_object(response, method, path)
    return document


def decode_whole(response: requests.Response, method: str, path: str) -> tuple[dict[str, Any], int]:
    """A list page decoded at once, and its length: all of it is kept."""
    return decode(response, method, path), len(response.content)


def decode_page(response: requests.Response, method: str, path: str) -> tuple[dict[str, Any], int]:
    """A list page whose items are decoded as they are iterated, and its length: its text is kept while
    they are."""
    return decode_text(response, method, path, lambda text: (read_page(text), len(response.content)))


def decode_metadata_page(response: requests.Response, method: str, path: str) -> tuple[dict[str, Any], int]:
    """A metadata-only page decoded once, its items without managedFields and last-applied annotation,
    and the length of the text it keeps (kube/pages.py)."""
    return decode_text(response, method, path, read_metadata_page)


def decoder(*, metadata_only: bool, lazy: bool) -> Decode:
    """How a list's pages are decoded: whole, or (`lazy`) as slim metadata or item by item."""
    if not lazy:
        return decode_whole
    return decode_metadata_page if metadata_only else decode_page


def decode_text(
    response: requests.Response,
    method: str,
    path: str,
    read: Callable[[str], tuple[dict[str, Any], int]],
) -> tuple[dict[str, Any], int]:
    """`read` of the body as text (JSON is UTF-8: RFC 8259); an empty body is an empty page, and a body
    that is not UTF-8 or not a JSON object is the server's error, as `decode` reports it. The response
    lets go of its bytes once they are text: only one copy of a page is kept."""
    if not response.content:
        return {}, 0
    try:
        text = response.content.decode("utf-8")
    except ValueError:
        raise not_an_object(response, method, path) from None
    response._content = b""
    try:
        return read(text)
    except ValueError:  # JSONDecodeError included
        raise not_an_object(response, method, path) from None


def not_an_object(response: requests.Response, method: str, path: str) -> ApiError:
    return ApiError(
        response.status_code, "InvalidResponse", "the response is not a JSON object", method=method, path=path
    )


def error_from(response: requests.Response, method: str, path: str) -> ApiError:
    """The typed error of a non-2xx response: Status reason and message, else a short body excerpt."""
    try:
        status = response.json()
    except ValueError:
        status = None
    if isinstance(status, dict) and status.get("kind") == "Status":
        reason = str(status.get("reason") or response.reason or "")
        message = str(status.get("message") or "")
        details = status.get("details")
        causes = details.get("causes") if isinstance(details, dict) else None
        budgets = [  # an eviction's refusal: the Status message does not name the budget, its cause does
            str(c.get("message"))
            for c in (causes if isinstance(causes, list) else ())
            if isinstance(c, dict) and c.get("reason") == "DisruptionBudget" and c.get("message")
        ]
        if budgets:
            message = f"{message} ({'; '.join(budgets)})"
    else:
        reason = str(response.reason or "")
        message = excerpt(response.text)
    return api_error_for(response.status_code, reason, message, method=method, path=path)


STORAGE_READ_ERROR = "StorageReadError"
CORRUPT_OBJECT = "StorageError: corrupt object"
"""What kube-apiserver answers about an object it stores but cannot read back (one it cannot decrypt, or
decode): a list whose range holds it fails with reason `StorageReadError`, a read of it by name with an
InternalError naming a corrupt object. The same request fails the same way until someone fixes the object."""

STORAGE_INITIALIZING = "storage is (re)initializing"
"""A 429 of kube-apiserver's watch cache that is loading: seconds after a restart, but for as long as it
lasts where it cannot load (a Secret it cannot decrypt keeps the Secrets' cache from ever loading)."""


def retries_allowed(error: ApiError, retried: int) -> bool:
    """Whether an error answer is worth asking again after `retried` retries: never one that retrying
    cannot change (a corrupt stored object), and a loading watch cache once, so that a cache that cannot
    load costs one wait and the caller's narrower reads (a namespace's list, reads by name) go on."""
    if error.reason == STORAGE_READ_ERROR or CORRUPT_OBJECT in error.message:
        return False
    return not (error.code == 429 and error.message.startswith(STORAGE_INITIALIZING) and retried >= 1)


def retry_after(response: requests.Response) -> float | None:
    value = response.headers.get("Retry-After", "").strip()
    try:
        seconds = float(value)
    except ValueError:
        return None  # absent, or an HTTP date (the API server sends seconds)
    return max(0.0, seconds)


def excerpt(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= MAX_BODY_EXCERPT else flat[: MAX_BODY_EXCERPT - 3] + "..."
