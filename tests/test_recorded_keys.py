"""A workload that uses only some keys of a source is decided from its records, without being read.

Format 2 of the `sources` bookkeeping records, with the selection's tag, the names of the keys a workload
uses of each source it uses in part (bounded: `bookkeeping.bound_key_names`). A trusted workload whose
such source changed is then rebuilt from its records (`decide.target_from_records`), only that source's
content is hashed for those keys, and a change of a key it does not use rolls nothing. Records written in
format 1 (no key names) are read and trusted too: such a workload is read in full when a source it uses
in part changes, and its next write records the names.
"""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from reconcile.model.annotations import Annotations
from reconcile.model.bookkeeping import (
    KEY_NAME_BYTES_MAX,
    KEY_NAMES_MAX,
    SourceRecord,
    bound_key_names,
    format_records,
    parse_records,
)
from reconcile.model.hashing import selection_tag, source_token
from reconcile.model.kinds import DEPLOYMENT
from reconcile.model.references import DiscoverySettings
from reconcile.model.sources import Hashed, NamespaceSources, SourceKey, SourceMeta
from reconcile.model.workload import Listed, Target, read_listed, read_target, records_trusted
from reconcile.policy.answer import content_wants
from reconcile.policy.decide import confirm_recorded, decide_target, target_from_records
from reconcile.policy.decision import Action, Decision
from reconcile.policy.patches import build_patch
from reconcile.policy.rules import Rules
from reconcile.policy.triage import Need, triage_one

NOW = datetime(2026, 11, 26, 12, 0, tzinfo=UTC)
SETTINGS = DiscoverySettings()
RULES = Rules(SETTINGS, None, NOW)
KEYS = Annotations()
APP = SourceKey("configmap", "app")
USED = frozenset({"a"})
PREFIX = "/metadata/annotations/"


def workload(keys: tuple[str, ...] = ("a",)) -> dict[str, Any]:
    """A Deployment whose container reads these keys of configmap/app as env vars (and nothing else)."""
    env = [
        {"name": f"V{i}", "valueFrom": {"configMapKeyRef": {"name": "app", "key": key}}}
        for i, key in enumerate(keys)
    ]
    template = {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "c", "env": env}]}}
    metadata = {
        "name": "web",
        "namespace": "shop",
        "uid": "w1",
        "generation": 3,
        "resourceVersion": "100",
        "annotations": {"kube-rehash.io/watch": "true"},
    }
    return {"metadata": metadata, "spec": {"template": template}}


def sources(version: str, data: dict[str, str], keys: frozenset[str] = USED) -> NamespaceSources:
    """What a pass knows of configmap/app at this version: its identity and its digest for `keys`."""
    known = NamespaceSources("shop")
    known.found[APP] = SourceMeta("configmap", "app", "u1", version)
    token = source_token("configmap", {"data": data}, keys, None)
    known.tokens[(APP, keys)] = Hashed(token, "u1", version)
    return known


def written(obj: dict[str, Any], decision: Decision, target: Target) -> Listed:
    """The workload as the next pass lists it after our patch of this decision (the server applied it)."""
    assert decision.observed is not None
    ops = build_patch(target, decision, decision.observed, now=NOW, keys=KEYS)
    annotations = dict(obj["metadata"]["annotations"])
    for op in ops:
        if op["op"] == "add" and op["path"].startswith(PREFIX):
            annotations[op["path"].removeprefix(PREFIX).replace("~1", "/")] = op["value"]
    stamp = json.loads(annotations["kube-rehash.io/sources"])["g"]
    metadata = {**obj["metadata"], "annotations": annotations, "generation": stamp}
    return read_listed({"metadata": metadata}, DEPLOYMENT, SETTINGS)


def adopted(keys: tuple[str, ...] = ("a",)) -> Listed:
    """The workload after the pass that adopted it, over configmap/app version 10."""
    obj = workload(keys)
    target = read_target(obj, DEPLOYMENT, SETTINGS)
    decision = decide_target(target, sources("10", {k: "1" for k in keys}, frozenset(keys)), RULES)
    assert decision.action is Action.ADOPT, decision.reason
    return written(obj, decision, target)


def test_records_keep_the_key_names_and_the_workload_is_rebuilt_from_them() -> None:
    listed = adopted()
    (record,) = listed.bookkeeping.records or ()
    assert (record.selection, record.keys) == (selection_tag(USED), ("a",))
    assert triage_one(listed, "") is Need.METADATA
    rebuilt = target_from_records(listed)
    assert rebuilt is not None and rebuilt.unread
    assert [(ref.label(), ref.keys) for ref in rebuilt.discovery.references] == [("configmap/app", USED)]


def test_a_change_reads_only_the_changed_sources_content_for_the_keys_used() -> None:
    rebuilt = target_from_records(adopted())
    assert rebuilt is not None
    metadata_only = NamespaceSources("shop")
    metadata_only.found[APP] = SourceMeta("configmap", "app", "u1", "11")
    assert content_wants(rebuilt, metadata_only, RULES).content == {APP: frozenset({USED})}


def test_a_change_to_a_key_the_workload_does_not_use_rolls_nothing() -> None:
    listed = adopted()
    changed = sources("11", {"a": "1", "b": "2"})
    assert confirm_recorded(listed, changed, RULES) is None  # stale: its source has a new version
    rebuilt = target_from_records(listed)
    assert rebuilt is not None
    decision = decide_target(rebuilt, changed, RULES)
    assert decision.action is Action.REFRESH and not decision.changed, decision.reason


