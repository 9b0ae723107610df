"""A list page decoded item by item, so a page never becomes one tree of all its objects at once.

A page of 500 whole workloads is a few MB of JSON text but, decoded at once, ten times that in Python
objects, alive together until the last item has been looked at; the pass keeps a slim view of each item and
drops the rest, so only one decoded item needs to exist at a time. `read_page` decodes the page's other
members (`kind`, `metadata` with the `continue` token) and leaves `items` as `LazyItems`, which decodes each
object from the response text when the caller reaches it. Measured on the benchmark's 1x cluster: the first
pass's peak RSS falls as it would with pages of 100 objects, without the extra requests (docs/performance.md,
"Memory").

A metadata-only page (`read_page(text, slim=True)`) is kept without what no reader of a metadata-only
item needs and what dominates one on a real cluster: `metadata.managedFields` (most of a workload's metadata:
every field of its pod template, per manager) and kubectl's last-applied annotation (the whole applied
object, a ConfigMap's data included). The API server cannot leave them out of a list, so while the page is
walked to find its end, its items are written again without them, and the page keeps that shorter text (500
realistic workloads' metadata: ~2 MB with them, ~0.3 MB without; docs/performance.md, "Objects as real
clusters hold them"). A page carrying neither is kept as it came. A page of full objects is never trimmed (a
source's managedFields tell when its content changed: model/freshness.py).

The text is walked with the standard library's own decoder (`JSONDecoder.raw_decode`, one value at a time),
not by hand: every value is decoded exactly as `json.loads` would, and any text that is not a JSON object
raises ValueError, for the caller to report like any undecodable response.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

_DECODER = json.JSONDecoder()
_SPACE = re.compile(r"[ \t\n\r]*")
LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"


class LazyItems:
    """The `items` array of a page: iterating decodes its objects one by one, each time from the text."""

    __slots__ = ("_start", "_text")

    def __init__(self, text: str, start: int) -> None:
        self._text = text
        self._start = start

    def __iter__(self) -> Iterator[Any]:
        return _elements(self._text, self._start)[0]


def read_page(text: str, *, slim: bool = False) -> dict[str, Any]:
    """The page as a dict, its `items` (when an array) a `LazyItems`; ValueError when it is not a JSON
    object. The array is walked once here to find what follows it, one element at a time. `slim` (a
    metadata-only page): its items lose their managedFields and last-applied annotation."""
    at = _skip(text, 0)
    if text[at : at + 1] != "{":
        raise ValueError("not a JSON object")
    page: dict[str, Any] = {}
    at = _skip(text, at + 1)
    if text[at : at + 1] == "}":
        return _end(text, at + 1, page)
    while True:
        key, at = _DECODER.raw_decode(text, at)
        at = _skip(text, at)
        if not isinstance(key, str) or text[at : at + 1] != ":":
            raise ValueError("malformed object member")
        at = _skip(text, at + 1)
        if key == "items" and text[at : at + 1] == "[":
            elements, end = _elements(text, at)
            if slim and ('"managedFields"' in text or LAST_APPLIED in text):
                page[key] = LazyItems(_slimmed(elements), 0)
            else:
                for _ in elements:  # only to find the end of the array: each element is dropped at once
                    pass
                page[key] = LazyItems(text, at)
            at = end[0]
        else:
            page[key], at = _DECODER.raw_decode(text, at)
        at = _skip(text, at)
        if text[at : at + 1] == "}":
            return _end(text, at + 1, page)
        if text[at : at + 1] != ",":
            raise ValueError("expected ',' or '}'")
        at = _skip(text, at + 1)


def _elements(text: str, start: int) -> tuple[Iterator[Any], list[int]]:
    """The elements of the array at `start`, decoded lazily, and a cell holding the index after it once
    the iterator is exhausted."""
    end = [start]

    def walk() -> Iterator[Any]:
        at = _skip(text, start + 1)
        if text[at : at + 1] == "]":
            end[0] = at + 1
            return
        while True:
            value, at = _DECODER.raw_decode(text, at)
            yield value
            at = _skip(text, at)
            if text[at : at + 1] == "]":
                end[0] = at + 1
                return
            if text[at : at + 1] != ",":
                raise ValueError("expected ',' or ']'")
            at = _skip(text, at + 1)

    return walk(), end


def _slimmed(elements: Iterator[Any]) -> str:
    """The elements again as one JSON array, each without `metadata.managedFields` and the last-applied
    annotation (every other value as it was: JSON text written and read back is the same value)."""
    parts: list[str] = []
    for element in elements:
        metadata = element.get("metadata") if isinstance(element, dict) else None
        if isinstance(metadata, dict):
            metadata.pop("managedFields", None)
            annotations = metadata.get("annotations")
            if isinstance(annotations, dict):
                annotations.pop(LAST_APPLIED, None)
        parts.append(json.dumps(element, separators=(",", ":"), ensure_ascii=False))
    return "[" + ",".join(parts) + "]"


def _skip(text: str, at: int) -> int:
    match = _SPACE.match(text, at)
    return match.end() if match else at


def _end(text: str, at: int, page: dict[str, Any]) -> dict[str, Any]:
    if _skip(text, at) != len(text):
        raise ValueError("extra data after the object")
    return page
