"""One stored version of an object, with its serialized forms cached.

Serializing is the expensive part of serving lists; an entry is immutable, so each of its three JSON
forms (single object, list item, metadata-only item) is computed at most once per stored version.
"""

from __future__ import annotations

import json
from typing import Any

from .objects import Obj
from .resources import ResourceType


def dumps(value: Any) -> bytes:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode()


class Entry:
    """One stored version of an object; never mutated, serialized forms computed lazily and cached."""

    __slots__ = ("_full", "_item", "_meta", "obj", "rtype", "rv")

    def __init__(self, rtype: ResourceType, obj: Obj) -> None:
        self.rtype = rtype
        self.obj = obj
        self.rv = int(obj["metadata"].get("resourceVersion") or 0)
        self._full: bytes | None = None
        self._item: bytes | None = None
        self._meta: bytes | None = None

    @property
    def full(self) -> bytes:
        """The object as a single GET returns it (with apiVersion and kind)."""
        if self._full is None:
            self._full = dumps(self.obj)
        return self._full

    @property
    def item(self) -> bytes:
        """The object as a list item: built-in types drop apiVersion/kind, custom resources keep them."""
        if self._item is None:
            if self.rtype.group in ("", "apps", "batch"):
                self._item = dumps({k: v for k, v in self.obj.items() if k not in ("apiVersion", "kind")})
            else:
                self._item = self.full
        return self._item

    @property
    def meta(self) -> bytes:
        """The object as a PartialObjectMetadata (list item or single GET)."""
        if self._meta is None:
            self._meta = dumps(
                {
                    "kind": "PartialObjectMetadata",
                    "apiVersion": "meta.k8s.io/v1",
                    "metadata": self.obj["metadata"],
                }
            )
        return self._meta

    def copy(self) -> Obj:
        value: Obj = json.loads(self.full)
        return value
