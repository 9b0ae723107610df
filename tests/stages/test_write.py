"""The writes of a pass (reconcile/pipeline/writes.py over the write stage, reconcile/pipeline/write.py) over
the transport fake: for real decisions on real full views, the exact JSON-patch bodies and Events they send
and the outcomes they come to; a failed precondition re-decides through the real planner (`redecide`) and
patches again; --max-rollouts counts over the pass."""

from __future__ import annotations

import json
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
import requests
import responses

from reconcile.kube.client import KubeClient
from reconcile.model.choices import DryRun, Fetch
from reconcile.pipeline.budget import Budget
from reconcile.pipeline.fetch import SourceReader
from reconcile.pipeline.read import ReadStage
from reconcile.pipeline.write import Writer
from reconcile.pipeline.writes import PassWrites
from reconcile.policy.decision import Action, Decision, Deferral
from reconcile.policy.outcome import Outcome
from reconcile.policy.planned import Planned
from tests.e2e.conftest import configmap, deployment, env_from
from tests.stages.http import (
    CONFIGMAPS,
    DEPLOYS,
    DISCOVERY,
    JSON,
    KEYS,
    META_GET,
    NOW,
    RULES,
    SERVER,
    adopted,
    calls,
    decided,
    make_client,
    request,
    stamped,
    status,
)

EVENTS = "/api/v1/namespaces/shop/events"
EVENT_API = "/apis/events.k8s.io/v1"
"""Asked before a pass's first Event; these tests' server answers 404 (no such API), so Events are core/v1
(tests/test_audit.py has the events.k8s.io/v1 shape)."""
JSON_PATCH = "application/json-patch+json"
MANAGED = "?fieldManager=kube-rehash"
ANN = "/metadata/annotations/kube-rehash.io~1"
"""Where our annotations live in a JSON patch (`/` in a key is `~1`)."""


@pytest.fixture
def redo(client: KubeClient) -> Iterator[ReadStage]:
    """The read stage the pass's re-decisions read through (one worker: ordered requests)."""
    with ThreadPoolExecutor(max_workers=1) as executor:
        reader = SourceReader(client, executor, mode=Fetch.AUTO, settings=DISCOVERY, hash_key=None)
        yield ReadStage(client, executor, reader, DISCOVERY)


class Writes:
    """A pass's writes with one write thread, so its requests go out in a fixed order; each batch's
    outcomes as the pass makes them."""

    def __init__(
        self, client: KubeClient, stage: ReadStage, *, dry_run: str = "none", max_rollouts: int | None = None
    ) -> None:
        sender = Writer(client, dry_run=DryRun(dry_run), events=True, keys=KEYS, now=NOW, concurrency=1)
        self.writes = PassWrites(sender, stage, RULES, max_rollouts=max_rollouts, webhook=False)

    def write_batch(self, planned: list[Planned]) -> list[Outcome]:
        return [Outcome.of(w.planned.listed, w.decision) for w in self.writes.write_batch(planned)]


def writer(client: KubeClient, redo: ReadStage, **options: Any) -> Writes:
    return Writes(client, redo, **options)


def cm(name: str, rv: str = "5", **data: str) -> dict[str, Any]:
    return stamped(configmap(name, data or {"k": "v"}), uid=f"cm-{name}", resource_version=rv)


def stored(name: str = "web") -> dict[str, Any]:
    """Deployment shop/<name> using ConfigMap app, adopted at app's resourceVersion 5."""
    obj = stamped(deployment(name, env_from("configmap", "app")), uid=f"uid-{name}", resource_version="7")
    return adopted(obj, [cm("app")])


def rollout(name: str = "web") -> Planned:
    """The real decision on `stored(name)` after app's content changed: a rollout."""
    planned = decided(stored(name), [cm("app", rv="6", k="new")])
    assert planned.decision.action is Action.ROLLOUT
    return planned


def body(sent: requests.PreparedRequest) -> Any:
    assert sent.body is not None
    return json.loads(sent.body)


def sources_annotation(planned: Planned, generation: int, facts: str) -> dict[str, Any]:
    """The `sources` bookkeeping a write of this decision records, decoded."""
    assert planned.decision.observed is not None and planned.full is not None
    (record,) = planned.decision.observed.records
    recorded = ["configmap", "app", "cm-app", record.resource_version, "*", record.token]
    return {"v": 2, "k": "", "s": [recorded], "g": generation, "i": planned.full.inputs, "f": facts, "o": []}


