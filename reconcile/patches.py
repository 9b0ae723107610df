"""The bodies of the only writes kube-rehash makes: one guarded JSON patch per workload, Events, Jobs.

Each patch carries its own precondition (a JSON-patch `test` of the value the decision was based on,
or of the object's resourceVersion where a map has to be created), so a concurrent writer is never
overwritten: the server answers 422/409 and the pass re-reads and decides again.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from reconcile.kube.kinds import CRONJOB, EVENTS, JOBS
from reconcile.plan import Action, Decision, Observed, stamp_generation
from reconcile.pointer import join_pointer
from reconcile.targets import Annotations, Target, format_records, format_time

JsonPatch = list[dict[str, Any]]
COMPONENT = "kube-rehash"
METADATA_ANNOTATIONS = "/metadata/annotations"


def test_op(path: str, value: str) -> dict[str, Any]:
    return {"op": "test", "path": path, "value": value}


def add_op(path: str, value: Any) -> dict[str, Any]:
    return {"op": "add", "path": path, "value": value}


def metadata_path(key: str) -> str:
    return METADATA_ANNOTATIONS + join_pointer(key)


def preconditions(target: Target, keys: Annotations, *, template: bool) -> JsonPatch:
    """Tests of the stored values the decision read; resourceVersion when no value pins the state."""
    ops: JsonPatch = []
    if template and target.template_hash is not None:
        ops.append(test_op(target.kind.annotation_path(keys.config_hash), target.template_hash))
    if target.bookkeeping.config_hash is not None:
        ops.append(test_op(metadata_path(keys.config_hash), target.bookkeeping.config_hash))
    creates_map = template and not target.annotations_map_present
    if not ops or creates_map:
        # A JSON patch cannot test that a key is absent, and `add` of a whole map would replace a
        # map someone created meanwhile: pin the whole object instead.
        ops.append(test_op("/metadata/resourceVersion", target.resource_version))
    return ops


def template_op(target: Target, key: str, value: str) -> dict[str, Any]:
    """Set one annotation in the rolling annotations map, creating the map (or metadata) if absent."""
    kind = target.kind
    if target.annotations_map_present:
        return add_op(kind.annotation_path(key), value)
    if kind.template is not None and not target.template_metadata_present:
        return add_op(kind.template + "/metadata", {"annotations": {key: value}})
    return add_op(kind.annotations_pointer, {key: value})


def build_patch(
    target: Target, decision: Decision, observed: Observed, *, now: datetime, keys: Annotations
) -> JsonPatch:
    """The JSON patch that carries out a writing decision (rollout, adopt or refresh)."""
    if decision.action not in (Action.ROLLOUT, Action.ADOPT, Action.REFRESH) or decision.config_hash is None:
        raise ValueError(f"{decision.action} does not write")
    rollout = decision.action is Action.ROLLOUT
    ops = preconditions(target, keys, template=rollout or target.template_hash is not None)
    if rollout:
        ops.append(template_op(target, keys.config_hash, decision.config_hash))
    ops.append(add_op(metadata_path(keys.config_hash), decision.config_hash))
    generation = stamp_generation(target, observed)
    if generation is not None and rollout and not target.kind.annotations_pointer.startswith("/metadata/"):
        generation += 1  # the template annotation is part of the spec: the server bumps generation once
    records = format_records(
        observed.records, observed.key_fingerprint, generation=generation, inputs=target.inputs
    )
    ops.append(add_op(metadata_path(keys.sources), records))
    if rollout:
        ops.append(add_op(metadata_path(keys.last_rollout), format_time(now)))
    return ops


def event_name(target: Target, now: datetime, reason: str) -> str:
    suffix = hashlib.sha256(f"{target.uid}/{reason}/{now.isoformat()}".encode()).hexdigest()[:10]
    return f"{target.name[:240]}.{suffix}"


def build_event(target: Target, *, reason: str, message: str, warning: bool, now: datetime) -> dict[str, Any]:
    """A core/v1 Event on the workload. The message names configs, never their values."""
    stamp = format_time(now)
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": event_name(target, now, reason), "namespace": target.namespace},
        "involvedObject": {
            "apiVersion": target.kind.api_version,
            "kind": target.kind.kind,
            "namespace": target.namespace,
            "name": target.name,
            "uid": target.uid,
        },
        "reason": reason,
        "message": message[:1024],
        "type": "Warning" if warning else "Normal",
        "source": {"component": COMPONENT},
        "reportingComponent": COMPONENT,
        "reportingInstance": COMPONENT,
        "firstTimestamp": stamp,
        "lastTimestamp": stamp,
        "count": 1,
    }


def events_path(target: Target) -> str:
    return EVENTS.collection_path(target.namespace)


def job_name(cronjob: str, config_hash: str) -> str:
    """Deterministic per (CronJob, hash): overlapping passes create the Job once (409 otherwise)."""
    digest = hashlib.sha256(config_hash.encode()).hexdigest()[:8]
    return f"{cronjob[:43].rstrip('-.')}-rehash-{digest}"


def build_job(cronjob: Mapping[str, Any], config_hash: str) -> dict[str, Any] | None:
    """A Job from the CronJob's template, as `kubectl create job --from=cronjob/NAME` makes it."""
    metadata = cronjob.get("metadata") or {}
    template = (cronjob.get("spec") or {}).get("jobTemplate") or {}
    if not isinstance(metadata, Mapping) or not isinstance(template, Mapping) or not template.get("spec"):
        return None
    tmeta = template.get("metadata") or {}
    annotations = dict(tmeta.get("annotations") or {}) if isinstance(tmeta, Mapping) else {}
    annotations["cronjob.kubernetes.io/instantiate"] = "manual"
    labels = dict(tmeta.get("labels") or {}) if isinstance(tmeta, Mapping) else {}
    return {
        "apiVersion": JOBS.api_version,
        "kind": "Job",
        "metadata": {
            "name": job_name(str(metadata.get("name", "cronjob")), config_hash),
            "namespace": metadata.get("namespace"),
            "labels": labels,
            "annotations": annotations,
            "ownerReferences": [
                {
                    "apiVersion": CRONJOB.api_version,
                    "kind": "CronJob",
                    "name": metadata.get("name"),
                    "uid": metadata.get("uid"),
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
        },
        "spec": template["spec"],
    }


def jobs_path(namespace: str) -> str:
    return JOBS.collection_path(namespace)
