"""Holding notifications and delivering them (pipeline/writes.py's hold and delivery, pipeline/notifier.py's
POST), without a server: a fake API client records the requests, a fake sender stands for the webhook. The
records of a notification are written only after its delivery; a failure or a budget cut writes nothing."""

from __future__ import annotations

import base64
import json
from dataclasses import replace
from pathlib import Path
from typing import Any, cast

import jsonschema
import pytest

from reconcile.errors import BudgetExhausted, Conflict, NotFound
from reconcile.kube.client import KubeClient
from reconcile.model.annotations import Annotations
from reconcile.model.choices import DryRun, OnChange
from reconcile.model.workload import Target, revise
from reconcile.output.webhook import WebhookError
from reconcile.pipeline.budget import Budget
from reconcile.pipeline.notifier import Notifier
from reconcile.pipeline.write import Writer
from reconcile.pipeline.writes import PassWrites
from reconcile.policy.decision import Action, Decision, Deferral
from reconcile.policy.outcome import Outcome
from reconcile.policy.planned import Planned
from reconcile.policy.table import decide
from reconcile.settings.table import Settings
from tests.test_plan import NOW, observed
from tests.test_plan_notify import CHANGED

ROOT = Path(__file__).resolve().parents[1]
SCHEMA = json.loads((ROOT / "docs/notify-webhook.schema.json").read_text())
URL = "https://hooks.example.com/services/T0KEN-5d1e"
SECRET_PATH = "/api/v1/namespaces/ops/secrets/hook"
WORKLOAD = revise(CHANGED, on_change=OnChange.NOTIFY)
NOTIFIED = decide(WORKLOAD, observed(), now=NOW)


def secret(data: dict[str, str]) -> dict[str, Any]:
    return {"kind": "Secret", "data": {k: base64.b64encode(v.encode()).decode() for k, v in data.items()}}


class FakeClient:
    def __init__(self, secret_or_error: dict[str, Any] | Exception) -> None:
        self.secret = secret_or_error
        self.calls: list[tuple[str, str]] = []
        self.patch_errors: list[Exception] = []

    def get(self, path: str, *, metadata_only: bool = False) -> dict[str, Any]:
        self.calls.append(("GET", path))
        if isinstance(self.secret, Exception):
            raise self.secret
        return self.secret

    def patch(self, path: str, body: Any, **_: Any) -> dict[str, Any]:
        self.calls.append(("PATCH", path))
        if self.patch_errors:
            raise self.patch_errors.pop(0)
        return {}

    def create(self, path: str, body: Any, **_: Any) -> dict[str, Any]:
        self.calls.append(("POST", path))
        return {}


class FakeSender:
    def __init__(self, url: str, error: str | None = None) -> None:
        self.url = url
        self.error = error
        self.bodies: list[bytes] = []

    def post(self, body: bytes) -> int:
        self.bodies.append(body)
        if self.error:
            raise WebhookError(self.error)
        return 200

    def close(self) -> None:
        return None


class Pass:
    """A writer holding notifications and a notifier delivering them, over the fakes."""

    def __init__(
        self,
        client: FakeClient,
        *,
        error: str | None = None,
        redecide: Any = None,
        dry_run: str = "none",
    ) -> None:
        self.client = client
        self.settings = Settings.of(webhook_secret="ops/hook", webhook_cluster="test", dry_run=dry_run)  # type: ignore[arg-type]
        self.budget = Budget(60)
        self.senders: list[FakeSender] = []
        sender = Writer(
            cast(KubeClient, client),
            dry_run=DryRun(dry_run),
            events=True,
            keys=Annotations("kube-rehash.io"),
            now=NOW,
        )
        self.writer = PassWrites(
            sender,
            cast(Any, None),
            cast(Any, None),
            max_rollouts=None,
            webhook=True,
            again=redecide or (lambda t: (t, NOTIFIED)),
        )

        def make_sender(url: str, timeout: float, budget: Budget) -> Any:
            self.senders.append(FakeSender(url, error))
            return self.senders[-1]

        self.notifier = Notifier(
            self.settings,
            cast(KubeClient, client),
            self.budget,
            now=NOW,
            make_sender=make_sender,
        )

    def deliver(self) -> Delivered:
        return Delivered(self.writer.deliver_held(self.notifier))


class Delivered:
    """The delivery as outcomes: the held workloads', the failed delivery's, the ones left unwritten."""

    def __init__(self, delivered: Any) -> None:
        self.rows = [Outcome.of(w.planned.listed, w.decision) for w in delivered.written]
        self.failures: list[Outcome] = delivered.failures
        self.unwritten: frozenset[str] = delivered.unwritten


def test_the_writer_holds_notifications_and_writes_nothing_for_them() -> None:
    client = FakeClient(secret({"url": URL}))
    run = Pass(client)
    written = run.writer.write_batch([Planned(WORKLOAD.listed, NOTIFIED, WORKLOAD)])
    assert [(w.decision.action, w.decision.reason) for w in written] == [(Action.NOTIFY, NOTIFIED.reason)]
    assert client.calls == []
    assert run.writer.take_held() == [Planned(WORKLOAD.listed, NOTIFIED, WORKLOAD)]
    assert run.writer.take_held() == []


def test_nothing_held_means_no_secret_read_and_no_post() -> None:
    client = FakeClient(secret({"url": URL}))
    run = Pass(client)
    delivered = run.deliver()
    assert (delivered.rows, delivered.failures, delivered.unwritten) == ([], [], frozenset())
    assert client.calls == [] and run.senders == []


