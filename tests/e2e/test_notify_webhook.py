"""The notify webhook end to end, on the simulator and on the real control plane, with a real local HTTP
receiver: one POST per pass listing the notified changes, none for a steady pass, the records written
only after a 2xx (a 500 leaves them unwritten, the pass exits 1 and the next pass delivers), never a
restart, a body valid against docs/notify-webhook.schema.json, and neither a Secret's content nor the
webhook's URL in the body, the Events, the report or the logs."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from tests.e2e.backends import RealCluster
from tests.e2e.conftest import Backend, configmap, secret
from tests.e2e.test_notify import NOTIFY, PLANTED, WEB, replicasets, seed, template_annotations

SCHEMA = json.loads((Path(__file__).resolve().parents[2] / "docs/notify-webhook.schema.json").read_text())
TOKEN = "hook-token-4b8e21d0"  # the credential a Slack-style URL embeds


@dataclass
class Delivery:
    path: str
    headers: dict[str, str]
    body: bytes

    @property
    def document(self) -> dict[str, Any]:
        return json.loads(self.body)  # type: ignore[no-any-return]


class Receiver:
    """An incoming-webhook endpoint on 127.0.0.1: records every POST, answers the queued statuses (then
    200)."""

    def __init__(self) -> None:
        self.deliveries: list[Delivery] = []
        self.statuses: list[int] = []
        self.lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                with receiver.lock:
                    receiver.deliveries.append(Delivery(self.path, dict(self.headers), body))
                    status = receiver.statuses.pop(0) if receiver.statuses else 200
                self.send_response(status)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"ok")

            def log_message(self, format: str, *args: Any) -> None:
                return

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/services/{TOKEN}"

    def fail_next(self, count: int, status: int = 500) -> None:
        with self.lock:
            self.statuses = [status] * count

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    hook = Receiver()
    try:
        yield hook
    finally:
        hook.close()


def configure(cluster: Backend, receiver: Receiver, *, url: str | None = None) -> str:
    """The Secret holding the URL (namespace `ops`) and a config naming it; the config's path."""
    cluster.add(secret("hook", {"url": url or receiver.url}, ns="ops"))
    ops = cluster.ns("ops") if isinstance(cluster, RealCluster) else "ops"
    config = cluster.config(f"notify:\n  webhook: {{secret: {ops}/hook, timeout: 5s, cluster: e2e}}\n")
    return str(config)


def back(cluster: Backend, text: str) -> str:
    return cluster.back(text) if isinstance(cluster, RealCluster) else text


def recorded_hash(cluster: Backend) -> str | None:
    annotations = cluster.get("deployments", "shop", "web")["metadata"].get("annotations") or {}
    return annotations.get("kube-rehash.io/config-hash")


def test_one_delivery_per_change_none_for_steady_passes_and_never_a_restart(
    cluster: Backend, receiver: Receiver
) -> None:
    seed(cluster, NOTIFY)
    config = configure(cluster, receiver)
    template = template_annotations(cluster)
    sets = replicasets(cluster) if cluster.name != "sim" else 0
    assert cluster.run("--config", config).actions() == {WEB: "in-sync"}
    assert receiver.deliveries == []  # steady: no Secret read needed, no POST

    before = recorded_hash(cluster)
    cluster.edit("configmaps", "shop", "app", {"data": {"a": "2"}})
    result = cluster.run("--config", config)

    assert result.code == 0, result.stderr
    row = result.row("Deployment", "web")
    assert (row["action"], row["reason"]) == ("notify", "configmap/app changed; notified without a rollout")
    assert len(receiver.deliveries) == 1
    delivery = receiver.deliveries[0]
    assert delivery.path == f"/services/{TOKEN}"
    assert delivery.headers["Content-Type"] == "application/json"
    document = json.loads(back(cluster, delivery.body.decode()))
    jsonschema.validate(document, SCHEMA)
    assert document["cluster"] == "e2e"
    assert [(c["kind"], c["namespace"], c["name"], c["sources"]) for c in document["changes"]] == [
        ("Deployment", "shop", "web", [{"kind": "ConfigMap", "name": "app"}])
    ]
    change = document["changes"][0]
    assert (change["previous"], change["hash"]) == (before, row["hash"])
    assert document["text"].splitlines()[1] == "- Deployment shop/web: configmap/app changed"
    assert recorded_hash(cluster) == row["hash"]  # recorded after the delivery
    assert len(cluster.events("shop", "ConfigChanged")) == 1

    for _ in range(2):  # steady afterwards: no POST
        assert cluster.run("--config", config).actions() == {WEB: "in-sync"}
    assert len(receiver.deliveries) == 1
    assert len(cluster.events("shop", "ConfigChanged")) == 1
    assert template_annotations(cluster) == template
    if cluster.name != "sim":  # the simulator runs no controllers and makes no ReplicaSets
        cluster.wait_rolled_out("deployments", "shop", "web")
        assert replicasets(cluster) == sets


