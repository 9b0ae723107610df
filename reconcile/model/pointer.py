"""RFC 6901 JSON pointers: how the kinds table says where a pod template or annotations map lives.

Pure helpers shared by every layer; the same escaping is used to build JSON-patch paths.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def escape_token(token: str) -> str:
    """Escape one reference token (`~` → `~0`, `/` → `~1`)."""
    return token.replace("~", "~0").replace("/", "~1")


def split_pointer(pointer: str) -> list[str]:
    """Split a pointer into unescaped tokens; "" is the whole document."""
    if pointer == "":
        return []
    if not pointer.startswith("/"):
        raise ValueError(f"JSON pointer {pointer!r} must start with '/'")
    return [t.replace("~1", "/").replace("~0", "~") for t in pointer[1:].split("/")]


def join_pointer(*tokens: str) -> str:
    """Build a pointer from unescaped tokens."""
    return "".join("/" + escape_token(t) for t in tokens)


def resolve(document: Any, pointer: str) -> Any:
    """The value at `pointer`, or None when any step is missing or not an object."""
    node = document
    for token in split_pointer(pointer):
        if not isinstance(node, Mapping):
            return None
        node = node.get(token)
        if node is None:
            return None
    return node
