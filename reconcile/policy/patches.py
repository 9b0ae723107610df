"""The bodies of the only writes kube-rehash makes: one guarded JSON patch per workload, and Jobs.

Each patch carries its own precondition (a JSON-patch `test` of the value the decision was based on,
or of the object's resourceVersion where a map has to be created), so a concurrent writer is never
overwritten: the server answers 422/409 and the pass re-reads and decides again.

A rollout also sets `kubernetes.io/change-cause` (policy/audit.py, which builds the Events too), so
`kubectl rollout history` names the sources whose change made the revision.

What a rollout writes is its kind's restart knob (`Kind.knob`): the hash into the rolling annotations map,
a time or a one-shot value under a named annotation, a time into a field, or nothing (eviction).

A rollout of a kind whose status is watched (`Kind.watched`) also records itself (annotation
`rollout`) in the same patch; later passes move that record to `stalled` or `complete` with a
metadata-only patch that tests the record it replaces, so two passes never report one stall twice.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from reconcile.model.annotations import Annotations
from reconcile.model.bookkeeping import RecordsDoc, RolloutRecord, format_records, format_rollout
from reconcile.model.kinds import CRONJOB, JOBS
from reconcile.model.knobs import Knob
from reconcile.model.pointer import join_pointer, split_pointer
from reconcile.model.times import format_time
from reconcile.model.workload import Listed, Target, facts_after, stamp_holds
from reconcile.policy.audit import CHANGE_CAUSE, change_cause
from reconcile.policy.decision import (
    WRITING_ACTIONS,
    Action,
    Decision,
    Observed,
    generation_after,
    stamp_generation,
)

JsonPatch = list[dict[str, Any]]
METADATA_ANNOTATIONS = "/metadata/annotations"


def test_op(path: str, value: Any) -> dict[str, Any]:
    return {"op": "test", "path": path, "value": value}


def add_op(path: str, value: Any) -> dict[str, Any]:
    return {"op": "add", "path": path, "value": value}


def metadata_path(key: str) -> str:
    return METADATA_ANNOTATIONS + join_pointer(key)


def preconditions(target: Target, keys: Annotations, *, template: bool) -> JsonPatch:
    """Tests of the stored values the decision read, and of the spec it read them from where no stored
    value pins the state (first sight) or the patch creates a map in the pod template.

    A JSON patch cannot test that a key is absent, and `add` of a whole map would replace a map someone
    created meanwhile. `metadata.generation` pins the spec (the server moves it on every spec change, and
    a Deployment's on every annotation change too) without failing on a controller's status write, which
    moves only the resourceVersion: a failed test then means someone changed what the decision rests on.
    An object without a generation, or a map created in its metadata, pins the resourceVersion."""
    ops: JsonPatch = []
    if template and target.template_hash is not None:
        ops.append(test_op(target.kind.annotation_path(keys.config_hash), target.template_hash))
    if target.bookkeeping.config_hash is not None:
        ops.append(test_op(metadata_path(keys.config_hash), target.bookkeeping.config_hash))
    creates_map = template and not target.annotations_map_present
    if target.unread:  # decided from the records: the generation proves the spec is what they describe
        ops.append(test_op("/metadata/generation", target.generation))
    elif not ops or creates_map:
        in_metadata = creates_map and target.kind.annotations_pointer.startswith("/metadata/")
        if target.generation is not None and not in_metadata:
            ops.append(test_op("/metadata/generation", target.generation))
        else:
            ops.append(test_op("/metadata/resourceVersion", target.resource_version))
    return ops


def template_op(target: Target, key: str, value: str) -> dict[str, Any]:
    """Set one annotation in the rolling annotations map, creating the map (or its parent: the template's
    metadata, or the object holding a bare map, e.g. a PostgresCluster's `spec.metadata`) if absent."""
    kind = target.kind
    if target.annotations_map_present:
        return add_op(kind.annotation_path(key), value)
    if not target.template_metadata_present:
        if kind.template is not None:
            return add_op(kind.template + "/metadata", {"annotations": {key: value}})
        parent = kind.annotations_pointer.rpartition("/")[0]
        return add_op(parent, {split_pointer(kind.annotations_pointer)[-1]: {key: value}})
    return add_op(kind.annotations_pointer, {key: value})


def writes_map(target: Target) -> bool:
    """A rollout of it writes into the rolling annotations map (the hash, a time or a one-shot value)."""
    if target.workload_ref is not None and target.kind.restart_at is not None:
        return False
    return target.kind.knob in (Knob.HASH, Knob.TIMESTAMP, Knob.ONE_SHOT)


def restart_ops(target: Target, decision: Decision, keys: Annotations, now: datetime) -> JsonPatch:
    """What a rollout writes to restart the pods: the time into `restart_at` for a workload running a
    referenced template, else its kind's knob (the hash, a time, a one-shot value, or a field)."""
    kind = target.kind
    assert decision.config_hash is not None
    if target.workload_ref is not None and kind.restart_at is not None:
        return [add_op(kind.restart_at, format_time(now))]
    if kind.knob is Knob.HASH:
        return [template_op(target, keys.config_hash, decision.config_hash)]
    if kind.knob is Knob.FIELD:
        pointer = kind.knob_pointer()
        assert pointer is not None
        return [add_op(pointer, format_time(now))]
    if kind.knob in (Knob.TIMESTAMP, Knob.ONE_SHOT):
        assert kind.knob_key is not None
        value = format_time(now) if kind.knob is Knob.TIMESTAMP else kind.knob_value
        return [template_op(target, kind.knob_key, value)]
    return []  # eviction: the pods are evicted, nothing of the workload changes but our bookkeeping


def build_patch(
    target: Target, decision: Decision, observed: Observed, *, now: datetime, keys: Annotations
) -> JsonPatch:
    """The JSON patch that carries out a writing decision (rollout, adopt or refresh)."""
    if decision.action not in WRITING_ACTIONS or decision.config_hash is None:
        raise ValueError(f"{decision.action} does not write")
    rollout = decision.action is Action.ROLLOUT
    restart = restart_ops(target, decision, keys, now) if rollout else []
    template = (rollout and writes_map(target)) or target.template_hash is not None
    ops = preconditions(target, keys, template=template)
    if not target.metadata_annotations_present:  # created once, guarded by the resourceVersion read
        if not any(op["path"] == "/metadata/resourceVersion" for op in ops):
            ops.append(test_op("/metadata/resourceVersion", target.resource_version))
        ops.append(add_op(METADATA_ANNOTATIONS, {}))
    ops += restart
    ops.append(add_op(metadata_path(keys.config_hash), decision.config_hash))
    generation = generation_after(target.listed, stamp_generation(target, observed), rollout=rollout)
    records = format_records(
        observed.records,
        observed.key_fingerprint,
        generation=generation,
        inputs=target.inputs,
        facts=facts_after(target, decision.config_hash, rollout=rollout),
    )
    ops.append(add_op(metadata_path(keys.sources), records))
    template_hash = target.template_hash
    if (
        decision.action is Action.REFRESH
        and template_hash is not None
        and template_hash != decision.config_hash
    ):
        # The pods of this template started after the change (freshness): it stands for the new hash.
        ops.append(add_op(metadata_path(keys.superseded), template_hash))
    elif rollout and target.bookkeeping.superseded is not None:
        ops.append({"op": "remove", "path": metadata_path(keys.superseded)})
    if decision.action is Action.NOTIFY and target.bookkeeping.rollout is not None:
        # The recorded hash is now one no rollout of ours wrote: a template that keeps the older rollout's
        # hash is not a reverted one, and the workload rolls once it leaves notify mode.
        ops.append({"op": "remove", "path": metadata_path(keys.rollout)})
    if rollout:
        ops.append(add_op(metadata_path(keys.last_rollout), format_time(now)))
        ops.append(add_op(metadata_path(CHANGE_CAUSE), change_cause(decision)))
        if target.kind.watched:
            record = format_rollout(new_rollout(target, decision, now))
            ops.append(add_op(metadata_path(keys.rollout), record))
    return ops


def new_rollout(target: Target, decision: Decision, now: datetime) -> RolloutRecord:
    """The record of the rollout this decision starts: the generation after our patch, the time, the
    changed sources' names (every source's on first sight) and, for a kind whose restart shows in a status
    field's move, that field's value now."""
    generation = generation_after(target.listed, target.generation, rollout=True)
    changed = decision.changed or decision.configs
    return RolloutRecord(generation, now, changed, before=target.evidence_before)


def rollout_state_patch(
    target: Listed,
    record: RolloutRecord,
    state: str,
    keys: Annotations,
    *,
    written: tuple[Target, Observed] | None = None,
    cause: str = "",
) -> JsonPatch:
    """Move our recorded rollout to `state` on metadata only, if the record is still the one we read
    (and the stored hash too): a test fails when another pass or a new rollout replaced it.

    `written`: the full view and the records this pass's own patch (an adopt or refresh of `target`) just
    stamped with a generation; they are stamped again with the generation this second write leads to.
    `cause`: why a restart recorded `not-effective` did not take effect."""
    ops: JsonPatch = [test_op(metadata_path(keys.rollout), record.text)]
    if target.bookkeeping.config_hash is not None:
        ops.append(test_op(metadata_path(keys.config_hash), target.bookkeeping.config_hash))
    moved = RolloutRecord(record.generation, record.at, record.changed, state, cause, record.before)
    ops.append(add_op(metadata_path(keys.rollout), format_rollout(moved)))
    book = target.bookkeeping
    restamped: RecordsDoc | None = None
    if written is not None:
        full, observed = written
        stamped = generation_after(target, stamp_generation(full, observed), rollout=False)
        after = generation_after(target, stamped, rollout=False)
        if after != stamped:  # our first write's stamp would be one behind: keep it true
            facts = facts_after(full, observed.config_hash, rollout=False)
            restamped = RecordsDoc(
                observed.records, observed.key_fingerprint, after, target.inputs, facts=facts
            )
    elif book.records is not None and stamp_holds(target):
        after = generation_after(target, target.generation, rollout=False)
        if after != book.generation:  # the kind's generation follows its annotations: keep the stamp true
            restamped = RecordsDoc(book.records, book.key_fingerprint, after, book.inputs, facts=book.facts)
    if restamped is not None:
        text = format_records(
            restamped.records,
            restamped.key_fingerprint,
            generation=restamped.generation,
            inputs=restamped.inputs,
            facts=restamped.facts,
        )
        ops.append(add_op(metadata_path(keys.sources), text))
    return ops


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
                    "kind": CRONJOB.kind,
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
