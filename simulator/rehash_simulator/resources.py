"""The table of resources the simulator serves, shared by routing, discovery, authorization and store.

One `ResourceType` per REST resource: adding a kind to the simulator is one entry here.
"""

from __future__ import annotations

from dataclasses import dataclass

from .errors import ApiError

ALL_VERBS = ("create", "delete", "get", "list", "patch", "update")


@dataclass(frozen=True)
class ResourceType:
    """A REST resource and the facts discovery and the store need about it."""

    group: str
    version: str
    plural: str
    singular: str
    kind: str
    namespaced: bool = True
    short_names: tuple[str, ...] = ()
    has_status: bool = False
    categories: tuple[str, ...] = ()

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def group_version(self) -> str:
        return self.api_version

    @property
    def qualified(self) -> str:
        return f"{self.plural}.{self.group}" if self.group else self.plural


RESOURCES: tuple[ResourceType, ...] = (
    ResourceType("", "v1", "namespaces", "namespace", "Namespace", namespaced=False, short_names=("ns",)),
    ResourceType("", "v1", "configmaps", "configmap", "ConfigMap", short_names=("cm",)),
    ResourceType("", "v1", "secrets", "secret", "Secret"),
    ResourceType("", "v1", "events", "event", "Event", short_names=("ev",)),
    # The same Events in the events.k8s.io/v1 shape (events_v1.py converts), and the OpenReports CRD's
    # reports (openreports.io, tests/data/openreports-crd.yaml).
    ResourceType("events.k8s.io", "v1", "events", "event", "Event"),
    ResourceType("openreports.io", "v1alpha1", "reports", "report", "Report"),
    ResourceType("", "v1", "pods", "pod", "Pod", short_names=("po",), has_status=True, categories=("all",)),
    ResourceType(
        "apps",
        "v1",
        "deployments",
        "deployment",
        "Deployment",
        short_names=("deploy",),
        has_status=True,
        categories=("all",),
    ),
    ResourceType(
        "apps",
        "v1",
        "statefulsets",
        "statefulset",
        "StatefulSet",
        short_names=("sts",),
        has_status=True,
        categories=("all",),
    ),
    ResourceType(
        "apps",
        "v1",
        "daemonsets",
        "daemonset",
        "DaemonSet",
        short_names=("ds",),
        has_status=True,
        categories=("all",),
    ),
    ResourceType(
        "apps",
        "v1",
        "replicasets",
        "replicaset",
        "ReplicaSet",
        short_names=("rs",),
        has_status=True,
        categories=("all",),
    ),
    ResourceType(
        "policy",
        "v1",
        "poddisruptionbudgets",
        "poddisruptionbudget",
        "PodDisruptionBudget",
        short_names=("pdb",),
        has_status=True,
    ),
    ResourceType(
        "batch",
        "v1",
        "cronjobs",
        "cronjob",
        "CronJob",
        short_names=("cj",),
        has_status=True,
        categories=("all",),
    ),
    ResourceType("batch", "v1", "jobs", "job", "Job", has_status=True, categories=("all",)),
    ResourceType(
        "argoproj.io",
        "v1alpha1",
        "rollouts",
        "rollout",
        "Rollout",
        short_names=("ro",),
        has_status=True,
    ),
    ResourceType("apps.kruise.io", "v1alpha1", "clonesets", "cloneset", "CloneSet", has_status=True),
    # The Secrets Store CSI driver's record of each pod's mounts (its CRD has no status subresource: the
    # driver writes `status` with the object).
    ResourceType(
        "secrets-store.csi.x-k8s.io",
        "v1",
        "secretproviderclasspodstatuses",
        "secretproviderclasspodstatus",
        "SecretProviderClassPodStatus",
    ),
)

BY_PATH: dict[tuple[str, str, str], ResourceType] = {(r.group, r.version, r.plural): r for r in RESOURCES}
BY_KIND: dict[tuple[str, str], ResourceType] = {(r.api_version, r.kind): r for r in RESOURCES}


def resolve(name: str) -> ResourceType:
    """Find a resource by plural, `plural.group`, singular, kind or short name (case-insensitive)."""
    wanted = name.lower()
    for r in RESOURCES:
        names = {r.plural, r.qualified, r.singular, r.kind.lower(), *r.short_names}
        if wanted in names:
            return r
    raise KeyError(f"unknown resource {name!r}")


def for_object(obj: dict[str, object]) -> ResourceType:
    """The resource of a manifest, from its apiVersion and kind; 400 when the simulator lacks it."""
    api_version = obj.get("apiVersion")
    kind = obj.get("kind")
    if not isinstance(api_version, str) or not isinstance(kind, str) or not api_version or not kind:
        raise ApiError(
            400, "Object 'Kind' is missing in the request body" if not kind else "apiVersion missing"
        )
    try:
        return BY_KIND[(api_version, kind)]
    except KeyError:
        raise ApiError(400, f'no kind "{kind}" is registered for version "{api_version}"') from None
