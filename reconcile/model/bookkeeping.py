"""The bookkeeping kube-rehash keeps on a workload's metadata, and its codec: the `sources` annotation (the
records of the sources last hashed, the key fingerprint, the generation stamp and the spec facts) and the
`rollout` annotation (our last rollout and its state). Their format lives here and nowhere else.

Format 2 adds, to the record of a source the workload uses only some keys of, those key names (bounded:
`bound_key_names`), so a change of that source is decided from the records without reading the workload.
Format 1 records (no key names) are read and trusted too; they gain the names with the
workload's next write of its records (docs/hash.md, "Where the hash is stored").
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import field, replace
from datetime import datetime
from functools import lru_cache
from operator import attrgetter
from sys import intern
from typing import Any

from reconcile.json_text import load_json
from reconcile.model.annotations import Annotations
from reconcile.model.hashing import WHOLE, selection_tag
from reconcile.model.times import format_time, parse_time
from reconcile.values import value

RECORDS_FORMAT = 2
"""The format written. 2: a source used in part records its key names; 1: without them."""
READ_FORMATS = (1, 2)
"""The formats a pass reads and trusts (an upgrade restarts nothing and writes nothing for the format)."""
KEY_NAMES_MAX = 64
"""Most key names one workload's records keep (over all its sources): beyond it, a source's names are not
kept and a change of it reads the workload in full, as format 1 did."""
KEY_NAME_BYTES_MAX = 2048
"""Most bytes of key names (UTF-8, plus 3 per name for its JSON quotes and comma) one workload's records
keep: with `KEY_NAMES_MAX`, what bounds the annotation's growth (Kubernetes allows 256 KiB of annotations)."""
# States of a recorded rollout (annotation `rollout`); the report's `rollout_status` uses the same words.
PROGRESSING, STALLED, COMPLETE, NOT_EFFECTIVE = "progressing", "stalled", "complete", "not-effective"
ROLLOUT_STATES = (PROGRESSING, STALLED, COMPLETE, NOT_EFFECTIVE)


@value(order=True, slots=True)
class SourceRecord:
    """One source as last hashed: identity, version, which keys, and its sealed digest."""

    kind: str
    name: str
    uid: str
    resource_version: str
    selection: str
    token: str
    keys: tuple[str, ...] = ()
    """The names of the selected keys (sorted) when only some are used and the names are kept; empty for
    the whole object, and where they are not kept (format 1, or beyond `bound_key_names`'s cap)."""

    @property
    def label(self) -> str:
        return f"{self.kind}/{self.name}"


def sorted_records(records: Iterable[SourceRecord]) -> tuple[SourceRecord, ...]:
    """The records in their order (`SourceRecord`'s field order), sorted on one key tuple per record rather
    than by the dataclass's comparisons, which build two tuples per comparison: this runs for every
    listed workload. Records come sorted as written, so the sort only checks that."""
    return tuple(sorted(records, key=_RECORD_ORDER))


_RECORD_ORDER = attrgetter("kind", "name", "uid", "resource_version", "selection", "token", "keys")


@value(slots=True)
class RolloutRecord:
    """The last rollout kube-rehash started on a workload (annotation `rollout`), until it finished."""

    generation: int | None
    """The `metadata.generation` our patch produced (None: the server's generation was unknown)."""
    at: datetime
    changed: tuple[str, ...]
    """Names of the sources whose change started it (`configmap/app`), never values."""
    state: str = PROGRESSING
    """`progressing`, `stalled` (the RolloutStalled Event was sent), `not-effective` (the restart did not
    take effect by its deadline: the RestartNotEffective Event was sent) or `complete`."""
    cause: str = ""
    """Why a `not-effective` restart did not take effect (model/verify.py `Cause`)."""
    before: str | None = None
    """The kind's `status-change` evidence field as it was when we restarted it."""
    text: str = field(default="", compare=False)
    """The annotation's exact stored text, which a later bookkeeping patch tests before replacing it."""

    @property
    def finished(self) -> bool:
        return self.state == COMPLETE


