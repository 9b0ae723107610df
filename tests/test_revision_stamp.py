"""The generation stamp survives the deployment controller's own write after our rollout.

On a real kube-apiserver a Deployment's generation moves twice per rollout: our patch, then the controller's
`deployment.kubernetes.io/revision` annotation (a Deployment's generation follows its annotations). Our
rollout records the revision the controller will write; while the workload carries exactly that revision
one generation past the stamp, the records are still trusted: no full read and no bookkeeping patch in the
passes after a rollout (issue 19, found on the real server: 92 full reads and 37 refreshes per pass).
"""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from reconcile.decide import target_from_records
from reconcile.kube.kinds import DEPLOYMENT, STATEFULSET
from reconcile.patches import build_patch, rollout_state_patch
from reconcile.plan import Action, Decision, Observed, decide
from reconcile.refs import Discovery, DiscoverySettings
from reconcile.targets import (
    Annotations,
    Bookkeeping,
    Listed,
    SourceRecord,
    SpecFacts,
    Target,
    format_records,
    next_revision,
    parse_records,
    read_listed,
    records_trusted,
    stamp_holds,
)
from tests.test_rollout_record_stamp import RECORD

KEYS = Annotations()
SOURCES = "/metadata/annotations/kube-rehash.io~1sources"
REC = SourceRecord("configmap", "app", "u1", "11", "*", "bbbb")
DISC = Discovery(True, False, (), frozenset(), frozenset(), (), ())


def workload(generation: int, revision: str | None, book: Bookkeeping, kind: object = DEPLOYMENT) -> Target:
    return Target(
        kind,  # type: ignore[arg-type]
        "shop",
        "web",
        "w1",
        "100",
        DISC,
        "v1:h",
        True,
        True,
        book,
        generation=generation,
        revision=revision,
    )


STAMPED = Bookkeeping("v1:h", (REC,), generation=8, revision="4")


@pytest.mark.parametrize(
    ("generation", "revision", "holds", "why"),
    [
        (8, "3", True, "the controller has not written its revision yet"),
        (9, "4", True, "the controller wrote the revision our rollout leads to"),
        (9, "3", False, "something else moved the generation"),
        (10, "4", False, "the revision write and another change"),
        (10, "5", False, "another rollout after ours"),
        (7, "4", False, "older than the stamp"),
    ],
)
def test_stamp_holds(generation: int, revision: str, holds: bool, why: str) -> None:
    assert stamp_holds(workload(generation, revision, STAMPED)) is holds, why


def test_without_a_recorded_revision_only_the_same_generation_holds() -> None:
    book = replace(STAMPED, revision=None)
    assert stamp_holds(workload(8, "4", book))
    assert not stamp_holds(workload(9, "4", book))


def test_a_rollout_records_the_revision_the_controller_writes_next() -> None:
    target = workload(7, "3", Bookkeeping("v1:old", (REC,), generation=7))
    observed = Observed("v1:new", (REC,), "")
    decision = Decision(Action.ROLLOUT, "changed", "v1:new", previous="v1:old", observed=observed)
    (op,) = [
        o for o in build_patch(target, decision, observed, now=RECORD.at, keys=KEYS) if o["path"] == SOURCES
    ]
    doc = parse_records(op["value"])
    assert doc is not None
    assert (doc.generation, doc.revision) == (8, "4")
    assert next_revision(workload(1, None, STAMPED)) == "1"  # not synced yet: the controller writes 1
    assert next_revision(workload(1, "x", STAMPED)) is None  # unreadable: no recovery, a full read
    assert next_revision(workload(1, "2", STAMPED, kind=STATEFULSET)) is None


def test_after_the_revision_write_the_workload_is_in_sync_without_a_refresh() -> None:
    target = workload(9, "4", STAMPED)
    observed = Observed("v1:h", (REC,), "")
    assert records_trusted(target, "")
    assert decide(target, observed, now=RECORD.at).action is Action.IN_SYNC


