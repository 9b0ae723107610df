"""A report's rows are held packed a block at a time (output/rows.py): they read back exactly as written,
a row replaced by index is replaced wherever its block is, and the document written from them is the
same text as from plain rows."""

from __future__ import annotations

import json
import sys
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reconcile.output.report import Report
from reconcile.policy.decision import Deferral
from reconcile.policy.outcome import Outcome
from reconcile.policy.outcomes import BLOCK, Outcomes, pack_outcome, unpack_outcome


def row(i: int, **fields: object) -> Outcome:
    base: dict[str, object] = {
        "kind": "Deployment" if i % 3 else "StatefulSet",
        "namespace": f"team-{i % 7}",
        "name": f"app-{i:05d}",
        "action": "in-sync",
        "reason": "config hash matches",
        "configs": (f"configmap/cfg-{i}", f"secret/sec-{i}"),
        "hash": f"{i:016x}",
    }
    return Outcome(**{**base, **fields})  # type: ignore[arg-type]


def test_every_field_of_a_row_survives_packing() -> None:
    full = row(1, previous="ab", rollout_status="stalled", deferral=Deferral.BUDGET, action="deferred")
    assert unpack_outcome(json.loads(json.dumps(pack_outcome(full)))) == full
    assert (
        unpack_outcome(
            json.loads(json.dumps(pack_outcome(Outcome("Deployment", "*", "*", "failed", "x"))))
        ).configs
        == ()
    )


def test_rows_read_back_in_order_across_packed_blocks_and_the_open_one() -> None:
    written = [row(i) for i in range(2 * BLOCK + 17)]
    rows = Outcomes(written)
    assert len(rows) == len(written) and list(rows) == written and rows == written
    assert rows[0] == written[0] and rows[BLOCK] == written[BLOCK] and rows[-1] == written[-1]
    assert rows[BLOCK - 2 : BLOCK + 2] == written[BLOCK - 2 : BLOCK + 2]
    with pytest.raises(IndexError):
        rows[len(written)]


@pytest.mark.parametrize("appended", ["in order", "out of order"])
def test_the_document_from_packed_rows_is_the_one_from_plain_rows_in_order(appended: str) -> None:
    written = sorted((row(i) for i in range(BLOCK + 40)), key=lambda r: (r.namespace, r.kind, r.name))
    if appended == "out of order":
        written = [*written[BLOCK:], *written[:BLOCK]]
    report = Report.of(rows=written)
    document = json.loads(report.render_json())
    key = [(r.namespace, r.kind, r.name) for r in written]
    assert [(w["namespace"], w["kind"], w["name"]) for w in document["workloads"]] == sorted(key)
    assert document["summary"]["workloads"] == len(written)
    assert report.to_json() == document


def test_packed_rows_take_a_fraction_of_the_objects_memory() -> None:
    rows = Outcomes(row(i) for i in range(20 * BLOCK))
    packed = sum(sys.getsizeof(b) for b in rows._blocks)
    assert packed / len(rows) < 100  # bytes per row; as objects a row is about 500


ROW_SHAPES = st.tuples(
    st.sampled_from(["in-sync", "rollout", "failed", "deferred", "notify"]),
    st.sampled_from([None, *Deferral]),
    st.sampled_from([None, "complete", "stalled"]),
    st.booleans(),
    st.integers(min_value=0, max_value=50),
)


@given(st.lists(ROW_SHAPES, max_size=2 * BLOCK + 30))
@settings(max_examples=40, deadline=None)
def test_the_counts_noted_as_rows_are_appended_are_those_of_the_rows_read_back(shapes: list[Any]) -> None:
    written = [
        row(i, action=a, deferral=d, rollout_status=s, **({"name": "*"} if scope else {}))
        if i % 2
        else row(i, namespace=f"team-{n:02d}", action=a, deferral=d, rollout_status=s)
        for i, (a, d, s, scope, n) in enumerate(shapes)
    ]
    report = Report.of(rows=Outcomes(written))
    summary = report.summary()
    assert summary["workloads"] == len(written)
    assert summary["stalled"] == sum(r.stalled for r in written)
    for action in ("in-sync", "rollout", "failed", "deferred", "notify"):
        assert summary[action] == sum(r.action == action for r in written)
    assert report.failed == any(r.action == "failed" for r in written)
    assert report.stalled == any(r.stalled for r in written)
    assert report.pending_rollouts == any(r.action == "rollout" for r in written)
    assert report.budget_deferred == sum(r.by_budget for r in written)
    assert report.decided == sum(r.deferral not in (Deferral.BUDGET, Deferral.STOPPED) for r in written)
    assert report.deferred_by_reason() == {d: sum(r.deferral is d for r in written) for d in Deferral}
    keys = [(r.namespace, r.kind, r.name) for r in written]
    assert report.rows.in_order == (keys == sorted(keys))
    assert [(r.namespace, r.kind, r.name) for r in report.sorted_rows()] == sorted(keys)
    scopes = sum(r.is_scope for r in written)
    assert report.summary_line().startswith(f"{len(written) - scopes} workload")
