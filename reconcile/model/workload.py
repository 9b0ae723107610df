"""A workload as the pass sees it: one value type, read once from the listed object and, when the pass
needs its spec, completed from the whole object.

`Listed` is what a metadata-only list item tells (identity, annotations, the tool's bookkeeping); a
`Target` is a `Listed` plus what only the whole object tells (the pod template's references and the few
spec facts a patch needs). Keeping only these slim views (never the whole object, never pod specs after
discovery) is what lets a pass over thousands of workloads run in bounded memory.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from dataclasses import fields, replace
from datetime import timedelta
from functools import lru_cache
from sys import intern
from typing import Any

from reconcile.model.annotations import (
    ON_CHANGE,
    ON_INEFFECTIVE,
    RESTART,
    Annotations,
    WindowSetting,
    annotation_keys,
)
from reconcile.model.bookkeeping import NOT_EFFECTIVE, Bookkeeping, SpecFacts, read_bookkeeping
from reconcile.model.choices import OnChange, OnIneffective, Restart
from reconcile.model.freshness import Lineage, lineage_of
from reconcile.model.kinds import Kind
from reconcile.model.knobs import Evidence, Knob
from reconcile.model.pointer import join_pointer, parse_path, resolve
from reconcile.model.references import (
    BOOLEANS,
    KINDS,
    MOUNT_KIND,
    Discovery,
    DiscoverySettings,
    Reference,
    describe_type,
    discover,
    discover_listed,
    peer_of,
    quote_text,
    reads_template_annotations,
    with_resource_references,
)
from reconcile.model.spelling import unknown_annotations
from reconcile.model.times import parse_duration
from reconcile.values import value


@value(slots=True)
class Listed:
    """What a metadata-only list item (PartialObjectMetadata) really tells: identity, annotations and
    the tool's bookkeeping, never the pod template. Its references are the recorded sources. Enough to
    confirm a workload in sync from those records (`records_trusted`); anything else needs a `Target`."""

    kind: Kind
    namespace: str
    name: str
    uid: str
    discovery: Discovery
    bookkeeping: Bookkeeping
    generation: int | None = None
    """`metadata.generation`: the API server bumps it on every spec change, never on metadata edits."""
    inputs: str = ""
    """Digest of what discovery read besides the pod spec (annotations, kind pointers)."""
    owner: str | None = None
    restart_window: WindowSetting | None = None
    min_interval: timedelta | None = None
    settle: timedelta | None = None
    """The `settle` annotation (`0s`: roll at once); None: the config's `settle`."""
    run_on_change: bool = False
    on_change: OnChange | None = None
    """The workload's `on-change` annotation (`rollout` or `notify`); None: the config's `onChange`."""
    problems: tuple[str, ...] = ()
    """Malformed annotations (a min-interval, a wave, a restart strategy …): the workload is `skipped`,
    naming them, every pass, with nothing written."""
    misspelt: bool = False
    """A key under our prefix that kube-rehash does not read is among its annotations: it is reported (and
    skipped) though it carries no opt-in annotation, as it perhaps meant to."""
    wave: int = 0
    """The `wave` annotation: among workloads due for one changed source, lower waves roll first."""
    restart: Restart = Restart.PATCH
    """How a rollout restarts its pods: its `restart` annotation, else the config's `restart`: `patch`
    the pod template, or `evict` the pods that started before the change."""
    fallback_evict: bool = False
    """A restart of it not effective by its deadline is carried out by eviction too: its `on-ineffective`
    annotation, else the config's `onIneffective`."""

    @property
    def ref(self) -> str:
        return f"{self.kind.kind}/{self.namespace}/{self.name}"

    @property
    def evicts(self) -> bool:
        """Its pods restart by eviction, as far as its list facts tell (its annotation or the `restart`
        setting, or its kind's knob)."""
        return self.restart is Restart.EVICT or self.kind.knob is Knob.EVICT

    @property
    def fallback_due(self) -> bool:
        """Our last restart of it did not take effect and it falls back to eviction (`onIneffective`)."""
        record = self.bookkeeping.rollout
        return self.fallback_evict and record is not None and record.state == NOT_EFFECTIVE


@value(slots=True)
class WorkloadRef:
    """The Deployment whose template a workload runs, and the workload's annotations, to discover its
    references once that template is read (`resolved`)."""

    name: str
    annotations: Mapping[str, Any]
    resolved: bool = False


