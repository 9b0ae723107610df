"""Every knob of a pass, resolved once from config file, environment and flags, then frozen.

A CronJob pass cannot ask anyone about a bad setting, so all of them are checked here, before the first
request: the file against the packaged JSON Schema, then every value (whatever its source) against the
same rules. Each error is one line naming where the value came from (the file and key path, the
environment variable or the flag), so the Job's log says exactly what to fix. The rest of the program
only ever sees a `Settings`, never the raw sources.

Precedence: flags > environment (`KUBE_REHASH_*`) > config file > defaults (docs/configuration.md). What
each setting is, its default, key, variable, flag and rules: the table in reconcile/settings/.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from difflib import get_close_matches
from importlib import resources
from typing import TYPE_CHECKING, Any, cast

import yaml

from reconcile.errors import ConfigError
from reconcile.model.kinds import BUILTIN_KINDS, Health, Kind
from reconcile.model.knobs import Evidence, Knob, PodSelection, SpecReference
from reconcile.settings.rows import ENV_PREFIX
from reconcile.settings.table import ATTRIBUTES, BY_NAME, TABLE, Settings
from reconcile.settings.values import Shard, integer, parse_shard

if TYPE_CHECKING:
    import jsonschema

CONFIG_ENV = ENV_PREFIX + "CONFIG"
SHARDS_ENV = BY_NAME["shards"].env
JOB_INDEX_ENV = "JOB_COMPLETION_INDEX"

_MAX_MESSAGE = 240
_APART = frozenset({"shard"})  # resolved by _resolve_shard, with `shards` and JOB_COMPLETION_INDEX
_INDEX = integer(minimum=0)

__all__ = ["ENV_PREFIX", "Settings", "Shard", "load_schema", "load_settings"]


# --- the config file --------------------------------------------------------------------------------


class _StrictLoader(yaml.SafeLoader):
    """SafeLoader that rejects duplicate mapping keys instead of silently keeping the last one, and reads
    only `true` and `false` as booleans (YAML 1.1 also takes yes/no/on/off: they stay strings, so a boolean
    setting given one is a named error, as for annotations and the environment)."""


_BOOL = "tag:yaml.org,2002:bool"
_StrictLoader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != _BOOL]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
_StrictLoader.add_implicit_resolver(_BOOL, re.compile(r"^(?:true|false)$"), list("tf"))


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
        if "references" in path:
            return _format_path(path), "name exactly one of secret or configMap"
        return _format_path(path), "set exactly one of podTemplate or annotations"
    if error.validator == "pattern" and isinstance(error.instance, str):
        field_name = next((t for t in reversed(path) if isinstance(t, str)), "")
        check = _PATTERN_CHECKS.get(field_name)
        problem = check(error.instance) if check else None
        return _format_path(path), problem or f"{error.instance!r} does not match {error.validator_value}"
    if error.validator == "type" and error.validator_value == "boolean":
        quoted = " (write true or false unquoted)" if error.instance in ("true", "false") else ""
        return _format_path(path), f"{error.instance!r} is not a boolean (true or false){quoted}"
    return _format_path(path) or "(top level)", error.message


_PATTERN_CHECKS: dict[str, Callable[[str], str | None]] = {
    row.key[-1]: row.value.check for row in TABLE if row.key is not None and row.value.check is not None
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
    import jsonschema  # only a config file needs it: a pass at the defaults starts ~60 ms sooner

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
            kind = _custom_kind(entry)
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


def _custom_kind(entry: Mapping[str, Any]) -> Kind:
    """One `customKinds` entry (the schema checked its shape): where it keeps its pod template or
    annotations map, the sources its own spec names, its restart knob, its pods and its evidence."""
    restart = entry.get("restart", {})
    pods = entry.get("pods")
    verify = entry.get("verify", {})
    references = tuple(
        SpecReference(
            "secret" if "secret" in ref else "configmap",
            ref.get("secret", ref.get("configMap")),
            key=ref.get("key"),
            key_field=ref.get("keyField"),
            optional=ref.get("optional", False),
        )
        for ref in entry.get("references", ())
    )
    return Kind(
        entry["group"],
        entry["version"],
        entry["resource"],
        entry.get("namespaced", True),
        kind=entry["kind"],
        template=entry.get("podTemplate"),
        annotations=entry.get("annotations"),
        suspend=entry.get("suspend"),
        paused=entry.get("paused"),
        health=Health(entry["health"]) if "health" in entry else None,
        knob=Knob(restart.get("mode", Knob.HASH.value)),
        knob_key=restart.get("key"),
        knob_value=restart.get("value", "true"),
        knob_field=restart.get("field"),
        owner_honours_knob=restart.get("ownerHonoursIt", False),
        spec_references=references,
        pod_specs=tuple(entry.get("podSpecs", ())),
        pod_selection=PodSelection(pods.get("selector"), pods.get("labels"), pods.get("owned", False))
        if pods is not None
        else None,
        evidence=Evidence(verify["evidence"]) if "evidence" in verify else None,
        evidence_field=verify.get("field"),
    )


# --- resolution ----------------------------------------------------------------------------------------


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
            return parse_shard(value), where
        except ValueError as exc:
            raise ConfigError(f"{where}: {exc}") from None
    count_where = ""
    count = 1
    if env.get(SHARDS_ENV, "").strip():
        count_where = SHARDS_ENV
        try:
            count = cast(int, BY_NAME["shards"].value.parse(env[SHARDS_ENV], True))
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
        index = cast(int, _INDEX.parse(raw_index, True))
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
    unknown = sorted(set(flags) - {row.name for row in ATTRIBUTES})
    if unknown:
        raise TypeError(f"load_settings: unknown flag keys {unknown}")

    path = config_file if config_file is not None else (env.get(CONFIG_ENV, "").strip() or None)
    document = _read_config(path) if path is not None else {}
    custom = _custom_kinds(cast(str, path), document.get("customKinds", [])) if document else ()

    values: dict[str, object] = {}
    origin: dict[str, str] = {}
    for spec in ATTRIBUTES:
        if spec.name in _APART:
            continue
        raw: object
        from_text = False
        if flags.get(spec.name) is not None:
            raw, where = flags[spec.name], spec.flag_name
        elif env.get(spec.env, "").strip():
            raw, where, from_text = env[spec.env], spec.env, True
        elif spec.key is not None and _has(document, spec.key):
            raw, where = _get(document, spec.key), f"{path}: {'.'.join(spec.key)}"
        else:
            continue
        try:
            values[spec.name] = spec.value.parse(raw, from_text)
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
        if values.get("hash_key_secret") is not None:
            raise ConfigError(
                f"{origin['hash_key_secret']}: give the hash key by a file ({origin['hash_key_file']}) or "
                "by a Secret, not both"
            )

    shard, _ = _resolve_shard(path, document, env, flags)
    try:
        return Settings.of(**values, shard=shard)
    except ValueError as exc:  # every value was checked above; kept as a safety net
        raise ConfigError(_one_line(str(exc))) from exc


def check_pass_scope(settings: Settings) -> None:
    """Refuse a pass whose settings cannot be honoured together (explain reads one workload by name, so
    it is not asked). `namespaceSelector` lists the cluster's namespaces: a namespaced install (its
    namespaces given with `namespaces` or -n, a Role in each) may not, and its scope is already a list."""
    if settings.scope.namespace_selector and settings.scope.namespaces:
        raise ConfigError(
            "namespaceSelector (--namespace-selector): a cluster-scope setting (it lists namespaces), "
            f"refused in a namespaced pass (namespaces / -n: {', '.join(settings.scope.namespaces)}); give "
            "one or the other, and leave namespaces out with excludeNamespaces"
        )


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
