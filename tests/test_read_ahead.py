"""Lists that read ahead (KubeClient.list_items(read_ahead=True)): the next page's request travels while the
caller works on the page before it, with exactly the requests a list read page by page sends, and what
that request meets is met where the caller reaches the page."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
import requests
import responses

from reconcile.errors import Forbidden
from reconcile.kube import ahead
from reconcile.kube.auth import Credentials
from reconcile.kube.client import KubeClient
from tests.test_kube_client import (  # noqa: F401 (fixtures)
    META_LIST,
    SERVER,
    counted_page,
    creds,
    page,
    status,
)

CONFIGMAPS = "/api/v1/configmaps"


@pytest.fixture
def client(creds: Credentials) -> Iterator[KubeClient]:  # noqa: F811
    with KubeClient(creds) as kube:  # a real clock: the page sent ahead is awaited on a thread
        yield kube


@pytest.fixture
def mock() -> Iterator[responses.RequestsMock]:
    with responses.RequestsMock(assert_all_requests_are_fired=True) as rsps:
        yield rsps


def wait_for_calls(mock: responses.RequestsMock, count: int) -> None:
    deadline = time.monotonic() + 5
    while len(mock.calls) < count and time.monotonic() < deadline:
        time.sleep(0.01)


def names(items: Iterator[dict[str, object]]) -> list[str]:
    return [str(item["metadata"]["name"]) for item in items]  # type: ignore[index]


def test_the_next_page_is_requested_while_the_caller_is_still_on_the_page_before(
    client: KubeClient, mock: responses.RequestsMock
) -> None:
    for body in (page(["a", "b"], "c1"), page(["c", "d"], "c2"), page(["e"])):
        mock.add(responses.GET, SERVER + CONFIGMAPS, json=body)
    items = client.list_items(CONFIGMAPS, metadata_only=True, limit=2, read_ahead=True)
    assert names(iter([next(items)])) == ["a"]
    wait_for_calls(mock, 2)
    assert len(mock.calls) == 2  # page 2 sent while the caller holds page 1; page 3 not yet
    assert names(items) == ["b", "c", "d", "e"]
    assert [call.request.url for call in mock.calls] == [
        f"{SERVER}{CONFIGMAPS}?limit=2",
        f"{SERVER}{CONFIGMAPS}?limit=2&continue=c1",
        f"{SERVER}{CONFIGMAPS}?limit=2&continue=c2",
    ]
    assert all(call.request.headers["Accept"] == META_LIST for call in mock.calls)
    assert client.stats.snapshot()["requests"] == {"list": {"200": 3}}


def test_a_list_that_does_not_read_ahead_sends_the_next_request_only_when_its_page_is_reached(
    client: KubeClient, mock: responses.RequestsMock
) -> None:
    mock.add(responses.GET, SERVER + CONFIGMAPS, json=page(["a", "b"], "c1"))
    mock.add(responses.GET, SERVER + CONFIGMAPS, json=page(["c"]))
    items = client.list_items(CONFIGMAPS, metadata_only=True, limit=2)
    assert names(iter([next(items), next(items)])) == ["a", "b"]
    assert len(mock.calls) == 1
    assert names(items) == ["c"]


def test_a_list_of_whole_objects_never_reads_ahead(client: KubeClient, mock: responses.RequestsMock) -> None:
    """Its pages are held as text until reached: one more in flight per list would grow the pass's memory."""
    mock.add(responses.GET, SERVER + CONFIGMAPS, json=page(["a", "b"], "c1"))
    mock.add(responses.GET, SERVER + CONFIGMAPS, json=page(["c"]))
    items = client.list_items(CONFIGMAPS, limit=2, read_ahead=True)
    assert names(iter([next(items), next(items)])) == ["a", "b"]
    assert len(mock.calls) == 1
    assert names(items) == ["c"]


def test_an_error_of_a_page_sent_ahead_is_raised_where_the_caller_reaches_that_page(
    client: KubeClient, mock: responses.RequestsMock
) -> None:
    mock.add(responses.GET, SERVER + CONFIGMAPS, json=page(["a", "b"], "c1"))
    mock.add(responses.GET, SERVER + CONFIGMAPS, json=status(403, "Forbidden", "no list"), status=403)
    items = client.list_items(CONFIGMAPS, metadata_only=True, limit=2, read_ahead=True)
    assert names(iter([next(items), next(items)])) == ["a", "b"]  # page 1 whole, whatever page 2 met
    with pytest.raises(Forbidden):
        next(items)
    assert list(items) == [] and len(mock.calls) == 2


