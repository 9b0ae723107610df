"""Decide, the third stage of a pass: every workload of a batch, from the batch's snapshot alone.

Pure: the read stage has put into the snapshot everything a decision may need (full views, source
identities, content digests, per-source failures); what it did not reach before the budget ran out
makes the workload `deferred` with the reason `pass budget`, never `failed`. The same functions tell the
read stage which content it must download, so the rules of reuse live in one place.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any

from reconcile.model.hashing import ABSENT, WHOLE, key_fingerprint, selection_tag
from reconcile.policy.decision import Action, Decision, decide, decide_early, defer_for_budget, observed_from
from reconcile.model.references import KINDS, DiscoverySettings, Reference, source_ignored, source_matches
from reconcile.model.rollouts import check
from reconcile.model.sources import NamespaceSources, Selection, SourceKey, SourceMeta
from reconcile.model.bookkeeping import SourceRecord
from reconcile.model.workload import Listed, Target, stamp_holds
from reconcile.model.windows import ALWAYS_OPEN, RestartWindows


@dataclass(frozen=True)
class Rules:
    """What a decision depends on besides the cluster: settings of the pass and its clock."""

    discovery: DiscoverySettings
    hash_key: bytes | None
    now: datetime
    first_sight_rollout: bool = False
    notify: bool = False
    """`onChange: notify`: a change of a workload without the on-change annotation is notified, not rolled."""
    windows: RestartWindows = ALWAYS_OPEN
    """`restartWindow`: the windows of workloads without the restart-window annotation."""
    rollout_deadline: timedelta = timedelta(minutes=10)
    """`rolloutDeadline`: when a StatefulSet's or DaemonSet's unfinished rollout counts as stalled."""

    @property
    def fingerprint(self) -> str:
        return key_fingerprint(self.hash_key)


@dataclass(frozen=True)
class Classified:
    """A full view's references against what is known of its sources."""

    records: tuple[SourceRecord, ...]
    """Sources settled without new content: reused records, and optional sources that are absent."""
    missing: tuple[str, ...]
    """Required sources that do not exist."""
    needs: tuple[tuple[Reference, SourceMeta], ...]
    """Existing sources whose content (for the reference's key selection) must be hashed."""
    complete: bool
    """The records will cover every reference (none ignored, no search mode)."""


def key_of(ref: Reference) -> SourceKey:
    return SourceKey(ref.kind, ref.name)


def references_of(target: Target, sources: NamespaceSources) -> list[Reference]:
    """Declared references plus, in search mode, every matching source of the namespace."""
    refs = list(target.discovery.references)
    if target.discovery.match_annotations:
        named = {(r.kind, r.name) for r in refs}
        for kind in sorted(target.discovery.search_kinds):
            for meta in sources.of_kind(kind):
                if (kind, meta.name) not in named and source_matches(meta.annotations(), target.discovery):
                    refs.append(Reference(kind, meta.name, None, True))
    return refs


def absent_record(ref: Reference) -> SourceRecord:
    return SourceRecord(ref.kind, ref.name, "", "", selection_tag(ref.keys), ABSENT)


def classify(target: Target, sources: NamespaceSources, rules: Rules) -> Classified:
    """Split a full view's references into reusable records, missing required sources, and those whose
    content must be hashed (new, or changed identity, version or key selection)."""
    book = target.bookkeeping
    known: dict[tuple[str, str, str, str, str], SourceRecord] = {}
    if book.records is not None and book.key_fingerprint == rules.fingerprint:
        known = {(r.kind, r.name, r.uid, r.resource_version, r.selection): r for r in book.records}
    records: list[SourceRecord] = []
    missing: list[str] = []
    needs: list[tuple[Reference, SourceMeta]] = []
    complete = not target.discovery.match_annotations
    for ref in references_of(target, sources):
        meta = sources.found.get(key_of(ref))
        if meta is None:
            if ref.optional:
                records.append(absent_record(ref))
            else:
                missing.append(ref.label())
            continue
        if source_ignored(meta.annotations(), rules.discovery):
            complete = False
            continue
        selection = selection_tag(ref.keys)
        reuse = known.get((ref.kind, ref.name, meta.uid, meta.resource_version, selection))
        if reuse is not None:
            records.append(reuse)
        else:
            needs.append((ref, meta))
    return Classified(tuple(records), tuple(missing), tuple(needs), complete)


