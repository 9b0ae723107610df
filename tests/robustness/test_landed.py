"""`policy.landed.shows_write`: a workload as our patch leaves it shows that write, and nothing else does.

The workload "as our patch leaves it" is built from the patch itself (`build_patch`'s ops read back with
the bookkeeping codec), so the check and the write cannot drift apart.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from reconcile.model.annotations import Annotations
from reconcile.model.bookkeeping import Bookkeeping, SourceRecord, read_bookkeeping
from reconcile.model.kinds import CRONJOB, DEPLOYMENT, STATEFULSET, Kind
from reconcile.model.pointer import split_pointer
from reconcile.model.workload import Target
from reconcile.policy.decision import Action, Decision, Observed
from reconcile.policy.landed import shows_write
from reconcile.policy.patches import build_patch
from tests.workloads import make_target

NOW = datetime(2026, 11, 21, 12, 0, 7, 250_000, tzinfo=UTC)
KEYS = Annotations()
OLD = SourceRecord("configmap", "app", "u1", "10", "*", "aaaa")
NEW = SourceRecord("configmap", "app", "u1", "11", "*", "bbbb")
OBSERVED = Observed("v1:new", (NEW,), "")


def sent_target(kind: Kind = DEPLOYMENT) -> Target:
    return make_target(
        kind=kind,
        template_hash="v1:old",
        bookkeeping=Bookkeeping("v1:old", (OLD,)),
        generation=4,
    )


def decision(action: Action) -> Decision:
    return Decision(
        action, "r", config_hash="v1:new", previous="v1:old", observed=OBSERVED, changed=("configmap/app",)
    )


def as_written(target: Target, ops: list[dict[str, Any]]) -> Target:
    """`target` as the server holds it after applying `ops` (our annotations only: all the check reads)."""
    annotations: dict[str, Any] = {}
    template_hash = target.template_hash
    for op in ops:
        tokens = split_pointer(op["path"])
        if op["op"] == "add" and tokens[:2] == ["metadata", "annotations"] and len(tokens) == 3:
            annotations[tokens[2]] = op["value"]
        elif op["op"] == "add" and tokens[-1] == KEYS.config_hash:
            template_hash = op["value"]
    generation = target.generation
    listed = replace(target.listed, bookkeeping=read_bookkeeping(annotations, KEYS), generation=generation)
    return replace(target, listed=listed, template_hash=template_hash)


@pytest.mark.parametrize("kind", [DEPLOYMENT, STATEFULSET, CRONJOB], ids=lambda k: k.kind)
@pytest.mark.parametrize("action", [Action.ROLLOUT, Action.ADOPT, Action.REFRESH, Action.NOTIFY])
def test_the_workload_as_our_patch_left_it_shows_our_write(kind: Kind, action: Action) -> None:
    sent = sent_target(kind)
    ops = build_patch(sent, decision(action), OBSERVED, now=NOW, keys=KEYS)
    assert shows_write(as_written(sent, ops), sent, decision(action), NOW)


def test_a_rollout_written_by_a_pass_of_another_second_is_not_ours() -> None:
    sent = sent_target()
    theirs = build_patch(sent, decision(Action.ROLLOUT), OBSERVED, now=NOW + timedelta(seconds=1), keys=KEYS)
    assert not shows_write(as_written(sent, theirs), sent, decision(Action.ROLLOUT), NOW)


def test_a_rollout_to_another_hash_or_over_other_records_is_not_ours() -> None:
    sent = sent_target()
    other = Observed("v1:other", (replace(NEW, resource_version="12", token="cccc"),), "")
    theirs = build_patch(
        sent,
        replace(decision(Action.ROLLOUT), config_hash="v1:other", observed=other),
        other,
        now=NOW,
        keys=KEYS,
    )
    assert not shows_write(as_written(sent, theirs), sent, decision(Action.ROLLOUT), NOW)


def test_a_workload_still_as_it_was_read_does_not_show_the_write() -> None:
    sent = sent_target()
    assert not shows_write(sent, sent, decision(Action.ROLLOUT), NOW)


def test_a_re_apply_that_stripped_the_template_hash_after_our_rollout_does_not_show_it() -> None:
    sent = sent_target()
    written = as_written(sent, build_patch(sent, decision(Action.ROLLOUT), OBSERVED, now=NOW, keys=KEYS))
    assert not shows_write(replace(written, template_hash=None), sent, decision(Action.ROLLOUT), NOW)


@pytest.mark.parametrize("action", [Action.IN_SYNC, Action.DEFERRED, Action.SKIPPED, Action.FAILED])
def test_a_decision_that_writes_nothing_never_landed(action: Action) -> None:
    sent = sent_target()
    written = as_written(sent, build_patch(sent, decision(Action.ROLLOUT), OBSERVED, now=NOW, keys=KEYS))
    assert not shows_write(written, sent, decision(action), NOW)
