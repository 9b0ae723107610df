"""A dead or silent API server is said at once: a refused connection before the server ever answered ends
the call after one short retry, naming the address; after an answer, failures are retried as before; every
retry is logged at the default verbosity (WARNING) with its cause and wait; a CA file without certificates
is named with the reason."""

from __future__ import annotations

import json
import logging
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import requests
import responses
from test_kube_client import TOKEN, FakeClock, write_kubeconfig

from reconcile.errors import CredentialsError, NoContact, UnreachableError
from reconcile.kube.auth import AuthOptions, Credentials, load_credentials
from reconcile.kube.client import ClientOptions, KubeClient
from reconcile.kube.exchange import FIRST_CONTACT_RETRY_DELAY

EVENTS = "/api/v1/namespaces/web/events"
DEPLOYMENTS = "/apis/apps/v1/deployments"  # a pass's usual first request


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


def credentials_for(tmp_path: Path, server: str, **cluster: Any) -> Credentials:
    config = write_kubeconfig(tmp_path / "config", TOKEN, server, **cluster)
    return load_credentials(AuthOptions(kubeconfig=str(config)), env={})


class _Version(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = json.dumps({"gitVersion": "v1.37.2"}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def answered_then_closed(tmp_path: Path, clock: FakeClock) -> Iterator[KubeClient]:
    """A client whose server answered once on 127.0.0.1 and then went away (its port now refuses)."""
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Version)
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    creds = credentials_for(tmp_path, f"http://127.0.0.1:{httpd.server_address[1]}")
    with KubeClient(creds, ClientOptions(max_retries=2), clock=clock.monotonic, sleep=clock.sleep) as kube:
        assert kube.get("/version") == {"gitVersion": "v1.37.2"}
        httpd.shutdown()
        httpd.server_close()
        kube.close()  # no kept-alive connection to the old server: the next request connects anew
        yield kube


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


def retry_lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [
        r.getMessage() for r in caplog.records if r.levelno == logging.WARNING and "retry" in r.getMessage()
    ]


def test_a_refused_connection_before_any_answer_fails_after_one_short_retry_naming_the_address(
    tmp_path: Path, clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:
    server = f"https://127.0.0.1:{closed_port()}"
    creds = credentials_for(tmp_path, server)
    with (
        KubeClient(creds, clock=clock.monotonic, sleep=clock.sleep) as kube,
        pytest.raises(NoContact) as caught,
    ):
        kube.get(DEPLOYMENTS)
    cause = caught.value.cause
    assert isinstance(cause, UnreachableError)
    assert str(cause) == f"cannot reach the API server at {server} after 2 attempts: connection refused"
    assert cause.exit_code == 4 and TOKEN not in str(cause)
    assert clock.sleeps == [FIRST_CONTACT_RETRY_DELAY]
    wait = f"{FIRST_CONTACT_RETRY_DELAY:.2f}s"
    assert retry_lines(caplog) == [
        f"API server {server}: connection refused on GET {DEPLOYMENTS}; retry 1 in {wait}"
    ]


def test_an_unresolvable_host_fails_fast_naming_it(
    tmp_path: Path, clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:
    server = "https://api.kube-rehash.invalid:6443"  # .invalid never resolves (RFC 2606)
    with (
        KubeClient(credentials_for(tmp_path, server), clock=clock.monotonic, sleep=clock.sleep) as kube,
        pytest.raises(NoContact) as caught,
    ):
        kube.get(DEPLOYMENTS)
    assert isinstance(caught.value.cause, UnreachableError)
    assert str(caught.value.cause).startswith(
        f"cannot reach the API server at {server} after 2 attempts: host not found"
    )
    assert len(clock.sleeps) == 1 and len(retry_lines(caplog)) == 1


def test_after_an_answer_a_refused_connection_is_retried_with_backoff_and_logged(
    answered_then_closed: KubeClient, clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:
    server = answered_then_closed.server
    with pytest.raises(UnreachableError) as caught:
        answered_then_closed.get("/api/v1/namespaces/web/configmaps/app")
    assert (
        str(caught.value) == f"cannot reach the API server at {server} after 3 attempts: connection refused"
    )
    lines = retry_lines(caplog)
    assert len(lines) == 2 == len(clock.sleeps)
    for number, (line, wait) in enumerate(zip(lines, clock.sleeps, strict=True), start=1):
        assert line == (
            f"API server {server}: connection refused on GET /api/v1/namespaces/web/configmaps/app; "
            f"retry {number} in {wait:.2f}s"
        )


def test_a_create_is_resent_when_the_connection_was_never_established(
    answered_then_closed: KubeClient,
) -> None:
    with pytest.raises(UnreachableError):
        answered_then_closed.create(EVENTS, {"kind": "Event"})
    assert answered_then_closed.stats.snapshot()["requests"] == {"get": {"200": 1}, "create": {"error": 3}}


@responses.activate
def test_a_server_that_never_answers_is_logged_at_each_retry_with_its_timeout(
    tmp_path: Path, clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:
    responses.add(
        responses.GET, "https://127.0.0.1:6443" + DEPLOYMENTS, body=requests.ReadTimeout("Read timed out")
    )
    options = ClientOptions(max_retries=3, request_timeout=2.0)
    creds = credentials_for(tmp_path, "https://127.0.0.1:6443")
    with (
        KubeClient(creds, options, clock=clock.monotonic, sleep=clock.sleep) as kube,
        pytest.raises(NoContact) as caught,
    ):
        kube.get(DEPLOYMENTS)
    assert str(caught.value.cause).endswith("after 4 attempts: no answer within 2s (read timeout)")
    lines = retry_lines(caplog)
    assert len(lines) == 3
    assert all(f"no answer within 2s (read timeout) on GET {DEPLOYMENTS}; retry" in line for line in lines)


@responses.activate
def test_a_retried_status_is_logged_at_the_default_verbosity(
    tmp_path: Path, clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:
    url = "https://127.0.0.1:6443/version"
    responses.add(responses.GET, url, status=503, json={"kind": "Status", "reason": "ServiceUnavailable"})
    responses.add(responses.GET, url, json={"gitVersion": "v1"})
    creds = credentials_for(tmp_path, "https://127.0.0.1:6443")
    with KubeClient(creds, clock=clock.monotonic, sleep=clock.sleep) as kube:
        assert kube.get("/version") == {"gitVersion": "v1"}
    assert retry_lines(caplog) == [f"GET /version: 503 ServiceUnavailable; retry 1 in {clock.sleeps[0]:.2f}s"]


def test_an_empty_ca_file_is_named_with_the_reason(tmp_path: Path) -> None:
    ca = tmp_path / "ca.crt"
    ca.write_text("")
    with pytest.raises(CredentialsError) as caught:
        credentials_for(tmp_path, "https://127.0.0.1:6443", **{"certificate-authority": str(ca)})
    assert str(caught.value).endswith(f"certificate-authority {ca}: no certificates found")
    assert caught.value.exit_code == 2


def test_inline_ca_data_that_is_not_a_certificate_names_the_kubeconfig_field(tmp_path: Path) -> None:
    with pytest.raises(CredentialsError) as caught:
        credentials_for(
            tmp_path, "https://127.0.0.1:6443", **{"certificate-authority-data": "bm90IGEgY2VydA=="}
        )
    assert "certificate-authority-data: " in str(caught.value)
    assert str(tmp_path) in str(caught.value)  # the kubeconfig is named, not the private temporary copy
