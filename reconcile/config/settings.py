"""Every knob of a pass, resolved once from config file, environment and flags, then frozen.

A CronJob pass cannot ask anyone about a bad setting, so all of them are checked here, before the first
request: the file against the packaged JSON Schema, then every value (whatever its source) against the
same rules. Each error is one line naming where the value came from (the file and key path, the
environment variable or the flag), so the Job's log says exactly what to fix. The rest of the program
only ever sees a `Settings`, never the raw sources.

Precedence: flags > environment (`KUBE_REHASH_*`) > config file > defaults (docs/configuration.md).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from datetime import timedelta
from difflib import get_close_matches
from functools import cached_property
from importlib import resources
from typing import Any, Literal, cast
from urllib.parse import urlsplit

import jsonschema
import yaml

from reconcile.errors import ConfigError
from reconcile.model.kinds import BUILTIN_KINDS, Kind
from reconcile.model.times import parse_duration
from reconcile.model.windows import RestartWindows, parse_windows

ENV_PREFIX = "KUBE_REHASH_"
CONFIG_ENV = ENV_PREFIX + "CONFIG"
SHARDS_ENV = ENV_PREFIX + "SHARDS"
JOB_INDEX_ENV = "JOB_COMPLETION_INDEX"

COMPAT_MODES = frozenset({"reloader", "wave", "pod-reloader"})
BUILTIN_KIND_NAMES = tuple(k.kind for k in BUILTIN_KINDS)

_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_SHARD = re.compile(r"^\s*(\d+)\s*/\s*(\d+)\s*$")
_MAX_MESSAGE = 240


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


@dataclass(frozen=True)
class Settings:
    """The resolved settings of one pass (see config/default.yaml for what each one means)."""

    prefix: str = "kube-rehash.io"
    namespaces: tuple[str, ...] = ()
    exclude_namespaces: tuple[str, ...] = ()
    kinds: tuple[Kind, ...] = BUILTIN_KINDS
    first_sight: Literal["adopt", "rollout"] = "adopt"
    on_change: Literal["rollout", "notify"] = "rollout"
    max_rollouts: int | None = None
    restart_window: str = ""
    rollout_deadline: timedelta = timedelta(minutes=10)
    fail_on_stalled: bool = False
    compat: frozenset[str] = field(default_factory=frozenset)
    fetch: Literal["auto", "list", "get"] = "auto"
    dry_run: Literal["none", "client", "server"] = "none"
    output: Literal["text", "json"] = "text"
    shard: Shard | None = None
    timeout: float = 240.0
    request_timeout: float = 10.0
    qps: float = 20.0
    concurrency: int = 4
    page_size: int = 500
    hash_key_file: str | None = None
    events: bool = True
    log_format: Literal["text", "json"] = "text"
    verbosity: int = 0
    pushgateway: str | None = None
    kubeconfig: str | None = None
    context: str | None = None

    def __post_init__(self) -> None:
        """Reject impossible values even when a Settings is built directly (tests, other callers)."""
        for spec in _FIELDS:
            try:
                spec.parse(getattr(self, spec.name), False)
            except ValueError as exc:
                raise ValueError(f"{spec.name}: {exc}") from None
        if self.shard is not None and not isinstance(self.shard, Shard):
            raise ValueError(f"shard: {self.shard!r} is not a Shard")
        if not isinstance(self.rollout_deadline, timedelta):
            raise ValueError(f"rollout_deadline: {self.rollout_deadline!r} is not a timedelta")
        if not all(isinstance(k, Kind) for k in self.kinds):
            raise ValueError("kinds: every entry must be a Kind")

    @cached_property
    def restart_windows(self) -> RestartWindows:
        """`restart_window`, parsed once: the windows of workloads without the restart-window annotation."""
        return parse_windows(self.restart_window)


# --- value parsers: (value, from_text) -> typed value, or ValueError naming the problem ---------------

Parser = Callable[[object, bool], object]


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
    if isinstance(value, bool):
        return value
    if from_text and isinstance(value, str):
        text = value.strip().lower()
        if text in ("true", "1", "yes", "on"):
            return True
        if text in ("false", "0", "no", "off"):
            return False
    raise ValueError(f"{_describe(value)} is not a boolean (true or false)")


def _windows(value: object, from_text: bool) -> object:
    """A restart window value (reconcile/model/windows.py); empty means always open."""
    if not isinstance(value, str):
        raise ValueError(f"{_describe(value)} is not a string")
    parse_windows(value)  # a WindowError names the window, the part and the problem
    return value


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
    if mode not in COMPAT_MODES:
        return f"{mode!r} is not one of {', '.join(repr(m) for m in sorted(COMPAT_MODES))}"
    return None


def _check_kind_name(name: str) -> str | None:
    if name not in BUILTIN_KIND_NAMES:
        return f"{name!r} is not a built-in kind ({', '.join(BUILTIN_KIND_NAMES)})"
    return None


def _check_url(url: str) -> str | None:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname or any(c.isspace() for c in url):
        return f"{url!r} is not an http(s) URL"
    return None


def _kinds(value: object, from_text: bool) -> object:
    """Kinds: either Kind objects (a built Settings) or built-in kind names (file, environment, flags)."""
    if isinstance(value, tuple) and all(isinstance(k, Kind) for k in value):
        kind_names = [k.kind for k in value]
        duplicates = sorted({n for n in kind_names if kind_names.count(n) > 1})
        if duplicates:
            raise ValueError(f"kind {duplicates[0]!r} is listed twice")
        return value
    names = cast(tuple[str, ...], _names(_check_kind_name, tuple)(value, from_text))
    return tuple(k for k in BUILTIN_KINDS if k.kind in names)


@dataclass(frozen=True)
class _Field:
    name: str
    parse: Parser
    key: tuple[str, ...] | None  # path in the config file; None when the file cannot set it

    @property
    def env(self) -> str:
        return ENV_PREFIX + self.name.upper()

    @property
    def flag(self) -> str:
        return {"namespaces": "--namespace", "verbosity": "-v"}.get(
            self.name, "--" + self.name.replace("_", "-")
        )


_FIELDS: tuple[_Field, ...] = (
    _Field("prefix", _string(_check_prefix), ("annotationPrefix",)),
    _Field("namespaces", _names(_check_namespace, tuple), ("namespaces",)),
    _Field("exclude_namespaces", _names(_check_namespace, tuple), ("excludeNamespaces",)),
    _Field("kinds", _kinds, ("kinds",)),
    _Field("first_sight", _choice("adopt", "rollout"), ("firstSight",)),
    _Field("on_change", _choice("rollout", "notify"), ("onChange",)),
    _Field("max_rollouts", _number(int, minimum=0, nullable=True), ("maxRollouts",)),
    _Field("restart_window", _windows, ("restartWindow",)),
    _Field("rollout_deadline", _duration, ("rolloutDeadline",)),
    _Field("fail_on_stalled", _boolean, ("failOnStalled",)),
    _Field("compat", _names(_check_compat, frozenset), ("compat",)),
    _Field("fetch", _choice("auto", "list", "get"), ("fetch",)),
    _Field("dry_run", _choice("none", "client", "server"), None),
    _Field("output", _choice("text", "json"), None),
    _Field("timeout", _number(float, exclusive_minimum=0), ("timeout",)),
    _Field("request_timeout", _number(float, exclusive_minimum=0), ("requestTimeout",)),
    _Field("qps", _number(float, minimum=0), ("qps",)),
    _Field("concurrency", _number(int, minimum=1, maximum=32), ("concurrency",)),
    _Field("page_size", _number(int, minimum=1, maximum=5000), ("pageSize",)),
    _Field("hash_key_file", _string(nullable=True), ("hashKeyFile",)),
    _Field("events", _boolean, ("events",)),
    _Field("log_format", _choice("text", "json"), ("logging", "format")),
    _Field("verbosity", _number(int, minimum=0, maximum=10), ("logging", "verbosity")),
    _Field("pushgateway", _string(_check_url, nullable=True), ("pushgateway",)),
    _Field("kubeconfig", _string(nullable=True), None),
    _Field("context", _string(nullable=True), None),
)
_BY_NAME = {spec.name: spec for spec in _FIELDS}
assert set(_BY_NAME) | {"shard"} == {f.name for f in fields(Settings)}


# --- the config file --------------------------------------------------------------------------------


class _StrictLoader(yaml.SafeLoader):
    """SafeLoader that rejects duplicate mapping keys instead of silently keeping the last one."""


def _mapping_without_duplicates(loader: _StrictLoader, node: yaml.MappingNode) -> dict[Any, Any]:
    seen: set[Any] = set()
    for key_node, _ in node.value:
        key = loader.construct_object(key_node)
        if key in seen:
            mark = key_node.start_mark
            raise yaml.constructor.ConstructorError(None, None, f"duplicate key {key!r}", mark)
        seen.add(key)
    return loader.construct_mapping(node)


_StrictLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _mapping_without_duplicates)


def load_schema() -> dict[str, Any]:
    """The config file's JSON Schema, from the copy packaged with the code."""
    text = resources.files("reconcile").joinpath("data/schema.json").read_text(encoding="utf-8")
    return cast(dict[str, Any], json.loads(text))