def test_a_change_to_a_key_it_uses_rolls_once_with_one_patch_that_tests_the_generation() -> None:
    listed = adopted()
    rebuilt = target_from_records(listed)
    assert rebuilt is not None
    decision = decide_target(rebuilt, sources("11", {"a": "2"}), RULES)
    assert (decision.action, decision.changed) == (Action.ROLLOUT, ("configmap/app",))
    assert decision.observed is not None
    ops = build_patch(rebuilt, decision, decision.observed, now=NOW, keys=KEYS)
    assert {"op": "test", "path": "/metadata/generation", "value": listed.generation} in ops
    after = written(workload(), decision, rebuilt)
    assert after.bookkeeping.records is not None and after.bookkeeping.records[0].keys == ("a",)
    again = target_from_records(after)
    assert again is not None
    assert decide_target(again, sources("11", {"a": "2"}), RULES).action is Action.IN_SYNC


def format_1(listed: Listed) -> Listed:
    """The same bookkeeping as an older version wrote it: format 1, no key names."""
    annotations = listed_annotations(listed)
    doc = json.loads(annotations["kube-rehash.io/sources"])
    doc["v"], doc["s"] = 1, [row[:6] for row in doc["s"]]
    annotations["kube-rehash.io/sources"] = json.dumps(doc, separators=(",", ":"))
    metadata = {"name": "web", "namespace": "shop", "uid": "w1", "generation": listed.generation}
    return read_listed({"metadata": {**metadata, "annotations": annotations}}, DEPLOYMENT, SETTINGS)


def listed_annotations(listed: Listed) -> dict[str, str]:
    book = listed.bookkeeping
    assert book.records is not None and book.config_hash is not None
    text = format_records(
        book.records, book.key_fingerprint, generation=book.generation, inputs=book.inputs, facts=book.facts
    )
    return {"kube-rehash.io/watch": "true", KEYS.config_hash: book.config_hash, KEYS.sources: text}


def test_format_1_records_are_still_trusted_and_read_in_full_only_when_their_source_changes() -> None:
    old = format_1(adopted())
    (record,) = old.bookkeeping.records or ()
    assert record.keys == () and record.selection == selection_tag(USED)
    assert records_trusted(old, "") and triage_one(old, "") is Need.METADATA
    steady = confirm_recorded(old, sources("10", {"a": "1"}), RULES)
    assert steady is not None and steady.action is Action.IN_SYNC  # no write for the format
    assert target_from_records(old) is None  # a change reads the workload, as format 1 always did
    read = replace(read_target(workload(), DEPLOYMENT, SETTINGS), listed=old)
    decision = decide_target(read, sources("11", {"a": "1", "b": "2"}), RULES)
    assert decision.action is Action.REFRESH and decision.observed is not None  # nothing rolls
    assert decision.observed.records[0].keys == ("a",)  # and the write records the names from now on


def test_beyond_the_cap_the_names_are_not_kept_and_the_workload_is_read() -> None:
    many = tuple(f"k{i:03}" for i in range(KEY_NAMES_MAX + 1))
    listed = adopted(many)
    (record,) = listed.bookkeeping.records or ()
    assert record.keys == () and record.selection == selection_tag(frozenset(many))
    assert target_from_records(listed) is None


def test_the_caps_bound_names_and_bytes_per_workload_and_are_stable_when_written_again() -> None:
    long = tuple(f"{i}{'x' * 200}" for i in range(20))  # 20 names, over 2 KiB together
    records = [
        SourceRecord("configmap", f"c{i}", "u", "1", selection_tag(frozenset(names)), "t", names)
        for i in range(0, 20, 5)
        if (names := long[i : i + 5])
    ]
    bounded = bound_key_names(records)
    kept = [r for r in bounded if r.keys]
    assert 0 < len(kept) < len(records)
    assert sum(len(n) + 3 for r in kept for n in r.keys) <= KEY_NAME_BYTES_MAX
    assert bound_key_names(bounded) == bounded


def test_names_that_do_not_give_the_recorded_selection_are_not_trusted() -> None:
    listed = adopted()
    doc = json.loads(listed_annotations(listed)[KEYS.sources])
    doc["s"][0][6] = ["b"]
    parsed = parse_records(json.dumps(doc))
    assert parsed is not None and parsed.records[0].keys == ("b",)
    annotations = {**listed_annotations(listed), KEYS.sources: json.dumps(doc)}
    metadata = {"name": "web", "namespace": "shop", "uid": "w1", "generation": listed.generation}
    tampered = read_listed({"metadata": {**metadata, "annotations": annotations}}, DEPLOYMENT, SETTINGS)
    assert target_from_records(tampered) is None


def test_a_malformed_key_name_list_makes_the_records_unreadable() -> None:
    doc = json.loads(listed_annotations(adopted())[KEYS.sources])
    for bad in ("a", [], [1]):
        doc["s"][0][6] = bad
        assert parse_records(json.dumps(doc)) is None, bad
    doc["v"] = 1
    doc["s"][0][6] = ["a"]
    assert parse_records(json.dumps(doc)) is None  # format 1 has no names
