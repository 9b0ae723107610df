"""Kubernetes label selectors as text (`team=payments,tier in (web,api),!legacy`), parsed once, pure.

Two features take one: `namespaceSelector` (which namespaces a pass covers) and the workload annotations
`kube-rehash.io/configmap-selector` / `secret-selector` (which sources a workload depends on). Both send
the selector to the API server as a list's `labelSelector`, so the server does the matching; this parser
rejects bad syntax before any request (a setting: exit 2; an annotation: that workload fails), gives the
canonical text that names a shared list, and matches labels where the pass already holds them.

The grammar is the API server's, less the `gt`/`lt` operators (numeric comparisons make no sense for
choosing sources): requirements joined by `,` (AND), each `key=value`, `key==value`, `key!=value`,
`key in (v1,v2)`, `key notin (v1)`, `key` (exists) or `!key` (does not exist).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

Operator = Literal["=", "!=", "in", "notin", "exists", "!"]

_NAME = r"[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?"
_PREFIX = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*"
_KEY = re.compile(rf"({_PREFIX}/)?{_NAME}")
_VALUE = re.compile(rf"({_NAME})?")
_SET = re.compile(r"(\S+)\s+(in|notin)\s*\((.*)\)")
_EQUALITY = re.compile(r"([^=!\s]+)\s*(==|=|!=)\s*(\S*)")


class SelectorError(ValueError):
    """A label selector that cannot be parsed; the message names the requirement and the problem."""


@dataclass(frozen=True, order=True)
class Requirement:
    """One requirement: `key op values` (values empty for exists and `!`)."""

    key: str
    op: Operator
    values: tuple[str, ...] = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
        if self.op == "exists":
            return self.key in labels
        if self.op == "!":
            return self.key not in labels
        if self.op in ("=", "in"):
            return self.key in labels and labels[self.key] in self.values
        return self.key not in labels or labels[self.key] not in self.values

    @property
    def text(self) -> str:
        if self.op == "exists":
            return self.key
        if self.op == "!":
            return f"!{self.key}"
        if self.op in ("=", "!="):
            return f"{self.key}{self.op}{self.values[0]}"
        return f"{self.key} {self.op} ({','.join(self.values)})"


@dataclass(frozen=True)
class LabelSelector:
    """Requirements that must all hold, sorted and deduplicated: equal selectors have equal `text`."""

    requirements: tuple[Requirement, ...]

    def matches(self, labels: Mapping[str, str]) -> bool:
        return all(r.matches(labels) for r in self.requirements)

    @property
    def text(self) -> str:
        """The canonical form: what a list sends as `labelSelector`, and the name of that list."""
        return ",".join(r.text for r in self.requirements)


def split_requirements(text: str) -> list[str]:
    """Split on the commas outside parentheses."""
    parts: list[str] = []
    depth = 0
    current: list[str] = []
    for char in text:
        depth += {"(": 1, ")": -1}.get(char, 0)
        if depth < 0 or depth > 1:
            raise SelectorError(f"{text!r}: unbalanced parentheses")
        if char == "," and depth == 0:
            parts.append("".join(current))
            current = []
        else:
            current.append(char)
    if depth:
        raise SelectorError(f"{text!r}: unbalanced parentheses")
    parts.append("".join(current))
    return parts


def check_key(key: str, part: str) -> str:
    if len(key) > 317 or not _KEY.fullmatch(key):
        raise SelectorError(f"{part!r}: {key!r} is not a valid label key")
    return key


def check_value(value: str, part: str) -> str:
    if not _VALUE.fullmatch(value):
        raise SelectorError(f"{part!r}: {value!r} is not a valid label value")
    return value


def parse_requirement(part: str) -> Requirement:
    """One requirement of a selector, from its stripped text."""
    match = _SET.fullmatch(part)
    if match:
        key, op, inner = match.groups()
        values = [v.strip() for v in inner.split(",")]
        if not inner.strip():
            raise SelectorError(f"{part!r}: an {op} requirement needs at least one value")
        checked = tuple(sorted({check_value(v, part) for v in values}))
        return Requirement(check_key(key, part), "in" if op == "in" else "notin", checked)
    match = _EQUALITY.fullmatch(part)
    if match:
        key, op, value = match.groups()
        return Requirement(check_key(key, part), "!=" if op == "!=" else "=", (check_value(value, part),))
    if part.startswith("!"):
        return Requirement(check_key(part[1:].strip(), part), "!")
    if re.search(r"[\s()=!<>]", part):
        raise SelectorError(f"{part!r}: not a requirement (key, !key, key=value, key!=value, key in (...))")
    return Requirement(check_key(part, part), "exists")


def parse_selector(text: str) -> LabelSelector:
    """Parse a label selector; raises SelectorError on bad syntax, and on an empty one (it would select
    every object: an empty setting is written "", not parsed)."""
    if not text.strip():
        raise SelectorError("an empty selector would select everything")
    requirements: set[Requirement] = set()
    for raw in split_requirements(text):
        part = raw.strip()
        if not part:
            raise SelectorError(f"{text!r}: an empty requirement (two commas, or one at an end)")
        requirements.add(parse_requirement(part))
    return LabelSelector(tuple(sorted(requirements)))
