"""A rollout record moved in the same pass as an adopt or refresh of the workload keeps the generation
stamp of that write true (found on a real kube-apiserver by tests/e2e[real]: a Deployment's generation
moves with every annotation write, so the second patch left the first one's stamp one behind and the
next pass read the workload in full and refreshed it again)."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from reconcile.model.kinds import DEPLOYMENT, STATEFULSET
from reconcile.policy.patches import build_patch, rollout_state_patch
from reconcile.policy.decision import Action, Decision, Observed
from reconcile.model.references import Discovery
from reconcile.model.annotations import Annotations
from reconcile.model.bookkeeping import Bookkeeping, RolloutRecord, SourceRecord
from reconcile.model.workload import Target

KEYS = Annotations()
SOURCES = "/metadata/annotations/kube-rehash.io~1sources"
REC = SourceRecord("configmap", "app", "u1", "11", "*", "bbbb")
OBSERVED = Observed("v1:same", (REC,), "")
RECORD = RolloutRecord(3, datetime(2026, 11, 21, 12, 0, tzinfo=UTC), ("configmap/app",), "progressing")
DISC = Discovery(True, False, (), frozenset(), frozenset(), (), ())


def refreshed(kind: object = DEPLOYMENT) -> Target:
    """A workload whose spec changed since our last write (generation 5, stamp 3): a refresh."""
    book = Bookkeeping("v1:same", (REC,), generation=3, rollout=RECORD)
    return Target(kind, "shop", "web", "w1", "100", DISC, "v1:same", True, True, book, generation=5)  # type: ignore[arg-type]


def stamp(ops: list[dict[str, object]]) -> int | None:
    (op,) = [o for o in ops if o["path"] == SOURCES]
    return json.loads(str(op["value"])).get("g")  # type: ignore[no-any-return]


def test_the_record_move_after_a_refresh_stamps_the_generation_of_both_writes() -> None:
    target = refreshed()
    refresh = build_patch(
        target,
        Decision(Action.REFRESH, "spec changed", "v1:same", observed=OBSERVED),
        OBSERVED,
        now=RECORD.at,
        keys=KEYS,
    )
    assert stamp(refresh) == 6  # 5, bumped by the refresh's annotation write
    moved = rollout_state_patch(target, RECORD, "complete", KEYS, written=OBSERVED)
    assert stamp(moved) == 7  # and once more by the record's move


def test_without_a_write_of_this_pass_the_move_keeps_the_stamp_rules_of_the_bookkeeping() -> None:
    target = refreshed()
    assert not [o for o in rollout_state_patch(target, RECORD, "complete", KEYS) if o["path"] == SOURCES]


def test_a_kind_whose_generation_ignores_annotations_needs_no_new_stamp() -> None:
    target = refreshed(STATEFULSET)
    moved = rollout_state_patch(target, RECORD, "complete", KEYS, written=OBSERVED)
    assert not [o for o in moved if o["path"] == SOURCES]
