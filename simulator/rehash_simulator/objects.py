"""Validation and server-side field management shared by every write path of the store.

Creating, updating and patching must all end in the same object shape a real server would store:
names checked (and an Event's involvedObject.namespace), `metadata` fields the client may not set
replaced, Secret `stringData` folded into `data`, `generation` bumped only when `spec` changes (or, for
Deployments, the annotations), and the main resource ignoring `status` changes.
"""

from __future__ import annotations

import base64
import binascii
import copy
import re
import secrets
import uuid
from datetime import UTC, datetime
from typing import Any

from .errors import ApiError, api_version_mismatch, conflict, invalid, name_mismatch, namespace_mismatch
from .resources import ResourceType

Obj = dict[str, Any]

_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_KEY = re.compile(r"^[-._a-zA-Z0-9]+$")
_GENERATE_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"


# kube-apiserver keeps a DaemonSet's template generation (internal `spec.templateGeneration`, not in apps/v1)
# in this annotation: 1 on create, +1 whenever the pod template changes.
DAEMONSET_TEMPLATE_GENERATION = "deprecated.daemonset.template.generation"


def now_rfc3339() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def generate_suffix() -> str:
    return "".join(secrets.choice(_GENERATE_ALPHABET) for _ in range(5))


def _check_string_map(obj: Obj, path: tuple[str, ...], go_field: str) -> None:
    current: Any = obj
    for part in path:
        current = current.get(part) if isinstance(current, dict) else None
    if current is None:
        return
    if not isinstance(current, dict):
        raise ApiError(
            400,
            f"json: cannot unmarshal {_json_type(current)} into Go struct field {go_field} "
            "of type map[string]string",
        )
    for value in current.values():
        if not isinstance(value, str):
            raise ApiError(
                400,
                f"json: cannot unmarshal {_json_type(value)} into Go struct field {go_field} of type string",
            )


def _json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return "string"


def validate(rtype: ResourceType, obj: Obj) -> None:
    """Decode-level (400) and validation-level (422) checks of a complete object."""
    meta = obj.get("metadata")
    if not isinstance(meta, dict):
        raise ApiError(400, "Object 'metadata' is missing or not an object")
    _check_string_map(obj, ("metadata", "labels"), "ObjectMeta.metadata.labels")
    _check_string_map(obj, ("metadata", "annotations"), "ObjectMeta.metadata.annotations")
    if rtype.plural == "configmaps":
        _check_string_map(obj, ("data",), "ConfigMap.data")
    name = meta.get("name", "")
    causes: list[tuple[str, str]] = []
    pattern, what = (
        (_LABEL, "RFC 1123 label") if rtype.plural == "namespaces" else (_SUBDOMAIN, "RFC 1123 subdomain")
    )
    if not isinstance(name, str) or not name:
        causes.append(("metadata.name", "Required value: name or generateName is required"))
    elif len(name) > 253 or not pattern.match(name):
        causes.append(
            (
                "metadata.name",
                f'Invalid value: "{name}": a lowercase {what} must consist of lower case alphanumeric '
                "characters, "
                "'-' or '.', and must start and end with an alphanumeric character",
            )
        )
    if rtype.plural in ("configmaps", "secrets"):
        for field in ("data", "binaryData") if rtype.plural == "configmaps" else ("data",):
            for key in obj.get(field) or {}:
                if not _KEY.match(key):
                    causes.append(
                        (
                            f"{field}[{key}]",
                            f'Invalid value: "{key}": a valid config key must consist of alphanumeric '
                            "characters, '-', '_' or '.'",
                        )
                    )
    if rtype.plural == "events":
        involved = obj.get("involvedObject")
        involved_ns = str((involved if isinstance(involved, dict) else {}).get("namespace") or "")
        if involved_ns != str(meta.get("namespace") or ""):
            causes.append(
                (
                    "involvedObject.namespace",
                    f'Invalid value: "{involved_ns}": does not match event.namespace',
                )
            )
    if rtype.plural == "secrets":
        for key, value in (obj.get("data") or {}).items():
            try:
                base64.b64decode(value if isinstance(value, str) else "", validate=True)
            except (binascii.Error, ValueError):
                raise ApiError(400, f"illegal base64 data in Secret.data[{key}]") from None
    if causes:
        raise invalid(rtype.kind, rtype.group, str(name or ""), causes)


def normalize_secret(obj: Obj) -> None:
    """Fold `stringData` into base64 `data` (stringData wins) and default `type`."""
    string_data = obj.pop("stringData", None)
    if isinstance(string_data, dict) and string_data:
        data = obj.setdefault("data", {}) or {}
        obj["data"] = data
        for key, value in string_data.items():
            data[key] = base64.b64encode(str(value).encode()).decode()
    obj.setdefault("type", "Opaque")


CONTENT = ("data", "binaryData", "stringData")


def content_owner(new: Obj, old: Obj | None) -> None:
    """One managedFields entry owning the content, timed at its last change (kept while it is unchanged):
    what kube-rehash reads to know when a ConfigMap or Secret changed (`Store(content_times=True)`)."""
    meta = new["metadata"]
    if old is not None and all(new.get(k) == old.get(k) for k in CONTENT):
        kept = old["metadata"].get("managedFields")
        if kept:
            meta["managedFields"] = kept
        return
    owned: dict[str, Any] = {f"f:{k}": {} for k in CONTENT if new.get(k)}
    meta["managedFields"] = [
        {
            "manager": "kubectl",
            "operation": "Update",
            "apiVersion": "v1",
            "time": now_rfc3339(),
            "fieldsType": "FieldsV1",
            "fieldsV1": owned or {"f:data": {}},
        }
    ]


