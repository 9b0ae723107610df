"""The four PATCH content types of the Kubernetes API, applied to a plain object dict.

merge-patch (RFC 7386), a strategic merge patch limited to the merge keys kube-rehash and kubectl
touch, JSON patch (RFC 6902) and a simplified server-side apply. Undecodable bodies are 400, patches
that decode but do not apply are 422, unknown content types 415: the codes a real server returns.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import yaml

from .errors import ApiError, patch_rejected

MERGE = "application/merge-patch+json"
STRATEGIC = "application/strategic-merge-patch+json"
JSON_PATCH = "application/json-patch+json"
APPLY = "application/apply-patch+yaml"
SUPPORTED = (JSON_PATCH, MERGE, STRATEGIC, APPLY)

# List fields whose items a strategic merge patch merges by a key instead of replacing the list.
MERGE_KEYS: dict[str, str] = {
    "containers": "name",
    "initContainers": "name",
    "ephemeralContainers": "name",
    "volumes": "name",
    "env": "name",
    "imagePullSecrets": "name",
    "volumeMounts": "mountPath",
    "volumeDevices": "devicePath",
    "ports": "containerPort",
    "hostAliases": "ip",
    "tolerations": "key",
    "ownerReferences": "uid",
}


def media_type(content_type: str | None) -> str:
    return (content_type or "").split(";", 1)[0].strip().lower()


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386: objects merge recursively, null removes, anything else replaces."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    result = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merge_patch(result.get(key), value)
    return result


def strategic_merge(target: Any, patch: Any) -> Any:
    """Strategic merge: maps as in a merge patch; MERGE_KEYS lists merged by key; `$` directives dropped."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    result = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if key.startswith("$"):
            continue
        if key.startswith("$setElementOrder/") or key.startswith("$deleteFromPrimitiveList/"):
            continue
        if value is None:
            result.pop(key, None)
        elif isinstance(value, list) and key in MERGE_KEYS and isinstance(result.get(key), list):
            result[key] = _merge_list(result[key], value, MERGE_KEYS[key])
        else:
            result[key] = strategic_merge(result.get(key), value)
    return result


def _merge_list(current: list[Any], patch: list[Any], merge_key: str) -> list[Any]:
    merged = [copy.deepcopy(item) for item in current]
    for item in patch:
        if not isinstance(item, dict) or merge_key not in item:
            merged.append(copy.deepcopy(item))
            continue
        index = next(
            (
                i
                for i, old in enumerate(merged)
                if isinstance(old, dict) and old.get(merge_key) == item[merge_key]
            ),
            None,
        )
        if item.get("$patch") == "delete":
            if index is not None:
                del merged[index]
        elif index is None:
            merged.append(strategic_merge({}, item))
        else:
            merged[index] = strategic_merge(merged[index], item)
    return merged


def _unescape(token: str) -> str:
    return token.replace("~1", "/").replace("~0", "~")


def _split(path: Any) -> list[str]:
    if not isinstance(path, str):
        raise patch_rejected(f"invalid JSON pointer {path!r}")
    if path == "":
        return []
    if not path.startswith("/"):
        raise patch_rejected(f'doc is missing path: "{path}"')
    return [_unescape(p) for p in path[1:].split("/")]


def _parent(doc: Any, tokens: list[str], path: Any) -> Any:
    current = doc
    for token in tokens[:-1]:
        if isinstance(current, dict) and token in current:
            current = current[token]
        elif isinstance(current, list) and token.isdigit() and int(token) < len(current):
            current = current[int(token)]
        else:
            raise patch_rejected(f'doc is missing path: "{path}": missing value')
    return current


def _get(doc: Any, path: Any) -> Any:
    tokens = _split(path)
    if not tokens:
        return doc
    parent = _parent(doc, tokens, path)
    last = tokens[-1]
    if isinstance(parent, dict) and last in parent:
        return parent[last]
    if isinstance(parent, list) and last.isdigit() and int(last) < len(parent):
        return parent[int(last)]
    raise patch_rejected(f'doc is missing path: "{path}": missing value')


