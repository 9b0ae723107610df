"""Server-side field validation (`fieldValidation=Strict|Warn|Ignore`) of the built-in kinds.

Why: kubectl validates a manifest by asking the server to (it sends `fieldValidation=Strict` once the OpenAPI
document lists the parameter), so a misspelt field must fail here as on kube-apiserver: 400 BadRequest,
`... strict decoding error: unknown field "spec.replica"`; `Warn` (the server's default) answers with a
`Warning` header per unknown field instead; `Ignore` says nothing; both drop the unknown fields. Custom
resources are not checked (the simulator has no schema for them; their CRDs would decide).
"""

from __future__ import annotations

from typing import Any

from . import schema
from .errors import ApiError

STRICT = "Strict"
WARN = "Warn"
IGNORE = "Ignore"
DIRECTIVES = (IGNORE, WARN, STRICT)


# The options kind kube-apiserver names when a write's query is invalid.
OPTIONS = {"POST": "CreateOptions", "PUT": "UpdateOptions", "PATCH": "PatchOptions"}


def directive(query: dict[str, str], method: str) -> str:
    """The request's directive (`Warn` when absent); 422 for another value, as kube-apiserver answers."""
    value = query.get("fieldValidation") or WARN
    if value in DIRECTIVES:
        return value
    supported = 'supported values: "", "Ignore", "Strict", "Warn"'
    cause = f'Unsupported value: "{value}": {supported}'
    options = OPTIONS.get(method, "CreateOptions")
    raise ApiError(
        422,
        f'{options}.meta.k8s.io "" is invalid: fieldValidation: {cause}',
        details={
            "group": "meta.k8s.io",
            "kind": options,
            "causes": [{"reason": "FieldValueNotSupported", "message": cause, "field": "fieldValidation"}],
        },
    )


Unknown = list[tuple[str, dict[str, Any], str]]  # (path, the object holding the field, its key)


def unknown_fields(obj: dict[str, Any], previous: dict[str, Any] | None = None) -> Unknown:
    """The fields of a built-in object its kind does not have, in document order. With `previous` (the
    stored object a patch changed), parts equal to it are not walked again: they were checked when written."""
    table = schema.load()
    definition = table.definition(str(obj.get("apiVersion", "")), str(obj.get("kind", "")))
    if definition is None:
        return []
    found: Unknown = []
    _walk(obj, definition, "", found, previous, top=True)
    return found


def _walk(
    value: Any, definition: str, path: str, found: Unknown, previous: Any, *, top: bool = False
) -> None:
    table = schema.load()
    if definition in table.special or not isinstance(value, dict):
        return
    members = table.json_fields(definition)
    before = previous if isinstance(previous, dict) else {}
    for key, item in value.items():
        was = before.get(key)
        if was is not None and was == item:
            continue
        here = f"{path}.{key}" if path else key
        f = members.get(key)
        if f is None:
            if not (top and key in ("apiVersion", "kind")):
                found.append((here, value, key))
        elif f.map is not None:
            if isinstance(item, dict):
                old = was if isinstance(was, dict) else {}
                for name, element in item.items():
                    _walk(element, f.map, f"{here}[{name}]", found, old.get(name))
        elif f.list:
            if isinstance(item, list):
                old_items = was if isinstance(was, list) else []
                for index, element in enumerate(item):
                    old_item = old_items[index] if index < len(old_items) else None
                    _walk(element, f.type, f"{here}[{index}]", found, old_item)
        elif f.type not in schema.SCALARS:
            _walk(item, f.type, here, found, was)


def check(
    obj: dict[str, Any],
    mode: str,
    warnings: list[str],
    *,
    decoded: bool = True,
    previous: dict[str, Any] | None = None,
) -> None:
    """Apply `mode` to `obj`: raise for Strict; otherwise drop the unknown fields, as the server's decoder
    does, with a warning for each under Warn. `decoded`: `obj` is a request body (POST, PUT), whose error
    names the kind as kube-apiserver's decoder does."""
    unknown = unknown_fields(obj, previous)
    if not unknown:
        return
    paths = [path for path, _, _ in unknown]
    if mode == STRICT:
        message = "strict decoding error: " + ", ".join(f'unknown field "{p}"' for p in paths)
        if decoded:
            kind, version = obj.get("kind"), str(obj.get("apiVersion", "")).rpartition("/")[2]
            message = f'{kind} in version "{version}" cannot be handled as a {kind}: {message}'
        raise ApiError(400, message)
    for _, holder, key in unknown:
        holder.pop(key, None)
    if mode == WARN:
        warnings.extend(f'unknown field "{p}"' for p in paths)
