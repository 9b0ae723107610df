"""What real clusters add to every object: managedFields, the last-applied annotation, labels, status.

Why: a metadata-only list on a real cluster carries mostly what the API server and the deployers wrote
into `metadata` (managedFields of several managers, kubectl's `last-applied-configuration`, Helm's and
Argo CD's labels and annotations), not what the benchmark's thin objects carry (a name and a label or
two). The benchmark's generator (`Shape(objects="realistic")`, `python -m benchmarks --objects realistic`)
and `kube-rehash simulate --seed-demo`/`kube-rehash demo` pass every object they seed through `dress`,
which adds them in the form the real kube-apiserver stores them, measured by `python -m
benchmarks.realistic_objects` (benchmarks/realistic-objects.json, docs/engineering/performance-history.md
"Objects as real clusters hold them"). It lives in the simulator's distribution so that both can use it:

- Who deployed it (drawn per object from its own seeded RNG): Helm 4's server-side apply (manager
  `helm`, half the objects), Argo CD's server-side apply (`argocd-controller`, 30%) or `kubectl apply`
  (client-side: manager `kubectl-client-side-apply` and the last-applied annotation, 20%). Each gets the
  labels and annotations that deployer writes, and a managedFields entry owning every field it applied.
- After the deploy: the controllers' status writes on workloads (manager `kube-controller-manager`,
  subresource `status`, and the status block itself) and, on a tenth of the objects, a later edit by hand
  (`kubectl-edit`, owning one annotation).
- Helm release Secrets: the one `Update` entry of Helm's storage driver (manager `helm`).

The managedFields are built from each object's actual keys (FieldsV1, with list items keyed as the
server keys them: containers, env and volumes by name, ports by containerPort and protocol, mounts by
mountPath, conditions by type).
Everything is a function of the object and the seed: same seed, same cluster.
"""

from __future__ import annotations

import json
import random
from typing import Any

LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"
# Who deployed an object, with its share (the rest: kubectl's client-side apply).
DEPLOYERS = (("helm", 0.5), ("argocd-controller", 0.3))
KUBECTL = "kubectl-client-side-apply"
EDITED_SHARE = 0.1
# List merge keys (the server keys their items by these in FieldsV1).
MERGE_KEYS = {
    "containers": ("name",),
    "initContainers": ("name",),
    "env": ("name",),
    "volumes": ("name",),
    "volumeMounts": ("mountPath",),
    "ports": ("containerPort", "protocol"),
    "imagePullSecrets": ("name",),
    "conditions": ("type",),
}
# Maps the schema declares atomic: owned whole, no member listed.
ATOMIC = frozenset(("selector",))
# Maps an Update does not mark as its own (".") when it creates them: the object's own structure.
STRUCTURE = frozenset(("metadata", "spec", "template", "jobTemplate", "status"))
# Fixed times (the objects' deploys and edits): deterministic, and older than any run.
APPLIED_AT = "2026-09-14T08:21:37Z"
EDITED_AT = "2026-10-02T15:04:11Z"
STATUS_AT = "2026-10-02T15:05:02Z"
WORKLOADS = frozenset(("Deployment", "StatefulSet", "DaemonSet", "CronJob"))


def fields_v1(value: dict[str, Any], *, update: bool = False) -> dict[str, Any]:
    """The FieldsV1 set owning every field of `value`, as kube-apiserver writes it; `update`: as an
    Update that created them writes it (every map and keyed list it created marked `.`)."""
    return {f"f:{key}": _field(key, item, update) for key, item in value.items()}


def _field(key: str, item: Any, update: bool) -> dict[str, Any]:
    dot: dict[str, Any] = {".": {}} if update and key not in STRUCTURE else {}
    if isinstance(item, dict):
        return {**dot, **fields_v1(item, update=update)} if item and key not in ATOMIC else {}
    merge = MERGE_KEYS.get(key)
    if isinstance(item, list) and merge and all(isinstance(i, dict) and merge[0] in i for i in item):
        keyed: dict[str, Any] = dict(dot)
        for element in item:
            name = json.dumps({k: element[k] for k in merge if k in element}, separators=(",", ":"))
            keyed[f"k:{name}"] = {".": {}, **fields_v1(element, update=update)}
        return keyed
    return {}  # a scalar or an atomic list