def _add(doc: Any, path: Any, value: Any) -> Any:
    tokens = _split(path)
    if not tokens:
        return value
    parent = _parent(doc, tokens, path)
    last = tokens[-1]
    if isinstance(parent, dict):
        parent[last] = value
    elif isinstance(parent, list):
        if last == "-":
            parent.append(value)
        elif last.isdigit() and int(last) <= len(parent):
            parent.insert(int(last), value)
        else:
            raise patch_rejected(
                f'add operation does not apply: doc is missing path: "{path}": invalid index'
            )
    else:
        raise patch_rejected(f'add operation does not apply: doc is missing path: "{path}"')
    return doc


def _remove(doc: Any, path: Any) -> tuple[Any, Any]:
    tokens = _split(path)
    if not tokens:
        raise patch_rejected("remove operation does not apply: cannot remove the whole document")
    parent = _parent(doc, tokens, path)
    last = tokens[-1]
    if isinstance(parent, dict) and last in parent:
        return doc, parent.pop(last)
    if isinstance(parent, list) and last.isdigit() and int(last) < len(parent):
        return doc, parent.pop(int(last))
    raise patch_rejected(f'remove operation does not apply: doc is missing path: "{path}"')


def json_patch(doc: Any, operations: Any) -> Any:
    """RFC 6902 over a deep copy of `doc`; a failed `test` or missing path raises 422."""
    if not isinstance(operations, list):
        raise ApiError(400, "json: cannot unmarshal object into Go value of type jsonpatch.Patch")
    result = copy.deepcopy(doc)
    for op in operations:
        if not isinstance(op, dict) or not isinstance(op.get("op"), str):
            raise ApiError(400, "json: cannot unmarshal JSON patch operation")
        name = op["op"]
        path = op.get("path")
        if name in ("add", "replace", "test") and "value" not in op:
            raise patch_rejected(f"{name} operation: missing value")
        if name == "add":
            result = _add(result, path, copy.deepcopy(op["value"]))
        elif name == "remove":
            result, _ = _remove(result, path)
        elif name == "replace":
            _get(result, path)
            if _split(path):
                result, _ = _remove(result, path)
            result = _add(result, path, copy.deepcopy(op["value"]))
        elif name in ("move", "copy"):
            source = op.get("from")
            if not isinstance(source, str):
                raise patch_rejected(f"{name} operation: missing from")
            if name == "move":
                result, value = _remove(result, source)
            else:
                value = copy.deepcopy(_get(result, source))
            result = _add(result, path, value)
        elif name == "test":
            try:
                actual = _get(result, path)
            except ApiError:
                raise patch_rejected(f"testing value {path} failed: missing value") from None
            if actual != op["value"]:
                raise patch_rejected(f"testing value {path} failed: test failed")
        else:
            raise patch_rejected(f"Unexpected kind: {name}")
    return result


def decode(body: bytes, content_type: str | None) -> tuple[str, Any]:
    """Decode a PATCH body by media type; 415 for types the API does not take, 400 for bad bodies."""
    kind = media_type(content_type)
    if kind not in SUPPORTED:
        # kube-apiserver's answer to a PATCH of an unknown media type (its text, empty details).
        raise ApiError(415, "415: Unsupported Media Type", reason="UnsupportedMediaType", details={})
    try:
        value = yaml.safe_load(body.decode()) if kind == APPLY else json.loads(body)
    except (ValueError, yaml.YAMLError) as exc:
        raise ApiError(400, f"error decoding patch: {exc}") from None
    if kind != JSON_PATCH and not isinstance(value, dict):
        raise ApiError(400, "json: cannot unmarshal into Go value of type map[string]interface {}")
    return kind, value


def apply(current: dict[str, Any], kind: str, patch: Any) -> dict[str, Any]:
    """Apply a decoded patch of media type `kind` to `current` (which is not modified)."""
    if kind == MERGE:
        result = merge_patch(current, patch)
    elif kind == STRATEGIC:
        result = strategic_merge(current, patch)
    elif kind == JSON_PATCH:
        result = json_patch(current, patch)
    else:
        result = strategic_merge(current, patch)
    if not isinstance(result, dict):
        raise patch_rejected("patched document is not an object")
    return result
