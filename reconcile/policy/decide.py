"""The decision table over what a batch's reads established: a full view (`decide_target`), a trusted
workload's records (`confirm_recorded`), or a view built from those records (`target_from_records`).

Pure: `policy.answer` calls these once every input of the workload is known; what the budget did not let
the reads reach makes the workload `deferred` with the reason `pass budget`, never `failed`. This is the
only module that runs the decision table; `explain` and the re-decision after a failed precondition reach
it through the same answers.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from reconcile.model.bookkeeping import SourceRecord, bound_key_names, names_unkept
from reconcile.model.csi import mount_records
from reconcile.model.freshness import Change, Origin, fresh_reason, pods_newer
from reconcile.model.hashing import WHOLE, selection_tag
from reconcile.model.references import KINDS, source_ignored
from reconcile.model.rollouts import check
from reconcile.model.sources import NamespaceSources, SourceKey
from reconcile.model.workload import Listed, Target, stamp_holds
from reconcile.policy.classify import Classified, absent_record, classify, key_names, key_of
from reconcile.policy.decision import (
    Action,
    Decision,
    Deferral,
    Skip,
    Unreadable,
    defer_for_budget,
    observed_from,
    skip,
    skip_for_unreadable,
)
from reconcile.policy.rules import Rules
from reconcile.policy.settle import hold_unsettled
from reconcile.policy.table import decide, decide_early, notifies


def unknown_inputs(target: Target, sources: NamespaceSources) -> tuple[str | Unreadable | None, bool]:
    """(the first unreadable input's error, or the source read by name that failed; whether some source
    was not reached) for one full view."""
    kinds = {ref.kind for ref in target.discovery.references}
    if target.discovery.match_annotations:
        kinds |= set(target.discovery.search_kinds)
        for kind in sorted(target.discovery.search_kinds):
            whole = sources.broken.get(SourceKey.whole(kind))
            if whole is not None:
                return str(whole), False
            if kind not in sources.searched:
                return None, True
    if target.discovery.provider_classes:
        failed = sources.broken.get(SourceKey.mounts())
        if failed is not None:
            return f"Secrets Store CSI mounts: {failed}", False
        if sources.mounts is None:
            return None, True
    for kind, selector in target.discovery.selectors:
        failed = sources.broken.get(SourceKey.selection(kind, selector))
        if failed is not None:
            return str(failed), False
        if (kind, selector) not in sources.selected:
            return None, True
    for ref in target.discovery.references:
        key = key_of(ref)
        if key in sources.found or sources.is_absent(key):
            continue
        if key in sources.broken:
            return unreadable(sources, key), False
        failure = sources.failure(key)
        if failure is not None:
            return str(failure), False
        return None, True
    return None, False


def unreadable(sources: NamespaceSources, key: SourceKey) -> Unreadable:
    return Unreadable(key.kind, sources.namespace, key.name, str(sources.broken[key]))


def decide_target(
    target: Target, sources: NamespaceSources, rules: Rules, *, origin: Origin | None = None
) -> Decision:
    """The decision for one full view over what the snapshot knows of its namespace's sources.

    `origin`: the ReplicaSet or ControllerRevision of the workload's current pod template (`freshness`),
    read only for the workloads `change_times` names; when every changed source changed before it
    started, `refresh` instead of a rollout."""
    early = decide_early(target)
    if early is not None:
        return early
    if target.discovery.selector_errors:
        return Decision(Action.FAILED, "; ".join(target.discovery.selector_errors))
    error, unreached = unknown_inputs(target, sources)
    if isinstance(error, Unreadable):
        return skip_for_unreadable(error)
    if error is not None:
        return Decision(Action.FAILED, f"reading ConfigMaps/Secrets of {target.namespace} failed: {error}")
    if unreached:
        return defer_for_budget("its ConfigMaps/Secrets were not all read before the time budget ran out")
    classified = classify(target, sources, rules)
    if classified.malformed:
        problems = "; ".join(classified.malformed)
        return skip(f"malformed annotation: {problems}; nothing written", Skip.MALFORMED)
    hashed = hashed_records(classified, sources)
    if isinstance(hashed, Decision):
        return hashed
    records, missing = hashed
    if target.discovery.provider_classes and sources.mounts is not None:
        mounted = mount_records(
            target.kind.kind, target.name, target.discovery.provider_classes, sources.mounts, rules.hash_key
        )
        if isinstance(mounted, str):
            return skip(mounted, Skip.NOT_MOUNTED)
        records += mounted
    complete = classified.complete and target.workload_ref is None  # its template is another object's
    bounded = bound_key_names(records)
    observed = observed_from(bounded, rules.hash_key, missing=tuple(missing), complete=complete)
    decision = decide(
        target,
        observed,
        now=rules.now,
        first_sight_rollout=rules.first_sight_rollout,
        notify=rules.notify,
        windows=rules.policy.restart_windows,
    )
    if origin is not None:
        times = change_times(target, decision, sources, rules)
        if times is not None and pods_newer(times, origin):
            decision = replace(
                decision, action=Action.REFRESH, reason=fresh_reason(decision.changed), deferral=None
            )
    settle = target.settle if target.settle is not None else rules.policy.settle
    decision = hold_unsettled(decision, sources, settle, rules.now)
    if target.problems:
        decision = replace(decision, reason=f"{decision.reason} (note: {'; '.join(target.problems)})")
    return decision


def hashed_records(
    classified: Classified, sources: NamespaceSources
) -> tuple[list[SourceRecord], list[str]] | Decision:
    """(every record, the missing required sources) once the content the classification needs was hashed;
    the decision instead when a read failed or the budget cut it."""
    records = list(classified.records)
    missing = list(classified.missing)
    for ref, _meta in classified.needs:
        key = key_of(ref)
        hashed = sources.tokens.get((key, ref.keys))
        if hashed is not None:
            selection = selection_tag(ref.keys)
            record = SourceRecord(
                ref.kind,
                ref.name,
                hashed.uid,
                hashed.resource_version,
                selection,
                hashed.token,
                key_names(ref.keys),
            )
            records.append(record)
        elif sources.is_absent(key):  # deleted between its metadata and its content
            records.append(absent_record(ref)) if ref.optional else missing.append(ref.label())
        elif key in sources.broken:
            return skip_for_unreadable(unreadable(sources, key))
        else:
            return defer_for_budget(
                "the content of its changed sources was not read before the budget ran out"
            )
    return records, missing


ROLLING = (Deferral.WINDOW, Deferral.MIN_INTERVAL)
"""Deferrals of a rollout that a workload whose pods are newer than the change no longer needs."""


def change_times(
    target: Target, decision: Decision, sources: NamespaceSources, rules: Rules
) -> dict[str, Change] | None:
    """When each changed source's content last changed, for a workload that may already run it: the
    hash changed (a rollout, or one held by a window or min-interval), the spec moved since our record
    (someone else changed the workload: its controller may have started a template after the change),
    and every changed source's time is known. None: roll as usual, without reading anything more."""
    lineage = target.lineage
    book = target.bookkeeping
    if not rules.policy.skip_if_pods_newer or target.unread or lineage is None or not lineage.settled:
        return None
    if book.generation is None or target.generation is None or target.generation == book.generation:
        return None
    if not (decision.action is Action.ROLLOUT or decision.deferral in ROLLING):
        return None
    observed = decision.observed
    if decision.previous is None or not decision.changed or observed is None:
        return None
    if book.key_fingerprint != observed.key_fingerprint:
        return None
    by_label = {
        label: Change(hashed.changed_at, hashed.resource_version)
        for label, hashed in sources.hashed_by_label().items()
    }
    times = {label: by_label.get(label) for label in decision.changed}
    known = {label: c for label, c in times.items() if c is not None and c.at is not None}
    return known if len(known) == len(times) else None


