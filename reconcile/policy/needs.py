"""What the read stage must fetch for one batch, computed from values alone.

The pipeline asks these functions between its reads (`pipeline.planner.read_snapshot`): the sources whose
content must be hashed straight away (no reusable record), the source metadata the snapshot still lacks,
the trusted workloads its records no longer confirm, and the content the changed sources need. The read
stage then does exactly those requests and nothing else; no decision runs in it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from reconcile.model.freshness import Change
from reconcile.model.sources import NamespaceSources, Selection, SourceKey
from reconcile.model.workload import Listed, Target
from reconcile.policy.classify import classify, key_of, recorded_sources
from reconcile.policy.decide import change_times, confirm_recorded, decide_target
from reconcile.policy.decision import Decision
from reconcile.policy.evict import pods_wanted
from reconcile.policy.rules import Rules

Wanted = dict[SourceKey, set[Selection]]
"""Content to hash: per source, the key selections its references use (None: the whole object)."""


def content_to_read(live: Sequence[Target], rules: Rules) -> Wanted:
    """Content of the sources these undecided full views use that no record of theirs may stand for:
    first sight and changed references are hashed straight away, never metadata first."""
    content: Wanted = {}
    for target in live:
        reusable = recorded_sources(target, rules)
        for ref in target.discovery.references:
            if key_of(ref) not in reusable:
                content.setdefault(key_of(ref), set()).add(ref.keys)
    return content


def metadata_to_read(
    live: Sequence[Target], trusted: Sequence[Listed], known: NamespaceSources
) -> tuple[dict[str, set[str]], frozenset[str], frozenset[tuple[str, str]]]:
    """Names per kind of referenced sources the snapshot does not know yet, the kinds search mode
    must list in full that it has not listed, and the (kind, label selector) lists not read yet."""
    wanted: dict[str, set[str]] = {}
    search: set[str] = set()
    selected: set[tuple[str, str]] = set()
    refs = [ref for w in trusted for ref in w.discovery.references]
    for target in live:
        refs += target.discovery.references
        if target.discovery.match_annotations:
            search |= set(target.discovery.search_kinds)
        selected.update(target.discovery.selectors)
    for ref in refs:
        if not known.knows(key_of(ref)):
            wanted.setdefault(ref.kind, set()).add(ref.name)
    return wanted, frozenset(search - known.searched), frozenset(selected - known.selected.keys())


def mounts_to_read(live: Sequence[Target], known: NamespaceSources) -> bool:
    """Whether the namespace's Secrets Store CSI mounts must be read: some undecided full view mounts a
    SecretProviderClass, and they were not read (or tried) yet."""
    tried = known.mounts is not None or SourceKey.mounts() in known.broken
    return not tried and any(t.discovery.provider_classes for t in live)


def confirm_trusted(
    trusted: Sequence[Listed], sources: NamespaceSources, rules: Rules
) -> dict[str, Decision]:
    """The trusted workloads whose records the snapshot confirms in sync, by uid; the others are stale."""
    confirmed: dict[str, Decision] = {}
    for workload in trusted:
        decision = confirm_recorded(workload, sources, rules)
        if decision is not None:
            confirmed[workload.uid] = decision
    return confirmed


def origins_to_read(
    live: Sequence[Target], sources: NamespaceSources, rules: Rules
) -> tuple[list[tuple[Target, dict[str, Change]]], dict[str, Decision]]:
    """The undecided full views whose pods may already run their changed config, with the change time
    of each changed source: only for these is the current template's object read (`decide.change_times`).
    Also the decisions of the others, which no origin can change (`Snapshot.decided`), by uid."""
    wanted: list[tuple[Target, dict[str, Change]]] = []
    decided: dict[str, Decision] = {}
    for target in live:
        decision = decide_target(target, sources, rules)
        changes = change_times(target, decision, sources, rules)
        if changes is not None:
            wanted.append((target, changes))
        else:
            decided[target.uid] = decision
    return wanted, decided


def content_needed(live: Sequence[Target], sources: NamespaceSources, rules: Rules) -> Wanted:
    """Content the snapshot still lacks to decide these undecided full views."""
    wants: Wanted = {}
    for target in live:
        for ref, _meta in classify(target, sources, rules).needs:
            if (key_of(ref), ref.keys) not in sources.tokens:
                wants.setdefault(key_of(ref), set()).add(ref.keys)
    return wants


def pods_to_read(
    live: Sequence[Target], decided: Mapping[str, Decision], sources: NamespaceSources, rules: Rules
) -> list[Target]:
    """The undecided full views restarted by eviction whose rollout is due: their pods are listed."""
    return [
        t
        for t in live
        if t.restart == "evict" and pods_wanted(t, decided.get(t.uid) or decide_target(t, sources, rules))
    ]
