"""The planner (reconcile/pipeline/planner.py) over the transport fake: for one batch, the ordered list of
requests it makes (what `policy.needs` asks between the reads) and the `Planned` decisions it returns; and
`plan_workload`/`redecide`, the entry points of `explain` and of the write stage after a conflict."""

from __future__ import annotations

import copy
from dataclasses import replace
from typing import Any

import pytest
import responses

from reconcile.model.choices import FirstSight
from reconcile.model.kinds import DEPLOYMENT
from reconcile.model.workload import Listed, read_listed, read_target
from reconcile.pipeline.planner import plan_batch, plan_rounds, plan_workload, redecide
from reconcile.pipeline.read import ReadStage
from reconcile.policy.decision import Action, Deferral
from reconcile.policy.planned import Planned
from reconcile.policy.rules import Rules
from reconcile.policy.triage import Batch, triage_listed
from reconcile.policy.wants import Input
from reconcile.settings.policy import PolicySettings
from tests.e2e.conftest import configmap, deployment
from tests.stages.http import (
    CONFIGMAPS,
    DEPLOYS,
    DISCOVERY,
    JSON,
    META_GET,
    RULES,
    SERVER,
    accepts,
    adopted,
    calls,
    metadata_only,
    stamped,
    status,
)


def cm(name: str, rv: str = "5", **data: str) -> dict[str, Any]:
    return stamped(configmap(name, data or {"k": "v"}), uid=f"cm-{name}", resource_version=rv)


def web(*sources: str, **annotations: str) -> dict[str, Any]:
    """Deployment shop/web using these ConfigMaps through envFrom."""
    obj = deployment("web", annotations={"kube-rehash.io/watch": "true", **annotations})
    obj["spec"]["template"]["spec"]["containers"][0]["envFrom"] = [
        {"configMapRef": {"name": s}} for s in sources
    ]
    return stamped(obj, uid="uid-web", resource_version="7")


def as_listed(obj: dict[str, Any]) -> Listed:
    return read_listed(metadata_only(obj), DEPLOYMENT, DISCOVERY)


def plan(stage: ReadStage, *objs: dict[str, Any], rules: Rules = RULES) -> list[Planned]:
    """Listing's values for these workloads, triaged, then one batch planned."""
    listed = [as_listed(o) for o in objs]
    return plan_batch(stage, Batch("shop", tuple(listed)), triage_listed(listed, rules.fingerprint), rules)


def serve(mock: responses.RequestsMock, path: str, obj: dict[str, Any], *, meta: bool = False) -> None:
    mock.add(responses.GET, SERVER + path, json=metadata_only(obj) if meta else obj)


def serve_a_changed_app(mock: responses.RequestsMock) -> dict[str, Any]:
    """web, adopted with ConfigMaps app and base; app has changed since: served are the metadata of both,
    then app's content. Returns the adopted web."""
    app, base = cm("app"), cm("base")
    stored = adopted(web("app", "base"), [app, base])
    changed = cm("app", rv="6", k="new")
    serve(mock, f"{CONFIGMAPS}/app", changed, meta=True)
    serve(mock, f"{CONFIGMAPS}/base", base, meta=True)
    serve(mock, f"{CONFIGMAPS}/app", changed)
    return stored


def test_first_sight_reads_the_workload_then_the_content_straight_away_never_metadata_first(
    stage: ReadStage, mock: responses.RequestsMock
) -> None:
    serve(mock, f"{DEPLOYS}/web", web("app"))
    serve(mock, f"{CONFIGMAPS}/app", cm("app"))
    (planned,) = plan(stage, web("app"))
    assert calls(mock) == [f"GET {DEPLOYS}/web", f"GET {CONFIGMAPS}/app"]
    assert accepts(mock) == [JSON, JSON]
    assert planned.decision.action is Action.ADOPT
    assert planned.decision.configs == ("configmap/app",) and planned.decision.previous is None
    assert planned.full is not None and planned.full.resource_version == "7"


def test_first_sight_with_first_sight_rollout_rolls_out(
    stage: ReadStage, mock: responses.RequestsMock
) -> None:
    serve(mock, f"{DEPLOYS}/web", web("app"))
    serve(mock, f"{CONFIGMAPS}/app", cm("app"))
    (planned,) = plan(
        stage, web("app"), rules=replace(RULES, policy=PolicySettings(first_sight=FirstSight.ROLLOUT))
    )
    assert planned.decision.action is Action.ROLLOUT
    assert planned.decision.reason.startswith("first sight (firstSight: rollout)")


