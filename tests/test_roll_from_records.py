"""A trusted workload whose source changed is decided and rolled from its records, without being read.

The records carry, with their generation stamp, what a decision needs of the pod spec (`SpecFacts`: whether
the template's annotation map exists and holds our hash, paused, OnDelete, which sources are optional).
While the stamp holds (same generation: the spec is what the records describe), the pass rebuilds the full
view from them (`decide.target_from_records`) and its patch tests the generation as well as the stored hash,
so a spec changed meanwhile refuses the patch and the workload is read again.
"""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from reconcile.model.annotations import Annotations
from reconcile.model.bookkeeping import Bookkeeping, SourceRecord, SpecFacts, format_records, parse_records
from reconcile.model.kinds import DEPLOYMENT
from reconcile.model.references import DiscoverySettings
from reconcile.model.workload import Listed, read_listed, stamp_holds
from reconcile.policy.decide import target_from_records
from reconcile.policy.decision import Action, Decision, Observed
from reconcile.policy.patches import build_patch, rollout_state_patch
from tests.test_rollout_record_stamp import RECORD

KEYS = Annotations()
SOURCES = "/metadata/annotations/kube-rehash.io~1sources"
TPL_HASH = "/spec/template/metadata/annotations/kube-rehash.io~1config-hash"
REC = SourceRecord("configmap", "app", "u1", "11", "*", "bbbb")
FACTS = SpecFacts(
    template_hash=True, annotations_map=True, template_metadata=True, paused=False, on_delete=False
)


def listed_inputs() -> str:
    meta = {"name": "web", "namespace": "shop", "annotations": {"kube-rehash.io/watch": "true"}}
    return read_listed({"metadata": meta}, DEPLOYMENT, DiscoverySettings()).inputs


def listed_with(
    facts: SpecFacts | None, records: tuple[SourceRecord, ...] = (REC,), *, generation: int = 8
) -> Listed:
    text = format_records(records, "", generation=8, inputs=listed_inputs(), facts=facts)
    annotations = {
        "kube-rehash.io/watch": "true",
        "kube-rehash.io/config-hash": "v1:h",
        "kube-rehash.io/sources": text,
    }
    meta = {
        "name": "web",
        "namespace": "shop",
        "uid": "w1",
        "generation": generation,
        "annotations": annotations,
    }
    return read_listed({"metadata": meta}, DEPLOYMENT, DiscoverySettings())


def test_a_trusted_workload_is_rebuilt_from_its_records_and_its_patch_tests_the_generation() -> None:
    target = target_from_records(listed_with(FACTS))
    assert target is not None and target.unread
    assert (target.template_hash, target.generation) == ("v1:h", 8)
    observed = Observed("v1:new", (replace(REC, token="cccc"),), "")
    decision = Decision(Action.ROLLOUT, "changed", "v1:new", previous="v1:h", observed=observed)
    ops = build_patch(target, decision, observed, now=RECORD.at, keys=KEYS)
    tests = [op for op in ops if op["op"] == "test"]
    assert {"op": "test", "path": "/metadata/generation", "value": 8} in tests
    assert {"op": "test", "path": TPL_HASH, "value": "v1:h"} in tests
    (op,) = [o for o in ops if o["path"] == SOURCES]
    doc = json.loads(str(op["value"]))
    assert (doc["g"], doc["f"]) == (9, "hmt")  # the facts carry on to the next change


@pytest.mark.parametrize(
    ("listed", "why"),
    [
        (listed_with(None), "records written before the facts were recorded: read it once"),
        (listed_with(FACTS, (replace(REC, selection="0badc0de"),)), "some keys: their names are not kept"),
        (listed_with(FACTS, generation=9), "the spec changed since the stamp"),
    ],
)
def test_records_that_cannot_stand_for_the_spec_mean_a_read(listed: Listed, why: str) -> None:
    assert target_from_records(listed) is None, why


def test_optional_sources_stay_optional_when_rebuilt() -> None:
    optional = replace(FACTS, optional=("configmap/app",))
    target = target_from_records(listed_with(optional))
    assert target is not None
    assert [ref.optional for ref in target.discovery.references] == [True]
    parsed = parse_records(format_records((REC,), "", generation=1, inputs="", facts=optional))
    assert parsed is not None and parsed.facts == optional


def test_facts_without_a_stamp_are_not_kept() -> None:
    doc = json.loads(format_records((REC,), "", facts=FACTS))
    assert "f" not in doc and "g" not in doc


def test_the_stamp_holds_only_at_the_same_generation() -> None:
    assert stamp_holds(listed_with(FACTS))
    assert not stamp_holds(listed_with(FACTS, generation=9))
    assert not stamp_holds(replace(listed_with(FACTS), bookkeeping=Bookkeeping("v1:h", (REC,))))


def test_marking_a_rollout_complete_carries_the_facts_with_the_new_stamp() -> None:
    listed = listed_with(FACTS)
    listed = replace(listed, bookkeeping=replace(listed.bookkeeping, rollout=RECORD))
    moved = rollout_state_patch(listed, RECORD, "complete", KEYS)
    (op,) = [o for o in moved if o["path"] == SOURCES]
    doc = json.loads(str(op["value"]))
    assert (doc["g"], doc["f"]) == (9, "hmt")  # a Deployment's generation moves with this write