@pytest.mark.slow
def test_after_a_500_the_pass_exits_1_records_nothing_and_the_next_pass_delivers(
    cluster: Backend, receiver: Receiver
) -> None:
    seed(cluster, NOTIFY)
    config = configure(cluster, receiver)
    before = recorded_hash(cluster)
    cluster.edit("configmaps", "shop", "app", {"data": {"a": "2"}})
    receiver.fail_next(10)

    failed = cluster.run("--config", config)

    assert failed.code == 1, failed.stderr
    row = failed.row("Deployment", "web")
    assert row["action"] == "notify"
    assert row["reason"] == (
        "configmap/app changed; notified without a rollout; not recorded: webhook delivery failed after "
        "4 attempts: HTTP 500 Internal Server Error; the next pass notifies again"
    )
    assert failed.failed() == [
        {
            "kind": "Webhook",
            "namespace": "ops",
            "name": "*",
            "action": "failed",
            "reason": "webhook delivery failed after 4 attempts: HTTP 500 Internal Server Error",
            "configs": [],
            "hash": None,
            "previous": None,
        }
    ]
    assert len(receiver.deliveries) == 4  # retried with backoff within the pass
    assert recorded_hash(cluster) == before  # not recorded: the change is still pending
    assert cluster.events("shop", "ConfigChanged") == []

    receiver.fail_next(1)  # one more 500, then the receiver is back: the retry delivers
    delivered = cluster.run("--config", config)

    assert delivered.code == 0, delivered.stderr
    assert delivered.actions() == {WEB: "notify"}
    assert len(receiver.deliveries) == 6
    last = json.loads(back(cluster, receiver.deliveries[-1].body.decode()))
    jsonschema.validate(last, SCHEMA)
    assert [c["name"] for c in last["changes"]] == ["web"]
    assert recorded_hash(cluster) == delivered.row("Deployment", "web")["hash"]
    assert len(cluster.events("shop", "ConfigChanged")) == 1
    assert cluster.run("--config", config).actions() == {WEB: "in-sync"}
    assert len(receiver.deliveries) == 6


def test_no_secret_content_and_no_url_in_the_body_the_events_the_report_or_the_logs(
    cluster: Backend, receiver: Receiver
) -> None:
    seed(cluster, NOTIFY)
    config = configure(cluster, receiver)
    cluster.edit("secrets", "shop", "creds", {"stringData": {"password": PLANTED}})

    result = cluster.run("--config", config, "-vvv")  # -vvv: urllib3's debug lines too

    assert result.code == 0, result.stderr
    assert result.row("Deployment", "web")["action"] == "notify"
    assert len(receiver.deliveries) == 1
    body = receiver.deliveries[0].body.decode()
    assert '"sources":[{"kind":"Secret","name":"creds"}]' in body
    events = cluster.events("shop", "ConfigChanged")
    assert len(events) == 1
    for text in (body, result.stdout, result.stderr, repr(events)):
        assert PLANTED not in text
        assert TOKEN not in text
    assert "webhook: 1 change(s) delivered" in result.stderr


@pytest.mark.slow
def test_a_failing_webhook_url_never_appears_in_the_error(cluster: Backend, receiver: Receiver) -> None:
    seed(cluster, NOTIFY)
    receiver.close()  # nothing listens there any more: connection refused
    config = configure(cluster, receiver)
    cluster.edit("configmaps", "shop", "app", {"data": {"a": "2"}})

    result = cluster.run("--config", config, "-vv")

    assert result.code == 1
    [failure] = result.failed()
    assert failure["reason"].startswith("webhook delivery failed after 4 attempts: connection failed")
    for text in (result.stdout, result.stderr):
        assert TOKEN not in text and f":{receiver.server.server_address[1]}/" not in text


def test_a_missing_webhook_secret_fails_the_pass_and_keeps_the_change_pending(
    cluster: Backend, receiver: Receiver
) -> None:
    seed(cluster, NOTIFY)
    cluster.add(configmap("unrelated", {"x": "1"}, ns="ops"))
    ops = cluster.ns("ops") if isinstance(cluster, RealCluster) else "ops"
    config = str(cluster.config(f"notify: {{webhook: {{secret: {ops}/absent}}}}\n"))
    before = recorded_hash(cluster)
    cluster.edit("configmaps", "shop", "app", {"data": {"a": "2"}})

    result = cluster.run("--config", config)

    assert result.code == 1
    [failure] = result.failed()
    assert failure["reason"].startswith("reading the webhook Secret ops/absent failed: ")
    assert "404" in failure["reason"]
    assert result.row("Deployment", "web")["action"] == "notify"
    assert recorded_hash(cluster) == before
    assert receiver.deliveries == []


def test_plan_and_dry_run_send_nothing(cluster: Backend, receiver: Receiver) -> None:
    seed(cluster, NOTIFY)
    config = configure(cluster, receiver)
    cluster.edit("configmaps", "shop", "app", {"data": {"a": "2"}})
    for command in (("plan", "-o", "json"), ("run", "-o", "json", "--dry-run")):
        result = cluster.cli(*command, "--config", config)
        assert result.code == 0, result.stderr
        assert result.row("Deployment", "web")["action"] == "notify"
    assert receiver.deliveries == []
