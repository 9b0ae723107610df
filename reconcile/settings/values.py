"""The kinds of value a setting can hold: each one a parser and the JSON Schema fragment of the same rules.

Why together: a constraint (a minimum, a pattern, the choices) is written once, where both the loader's check
and the generated config/schema.json take it from (reconcile/settings/ builds the table from these).
A parser takes `(value, from_text)` (`from_text`: the value is text from the environment) and returns the
typed value or raises ValueError naming the problem.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import timedelta
from enum import StrEnum
from typing import Any, cast
from urllib.parse import urlsplit

from reconcile.model.kinds import Health, Kind
from reconcile.model.knobs import Evidence, Knob
from reconcile.model.presets import KNOWN_KINDS
from reconcile.model.references import COMPAT_NAMES
from reconcile.model.selectors import parse_selector
from reconcile.model.times import parse_duration
from reconcile.model.windows import parse_windows

BUILTIN_KIND_NAMES = tuple(k.kind for k in KNOWN_KINDS)
"""The kinds `kinds` may name: the built-in ones and the presets (model/kinds.py)."""

_LABEL = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_SUBDOMAIN = rf"{_LABEL}(\.{_LABEL})*"
_DNS_LABEL = re.compile(rf"^{_LABEL}$")
_DNS_SUBDOMAIN = re.compile(rf"^{_SUBDOMAIN}$")
_SECRET_REF = rf"^{_LABEL}/{_SUBDOMAIN}$"
_SECRET_KEY = re.compile(r"^[-._a-zA-Z0-9]+$")
_URL = r"^https?://[^/\s]+(/\S*)?$"
_DURATION = r"^\s*([0-9]+(\.[0-9]+)?[dhmsDHMS])+\s*$"
_SHARD = re.compile(r"^\s*(\d+)\s*/\s*(\d+)\s*$")

Parser = Callable[[object, bool], object]
Check = Callable[[str], "str | None"]


@dataclass(frozen=True)
class Value:
    """How one setting's value is checked: `parse` for every source, `schema` for the config file's key."""

    parse: Parser
    schema: Mapping[str, Any] = field(default_factory=dict)
    check: Check | None = None
    """The text check behind a schema `pattern`, so a file's error reads as the flag's or variable's would."""


def _describe(value: object) -> str:
    return repr(value) if isinstance(value, str) else json.dumps(value, default=str)


def _choice(*choices: str) -> Parser:
    def parse(value: object, from_text: bool) -> object:
        if isinstance(value, str) and value in choices:
            return value
        options = ", ".join(repr(c) for c in choices)
        raise ValueError(f"{_describe(value)} is not one of {options}")

    return parse


def _number(
    kind: type[int] | type[float],
    *,
    minimum: float | None = None,
    maximum: float | None = None,
    exclusive_minimum: float | None = None,
    nullable: bool = False,
) -> Parser:
    def parse(value: object, from_text: bool) -> object:
        if value is None and nullable:
            return None
        if from_text and isinstance(value, str):
            text = value.strip()
            if nullable and text.lower() in ("null", "none"):
                return None
            try:
                value = int(text) if kind is int else float(text)
            except ValueError:
                noun = "an integer" if kind is int else "a number"
                raise ValueError(f"{value!r} is not {noun}") from None
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            noun = "an integer" if kind is int else "a number"
            raise ValueError(f"{_describe(value)} is not {noun}")
        if kind is int and isinstance(value, float):
            if not value.is_integer():
                raise ValueError(f"{value} is not an integer")
            value = int(value)
        if isinstance(value, float) and not math.isfinite(value):
            raise ValueError(f"{value} is not a finite number")
        if minimum is not None and value < minimum:
            raise ValueError(f"{value} is less than the minimum of {minimum:g}")
        if exclusive_minimum is not None and value <= exclusive_minimum:
            raise ValueError(f"{value} is less than or equal to the minimum of {exclusive_minimum:g}")
        if maximum is not None and value > maximum:
            raise ValueError(f"{value} is greater than the maximum of {maximum:g}")
        return kind(value)

    return parse


