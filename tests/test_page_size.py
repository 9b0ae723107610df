"""Pages that grow (kube/page_size.py): a metadata-only list read to its end asks for its next page by the
bytes of the page before, between the first page's size and the most a page may grow to; every other list,
and every list where the user gave `pageSize`, asks for the same size each time."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
import responses

from reconcile.kube import page_size
from reconcile.kube.auth import Credentials
from reconcile.kube.client import ClientOptions, KubeClient
from reconcile.kube.page_size import GROWN_PAGE_SIZE, PAGE_SIZE, PageLimits, first_page_size
from reconcile.kube.pages import read_metadata_page
from reconcile.settings.table import Settings
from tests.test_kube_client import META_LIST, SERVER, creds, page  # noqa: F401 (fixtures)

CONFIGMAPS = "/api/v1/configmaps"


def test_a_fixed_limit_never_changes() -> None:
    limits = PageLimits(500)
    assert not limits.grows
    assert limits.note(500, 10) == 1.0
    assert limits.limit == 500


@pytest.mark.parametrize(
    ("objects", "size", "kept", "limit"),
    [
        (500, 150 * 1024, None, 1000),  # thin metadata, ~300 bytes an object: the most a page grows to
        (500, 290_000, 150_000, 1000),  # kube-apiserver's, half of each (~580 bytes) one managedFields entry
        (500, 300_000, None, 500),  # ~600 bytes kept of each (the simulator's workloads): room for 873
        (500, 290_000, 290_000, 500),  # the same response with nothing dropped: what it keeps bounds it
        (500, 600 * 1024, 200 * 1024, 500),  # kept small, but room for 853 responses: whole pages only
        (500, 2 * 1024 * 1024, 100_000, 500),  # a pod template's managedFields, ~4 KiB each: never below
        (0, 0, 0, 500),  # an empty page says nothing of its objects' size
    ],
    ids=["thin", "real-server", "kept-bytes", "real-server-unslimmed", "response-bytes", "heavy", "empty"],
)
def test_a_growing_limit_fits_the_response_and_kept_bytes_between_the_first_size_and_the_most(
    objects: int, size: int, kept: int | None, limit: int
) -> None:
    limits = PageLimits(PAGE_SIZE, GROWN_PAGE_SIZE)
    assert limits.grows
    ratio = limits.note(objects, size, kept)
    assert limits.limit == limit
    assert ratio == limit / PAGE_SIZE  # what the next page is expected to weigh, against this one


def test_unset_page_size_is_client_go_s_default_and_a_given_one_is_kept() -> None:
    assert Settings().reading.page_size is None
    assert first_page_size(Settings().reading.page_size) == PAGE_SIZE == 500
    assert first_page_size(Settings.of(page_size=50).reading.page_size) == 50


def body(names: list[str], token: str | None = None) -> str:
    return json.dumps(page(names, token), separators=(",", ":"))


@pytest.fixture
def mock() -> Iterator[responses.RequestsMock]:
    with responses.RequestsMock(assert_all_requests_are_fired=True) as rsps:
        yield rsps


def growing_client(creds: Credentials) -> KubeClient:  # noqa: F811
    return KubeClient(creds, ClientOptions(page_size=2, grown_page_size=8))


def test_a_metadata_list_read_ahead_asks_for_its_next_page_by_the_bytes_of_the_page_before(
    creds: Credentials,  # noqa: F811
    mock: responses.RequestsMock,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    first, second = body(["a" * 200, "b" * 200], "c1"), body(["c", "d", "e", "f", "g", "h"], "c2")
    # Room for three times the first page's objects; the second's are smaller still: capped at 8.
    monkeypatch.setattr(page_size, "PAGE_BYTES", 3 * len(first))
    for text in (first, second, body(["i"])):
        mock.add(responses.GET, SERVER + CONFIGMAPS, body=text, content_type="application/json")
    with growing_client(creds) as client:
        items = client.list_items(CONFIGMAPS, metadata_only=True, read_ahead=True)
        assert [item["metadata"]["name"] for item in items] == ["a" * 200, "b" * 200, *"cdefghi"]
        assert client.stats.snapshot()["requests"] == {"list": {"200": 3}}
    assert [(call.request.method, call.request.url) for call in mock.calls] == [
        ("GET", f"{SERVER}{CONFIGMAPS}?limit=2"),
        ("GET", f"{SERVER}{CONFIGMAPS}?limit=6&continue=c1"),
        ("GET", f"{SERVER}{CONFIGMAPS}?limit=8&continue=c2"),
    ]
    assert all(call.request.headers["Accept"] == META_LIST for call in mock.calls)


def test_a_metadata_list_s_next_page_is_bounded_by_what_it_keeps_of_the_page_before(
    creds: Credentials,  # noqa: F811
    mock: responses.RequestsMock,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Items whose managedFields are most of their response: the response would let the next page grow
    to the most (8), what the pass keeps of them lets it grow to three times the first page's 2."""
    first = page(["a", "b"], "c1")
    for item in first["items"]:
        fields = {"f:data": {"f:" + "k" * 400: {}}}
        item["metadata"]["managedFields"] = [{"manager": "kubectl", "fieldsV1": fields}]
    text = json.dumps(first, separators=(",", ":"))
    kept = read_metadata_page(text)[1]
    assert kept < len(text) / 2
    monkeypatch.setattr(page_size, "PAGE_BYTES", 10 * len(text))
    monkeypatch.setattr(page_size, "KEPT_BYTES", 3 * kept)
    for reply in (text, body(["c"])):
        mock.add(responses.GET, SERVER + CONFIGMAPS, body=reply, content_type="application/json")
    with growing_client(creds) as client:
        assert len(list(client.list_items(CONFIGMAPS, metadata_only=True, read_ahead=True))) == 3
    assert [call.request.url for call in mock.calls] == [
        f"{SERVER}{CONFIGMAPS}?limit=2",
        f"{SERVER}{CONFIGMAPS}?limit=6&continue=c1",
    ]


