"""`kube-rehash explain`: why one workload gets the action it gets, in full.

Runs one workload through the very path of a pass's batch (`planner.plan_workload`: triage, reads,
hashing, decision, pods already newer than the change included), so it names the action and reason the
pass would; it writes nothing and shows the references (and which keys), each source's state, the stored
and current hash, the restart window (and when it next opens), our recorded rollout with its current
status, how its kind restarts and how that restart was verified, the decision with its reason, and the
reads it took.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from reconcile.kube.client import KubeClient
from reconcile.model.bookkeeping import NOT_EFFECTIVE
from reconcile.model.kinds import Kind
from reconcile.model.knobs import Evidence, Knob
from reconcile.model.references import DiscoverySettings, Reference, source_ignored
from reconcile.model.rollouts import check
from reconcile.model.sources import NamespaceSources, SourceKey
from reconcile.model.times import format_time
from reconcile.model.verify import CAUSES, Cause, describe
from reconcile.model.windows import RestartWindows, next_open
from reconcile.model.workload import Target
from reconcile.pipeline.listing import list_targets
from reconcile.pipeline.planner import open_stage, plan_batch, plan_workload, read_workload, rules_for
from reconcile.pipeline.pod_reads import selected_pods
from reconcile.pipeline.read import ReadStage
from reconcile.policy.classify import references_of
from reconcile.policy.decision import Action, Decision, Skip, skip
from reconcile.policy.rules import Rules
from reconcile.policy.table import window_problem, windows_of
from reconcile.policy.triage import plan_batches
from reconcile.settings.table import Settings


@dataclass(frozen=True)
class SourceState:
    label: str
    keys: tuple[str, ...] | None
    state: str


@dataclass(frozen=True)
class Explanation:
    target: Target
    sources: tuple[SourceState, ...]
    decision: Decision
    window: dict[str, Any] | None = None
    rollout: dict[str, Any] | None = None
    reads: dict[str, Any] | None = None
    """The API requests the decision took, by verb and status (`ApiStats.snapshot`)."""

    def to_json(self) -> dict[str, Any]:
        t = self.target
        return {
            "kind": t.kind.kind,
            "namespace": t.namespace,
            "name": t.name,
            "opted_in_by": list(t.discovery.via),
            "references": [
                {"config": s.label, "keys": list(s.keys) if s.keys is not None else None, "state": s.state}
                for s in self.sources
            ],
            "stored": {
                "template": t.template_hash,
                "metadata": t.bookkeeping.config_hash,
                "superseded_template": t.bookkeeping.superseded,
                "last_rollout": t.bookkeeping.last_rollout.isoformat()
                if t.bookkeeping.last_rollout
                else None,
            },
            "current": self.decision.config_hash,
            "restart_window": self.window,
            "restart": {
                "by": "eviction of its pods (pods/eviction)" if t.evicts else describe_restart(t.kind),
                "verified_by": describe_evidence(t.kind),
            },
            "rollout": self.rollout,
            "action": self.decision.action.value,
            "reason": self.decision.reason,
            "problems": list(t.problems),
            "reads": self.reads,
        }

    def render_text(self) -> str:
        doc = self.to_json()
        lines = [f"{doc['kind']} {doc['namespace']}/{doc['name']}"]
        lines.append(f"  opted in by:  {', '.join(doc['opted_in_by']) or '(not opted in)'}")
        lines.append("  references:")
        for ref in doc["references"] or [{"config": "(none)", "keys": None, "state": ""}]:
            keys = "all keys" if ref["keys"] is None else "keys " + ", ".join(ref["keys"])
            lines.append(f"    {ref['config']:<40} {keys:<24} {ref['state']}")
        stored = doc["stored"]
        lines.append(
            f"  stored hash:  template {stored['template'] or '-'}, metadata {stored['metadata'] or '-'}"
        )
        if stored["superseded_template"]:
            lines.append(
                f"  superseded:   template {stored['superseded_template']}"
                " (its pods started after the change: they run the metadata hash)"
            )
        lines.append(f"  current hash: {doc['current'] or '-'}")
        window = doc["restart_window"]
        if window is not None:
            opens = "open now" if window["open_now"] else f"opens {window['next_open'] or 'never'}"
            shown = window["error"] or f"{window['windows']} ({opens})"
            lines.append(f"  restart window: {shown} [from {window['from']}]")
        rollout = doc["rollout"]
        restart = doc["restart"]
        lines.append(f"  restarts by:  {restart['by']}")
        lines.append(f"  verified by:  {restart['verified_by']}")
        if rollout is not None:
            changed = ", ".join(rollout["changed"]) or "-"
            lines.append(
                f"  last rollout: {rollout['at']} ({changed} changed), recorded {rollout['state']}, "
                f"status {rollout['status'] or 'not read'}"
            )
            lines.append(f"  verified:     {rollout['verified']}")
        lines.append(f"  decision:     {doc['action']}: {doc['reason']}")
        lines.extend(f"  problem:      {p}" for p in doc["problems"])
        if self.reads is not None:
            verbs = ", ".join(
                f"{verb} {sum(by_status.values())}" for verb, by_status in self.reads["requests"].items()
            )
            lines.append(f"  reads:        {self.reads['requests_total']} requests ({verbs})")
        return "\n".join(lines)


def describe_restart(kind: Kind) -> str:
    """How a rollout of this kind restarts its pods, in words (`explain`)."""
    where = kind.annotations_pointer
    if kind.knob is Knob.HASH:
        text = f"the config hash into {where}"
    elif kind.knob is Knob.TIMESTAMP:
        text = f"the time under {kind.knob_key} in {where}"
    elif kind.knob is Knob.ONE_SHOT:
        text = f"{kind.knob_key}: {kind.knob_value!r} in {where}, removed by its operator once done"
    elif kind.knob is Knob.FIELD:
        text = f"the time into {kind.knob_field}"
    else:
        text = "eviction of its pods (pods/eviction)"
    if kind.in_place is not None:
        text += f"; by eviction while {kind.in_place[0]} is {' or '.join(kind.in_place[1])} (in place)"
    return text


def describe_evidence(kind: Kind) -> str:
    """What shows a restart of this kind took effect, in words (`explain`)."""
    evidence = kind.verified_by
    if evidence is Evidence.STATUS:
        return f"its status ({kind.health}) and the change still in {kind.annotations_pointer}"
    if evidence is Evidence.PODS:
        return "every pod of it created after the restart"
    if evidence is Evidence.STATUS_TIME:
        return f"{kind.evidence_field} at or after the restart"
    if evidence is Evidence.STATUS_CHANGE:
        return f"a new value of {kind.evidence_field}"
    return "nothing: its restarts are not verified"


def state_of(ref: Reference, sources: NamespaceSources, settings: DiscoverySettings) -> str:
    key = SourceKey(ref.kind, ref.name)
    meta = sources.found.get(key)
    failure = sources.failure(key)
    if meta is None and failure is not None:
        return f"unreadable: {failure}"
    if meta is None:
        return "missing (optional: hashed as absent)" if ref.optional else "missing (required)"
    if source_ignored(meta.annotations(), settings):
        return "present, ignored by annotation"
    return f"present (resourceVersion {meta.resource_version})"


def explain_workload(
    settings: Settings, client: KubeClient, kind: Kind, namespace: str, name: str, *, hash_key: bytes | None
) -> Explanation:
    """Read and decide one workload through the pass's own planner entry point; write nothing."""
    rules = rules_for(settings, hash_key, datetime.now(UTC))
    with ThreadPoolExecutor(max_workers=settings.limits.concurrency) as executor:
        stage = open_stage(settings, client, executor, rules)
        target = read_workload(stage, kind, namespace, name)
        if not target.discovery.wants_row and not target.listed.misspelt:
            return Explanation(target, (), skip("not opted in: no kube-rehash annotation", Skip.IGNORED))
        planned, known = plan_workload(stage, target, rules)
        decision, sources = planned.decision, known.sources
        decision = hold_for_waves(settings, stage, rules, target, decision)
        window = describe_window(target, rules.policy.restart_windows, rules.now)
        rollout = describe_rollout(client, target, rules.now, settings.policy.rollout_deadline)
        states = tuple(
            SourceState(
                r.label(),
                tuple(sorted(r.keys)) if r.keys is not None else None,
                state_of(r, sources, rules.discovery),
            )
            for r in references_of(target, sources)
        )
    return Explanation(target, states, decision, window, rollout, reads=client.stats.snapshot())