@value(slots=True)
class Target:
    """One workload read in full (or rebuilt from its records): its list facts plus what a decision and a
    patch need of its spec."""

    listed: Listed
    resource_version: str
    discovery: Discovery
    """From the annotations and the pod template: the references the spec makes today."""
    template_hash: str | None
    annotations_map_present: bool
    template_metadata_present: bool
    suspended: bool = False
    paused: bool = False
    on_delete: bool = False
    problems: tuple[str, ...] = ()
    """The list's problems and the pod template's."""
    template_present: bool = True
    """False when the object has no pod template (or no parent of its annotations map) to patch."""
    metadata_annotations_present: bool = True
    """False when the object's metadata has no annotations map yet (a workload opted in only by Reloader's
    annotations on its pod template): the first write creates it."""
    status_view: Mapping[str, Any] | None = None
    """Generation, the spec fields the rollout status rules read, and `status`: kept only while our
    recorded rollout is unfinished, so its status is judged from this read without another GET."""
    lineage: Lineage | None = None
    """Deployment, StatefulSet, DaemonSet: what says which ReplicaSet/ControllerRevision is the current
    template (`freshness`)."""
    unread: bool = False
    """Built from the records of a listed workload (`target_from_records`), not read: its write must test
    the generation, which proves the spec is still the one the records describe."""
    workload_ref: WorkloadRef | None = None
    """It runs a referenced Deployment's template (`Kind.workload_ref`; model/workload_ref.py)."""
    max_unavailable: int | str | None = None
    """The rolling update's `maxUnavailable` (Deployment, StatefulSet, DaemonSet): pods evicted per pass."""
    in_place: bool = False
    """Its controller applies a template metadata change in place (`Kind.in_place`): restart by eviction."""
    pod_selector: str | None = None
    """The label selector of its pods, for a kind with a pod selection (`Kind.pod_selection`)."""
    evidence_before: str | None = None
    """The value of its `status-change` evidence field as read (recorded with a rollout of ours)."""

    @property
    def evicts(self) -> bool:
        """Its pods restart by eviction: its restart annotation or setting, its kind's knob, or an
        in-place update strategy."""
        return self.listed.evicts or self.in_place

    @property
    def kind(self) -> Kind:
        return self.listed.kind

    @property
    def namespace(self) -> str:
        return self.listed.namespace

    @property
    def name(self) -> str:
        return self.listed.name

    @property
    def uid(self) -> str:
        return self.listed.uid

    @property
    def ref(self) -> str:
        return self.listed.ref

    @property
    def bookkeeping(self) -> Bookkeeping:
        return self.listed.bookkeeping

    @property
    def generation(self) -> int | None:
        return self.listed.generation

    @property
    def inputs(self) -> str:
        return self.listed.inputs

    @property
    def owner(self) -> str | None:
        return self.listed.owner

    @property
    def restart_window(self) -> WindowSetting | None:
        return self.listed.restart_window

    @property
    def min_interval(self) -> timedelta | None:
        return self.listed.min_interval

    @property
    def settle(self) -> timedelta | None:
        return self.listed.settle

    @property
    def run_on_change(self) -> bool:
        return self.listed.run_on_change

    @property
    def on_change(self) -> OnChange | None:
        return self.listed.on_change

    @property
    def wave(self) -> int:
        return self.listed.wave

    @property
    def restart(self) -> Restart:
        return self.listed.restart


WAVE = re.compile(r"-?[0-9]{1,9}")
"""A wave: a plain decimal integer (no sign but minus, no underscores, no spaces)."""

_LISTED_FIELDS = frozenset(f.name for f in fields(Listed)) - {"discovery", "problems"}


def revise(target: Target, **changes: Any) -> Target:
    """`dataclasses.replace` across both levels: list facts go to the `Listed`, the rest to the `Target`."""
    listed_changes = {k: changes.pop(k) for k in list(changes) if k in _LISTED_FIELDS}
    return replace(target, listed=replace(target.listed, **listed_changes), **changes)