def _entry(
    manager: str, operation: str, api_version: str, time: str, owned: dict[str, Any]
) -> dict[str, Any]:
    return {
        "manager": manager,
        "operation": operation,
        "apiVersion": api_version,
        "time": time,
        "fieldsType": "FieldsV1",
        "fieldsV1": owned,
    }


def _applied_part(obj: dict[str, Any]) -> dict[str, Any]:
    """What a deployer applied: everything but the server's own fields (and the status)."""
    meta = obj["metadata"]
    applied_meta = {k: meta[k] for k in ("name", "namespace", "labels", "annotations") if meta.get(k)}
    return {
        **{k: v for k, v in obj.items() if k not in ("metadata", "status")},
        "metadata": applied_meta,
    }


def owned_fields(applied: dict[str, Any], *, update: bool = False) -> dict[str, Any]:
    """What a deployer's entry owns: what it sent except apiVersion, kind, name and namespace."""
    owned = fields_v1(
        {k: v for k, v in applied.items() if k not in ("apiVersion", "kind", "metadata")}, update=update
    )
    meta = {k: v for k, v in applied["metadata"].items() if k not in ("name", "namespace")}
    if meta:
        owned["f:metadata"] = fields_v1(meta, update=update)
    return owned


def _deployer_metadata(obj: dict[str, Any], deployer: str, rng: random.Random) -> None:
    """The labels and annotations each deployer writes (Helm: the app.kubernetes.io set, managed-by and
    the release annotations; Argo CD: its tracking annotation)."""
    meta = obj["metadata"]
    ns, name = meta.get("namespace", ""), meta["name"]
    release = f"{ns}-{rng.choice(('api', 'web', 'worker', 'platform', 'data'))}"
    labels = meta["labels"] = dict(meta.get("labels") or {})  # not the selector's and template's too
    labels.update(
        {
            "app.kubernetes.io/name": labels.get("app.kubernetes.io/name", name),
            "app.kubernetes.io/instance": release,
            "app.kubernetes.io/version": f"1.{rng.randint(0, 40)}.{rng.randint(0, 9)}",
            "app.kubernetes.io/component": rng.choice(("server", "worker", "config", "database", "cache")),
            "app.kubernetes.io/part-of": ns,
        }
    )
    annotations = meta.setdefault("annotations", {})
    if deployer == "helm":
        labels["app.kubernetes.io/managed-by"] = "Helm"
        labels["helm.sh/chart"] = f"{release}-{rng.randint(0, 9)}.{rng.randint(0, 30)}.{rng.randint(0, 9)}"
        annotations["meta.helm.sh/release-name"] = release
        annotations["meta.helm.sh/release-namespace"] = ns
    elif deployer == "argocd-controller":
        group = obj["apiVersion"].rpartition("/")[0]
        annotations["argocd.argoproj.io/tracking-id"] = f"{release}:{group}/{obj['kind']}:{ns}/{name}"


