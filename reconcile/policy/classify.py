"""How a workload's references meet what the pass knows of its namespace's sources: which records can be
reused, which required sources are missing, which content must be hashed. Pure; the needs of the read
stage and the decisions are both computed from it, so the rules of reuse live in one place."""

from __future__ import annotations

from reconcile.model.bookkeeping import SourceRecord
from reconcile.model.hashing import ABSENT, selection_tag
from reconcile.model.references import Reference, ignore_annotations, source_ignored, source_matches
from reconcile.model.sources import NamespaceSources, SourceKey, SourceMeta
from reconcile.model.workload import Target
from reconcile.policy.rules import Rules
from reconcile.values import value


@value
class Classified:
    """A full view's references against what is known of its sources."""

    records: tuple[SourceRecord, ...]
    """Sources settled without new content: reused records, and optional sources that are absent."""
    missing: tuple[str, ...]
    """Required sources that do not exist."""
    needs: tuple[tuple[Reference, SourceMeta], ...]
    """Existing sources whose content (for the reference's key selection) must be hashed."""
    complete: bool
    """The records will cover every reference (none ignored, no search mode, no label selector)."""
    malformed: tuple[str, ...] = ()
    """Malformed ignore/match annotations of the sources this workload reads (it is then skipped)."""


def key_of(ref: Reference) -> SourceKey:
    return SourceKey(ref.kind, ref.name)


def references_of(target: Target, sources: NamespaceSources) -> list[Reference]:
    """Declared references plus, in search mode, every matching source of the namespace (under Reloader's
    search, every matching source the pod spec references), and every source its label selectors select
    (only while they exist)."""
    refs = list(target.discovery.references)
    named = {(r.kind, r.name) for r in refs}
    discovery = target.discovery
    if discovery.match_annotations and discovery.searched is not None:
        for ref in discovery.searched:
            meta = sources.found.get(key_of(ref))
            if (ref.kind, ref.name) in named or meta is None:
                continue
            if source_matches(meta.annotations(), discovery):
                refs.append(Reference(ref.kind, ref.name, ref.keys, True))
                named.add((ref.kind, ref.name))
    elif discovery.match_annotations:
        for kind in sorted(discovery.search_kinds):
            for meta in sources.of_kind(kind):
                if (kind, meta.name) not in named and source_matches(meta.annotations(), discovery):
                    refs.append(Reference(kind, meta.name, None, True))
                    named.add((kind, meta.name))
    for kind, selector in target.discovery.selectors:
        for name in sorted(sources.selected.get((kind, selector), ())):
            if (kind, name) not in named:
                refs.append(Reference(kind, name, None, True))
                named.add((kind, name))
    return refs


def absent_record(ref: Reference) -> SourceRecord:
    return SourceRecord(ref.kind, ref.name, "", "", selection_tag(ref.keys), ABSENT, key_names(ref.keys))


def key_names(keys: frozenset[str] | None) -> tuple[str, ...]:
    """The names a record keeps of a selection (sorted; none for the whole object), before the caps of
    `bookkeeping.bound_key_names`."""
    return tuple(sorted(keys)) if keys is not None else ()


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
    complete = not (target.discovery.match_annotations or target.discovery.selectors)
    ignore_keys = ignore_annotations(rules.discovery)
    malformed = [
        problem
        for kind in sorted(target.discovery.search_kinds)
        for meta in sources.of_kind(kind)
        for problem in meta.problems(target.discovery.match_annotations)
    ]
    for ref in references_of(target, sources):
        meta = sources.found.get(key_of(ref))
        if meta is not None:
            malformed += meta.problems(ignore_keys)
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
    return Classified(tuple(records), tuple(missing), tuple(needs), complete, tuple(malformed))


def recorded_sources(target: Target, rules: Rules) -> set[SourceKey]:
    """Sources the workload's records may let the pass reuse (their metadata decides)."""
    book = target.bookkeeping
    if book.records is None or book.key_fingerprint != rules.fingerprint:
        return set()
    return {SourceKey(r.kind, r.name) for r in book.records}
