"""Discovery documents: /version, /api, /apis and per group-version APIResourceLists.

kubectl asks for aggregated discovery (`as=APIGroupDiscoveryList`) first but also lists plain
`application/json`; the simulator answers with the legacy shapes and `Content-Type: application/json`,
which is valid content negotiation and makes kubectl fall back to the per-group documents.
"""

from __future__ import annotations

from typing import Any

from .resources import RESOURCES, ResourceType
from .versions import KUBERNETES_VERSION

VERBS = ["create", "delete", "get", "list", "patch", "update"]
_MAJOR, _MINOR, _PATCH = KUBERNETES_VERSION.split(".")
VERSION: dict[str, str] = {
    "major": _MAJOR,
    "minor": _MINOR,
    "gitVersion": f"v{KUBERNETES_VERSION}+kube-rehash-simulator",
    "gitCommit": "0000000000000000000000000000000000000000",
    "gitTreeState": "clean",
    "buildDate": "2025-01-01T00:00:00Z",
    "goVersion": "go1.26.0",
    "compiler": "gc",
    "platform": "linux/amd64",
}


def _group_versions() -> dict[str, list[str]]:
    groups: dict[str, list[str]] = {}
    for r in RESOURCES:
        if r.group and r.version not in groups.setdefault(r.group, []):
            groups[r.group].append(r.version)
    return groups


def api_versions(server_address: str) -> dict[str, Any]:
    return {
        "kind": "APIVersions",
        "versions": ["v1"],
        "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": server_address}],
    }


def api_group(name: str) -> dict[str, Any] | None:
    versions = _group_versions().get(name)
    if not versions:
        return None
    entries = [{"groupVersion": f"{name}/{v}", "version": v} for v in versions]
    return {
        "kind": "APIGroup",
        "apiVersion": "v1",
        "name": name,
        "versions": entries,
        "preferredVersion": entries[0],
    }


def api_group_list() -> dict[str, Any]:
    """The groups as kube-apiserver lists them: entries without their own kind/apiVersion."""
    groups = [api_group(name) for name in _group_versions()]
    entries = [{k: v for k, v in g.items() if k not in ("kind", "apiVersion")} for g in groups if g]
    return {"kind": "APIGroupList", "apiVersion": "v1", "groups": entries}


def _resource_entry(r: ResourceType) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "name": r.plural,
        "singularName": r.singular,
        "namespaced": r.namespaced,
        "kind": r.kind,
        "verbs": VERBS,
    }
    if r.short_names:
        entry["shortNames"] = list(r.short_names)
    if r.categories:
        entry["categories"] = list(r.categories)
    return entry


def resource_list(group: str, version: str) -> dict[str, Any] | None:
    """The APIResourceList of one group-version, or None when the simulator does not serve it."""
    resources = [_resource_entry(r) for r in RESOURCES if r.group == group and r.version == version]
    if not resources:
        return None
    group_version = f"{group}/{version}" if group else version
    return {
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": group_version,
        "resources": resources,
    }
