"""A list page decoded item by item, so a page never becomes one tree of all its objects at once.

A page of 500 whole workloads is a few MB of JSON text but, decoded at once, ten times that in Python
objects, alive together until the last item has been looked at; the pass keeps a slim view of each item and
drops the rest, so only one decoded item needs to exist at a time. `read_page` decodes the page's other
members (`kind`, `metadata` with the `continue` token) and leaves `items` as `LazyItems`, which decodes each
object from the response text when the caller reaches it. Measured on the benchmark's 1x cluster: the first
pass's peak RSS falls as it would with pages of 100 objects, without the extra requests
(docs/engineering/performance-history.md, "Memory: peak RSS against cluster size").

A metadata-only page (`read_metadata_page`) is small once decoded (no pod specs), so it is decoded
once, as the steady pass's floor does, and its `items` are a plain list: walking the text a second time
to decode each item again costs as much CPU as the first decoding (docs/engineering/performance-history.md,
"Steady-pass CPU").
Its items are kept without what no reader of a metadata-only item needs and what dominates one on a real
cluster: `metadata.managedFields` (most of a workload's metadata: every field of its pod template, per
manager) and kubectl's last-applied annotation (the whole applied object, a ConfigMap's data included).
The API server cannot leave them out of a list, so a page carrying either is decoded one item at a time
and each item loses them as soon as it is decoded; only one whole item is alive at once, the others are
held slim (500 realistic workloads' metadata: ~2 MB of text with them;
docs/engineering/performance-history.md, "Objects as
real clusters hold them"). A page carrying neither is decoded in one call. A page of full objects is
never trimmed (a source's managedFields tell when its content changed: model/freshness.py).

The text is walked with the standard library's own decoder (`JSONDecoder.raw_decode`, one value at a time),
not by hand: every value is decoded exactly as `json.loads` would, and any text that is not a JSON object
raises ValueError, for the caller to report like any undecodable response. A page decoded in one call goes
through `load_json` (reconcile/json_text.py: `orjson`, three times as fast, with the same values).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator, Mapping
from operator import itemgetter
from sys import intern
from typing import Any

from reconcile.json_text import load_json

_DECODER = json.JSONDecoder()
_SPACE = re.compile(r"[ \t\n\r]*")
_WHITESPACE = " \t\n\r"
LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"
_VALUE = itemgetter(0)


class LazyItems:
    """The `items` array of a page: iterating decodes its objects one by one, each time from the text."""

    __slots__ = ("_count", "_start", "_text")

    def __init__(self, text: str, start: int, count: int) -> None:
        self._text = text
        self._start = start
        self._count = count

    def __len__(self) -> int:
        return self._count

    def __iter__(self) -> Iterator[Any]:
        return map(_VALUE, _elements(self._text, self._start)[0])


def read_page(text: str) -> dict[str, Any]:
    """The page as a dict; ValueError when it is not a JSON object. Its `items` (when an array) are a
    `LazyItems`, whose array is walked once here to find what follows it, one element at a time."""
    return _read_members(text, _lazy_items)


def read_metadata_page(text: str) -> tuple[dict[str, Any], int]:
    """A metadata-only page decoded once, its `items` a list without their managedFields and last-applied
    annotation (ValueError when it is not a JSON object); and the length of the text it keeps: all of it
    but the dropped members' text (estimated by `_dropped_length`), what sizes the list's next page in
    memory (kube/page_size.py). Decoded in one call when no item carries what `slim_item` drops (the thin
    shape: nothing to drop), else item by item, each slimmed at once."""
    if '"managedFields"' not in text and LAST_APPLIED not in text:
        page = load_json(text)
        if not isinstance(page, dict):
            raise ValueError("not a JSON object")
        return page, len(text)
    dropped = [0]

    def read_items(text: str, at: int) -> tuple[list[Any], int]:
        elements, end = _elements(text, at)
        kept: list[Any] = []
        start = at
        for item, stop in elements:
            dropped[0] += _dropped_length(text, start, stop, item)
            kept.append(slim_item(item))
            start = stop
        return kept, end[0]

    page = _read_members(text, read_items)
    return page, len(text) - dropped[0]


def _dropped_length(text: str, start: int, stop: int, item: Any) -> int:
    """About how much of an item's text, `text[start:stop]`, is what `slim_item` drops. The API server
    writes `managedFields` as the last member of an object's metadata and `metadata` as the last member
    of a PartialObjectMetadata, so the text from the last `"managedFields"` key to the item's end is that
    member (found by C code, not decoded a second time); the last-applied annotation is about as long as
    its decoded value (its escapes make the text a little longer: the estimate errs toward keeping)."""
    metadata = item.get("metadata") if isinstance(item, dict) else None
    if not isinstance(metadata, dict):
        return 0
    cut = 0
    if "managedFields" in metadata:
        at = text.rfind('"managedFields"', start, stop)
        cut += stop - at if at >= 0 else 0
    annotations = metadata.get("annotations")
    if isinstance(annotations, dict):
        applied = annotations.get(LAST_APPLIED)
        if isinstance(applied, str):
            cut += len(LAST_APPLIED) + len(applied)
    return min(cut, stop - start)


def slim_item(item: Any) -> Any:
    """A metadata-only list item without `metadata.managedFields` and the last-applied annotation, changed
    in place (a value of another shape is returned as it is). The keys it keeps in its top level, metadata,
    labels and annotations are interned: they repeat on every item of a page, and an item decoded on its own
    would hold its own copies of them (about a kilobyte per realistic item)."""
    if not isinstance(item, dict):
        return item
    metadata = item.get("metadata")
    if isinstance(metadata, dict):
        metadata.pop("managedFields", None)
        annotations = metadata.get("annotations")
        if isinstance(annotations, dict):
            annotations.pop(LAST_APPLIED, None)
            _intern_keys(annotations)
        labels = metadata.get("labels")
        if isinstance(labels, dict):
            _intern_keys(labels)
        _intern_keys(metadata)
    _intern_keys(item)
    return item


def _intern_keys(mapping: dict[Any, Any]) -> None:
    """The same mapping, in the same order, with each string key replaced by its interned copy."""
    shared = {intern(key) if type(key) is str else key: value for key, value in mapping.items()}
    mapping.clear()
    mapping.update(shared)


def _lazy_items(text: str, at: int) -> tuple[LazyItems, int]:
    elements, end = _elements(text, at)
    count = sum(1 for _ in elements)  # only to find the end of the array: each element is dropped at once
    return LazyItems(text, at, count), end[0]


def _read_members(text: str, read_items: Callable[[str, int], tuple[Any, int]]) -> dict[str, Any]:
    """The JSON object in `text`, member by member; an `items` array is read by `read_items(text, at)`,
    which returns its value and the index after it."""
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
            page[key], at = read_items(text, at)
        else:
            page[key], at = _DECODER.raw_decode(text, at)
        at = _skip(text, at)
        if text[at : at + 1] == "}":
            return _end(text, at + 1, page)
        if text[at : at + 1] != ",":
            raise ValueError("expected ',' or '}'")
        at = _skip(text, at + 1)


def _elements(text: str, start: int) -> tuple[Iterator[tuple[Any, int]], list[int]]:
    """The elements of the array at `start`, decoded lazily, each with the index after its text; and a
    cell holding the index after the array once the iterator is exhausted."""
    end = [start]

    def walk() -> Iterator[tuple[Any, int]]:
        at = _skip(text, start + 1)
        if text[at : at + 1] == "]":
            end[0] = at + 1
            return
        while True:
            value, at = _DECODER.raw_decode(text, at)
            yield value, at
            after = text[at : at + 1]
            if after not in ",]":  # whitespace (or the end: `after` empty, `_skip` finds nothing)
                at = _skip(text, at)
                after = text[at : at + 1]
            if after == "]":
                end[0] = at + 1
                return
            if after != ",":
                raise ValueError("expected ',' or ']'")
            at += 1
            if text[at : at + 1] in _WHITESPACE:  # compact JSON (what the API server sends) has none
                at = _skip(text, at)

    return walk(), end


def _skip(text: str, at: int) -> int:
    match = _SPACE.match(text, at)
    return match.end() if match else at


def _end(text: str, at: int, page: dict[str, Any]) -> dict[str, Any]:
    if _skip(text, at) != len(text):
        raise ValueError("extra data after the object")
    return page


def object_count(page: Mapping[str, Any]) -> int | None:
    """Objects in the whole list, from its first page (None when the server does not say: a list with a
    field or label selector carries no `remainingItemCount`; or when the page's items are still text)."""
    metadata = page.get("metadata") or {}
    listed = page.get("items") or []
    if not isinstance(listed, list):
        return None
    items = len(listed)
    if not metadata.get("continue"):
        return items
    remaining = metadata.get("remainingItemCount")
    return items + remaining if isinstance(remaining, int) else None
