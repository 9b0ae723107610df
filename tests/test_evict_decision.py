"""Restart by eviction as a decision table (policy/evict.py, model/pods.py): which pods are old, how many
one pass evicts, when the hash is recorded, and the owner chain that says which pods are the workload's."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from reconcile.model.bookkeeping import Bookkeeping
from reconcile.model.choices import Restart
from reconcile.model.freshness import Lineage
from reconcile.model.kinds import CRONJOB, STATEFULSET
from reconcile.model.pods import Pod, controlled_pods, evict_batch, old_pods
from reconcile.model.sources import Hashed, NamespaceSources, SourceKey
from reconcile.model.workload import Listed, Target, revise
from reconcile.policy.decision import Action, Decision
from reconcile.policy.evict import plan_eviction, pods_wanted
from reconcile.policy.table import settle_listed
from tests.workloads import make_target

CHANGED = datetime(2026, 11, 21, 12, 0, 0, tzinfo=UTC)
APP = "configmap/app"
LINEAGE = Lineage("Deployment", "w1", 3, 3, (("app", "web"),), "2")


def target(**kw: Any) -> Target:
    return make_target(
        **{"restart": Restart.EVICT, "lineage": LINEAGE, "bookkeeping": Bookkeeping("v1:old"), **kw}
    )


def sources(at: datetime | None = CHANGED) -> NamespaceSources:
    found = NamespaceSources("shop")
    found.tokens[(SourceKey("configmap", "app"), None)] = Hashed("tok", "u1", "11", at)
    return found


def rollout() -> Decision:
    return Decision(Action.ROLLOUT, f"{APP} changed", "v1:new", "v1:old", (APP,), (APP,))


def pod(name: str, seconds: int, *, terminating: bool = False) -> Pod:
    return Pod(name, CHANGED + timedelta(seconds=seconds), terminating)


def test_pods_created_before_or_in_the_second_of_the_change_are_old_oldest_first() -> None:
    pods = [pod("b", -5), pod("a", -60), pod("same", 0), pod("new", 1), pod("going", -90, terminating=True)]
    assert [p.name for p in old_pods(pods, CHANGED)] == ["a", "b", "same"]
    assert [p.name for p in old_pods([Pod("unknown", None, False)], CHANGED)] == ["unknown"]


@pytest.mark.parametrize(("value", "batch"), [(None, 1), (3, 3), ("25%", 1), (0, 1), (True, 1)])
def test_one_pass_evicts_max_unavailable_where_it_is_an_integer_else_one(value: Any, batch: int) -> None:
    assert evict_batch(value) == batch


@pytest.mark.parametrize(("value", "batch"), [(None, 2), ("25%", 2), (0, 2), (3, 3)])
def test_evict_per_pass_applies_where_max_unavailable_is_no_integer(value: Any, batch: int) -> None:
    pods = (pod("a", -3), pod("b", -2), pod("c", -1))
    decided = plan_eviction(target(max_unavailable=value), rollout(), pods, sources(), per_pass=2)
    assert decided.eviction is not None and len(decided.eviction.pods) == batch


def test_a_rollout_in_evict_mode_names_the_oldest_pods_to_evict() -> None:
    pods = (pod("c", -1), pod("a", -30), pod("b", -20), pod("new", 5))
    decided = plan_eviction(target(max_unavailable=2), rollout(), pods, sources())
    assert decided.action is Action.ROLLOUT and decided.eviction is not None
    assert decided.eviction.pods == ("a", "b") and (decided.eviction.old, decided.eviction.total) == (3, 4)
    assert decided.reason == "configmap/app changed; evicts a, b (3 of 4 pods started before the change)"


def test_when_every_pod_is_newer_the_workload_is_in_sync_and_the_hash_is_recorded() -> None:
    decided = plan_eviction(target(), rollout(), (pod("x", 3), pod("y", 1)), sources())
    assert decided.action is Action.IN_SYNC and decided.config_hash == "v1:new"
    assert decided.eviction is not None and decided.eviction.pods == ()
    assert "pods restarted by eviction" in decided.reason


@pytest.mark.parametrize(
    ("pods", "found", "action", "says"),
    [
        (None, sources(), Action.DEFERRED, "pass budget"),
        ("403 Forbidden", sources(), Action.FAILED, "listing its pods failed: 403 Forbidden"),
        ((pod("a", -3),), sources(None), Action.FAILED, "needs the time configmap/app changed"),
    ],
)
def test_doubt_never_evicts(pods: Any, found: NamespaceSources, action: Action, says: str) -> None:
    decided = plan_eviction(target(), rollout(), pods, found)
    assert decided.action is action and says in decided.reason and decided.eviction is None


def test_patch_mode_and_other_actions_are_left_alone() -> None:
    patch = target(restart=Restart.PATCH)
    assert plan_eviction(patch, rollout(), (pod("a", -3),), sources()) == rollout()
    assert not pods_wanted(patch, rollout())
    in_sync = Decision(Action.IN_SYNC, "content unchanged")
    assert plan_eviction(target(), in_sync, None, sources()) == in_sync
    assert pods_wanted(target(), rollout()) and not pods_wanted(target(), in_sync)


def test_a_kind_without_pods_of_its_own_is_skipped_in_evict_mode() -> None:
    custom = target(lineage=None)
    assert plan_eviction(custom, rollout(), None, sources()).action is Action.SKIPPED
    assert not pods_wanted(target(kind=CRONJOB), rollout())


def meta(name: str, uid: str, owner: str | None, **extra: Any) -> dict[str, Any]:
    refs = [{"kind": "X", "name": "o", "uid": owner, "controller": True}] if owner else []
    return {"metadata": {"name": name, "uid": uid, "ownerReferences": refs, **extra}}


def test_only_pods_the_workload_controls_through_its_replicasets_are_its_own() -> None:
    replicasets = [meta("web-1", "rs1", "w1"), meta("other-1", "rs2", "someone")]
    pods = [
        meta("web-1-a", "p1", "rs1", creationTimestamp="2026-11-21T11:00:00Z"),
        meta("other-1-a", "p2", "rs2"),
        meta("orphan", "p3", None),
        meta("direct", "p4", "w1", deletionTimestamp="2026-11-21T12:00:00Z"),
    ]
    found = controlled_pods("w1", pods, replicasets)
    assert [(p.name, p.terminating) for p in found] == [("web-1-a", False), ("direct", True)]
    assert found[0].created == datetime(2026, 11, 21, 11, 0, tzinfo=UTC)


def listed(**kw: Any) -> Listed:
    return target(**kw).listed


def test_an_operator_owned_workload_is_skipped_unless_restarted_by_eviction() -> None:
    owned = settle_listed(listed(owner="Database/main", restart=Restart.PATCH))
    assert owned is not None and owned.action is Action.SKIPPED and "restart: evict" in owned.reason
    assert settle_listed(listed(owner="Database/main")) is None


def test_a_statefulset_in_evict_mode_has_its_pods_read() -> None:
    sts = revise(
        target(kind=STATEFULSET), lineage=Lineage("StatefulSet", "w1", 2, 2, (("app", "db"),), "db-1")
    )
    assert pods_wanted(sts, rollout())
