"""The webhook's HTTP contract (reconcile/output/webhook.py), at the transport with `responses`: the exact
method, URL, content type and body; retries with backoff after 5xx, 429 and connection failures; the
give-up after MAX_ATTEMPTS, on a 4xx and at the pass's deadline; never the URL in an error or a log."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest
import requests
import responses

from reconcile.output.notice import encode
from reconcile.output.webhook import MAX_ATTEMPTS, Sender, WebhookError, check_url

TOKEN = "T0KEN-9c1d7e"
URL = f"https://hooks.example.com/services/{TOKEN}"
BODY = encode({"version": 1, "text": "kube-rehash: config changed for 1 workload, not restarted:"})


class Clock:
    """A fake monotonic clock that sleeping moves forward."""

    def __init__(self) -> None:
        self.now = 100.0
        self.slept: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


@pytest.fixture
def mock() -> Iterator[responses.RequestsMock]:
    with responses.RequestsMock(assert_all_requests_are_fired=True) as rsps:
        yield rsps


@pytest.fixture
def clock() -> Clock:
    return Clock()


def sender(clock: Clock, *, deadline: float = 60.0, may_start: bool = True, timeout: float = 10.0) -> Sender:
    return Sender(
        URL,
        timeout,
        may_start=lambda: may_start,
        deadline=clock.now + deadline,
        user_agent="kube-rehash/9.9.9",
        clock=clock,
        sleep=clock.sleep,
    )


def test_one_post_with_the_exact_url_content_type_and_body(
    mock: responses.RequestsMock, clock: Clock
) -> None:
    mock.add(responses.POST, URL, status=200, body="ok")

    assert sender(clock).post(BODY) == 200

    assert len(mock.calls) == 1
    request = mock.calls[0].request
    assert (request.method, request.url) == ("POST", URL)
    assert request.headers["Content-Type"] == "application/json"
    assert request.headers["User-Agent"] == "kube-rehash/9.9.9"
    assert "Authorization" not in request.headers
    assert request.body == BODY
    assert clock.slept == []


def test_any_2xx_is_a_delivery(mock: responses.RequestsMock, clock: Clock) -> None:
    mock.add(responses.POST, URL, status=204)
    assert sender(clock).post(BODY) == 204


def test_a_500_is_retried_with_backoff_until_delivered(mock: responses.RequestsMock, clock: Clock) -> None:
    mock.add(responses.POST, URL, status=500)
    mock.add(responses.POST, URL, status=503)
    mock.add(responses.POST, URL, status=200)

    hook = sender(clock)
    assert hook.post(BODY) == 200

    assert [call.request.body for call in mock.calls] == [BODY] * 3
    assert clock.slept == [0.5, 1.0]
    assert hook.attempts == 3


def test_it_gives_up_after_max_attempts_naming_the_status_not_the_url(
    mock: responses.RequestsMock, clock: Clock, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    for _ in range(MAX_ATTEMPTS):
        mock.add(responses.POST, URL, status=500)

    with pytest.raises(WebhookError) as caught:
        sender(clock).post(BODY)

    assert (
        str(caught.value)
        == f"webhook delivery failed after {MAX_ATTEMPTS} attempts: HTTP 500 Internal Server Error"
    )
    assert len(mock.calls) == MAX_ATTEMPTS
    assert clock.slept == [0.5, 1.0, 2.0]
    assert TOKEN not in caplog.text and "hooks.example.com" not in caplog.text


@pytest.mark.parametrize("status", [400, 403, 404, 410])
def test_a_client_error_is_not_retried(mock: responses.RequestsMock, clock: Clock, status: int) -> None:
    mock.add(responses.POST, URL, status=status)
    with pytest.raises(WebhookError, match=f"^webhook delivery failed: HTTP {status}"):
        sender(clock).post(BODY)
    assert len(mock.calls) == 1 and clock.slept == []


def test_a_redirect_is_not_followed(mock: responses.RequestsMock, clock: Clock) -> None:
    mock.add(responses.POST, URL, status=301, headers={"Location": "https://elsewhere.example/x"})
    with pytest.raises(WebhookError, match="HTTP 301"):
        sender(clock).post(BODY)
    assert len(mock.calls) == 1


def test_a_429_waits_as_long_as_retry_after_says(mock: responses.RequestsMock, clock: Clock) -> None:
    mock.add(responses.POST, URL, status=429, headers={"Retry-After": "3"})
    mock.add(responses.POST, URL, status=200)
    assert sender(clock).post(BODY) == 200
    assert clock.slept == [3.0]


def test_a_connection_failure_is_retried_and_its_error_has_no_url(
    mock: responses.RequestsMock, clock: Clock
) -> None:
    refused = requests.ConnectionError(
        f"HTTPSConnectionPool(host='hooks.example.com', port=443): Max retries exceeded with url: "
        f"/services/{TOKEN} (Caused by NewConnectionError('<urllib3.connection.HTTPSConnection object>: "
        "Failed to establish a new connection: [Errno 111] Connection refused'))"
    )
    for _ in range(MAX_ATTEMPTS):
        mock.add(responses.POST, URL, body=refused)

    with pytest.raises(WebhookError) as caught:
        sender(clock).post(BODY)

    assert str(caught.value) == (
        f"webhook delivery failed after {MAX_ATTEMPTS} attempts: "
        "connection failed ([Errno 111] Connection refused)"
    )


def test_a_timeout_is_retried(mock: responses.RequestsMock, clock: Clock) -> None:
    mock.add(responses.POST, URL, body=requests.ReadTimeout(f"{URL}: Read timed out. (read timeout=10)"))
    mock.add(responses.POST, URL, status=200)
    assert sender(clock).post(BODY) == 200


def test_retries_stop_at_the_deadline(mock: responses.RequestsMock, clock: Clock) -> None:
    mock.add(responses.POST, URL, status=502)
    mock.add(responses.POST, URL, status=502)

    with pytest.raises(WebhookError, match="after 2 attempts: HTTP 502"):
        sender(clock, deadline=1.8).post(BODY)  # after a 0.5 s pause, 1 s more leaves < 0.5 s

    assert clock.slept == [0.5]


def test_the_attempt_timeout_is_cut_to_the_deadline(mock: responses.RequestsMock, clock: Clock) -> None:
    mock.add(responses.POST, URL, status=200)
    seen: list[object] = []
    hook = sender(clock, deadline=3.0, timeout=10.0)
    original = hook.session.post

    def post(*args: object, **kwargs: object) -> requests.Response:
        seen.append(kwargs["timeout"])
        return original(*args, **kwargs)  # type: ignore[arg-type]

    hook.session.post = post  # type: ignore[method-assign]
    hook.post(BODY)
    assert seen == [3.0]


def test_nothing_is_sent_when_the_pass_may_start_no_request(
    mock: responses.RequestsMock, clock: Clock
) -> None:
    with pytest.raises(WebhookError, match="not sent: the pass had no time left"):
        sender(clock, may_start=False).post(BODY)
    assert len(mock.calls) == 0


@pytest.mark.parametrize(
    ("url", "problem"),
    [
        (URL, None),
        ("http://127.0.0.1:8080/hook", None),
        ("ftp://hooks.example.com/x", "is not an http(s) URL"),
        ("hooks.example.com/x", "is not an http(s) URL"),
        ("https:///x", "is not an http(s) URL"),
        ("https://hooks.example.com/a b", "is not an http(s) URL"),
        ("http://[::1", "is not a URL"),
    ],
)
def test_check_url(url: str, problem: str | None) -> None:
    assert check_url(url) == problem
