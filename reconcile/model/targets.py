"""A workload as the pass sees it: the few facts a decision needs, read once from the listed object.

Keeping only this slim view (never the whole object, never pod specs after discovery) is what lets a
pass over thousands of workloads run in bounded memory. The tool's own bookkeeping annotations are
parsed and written here, so their format lives in one place.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from typing import Any

from reconcile.model.kinds import Kind
from reconcile.model.pointer import resolve
from reconcile.model.references import KINDS, Discovery, DiscoverySettings, Reference, discover, is_true

RECORDS_FORMAT = 1
# States of a recorded rollout (annotation `rollout`); the report's `rollout_status` uses the same words.
PROGRESSING, STALLED, COMPLETE = "progressing", "stalled", "complete"
ROLLOUT_STATES = (PROGRESSING, STALLED, COMPLETE)
_DURATION = re.compile(r"(\d+(?:\.\d+)?)(h|m|s)")


@dataclass(frozen=True)
class Annotations:
    """The annotation keys of one prefix (default `kube-rehash.io`)."""

    prefix: str = "kube-rehash.io"

    @property
    def config_hash(self) -> str:
        return f"{self.prefix}/config-hash"

    @property
    def sources(self) -> str:
        return f"{self.prefix}/sources"

    @property
    def last_rollout(self) -> str:
        return f"{self.prefix}/last-rollout"

    @property
    def min_interval(self) -> str:
        return f"{self.prefix}/min-interval"

    @property
    def run_on_change(self) -> str:
        return f"{self.prefix}/run-on-change"

    @property
    def restart_window(self) -> str:
        return f"{self.prefix}/restart-window"

    @property
    def rollout(self) -> str:
        return f"{self.prefix}/rollout"

    @property
    def on_change(self) -> str:
        return f"{self.prefix}/on-change"


ON_CHANGE = ("rollout", "notify")
"""What a content change does: restart the pods, or record the hash and tell (Event, webhook)."""


@dataclass(frozen=True, order=True)
class SourceRecord:
    """One source as last hashed: identity, version, which keys, and its sealed digest."""

    kind: str
    name: str
    uid: str
    resource_version: str
    selection: str
    token: str

    @property
    def label(self) -> str:
        return f"{self.kind}/{self.name}"


@dataclass(frozen=True)
class RolloutRecord:
    """The last rollout kube-rehash started on a workload (annotation `rollout`), until it finished."""

    generation: int | None
    """The `metadata.generation` our patch produced (None: the server's generation was unknown)."""
    at: datetime
    changed: tuple[str, ...]
    """Names of the sources whose change started it (`configmap/app`), never values."""
    state: str = PROGRESSING
    """`progressing`, `stalled` (the RolloutStalled Event was sent) or `complete`."""
    text: str = field(default="", compare=False)
    """The annotation's exact stored text, which a later bookkeeping patch tests before replacing it."""

    @property
    def finished(self) -> bool:
        return self.state == COMPLETE


@dataclass(frozen=True)
class WindowSetting:
    """A workload's restart-window annotation as written (parsed by the decision table)."""

    annotation: str
    value: str


@dataclass(frozen=True)
class SpecFacts:
    """What a decision needs of the pod spec, as it was right after our last write, recorded with the
    generation stamp. While the stamp holds the spec has not changed, so a trusted workload whose sources
    changed can be decided and rolled from its records alone, without reading it (issue 19): the patch then
    tests the generation, so a spec changed meanwhile makes it fail and the workload is read again."""

    template_hash: bool
    """The rolling annotations map holds the recorded config hash."""
    annotations_map: bool
    template_metadata: bool
    paused: bool
    on_delete: bool
    optional: tuple[str, ...] = ()
    """Labels (`configmap/x`) of the sources every use of which is optional."""

    def letters(self) -> str:
        flags = zip(
            "hmtpd",
            (self.template_hash, self.annotations_map, self.template_metadata, self.paused, self.on_delete),
            strict=True,
        )
        return "".join(letter for letter, on in flags if on)

    @classmethod
    def parse(cls, letters: Any, optional: Any) -> SpecFacts | None:
        if not isinstance(letters, str) or set(letters) - set("hmtpd"):
            return None
        if not isinstance(optional, list) or not all(isinstance(o, str) for o in optional):
            return None
        h, m, t, p, d = (letter in letters for letter in "hmtpd")
        return cls(h, m, t, p, d, tuple(sorted(optional)))


@dataclass(frozen=True)
class Bookkeeping:
    """What the tool wrote on the workload's metadata in an earlier pass."""

    config_hash: str | None = None
    records: tuple[SourceRecord, ...] | None = None
    key_fingerprint: str = ""
    last_rollout: datetime | None = None
    generation: int | None = None
    """The workload's `metadata.generation` right after that write, when the records cover every
    reference (see `records_trusted`)."""
    inputs: str = ""
    """`Target.inputs` at that write."""
    rollout: RolloutRecord | None = None
    """Our last rollout, while its status is watched (and after, with state `complete`)."""
    facts: SpecFacts | None = None


@dataclass(frozen=True)
class RecordsDoc:
    """The parsed `sources` annotation."""

    records: tuple[SourceRecord, ...]
    key_fingerprint: str = ""
    generation: int | None = None
    inputs: str = ""
    facts: SpecFacts | None = None


@dataclass(frozen=True)
class Target:
    """One workload, reduced to what planning and patching need."""

    kind: Kind
    namespace: str
    name: str
    uid: str
    resource_version: str
    discovery: Discovery
    template_hash: str | None
    annotations_map_present: bool
    template_metadata_present: bool
    bookkeeping: Bookkeeping
    suspended: bool = False
    paused: bool = False
    on_delete: bool = False
    owner: str | None = None
    min_interval: timedelta | None = None
    run_on_change: bool = False
    on_change: str | None = None
    """The workload's `on-change` annotation (`rollout` or `notify`); None: the config's `onChange`."""
    problems: tuple[str, ...] = ()
    template_present: bool = True
    """False when the object has no pod template (or no parent of its annotations map) to patch."""
    generation: int | None = None
    """`metadata.generation`: the API server bumps it on every spec change, never on metadata edits."""
    inputs: str = ""
    """Digest of what discovery read besides the pod spec (annotations, kind pointers)."""
    restart_window: WindowSetting | None = None
    status_view: Mapping[str, Any] | None = None
    """Generation, the spec fields the rollout status rules read, and `status`: kept only while our
    recorded rollout is unfinished, so its status is judged from this read without another GET."""
    unread: bool = False
    """Built from the records of a listed workload (`target_from_records`), not read: its write must test
    the generation, which proves the spec is still the one the records describe."""

    @property
    def ref(self) -> str:
        return f"{self.kind.kind}/{self.namespace}/{self.name}"


@dataclass(frozen=True)
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
    inputs: str = ""
    owner: str | None = None
    restart_window: WindowSetting | None = None
    min_interval: timedelta | None = None
    run_on_change: bool = False
    on_change: str | None = None
    problems: tuple[str, ...] = ()
    """Problems of what its annotations say (a malformed min-interval)."""

    @property
    def ref(self) -> str:
        return f"{self.kind.kind}/{self.namespace}/{self.name}"


def parse_duration(text: str) -> timedelta:
    """Go-style durations as in `10m`, `1h30m`, `45s`, `1.5h`."""
    cleaned = text.strip().lower()
    if not cleaned or _DURATION.sub("", cleaned):
        raise ValueError(f"{text!r} is not a duration like 10m, 1h30m or 45s")
    seconds = 0.0
    for number, unit in _DURATION.findall(cleaned):
        seconds += float(number) * {"h": 3600, "m": 60, "s": 1}[unit]
    return timedelta(seconds=seconds)


def format_time(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_time(text: Any) -> datetime | None:
    if not isinstance(text, str):
        return None
    try:
        return datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
    except ValueError:
        return None


def format_records(
    records: tuple[SourceRecord, ...],
    key_fingerprint: str,
    *,
    generation: int | None = None,
    inputs: str = "",
    facts: SpecFacts | None = None,
) -> str:
    rows = [[r.kind, r.name, r.uid, r.resource_version, r.selection, r.token] for r in sorted(records)]
    doc: dict[str, Any] = {"v": RECORDS_FORMAT, "k": key_fingerprint, "s": rows}
    if generation is not None:
        doc["g"] = generation
        doc["i"] = inputs
        if facts is not None:
            doc["f"] = facts.letters()
            doc["o"] = list(facts.optional)
    return json.dumps(doc, separators=(",", ":"))


def load_object(text: Any) -> dict[str, Any] | None:
    """The JSON object an annotation of ours holds; None when absent or not a JSON object."""
    if not isinstance(text, str):
        return None
    try:
        doc = json.loads(text)
    except ValueError:
        return None
    return doc if isinstance(doc, dict) else None


def parse_records(text: Any) -> RecordsDoc | None:
    """The `sources` annotation's records, key fingerprint and spec stamp; None when absent or unreadable."""
    doc = load_object(text)
    if doc is None or doc.get("v") != RECORDS_FORMAT or not isinstance(doc.get("s"), list):
        return None
    records = []
    for row in doc["s"]:
        if not (isinstance(row, list) and len(row) == 6 and all(isinstance(x, str) for x in row)):
            return None
        records.append(SourceRecord(*row))
    fingerprint, generation, inputs = doc.get("k"), doc.get("g"), doc.get("i")
    facts = SpecFacts.parse(doc.get("f"), doc.get("o"))
    if not (isinstance(generation, int) and not isinstance(generation, bool) and isinstance(inputs, str)):
        generation, inputs, facts = None, "", None
    return RecordsDoc(
        tuple(sorted(records)),
        fingerprint if isinstance(fingerprint, str) else "",
        generation,
        inputs,
        facts,
    )


def format_rollout(record: RolloutRecord) -> str:
    """Compact JSON: `{"g": generation, "t": time, "c": [source names], "s": state}`."""
    doc: dict[str, Any] = {"g": record.generation, "t": format_time(record.at), "c": list(record.changed)}
    doc["s"] = record.state
    return json.dumps(doc, separators=(",", ":"))


def parse_rollout(text: Any) -> RolloutRecord | None:
    """The `rollout` annotation; None when absent or unreadable (then nothing is watched)."""
    doc = load_object(text)
    if doc is None:
        return None
    generation, changed, state = doc.get("g"), doc.get("c"), doc.get("s")
    at = parse_time(doc.get("t"))
    if generation is not None and (not isinstance(generation, int) or isinstance(generation, bool)):
        return None
    if at is None or state not in ROLLOUT_STATES or not isinstance(changed, list):
        return None
    if not all(isinstance(name, str) for name in changed):
        return None
    return RolloutRecord(generation, at, tuple(changed), state, text)


def status_view(obj: Mapping[str, Any]) -> dict[str, Any]:
    """What the rollout status rules read of a workload (health.py), and nothing else."""
    metadata = obj.get("metadata")
    spec = obj.get("spec")
    spec = spec if isinstance(spec, Mapping) else {}
    return {
        "metadata": {"generation": metadata.get("generation") if isinstance(metadata, Mapping) else None},
        "spec": {k: spec[k] for k in ("replicas", "paused", "updateStrategy") if k in spec},
        "status": obj.get("status") if isinstance(obj.get("status"), Mapping) else {},
    }


def read_bookkeeping(annotations: Mapping[str, Any], keys: Annotations) -> Bookkeeping:
    stored = annotations.get(keys.config_hash)
    parsed = parse_records(annotations.get(keys.sources))
    return Bookkeeping(
        config_hash=stored if isinstance(stored, str) and stored else None,
        records=parsed.records if parsed else None,
        key_fingerprint=parsed.key_fingerprint if parsed else "",
        last_rollout=parse_time(annotations.get(keys.last_rollout)),
        generation=parsed.generation if parsed else None,
        inputs=parsed.inputs if parsed else "",
        rollout=parse_rollout(annotations.get(keys.rollout)),
        facts=parsed.facts if parsed else None,
    )


def controlling_owner(metadata: Mapping[str, Any]) -> str | None:
    """`Kind/name` of a controlling ownerReference: an operator that would revert our patch."""
    owners = metadata.get("ownerReferences")
    if not isinstance(owners, list):
        return None
    for owner in owners:
        if isinstance(owner, Mapping) and owner.get("controller") is True:
            return f"{owner.get('kind', '?')}/{owner.get('name', '?')}"
    return None


def read_target(obj: Mapping[str, Any], kind: Kind, settings: DiscoverySettings) -> Target:
    """Build the slim view of one listed workload object (never raises on odd shapes)."""
    metadata = obj.get("metadata")
    metadata = metadata if isinstance(metadata, Mapping) else {}
    annotations = metadata.get("annotations")
    annotations = annotations if isinstance(annotations, Mapping) else {}
    keys = Annotations(settings.prefix)
    namespace = str(metadata.get("namespace") or "")
    pod_spec = resolve(obj, kind.pod_spec_pointer) if kind.pod_spec_pointer else None
    discovery = discover(annotations, pod_spec, settings, namespace=namespace)
    rolling = resolve(obj, kind.annotations_pointer)
    problems = list(discovery.problems)
    min_interval = None
    if keys.min_interval in annotations:
        try:
            min_interval = parse_duration(str(annotations[keys.min_interval]))
        except ValueError as exc:
            problems.append(f"{keys.min_interval}: {exc}")
    on_change = annotations.get(keys.on_change)
    if on_change is not None and on_change not in ON_CHANGE:
        problems.append(f"{keys.on_change}: {on_change!r} is not one of {', '.join(ON_CHANGE)}")
        on_change = None
    generation = metadata.get("generation")
    template_hash = rolling.get(keys.config_hash) if isinstance(rolling, Mapping) else None
    template_metadata = resolve(obj, kind.template + "/metadata") if kind.template else rolling
    strategy = resolve(obj, kind.update_strategy) if kind.update_strategy else None
    holder = kind.template if kind.template is not None else kind.annotations_pointer.rsplit("/", 1)[0]
    bookkeeping = read_bookkeeping(annotations, keys)
    window = annotations.get(keys.restart_window)
    watched = bookkeeping.rollout is not None and not bookkeeping.rollout.finished
    return Target(
        kind=kind,
        namespace=namespace,
        name=str(metadata.get("name") or ""),
        uid=str(metadata.get("uid") or ""),
        resource_version=str(metadata.get("resourceVersion") or ""),
        discovery=discovery,
        template_hash=template_hash if isinstance(template_hash, str) and template_hash else None,
        annotations_map_present=isinstance(rolling, Mapping),
        template_metadata_present=isinstance(template_metadata, Mapping),
        bookkeeping=bookkeeping,
        suspended=kind.suspend is not None and resolve(obj, kind.suspend) is True,
        paused=kind.paused is not None and resolve(obj, kind.paused) is True,
        on_delete=strategy == "OnDelete",
        owner=controlling_owner(metadata),
        min_interval=min_interval,
        run_on_change=is_true(annotations.get(keys.run_on_change)),
        on_change=on_change,
        problems=tuple(problems),
        template_present=isinstance(resolve(obj, holder), Mapping),
        generation=generation if isinstance(generation, int) and not isinstance(generation, bool) else None,
        inputs=target_inputs(discovery, kind),
        restart_window=WindowSetting(keys.restart_window, str(window)) if window is not None else None,
        status_view=status_view(obj) if watched else None,
    )


def target_inputs(discovery: Discovery, kind: Kind) -> str:
    text = "\n".join((discovery.inputs, kind.pod_spec_pointer or "", kind.annotations_pointer))
    return hashlib.blake2b(text.encode(), digest_size=8).hexdigest()


def read_listed(obj: Mapping[str, Any], kind: Kind, settings: DiscoverySettings) -> Listed:
    """The view of a metadata-only list item: references are the recorded sources."""
    view = read_target({"metadata": obj.get("metadata")}, kind, settings)
    records = view.bookkeeping.records or ()
    recorded = {Reference(r.kind, r.name, None, r.uid == "") for r in records if r.kind in KINDS}
    return Listed(
        kind=kind,
        namespace=view.namespace,
        name=view.name,
        uid=view.uid,
        discovery=replace(view.discovery, references=tuple(sorted(recorded))),
        bookkeeping=view.bookkeeping,
        generation=view.generation,
        inputs=view.inputs,
        owner=view.owner,
        restart_window=view.restart_window,
        min_interval=view.min_interval,
        run_on_change=view.run_on_change,
        on_change=view.on_change,
        problems=view.problems,
    )


def records_trusted(target: Listed | Target, key_fingerprint: str) -> bool:
    """Whether the recorded sources are still exactly the workload's references and nothing else
    decides differently: the spec is unchanged since they were recorded (same `metadata.generation`),
    so are the annotations discovery reads, and the hash key. Search mode is never trusted (its
    sources are found by listing, not by the spec)."""
    book = target.bookkeeping
    return (
        book.records is not None
        and stamp_holds(target)
        and book.inputs == target.inputs
        and book.key_fingerprint == key_fingerprint
        and not target.discovery.match_annotations
    )


def stamp_holds(target: Listed | Target) -> bool:
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
        template_hash=rollout or target.template_hash == config_hash,
        annotations_map=rollout or target.annotations_map_present,
        template_metadata=rollout or target.template_metadata_present,
        paused=target.paused,
        on_delete=target.on_delete,
        optional=tuple(optional),
    )
