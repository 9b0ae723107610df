"""The small cluster every robustness history starts from, and what each workload depends on.

Why one fixed shape: the model (tests/robustness/model.py) must know, independently of kube-rehash, which
sources and keys each workload reads, so that it can tell a referenced change from an unreferenced one.
The shape mixes every way of referencing: a whole object (envFrom, a volume), single keys (env valueFrom, a
volume's `items`), an optional source that comes and goes, an explicit required list in an annotation, and
a source nobody reads; the kinds that restart pods (Deployment, StatefulSet, DaemonSet) and a CronJob with
run-on-change. Values are drawn from a tiny alphabet so that histories flip a value and flip it back.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

PREFIX = "kube-rehash.io"
HASH = f"{PREFIX}/config-hash"
NAMESPACES = ("a", "b")
VALUES = ("0", "1", "2")

# The sources of one namespace: kind, name, initial data, whether some workload must find it (required).
SOURCES: dict[str, tuple[str, dict[str, str]]] = {
    "app": ("configmap", {"a": "0", "b": "0"}),
    "flags": ("configmap", {"f": "0", "g": "0"}),
    "db": ("secret", {"pw": "0", "user": "0"}),
    "opt": ("configmap", {"o": "0"}),
    "extra": ("configmap", {"x": "0"}),
    "noise": ("configmap", {"n": "0"}),
}


@dataclass(frozen=True)
class Ref:
    """One way a workload reads a source: the keys it reads (None: the whole object), whether the source
    may be missing, and the form: `env` (valueFrom, one key each), `envFrom`, or a `volume` (whole, or
    only its `items` keys)."""

    source: str
    keys: tuple[str, ...] | None
    optional: bool = False
    form: str = "envFrom"

    @property
    def kind(self) -> str:
        return SOURCES[self.source][0]


@dataclass(frozen=True)
class Shape:
    """A workload of the world: its kind, its references, and whether it opts in by `watch` (an explicit
    `configmaps` list opts in by itself)."""

    name: str
    kind: str
    refs: tuple[Ref, ...]
    explicit: tuple[str, ...] = ()
    """ConfigMaps named in the `configmaps` annotation (required, whole)."""

    @property
    def resource(self) -> str:
        return f"{self.kind.lower()}s"

    @property
    def rolls_pods(self) -> bool:
        return self.kind != "CronJob"

    def dependencies(self) -> dict[str, tuple[tuple[str, ...] | None, bool]]:
        """Source name -> (keys read, None for the whole object; every use optional)."""
        out: dict[str, tuple[tuple[str, ...] | None, bool]] = {}
        refs = [*self.refs, *(Ref(name, None) for name in self.explicit)]
        for ref in refs:
            keys, optional = out.get(ref.source, ((), True))
            if keys is None or ref.keys is None:
                merged: tuple[str, ...] | None = None
            else:
                merged = tuple(sorted({*keys, *ref.keys}))
            out[ref.source] = (merged, optional and ref.optional)
        return out


SHAPES = (
    Shape("w0", "Deployment", (Ref("app", None),)),
    Shape("w1", "Deployment", (Ref("app", ("a",), form="env"), Ref("db", ("pw",), form="env"))),
    Shape("w2", "StatefulSet", (Ref("flags", None), Ref("opt", None, optional=True))),
    Shape("w3", "Deployment", (Ref("app", ("b",), form="volume"),), explicit=("extra",)),
    Shape("w4", "DaemonSet", (Ref("flags", ("f",), form="env"), Ref("db", None, form="volume"))),
    Shape("cj", "CronJob", (Ref("app", None), Ref("opt", ("o",), optional=True, form="env"))),
)
BY_NAME = {s.name: s for s in SHAPES}


def source_object(name: str, namespace: str, data: dict[str, str]) -> dict[str, Any]:
    kind, _ = SOURCES[name]
    meta = {"name": name, "namespace": namespace}
    if kind == "secret":
        return {"apiVersion": "v1", "kind": "Secret", "type": "Opaque", "metadata": meta, "stringData": data}
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": data}


def pod_spec(shape: Shape, image: str = "app:1") -> dict[str, Any]:
    """The pod spec reading `shape`'s references, each in its own form."""
    env: list[dict[str, Any]] = []
    env_from: list[dict[str, Any]] = []
    volumes: list[dict[str, Any]] = []
    mounts: list[dict[str, Any]] = []
    for ref in shape.refs:
        secret = ref.kind == "secret"
        extra = {"optional": True} if ref.optional else {}
        if ref.form == "volume":
            source: dict[str, Any] = {"secretName": ref.source} if secret else {"name": ref.source}
            if ref.keys is not None:
                source["items"] = [{"key": key, "path": key} for key in ref.keys]
            volumes.append({"name": ref.source, ("secret" if secret else "configMap"): {**source, **extra}})
            mounts.append({"name": ref.source, "mountPath": f"/etc/{ref.source}"})
        elif ref.form == "envFrom":
            env_from.append({"secretRef" if secret else "configMapRef": {"name": ref.source, **extra}})
        else:
            selector = "secretKeyRef" if secret else "configMapKeyRef"
            for key in ref.keys or ():
                picked = {selector: {"name": ref.source, "key": key, **extra}}
                env.append({"name": f"{ref.source}_{key}".upper(), "valueFrom": picked})
    container: dict[str, Any] = {"name": "app", "image": image}
    for field, items in (("env", env), ("envFrom", env_from), ("volumeMounts", mounts)):
        if items:
            container[field] = items
    spec: dict[str, Any] = {"containers": [container]}
    if volumes:
        spec["volumes"] = volumes
    return spec