def recorded_sources(target: Target, rules: Rules) -> set[SourceKey]:
    """Sources the workload's records may let the pass reuse (their metadata decides)."""
    book = target.bookkeeping
    if book.records is None or book.key_fingerprint != rules.fingerprint:
        return set()
    return {SourceKey(r.kind, r.name) for r in book.records}


def content_needed(
    targets: Sequence[Target], sources: NamespaceSources, rules: Rules
) -> dict[SourceKey, set[Selection]]:
    """Content the snapshot still lacks to decide these full views."""
    wants: dict[SourceKey, set[Selection]] = {}
    for target in targets:
        if decide_early(target) is not None:
            continue
        for ref, _meta in classify(target, sources, rules).needs:
            if (key_of(ref), ref.keys) not in sources.tokens:
                wants.setdefault(key_of(ref), set()).add(ref.keys)
    return wants


def unknown_inputs(target: Target, sources: NamespaceSources) -> tuple[str | None, bool]:
    """(the first unreadable source's error, whether some source was not reached) for one full view."""
    kinds = {ref.kind for ref in target.discovery.references}
    if target.discovery.match_annotations:
        kinds |= set(target.discovery.search_kinds)
        for kind in sorted(target.discovery.search_kinds):
            whole = sources.broken.get(SourceKey.whole(kind))
            if whole is not None:
                return str(whole), False
            if kind not in sources.searched:
                return None, True
    for ref in target.discovery.references:
        key = key_of(ref)
        if key in sources.found or sources.is_absent(key):
            continue
        failure = sources.failure(key)
        if failure is not None:
            return str(failure), False
        return None, True
    return None, False


def decide_target(target: Target, sources: NamespaceSources, rules: Rules) -> Decision:
    """The decision for one full view over what the snapshot knows of its namespace's sources."""
    early = decide_early(target)
    if early is not None:
        return early
    error, unreached = unknown_inputs(target, sources)
    if error is not None:
        return Decision(Action.FAILED, f"reading ConfigMaps/Secrets of {target.namespace} failed: {error}")
    if unreached:
        return defer_for_budget("its ConfigMaps/Secrets were not all read before the time budget ran out")
    classified = classify(target, sources, rules)
    records = list(classified.records)
    missing = list(classified.missing)
    for ref, _meta in classified.needs:
        key = key_of(ref)
        hashed = sources.tokens.get((key, ref.keys))
        if hashed is not None:
            records.append(
                SourceRecord(
                    ref.kind,
                    ref.name,
                    hashed.uid,
                    hashed.resource_version,
                    selection_tag(ref.keys),
                    hashed.token,
                )
            )
        elif sources.is_absent(key):  # deleted between its metadata and its content
            records.append(absent_record(ref)) if ref.optional else missing.append(ref.label())
        elif key in sources.broken:
            return Decision(Action.FAILED, f"reading sources failed: {sources.broken[key]}")
        else:
            return defer_for_budget(
                "the content of its changed sources was not read before the budget ran out"
            )
    observed = observed_from(records, rules.hash_key, missing=tuple(missing), complete=classified.complete)
    decision = decide(
        target,
        observed,
        now=rules.now,
        first_sight_rollout=rules.first_sight_rollout,
        notify=rules.notify,
        windows=rules.windows,
    )
    if target.problems:
        decision = replace(decision, reason=f"{decision.reason} (note: {'; '.join(target.problems)})")
    return decision