@value(slots=True)
class SpecFacts:
    """What a decision needs of the pod spec, as it was right after our last write, recorded with the
    generation stamp. While the stamp holds the spec has not changed, so a trusted workload whose sources
    changed can be decided and rolled from its records alone, without reading it: the patch then
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


@value(slots=True)
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
    superseded: str | None = None
    """A pod-template hash whose pods started after the change to `config_hash` (`freshness`): while the
    template still holds it, `config_hash` is what the pods run with."""


@value
class RecordsDoc:
    """The parsed `sources` annotation."""

    records: tuple[SourceRecord, ...]
    key_fingerprint: str = ""
    generation: int | None = None
    inputs: str = ""
    facts: SpecFacts | None = None


def format_records(
    records: tuple[SourceRecord, ...],
    key_fingerprint: str,
    *,
    generation: int | None = None,
    inputs: str = "",
    facts: SpecFacts | None = None,
) -> str:
    rows: list[list[Any]] = []
    for r in sorted(records):
        row: list[Any] = [r.kind, r.name, r.uid, r.resource_version, r.selection, r.token]
        rows.append([*row, list(r.keys)] if r.keys else row)
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
        doc = load_json(text)
    except ValueError:
        return None
    return doc if isinstance(doc, dict) else None


def parse_records(text: Any) -> RecordsDoc | None:
    """The `sources` annotation's records, key fingerprint and spec stamp; None when absent or unreadable."""
    doc = load_object(text)
    if doc is None or doc.get("v") not in READ_FORMATS or not isinstance(doc.get("s"), list):
        return None
    records = []
    for row in doc["s"]:
        record = parse_row(row, named=doc["v"] >= 2)
        if record is None:
            return None
        records.append(record)
    fingerprint, generation, inputs = doc.get("k"), doc.get("g"), doc.get("i")
    letters, optional = doc.get("f"), doc.get("o")
    facts = None
    if isinstance(letters, str) and isinstance(optional, list) and all(isinstance(o, str) for o in optional):
        facts = parse_facts(letters, tuple(optional))
    if not (isinstance(generation, int) and not isinstance(generation, bool) and isinstance(inputs, str)):
        generation, inputs, facts = None, "", None
    # The fingerprint is the same on every workload, the inputs digest on most: one string each.
    return RecordsDoc(
        sorted_records(records),
        intern(fingerprint) if isinstance(fingerprint, str) else "",
        generation,
        intern(inputs),
        facts,
    )


def parse_row(row: Any, *, named: bool) -> SourceRecord | None:
    """One record: six strings, and in format 2 (`named`) the key names of a source used in part."""
    if not isinstance(row, list):
        return None
    names: Any = row[6] if named and len(row) == 7 else []
    if len(row) != 6 + (names != []):
        return None
    kind, name, uid, version, selection, token = row[:6]
    # Spelled out, not `all(...)` over the row: this runs for every record of every listed workload.
    if not (
        isinstance(kind, str)
        and isinstance(name, str)
        and isinstance(uid, str)
        and isinstance(version, str)
        and isinstance(selection, str)
        and isinstance(token, str)
    ):
        return None
    if not isinstance(names, list):
        return None
    if not names:
        return SourceRecord(intern(kind), name, uid, version, intern(selection), token)
    if not all(isinstance(n, str) for n in names):
        return None
    keys = tuple(sorted(intern(n) for n in names))  # key names repeat across workloads: one string each
    return SourceRecord(intern(kind), name, uid, version, intern(selection), token, keys)


def bound_key_names(records: Iterable[SourceRecord]) -> tuple[SourceRecord, ...]:
    """The records, sorted, keeping the key names of as many sources as fit the caps (`KEY_NAMES_MAX`,
    `KEY_NAME_BYTES_MAX`), in record order; the others drop them (a change of such a source then reads the
    workload). Idempotent, so records read back and written again keep the same names."""
    count = size = 0
    out: list[SourceRecord] = []
    for record in sorted(records):
        more = sum(len(n.encode("utf-8", "surrogatepass")) + 3 for n in record.keys)
        if count + len(record.keys) > KEY_NAMES_MAX or size + more > KEY_NAME_BYTES_MAX:
            out.append(replace(record, keys=()))
            continue
        count, size = count + len(record.keys), size + more
        out.append(record)
    return tuple(out)


def names_unkept(records: Iterable[SourceRecord]) -> str | None:
    """The label of a source used in part whose key names the records do not keep (written in format 1,
    or beyond the caps of `bound_key_names`), or whose names do not give its recorded selection; None
    when the records name every key the workload uses."""
    for record in records:
        if record.selection == WHOLE:
            continue
        if not record.keys or selection_tag(frozenset(record.keys)) != record.selection:
            return record.label
    return None


@lru_cache(maxsize=256)
def parse_facts(letters: str, optional: tuple[str, ...]) -> SpecFacts | None:
    """`SpecFacts.parse`, one object per distinct value (most workloads share their facts)."""
    return SpecFacts.parse(letters, list(optional))


def format_rollout(record: RolloutRecord) -> str:
    """Compact JSON: `{"g": generation, "t": time, "c": [source names], "s": state}`, plus `x` (the cause
    of a restart not effective) and `e` (a `status-change` evidence's value before) where they are set."""
    doc: dict[str, Any] = {"g": record.generation, "t": format_time(record.at), "c": list(record.changed)}
    doc["s"] = record.state
    if record.cause:
        doc["x"] = record.cause
    if record.before is not None:
        doc["e"] = record.before
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
    cause, before = doc.get("x", ""), doc.get("e")
    if not isinstance(cause, str) or not (before is None or isinstance(before, str)):
        return None
    return RolloutRecord(generation, at, tuple(changed), state, cause, before, text)


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
        superseded=superseded if isinstance(superseded := annotations.get(keys.superseded), str) else None,
    )