def status_view(obj: Mapping[str, Any], kind: Kind, keys: Annotations) -> dict[str, Any]:
    """What the rollout status rules (health.py) and the evidence of a restart (verify.py) read of a
    workload, and nothing else: its generation, the spec fields the rules read, `status`, and what the
    rolling annotations map holds of ours (`restarted`: our hash, or the time or value of the kind's
    knob)."""
    metadata = obj.get("metadata")
    spec = obj.get("spec")
    spec = spec if isinstance(spec, Mapping) else {}
    view: dict[str, Any] = {
        "metadata": {"generation": metadata.get("generation") if isinstance(metadata, Mapping) else None},
        "spec": {k: spec[k] for k in ("replicas", "paused", "updateStrategy", "restartAt") if k in spec},
        "status": obj.get("status") if isinstance(obj.get("status"), Mapping) else {},
    }
    rolling = resolve(obj, kind.annotations_pointer)
    key = keys.config_hash if kind.hash_in_map else kind.knob_key
    if isinstance(rolling, Mapping) and key is not None and isinstance(rolling.get(key), str):
        view["restarted"] = rolling[key]
    if kind.paused is not None and resolve(obj, kind.paused) is True:
        view["paused"] = True
    return view


def evidence_value(obj: Mapping[str, Any], kind: Kind) -> str | None:
    """The value of the kind's `status-change` evidence field, as text (None: no such evidence, or unset)."""
    if kind.verified_by is not Evidence.STATUS_CHANGE or kind.evidence_field is None:
        return None
    found = resolve(obj, join_pointer(*parse_path(kind.evidence_field)))
    return found if isinstance(found, str) else None


def controlling_owner(metadata: Mapping[str, Any]) -> str | None:
    """`Kind/name` of a controlling ownerReference: an operator that would revert our patch."""
    owners = metadata.get("ownerReferences")
    if not isinstance(owners, list):
        return None
    for owner in owners:
        if isinstance(owner, Mapping) and owner.get("controller") is True:
            return f"{owner.get('kind', '?')}/{owner.get('name', '?')}"
    return None


def read_listed(obj: Mapping[str, Any], kind: Kind, settings: DiscoverySettings) -> Listed:
    """The view of a metadata-only list item: references are the recorded sources."""
    listed, _annotations = listed_view(obj, kind, settings)
    return listed


def listed_view(
    obj: Mapping[str, Any], kind: Kind, settings: DiscoverySettings
) -> tuple[Listed, Mapping[str, Any]]:
    """The list facts of a workload object (whole or metadata-only), and its annotations."""
    metadata = obj.get("metadata")
    metadata = metadata if isinstance(metadata, Mapping) else {}
    annotations = metadata.get("annotations")
    annotations = honoured_annotations(
        obj, kind, settings, annotations if isinstance(annotations, Mapping) else {}
    )
    keys = annotation_keys(settings.prefix)
    namespace = intern(str(metadata.get("namespace") or ""))
    discovery = discover_listed(annotations, settings, namespace=namespace)
    problems = list(discovery.problems)
    min_interval = duration_annotation(annotations, keys.min_interval, problems)
    settle = duration_annotation(annotations, keys.settle, problems)
    on_change = annotations.get(keys.on_change)
    if on_change is not None and on_change not in ON_CHANGE:
        problems.append(f"{keys.on_change}: {on_change!r} is not one of {', '.join(ON_CHANGE)}")
        on_change = None
    run_on_change = annotations.get(keys.run_on_change)
    if run_on_change is not None and run_on_change not in BOOLEANS:
        shown = quote_text(run_on_change) if isinstance(run_on_change, str) else describe_type(run_on_change)
        problems.append(f'{keys.run_on_change}: {shown} is not "true" or "false"')
    wave, restart, malformed = restart_settings(annotations, keys)
    problems.extend(malformed)
    unknown = unknown_annotations(annotations, settings)
    problems.extend(unknown)
    restart = restart or settings.restart
    fallback = annotations.get(keys.on_ineffective)
    if fallback is not None and fallback not in ON_INEFFECTIVE:
        problems.append(
            f"{keys.on_ineffective}: {str(fallback)[:40]!r} is not one of {', '.join(ON_INEFFECTIVE)}"
        )
        fallback = None
    fallback_evict = (fallback or settings.on_ineffective) == OnIneffective.EVICT
    generation = metadata.get("generation")
    bookkeeping = read_bookkeeping(annotations, keys)
    window = annotations.get(keys.restart_window)
    records = bookkeeping.records or ()
    recorded = {Reference(r.kind, r.name, None, r.uid == "") for r in records if r.kind in KINDS}
    listed = Listed(
        kind=kind,
        namespace=namespace,
        name=str(metadata.get("name") or ""),
        uid=str(metadata.get("uid") or ""),
        discovery=replace(discovery, references=tuple(sorted(recorded))),
        bookkeeping=bookkeeping,
        generation=generation if isinstance(generation, int) and not isinstance(generation, bool) else None,
        inputs=target_inputs(discovery, kind),
        owner=controlling_owner(metadata),
        restart_window=WindowSetting(keys.restart_window, str(window)) if window is not None else None,
        min_interval=min_interval,
        settle=settle,
        run_on_change=run_on_change == "true" or (run_on_change is None and reloader_opted_in(discovery)),
        on_change=OnChange(on_change) if on_change is not None else None,
        problems=tuple(problems),
        misspelt=bool(unknown),
        wave=wave,
        restart=restart,
        fallback_evict=fallback_evict,
    )
    return listed, annotations