def test_a_steady_trusted_workload_reads_only_its_source_metadata_and_is_confirmed_in_sync(
    stage: ReadStage, mock: responses.RequestsMock
) -> None:
    app = cm("app")
    stored = adopted(web("app"), [app])
    serve(mock, f"{CONFIGMAPS}/app", app, meta=True)
    (planned,) = plan(stage, stored)
    assert calls(mock) == [f"GET {CONFIGMAPS}/app"] and accepts(mock) == [META_GET]
    assert planned.decision.action is Action.IN_SYNC and planned.decision.reason == "content unchanged"
    assert planned.decision.config_hash == planned.decision.previous == planned.listed.bookkeeping.config_hash
    assert planned.full is None  # no workload read: nothing to write


def test_a_changed_source_reads_all_metadata_then_the_content_of_that_source_only_and_rolls_out(
    stage: ReadStage, mock: responses.RequestsMock
) -> None:
    stored = serve_a_changed_app(mock)
    (planned,) = plan(stage, stored)
    assert calls(mock) == [f"GET {CONFIGMAPS}/app", f"GET {CONFIGMAPS}/base", f"GET {CONFIGMAPS}/app"]
    assert accepts(mock) == [META_GET, META_GET, JSON]
    decision = planned.decision
    assert decision.action is Action.ROLLOUT and decision.changed == ("configmap/app",)
    assert decision.reason == "configmap/app changed"
    assert decision.previous == stored["metadata"]["annotations"]["kube-rehash.io/config-hash"]
    assert decision.config_hash != decision.previous
    # Decided from its records, without a GET of the workload: its patch will test the generation.
    assert planned.full is not None and planned.full.unread


def test_a_new_version_of_a_source_with_the_same_content_is_a_refresh(
    stage: ReadStage, mock: responses.RequestsMock
) -> None:
    stored = adopted(web("app"), [cm("app")])
    serve(mock, f"{CONFIGMAPS}/app", cm("app", rv="6"), meta=True)
    serve(mock, f"{CONFIGMAPS}/app", cm("app", rv="6"))
    (planned,) = plan(stage, stored)
    assert calls(mock) == [f"GET {CONFIGMAPS}/app", f"GET {CONFIGMAPS}/app"]
    assert planned.decision.action is Action.REFRESH and planned.decision.changed == ()


def test_a_spec_change_reads_the_workload_and_reuses_the_records_by_source_metadata(
    stage: ReadStage, mock: responses.RequestsMock
) -> None:
    app = cm("app")
    stored = adopted(web("app"), [app])
    edited = copy.deepcopy(stored)
    edited["metadata"]["generation"] += 1  # someone changed the spec: the records are not trusted
    serve(mock, f"{DEPLOYS}/web", edited)
    serve(mock, f"{CONFIGMAPS}/app", app, meta=True)
    (planned,) = plan(stage, edited)
    assert calls(mock) == [f"GET {DEPLOYS}/web", f"GET {CONFIGMAPS}/app"]
    assert accepts(mock) == [JSON, META_GET]
    assert planned.decision.action is Action.REFRESH  # same content: only the generation stamp moves
    assert planned.full is not None and not planned.full.unread


def test_settled_from_the_list_sends_nothing(stage: ReadStage, mock: responses.RequestsMock) -> None:
    (planned,) = plan(stage, web("app", **{"kube-rehash.io/ignore": "true"}))
    assert calls(mock) == []
    assert planned.decision.action is Action.SKIPPED


def test_a_workload_deleted_since_listed_gets_no_planned_value(
    stage: ReadStage, mock: responses.RequestsMock
) -> None:
    mock.add(responses.GET, SERVER + f"{DEPLOYS}/web", status=404, json=status(404, "NotFound"))
    assert plan(stage, web("app")) == []
    assert calls(mock) == [f"GET {DEPLOYS}/web"]


def test_a_source_that_fails_to_read_skips_the_workload_that_uses_it_and_names_the_source(
    stage: ReadStage, mock: responses.RequestsMock
) -> None:
    serve(mock, f"{DEPLOYS}/web", web("app"))
    mock.add(responses.GET, SERVER + f"{CONFIGMAPS}/app", status=403, json=status(403, "Forbidden"))
    (planned,) = plan(stage, web("app"))
    decision = planned.decision
    assert decision.action is Action.SKIPPED and "configmap/app cannot be read" in decision.reason
    assert decision.unreadable is not None and decision.unreadable.label == "configmap/app"
    assert "Forbidden" in decision.unreadable.error and decision.observed is None


def test_a_batch_the_budget_refuses_is_deferred_for_the_budget_and_sends_nothing(
    spent_stage: ReadStage, mock: responses.RequestsMock
) -> None:
    first, steady = web("app"), adopted(web("app"), [cm("app")])
    steady["metadata"].update(name="api", uid="uid-api")
    _planned, known = plan_rounds(
        spent_stage,
        Batch("shop", (as_listed(first), as_listed(steady))),
        triage_listed([as_listed(first), as_listed(steady)], RULES.fingerprint),
        RULES,
    )
    planned = plan(spent_stage, first, steady)
    assert calls(mock) == []
    assert known.cut and not known.views
    assert [(p.listed.name, p.decision.action, p.decision.deferral) for p in planned] == [
        ("web", Action.DEFERRED, Deferral.BUDGET),
        ("api", Action.DEFERRED, Deferral.BUDGET),
    ]