def test_a_rollout_sends_one_guarded_json_patch_then_a_config_changed_event(
    client: KubeClient, mock: responses.RequestsMock, redo: ReadStage
) -> None:
    planned = rollout()
    decision = planned.decision
    mock.add(responses.PATCH, SERVER + f"{DEPLOYS}/web", json=stored())
    mock.add(responses.GET, SERVER + EVENT_API, status=404, json=status(404, "NotFound", "not found"))
    mock.add(responses.POST, SERVER + EVENTS, json={})
    (row,) = writer(client, redo).write_batch([planned])
    assert calls(mock) == [f"PATCH {DEPLOYS}/web{MANAGED}", f"GET {EVENT_API}", f"POST {EVENTS}{MANAGED}"]
    patch = request(mock, 0)
    assert patch.headers["Content-Type"] == JSON_PATCH
    ops = body(patch)
    assert ops[:4] == [
        {"op": "test", "path": ANN + "config-hash", "value": decision.previous},
        {"op": "test", "path": "/metadata/generation", "value": 2},
        {
            "op": "add",
            "path": "/spec/template/metadata/annotations",
            "value": {"kube-rehash.io/config-hash": decision.config_hash},
        },
        {"op": "add", "path": ANN + "config-hash", "value": decision.config_hash},
    ]
    assert ops[4]["op"] == "add" and ops[4]["path"] == ANN + "sources"
    assert json.loads(ops[4]["value"]) == sources_annotation(planned, generation=3, facts="hmt")
    assert ops[5:] == [
        {"op": "add", "path": ANN + "last-rollout", "value": "2026-11-25T12:00:00Z"},
        {
            "op": "add",
            "path": "/metadata/annotations/kubernetes.io~1change-cause",
            "value": "kube-rehash: configmap/app changed",
        },
        {
            "op": "add",
            "path": ANN + "rollout",
            "value": '{"g":3,"t":"2026-11-25T12:00:00Z","c":["configmap/app"],"s":"progressing"}',
        },
    ]
    event = body(request(mock, 2))
    assert request(mock, 2).headers["Content-Type"] == "application/json"
    assert (event["reason"], event["type"], event["message"]) == (
        "ConfigChanged",
        "Normal",
        "kube-rehash rolled out: configmap/app changed",
    )
    assert event["involvedObject"] == {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "namespace": "shop",
        "name": "web",
        "uid": "uid-web",
    }
    assert event["related"] == {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "namespace": "shop",
        "name": "app",
        "uid": planned.decision.observed.records[0].uid,
    }
    assert (row.action, row.reason, row.hash, row.previous) == (
        "rollout",
        "configmap/app changed",
        decision.config_hash,
        decision.previous,
    )


def test_a_refresh_patches_only_the_metadata_bookkeeping_and_sends_no_event(
    client: KubeClient, mock: responses.RequestsMock, redo: ReadStage
) -> None:
    planned = decided(stored(), [cm("app", rv="6")])  # a new version, the same content
    assert planned.decision.action is Action.REFRESH
    previous = planned.decision.previous
    mock.add(responses.PATCH, SERVER + f"{DEPLOYS}/web", json=stored())
    (row,) = writer(client, redo).write_batch([planned])
    assert calls(mock) == [f"PATCH {DEPLOYS}/web{MANAGED}"]
    assert request(mock, 0).headers["Content-Type"] == JSON_PATCH
    ops = body(request(mock, 0))
    assert ops[:2] == [
        {"op": "test", "path": ANN + "config-hash", "value": previous},
        {"op": "add", "path": ANN + "config-hash", "value": previous},
    ]
    assert [op["path"] for op in ops[2:]] == [ANN + "sources"]
    assert json.loads(ops[2]["value"]) == sources_annotation(planned, generation=3, facts="t")
    assert row.action == "refresh"


def test_decisions_that_do_not_write_send_nothing(
    client: KubeClient, mock: responses.RequestsMock, redo: ReadStage
) -> None:
    steady = decided(stored(), [cm("app")])
    assert steady.decision.action is Action.IN_SYNC
    rows = writer(client, redo).write_batch(
        [steady, Planned(steady.listed, Decision(Action.SKIPPED, "ignored"))]
    )
    assert calls(mock) == []
    assert [r.action for r in rows] == ["in-sync", "skipped"]