def _one_line(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _MAX_MESSAGE else text[: _MAX_MESSAGE - 3] + "..."


def _format_path(path: list[str | int] | tuple[str | int, ...]) -> str:
    out = ""
    for token in path:
        out += f"[{token}]" if isinstance(token, int) else (f".{token}" if out else str(token))
    return out


def _schema_problem(error: jsonschema.ValidationError) -> tuple[str, str]:
    """(field path, problem) for one schema error, reworded where jsonschema's text is unhelpful."""
    path: list[str | int] = list(error.absolute_path)
    if error.validator == "additionalProperties" and isinstance(error.instance, dict):
        known = list(cast(dict[str, Any], error.schema).get("properties", {}))
        unknown = sorted(str(k) for k in error.instance if k not in known)
        key = unknown[0] if unknown else "?"
        close = get_close_matches(key, known, n=1)
        hint = f"; did you mean {close[0]!r}?" if close else f"; known keys: {', '.join(known)}"
        return _format_path([*path, key]), "unknown key" + hint
    if error.validator == "oneOf" and path and path[0] == "customKinds":
        return _format_path(path), "set exactly one of podTemplate or annotations"
    if error.validator == "pattern" and isinstance(error.instance, str):
        field_name = next((t for t in reversed(path) if isinstance(t, str)), "")
        check = _PATTERN_CHECKS.get(field_name)
        problem = check(error.instance) if check else None
        return _format_path(path), problem or f"{error.instance!r} does not match {error.validator_value}"
    return _format_path(path) or "(top level)", error.message


_PATTERN_CHECKS: dict[str, Callable[[str], str | None]] = {
    "annotationPrefix": _check_prefix,
    "namespaces": _check_namespace,
    "excludeNamespaces": _check_namespace,
    "pushgateway": _check_url,
    "rolloutDeadline": _check_duration,
}


def _read_config(path: str) -> dict[str, Any]:
    try:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read the config file: {exc.strerror or exc}") from exc
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: the config file is not UTF-8 text") from exc
    try:
        document = yaml.load(text, Loader=_StrictLoader)  # noqa: S506 - a SafeLoader subclass
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        raise ConfigError(_one_line(f"{path}: invalid YAML{where}: {exc.problem or exc}")) from exc
    except yaml.YAMLError as exc:
        raise ConfigError(_one_line(f"{path}: invalid YAML: {exc}")) from exc
    if document is None:
        return {}
    if not isinstance(document, dict):
        raise ConfigError(
            f"{path}: the top level must be a mapping of settings, not {type(document).__name__}"
        )
    validator = jsonschema.Draft202012Validator(load_schema())
    error = jsonschema.exceptions.best_match(validator.iter_errors(document))
    if error is not None:
        where, problem = _schema_problem(error)
        raise ConfigError(_one_line(f"{path}: {where}: {problem}"))
    return document


def _custom_kinds(path: str, entries: list[dict[str, Any]]) -> tuple[Kind, ...]:
    kinds: list[Kind] = []
    for i, entry in enumerate(entries):
        where = f"{path}: customKinds[{i}]"
        try:
            kind = Kind(
                entry["group"],
                entry["version"],
                entry["resource"],
                entry.get("namespaced", True),
                kind=entry["kind"],
                template=entry.get("podTemplate"),
                annotations=entry.get("annotations"),
                suspend=entry.get("suspend"),
                paused=entry.get("paused"),
            )
        except ValueError as exc:
            raise ConfigError(_one_line(f"{where}: {exc}")) from exc
        for other in (*BUILTIN_KINDS, *kinds):
            same_resource = (other.group, other.plural) == (kind.group, kind.plural)
            if same_resource or other.kind == kind.kind:
                what = "built-in" if other in BUILTIN_KINDS else "custom"
                raise ConfigError(
                    f"{where}: {kind.kind} ({kind.plural}) clashes with the {what} kind {other.kind}"
                )
        kinds.append(kind)
    return tuple(kinds)


# --- resolution ----------------------------------------------------------------------------------------


def _parse_shard(text: object) -> Shard:
    match = _SHARD.match(text) if isinstance(text, str) else None
    if not match:
        raise ValueError(f"{_describe(text)} is not of the form I/N (0-based index I of N shards)")
    index, count = int(match.group(1)), int(match.group(2))
    if count < 1:
        raise ValueError(f"{text!r}: the shard count must be at least 1")
    if index >= count:
        raise ValueError(f"{text!r}: the index must be below the count (0 <= I < N)")
    return Shard(index, count)


def _resolve_shard(
    config_path: str | None, document: Mapping[str, Any], env: Mapping[str, str], flags: Mapping[str, object]
) -> tuple[Shard | None, str]:
    """The shard and where it came from: --shard, KUBE_REHASH_SHARD, or shards + JOB_COMPLETION_INDEX."""
    candidates: list[tuple[object, str]] = []
    if flags.get("shard") is not None:
        candidates.append((flags["shard"], "--shard"))
    if env.get(ENV_PREFIX + "SHARD", "").strip():
        candidates.append((env[ENV_PREFIX + "SHARD"], ENV_PREFIX + "SHARD"))
    for value, where in candidates:
        if isinstance(value, Shard):
            return value, where
        try:
            return _parse_shard(value), where
        except ValueError as exc:
            raise ConfigError(f"{where}: {exc}") from None
    count_where = ""
    count = 1
    if env.get(SHARDS_ENV, "").strip():
        count_where = SHARDS_ENV
        try:
            count = cast(int, _number(int, minimum=1, maximum=1000)(env[SHARDS_ENV], True))
        except ValueError as exc:
            raise ConfigError(f"{SHARDS_ENV}: {exc}") from None
    elif "shards" in document:
        count, count_where = document["shards"], f"{config_path}: shards"
    if count <= 1:
        return None, ""
    raw_index = env.get(JOB_INDEX_ENV, "").strip()
    if not raw_index:
        raise ConfigError(
            f"{count_where}: {count} shards need {JOB_INDEX_ENV} (set in an Indexed Job) or --shard I/{count}"
        )
    try:
        index = cast(int, _number(int, minimum=0)(raw_index, True))
    except ValueError as exc:
        raise ConfigError(f"{JOB_INDEX_ENV}: {exc}") from None
    if index >= count:
        raise ConfigError(f"{JOB_INDEX_ENV}: {index} is not below the shard count {count} ({count_where})")
    return Shard(index, count), f"{JOB_INDEX_ENV} with {count_where}"


def _check_key_file(path: str, where: str) -> None:
    try:
        with open(path, "rb") as handle:
            first = handle.read(1)
    except IsADirectoryError:
        raise ConfigError(f"{where}: {path} is a directory, not a key file") from None
    except OSError as exc:
        raise ConfigError(f"{where}: cannot read the hash key file {path}: {exc.strerror or exc}") from None
    if not first:
        raise ConfigError(f"{where}: the hash key file {path} is empty")


def load_settings(
    *, config_file: str | None, env: Mapping[str, str], flags: Mapping[str, object]
) -> Settings:
    """Resolve the settings of one pass: flags > environment > config file > defaults.

    `config_file` is the `--config` flag; without it `KUBE_REHASH_CONFIG` names the file; without both only
    defaults, environment and flags apply. `env` is the process environment (`KUBE_REHASH_<FIELD>` per
    field; unrelated variables, including other `KUBE_REHASH_*` names such as Service links, are ignored,
    and an empty value counts as unset). `flags` holds only the flags the user gave, keyed by Settings
    field name, with argparse's values; a None value counts as not given. Raises ConfigError with a
    one-line message on any invalid value; an unknown flag key is a programming error (TypeError).
    """
    unknown = sorted(set(flags) - set(_BY_NAME) - {"shard"})
    if unknown:
        raise TypeError(f"load_settings: unknown flag keys {unknown}")

    path = config_file if config_file is not None else (env.get(CONFIG_ENV, "").strip() or None)
    document = _read_config(path) if path is not None else {}
    custom = _custom_kinds(cast(str, path), document.get("customKinds", [])) if document else ()

    values: dict[str, object] = {}
    origin: dict[str, str] = {}
    for spec in _FIELDS:
        raw: object
        from_text = False
        if flags.get(spec.name) is not None:
            raw, where = flags[spec.name], spec.flag
        elif env.get(spec.env, "").strip():
            raw, where, from_text = env[spec.env], spec.env, True
        elif spec.key is not None and _has(document, spec.key):
            raw, where = _get(document, spec.key), f"{path}: {'.'.join(spec.key)}"
        else:
            continue
        try:
            values[spec.name] = spec.parse(raw, from_text)
        except ValueError as exc:
            raise ConfigError(_one_line(f"{where}: {exc}")) from None
        origin[spec.name] = where

    kinds = cast(tuple[Kind, ...], values.get("kinds", BUILTIN_KINDS)) + custom
    if not kinds:
        raise ConfigError(f"{origin.get('kinds', 'kinds')}: at least one kind must be enabled")
    values["kinds"] = kinds

    overlap = sorted(
        set(cast(tuple[str, ...], values.get("namespaces", ())))
        & set(cast(tuple[str, ...], values.get("exclude_namespaces", ())))
    )
    if overlap:
        raise ConfigError(
            f"{origin['exclude_namespaces']}: namespace {overlap[0]!r} is both included "
            f"({origin['namespaces']}) and excluded"
        )

    key_file = values.get("hash_key_file")
    if isinstance(key_file, str):
        _check_key_file(key_file, origin["hash_key_file"])

    shard, _ = _resolve_shard(path, document, env, flags)
    try:
        return Settings(**values, shard=shard)  # type: ignore[arg-type]
    except ValueError as exc:  # every value was checked above; kept as a safety net
        raise ConfigError(_one_line(str(exc))) from exc


def _has(document: Mapping[str, Any], key: tuple[str, ...]) -> bool:
    node: Any = document
    for token in key:
        if not isinstance(node, Mapping) or token not in node:
            return False
        node = node[token]
    return True


def _get(document: Mapping[str, Any], key: tuple[str, ...]) -> object:
    node: Any = document
    for token in key:
        node = node[token]
    return cast(object, node)
