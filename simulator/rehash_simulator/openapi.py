"""The OpenAPI v3 documents kubectl reads: `/openapi/v3` and one document per group-version.

Why: before `apply` or `create -f` kubectl checks in the group-version's document that the kind's PATCH
operation takes `fieldValidation` (then the server validates: fields.py), and `apply` computes its
strategic-merge patch from the kind's schema (`x-kubernetes-patch-strategy`, `-merge-key`); `kubectl explain`
prints the schemas. Without the documents kubectl refuses to validate ("failed to download openapi").
Schemas come from the field table (schema.py); custom resources get an open schema
(`x-kubernetes-preserve-unknown-fields`) and no strategic-merge patch, as a CRD without a schema would.
kubectl 1.37 asks `/openapi/v2` only in its protobuf form, and only when v3 is missing: v2 is not served.
"""

from __future__ import annotations

import functools
import hashlib
import json
from typing import Any

from . import schema
from .resources import RESOURCES, ResourceType
from .versions import KUBERNETES_VERSION

REF = "#/components/schemas/"
_SCALARS: dict[str, dict[str, str]] = {
    "string": {"type": "string"},
    "int32": {"type": "integer", "format": "int32"},
    "int64": {"type": "integer", "format": "int64"},
    "bool": {"type": "boolean"},
    "bytes": {"type": "string", "format": "byte"},
}
_SPECIAL: dict[str, dict[str, Any]] = {
    schema.TIME: {"type": "string", "format": "date-time"},
    schema.MICROTIME: {"type": "string", "format": "date-time"},
    schema.DURATION: {"type": "string"},
    schema.QUANTITY: {"type": "string", "x-kubernetes-int-or-string": True},
    schema.INT_OR_STRING: {"format": "int-or-string", "oneOf": [{"type": "integer"}, {"type": "string"}]},
    schema.RAW_JSON: {"type": "object"},
}
PATCH = "io.k8s.apimachinery.pkg.apis.meta.v1.Patch"
OBJECT_META = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
PATCH_TYPES = (
    "application/apply-patch+yaml",
    "application/json-patch+json",
    "application/merge-patch+json",
    "application/strategic-merge-patch+json",
)


def group_version_path(r: ResourceType) -> str:
    return f"apis/{r.group}/{r.version}" if r.group else f"api/{r.version}"


def _type(kind: str) -> dict[str, Any]:
    return dict(_SCALARS[kind]) if kind in _SCALARS else {"$ref": REF + kind}


def _property(f: schema.Field) -> dict[str, Any]:
    if f.map is not None:
        prop: dict[str, Any] = {"type": "object", "additionalProperties": _type(f.map)}
    elif f.list:
        prop = {"type": "array", "items": _type(f.type)}
    elif f.type in _SCALARS:
        prop = _type(f.type)
    else:
        prop = {"allOf": [_type(f.type)]}
    if f.patch_strategy:
        prop["x-kubernetes-patch-strategy"] = f.patch_strategy
    if f.merge_key:
        prop["x-kubernetes-patch-merge-key"] = f.merge_key
    return prop


def _definition(name: str) -> dict[str, Any]:
    table = schema.load()
    special = table.special.get(name)
    if special is not None:
        return dict(_SPECIAL[special])
    properties = {key: _property(f) for key, f in table.json_fields(name).items()}
    return {"type": "object", "properties": properties}


def _closure(roots: list[str]) -> list[str]:
    table = schema.load()
    seen: set[str] = set()
    todo = list(roots)
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        if name in table.definitions:
            todo.extend(f.value_type for f in table.definitions[name] if f.value_type not in _SCALARS)
    return sorted(seen)


def _gvk(r: ResourceType) -> dict[str, str]:
    return {"group": r.group, "kind": r.kind, "version": r.version}


def _kind_schema(r: ResourceType) -> tuple[str, dict[str, Any]]:
    """The component name and schema of a served kind (an open schema for a custom resource)."""
    definition = schema.load().definition(r.api_version, r.kind)
    if definition is not None:
        body = _definition(definition)
    else:
        definition = f"{'.'.join(reversed(r.group.split('.')))}.{r.version}.{r.kind}"
        body = {
            "type": "object",
            "properties": {"metadata": {"allOf": [{"$ref": REF + OBJECT_META}]}},
            "x-kubernetes-preserve-unknown-fields": True,
        }
    body["properties"] = {
        "apiVersion": {"type": "string"},
        "kind": {"type": "string"},
        **body["properties"],
    }
    body["x-kubernetes-group-version-kind"] = [_gvk(r)]
    return definition, body


