"""Secrets Store CSI mounts as sources: which object versions a workload's pods have mounted. Pure.

Secrets mounted through a `csi` volume of driver `secrets-store.csi.k8s.io` change without any ConfigMap or
Secret changing. The driver records, per pod and SecretProviderClass, a `SecretProviderClassPodStatus`
(`secrets-store.csi.x-k8s.io/v1`) whose `status.objects[]` carry each mounted object's `id` and `version`;
with rotation on, it rewrites that object when it mounts a newer version into the running pod. So the
versions the workload's current pods carry are a source like any other: one record per SecretProviderClass
(kind `secretproviderclass`), whose token digests its (id, version) pairs. A moved version changes the
combined hash and rolls the workload; the new pods mount the newest versions, so they are in sync.

Which pods are the workload's: a pod's controlling owner (a StatefulSet or DaemonSet by name; a ReplicaSet
named `<deployment>-<pod-template-hash>` for a Deployment, `<rollout>-<rollouts-pod-template-hash>` for an
Argo Rollout). Pods may disagree while the driver rotates them one node at a time: per object id the
version of the status object written last (highest resourceVersion) counts, so a half-rotated set and the
set the rollout's new pods carry hash the same, and one rotation rolls once.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from reconcile.model.bookkeeping import SourceRecord
from reconcile.model.hashing import WHOLE, encode_text, seal
from reconcile.model.kinds import BUILTIN_KINDS, Kind
from reconcile.model.references import MOUNT_KIND
from reconcile.values import value

KIND = MOUNT_KIND
_DOMAIN = b"kube-rehash/csi-versions/v1\x00"


@value
class MountStatus:
    """One SecretProviderClassPodStatus: a pod's mount of one SecretProviderClass."""

    pod: str
    provider_class: str
    mounted: bool
    objects: tuple[tuple[str, str], ...]
    """(id, version) of each mounted object."""
    resource_version: str


@dataclass(frozen=True)
class Mounts:
    """What a namespace's pods have mounted through the driver: each pod's workload, and the statuses."""

    owners: Mapping[str, tuple[str, str]]
    """Pod name -> (workload kind, workload name)."""
    statuses: tuple[MountStatus, ...]


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def read_status(item: Mapping[str, Any]) -> MountStatus | None:
    """A SecretProviderClassPodStatus as listed; None when it names no pod or class."""
    status = item.get("status")
    metadata = item.get("metadata")
    if not isinstance(status, Mapping) or not isinstance(metadata, Mapping):
        return None
    pod, spc = _text(status.get("podName")), _text(status.get("secretProviderClassName"))
    if not pod or not spc:
        return None
    objects = status.get("objects")
    pairs = tuple(
        sorted(
            (_text(o.get("id")), _text(o.get("version")))
            for o in (objects if isinstance(objects, list) else [])
            if isinstance(o, Mapping) and _text(o.get("id"))
        )
    )
    return MountStatus(pod, spc, status.get("mounted") is True, pairs, _text(metadata.get("resourceVersion")))


def pod_owner(item: Mapping[str, Any], kinds: Iterable[Kind] = BUILTIN_KINDS) -> tuple[str, str] | None:
    """The workload (kind, name) a pod belongs to, from its controlling ownerReference and how each kind's
    pods point at it (`Kind.pods`); None: not one we know."""
    metadata = item.get("metadata")
    if not isinstance(metadata, Mapping):
        return None
    owners = metadata.get("ownerReferences")
    labels = metadata.get("labels")
    labels = labels if isinstance(labels, Mapping) else {}
    for ref in owners if isinstance(owners, list) else []:
        if not isinstance(ref, Mapping) or ref.get("controller") is not True:
            continue
        owner_kind, owner_name = _text(ref.get("kind")), _text(ref.get("name"))
        for kind in kinds:
            name = kind.pods.workload_of(owner_kind, owner_name, labels) if kind.pods else None
            if name:
                return kind.kind, name
    return None


def _order(status: MountStatus) -> tuple[int, str]:
    version = status.resource_version
    return (int(version), "") if version.isdigit() else (-1, version)


def newest_versions(statuses: Iterable[MountStatus]) -> dict[str, str]:
    """Per object id, its version in the status written last (see the module's docstring)."""
    versions: dict[str, str] = {}
    for status in sorted(statuses, key=_order):
        versions.update(dict(status.objects))
    return versions


def versions_token(versions: Mapping[str, str], key: bytes | None) -> str:
    """Sealed digest of (id, version) pairs, length-prefixed, in id order."""
    h = hashlib.blake2b(digest_size=16)
    h.update(_DOMAIN)
    for object_id, version in sorted(versions.items()):
        h.update(encode_text(object_id) + encode_text(version))
    return seal(h.digest(), key)


def mount_records(
    kind: str, name: str, classes: Iterable[str], mounts: Mounts, key: bytes | None
) -> tuple[SourceRecord, ...] | str:
    """One record per SecretProviderClass the workload mounts, over its current pods' statuses; or, when
    one class has no mounted status on any of its pods yet, the reason to wait."""
    pods = {pod for pod, owner in mounts.owners.items() if owner == (kind, name)}
    records: list[SourceRecord] = []
    for spc in sorted(set(classes)):
        statuses = [s for s in mounts.statuses if s.provider_class == spc and s.pod in pods and s.mounted]
        if not statuses:
            return (
                f"no SecretProviderClassPodStatus of {KIND}/{spc} for its pods yet (the Secrets Store CSI "
                "driver has not mounted it): nothing to compare"
            )
        token = versions_token(newest_versions(statuses), key)
        # No resourceVersion: a new pod's status with the same versions is no change (no bookkeeping churn).
        records.append(SourceRecord(KIND, spc, f"{KIND}:{spc}", "", WHOLE, token))
    return tuple(records)