def confirm_recorded(listed: Listed, sources: NamespaceSources, rules: Rules) -> Decision | None:
    """`in-sync` when every recorded source still has its recorded identity and the stored hash is the
    records' hash; None when anything differs or is unknown (then the workload is read in full)."""
    book = listed.bookkeeping
    if not notifies(listed, rules.notify) and template_may_differ(listed):
        return None
    records = book.records or ()
    for record in records:
        key = SourceKey(record.kind, record.name)
        meta = sources.found.get(key)
        if record.uid == "":  # recorded as an absent optional source
            if meta is not None or not sources.is_absent(key):
                return None
            continue
        if meta is None or (meta.uid, meta.resource_version) != (record.uid, record.resource_version):
            return None
        if (meta.flags and source_ignored(meta.annotations(), rules.discovery)) or meta.malformed:
            return None
    observed = observed_from(records, rules.hash_key)
    if book.config_hash != observed.config_hash or book.key_fingerprint != observed.key_fingerprint:
        return None
    configs = tuple(r.label for r in observed.records)
    return Decision(
        Action.IN_SYNC,
        "content unchanged",
        config_hash=observed.config_hash,
        previous=book.config_hash,
        configs=configs,
        observed=observed,
    )


def template_may_differ(listed: Listed) -> bool:
    """Whether the pod template may hold a hash other than the one recorded on metadata, which the
    decision table takes for the stored hash outside notify mode: a rollout of ours wrote one, the records
    say the template does not hold the recorded hash (a notification recorded a newer one on metadata
    only since, or a re-apply stripped it), and no freshness record says its pods run the newer content.
    The records cannot tell an older template hash from an absent one, so such a workload is read."""
    book = listed.bookkeeping
    facts = book.facts
    return (
        facts is not None
        and not facts.template_hash
        and book.last_rollout is not None
        and book.superseded is None
        and listed.restart != "evict"
    )