def _status(obj: dict[str, Any]) -> dict[str, Any] | None:
    """A settled workload's status as its controller writes it (every replica updated and ready)."""
    kind, spec = obj["kind"], obj.get("spec", {})
    replicas = spec.get("replicas", 1)
    if kind == "Deployment":
        return {
            "observedGeneration": 1,
            "replicas": replicas,
            "updatedReplicas": replicas,
            "readyReplicas": replicas,
            "availableReplicas": replicas,
            "conditions": [
                _condition("Available", "MinimumReplicasAvailable", "Deployment has minimum availability."),
                _condition(
                    "Progressing",
                    "NewReplicaSetAvailable",
                    f'ReplicaSet "{obj["metadata"]["name"]}-5d8f7c9b6d" has successfully progressed.',
                ),
            ],
        }
    if kind == "StatefulSet":
        revision = f"{obj['metadata']['name']}-7c9d8b5f46"
        return {
            "observedGeneration": 1,
            "replicas": replicas,
            "readyReplicas": replicas,
            "currentReplicas": replicas,
            "updatedReplicas": replicas,
            "availableReplicas": replicas,
            "currentRevision": revision,
            "updateRevision": revision,
            "collisionCount": 0,
        }
    if kind == "DaemonSet":
        return {
            "observedGeneration": 1,
            "currentNumberScheduled": 3,
            "desiredNumberScheduled": 3,
            "numberMisscheduled": 0,
            "numberReady": 3,
            "numberAvailable": 3,
            "updatedNumberScheduled": 3,
        }
    if kind == "CronJob":
        return {"lastScheduleTime": "2026-10-02T15:00:00Z", "lastSuccessfulTime": "2026-10-02T15:00:41Z"}
    return None


def _condition(kind: str, reason: str, message: str) -> dict[str, str]:
    return {
        "type": kind,
        "status": "True",
        "lastUpdateTime": STATUS_AT,
        "lastTransitionTime": STATUS_AT,
        "reason": reason,
        "message": message,
    }


def deployer_of(rng: random.Random) -> str:
    roll = rng.random()
    for deployer, share in DEPLOYERS:
        if roll < share:
            return deployer
        roll -= share
    return KUBECTL


def dress(obj: dict[str, Any], seed: int, *, deployer: str | None = None) -> dict[str, Any]:
    """`obj` (modified in place and returned) as a real cluster holds it; see the module docstring.
    `deployer` (helm, argocd-controller or kubectl-client-side-apply): instead of the drawn one."""
    meta = obj["metadata"]
    if obj["kind"] == "Namespace":
        return obj
    rng = random.Random(f"{seed}/{obj['kind']}/{meta.get('namespace', '')}/{meta['name']}")
    api = obj["apiVersion"]
    if obj.get("type") == "helm.sh/release.v1":
        labels = meta["labels"] = dict(meta.get("labels") or {})
        labels["modifiedAt"] = str(1757838097 + rng.randrange(3_000_000))
        owned = owned_fields(_applied_part(obj), update=True)
        meta["managedFields"] = [_entry("helm", "Update", api, APPLIED_AT, owned)]
        return obj
    drawn = deployer_of(rng)
    deployer = deployer or drawn
    _deployer_metadata(obj, deployer, rng)
    applied = _applied_part(obj)
    if deployer == KUBECTL:
        text = json.dumps(applied, separators=(",", ":"), sort_keys=True) + "\n"
        meta["annotations"][LAST_APPLIED] = text
        owned = owned_fields(_applied_part(obj), update=True)
        entries = [_entry(KUBECTL, "Update", api, APPLIED_AT, owned)]
    else:
        entries = [_entry(deployer, "Apply", api, APPLIED_AT, owned_fields(applied))]
    if obj["kind"] in WORKLOADS:
        status = _status(obj)
        if status is not None:
            obj["status"] = status
            status_owned: dict[str, Any] = {"f:status": fields_v1(status, update=True)}
            if obj["kind"] == "Deployment":
                status_owned["f:metadata"] = {"f:annotations": {"f:deployment.kubernetes.io/revision": {}}}
            entry = _entry("kube-controller-manager", "Update", api, STATUS_AT, status_owned)
            entry["subresource"] = "status"
            entries.append(entry)
    if rng.random() < EDITED_SHARE:
        meta.setdefault("annotations", {})["example.com/owner-team"] = f"team-{rng.randint(1, 20)}"
        owned = {"f:metadata": {"f:annotations": {"f:example.com/owner-team": {}}}}
        entries.append(_entry("kubectl-edit", "Update", api, EDITED_AT, owned))
    meta["managedFields"] = entries
    return obj