def test_a_delivery_reads_the_secret_once_posts_once_then_writes_the_records_and_the_event() -> None:
    client = FakeClient(secret({"url": URL}))
    run = Pass(client)
    run.writer.write_batch([Planned(WORKLOAD.listed, NOTIFIED, WORKLOAD)])

    outcome = run.deliver()

    assert [s.url for s in run.senders] == [URL]
    [body] = run.senders[0].bodies
    document = json.loads(body)
    jsonschema.validate(document, SCHEMA)
    assert document["cluster"] == "test"
    assert document["changes"][0]["hash"] == NOTIFIED.config_hash
    path = WORKLOAD.kind.object_path(WORKLOAD.namespace, WORKLOAD.name)
    assert client.calls == [
        ("GET", SECRET_PATH),
        ("PATCH", path),
        ("GET", "/apis/events.k8s.io/v1"),  # which Event API: this fake serves none
        ("POST", "/api/v1/namespaces/shop/events"),
    ]
    assert [(r.action, r.reason) for r in outcome.rows] == [("notify", NOTIFIED.reason)]
    assert outcome.failures == [] and outcome.unwritten == frozenset()


def test_a_failed_delivery_writes_nothing_and_fails_the_pass() -> None:
    client = FakeClient(secret({"url": URL}))
    run = Pass(client, error="webhook delivery failed after 4 attempts: HTTP 500 Internal Server Error")
    run.writer.write_batch([Planned(WORKLOAD.listed, NOTIFIED, WORKLOAD)])

    outcome = run.deliver()

    assert client.calls == [("GET", SECRET_PATH)]
    [row] = outcome.rows
    assert row.action == "notify"
    assert row.reason == (
        "configmap/app changed; notified without a rollout; not recorded: webhook delivery failed after "
        "4 attempts: HTTP 500 Internal Server Error; the next pass notifies again"
    )
    [failure] = outcome.failures
    assert (failure.kind, failure.namespace, failure.name, failure.action) == (
        "Webhook",
        "ops",
        "*",
        "failed",
    )
    assert outcome.unwritten == {WORKLOAD.uid}


@pytest.mark.parametrize(
    ("found", "message"),
    [
        (secret({"other": URL}), "the webhook Secret ops/hook has no key 'url'"),
        (
            secret({"url": "planted-not-a-url"}),
            "the key 'url' of the webhook Secret ops/hook is not an http(s) URL",
        ),
        ({"kind": "Secret", "data": {"url": "%%%"}}, "the key 'url' of the webhook Secret ops/hook is not"),
        (
            NotFound(404, "NotFound", 'secrets "hook" not found', method="GET", path=SECRET_PATH),
            f"reading the webhook Secret ops/hook failed: GET {SECRET_PATH}: 404 NotFound",
        ),
    ],
)
def test_a_bad_secret_fails_the_pass_without_quoting_its_content(found: Any, message: str) -> None:
    client = FakeClient(found)
    run = Pass(client)
    run.writer.write_batch([Planned(WORKLOAD.listed, NOTIFIED, WORKLOAD)])

    outcome = run.deliver()

    [failure] = outcome.failures
    assert failure.reason.startswith(message)
    assert "planted" not in failure.reason and "T0KEN" not in failure.reason
    assert run.senders == [] and client.calls == [("GET", SECRET_PATH)]


def test_a_budget_cut_before_the_secret_leaves_the_notifications_deferred() -> None:
    client = FakeClient(BudgetExhausted("pass budget: no time left for another read (timeout 60s)"))
    run = Pass(client)
    run.writer.write_batch([Planned(WORKLOAD.listed, NOTIFIED, WORKLOAD)])

    outcome = run.deliver()

    [row] = outcome.rows
    assert (row.action, row.deferral) == ("deferred", Deferral.BUDGET)
    assert outcome.failures == [] and outcome.unwritten == {WORKLOAD.uid}


def test_a_stopped_pass_sends_nothing() -> None:
    client = FakeClient(secret({"url": URL}))
    run = Pass(client)
    run.writer.write_batch([Planned(WORKLOAD.listed, NOTIFIED, WORKLOAD)])
    run.budget.stop.set()

    [row] = run.deliver().rows

    assert (row.action, row.deferral) == ("deferred", Deferral.STOPPED)
    assert client.calls == []


def test_a_newer_change_found_after_a_conflict_is_not_recorded_as_delivered() -> None:
    newer = replace(NOTIFIED, config_hash="v1:newer")

    def redecide(target: Target) -> tuple[Target, Decision]:
        return target, newer

    client = FakeClient(secret({"url": URL}))
    client.patch_errors.append(Conflict(409, "Conflict", "changed"))
    run = Pass(client, redecide=redecide)
    run.writer.write_batch([Planned(WORKLOAD.listed, NOTIFIED, WORKLOAD)])

    [row] = run.deliver().rows

    assert row.action == Action.NOTIFY.value and row.hash == "v1:newer"
    assert row.reason.endswith("changed again after the webhook was sent: the next pass notifies it")
    assert [c[0] for c in client.calls] == ["GET", "PATCH"]  # the one refused patch, nothing after


def test_a_dry_run_holds_nothing() -> None:
    client = FakeClient(secret({"url": URL}))
    run = Pass(client, dry_run="client")
    run.writer.write_batch([Planned(WORKLOAD.listed, NOTIFIED, WORKLOAD)])
    assert run.writer.take_held() == []
    assert Notifier.for_pass(run.settings, cast(KubeClient, client), run.budget, now=NOW) is None