def target_from_records(listed: Listed) -> Target | None:
    """A full view of a trusted workload built from its records and spec facts, without reading it; None
    where the records cannot stand for the spec (no facts recorded yet, a stamp that no longer holds, or a
    reference to some keys only whose names the records do not keep, `names_unkept`: that workload is
    read)."""
    book = listed.bookkeeping
    facts = book.facts
    evicts = listed.evicts or listed.fallback_due or listed.kind.in_place is not None
    if facts is None or book.records is None or not stamp_holds(listed) or evicts:
        return None  # eviction needs the spec: its selector and maxUnavailable
    if any(r.kind not in KINDS for r in book.records) or names_unkept(book.records) is not None:
        return None
    if template_may_differ(listed):
        return None
    # The listed view's references are the recorded sources; the facts say which are optional, the
    # records which keys each uses.
    optional = {r.label for r in book.records if r.uid == ""} | set(facts.optional)
    keys = {r.label: frozenset(r.keys) for r in book.records if r.selection != WHOLE}
    references = tuple(
        sorted(
            replace(ref, keys=keys.get(ref.label()), optional=ref.label() in optional)
            for ref in listed.discovery.references
        )
    )
    return Target(
        listed=listed,
        resource_version="",
        discovery=replace(listed.discovery, references=references),
        template_hash=book.config_hash if facts.template_hash else None,
        annotations_map_present=facts.annotations_map,
        template_metadata_present=facts.template_metadata,
        paused=facts.paused,
        on_delete=facts.on_delete,
        problems=listed.problems,
        unread=True,
    )


def with_rollout(
    workload: Listed, decision: Decision, obj: Mapping[str, Any] | None, rules: Rules
) -> Decision:
    """The decision plus the status of the workload's unfinished rollout, judged from `obj` (the
    workload, or its status view) when this pass read it."""
    if obj is None or decision.action is Action.FAILED:
        return decision
    found = check(workload, obj, now=rules.now, deadline=rules.policy.rollout_deadline)
    return replace(decision, rollout=found) if found is not None else decision