def _boolean(value: object, from_text: bool) -> object:
    """True or False; as text (the environment) exactly `true` or `false`: `yes`, `1` or `on` are errors,
    not a guess (the same rule as the annotations' booleans and the config file's YAML)."""
    if isinstance(value, bool):
        return value
    if from_text and isinstance(value, str) and value.strip() in ("true", "false"):
        return value.strip() == "true"
    raise ValueError(f"{_describe(value)} is not a boolean (true or false)")


def _windows(value: object, from_text: bool) -> object:
    """A restart window value (reconcile/model/windows.py); empty means always open."""
    if not isinstance(value, str):
        raise ValueError(f"{_describe(value)} is not a string")
    parse_windows(value)  # a WindowError names the window, the part and the problem
    return value


def _selector(value: object, from_text: bool) -> object:
    """A label selector (reconcile/model/selectors.py); empty means none."""
    if not isinstance(value, str):
        raise ValueError(f"{_describe(value)} is not a string")
    if value.strip():
        parse_selector(value)  # a SelectorError names the requirement and the problem
    return value.strip()


def _duration(value: object, from_text: bool) -> object:
    """A positive duration: a timedelta (a built Settings) or text such as `10m` or `1h30m`."""
    if isinstance(value, timedelta):
        duration = value
    elif isinstance(value, str):
        duration = parse_duration(value)
    else:
        raise ValueError(f"{_describe(value)} is not a duration like 10m, 1h30m or 45s")
    if duration <= timedelta(0):
        raise ValueError(f"{_describe(value)} is not a positive duration")
    return duration


def _optional_duration(value: object, from_text: bool) -> object:
    """A positive duration, or null: not set."""
    if value is None or (from_text and isinstance(value, str) and value.strip().lower() in ("null", "none")):
        return None
    return _duration(value, from_text)


def _check_duration(text: str) -> str | None:
    try:
        _duration(text, True)
    except ValueError as exc:
        return str(exc)
    return None


def _string(check: Callable[[str], str | None] | None = None, *, nullable: bool = False) -> Parser:
    def parse(value: object, from_text: bool) -> object:
        if value is None and nullable:
            return None
        if from_text and nullable and isinstance(value, str) and value.strip().lower() in ("null", "none"):
            return None
        if not isinstance(value, str) or not value:
            raise ValueError(f"{_describe(value)} is not a non-empty string")
        problem = check(value) if check else None
        if problem:
            raise ValueError(problem)
        return value

    return parse


def _names(
    item: Callable[[str], str | None], container: type[tuple[Any, ...]] | type[frozenset[Any]]
) -> Parser:
    def parse(value: object, from_text: bool) -> object:
        if from_text and isinstance(value, str):
            value = [part.strip() for part in value.split(",") if part.strip()]
        if isinstance(value, str) or not isinstance(value, (list, tuple, frozenset, set)):
            raise ValueError(f"{_describe(value)} is not a list")
        items: list[str] = []
        for entry in value:
            if not isinstance(entry, str):
                raise ValueError(f"{_describe(entry)} is not a string")
            problem = item(entry)
            if problem:
                raise ValueError(problem)
            if entry in items:
                raise ValueError(f"{entry!r} is listed twice")
            items.append(entry)
        return frozenset(items) if container is frozenset else tuple(items)

    return parse


def _check_namespace(name: str) -> str | None:
    if len(name) > 63 or not _DNS_LABEL.match(name):
        return f"{name!r} is not a valid namespace name (an RFC 1123 label)"
    return None


def _check_prefix(prefix: str) -> str | None:
    if len(prefix) > 253 or not _DNS_SUBDOMAIN.match(prefix):
        return f"{prefix!r} is not a DNS subdomain (lowercase letters, digits, '-' and '.')"
    return None


def _check_compat(mode: str) -> str | None:
    if mode not in COMPAT_NAMES:
        return f"{mode!r} is not one of {', '.join(repr(m) for m in sorted(COMPAT_NAMES))}"
    return None


def _check_kind_name(name: str) -> str | None:
    if name not in BUILTIN_KIND_NAMES:
        return f"{name!r} is not a built-in or preset kind ({', '.join(BUILTIN_KIND_NAMES)})"
    return None