@pytest.mark.parametrize(("code", "reason"), [(409, "Conflict"), (422, "Invalid")])
def test_a_failed_precondition_re_reads_through_redecide_and_patches_once_more(
    client: KubeClient, mock: responses.RequestsMock, redo: ReadStage, code: int, reason: str
) -> None:
    planned = rollout()
    fresh = {**stored(), "metadata": {**stored()["metadata"], "resourceVersion": "9"}}
    changed = cm("app", rv="6", k="new")
    mock.add(
        responses.PATCH, SERVER + f"{DEPLOYS}/web", status=code, json=status(code, reason, "test failed")
    )
    mock.add(responses.GET, SERVER + f"{DEPLOYS}/web", json=fresh)
    mock.add(responses.GET, SERVER + f"{CONFIGMAPS}/app", json=changed)
    mock.add(responses.GET, SERVER + f"{CONFIGMAPS}/app", json=changed)
    mock.add(responses.PATCH, SERVER + f"{DEPLOYS}/web", json=fresh)
    mock.add(responses.GET, SERVER + EVENT_API, status=404, json=status(404, "NotFound", "not found"))
    mock.add(responses.POST, SERVER + EVENTS, json={})
    (row,) = writer(client, redo).write_batch([planned])
    assert calls(mock) == [
        f"PATCH {DEPLOYS}/web{MANAGED}",
        f"GET {DEPLOYS}/web",
        f"GET {CONFIGMAPS}/app",
        f"GET {CONFIGMAPS}/app",
        f"PATCH {DEPLOYS}/web{MANAGED}",
        f"GET {EVENT_API}",
        f"POST {EVENTS}{MANAGED}",
    ]
    assert [request(mock, i).headers["Accept"] for i in (1, 2, 3)] == [JSON, META_GET, JSON]
    assert body(request(mock, 0)) == body(request(mock, 4))  # same facts re-read: the same guarded patch
    assert (row.action, row.reason) == ("rollout", "configmap/app changed")


def test_a_workload_that_keeps_changing_fails_after_three_re_decisions(
    client: KubeClient, mock: responses.RequestsMock, redo: ReadStage
) -> None:
    conflict = status(409, "Conflict", "the object has been modified")
    mock.add(responses.PATCH, SERVER + f"{DEPLOYS}/web", status=409, json=conflict)
    mock.add(responses.GET, SERVER + f"{DEPLOYS}/web", json=stored())
    mock.add(responses.GET, SERVER + f"{CONFIGMAPS}/app", json=cm("app", rv="6", k="new"))
    mock.add(responses.GET, SERVER + EVENT_API, status=404, json=status(404, "NotFound", "not found"))
    mock.add(responses.POST, SERVER + EVENTS, json={})
    (row,) = writer(client, redo).write_batch([rollout()])
    patch, reread = f"PATCH {DEPLOYS}/web{MANAGED}", [f"GET {DEPLOYS}/web", *[f"GET {CONFIGMAPS}/app"] * 2]
    assert calls(mock) == [
        patch,
        *reread,
        patch,
        *reread,
        patch,
        *reread,
        patch,
        f"GET {EVENT_API}",
        f"POST {EVENTS}{MANAGED}",
    ]
    assert row.action == "failed" and row.reason.startswith("the workload kept changing under us: ")
    assert body(request(mock, 14))["reason"] == "RolloutFailed"


def test_a_forbidden_patch_is_a_failed_row_with_a_rollout_failed_warning_event(
    client: KubeClient, mock: responses.RequestsMock, redo: ReadStage
) -> None:
    denied = 'deployments.apps "web" is forbidden: cannot patch resource "deployments"'
    mock.add(responses.PATCH, SERVER + f"{DEPLOYS}/web", status=403, json=status(403, "Forbidden", denied))
    mock.add(responses.GET, SERVER + EVENT_API, status=404, json=status(404, "NotFound", "not found"))
    mock.add(responses.POST, SERVER + EVENTS, json={})
    (row,) = writer(client, redo).write_batch([rollout()])
    assert calls(mock) == [f"PATCH {DEPLOYS}/web{MANAGED}", f"GET {EVENT_API}", f"POST {EVENTS}{MANAGED}"]
    assert row.action == "failed" and row.reason.startswith("patch failed: ") and "forbidden" in row.reason
    event = body(request(mock, 2))
    assert (event["reason"], event["type"]) == ("RolloutFailed", "Warning")


