"""Where each resource lives in the API and where a target kind keeps its pod template.

A new target kind is one `Kind` entry: the pass reads everything that differs by kind from here (paths,
pause and suspend flags, update strategy, which status rules say a rollout finished, how its controller
records the templates it started, whether a change runs a Job, where its own spec names ConfigMaps and
Secrets, what a restart writes (`Knob`) and what shows that it took effect (`Evidence`)), and no code
elsewhere asks a kind's name. Custom kinds from the config file become entries of the same type; presets
(model/presets.py) are entries shipped for common operators' resources, enabled by name.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from reconcile.model.knobs import Evidence, Knob, PodOwnership, PodSelection, SpecReference
from reconcile.model.pointer import join_pointer, parse_path, path_pointer, resolve, split_pointer


@dataclass(frozen=True)
class Resource:
    """A REST resource: group (\"\" for core), version, plural name, and whether it is namespaced."""

    group: str
    version: str
    plural: str
    namespaced: bool = True
    list_filter: str | None = None
    """The field selector a pass lists this resource with, leaving out what no pass reads (Helm releases
    among Secrets: large, never referenced); a wanted object such a list did not show is then read by name."""
    confidential: bool = False
    """Never listed in `fetch: get` mode (Secrets: an RBAC that grants only `get` on them)."""

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


SOURCE_KIND_NAMES = {"configmap": "ConfigMap", "secret": "Secret"}
"""A source's record kind -> the Kind its API names it by."""

NAMESPACES = Resource("", "v1", "namespaces", namespaced=False)
CONFIGMAPS = Resource("", "v1", "configmaps")
SECRETS = Resource("", "v1", "secrets", list_filter="type!=helm.sh/release.v1", confidential=True)
EVENTS = Resource("", "v1", "events")
PODS = Resource("", "v1", "pods")
JOBS = Resource("batch", "v1", "jobs")
REPLICASETS = Resource("apps", "v1", "replicasets")
CONTROLLERREVISIONS = Resource("apps", "v1", "controllerrevisions")
PROVIDER_CLASS_POD_STATUSES = Resource("secrets-store.csi.x-k8s.io", "v1", "secretproviderclasspodstatuses")


class Health(StrEnum):
    """Which status rules tell whether a rollout of a kind finished (model/health.py), named after the kind
    whose status fields they read."""

    DEPLOYMENT = "Deployment"
    """Updated, available and ready replicas against `spec.replicas`; the Progressing condition's deadline."""
    STATEFULSET = "StatefulSet"
    """Updated and ready replicas, the partition, current against update revision."""
    DAEMONSET = "DaemonSet"
    """Updated and available against the desired number scheduled."""
    ROLLOUT = "Rollout"
    """Argo Rollouts' `status.phase`."""
    READY = "Ready"
    """A `Ready` condition (Knative, CloudNativePG and most operators): complete when it is True for the
    generation our write produced; stalled when not by the rollout deadline."""


class Revisions(StrEnum):
    """How a kind's controller records each pod template it starts (model/freshness.py), named after the
    kind whose controller does it that way."""

    DEPLOYMENT = "Deployment"
    """Numbered ReplicaSets; the object's `deployment.kubernetes.io/revision` names the current one."""
    STATEFULSET = "StatefulSet"
    """ControllerRevisions; `status.updateRevision` names the current one."""
    DAEMONSET = "DaemonSet"
    """ControllerRevisions, dated; the template generation annotation matches the current one."""


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
    health: Health | None = None
    """The status rules of our rollouts (None: their status is not watched)."""
    revisions: Revisions | None = None
    """How its controller records the templates it starts (None: pods are never proven newer)."""
    runs_jobs: bool = False
    """A change may create a Job from its template (`run-on-change`)."""
    pods: PodOwnership | None = None
    """How its pods point at it (None: its pods are not looked up)."""
    max_unavailable: str | None = None
    """Pointer to its rolling update's `maxUnavailable` (pods evicted a pass by `restart: evict`)."""
    workload_ref: str | None = None
    """Pointer to a reference to a Deployment whose pod template the object runs instead of its own (Argo
    Rollouts' `spec.workloadRef`): its references come from that template, its restart is `restart_at`."""
    restart_at: str | None = None
    """Pointer to the time field that restarts the pods of a workload running a referenced template."""
    knob: Knob = Knob.HASH
    """What a rollout writes to restart its pods."""
    knob_key: str | None = None
    """The annotation a `timestamp` or `one-shot` knob writes, in the rolling annotations map."""
    knob_value: str = "true"
    """The value a `one-shot` knob writes."""
    knob_field: str | None = None
    """Field path of a `field` knob."""
    in_place: tuple[str, tuple[str, ...]] | None = None
    """(pointer, values): while the field there holds one of the values, its controller applies a change
    of the template's metadata to the running pods without restarting them (OpenKruise's in-place update
    strategies), so such an object is restarted by eviction instead."""
    spec_references: tuple[SpecReference, ...] = ()
    """ConfigMaps and Secrets its own spec names, besides those of its pod template."""
    pod_specs: tuple[str, ...] = ()
    """Field paths of further pod specs whose references count (`*` for every item of a list)."""
    pod_selection: PodSelection | None = None
    """Which pods are its own: for `evict`, in-place kinds and the `pods` evidence."""
    evidence: Evidence | None = None
    """What shows a restart took effect (None: `status` with status rules, else `pods` with a pod
    selection, else nothing: the restart is not verified)."""
    evidence_field: str | None = None
    """Field path of a `status-time` or `status-change` evidence."""
    owner_honours_knob: bool = False
    """Its objects are owned by an operator that honours its knob (a StrimziPodSet under its Kafka): an
    owner is then no reason to leave it alone."""

    def __post_init__(self) -> None:
        if not self.kind:
            raise ValueError(f"kind entry for {self.plural!r} needs a kind name")
        if self.template is None and self.annotations is None:
            raise ValueError(f"kind {self.kind}: set a pod template pointer or an annotations pointer")
        for pointer in (self.template, self.annotations, self.suspend, self.paused, self.update_strategy):
            if pointer is not None:
                split_pointer(pointer)
        for path in (*self.pod_specs, *(p for p in (self.knob_field, self.evidence_field) if p)):
            parse_path(path)
        if self.knob_field is not None:
            path_pointer(self.knob_field)
        self.check_knob()

    def check_knob(self) -> None:
        """Each knob and evidence with what it needs; ValueError naming the kind otherwise."""
        needs = {
            Knob.TIMESTAMP: self.knob_key,
            Knob.ONE_SHOT: self.knob_key,
            Knob.FIELD: self.knob_field,
            Knob.EVICT: self.pod_selection,
        }
        if self.knob in needs and needs[self.knob] is None:
            what = {Knob.FIELD: "a field", Knob.EVICT: "a pod selection"}.get(self.knob, "an annotation key")
            raise ValueError(f"kind {self.kind}: restart {self.knob.value} needs {what}")
        if self.in_place is not None and self.pod_selection is None:
            raise ValueError(f"kind {self.kind}: an in-place update strategy needs a pod selection")
        evidence = self.verified_by
        if evidence is Evidence.PODS and self.pod_selection is None:
            raise ValueError(f"kind {self.kind}: the pods evidence needs a pod selection")
        if evidence in (Evidence.STATUS_TIME, Evidence.STATUS_CHANGE) and self.evidence_field is None:
            raise ValueError(f"kind {self.kind}: the {evidence.value} evidence needs a status field")
        if evidence is Evidence.STATUS and self.health is None:
            raise ValueError(f"kind {self.kind}: the status evidence needs status rules")

    @property
    def verified_by(self) -> Evidence | None:
        """What shows a restart of this kind took effect (None: nothing; its restarts are not verified)."""
        if self.evidence is not None:
            return self.evidence
        if self.health is not None:
            return Evidence.STATUS
        return Evidence.PODS if self.pod_selection is not None and self.rolls_pods else None

    @property
    def watched(self) -> bool:
        """Its rollouts are recorded and checked by later passes (status rules, or some evidence)."""
        return self.rolls_pods and (self.health is not None or self.verified_by is not None)

    @property
    def hash_in_map(self) -> bool:
        """A rollout writes the config hash into the rolling annotations map (the `hash` knob)."""
        return self.knob is Knob.HASH

    @property
    def rollout_in_spec(self) -> bool:
        """A rollout writes into the spec (the server then moves `metadata.generation`)."""
        if self.knob is Knob.EVICT:
            return False
        if self.knob is Knob.FIELD:
            return not (self.knob_field or "").startswith(("metadata.", "/metadata/"))
        return not self.annotations_pointer.startswith("/metadata/")

    def in_place_for(self, obj: Any) -> bool:
        """Whether this object's controller applies a template metadata change in place (`in_place`)."""
        if self.in_place is None:
            return False
        pointer, values = self.in_place
        return resolve(obj, pointer) in values

    def knob_pointer(self) -> str | None:
        """The JSON pointer a rollout writes its timestamp or one-shot value to (None: the hash knob, or
        eviction)."""
        if self.knob is Knob.FIELD:
            assert self.knob_field is not None
            return path_pointer(self.knob_field)
        if self.knob in (Knob.TIMESTAMP, Knob.ONE_SHOT):
            assert self.knob_key is not None
            return self.annotation_path(self.knob_key)
        return None

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

    def referenced_deployment(self, obj: Any) -> str | None:
        """The name of the Deployment (apps/v1) whose template the object runs, when it has no template of
        its own (Argo Rollouts' `spec.workloadRef`)."""
        if self.workload_ref is None or self.template is None or resolve(obj, self.template) is not None:
            return None
        ref = resolve(obj, self.workload_ref)
        if not isinstance(ref, dict) or (ref.get("apiVersion"), ref.get("kind")) != ("apps/v1", "Deployment"):
            return None
        name = ref.get("name")
        return name if isinstance(name, str) and name else None

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
    health=Health.DEPLOYMENT,
    revisions=Revisions.DEPLOYMENT,
    pods=PodOwnership("ReplicaSet", "pod-template-hash"),
    max_unavailable="/spec/strategy/rollingUpdate/maxUnavailable",
)
STATEFULSET = Kind(
    "apps",
    "v1",
    "statefulsets",
    kind="StatefulSet",
    update_strategy="/spec/updateStrategy/type",
    health=Health.STATEFULSET,
    revisions=Revisions.STATEFULSET,
    pods=PodOwnership("StatefulSet"),
    max_unavailable="/spec/updateStrategy/rollingUpdate/maxUnavailable",
)
DAEMONSET = Kind(
    "apps",
    "v1",
    "daemonsets",
    kind="DaemonSet",
    update_strategy="/spec/updateStrategy/type",
    health=Health.DAEMONSET,
    revisions=Revisions.DAEMONSET,
    pods=PodOwnership("DaemonSet"),
    max_unavailable="/spec/updateStrategy/rollingUpdate/maxUnavailable",
)
CRONJOB = Kind(
    "batch",
    "v1",
    "cronjobs",
    kind="CronJob",
    template="/spec/jobTemplate/spec/template",
    suspend="/spec/suspend",
    rolls_pods=False,
    runs_jobs=True,
)
ROLLOUT = Kind(
    "argoproj.io",
    "v1alpha1",
    "rollouts",
    kind="Rollout",
    paused="/spec/paused",
    health=Health.ROLLOUT,
    pods=PodOwnership("ReplicaSet", "rollouts-pod-template-hash"),
    workload_ref="/spec/workloadRef",
    restart_at="/spec/restartAt",
)

BUILTIN_KINDS: tuple[Kind, ...] = (DEPLOYMENT, STATEFULSET, DAEMONSET, CRONJOB, ROLLOUT)


def find_kind(name: str, kinds: tuple[Kind, ...] = BUILTIN_KINDS) -> Kind:
    """Look a kind up as kubectl does: by Kind name, plural, singular or short name, case-insensitively,
    optionally qualified by its API group (`deploy`, `deployments.apps`, `Deployment.apps`)."""
    wanted, _, group = name.lower().partition(".")
    aliases = {
        "deploy": "deployments",
        "sts": "statefulsets",
        "ds": "daemonsets",
        "cj": "cronjobs",
        "ro": "rollouts",
    }
    wanted = aliases.get(wanted, wanted)
    for kind in kinds:
        if group and group != kind.group.lower():
            continue
        if wanted in (kind.kind.lower(), kind.plural, kind.plural.rstrip("s")):
            return kind
    known = ", ".join(k.kind for k in kinds)
    raise KeyError(f"unknown kind {name!r}; known kinds: {known}")