def _check_url(url: str) -> str | None:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname or any(c.isspace() for c in url):
        return f"{url!r} is not an http(s) URL"
    return None


def _check_secret_ref(ref: str) -> str | None:
    namespace, _, name = ref.partition("/")
    if not _check_namespace(namespace) and name and len(name) <= 253 and _DNS_SUBDOMAIN.match(name):
        return None
    return f"{ref!r} is not NAMESPACE/NAME of a Secret"


def _check_secret_key(key: str) -> str | None:
    if len(key) > 253 or not _SECRET_KEY.match(key):
        return f"{key!r} is not a Secret key (letters, digits, '-', '_' and '.')"
    return None


def _seconds(most: float | None) -> Callable[[object, bool], object]:
    """A time in seconds: a number, or a duration such as `30s` or `4m` (as every other duration setting
    takes them); at most `most` seconds."""

    def parse(value: object, from_text: bool) -> object:
        if isinstance(value, str) and not _is_number(value):
            seconds = cast(timedelta, _duration(value, from_text)).total_seconds()
        else:
            number = float(value) if isinstance(value, str) else value  # a flag's text: `--timeout 45`
            seconds = cast(float, _number(float, exclusive_minimum=0)(number, from_text))
        if most is not None and seconds > most:
            raise ValueError(f"{_describe(value)} is more than {_spoken(most)}")
        return seconds

    return parse


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _spoken(seconds: float) -> str:
    return f"{seconds / 60:g} minutes" if seconds >= 60 else f"{seconds:g} seconds"


_QUANTITY = re.compile(r"^\s*([0-9]+)\s*(Ki|Mi|Gi|K|M|G)?\s*$")
_UNITS = {None: 1, "Ki": 1024, "Mi": 1024**2, "Gi": 1024**3, "K": 1000, "M": 1000**2, "G": 1000**3}


def _bytes(value: object, from_text: bool) -> object:
    """A size in bytes: an integer, or a Kubernetes quantity such as `64Mi` or `100M`; null: not given."""
    if value is None or (from_text and isinstance(value, str) and value.strip().lower() in ("null", "none")):
        return None
    if isinstance(value, bool):
        raise ValueError(f"{_describe(value)} is not a size (e.g. 64Mi)")
    if isinstance(value, int):
        size = value
    else:
        match = _QUANTITY.match(str(value)) if isinstance(value, str) else None
        if match is None:
            raise ValueError(f"{_describe(value)} is not a size in bytes or a quantity such as 64Mi")
        size = int(match.group(1)) * _UNITS[match.group(2)]
    if size < 1024 * 1024:
        raise ValueError(f"{_describe(value)} is less than 1Mi")
    return size


def _kinds(value: object, from_text: bool) -> object:
    """Kinds: either Kind objects (a built Settings) or built-in kind names (file, environment, flags)."""
    if isinstance(value, tuple) and all(isinstance(k, Kind) for k in value):
        kind_names = [k.kind for k in value]
        duplicates = sorted({n for n in kind_names if kind_names.count(n) > 1})
        if duplicates:
            raise ValueError(f"kind {duplicates[0]!r} is listed twice")
        return value
    names = cast(tuple[str, ...], _names(_check_kind_name, tuple)(value, from_text))
    return tuple(k for k in KNOWN_KINDS if k.kind in names)


@dataclass(frozen=True)
class Shard:
    """This pod's slice of the workloads: `index` of `count` (0-based)."""

    index: int
    count: int

    def __post_init__(self) -> None:
        for name in ("index", "count"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool):
                raise ValueError(f"shard {name} must be an integer, not {value!r}")
        if self.count < 1:
            raise ValueError(f"shard count {self.count} is less than the minimum of 1")
        if not 0 <= self.index < self.count:
            raise ValueError(f"shard index {self.index} is not in 0..{self.count - 1}")

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


def parse_shard(text: object) -> Shard:
    """`I/N` (0-based index I of N shards)."""
    match = _SHARD.match(text) if isinstance(text, str) else None
    if not match:
        raise ValueError(f"{_describe(text)} is not of the form I/N (0-based index I of N shards)")
    index, count = int(match.group(1)), int(match.group(2))
    if count < 1:
        raise ValueError(f"{text!r}: the shard count must be at least 1")
    if index >= count:
        raise ValueError(f"{text!r}: the index must be below the count (0 <= I < N)")
    return Shard(index, count)