def test_marking_the_rollout_complete_restamps_from_the_current_generation() -> None:
    book = replace(STAMPED, rollout=RECORD)
    moved = rollout_state_patch(workload(9, "4", book), RECORD, "complete", KEYS)
    (op,) = [o for o in moved if o["path"] == SOURCES]
    doc = json.loads(str(op["value"]))
    assert doc["g"] == 10 and "r" not in doc  # 9 moved once more by this write; no revision pending
    pending = rollout_state_patch(workload(8, "3", book), RECORD, "stalled", KEYS)
    (op,) = [o for o in pending if o["path"] == SOURCES]
    assert json.loads(str(op["value"]))["r"] == "4"  # the controller's write is still to come


def test_records_without_a_revision_still_parse_and_older_readers_ignore_it() -> None:
    text = format_records((REC,), "", generation=3, inputs="i", revision="2")
    assert json.loads(text)["r"] == "2"
    legacy = parse_records(format_records((REC,), "", generation=3, inputs="i"))
    assert legacy is not None and legacy.revision is None


# -- rolling from the records, without reading the workload ------------------------------------------------

LISTED_META = {
    "name": "web",
    "namespace": "shop",
    "uid": "w1",
    "generation": 9,
    "annotations": {
        "kube-rehash.io/watch": "true",
        "deployment.kubernetes.io/revision": "4",
        "kube-rehash.io/config-hash": "v1:h",
    },
}


def listed_with(facts: SpecFacts | None, records: tuple[SourceRecord, ...] = (REC,)) -> Listed:
    text = format_records(records, "", generation=8, inputs=listed_inputs(), revision="4", facts=facts)
    meta = {**LISTED_META, "annotations": {**LISTED_META["annotations"], "kube-rehash.io/sources": text}}
    return read_listed({"metadata": meta}, DEPLOYMENT, DiscoverySettings())


def listed_inputs() -> str:
    meta = {"name": "web", "namespace": "shop", "annotations": {"kube-rehash.io/watch": "true"}}
    return read_listed({"metadata": meta}, DEPLOYMENT, DiscoverySettings()).inputs


FACTS = SpecFacts(
    template_hash=True, annotations_map=True, template_metadata=True, paused=False, on_delete=False
)


def test_a_trusted_workload_is_rebuilt_from_its_records_and_its_patch_tests_the_generation() -> None:
    target = target_from_records(listed_with(FACTS))
    assert target is not None and target.unread
    assert (target.template_hash, target.generation, target.revision) == ("v1:h", 9, "4")
    observed = Observed("v1:new", (replace(REC, token="cccc"),), "")
    decision = Decision(Action.ROLLOUT, "changed", "v1:new", previous="v1:h", observed=observed)
    ops = build_patch(target, decision, observed, now=RECORD.at, keys=KEYS)
    tests = [op for op in ops if op["op"] == "test"]
    assert {"op": "test", "path": "/metadata/generation", "value": 9} in tests
    assert {
        "op": "test",
        "path": "/spec/template/metadata/annotations/kube-rehash.io~1config-hash",
        "value": "v1:h",
    } in tests
    (op,) = [o for o in ops if o["path"] == SOURCES]
    doc = json.loads(str(op["value"]))
    assert (doc["g"], doc["r"], doc["f"]) == (10, "5", "hmt")  # the facts carry on to the next change


@pytest.mark.parametrize(
    ("facts", "records", "why"),
    [
        (None, (REC,), "records written before the facts were recorded: read it once"),
        (FACTS, (replace(REC, selection="0badc0de"),), "a reference to some keys: their names are not kept"),
    ],
)
def test_records_that_cannot_stand_for_the_spec_mean_a_read(
    facts: SpecFacts | None, records: tuple[SourceRecord, ...], why: str
) -> None:
    assert target_from_records(listed_with(facts, records)) is None, why


def test_optional_sources_stay_optional_when_rebuilt() -> None:
    optional = replace(FACTS, optional=("configmap/app",))
    target = target_from_records(listed_with(optional))
    assert target is not None
    assert [ref.optional for ref in target.discovery.references] == [True]
    parsed = parse_records(format_records((REC,), "", generation=1, inputs="", facts=optional))
    assert parsed is not None and parsed.facts == optional