def test_plan_workload_decides_a_whole_object_through_the_batch_path_without_reading_it_again(
    stage: ReadStage, mock: responses.RequestsMock
) -> None:
    stored = adopted(web("app"), [cm("app")])
    serve(mock, f"{CONFIGMAPS}/app", cm("app", rv="6", k="new"), meta=True)
    serve(mock, f"{CONFIGMAPS}/app", cm("app", rv="6", k="new"))
    target = read_target(stored, DEPLOYMENT, DISCOVERY)
    planned, known = plan_workload(stage, target, RULES)
    assert calls(mock) == [f"GET {CONFIGMAPS}/app", f"GET {CONFIGMAPS}/app"]
    assert accepts(mock) == [META_GET, JSON]
    # Trusted (its records and generation stand): decided from its records, as a pass decides it.
    assert planned.full is not None and planned.full.unread and planned.decision.action is Action.ROLLOUT
    assert planned.decision.changed == ("configmap/app",) and "uid-web" not in stage.prefetched
    assert known.sources.namespace == "shop"


def test_redecide_reads_the_workload_again_then_its_sources_and_decides_from_scratch(
    stage: ReadStage, mock: responses.RequestsMock
) -> None:
    old = read_target(web("app"), DEPLOYMENT, DISCOVERY)
    now = adopted(web("app"), [cm("app")])  # another pass adopted it meanwhile
    serve(mock, f"{DEPLOYS}/web", now)
    serve(mock, f"{CONFIGMAPS}/app", cm("app"), meta=True)
    fresh, decision = redecide(stage, old, RULES)
    assert calls(mock) == [f"GET {DEPLOYS}/web", f"GET {CONFIGMAPS}/app"]
    assert fresh.resource_version == "8" and fresh.bookkeeping.config_hash is not None
    assert decision.action is Action.IN_SYNC


def test_redecide_of_a_workload_that_opted_out_skips_it_without_reading_its_sources(
    stage: ReadStage, mock: responses.RequestsMock
) -> None:
    old = read_target(web("app"), DEPLOYMENT, DISCOVERY)
    opted_out = web("app")
    opted_out["metadata"]["annotations"] = {}
    serve(mock, f"{DEPLOYS}/web", opted_out)
    _fresh, decision = redecide(stage, old, RULES)
    assert calls(mock) == [f"GET {DEPLOYS}/web"]
    assert (decision.action, decision.reason) == (Action.SKIPPED, "no longer opted in")


def test_the_decision_table_runs_once_per_workload_per_round_in_at_most_one_round_per_kind_of_read(
    stage: ReadStage, mock: responses.RequestsMock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A batch of a first sight (its whole object, then its content), a steady workload (its metadata)
    and a changed one (its metadata, then the changed content): every round asks each undecided workload
    once, the table runs at most once per workload and round, and the rounds stop when all are decided."""
    from reconcile.policy import answer

    changed = serve_a_changed_app(mock)
    steady = adopted(web("base"), [cm("base")])
    steady["metadata"].update(name="api", uid="uid-api")
    first = web("base")
    first["metadata"].update(name="new", uid="uid-new")
    serve(mock, f"{DEPLOYS}/new", first)
    rounds: list[int] = [0]
    decided: list[tuple[int, str]] = []
    read, table = stage.read, answer.decide_target

    def counted_read(*args: Any, **kwargs: Any) -> Any:
        rounds[0] += 1
        return read(*args, **kwargs)

    def counted_table(target: Any, *args: Any, **kwargs: Any) -> Any:
        decided.append((rounds[0], target.uid))
        return table(target, *args, **kwargs)

    monkeypatch.setattr(stage, "read", counted_read)
    monkeypatch.setattr(answer, "decide_target", counted_table)
    planned = plan(stage, changed, steady, first)
    assert [(p.listed.name, p.decision.action) for p in planned] == [
        ("web", Action.ROLLOUT),
        ("api", Action.IN_SYNC),
        ("new", Action.ADOPT),
    ]
    assert len(decided) == len(set(decided)), decided  # once per workload per round
    assert {uid for _, uid in decided} == {"uid-web", "uid-new"}  # the steady one is confirmed, not decided
    assert rounds[0] <= len(Input)
    assert rounds[0] == 3  # whole objects; sources (content and metadata); the changed content
    # base's content (first sight: never metadata first) also gives its identity to the others.
    assert calls(mock) == [
        f"GET {DEPLOYS}/new",
        f"GET {CONFIGMAPS}/base",
        f"GET {CONFIGMAPS}/app",
        f"GET {CONFIGMAPS}/app",
    ]
    assert accepts(mock) == [JSON, JSON, META_GET, JSON]