def _shard(value: object, from_text: bool) -> object:
    if value is None or isinstance(value, Shard):
        return value
    return parse_shard(value)


# --- the kinds of value the table uses ----------------------------------------------------------------


def _nullable(kind: str | list[str], nullable: bool) -> str | list[str]:
    if not nullable:
        return kind
    return [*(kind if isinstance(kind, list) else [kind]), "null"]


def choice(*options: str) -> Value:
    """One of `options` (the schema's enum; argparse's choices unless the flag says otherwise)."""
    return Value(_choice(*options), {"enum": list(options)})


def choice_of(options: type[StrEnum]) -> Value:
    """One member of a choice enum (reconcile/model/choices.py), parsed from its text."""
    names = [o.value for o in options]
    parse = _choice(*names)
    return Value(lambda value, from_text: options(str(parse(value, from_text))), {"enum": names})


def integer(*, minimum: int | None = None, maximum: int | None = None, nullable: bool = False) -> Value:
    schema: dict[str, Any] = {"type": _nullable("integer", nullable)}
    schema.update({k: v for k, v in (("minimum", minimum), ("maximum", maximum)) if v is not None})
    return Value(_number(int, minimum=minimum, maximum=maximum, nullable=nullable), schema)


def number(*, minimum: float | None = None, exclusive_minimum: float | None = None) -> Value:
    schema: dict[str, Any] = {"type": "number"}
    if exclusive_minimum is not None:
        schema["exclusiveMinimum"] = exclusive_minimum
    if minimum is not None:
        schema["minimum"] = minimum
    return Value(_number(float, minimum=minimum, exclusive_minimum=exclusive_minimum), schema)


def boolean() -> Value:
    return Value(_boolean, {"type": "boolean"})


def text(check: Check | None = None, *, schema: Mapping[str, Any], nullable: bool = False) -> Value:
    """A non-empty string (`nullable`: or null, also as `null`/`none` text); `schema` is its file rule."""
    return Value(_string(check, nullable=nullable), schema, check)


def names(check: Check, items: Mapping[str, Any], *, unique_set: bool = False) -> Value:
    """A list of distinct names (a comma list in the environment): a tuple, or a frozenset if `unique_set`."""
    container = frozenset if unique_set else tuple
    schema = {"type": "array", "uniqueItems": True, "items": dict(items)}
    return Value(_names(check, container), schema, check)


NAMESPACE = {"$ref": "#/$defs/namespace"}
PREFIX = text(
    _check_prefix,
    schema={"type": "string", "minLength": 1, "maxLength": 253, "pattern": _DNS_SUBDOMAIN.pattern},
)
NAMESPACES = names(_check_namespace, NAMESPACE)
KINDS = Value(_kinds, {"type": "array", "uniqueItems": True, "items": {"enum": list(BUILTIN_KIND_NAMES)}})
COMPAT = names(_check_compat, {"enum": list(COMPAT_NAMES)}, unique_set=True)
WINDOWS = Value(_windows, {"type": "string"})
SELECTOR = Value(_selector, {"type": "string"})
DURATION = Value(_duration, {"type": "string", "pattern": _DURATION}, _check_duration)
OPTIONAL_DURATION = Value(_optional_duration, {"type": ["string", "null"], "pattern": _DURATION})
SECONDS = Value(_seconds(300.0), {"type": ["number", "string"]})
"""A timeout of one call, at most 5 minutes."""
PASS_SECONDS = Value(_seconds(None), {"type": ["number", "string"]})
"""A pass's or a request's time: seconds, or a duration."""
BYTES = Value(
    _bytes,
    {"type": ["integer", "string", "null"], "pattern": r"^\s*[0-9]+\s*(Ki|Mi|Gi|K|M|G)?\s*$"},
)
FILE = text(nullable=True, schema={"type": ["string", "null"], "minLength": 1})
URL = text(_check_url, nullable=True, schema={"type": ["string", "null"], "pattern": _URL})
SECRET_REF = text(_check_secret_ref, nullable=True, schema={"type": "string", "pattern": _SECRET_REF})
OPTIONAL_SECRET_REF = text(
    _check_secret_ref, nullable=True, schema={"type": ["string", "null"], "pattern": _SECRET_REF}
)
"""A Secret reference shown as null in the shipped files (a top-level setting, not inside a null section)."""
SECRET_KEY = text(_check_secret_key, schema={"type": "string", "pattern": _SECRET_KEY.pattern})
NAME = text(nullable=True, schema={"type": "string", "minLength": 1})
SHARD = Value(_shard)