def hold_for_waves(
    settings: Settings, stage: ReadStage, rules: Rules, target: Target, decision: Decision
) -> Decision:
    """A rollout as the pass decides it among its batch (`policy.waves`, applied by the planner to each
    batch): when a workload of a lower wave shares the namespace, the namespace is listed and the target's
    batch planned through the pass's batch path, without writing, and the target's decision there is the
    answer."""
    if decision.action is not Action.ROLLOUT or not target.kind.rolls_pods:
        return decision
    scoped = settings.replaced(namespaces=(target.namespace,), shard=None)
    listing = list_targets(scoped, stage.client, rules.discovery, key_fingerprint=rules.fingerprint)
    if not any(w.wave < target.wave and w.uid != target.uid for w in listing.workloads):
        return decision
    batches = [b for b in plan_batches(listing.workloads) if any(w.uid == target.uid for w in b.workloads)]
    if not batches:
        return decision
    planned = plan_batch(stage, batches[0], listing.triage(), rules)
    return next((p.decision for p in planned if p.listed.uid == target.uid), decision)


def describe_window(target: Target, default: RestartWindows, now: datetime) -> dict[str, Any]:
    """The workload's restart window, where it comes from, and when it next opens."""
    setting = target.restart_window
    source = setting.annotation if setting is not None else "restartWindow (config)"
    error = window_problem(setting)
    windows = windows_of(setting, default)
    opening = next_open(windows, now)
    return {
        "windows": windows.describe(),
        "from": source,
        "open_now": opening == now,
        "next_open": format_time(opening) if opening is not None else None,
        "error": error,
    }


def describe_rollout(
    client: KubeClient, target: Target, now: datetime, deadline: timedelta
) -> dict[str, Any] | None:
    """Our recorded rollout and, while unfinished, its status and how its restart was verified, from the
    object just read (and, for a kind whose pods show it, its pods, listed now)."""
    record = target.bookkeeping.rollout
    if record is None:
        return None
    pods = None
    selection = target.kind.pod_selection
    if target.status_view and selection is not None and target.kind.verified_by is Evidence.PODS:
        listed = selected_pods(
            client, target.namespace, target.pod_selector, target.uid if selection.owned else None
        )
        pods = listed if not isinstance(listed, str) else None
    view = target.status_view
    found = check(target.listed, view, now=now, deadline=deadline, pods=pods) if view else None
    if found is not None:
        verified = describe(found.verdict)
    elif record.state == NOT_EFFECTIVE:
        verified = f"not effective: {CAUSES.get(Cause(record.cause), record.cause) if record.cause else '?'}"
    else:
        verified = "effective" if record.finished else "not verified yet"
    return {
        "generation": record.generation,
        "at": format_time(record.at),
        "changed": list(record.changed),
        "state": record.state,
        "status": found.status.value if found is not None else (record.state if record.finished else None),
        "verified": verified,
    }