def test_an_expired_token_met_ahead_restarts_the_list_as_without_read_ahead(
    client: KubeClient, mock: responses.RequestsMock
) -> None:
    mock.add(responses.GET, SERVER + CONFIGMAPS, json=page(["a", "b"], "t1"))
    mock.add(responses.GET, SERVER + CONFIGMAPS, json=status(410, "Expired", "expired"), status=410)
    mock.add(responses.GET, SERVER + CONFIGMAPS, json=page(["a", "b"], "t2"))
    mock.add(responses.GET, SERVER + CONFIGMAPS, json=page(["c"]))
    items = client.list_items(CONFIGMAPS, metadata_only=True, limit=2, read_ahead=True)
    assert names(items) == ["a", "b", "c"]
    queries = [str(call.request.url).partition("?")[2] for call in mock.calls]
    assert queries == ["limit=2", "limit=2&continue=t1", "limit=2", "limit=2&continue=t2"]


def test_pages_larger_than_the_bound_are_requested_when_reached(
    creds: Credentials,  # noqa: F811
    mock: responses.RequestsMock,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """What the pages sent ahead hold is bounded: a list whose pages are each over the bound reads page by
    page (as a list of objects that carry managedFields may), with the same requests."""
    monkeypatch.setattr(ahead, "AHEAD_BYTES", 100)
    big = KubeClient(creds)
    for body in (page(["a", "b"], "c1"), page(["c", "d"], "c2"), page(["e"])):
        mock.add(responses.GET, SERVER + CONFIGMAPS, json=body)
    with big:
        items = big.list_items(CONFIGMAPS, metadata_only=True, limit=2, read_ahead=True)
        assert names(iter([next(items), next(items)])) == ["a", "b"]
        assert len(mock.calls) == 1  # page 1 (over 100 bytes) says its next one would exceed the bound
        assert names(items) == ["c", "d", "e"]
    assert len(mock.calls) == 3


def test_the_bytes_a_page_sent_ahead_holds_count_until_it_is_reached_or_its_request_fails() -> None:
    reader = ahead.ReadAhead(limit=1000)
    response = requests.Response()
    response._content = b"x" * 300
    assert reader.send(lambda: response, 1200, lambda r: r) is None  # expected over the bound: declined
    sent = reader.send(lambda: response, 600, lambda r: len(r.content))
    assert sent is not None
    reach = sent.result(timeout=5)
    assert reader.held == 300  # counted at its real size once it arrived
    assert reader.send(lambda: response, 800, lambda r: r) is None  # 300 + 800 > 1000
    assert reach() == 300 and reader.held == 0

    def refused() -> requests.Response:
        raise Forbidden(403, "Forbidden", "no list")

    failing = reader.send(refused, 700, lambda r: r)
    assert failing is not None
    with pytest.raises(Forbidden):
        failing.result(timeout=5)
    assert reader.held == 0
    reader.close()


def test_a_list_read_for_its_size_sends_no_page_ahead_until_the_caller_goes_on(
    client: KubeClient, mock: responses.RequestsMock
) -> None:
    mock.add(responses.GET, SERVER + CONFIGMAPS, json=counted_page(["a", "b"], "c1", 1))
    mock.add(responses.GET, SERVER + CONFIGMAPS, json=page(["c"]))
    items = client.list_items(CONFIGMAPS, metadata_only=True, limit=2, read_ahead=True)
    assert items.size() == 3 and items.size() == 3  # read once
    time.sleep(0.1)
    assert len(mock.calls) == 1  # the caller may still drop the list: nothing sent for it
    items.go_on()
    wait_for_calls(mock, 2)
    assert len(mock.calls) == 2  # page 2 sent ahead before the caller reaches it
    assert names(items) == ["a", "b", "c"]
    assert [call.request.url for call in mock.calls] == [
        f"{SERVER}{CONFIGMAPS}?limit=2",
        f"{SERVER}{CONFIGMAPS}?limit=2&continue=c1",
    ]


def test_a_list_dropped_after_its_size_costs_its_first_page_only(
    client: KubeClient, mock: responses.RequestsMock
) -> None:
    mock.add(responses.GET, SERVER + CONFIGMAPS, json=page(["a", "b"], "c1"))
    items = client.list_items(CONFIGMAPS, metadata_only=True, limit=2, read_ahead=True)
    assert items.size() is None  # a continue token and no remainingItemCount: the server did not say
    items.close()
    assert list(items) == [] and len(mock.calls) == 1


def test_a_page_sent_ahead_of_a_list_given_up_stops_counting_against_the_bound(
    client: KubeClient, mock: responses.RequestsMock
) -> None:
    for body in (page(["a", "b"], "c1"), page(["c", "d"], "c2")):
        mock.add(responses.GET, SERVER + CONFIGMAPS, json=body)
    items = client.list_items(CONFIGMAPS, metadata_only=True, limit=2, read_ahead=True)
    assert names(iter([next(items)])) == ["a"]
    wait_for_calls(mock, 2)
    items.close()
    deadline = time.monotonic() + 5
    while client._read_ahead.held and time.monotonic() < deadline:
        time.sleep(0.01)
    assert client._read_ahead.held == 0  # else every later list would read ahead less
    assert len(mock.calls) == 2


def test_a_page_sent_ahead_is_reached_or_discarded_once() -> None:
    reader = ahead.ReadAhead(limit=1000)
    response = requests.Response()
    response._content = b"x" * 300
    sent = reader.send(lambda: response, 300, lambda r: len(r.content))
    assert sent is not None
    arrived = sent.result(timeout=5)
    arrived.discard()
    arrived.discard()
    assert reader.held == 0
    with pytest.raises(RuntimeError):
        arrived()
    reader.close()


def test_a_started_list_requests_its_first_page_before_the_caller_reaches_it_once_the_server_answered(
    client: KubeClient, mock: responses.RequestsMock
) -> None:
    """Lists walked in step start together: each first page travels while the caller works on another."""
    secrets = "/api/v1/secrets"
    mock.add(responses.GET, SERVER + CONFIGMAPS, json=page(["a"]))
    mock.add(responses.GET, SERVER + secrets, json=page(["s1", "s2"], "c1"))
    mock.add(responses.GET, SERVER + secrets, json=page(["s3"]))
    assert names(client.list_items(CONFIGMAPS, metadata_only=True, read_ahead=True)) == ["a"]
    items = client.list_items(secrets, metadata_only=True, limit=2, read_ahead=True)
    items.start()
    items.start()  # once
    wait_for_calls(mock, 2)
    assert [call.request.url for call in mock.calls] == [
        f"{SERVER}{CONFIGMAPS}?limit=500",
        f"{SERVER}{secrets}?limit=2",  # sent before the caller took an item of it
    ]
    assert names(items) == ["s1", "s2", "s3"]
    assert mock.calls[2].request.url == f"{SERVER}{secrets}?limit=2&continue=c1"
    assert client.stats.snapshot()["requests"] == {"list": {"200": 3}}


def test_a_list_started_before_the_server_first_answered_sends_nothing_ahead_the_first_contact_goes_alone(
    client: KubeClient, mock: responses.RequestsMock
) -> None:
    mock.add(responses.GET, SERVER + CONFIGMAPS, json=page(["a"]))
    items = client.list_items(CONFIGMAPS, metadata_only=True, read_ahead=True)
    items.start()
    time.sleep(0.1)
    assert len(mock.calls) == 0  # requested by the caller when it reaches the page
    assert names(items) == ["a"] and len(mock.calls) == 1


def test_an_error_of_a_first_page_started_ahead_is_raised_where_the_caller_reaches_it(
    client: KubeClient, mock: responses.RequestsMock
) -> None:
    secrets = "/api/v1/secrets"
    mock.add(responses.GET, SERVER + CONFIGMAPS, json=page(["a"]))
    mock.add(responses.GET, SERVER + secrets, json=status(403, "Forbidden", "no list"), status=403)
    assert names(client.list_items(CONFIGMAPS, metadata_only=True, read_ahead=True)) == ["a"]
    items = client.list_items(secrets, metadata_only=True, read_ahead=True)
    items.start()
    wait_for_calls(mock, 2)
    with pytest.raises(Forbidden):
        next(items)