DEFS: dict[str, Any] = {
    "namespace": {"type": "string", "minLength": 1, "maxLength": 63, "pattern": _DNS_LABEL.pattern},
    "pointer": {"description": "An RFC 6901 JSON pointer.", "type": "string", "pattern": "^(/[^/]*)+$"},
    "fieldPath": {
        "description": "A field path: a JSON pointer, or dotted (spec.items[*].name); `*` is every item.",
        "type": "string",
        "minLength": 1,
    },
    "specReference": {
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "secret": {"$ref": "#/$defs/fieldPath"},
            "configMap": {"$ref": "#/$defs/fieldPath"},
            "key": {"type": "string", "pattern": _SECRET_KEY.pattern},
            "keyField": {"type": "string", "minLength": 1},
            "optional": {"type": "boolean"},
        },
        "oneOf": [
            {"required": ["secret"], "not": {"required": ["configMap"]}},
            {"required": ["configMap"], "not": {"required": ["secret"]}},
        ],
    },
    "customKind": {
        "type": "object",
        "additionalProperties": False,
        "required": ["kind", "group", "version", "resource"],
        "properties": {
            "kind": {"type": "string", "pattern": "^[A-Z][A-Za-z0-9]*$"},
            "group": {"type": "string", "pattern": f"^({_SUBDOMAIN})?$"},
            "version": {"type": "string", "pattern": "^v[0-9]+((alpha|beta)[0-9]+)?$"},
            "resource": {"type": "string", "pattern": _DNS_LABEL.pattern},
            "namespaced": {"type": "boolean"},
            "podTemplate": {"$ref": "#/$defs/pointer"},
            "annotations": {"$ref": "#/$defs/pointer"},
            "suspend": {"$ref": "#/$defs/pointer"},
            "paused": {"$ref": "#/$defs/pointer"},
            "health": {"enum": [h.value for h in Health]},
            "podSpecs": {"type": "array", "items": {"$ref": "#/$defs/fieldPath"}},
            "references": {"type": "array", "items": {"$ref": "#/$defs/specReference"}},
            "restart": {
                "type": "object",
                "additionalProperties": False,
                "required": ["mode"],
                "properties": {
                    "mode": {"enum": [k.value for k in Knob]},
                    "key": {"type": "string", "minLength": 1},
                    "value": {"type": "string", "minLength": 1},
                    "field": {"$ref": "#/$defs/fieldPath"},
                    "ownerHonoursIt": {"type": "boolean"},
                },
            },
            "pods": {
                "type": "object",
                "additionalProperties": False,
                "properties": {
                    "selector": {"$ref": "#/$defs/fieldPath"},
                    "labels": {"type": "string", "minLength": 1},
                    "owned": {"type": "boolean"},
                },
            },
            "verify": {
                "type": "object",
                "additionalProperties": False,
                "required": ["evidence"],
                "properties": {
                    "evidence": {"enum": [e.value for e in Evidence]},
                    "field": {"$ref": "#/$defs/fieldPath"},
                },
            },
        },
        "oneOf": [
            {"required": ["podTemplate"], "not": {"required": ["annotations"]}},
            {"required": ["annotations"], "not": {"required": ["podTemplate"]}},
        ],
    },
}
"""The schema's shared definitions: a namespace name, a JSON pointer, a field path, a custom kind and a
reference in its spec."""
CUSTOM_KINDS = Value(
    lambda value, from_text: value, {"type": "array", "items": {"$ref": "#/$defs/customKind"}}
)
