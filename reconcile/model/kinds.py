"""Where each resource lives in the API and where a target kind keeps its pod template.

A new target kind is one `Kind` entry: the pass reads everything else (paths, pause and suspend
flags, update strategy) from here. Custom kinds from the config file become entries of the same type.
"""

from __future__ import annotations

from dataclasses import dataclass

from reconcile.model.pointer import join_pointer, split_pointer


@dataclass(frozen=True)
class Resource:
    """A REST resource: group (\"\" for core), version, plural name, and whether it is namespaced."""

    group: str
    version: str
    plural: str
    namespaced: bool = True

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def prefix(self) -> str:
        return f"/apis/{self.group}/{self.version}" if self.group else f"/api/{self.version}"

    def collection_path(self, namespace: str | None = None) -> str:
        """List/create path; `namespace=None` lists across all namespaces."""
        if self.namespaced and namespace is not None:
            return f"{self.prefix}/namespaces/{namespace}/{self.plural}"
        return f"{self.prefix}/{self.plural}"

    def object_path(self, namespace: str | None, name: str) -> str:
        if self.namespaced:
            if not namespace:
                raise ValueError(f"{self.plural} is namespaced; a namespace is required")
            return f"{self.prefix}/namespaces/{namespace}/{self.plural}/{name}"
        return f"{self.prefix}/{self.plural}/{name}"


NAMESPACES = Resource("", "v1", "namespaces", namespaced=False)
CONFIGMAPS = Resource("", "v1", "configmaps")
SECRETS = Resource("", "v1", "secrets")
EVENTS = Resource("", "v1", "events")
PODS = Resource("", "v1", "pods")
JOBS = Resource("batch", "v1", "jobs")
REPLICASETS = Resource("apps", "v1", "replicasets")
CONTROLLERREVISIONS = Resource("apps", "v1", "controllerrevisions")


@dataclass(frozen=True)
class Kind(Resource):
    """A target kind: a resource plus where its pod template (or a bare annotations map) lives.

    `template` points at a PodTemplateSpec; when None, `annotations` must point at the annotations
    map the tool writes its hash into (an operator's custom resource that copies it into pods).
    """

    kind: str = ""
    template: str | None = "/spec/template"
    annotations: str | None = None
    suspend: str | None = None
    paused: str | None = None
    update_strategy: str | None = None
    rolls_pods: bool = True
    annotations_bump_generation: bool = False
    """kube-apiserver bumps `metadata.generation` on any change of the object's annotations, not only of
    its spec (Deployments: their update strategy compares annotations too, a legacy of rollbacks)."""

    def __post_init__(self) -> None:
        if not self.kind:
            raise ValueError(f"kind entry for {self.plural!r} needs a kind name")
        if self.template is None and self.annotations is None:
            raise ValueError(f"kind {self.kind}: set a pod template pointer or an annotations pointer")
        for pointer in (self.template, self.annotations, self.suspend, self.paused, self.update_strategy):
            if pointer is not None:
                split_pointer(pointer)

    @property
    def annotations_pointer(self) -> str:
        """Pointer to the annotations map whose change rolls the pods."""
        if self.annotations is not None:
            return self.annotations
        assert self.template is not None
        return self.template + "/metadata/annotations"

    @property
    def pod_spec_pointer(self) -> str | None:
        return None if self.template is None else self.template + "/spec"

    def annotation_path(self, key: str) -> str:
        """JSON-patch path of one annotation inside the rolling annotations map."""
        return self.annotations_pointer + join_pointer(key)


DEPLOYMENT = Kind(
    "apps",
    "v1",
    "deployments",
    kind="Deployment",
    paused="/spec/paused",
    annotations_bump_generation=True,
)
STATEFULSET = Kind(
    "apps", "v1", "statefulsets", kind="StatefulSet", update_strategy="/spec/updateStrategy/type"
)
DAEMONSET = Kind("apps", "v1", "daemonsets", kind="DaemonSet", update_strategy="/spec/updateStrategy/type")
CRONJOB = Kind(
    "batch",
    "v1",
    "cronjobs",
    kind="CronJob",
    template="/spec/jobTemplate/spec/template",
    suspend="/spec/suspend",
    rolls_pods=False,
)
ROLLOUT = Kind("argoproj.io", "v1alpha1", "rollouts", kind="Rollout", paused="/spec/paused")

BUILTIN_KINDS: tuple[Kind, ...] = (DEPLOYMENT, STATEFULSET, DAEMONSET, CRONJOB, ROLLOUT)


def find_kind(name: str, kinds: tuple[Kind, ...] = BUILTIN_KINDS) -> Kind:
    """Look a kind up by Kind name, plural or singular, case-insensitively (`deploy` works too)."""
    wanted = name.lower()
    aliases = {
        "deploy": "deployments",
        "sts": "statefulsets",
        "ds": "daemonsets",
        "cj": "cronjobs",
        "ro": "rollouts",
    }
    wanted = aliases.get(wanted, wanted)
    for kind in kinds:
        if wanted in (kind.kind.lower(), kind.plural, kind.plural.rstrip("s")):
            return kind
    known = ", ".join(k.kind for k in kinds)
    raise KeyError(f"unknown kind {name!r}; known kinds: {known}")