def opt_in_annotations(shape: Shape) -> dict[str, str]:
    annotations = {f"{PREFIX}/watch": "true"}
    if shape.explicit:
        annotations[f"{PREFIX}/configmaps"] = ",".join(shape.explicit)
    if shape.kind == "CronJob":
        annotations[f"{PREFIX}/run-on-change"] = "true"
    return annotations


def workload_object(shape: Shape, namespace: str) -> dict[str, Any]:
    """The manifest of `shape` (what a GitOps tool applies: none of kube-rehash's annotations)."""
    meta = {"name": shape.name, "namespace": namespace, "annotations": opt_in_annotations(shape)}
    labels = {"app": shape.name}
    template: dict[str, Any] = {"metadata": {"labels": labels}, "spec": pod_spec(shape)}
    if shape.kind == "CronJob":
        job_pod = {**template, "spec": {**template["spec"], "restartPolicy": "Never"}}
        spec: dict[str, Any] = {
            "schedule": "0 0 1 1 *",  # never during a test: every Job is made by kube-rehash
            "jobTemplate": {"spec": {"backoffLimit": 0, "template": job_pod}},
        }
        return {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": meta, "spec": spec}
    spec = {"selector": {"matchLabels": labels}, "template": template}
    if shape.kind != "DaemonSet":
        spec["replicas"] = 1
    if shape.kind == "StatefulSet":
        spec["serviceName"] = shape.name
    if shape.kind == "Deployment":  # fast rolling updates on fake nodes
        spec["strategy"] = {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}}
    return {"apiVersion": "apps/v1", "kind": shape.kind, "metadata": meta, "spec": spec}


def template_of(obj: dict[str, Any]) -> dict[str, Any]:
    """The pod template of a workload object (a CronJob's is its job template's)."""
    spec = obj.get("spec") or {}
    if obj.get("kind") == "CronJob":
        return ((spec.get("jobTemplate") or {}).get("spec") or {}).get("template") or {}
    return spec.get("template") or {}


def template_hash(obj: dict[str, Any] | None) -> str | None:
    if obj is None:
        return None
    value = ((template_of(obj).get("metadata") or {}).get("annotations") or {}).get(HASH)
    return value if isinstance(value, str) else None


def our_annotations(obj: dict[str, Any]) -> dict[str, str]:
    """kube-rehash's bookkeeping on the workload's metadata (what it writes there)."""
    annotations = (obj.get("metadata") or {}).get("annotations") or {}
    return {k: v for k, v in annotations.items() if k.startswith(f"{PREFIX}/") and k.split("/")[1] in WRITTEN}


WRITTEN = frozenset({"config-hash", "sources", "last-rollout", "rollout", "superseded-template-hash"})
"""The annotations kube-rehash writes (reconcile/model/annotations.py); every other one is the user's."""
# Written by the API server and controllers, never by a user or by kube-rehash.
SERVER_FIELDS = ("resourceVersion", "generation", "managedFields", "uid", "creationTimestamp")
CONTROLLER_ANNOTATIONS = ("deployment.kubernetes.io/revision", "deprecated.daemonset.template.generation")
CHANGE_CAUSE = "kubernetes.io/change-cause"
"""Set by kube-rehash on every rollout (`kubectl rollout history` shows it), beside its own annotations."""


def without_ours(obj: dict[str, Any]) -> dict[str, Any]:
    """The object minus kube-rehash's annotations, the server's and controllers' fields and `status`."""
    copy_ = copy.deepcopy(obj)
    meta = copy_.get("metadata") or {}
    for key in SERVER_FIELDS:
        meta.pop(key, None)
    copy_.pop("status", None)
    annotations = meta.get("annotations") or {}
    theirs = (*CONTROLLER_ANNOTATIONS, CHANGE_CAUSE)
    for key in [k for k in annotations if k in theirs or k in our_annotations(obj)]:
        del annotations[key]
    tmeta = template_of(copy_).get("metadata")
    if isinstance(tmeta, dict):
        tann = tmeta.get("annotations") or {}
        tann.pop(HASH, None)
        if not tann:
            tmeta.pop("annotations", None)
    return copy_
