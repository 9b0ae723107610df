"""Label and field selectors as the API server parses them from `labelSelector`/`fieldSelector`.

Selectors are parsed once per request into predicates over an object dict. Syntax errors and
unsupported field labels are 400 BadRequest, as on a real server.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from .errors import ApiError

Predicate = Callable[[Mapping[str, Any]], bool]

_KEY_RE = re.compile(
    r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$"
)
_VALUE_RE = re.compile(r"^([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?$")


@dataclass(frozen=True)
class Requirement:
    """One label requirement: `key op values` (values empty for exists/!exists)."""

    key: str
    op: str  # "=", "!=", "in", "notin", "exists", "!", "gt", "lt"
    values: tuple[str, ...] = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
        present = self.key in labels
        value = labels.get(self.key)
        if self.op == "exists":
            return present
        if self.op == "!":
            return not present
        if self.op in ("=", "in"):
            return present and value in self.values
        if self.op in ("!=", "notin"):
            return not present or value not in self.values
        if not present:
            return False
        try:
            number = int(value or "")
        except ValueError:
            return False
        limit = int(self.values[0])
        return number > limit if self.op == "gt" else number < limit


def _split_top_level(text: str) -> list[str]:
    """Split on commas that are not inside parentheses."""
    parts: list[str] = []
    depth = 0
    current: list[str] = []
    for ch in text:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append("".join(current))
            current = []
        else:
            current.append(ch)
    parts.append("".join(current))
    return parts


def _check_key(key: str) -> str:
    if not _KEY_RE.match(key):
        raise ApiError(400, f"unable to parse requirement: invalid label key {key!r}")
    return key


def _check_value(value: str) -> str:
    if not _VALUE_RE.match(value):
        raise ApiError(400, f"unable to parse requirement: invalid label value: {value!r}")
    return value


_SET_RE = re.compile(r"^\s*(\S+?)\s+(in|notin)\s*\((.*)\)\s*$")
_CMP_RE = re.compile(r"^\s*([^=!<>\s]+)\s*(==|=|!=|>|<)\s*(\S*)\s*$")


def parse_label_selector(text: str) -> list[Requirement]:
    """Parse `a=b,c!=d,e in (x,y),f notin (z),g,!h,n>3`; raises 400 on bad syntax."""
    requirements: list[Requirement] = []
    if not text.strip():
        return requirements
    for raw in _split_top_level(text):
        part = raw.strip()
        if not part:
            raise ApiError(400, f"unable to parse requirement: found '', expected: identifier in {text!r}")
        match = _SET_RE.match(part)
        if match:
            values = tuple(v.strip() for v in match.group(3).split(","))
            if match.group(3).strip() == "":
                values = ()
            for value in values:
                _check_value(value)
            requirements.append(Requirement(_check_key(match.group(1)), match.group(2), values))
            continue
        match = _CMP_RE.match(part)
        if match:
            key, op, value = match.group(1), match.group(2), match.group(3)
            if op in (">", "<"):
                if not re.fullmatch(r"-?\d+", value):
                    raise ApiError(
                        400,
                        "unable to parse requirement: for 'gt', 'lt' operators, the value must be an "
                        f"integer: {value!r}",
                    )
                requirements.append(Requirement(_check_key(key), "gt" if op == ">" else "lt", (value,)))
            else:
                requirements.append(
                    Requirement(_check_key(key), "!=" if op == "!=" else "=", (_check_value(value),))
                )
            continue
        if part.startswith("!"):
            requirements.append(Requirement(_check_key(part[1:].strip()), "!"))
            continue
        if re.search(r"[\s()=!<>]", part):
            raise ApiError(400, f"unable to parse requirement: invalid syntax in {part!r}")
        requirements.append(Requirement(_check_key(part), "exists"))
    return requirements


def label_predicate(text: str) -> Predicate:
    requirements = parse_label_selector(text)

    def matches(obj: Mapping[str, Any]) -> bool:
        labels = (obj.get("metadata") or {}).get("labels") or {}
        return all(r.matches(labels) for r in requirements)

    return matches


# Field labels each resource supports besides metadata.name and metadata.namespace.
EXTRA_FIELDS: dict[str, tuple[str, ...]] = {"secrets": ("type",)}


def _field_value(obj: Mapping[str, Any], field: str) -> str:
    current: Any = obj
    for part in field.split("."):
        current = current.get(part) if isinstance(current, Mapping) else None
    return "" if current is None else str(current)


def parse_field_selector(text: str, plural: str) -> list[tuple[str, str, str]]:
    """Parse `metadata.name=x,type!=y` into (field, op, value); 400 on syntax or unsupported field."""
    terms: list[tuple[str, str, str]] = []
    if not text.strip():
        return terms
    supported = ("metadata.name", "metadata.namespace", *EXTRA_FIELDS.get(plural, ()))
    for raw in text.split(","):
        part = raw.strip()
        match = re.fullmatch(r"([^=!\s]+)\s*(==|=|!=)\s*(.*)", part)
        if not match:
            raise ApiError(400, f"invalid selector: '{text}'; can't understand '{part}'")
        field, op, value = match.group(1), match.group(2), match.group(3).strip()
        if field not in supported:
            raise ApiError(400, f"field label not supported: {field}")
        terms.append((field, "!=" if op == "!=" else "=", value))
    return terms


def field_predicate(text: str, plural: str) -> Predicate:
    terms = parse_field_selector(text, plural)

    def matches(obj: Mapping[str, Any]) -> bool:
        for field, op, value in terms:
            equal = _field_value(obj, field) == value
            if equal != (op == "="):
                return False
        return True

    return matches