def honoured_annotations(
    obj: Mapping[str, Any], kind: Kind, settings: DiscoverySettings, annotations: Mapping[str, Any]
) -> Mapping[str, Any]:
    """The workload's annotations plus, with compat `reloader`, Reloader's annotations on its pod template
    that its metadata does not set (Reloader reads both; the workload's own value wins)."""
    if not reads_template_annotations(settings) or kind.template is None:
        return annotations
    template = resolve(obj, kind.template + "/metadata/annotations")
    if not isinstance(template, Mapping):
        return annotations
    extra = {k: v for k, v in template.items() if k not in annotations and peer_of(str(k)) == "reloader"}
    return {**annotations, **extra} if extra else annotations


def restart_settings(
    annotations: Mapping[str, Any], keys: Annotations
) -> tuple[int, Restart | None, tuple[str, ...]]:
    """(wave, restart strategy, malformed values) from the `wave` and `restart` annotations."""
    malformed: list[str] = []
    wave = 0
    raw = annotations.get(keys.wave)
    if raw is not None:
        if WAVE.fullmatch(str(raw)):
            wave = int(str(raw))
        else:
            malformed.append(f"{keys.wave}: {str(raw)[:40]!r} is not an integer")
    restart = annotations.get(keys.restart)
    if restart is not None and restart not in RESTART:
        malformed.append(f"{keys.restart}: {str(restart)[:40]!r} is not one of {', '.join(RESTART)}")
        restart = None
    return wave, (Restart(restart) if restart is not None else None), tuple(malformed)


def read_target(
    obj: Mapping[str, Any], kind: Kind, settings: DiscoverySettings, known: Listed | None = None
) -> Target:
    """Build the slim view of one whole workload object (never raises on odd shapes). `known`, the
    workload as listed, is kept instead of an equal copy: a pass holding the views of a whole kind's
    full list then holds one `Listed` per workload, not two."""
    listed, annotations = listed_view(obj, kind, settings)
    if known is not None and known == listed:
        listed = known
    keys = annotation_keys(settings.prefix)
    pod_spec = resolve(obj, kind.pod_spec_pointer) if kind.pod_spec_pointer else None
    discovery = with_resource_references(
        discover(annotations, pod_spec, settings, namespace=listed.namespace),
        obj,
        kind.spec_references,
        kind.pod_specs,
    )
    rolling = resolve(obj, kind.annotations_pointer)
    template_hash = (
        rolling.get(keys.config_hash) if isinstance(rolling, Mapping) and kind.hash_in_map else None
    )
    parent = kind.template + "/metadata" if kind.template else kind.annotations_pointer.rsplit("/", 1)[0]
    holder = kind.template if kind.template is not None else parent.rsplit("/", 1)[0]
    strategy = resolve(obj, kind.update_strategy) if kind.update_strategy else None
    watched = listed.bookkeeping.rollout is not None and not listed.bookkeeping.rollout.finished
    metadata = obj.get("metadata")
    return Target(
        listed=listed,
        resource_version=str(metadata.get("resourceVersion") or "") if isinstance(metadata, Mapping) else "",
        discovery=discovery,
        template_hash=template_hash if isinstance(template_hash, str) and template_hash else None,
        annotations_map_present=isinstance(rolling, Mapping),
        template_metadata_present=isinstance(resolve(obj, parent), Mapping),
        suspended=kind.suspend is not None and resolve(obj, kind.suspend) is True,
        paused=kind.paused is not None and resolve(obj, kind.paused) is True,
        on_delete=strategy == "OnDelete",
        problems=tuple(dict.fromkeys(discovery.problems + listed.problems)),
        template_present=isinstance(resolve(obj, holder), Mapping),
        metadata_annotations_present=isinstance(metadata, Mapping)
        and isinstance(metadata.get("annotations"), Mapping),
        status_view=status_view(obj, kind, keys) if watched else None,
        lineage=lineage_of(obj, kind.revisions),
        workload_ref=WorkloadRef(ref, dict(annotations))
        if (ref := kind.referenced_deployment(obj))
        else None,
        max_unavailable=max_unavailable_of(obj, kind),
        in_place=kind.in_place_for(obj),
        pod_selector=kind.pod_selection.selector_of(obj, listed.name) if kind.pod_selection else None,
        evidence_before=evidence_value(obj, kind),
    )