def test_max_rollouts_defers_the_rollouts_past_the_limit_and_counts_over_the_pass(
    client: KubeClient, mock: responses.RequestsMock, redo: ReadStage
) -> None:
    mock.add(responses.PATCH, SERVER + f"{DEPLOYS}/api", json=stored("api"))
    mock.add(responses.GET, SERVER + EVENT_API, status=404, json=status(404, "NotFound", "not found"))
    mock.add(responses.POST, SERVER + EVENTS, json={})
    write = writer(client, redo, max_rollouts=1)
    rows = write.write_batch([rollout("api"), rollout("web")])
    assert calls(mock) == [f"PATCH {DEPLOYS}/api{MANAGED}", f"GET {EVENT_API}", f"POST {EVENTS}{MANAGED}"]
    assert [(r.name, r.action, r.deferral) for r in rows] == [
        ("api", "rollout", None),
        ("web", "deferred", Deferral.MAX_ROLLOUTS),
    ]
    (later,) = write.write_batch([rollout("db")])  # the next batch: the limit counts over the pass
    assert (later.action, later.deferral) == ("deferred", Deferral.MAX_ROLLOUTS)
    assert len(mock.calls) == 3


def test_client_dry_run_sends_nothing_and_reports_what_it_would_do(
    client: KubeClient, mock: responses.RequestsMock, redo: ReadStage
) -> None:
    (row,) = writer(client, redo, dry_run="client").write_batch([rollout()])
    assert calls(mock) == []
    assert (row.action, row.reason) == ("rollout", "configmap/app changed")


def test_server_dry_run_sends_the_same_writes_with_dry_run_all(
    client: KubeClient, mock: responses.RequestsMock, redo: ReadStage
) -> None:
    planned = rollout()
    mock.add(responses.PATCH, SERVER + f"{DEPLOYS}/web", json=stored())
    mock.add(responses.GET, SERVER + EVENT_API, status=404, json=status(404, "NotFound", "not found"))
    mock.add(responses.POST, SERVER + EVENTS, json={})
    (row,) = writer(client, redo, dry_run="server").write_batch([planned])
    assert calls(mock) == [
        f"PATCH {DEPLOYS}/web{MANAGED}&dryRun=All",
        f"GET {EVENT_API}",
        f"POST {EVENTS}{MANAGED}&dryRun=All",
    ]
    assert request(mock, 0).headers["Content-Type"] == JSON_PATCH
    assert row.action == "rollout"


def test_a_write_the_budget_refuses_is_deferred_for_the_budget_and_sends_nothing(
    tmp_path: Path, mock: responses.RequestsMock, redo: ReadStage
) -> None:
    with make_client(tmp_path, gate=Budget(0.0).admit) as client:
        (row,) = writer(client, redo).write_batch([rollout()])
    assert calls(mock) == []
    assert (row.action, row.deferral) == ("deferred", Deferral.BUDGET)
    assert row.reason == (
        "pass budget: not written before the time budget ran out (configmap/app changed); "
        "a later pass takes it"
    )


def test_a_refresh_re_decided_into_a_rollout_after_a_conflict_still_obeys_max_rollouts(
    client: KubeClient, redo: ReadStage
) -> None:
    refresh = decided(stored("web"), [cm("app", rv="6")])
    assert refresh.decision.action is Action.REFRESH
    changed = cm("app", rv="7", k="new")  # changed between our read and our write
    conflict = status(409, "Conflict", "the object has been modified")
    with responses.RequestsMock(assert_all_requests_are_fired=False) as mock:
        mock.add(responses.PATCH, SERVER + f"{DEPLOYS}/api", json=stored("api"))
        mock.add(responses.GET, SERVER + EVENT_API, status=404, json=status(404, "NotFound", "not found"))
        mock.add(responses.POST, SERVER + EVENTS, json={})
        mock.add(responses.PATCH, SERVER + f"{DEPLOYS}/web", status=409, json=conflict)
        mock.add(responses.GET, SERVER + f"{DEPLOYS}/web", json=stored("web"))
        mock.add(responses.GET, SERVER + f"{CONFIGMAPS}/app", json=changed)
        mock.add(responses.PATCH, SERVER + f"{DEPLOYS}/web", json=stored("web"))
        rows = writer(client, redo, max_rollouts=1).write_batch([rollout("api"), refresh])
        rolled = [
            c.request.path_url
            for c in mock.calls
            if c.request.method == "PATCH" and "/spec/template" in str(c.request.body)
        ]
    assert rolled == [f"{DEPLOYS}/api{MANAGED}"]
    assert [(r.name, r.action, r.deferral) for r in rows] == [
        ("api", "rollout", None),
        ("web", "deferred", Deferral.MAX_ROLLOUTS),
    ]