def prepare_create(rtype: ResourceType, obj: Obj, rv: int, *, keep_status: bool) -> Obj:
    """Set the server-owned fields of a new object (the caller has resolved name and namespace). Seeding
    (`keep_status`) keeps what was seeded: the status and the managedFields."""
    meta = obj["metadata"]
    seeded_fields = meta.get("managedFields") if keep_status else None
    meta["uid"] = str(uuid.uuid4())
    meta["creationTimestamp"] = now_rfc3339()
    meta["resourceVersion"] = str(rv)
    for field in (
        "generation",
        "deletionTimestamp",
        "deletionGracePeriodSeconds",
        "selfLink",
        "managedFields",
    ):
        meta.pop(field, None)
    if seeded_fields:
        meta["managedFields"] = seeded_fields
    if "spec" in obj and rtype.plural != "namespaces":
        meta["generation"] = 1
    if rtype.plural == "daemonsets":
        meta.setdefault("annotations", {})[DAEMONSET_TEMPLATE_GENERATION] = "1"
    if rtype.plural == "secrets":
        normalize_secret(obj)
    if rtype.plural == "events":
        obj.setdefault("eventTime", None)  # a core/v1 Event always carries it (null when unset)
    if rtype.plural == "namespaces":
        meta.setdefault("labels", {})["kubernetes.io/metadata.name"] = meta["name"]
        obj.setdefault("spec", {"finalizers": ["kubernetes"]})
        obj["status"] = {"phase": "Active"}
    elif rtype.has_status and not keep_status:
        obj.pop("status", None)
    return obj


def prepare_update(
    rtype: ResourceType, old: Obj, new: Obj, rv: int, *, keep_status: bool = False, subresource: bool = False
) -> Obj:
    """Carry server-owned fields from `old` into `new` and bump generation when `spec` changed (never for
    a write through the status subresource, which a controller also uses for its own annotations). Seeded
    managedFields are carried as they were (no write records its manager), unless the write changed a
    ConfigMap's or Secret's content: then one entry owning it, timed now (`content_owner`)."""
    meta = new["metadata"]
    old_meta = old["metadata"]
    if meta.get("uid") not in (None, "", old_meta["uid"]):
        raise invalid(
            rtype.kind,
            rtype.group,
            old_meta["name"],
            [
                ("metadata.uid", f'Invalid value: "{meta.get("uid")}": field is immutable'),
            ],
        )
    meta["uid"] = old_meta["uid"]
    meta["creationTimestamp"] = old_meta["creationTimestamp"]
    meta["resourceVersion"] = str(rv)
    meta.pop("managedFields", None)
    if old_meta.get("managedFields"):
        if all(new.get(k) == old.get(k) for k in CONTENT):
            meta["managedFields"] = old_meta["managedFields"]
        else:  # the seeded times would say the content is older than it is
            content_owner(new, None)
    if rtype.plural == "secrets":
        normalize_secret(new)
    if "generation" in old_meta:
        generation = int(old_meta["generation"])
        changed = new.get("spec") != old.get("spec")
        # kube-apiserver's Deployment strategy also bumps it when the annotations change.
        changed |= rtype.plural == "deployments" and meta.get("annotations") != old_meta.get("annotations")
        meta["generation"] = generation + 1 if changed and not subresource else generation
    else:
        meta.pop("generation", None)
    if rtype.plural == "namespaces":
        meta.setdefault("labels", {})["kubernetes.io/metadata.name"] = meta["name"]
    if rtype.plural == "daemonsets":
        kept = str((old_meta.get("annotations") or {}).get(DAEMONSET_TEMPLATE_GENERATION, "1"))
        template_changed = (new.get("spec") or {}).get("template") != (old.get("spec") or {}).get("template")
        value = str(int(kept) + 1) if template_changed and kept.isdigit() else kept
        meta.setdefault("annotations", {})[DAEMONSET_TEMPLATE_GENERATION] = value
    if (rtype.has_status or rtype.plural == "namespaces") and not keep_status:
        if "status" in old:
            new["status"] = old["status"]
        else:
            new.pop("status", None)
    return new


def check_patched(rtype: ResourceType, old: Obj, new: Obj, name: str) -> None:
    """What a patch may not change (name, namespace, kind); a new resourceVersion fails the precondition."""
    meta = new.get("metadata")
    if not isinstance(meta, dict):
        raise ApiError(422, "metadata: Required value")
    old_meta = old["metadata"]
    if meta.get("name") != name:
        raise name_mismatch(meta.get("name"), name)
    if rtype.namespaced and meta.get("namespace") != old_meta.get("namespace"):
        raise namespace_mismatch()
    if meta.get("resourceVersion") not in (None, "", old_meta["resourceVersion"]):
        raise conflict(rtype.plural, rtype.group, name)
    if (new.get("apiVersion"), new.get("kind")) != (rtype.api_version, rtype.kind):
        raise api_version_mismatch(new.get("apiVersion"), rtype.api_version)


def apply_target(rtype: ResourceType, namespace: str | None, name: str, applied: Any) -> Obj:
    """The object a server-side apply creates when none exists: the applied manifest, named by the URL."""
    new: Obj = copy.deepcopy(applied)
    meta = new.setdefault("metadata", {})
    if meta.get("name", name) != name:
        raise name_mismatch(meta.get("name"), name)
    meta["name"] = name
    if rtype.namespaced:
        meta["namespace"] = namespace or meta.get("namespace") or "default"
    if (new.get("apiVersion"), new.get("kind")) != (rtype.api_version, rtype.kind):
        raise api_version_mismatch(new.get("apiVersion"), rtype.api_version)
    return new