@pytest.mark.parametrize(
    "kwargs",
    [
        {"metadata_only": True},  # not read ahead: its caller may stop early
        {"metadata_only": False, "read_ahead": True},  # whole objects: their pages are bounded by objects
        {"metadata_only": True, "read_ahead": True, "limit": 2},  # a limit the caller chose
    ],
    ids=["not-ahead", "whole", "chosen-limit"],
)
def test_every_other_list_asks_for_the_same_size_each_page(
    creds: Credentials,  # noqa: F811
    mock: responses.RequestsMock,
    monkeypatch: pytest.MonkeyPatch,
    kwargs: dict[str, Any],
) -> None:
    monkeypatch.setattr(page_size, "PAGE_BYTES", 1024 * 1024)
    for text in (body(["a", "b"], "c1"), body(["c"])):
        mock.add(responses.GET, SERVER + CONFIGMAPS, body=text, content_type="application/json")
    with growing_client(creds) as client:
        assert len(list(client.list_items(CONFIGMAPS, **kwargs))) == 3
    assert [call.request.url for call in mock.calls] == [
        f"{SERVER}{CONFIGMAPS}?limit=2",
        f"{SERVER}{CONFIGMAPS}?limit=2&continue=c1",
    ]


def test_a_client_without_a_grown_size_never_grows_its_pages(
    creds: Credentials,  # noqa: F811
    mock: responses.RequestsMock,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(page_size, "PAGE_BYTES", 1024 * 1024)
    for text in (body(["a", "b"], "c1"), body(["c"])):
        mock.add(responses.GET, SERVER + CONFIGMAPS, body=text, content_type="application/json")
    with KubeClient(creds, ClientOptions(page_size=2)) as client:
        assert len(list(client.list_items(CONFIGMAPS, metadata_only=True, read_ahead=True))) == 3
    assert mock.calls[1].request.url == f"{SERVER}{CONFIGMAPS}?limit=2&continue=c1"
