"""RFC 6901 JSON pointers: how the kinds table says where a pod template or annotations map lives; and
field paths, the same with `*` for every item of a list, where a resource's own spec names its sources.

Pure helpers shared by every layer; the same escaping is used to build JSON-patch paths.
"""

from __future__ import annotations

import re
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


# --- field paths: pointers into a resource's own spec, with `*` for every item of a list --------------

EVERY = "*"
"""The token of a field path that stands for every item of a list (on a mapping it is the key `*`)."""
_SEGMENT = re.compile(r"""\.?([^.\[\]"]+)|\[(\*|[0-9]+)\]|\["((?:[^"\\]|\\.)*)"\]""")


def parse_path(path: str) -> tuple[str, ...]:
    """The tokens of a field path, in either spelling: a JSON pointer whose `*` token means every item of
    a list (`/spec/valuesFrom/*/secretKeyRef/name`), or dotted (`spec.valuesFrom[*].secretKeyRef.name`,
    `spec.template.metadata.annotations["pingcap.com/restartedAt"]`, `spec.items[0].name`).
    Raises ValueError naming the path when it is neither."""
    if path.startswith("/"):
        tokens = split_pointer(path)
    else:
        tokens, at = [], 0
        while at < len(path):
            match = _SEGMENT.match(path, at)
            if match is None or (at == 0 and path.startswith(".")):
                raise ValueError(f"field path {path!r}: cannot read it from {path[at:]!r}")
            name, index, quoted = match.groups()
            tokens.append(name if name is not None else index if index is not None else _unquote(quoted))
            at = match.end()
    if not tokens or any(t == "" for t in tokens):
        raise ValueError(f"field path {path!r} names no field")
    return tuple(tokens)


def _unquote(text: str) -> str:
    return re.sub(r"\\(.)", r"\1", text)


def path_pointer(path: str) -> str:
    """The JSON pointer of a field path without `*` (what a patch writes to). Raises ValueError for a path
    with `*`, which names many places."""
    tokens = parse_path(path)
    if EVERY in tokens:
        raise ValueError(f"field path {path!r} names every item of a list; a place to write names one")
    return join_pointer(*tokens)


def resolve_all(document: Any, tokens: tuple[str, ...]) -> list[tuple[str, Any]]:
    """Every (concrete JSON pointer, value) the tokens reach: `*` takes each item of a list, a decimal
    token one item; a missing step reaches nothing (no error: input from the API may have any shape)."""
    found: list[tuple[str, Any]] = [("", document)]
    for token in tokens:
        step: list[tuple[str, Any]] = []
        for where, node in found:
            if isinstance(node, list) and token == EVERY:
                step += [(f"{where}/{i}", item) for i, item in enumerate(node)]
            elif isinstance(node, list) and token.isdecimal() and int(token) < len(node):
                step.append((f"{where}/{token}", node[int(token)]))
            elif isinstance(node, Mapping) and node.get(token) is not None:
                step.append((where + join_pointer(token), node[token]))
        found = step
    return found