def confirm_recorded(listed: Listed, sources: NamespaceSources, rules: Rules) -> Decision | None:
    """`in-sync` when every recorded source still has its recorded identity and the stored hash is the
    records' hash; None when anything differs or is unknown (then the workload is read in full)."""
    book = listed.bookkeeping
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
        if source_ignored(meta.annotations(), rules.discovery):
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


def target_from_records(listed: Listed) -> Target | None:
    """A full view of a trusted workload built from its records and spec facts, without reading it; None
    where the records cannot stand for the spec (no facts recorded yet, a stamp that no longer holds, or a
    reference to some keys only, whose names the records do not keep: that workload is read)."""
    book = listed.bookkeeping
    facts = book.facts
    if facts is None or book.records is None or not stamp_holds(listed):
        return None
    if any(r.selection != WHOLE or r.kind not in KINDS for r in book.records):
        return None
    # The listed view's references are the recorded sources; the facts say which are optional.
    optional = {r.label for r in book.records if r.uid == ""} | set(facts.optional)
    references = tuple(
        sorted(replace(ref, optional=ref.label() in optional) for ref in listed.discovery.references)
    )
    return Target(
        kind=listed.kind,
        namespace=listed.namespace,
        name=listed.name,
        uid=listed.uid,
        resource_version="",
        discovery=replace(listed.discovery, references=references),
        template_hash=book.config_hash if facts.template_hash else None,
        annotations_map_present=facts.annotations_map,
        template_metadata_present=facts.template_metadata,
        bookkeeping=book,
        paused=facts.paused,
        on_delete=facts.on_delete,
        owner=listed.owner,
        min_interval=listed.min_interval,
        run_on_change=listed.run_on_change,
        on_change=listed.on_change,
        problems=listed.problems,
        generation=listed.generation,
        inputs=listed.inputs,
        restart_window=listed.restart_window,
        unread=True,
    )


Subject = Target | Listed


@dataclass(frozen=True)
class Snapshot:
    """What the read stage established for one batch."""

    sources: NamespaceSources
    full: Mapping[str, Target]
    """Full views by uid: workloads that needed their spec, and trusted ones found stale."""
    failed: Mapping[str, str]
    """uid -> why reading the workload failed."""
    gone: frozenset[str]
    """uids deleted or opted out since they were listed: no report row."""
    stale: frozenset[str]
    """Trusted workloads whose records no longer hold."""


def with_rollout(
    subject: Subject, decision: Decision, obj: Mapping[str, Any] | None, rules: Rules
) -> Decision:
    """The decision plus the status of the subject's unfinished rollout, judged from `obj` (the
    workload, or its status view) when this pass read it."""
    if obj is None or decision.action is Action.FAILED:
        return decision
    found = check(subject, obj, now=rules.now, deadline=rules.rollout_deadline)
    return replace(decision, rollout=found) if found is not None else decision


def decide_batch(
    workloads: Sequence[Listed], settled: Mapping[str, Decision], snapshot: Snapshot, rules: Rules
) -> list[tuple[Subject, Decision]]:
    """Every listed workload of a batch, in order: settled in triage, failed, decided in full, confirmed
    from its records, or deferred because the budget did not reach it."""
    out: list[tuple[Subject, Decision]] = []
    for listed in workloads:
        uid = listed.uid
        if uid in settled:
            out.append((listed, settled[uid]))
        elif uid in snapshot.gone:
            continue
        elif uid in snapshot.failed:
            out.append((listed, Decision(Action.FAILED, snapshot.failed[uid])))
        elif uid in snapshot.full:
            full = snapshot.full[uid]
            decision = decide_target(full, snapshot.sources, rules)
            out.append((full, with_rollout(full, decision, full.status_view, rules)))
        else:
            confirmed = None if uid in snapshot.stale else confirm_recorded(listed, snapshot.sources, rules)
            out.append((listed, confirmed or defer_for_budget()))
    return out