def max_unavailable_of(obj: Mapping[str, Any], kind: Kind) -> int | str | None:
    """The workload's rolling-update `maxUnavailable` (an integer or a percentage), where it has one."""
    if kind.max_unavailable is None:
        return None
    value = resolve(obj, kind.max_unavailable)
    return value if isinstance(value, (int, str)) and not isinstance(value, bool) else None


def target_inputs(discovery: Discovery, kind: Kind) -> str:
    if kind.spec_references or kind.pod_specs:  # where its own spec names sources is an input too
        named = repr((kind.spec_references, kind.pod_specs))
        return inputs_digest(discovery.inputs, kind.pod_spec_pointer or "", kind.annotations_pointer, named)
    return inputs_digest(discovery.inputs, kind.pod_spec_pointer or "", kind.annotations_pointer)


@lru_cache(maxsize=1024)
def inputs_digest(*parts: str) -> str:
    """Digest of the non-spec inputs; cached, so workloads with the same inputs share one string."""
    return hashlib.blake2b("\n".join(parts).encode(), digest_size=8).hexdigest()


def records_trusted(target: Listed, key_fingerprint: str) -> bool:
    """Whether the recorded sources are still exactly the workload's references and nothing else
    decides differently: the spec is unchanged since they were recorded (same `metadata.generation`),
    so are the annotations discovery reads, and the hash key. Search mode and label-selected sources
    are never trusted (their sources are found by listing, not by the spec), nor are Secrets Store CSI
    mounts (recorded, but found in the pods' statuses)."""
    book = target.bookkeeping
    return (
        book.records is not None
        and stamp_holds(target)
        and book.inputs == target.inputs
        and book.key_fingerprint == key_fingerprint
        and not target.discovery.match_annotations
        and not target.discovery.selectors
        and not target.discovery.selector_errors
        and not target.discovery.provider_classes
        and not any(r.kind == MOUNT_KIND for r in book.records)
    )


def duration_annotation(annotations: Mapping[str, Any], key: str, problems: list[str]) -> timedelta | None:
    """A duration annotation's value (None when absent); a malformed one is a problem naming the key."""
    if key not in annotations:
        return None
    try:
        return parse_duration(str(annotations[key]))
    except ValueError as exc:
        problems.append(f"{key}: {exc}")
        return None


def reloader_opted_in(discovery: Discovery) -> bool:
    """Opted in by a Reloader annotation (its compat rule on): as under Reloader, a CronJob's change then
    also starts one Job, unless the tool's own `run-on-change: "false"` says otherwise."""
    return any(peer_of(key) == "reloader" for key in discovery.via)


def stamp_holds(target: Listed) -> bool:
    """Whether the spec is still the one the bookkeeping's generation stamp was recorded for. (The
    deployment controller's `deployment.kubernetes.io/revision` write after a rollout goes through the
    status subresource and leaves the generation alone: tests/simulator/test_rollout_controller.py pins it
    on kube-apiserver 1.37, so one more generation always means someone changed the workload.)"""
    book = target.bookkeeping
    return book.generation is not None and target.generation == book.generation


def facts_after(target: Target, config_hash: str, *, rollout: bool) -> SpecFacts:
    """The spec facts right after a write of ours to `target` that records `config_hash`."""
    optional = sorted(ref.label() for ref in target.discovery.references if ref.optional)
    return SpecFacts(
        template_hash=(rollout and target.kind.hash_in_map) or target.template_hash == config_hash,
        annotations_map=rollout or target.annotations_map_present,
        template_metadata=rollout or target.template_metadata_present,
        paused=target.paused,
        on_delete=target.on_delete,
        optional=tuple(optional),
    )
