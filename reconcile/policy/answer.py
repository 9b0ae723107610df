"""Decide or ask: each workload of a batch answered, from what the batch's reads established so far, with
its decision or the reads it still needs.

The planner asks every undecided workload of a batch once per round, merges the wants, has the read stage
read them, and asks again, until every workload is decided or the budget ends (pipeline/planner.py). What a
workload needs follows from what is known, in one order: its whole object (unless its records stand for
it), then its sources (content straight away where no record can be reused, metadata where one may be),
then the content of the sources that changed, then, for a change its pods may already run, when its current
pod template started, and, for a restart by eviction, its pods. Pure: the answer is a function of the
listed workload, what triage said of it, `Known` and the rules.
"""

from __future__ import annotations

from collections.abc import Mapping

from reconcile.model.sources import NamespaceSources, Selection, SourceKey
from reconcile.model.workload import Listed, Target
from reconcile.policy.classify import classify, key_of, recorded_sources
from reconcile.policy.decide import (
    change_times,
    confirm_recorded,
    decide_target,
    target_from_records,
    with_rollout,
)
from reconcile.policy.decision import Action, Decision
from reconcile.policy.evict import fallback_eviction, plan_eviction, pods_wanted
from reconcile.policy.known import Known
from reconcile.policy.planned import Planned
from reconcile.policy.rules import Rules
from reconcile.policy.table import decide_early
from reconcile.policy.triage import Need
from reconcile.policy.wants import Wants

GONE = None
"""The answer for a workload deleted or opted out since it was listed: it gets no row."""

Answer = Planned | Wants | None


def answer(listed: Listed, need: Need, known: Known, rules: Rules) -> Answer:
    """A workload that triage did not settle: planned, or what it still needs read (`GONE`: no row)."""
    uid = listed.uid
    if uid in known.gone:
        return GONE
    if uid in known.failed:
        return Planned(listed, Decision(Action.FAILED, known.failed[uid]))
    target = known.views.get(uid)
    if target is None:
        if need is Need.SPEC:
            return Wants(views=(listed,))
        trusted = answer_trusted(listed, known.sources, rules)
        if not isinstance(trusted, Target):
            return trusted
        target = trusted
    return answer_target(target, known, rules)


def answer_trusted(listed: Listed, sources: NamespaceSources, rules: Rules) -> Answer | Target:
    """A workload whose records triage trusts, not read whole: the metadata of its recorded sources, then
    in sync when it confirms them, else its view built from its records (or, where they cannot stand for
    its spec, its whole object)."""
    unknown: dict[str, set[str]] = {}
    for ref in listed.discovery.references:
        if not sources.knows(key_of(ref)):
            unknown.setdefault(ref.kind, set()).add(ref.name)
    if unknown:
        return Wants(metadata={kind: frozenset(names) for kind, names in unknown.items()})
    confirmed = confirm_recorded(listed, sources, rules)
    if confirmed is not None:
        return Planned(listed, confirmed)
    return target_from_records(listed) or Wants(views=(listed,))


def answer_target(target: Target, known: Known, rules: Rules) -> Answer:
    """A full view (read whole, or built from its records): the reads its decision still needs, or its
    decision, with the restart by eviction and the status of our last rollout it implies."""
    early = decide_early(target)
    if early is not None:
        return Planned(target.listed, early, target)
    sources = known.sources
    wants = source_wants(target, sources, rules) or content_wants(target, sources, rules)
    if wants:
        return wants
    uid = target.uid
    origin = known.origins.get(uid)
    decision = decide_target(target, sources, rules, origin=origin)
    decision = fallback_eviction(target, decision, rules.policy.restart_windows, rules.now)
    if uid not in known.origins:
        changes = change_times(target, decision, sources, rules)
        if changes is not None:
            return Wants(origins=((target, changes),))
    if uid not in known.pods and pods_wanted(target, decision):
        return Wants(pods=(target,))
    decision = plan_eviction(
        target, decision, known.pods.get(uid), sources, per_pass=rules.policy.evict_per_pass
    )
    return Planned(target.listed, with_rollout(target.listed, decision, target.status_view, rules), target)


def source_wants(target: Target, sources: NamespaceSources, rules: Rules) -> Wants:
    """The sources a full view uses that are not known yet: content where no record of its may be reused
    (first sight, a changed reference: hashed straight away, never metadata first), identities where one
    may; every source of a searched kind, the label-selected ones, the CSI mounts."""
    reusable = recorded_sources(target, rules)
    content: dict[SourceKey, set[Selection]] = {}
    metadata: dict[str, set[str]] = {}
    for ref in target.discovery.references:
        key = key_of(ref)
        if key in reusable:
            if not sources.knows(key):
                metadata.setdefault(ref.kind, set()).add(ref.name)
        elif may_hash(key, ref.keys, sources):
            content.setdefault(key, set()).add(ref.keys)
    discovery = target.discovery
    search = frozenset(
        kind
        for kind in discovery.search_kinds
        if discovery.match_annotations
        and kind not in sources.searched
        and SourceKey.whole(kind) not in sources.broken
    )
    selections = frozenset(
        (kind, selector)
        for kind, selector in discovery.selectors
        if (kind, selector) not in sources.selected
        and SourceKey.selection(kind, selector) not in sources.broken
    )
    mounts = bool(discovery.provider_classes) and sources.mounts is None
    mounts = mounts and SourceKey.mounts() not in sources.broken
    return Wants(
        content=frozen(content),
        metadata={kind: frozenset(names) for kind, names in metadata.items()},
        search=search,
        selections=selections,
        mounts=mounts,
    )


def content_wants(target: Target, sources: NamespaceSources, rules: Rules) -> Wants:
    """The content a full view's decision still lacks: of the sources whose identity, version or key
    selection differs from its records (the records of the others are reused)."""
    content: dict[SourceKey, set[Selection]] = {}
    for ref, _meta in classify(target, sources, rules).needs:
        key = key_of(ref)
        if may_hash(key, ref.keys, sources):
            content.setdefault(key, set()).add(ref.keys)
    return Wants(content=frozen(content))


def may_hash(key: SourceKey, keys: Selection, sources: NamespaceSources) -> bool:
    """Whether the content of `key` for this selection is still to be read: not hashed yet, and not known
    to be absent or unreadable."""
    if (key, keys) in sources.tokens or sources.is_absent(key):
        return False
    return key not in sources.broken


def frozen(content: Mapping[SourceKey, set[Selection]]) -> dict[SourceKey, frozenset[Selection]]:
    return {key: frozenset(keys) for key, keys in content.items()}