def _parameter(name: str, place: str = "query") -> dict[str, Any]:
    return {"name": name, "in": place, "schema": {"type": "string", "uniqueItems": True}}


def _operation(r: ResourceType, action: str, ref: str, *, body: tuple[str, ...] = ()) -> dict[str, Any]:
    writes = action in ("post", "put", "patch")
    params = [_parameter(p) for p in ("dryRun", "fieldManager", "fieldValidation")] if writes else []
    if action == "patch":
        params.append(_parameter("force"))
    answer = {"description": "OK", "content": {"application/json": {"schema": {"$ref": ref}}}}
    op: dict[str, Any] = {
        "operationId": f"{action}{r.kind}",
        "parameters": params,
        "responses": {"200": answer},
        "x-kubernetes-action": action,
        "x-kubernetes-group-version-kind": _gvk(r),
    }
    if body:
        schema_ref = {"$ref": REF + PATCH} if action == "patch" else {"$ref": ref}
        op["requestBody"] = {"content": {t: {"schema": schema_ref} for t in body}, "required": True}
    return op


def _paths(r: ResourceType, ref: str) -> dict[str, Any]:
    base = f"/{group_version_path(r)}"
    collection = f"{base}/namespaces/{{namespace}}/{r.plural}" if r.namespaced else f"{base}/{r.plural}"
    built_in = schema.load().definition(r.api_version, r.kind) is not None
    patch_types = PATCH_TYPES if built_in else tuple(t for t in PATCH_TYPES if "strategic" not in t)
    return {
        collection: {
            "get": _operation(r, "list", ref),
            "post": _operation(r, "post", ref, body=("application/json", "application/yaml")),
        },
        f"{collection}/{{name}}": {
            "get": _operation(r, "get", ref),
            "put": _operation(r, "put", ref, body=("application/json", "application/yaml")),
            "patch": _operation(r, "patch", ref, body=patch_types),
            "delete": _operation(r, "delete", ref),
        },
    }


@functools.cache
def documents() -> dict[str, bytes]:
    """{group-version path: its document's bytes}, built once."""
    by_path: dict[str, list[ResourceType]] = {}
    for r in RESOURCES:
        by_path.setdefault(group_version_path(r), []).append(r)
    out: dict[str, bytes] = {}
    for path, types in by_path.items():
        paths: dict[str, Any] = {}
        components: dict[str, Any] = {PATCH: {"type": "object"}}
        for r in types:
            name, body = _kind_schema(r)
            components[name] = body
            paths.update(_paths(r, REF + name))
        for name in _closure(sorted(_referenced(components) | {OBJECT_META})):
            if name not in components:
                components[name] = _definition(name)
        doc = {
            "openapi": "3.0.0",
            "info": {"title": "Kubernetes", "version": KUBERNETES_VERSION.rpartition(".")[0]},
            "paths": paths,
            "components": {"schemas": dict(sorted(components.items()))},
        }
        out[path] = json.dumps(doc, separators=(",", ":")).encode()
    return out


def _referenced(value: Any) -> set[str]:
    """The component names a schema refers to (`$ref`), at any depth."""
    if isinstance(value, list):
        return set().union(*(_referenced(v) for v in value))
    if not isinstance(value, dict):
        return set()
    found = {str(value["$ref"]).removeprefix(REF)} if "$ref" in value else set()
    return found.union(*(_referenced(v) for v in value.values()))


def document_hash(body: bytes) -> str:
    """The `hash` kube-apiserver puts in a document's URL (sha512 of its bytes, upper-case hex)."""
    return hashlib.sha512(body).hexdigest().upper()


def root() -> dict[str, Any]:
    """`/openapi/v3`: each group-version's document, at a URL that names its hash."""
    return {
        "paths": {
            path: {"serverRelativeURL": f"/openapi/v3/{path}?hash={document_hash(body)}"}
            for path, body in documents().items()
        }
    }
