"""The HTTP contract of KubeClient: exact requests, paging, retries, errors, and real TCP/TLS failures."""

from __future__ import annotations

import json
import ssl
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import requests
import responses
import yaml
from data.certs import Pair, issue, make_ca, write_pair
from responses import matchers

from reconcile import __version__
from reconcile.errors import (
    AdmissionDenied,
    ApiError,
    BudgetExhausted,
    ConfigError,
    Conflict,
    Forbidden,
    Gone,
    Invalid,
    NoContact,
    NotFound,
    ServerError,
    TooManyRequests,
    Unauthorized,
    UnreachableError,
    api_error_for,
)
from reconcile.kube.auth import AuthOptions, Credentials, load_credentials
from reconcile.kube.client import ClientOptions, KubeClient, PatchType

SERVER = "https://127.0.0.1:6443"
TOKEN = "tok-abc"
DEPLOYS = "/apis/apps/v1/namespaces/web/deployments"
META_LIST = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json"
META_GET = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json"


class FakeClock:
    """Monotonic clock whose sleeps only move time forward and are recorded."""

    def __init__(self) -> None:
        self.now = 1000.0
        self.sleeps: list[float] = []

    def monotonic(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


def write_kubeconfig(path: Path, token: str, server: str = SERVER, **cluster: Any) -> Path:
    document = {
        "current-context": "ctx",
        "clusters": [{"name": "c", "cluster": {"server": server, **cluster}}],
        "users": [{"name": "u", "user": {"token": token}}],
        "contexts": [{"name": "ctx", "context": {"cluster": "c", "user": "u"}}],
    }
    path.write_text(yaml.safe_dump(document))
    return path


@pytest.fixture
def creds(tmp_path: Path) -> Credentials:
    config = write_kubeconfig(tmp_path / "config", TOKEN)
    return load_credentials(AuthOptions(kubeconfig=str(config)), env={})


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def client(creds: Credentials, clock: FakeClock) -> Iterator[KubeClient]:
    with KubeClient(creds, ClientOptions(), clock=clock.monotonic, sleep=clock.sleep) as kube:
        yield kube


@pytest.fixture
def mock() -> Iterator[responses.RequestsMock]:
    with responses.RequestsMock(assert_all_requests_are_fired=True) as rsps:
        yield rsps


def status(code: int, reason: str, message: str) -> dict[str, Any]:
    return {
        "kind": "Status",
        "apiVersion": "v1",
        "status": "Failure",
        "code": code,
        "reason": reason,
        "message": message,
    }


def page(names: list[str], token: str | None = None) -> dict[str, Any]:
    metadata = {"resourceVersion": "7", **({"continue": token} if token else {})}
    items = [{"metadata": {"name": n, "namespace": "web", "uid": f"uid-{n}"}} for n in names]
    return {"kind": "DeploymentList", "apiVersion": "apps/v1", "metadata": metadata, "items": items}


def counted_page(names: list[str], token: str, remaining: int) -> dict[str, Any]:
    """A first page that tells how many objects follow (`remainingItemCount`): a list with no selector."""
    first = page(names, token)
    first["metadata"]["remainingItemCount"] = remaining
    return first


def sent(mock: responses.RequestsMock, index: int) -> requests.PreparedRequest:
    request = mock.calls[index].request
    assert isinstance(request, requests.PreparedRequest)
    return request


def test_get_sends_exact_request(client: KubeClient, mock: responses.RequestsMock) -> None:
    mock.add(responses.GET, SERVER + DEPLOYS + "/api", json={"metadata": {"name": "api"}})
    assert client.get(DEPLOYS + "/api") == {"metadata": {"name": "api"}}
    request = sent(mock, 0)
    assert (request.method, request.url) == ("GET", SERVER + DEPLOYS + "/api")
    assert request.headers["Authorization"] == f"Bearer {TOKEN}"
    assert request.headers["Accept"] == "application/json"
    assert request.headers["User-Agent"] == f"kube-rehash/{__version__}"
    assert request.body is None
    assert "Content-Type" not in request.headers


def test_metadata_only_get_asks_for_partial_object_metadata(
    client: KubeClient, mock: responses.RequestsMock
) -> None:
    mock.add(
        responses.GET, SERVER + "/api/v1/namespaces/web/secrets/s", json={"kind": "PartialObjectMetadata"}
    )
    client.get("/api/v1/namespaces/web/secrets/s", metadata_only=True)
    assert sent(mock, 0).headers["Accept"] == META_GET


def test_list_follows_continue_over_three_pages_with_selectors(
    client: KubeClient, mock: responses.RequestsMock
) -> None:
    for body in (page(["a", "b"], "c1"), page(["c", "d"], "c2"), page(["e"])):
        mock.add(responses.GET, SERVER + DEPLOYS, json=body)
    items = list(
        client.list_items(DEPLOYS, label_selector="app=web", field_selector="metadata.name!=x", limit=2)
    )
    assert [item["metadata"]["name"] for item in items] == ["a", "b", "c", "d", "e"]
    query = "?labelSelector=app%3Dweb&fieldSelector=metadata.name%21%3Dx&limit=2"
    assert [call.request.url for call in mock.calls] == [
        SERVER + DEPLOYS + query,
        SERVER + DEPLOYS + query + "&continue=c1",
        SERVER + DEPLOYS + query + "&continue=c2",
    ]
    assert all(call.request.headers["Accept"] == "application/json" for call in mock.calls)
    assert all(call.request.headers["Authorization"] == f"Bearer {TOKEN}" for call in mock.calls)
    assert client.stats.snapshot()["requests"] == {"list": {"200": 3}}


def test_metadata_only_list_uses_page_size_and_partial_metadata_list(
    client: KubeClient, mock: responses.RequestsMock
) -> None:
    mock.add(responses.GET, SERVER + "/api/v1/configmaps", json=page(["a"]))
    assert len(list(client.list_pages("/api/v1/configmaps", metadata_only=True))) == 1
    assert sent(mock, 0).url == SERVER + "/api/v1/configmaps?limit=500"
    assert sent(mock, 0).headers["Accept"] == META_LIST


@pytest.mark.parametrize(
    ("metadata_only", "accept"), [(True, META_LIST), (False, "application/json")], ids=["metadata", "full"]
)
def test_an_expired_continue_token_reads_the_list_again_from_its_first_page_paged_as_before(
    client: KubeClient, mock: responses.RequestsMock, metadata_only: bool, accept: str
) -> None:
    """No answer is larger than a page, whatever the collection holds: after a 410 the list starts again
    from its first page with the same selectors, `limit` and Accept header (a fresh snapshot)."""
    mock.add(responses.GET, SERVER + DEPLOYS, json=page(["a", "b"], "t1"))
    mock.add(responses.GET, SERVER + DEPLOYS, json=status(410, "Expired", "continue expired"), status=410)
    mock.add(responses.GET, SERVER + DEPLOYS, json=page(["a", "b"], "t2"))
    mock.add(responses.GET, SERVER + DEPLOYS, json=page(["c", "d"]))
    pager = client.list_pages(
        DEPLOYS,
        label_selector="app=web",
        field_selector="metadata.name!=x",
        metadata_only=metadata_only,
        limit=2,
    )
    seen = [(len(p["items"]), pager.restarted) for p in pager]
    assert seen == [(2, False), (2, True), (2, True)]
    selectors = "labelSelector=app%3Dweb&fieldSelector=metadata.name%21%3Dx"
    assert [(call.request.method, call.request.url) for call in mock.calls] == [
        ("GET", f"{SERVER}{DEPLOYS}?{selectors}&limit=2"),
        ("GET", f"{SERVER}{DEPLOYS}?{selectors}&limit=2&continue=t1"),
        ("GET", f"{SERVER}{DEPLOYS}?{selectors}&limit=2"),  # the first page again, no resourceVersion
        ("GET", f"{SERVER}{DEPLOYS}?{selectors}&limit=2&continue=t2"),
    ]
    assert [call.request.headers["Accept"] for call in mock.calls] == [accept] * 4
    snapshot = client.stats.snapshot()
    assert snapshot["requests"] == {"list": {"200": 3, "410": 1}}


def test_list_items_yields_each_item_once_across_the_restart(
    client: KubeClient, mock: responses.RequestsMock
) -> None:
    mock.add(responses.GET, SERVER + DEPLOYS, json=page(["a", "b"], "t1"))
    mock.add(responses.GET, SERVER + DEPLOYS, json=page(["c", "d"], "t2"))
    mock.add(responses.GET, SERVER + DEPLOYS, json=status(410, "Expired", "expired"), status=410)
    mock.add(responses.GET, SERVER + DEPLOYS, json=page(["a", "b"], "t3"))
    mock.add(responses.GET, SERVER + DEPLOYS, json=page(["c", "d"], "t4"))
    mock.add(responses.GET, SERVER + DEPLOYS, json=page(["e"]))
    names = [item["metadata"]["name"] for item in client.list_items(DEPLOYS, limit=2)]
    assert names == ["a", "b", "c", "d", "e"]


def test_the_restart_resumes_after_the_last_item_in_the_servers_key_order(
    client: KubeClient, mock: responses.RequestsMock
) -> None:
    """etcd orders a cluster-wide list by `namespace/name`: `a-b/*` before `a/*`. Items at or before the
    last yielded key are skipped, even re-created ones (a new uid), and nothing after it is lost."""

    def items(*keys: str, token: str | None = None) -> dict[str, Any]:
        listed = page([], token)
        for key in keys:
            namespace, name = key.split("/")
            listed["items"].append({"metadata": {"namespace": namespace, "name": name, "uid": key + "-2"}})
        return listed

    configmaps = "/api/v1/configmaps"
    mock.add(responses.GET, SERVER + configmaps, json=items("a-b/x", "a-b/y", token="t1"))
    mock.add(responses.GET, SERVER + configmaps, json=status(410, "Expired", "expired"), status=410)
    mock.add(responses.GET, SERVER + configmaps, json=items("a-b/x", "a-b/y", "a-b/z", token="t2"))
    mock.add(responses.GET, SERVER + configmaps, json=items("a/w", "b/v"))
    keys = [f"{i['metadata']['namespace']}/{i['metadata']['name']}" for i in client.list_items(configmaps)]
    assert keys == ["a-b/x", "a-b/y", "a-b/z", "a/w", "b/v"]


def test_tokens_that_keep_expiring_before_a_restart_gets_further_fail_the_list(
    client: KubeClient, mock: responses.RequestsMock
) -> None:
    """Every `continue` request expires (etcd compacting faster than the pass pages): the list reads its
    first page again once, gets no further, and fails as Gone (a failed scope the next pass reads again);
    no answer of the list is ever larger than a page."""
    expired = status(410, "Expired", "continue expired")
    first_page = [matchers.query_param_matcher({"limit": "2"})]
    next_page = [matchers.query_param_matcher({"limit": "2", "continue": "t"})]
    names = [f"w{i}" for i in range(7)]
    mock.add(responses.GET, SERVER + DEPLOYS, json=page(names[:2], "t"), match=first_page)
    mock.add(responses.GET, SERVER + DEPLOYS, json=expired, status=410, match=next_page)
    with pytest.raises(Gone):
        list(client.list_items(DEPLOYS, limit=2))
    queries = [str(call.request.url).partition("?")[2] for call in mock.calls]
    assert queries == ["limit=2", "limit=2&continue=t"] * 2


def test_a_list_restarts_again_as_long_as_each_start_gets_further(
    client: KubeClient, mock: responses.RequestsMock
) -> None:
    """A long walk meets an expired token more than once: each restart reads past the point the one
    before reached, so the list goes on to its end."""
    gone = status(410, "Expired", "continue expired")
    for body in (
        page(["a"], "t1"),
        gone,  # reached 1
        page(["a"], "t2"),
        page(["b"], "t3"),
        gone,  # reached 2
        page(["a"], "t4"),
        page(["b"], "t5"),
        page(["c"]),
    ):
        mock.add(responses.GET, SERVER + DEPLOYS, json=body, status=410 if body is gone else 200)
    assert [i["metadata"]["name"] for i in client.list_items(DEPLOYS, limit=1)] == ["a", "b", "c"]


@pytest.mark.parametrize("reason", ["Expired", "Gone"])
def test_any_410_to_a_continue_request_restarts_the_list(
    client: KubeClient, mock: responses.RequestsMock, reason: str
) -> None:
    mock.add(responses.GET, SERVER + DEPLOYS, json=page(["a"], "t1"))
    mock.add(responses.GET, SERVER + DEPLOYS, json=status(410, reason, "too old"), status=410)
    mock.add(responses.GET, SERVER + DEPLOYS, json=page(["a", "b"]))
    assert [i["metadata"]["name"] for i in client.list_items(DEPLOYS)] == ["a", "b"]


def test_a_failing_restarted_list_raises_its_own_error(
    client: KubeClient, mock: responses.RequestsMock
) -> None:
    mock.add(responses.GET, SERVER + DEPLOYS, json=page(["a"], "t1"))
    mock.add(responses.GET, SERVER + DEPLOYS, json=status(410, "Expired", "expired"), status=410)
    mock.add(responses.GET, SERVER + DEPLOYS, json=status(403, "Forbidden", "no list"), status=403)
    pager = client.list_pages(DEPLOYS)
    assert len(next(pager)["items"]) == 1
    with pytest.raises(Forbidden):
        next(pager)
    assert list(pager) == []  # the pager is finished, it sends nothing more
    assert len(mock.calls) == 3


def test_gone_on_the_first_page_raises_without_a_fallback(
    client: KubeClient, mock: responses.RequestsMock
) -> None:
    """As in client-go: without a token nothing expired that a list started again could replace."""
    mock.add(responses.GET, SERVER + DEPLOYS, json=status(410, "Gone", "too old"), status=410)
    with pytest.raises(Gone):
        list(client.list_pages(DEPLOYS))
    assert len(mock.calls) == 1


@pytest.mark.parametrize(
    ("patch_type", "body"),
    [
        (PatchType.JSON, [{"op": "test", "path": "/metadata/resourceVersion", "value": "5"}]),
        (PatchType.MERGE, {"metadata": {"annotations": {"kube-rehash.io/config-hash": "abc"}}}),
        (PatchType.STRATEGIC, {"spec": {"template": {"metadata": {"annotations": {"a": "b"}}}}}),
    ],
)
def test_patch_sends_body_with_its_content_type(
    client: KubeClient, mock: responses.RequestsMock, patch_type: PatchType, body: Any
) -> None:
    mock.add(responses.PATCH, SERVER + DEPLOYS + "/api", json={"kind": "Deployment"})
    assert client.patch(DEPLOYS + "/api", body, patch_type=patch_type) == {"kind": "Deployment"}
    request = sent(mock, 0)
    assert (request.method, request.url) == ("PATCH", SERVER + DEPLOYS + "/api?fieldManager=kube-rehash")
    assert request.headers["Content-Type"] == patch_type.value
    assert request.headers["Accept"] == "application/json"
    assert request.headers["Authorization"] == f"Bearer {TOKEN}"
    assert request.body is not None and json.loads(request.body) == body
    assert client.stats.snapshot()["requests"] == {"patch": {"200": 1}}


def test_server_dry_run_patch_sends_dry_run_all(client: KubeClient, mock: responses.RequestsMock) -> None:
    mock.add(responses.PATCH, SERVER + DEPLOYS + "/api", json={})
    client.patch(
        DEPLOYS + "/api", {"metadata": {}}, patch_type=PatchType.MERGE, dry_run=True, field_manager="fm"
    )
    assert sent(mock, 0).url == SERVER + DEPLOYS + "/api?fieldManager=fm&dryRun=All"


def test_create_posts_json(client: KubeClient, mock: responses.RequestsMock) -> None:
    job = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j"}}
    mock.add(responses.POST, SERVER + "/apis/batch/v1/namespaces/web/jobs", json=job, status=201)
    assert client.create("/apis/batch/v1/namespaces/web/jobs", job, dry_run=True) == job
    request = sent(mock, 0)
    assert request.url == SERVER + "/apis/batch/v1/namespaces/web/jobs?fieldManager=kube-rehash&dryRun=All"
    assert request.headers["Content-Type"] == "application/json"
    assert request.body is not None and json.loads(request.body) == job
    assert client.stats.snapshot()["requests"] == {"create": {"201": 1}}


def test_429_is_retried_after_retry_after(
    client: KubeClient, mock: responses.RequestsMock, clock: FakeClock
) -> None:
    throttled = status(429, "TooManyRequests", "slow down")
    mock.add(responses.GET, SERVER + "/version", json=throttled, status=429, headers={"Retry-After": "3"})
    mock.add(responses.GET, SERVER + "/version", json={"gitVersion": "v1"})
    assert client.get("/version") == {"gitVersion": "v1"}
    assert clock.sleeps == [3.0]
    snapshot = client.stats.snapshot()
    assert snapshot["retries"] == {"429": 1} and client.stats.retries_total == 1
    assert snapshot["requests"] == {"get": {"200": 1, "429": 1}}


CORRUPT = "StorageError: corrupt object, Code: 7, Key: /registry/secrets/vault/db, ResourceVersion: 0"


def test_a_list_that_fails_on_a_corrupt_stored_object_is_not_asked_again(
    client: KubeClient, mock: responses.RequestsMock, clock: FakeClock
) -> None:
    path = "/api/v1/secrets"
    failure = status(
        500, "StorageReadError", f"failed to read one or more secrets from the storage: {CORRUPT}"
    )
    mock.add(responses.GET, SERVER + path, json=failure, status=500)
    with pytest.raises(ServerError, match="500 StorageReadError"):
        list(client.list_items(path, metadata_only=True))
    assert len(mock.calls) == 1 and clock.sleeps == []


def test_a_read_of_a_corrupt_object_by_name_is_not_asked_again(
    client: KubeClient, mock: responses.RequestsMock, clock: FakeClock
) -> None:
    path = "/api/v1/namespaces/vault/secrets/db"
    mock.add(
        responses.GET,
        SERVER + path,
        json=status(500, "InternalError", f"Internal error occurred: {CORRUPT}"),
        status=500,
    )
    with pytest.raises(ServerError, match="corrupt object"):
        client.get(path)
    assert len(mock.calls) == 1 and clock.sleeps == []


def test_a_watch_cache_that_is_loading_is_waited_for_once_then_its_429_is_the_answer(
    client: KubeClient, mock: responses.RequestsMock, clock: FakeClock
) -> None:
    path = "/api/v1/secrets"
    loading = status(429, "TooManyRequests", "storage is (re)initializing: failed to list <unspecified>")
    mock.add(responses.GET, SERVER + path, json=loading, status=429, headers={"Retry-After": "3"})
    with pytest.raises(ApiError, match="429 TooManyRequests: storage is"):
        list(client.list_items(path, metadata_only=True))
    assert len(mock.calls) == 2 and clock.sleeps == [3.0]


def test_503_then_success_backs_off_with_jitter(
    client: KubeClient, mock: responses.RequestsMock, clock: FakeClock
) -> None:
    mock.add(responses.GET, SERVER + "/version", body="upstream unavailable", status=503)
    mock.add(responses.GET, SERVER + "/version", json={"gitVersion": "v1"})
    assert client.get("/version")["gitVersion"] == "v1"
    assert len(clock.sleeps) == 1 and 0.0 <= clock.sleeps[0] <= 0.25


def test_connection_error_then_success(
    client: KubeClient, mock: responses.RequestsMock, clock: FakeClock
) -> None:
    mock.add(responses.GET, SERVER + "/version", body=requests.ConnectionError("connection reset"))
    mock.add(responses.GET, SERVER + "/version", json={"gitVersion": "v1"})
    assert client.get("/version")["gitVersion"] == "v1"
    assert client.stats.snapshot()["retries"] == {"connection": 1}
    assert client.stats.snapshot()["requests"] == {"get": {"200": 1, "error": 1}}


def test_deadline_bounds_retries(creds: Credentials, mock: responses.RequestsMock, clock: FakeClock) -> None:
    options = ClientOptions(deadline=5.0, backoff_base=1.0, backoff_max=2.0, max_retries=100)
    mock.add(responses.GET, SERVER + "/version", json=status(503, "ServiceUnavailable", "busy"), status=503)
    with (
        KubeClient(creds, options, clock=clock.monotonic, sleep=clock.sleep) as kube,
        pytest.raises(ServerError, match="GET /version: 503 ServiceUnavailable: busy"),
    ):
        kube.get("/version")
    assert sum(clock.sleeps) < 5.0
    assert len(mock.calls) == len(clock.sleeps) + 1


def test_max_retries_bounds_retries(
    creds: Credentials, mock: responses.RequestsMock, clock: FakeClock
) -> None:
    mock.add(responses.GET, SERVER + "/version", status=502)
    with (
        KubeClient(creds, ClientOptions(max_retries=2), clock=clock.monotonic, sleep=clock.sleep) as kube,
        pytest.raises(ServerError),
    ):
        kube.get("/version")
    assert len(mock.calls) == 3


def test_no_retry_sleeps_past_stop_at(
    creds: Credentials, mock: responses.RequestsMock, clock: FakeClock
) -> None:
    headers = {"Retry-After": "5"}
    mock.add(
        responses.GET,
        SERVER + "/version",
        json=status(429, "TooManyRequests", "x"),
        status=429,
        headers=headers,
    )
    with (
        KubeClient(creds, stop_at=clock.now + 2.0, clock=clock.monotonic, sleep=clock.sleep) as kube,
        pytest.raises(TooManyRequests),
    ):
        kube.get("/version")
    assert clock.sleeps == [] and len(mock.calls) == 1


def test_a_request_the_budget_refuses_is_never_sent(creds: Credentials, mock: responses.RequestsMock) -> None:
    def refuse(verb: str) -> float:
        raise BudgetExhausted(f"pass budget: no time left for another {verb}")

    with KubeClient(creds, gate=refuse) as kube, pytest.raises(BudgetExhausted, match="another get"):
        kube.get("/api/v1/namespaces/shop/configmaps/app")
    assert len(mock.calls) == 0


def test_a_retry_the_budget_refuses_raises_the_error_being_retried(
    creds: Credentials, mock: responses.RequestsMock, clock: FakeClock
) -> None:
    mock.add(responses.GET, SERVER + "/version", json=status(503, "ServiceUnavailable", "busy"), status=503)
    admitted: list[str] = []

    def once(verb: str) -> float:
        if admitted:
            raise BudgetExhausted("pass budget: spent")
        admitted.append(verb)
        return clock.now + 100.0

    with (
        KubeClient(creds, gate=once, clock=clock.monotonic, sleep=clock.sleep) as kube,
        pytest.raises(ServerError, match="503"),
    ):
        kube.get("/version")
    assert admitted == ["get"] and len(mock.calls) == 1


@pytest.mark.parametrize(
    "error",
    [
        Forbidden(403, "Forbidden", ""),
        NotFound(404, "NotFound", ""),
        Conflict(409, "Conflict", ""),
        Invalid(422, "Invalid", ""),
    ],
    ids=lambda e: str(e.code),
)
def test_client_errors_are_not_retried(
    client: KubeClient, mock: responses.RequestsMock, clock: FakeClock, error: ApiError
) -> None:
    code, reason = error.code, error.reason
    mock.add(
        responses.PATCH, SERVER + DEPLOYS + "/api", json=status(code, reason, "denied by rule"), status=code
    )
    with pytest.raises(type(error)) as caught:
        client.patch(DEPLOYS + "/api", {"data": {"password": "hunter2"}}, patch_type=PatchType.MERGE)
    assert len(mock.calls) == 1 and clock.sleeps == []
    message = str(caught.value)
    assert message == f"PATCH {DEPLOYS}/api: {code} {reason}: denied by rule"
    assert "hunter2" not in message and TOKEN not in message


def test_non_status_error_body_is_truncated(client: KubeClient, mock: responses.RequestsMock) -> None:
    mock.add(responses.GET, SERVER + "/version", body="<html>" + "x" * 5000 + "</html>", status=400)
    with pytest.raises(Exception, match="400 Bad Request") as caught:
        client.get("/version")
    assert len(str(caught.value)) < 300


def test_401_reloads_credentials_and_retries_once(
    tmp_path: Path, mock: responses.RequestsMock, clock: FakeClock
) -> None:
    config = write_kubeconfig(tmp_path / "config", "old-token")
    creds = load_credentials(AuthOptions(kubeconfig=str(config)), env={})
    write_kubeconfig(config, "new-token")
    mock.add(responses.GET, SERVER + "/version", json=status(401, "Unauthorized", "Unauthorized"), status=401)
    mock.add(responses.GET, SERVER + "/version", json={"gitVersion": "v1"})
    with KubeClient(creds, clock=clock.monotonic, sleep=clock.sleep) as kube:
        assert kube.get("/version") == {"gitVersion": "v1"}
        assert kube.stats.snapshot()["retries"] == {"unauthorized": 1}
    assert [call.request.headers["Authorization"] for call in mock.calls] == [
        "Bearer old-token",
        "Bearer new-token",
    ]


def answered(client: KubeClient, mock: responses.RequestsMock) -> None:
    """The client's server has answered once with the credentials accepted: the command is under way."""
    mock.add(responses.GET, SERVER + "/version", json={"gitVersion": "v1"})
    client.get("/version")


def test_a_first_request_answered_401_twice_ends_the_command_naming_the_server_and_the_credentials(
    client: KubeClient, mock: responses.RequestsMock, creds: Credentials
) -> None:
    mock.add(
        responses.GET,
        SERVER + "/api/v1/namespaces/web/configmaps",
        json=status(401, "Unauthorized", "Unauthorized"),
        status=401,
    )
    with pytest.raises(NoContact) as caught:
        client.get("/api/v1/namespaces/web/configmaps")
    cause = caught.value.cause
    assert len(mock.calls) == 2  # the credentials are reloaded once
    assert isinstance(cause, Unauthorized) and cause.exit_code == 4
    assert str(cause) == f"401 Unauthorized: credentials rejected by {SERVER} ({creds.source})"


def test_after_an_accepted_answer_a_second_401_is_that_requests_unauthorized(
    client: KubeClient, mock: responses.RequestsMock
) -> None:
    answered(client, mock)
    mock.add(responses.GET, SERVER + "/api/v1/namespaces/web/configmaps/app", status=401, json={})
    with pytest.raises(Unauthorized) as caught:
        client.get("/api/v1/namespaces/web/configmaps/app")
    assert len(mock.calls) == 3 and caught.value.path == "/api/v1/namespaces/web/configmaps/app"


def test_a_first_request_answered_403_proves_contact_and_a_later_refusal_is_retried_as_usual(
    client: KubeClient, mock: responses.RequestsMock
) -> None:
    mock.add(
        responses.GET, SERVER + "/apis/apps/v1/deployments", status=403, json=status(403, "Forbidden", "no")
    )
    with pytest.raises(Forbidden):
        client.get("/apis/apps/v1/deployments")
    mock.add(
        responses.GET,
        SERVER + "/api/v1/namespaces/web/configmaps/app",
        body=requests.ConnectionError("connection refused"),
    )
    with pytest.raises(UnreachableError):  # not NoContact: the server has answered with the credentials
        client.get("/api/v1/namespaces/web/configmaps/app")


def test_create_is_not_resent_after_a_read_timeout(client: KubeClient, mock: responses.RequestsMock) -> None:
    answered(client, mock)
    mock.add(
        responses.POST,
        SERVER + "/apis/batch/v1/namespaces/web/jobs",
        body=requests.ReadTimeout("read timed out"),
    )
    with pytest.raises(UnreachableError):
        client.create("/apis/batch/v1/namespaces/web/jobs", {"kind": "Job"})
    assert len(mock.calls) == 2


def test_qps_limits_the_request_rate(
    creds: Credentials, mock: responses.RequestsMock, clock: FakeClock
) -> None:
    mock.add(responses.GET, SERVER + "/version", json={})
    with KubeClient(creds, ClientOptions(qps=2.0), clock=clock.monotonic, sleep=clock.sleep) as kube:
        for _ in range(4):
            kube.get("/version")
    assert clock.sleeps == [0.5, 0.5]


def test_stats_snapshot_is_json_friendly(client: KubeClient, mock: responses.RequestsMock) -> None:
    mock.add(responses.GET, SERVER + "/version", body='{"gitVersion": "v1"}')
    client.get("/version")
    snapshot = client.stats.snapshot()
    assert json.loads(json.dumps(snapshot)) == {
        "requests": {"get": {"200": 1}},
        "requests_total": 1,
        "retries": {},
        "retries_total": 0,
        "bytes_received": len('{"gitVersion": "v1"}'),
    }


@pytest.mark.parametrize(
    "options",
    [
        {"request_timeout": 0},
        {"deadline": -1},
        {"max_retries": -1},
        {"page_size": 0},
        {"qps": -1},
        {"backoff_max": 0.1},
    ],
)
def test_invalid_options_are_config_errors(options: dict[str, Any]) -> None:
    with pytest.raises(ConfigError):
        ClientOptions(**options)


class _Handler(BaseHTTPRequestHandler):
    seen: list[tuple[str | None, bool]] = []
    cuts = 0  # how many of the next list answers stop mid-body, as from a server killed while it sends

    def do_GET(self) -> None:
        assert isinstance(self.connection, ssl.SSLSocket)
        _Handler.seen.append((self.headers.get("Authorization"), self.connection.getpeercert() is not None))
        if self.path.startswith("/api/v1/namespaces/web/configmaps"):
            self._answer_list()
            return
        body = json.dumps({"gitVersion": "v1.31.0"}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _answer_list(self) -> None:
        body = json.dumps(page(["a", "b"])).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        if _Handler.cuts:
            _Handler.cuts -= 1
            self.wfile.write(b"%x\r\n%s" % (len(body), body[:10]))  # a chunk announced, not all sent
            self.close_connection = True
            return
        self.wfile.write(b"%x\r\n%s\r\n0\r\n\r\n" % (len(body), body))

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def tls_server(tmp_path: Path) -> Iterator[tuple[str, Path, Pair]]:
    """An HTTPS server on 127.0.0.1 (certificate from a private CA that also checks client certificates).

    Yields (URL, directory holding ca.crt, the CA pair).
    """
    ca = make_ca("server-ca")
    write_pair(tmp_path, "ca", ca)
    cert, key = write_pair(tmp_path, "server", issue(ca, "apiserver", server_ip="127.0.0.1"))
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    context.load_verify_locations(tmp_path / "ca.crt")
    context.verify_mode = ssl.CERT_OPTIONAL
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    httpd.socket = context.wrap_socket(httpd.socket, server_side=True)
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    _Handler.seen = []
    try:
        yield f"https://127.0.0.1:{httpd.server_address[1]}", tmp_path, ca
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_tls_with_unknown_ca_is_unreachable(tls_server: tuple[str, Path, Pair], clock: FakeClock) -> None:
    url, directory, _ = tls_server
    other_ca, _ = write_pair(directory, "other-ca", make_ca("other"))
    config = write_kubeconfig(directory / "config", TOKEN, url, **{"certificate-authority": str(other_ca)})
    creds = load_credentials(AuthOptions(kubeconfig=str(config)), env={})
    with (
        KubeClient(creds, clock=clock.monotonic, sleep=clock.sleep) as kube,
        pytest.raises(NoContact) as caught,
    ):
        kube.get("/version")
    assert isinstance(caught.value.cause, UnreachableError) and caught.value.cause.exit_code == 4
    message = str(caught.value.cause)
    assert message.startswith(f"{url}: TLS failure: [SSL: CERTIFICATE_VERIFY_FAILED]"), message
    assert f"checked against certificate-authority {other_ca}" in message
    assert _Handler.seen == []


def test_tls_with_kubeconfig_ca_and_client_cert_sends_token_and_cert(
    tls_server: tuple[str, Path, Pair],
) -> None:
    url, directory, ca = tls_server
    cert, key = write_pair(directory, "client", issue(ca, "alice"))
    document = {
        "current-context": "ctx",
        "clusters": [
            {"name": "c", "cluster": {"server": url, "certificate-authority": str(directory / "ca.crt")}}
        ],
        "users": [
            {"name": "u", "user": {"token": TOKEN, "client-certificate": str(cert), "client-key": str(key)}}
        ],
        "contexts": [{"name": "ctx", "context": {"cluster": "c", "user": "u"}}],
    }
    (directory / "config").write_text(yaml.safe_dump(document))
    creds = load_credentials(AuthOptions(kubeconfig=str(directory / "config")), env={})
    with KubeClient(creds) as kube:
        assert kube.get("/version") == {"gitVersion": "v1.31.0"}
    assert _Handler.seen == [(f"Bearer {TOKEN}", True)]


def test_a_list_answer_cut_off_mid_body_is_retried_like_a_reset_and_the_list_completes(
    tls_server: tuple[str, Path, Pair], clock: FakeClock
) -> None:
    url, directory, _ = tls_server
    config = write_kubeconfig(
        directory / "config", TOKEN, url, **{"certificate-authority": str(directory / "ca.crt")}
    )
    creds = load_credentials(AuthOptions(kubeconfig=str(config)), env={})
    _Handler.cuts = 1
    with KubeClient(creds, clock=clock.monotonic, sleep=clock.sleep) as kube:
        names = [item["metadata"]["name"] for item in kube.list_items("/api/v1/namespaces/web/configmaps")]
        stats = kube.stats.snapshot()
    assert names == ["a", "b"]
    assert len(_Handler.seen) == 2
    assert stats["retries"] == {"connection": 1}
    assert stats["requests"] == {"list": {"200": 1, "error": 1}}


def test_a_first_answer_cut_off_mid_body_proves_contact_so_the_outage_after_it_is_that_requests_failure(
    creds: Credentials, mock: responses.RequestsMock, clock: FakeClock
) -> None:
    """kube-apiserver killed while it sent the command's first answer: it had answered (status and headers
    came), so the refusals while it restarts are retried and fail that request, not the command."""
    path = SERVER + "/apis/apps/v1/deployments"
    mock.add(responses.GET, path, body=requests.exceptions.ChunkedEncodingError("Connection broken"))
    mock.add(responses.GET, path, body=requests.ConnectionError("connection refused"))
    with (
        KubeClient(creds, ClientOptions(max_retries=1), clock=clock.monotonic, sleep=clock.sleep) as kube,
        pytest.raises(UnreachableError),
    ):
        kube.get("/apis/apps/v1/deployments")
    assert len(mock.calls) == 2


def test_a_create_whose_answer_was_cut_off_is_not_sent_again(
    client: KubeClient, mock: responses.RequestsMock
) -> None:
    answered(client, mock)
    mock.add(
        responses.POST,
        SERVER + "/apis/batch/v1/namespaces/web/jobs",
        body=requests.exceptions.ChunkedEncodingError("Connection broken: IncompleteRead(0 bytes read)"),
    )
    with pytest.raises(UnreachableError) as caught:
        client.create("/apis/batch/v1/namespaces/web/jobs", {"kind": "Job"})
    assert len(mock.calls) == 2
    assert str(caught.value).endswith("the answer was cut off mid-body (connection broken)")


def test_concurrent_calls_share_one_client(client: KubeClient, mock: responses.RequestsMock) -> None:
    for index in range(16):
        mock.add(responses.GET, f"{SERVER}/api/v1/namespaces/web/configmaps/c{index}", json={"n": index})
    with ThreadPoolExecutor(max_workers=4) as pool:
        paths = [f"/api/v1/namespaces/web/configmaps/c{index}" for index in range(16)]
        results = list(pool.map(client.get, paths))
    assert [result["n"] for result in results] == list(range(16))
    assert client.stats.snapshot()["requests_total"] == 16


# kube-apiserver 1.37.2's answers, as captured in tests/chaos_real (a ValidatingAdmissionPolicy without a
# `reason`, and a JSON-patch `test` that fails): both are 422 Invalid, only the message tells them apart.
ADMISSION_DENIAL_422 = {
    "kind": "Status",
    "apiVersion": "v1",
    "metadata": {},
    "status": "Failure",
    "message": "deployments.apps \"api\" is forbidden: ValidatingAdmissionPolicy 'change-freeze' "
    "with binding 'change-freeze' denied request: change freeze: this workload may not be changed",
    "reason": "Invalid",
    "details": {
        "name": "api",
        "group": "apps",
        "kind": "deployments",
        "causes": [
            {
                "message": "ValidatingAdmissionPolicy 'change-freeze' with binding 'change-freeze' denied "
                "request: change freeze: this workload may not be changed"
            }
        ],
    },
    "code": 422,
}
TEST_FAILED_422 = {
    "kind": "Status",
    "apiVersion": "v1",
    "metadata": {},
    "status": "Failure",
    "message": "the server rejected our request due to an error in our request",
    "reason": "Invalid",
    "details": {},
    "code": 422,
}


def test_an_admission_denial_answered_422_is_not_taken_for_a_failed_patch_test(
    client: KubeClient, mock: responses.RequestsMock, clock: FakeClock
) -> None:
    """A 422 Invalid means "someone changed the workload" to the write stage (re-read, re-decide) only
    when it is a failed `test`; a policy's denial is AdmissionDenied: not Invalid, not retried, its
    message kept."""
    mock.add(responses.PATCH, SERVER + DEPLOYS + "/api", json=ADMISSION_DENIAL_422, status=422)
    mock.add(responses.PATCH, SERVER + DEPLOYS + "/web", json=TEST_FAILED_422, status=422)
    with pytest.raises(AdmissionDenied) as denied:
        client.patch(
            DEPLOYS + "/api", [{"op": "test", "path": "/x", "value": "1"}], patch_type=PatchType.JSON
        )
    assert not isinstance(denied.value, Invalid)
    assert "change freeze: this workload may not be changed" in str(denied.value)
    with pytest.raises(Invalid):
        client.patch(
            DEPLOYS + "/web", [{"op": "test", "path": "/x", "value": "1"}], patch_type=PatchType.JSON
        )
    assert len(mock.calls) == 2 and clock.sleeps == []


def test_an_admission_webhook_denial_is_admission_denied_whatever_its_code() -> None:
    message = 'admission webhook "freeze.example.com" denied the request: frozen'
    for code in (400, 422):
        assert type(api_error_for(code, "Invalid", message)) is AdmissionDenied
    assert type(api_error_for(422, "Invalid", "spec.replicas: Invalid value")) is Invalid


@pytest.mark.parametrize("metadata_only", [False, True], ids=["whole-objects", "metadata-only"])
@pytest.mark.parametrize(
    "body",
    [b'{"items": [{"metadata": {}}, oops]}', b'{"items": []}x', b"[]", b'{"items": ["\xff"]}'],
    ids=["broken-item", "extra-data", "an-array", "not-utf-8"],
)
def test_a_list_page_either_decoder_cannot_read_fails_the_list_as_an_invalid_response(
    client: KubeClient, mock: responses.RequestsMock, metadata_only: bool, body: bytes
) -> None:
    mock.add(responses.GET, SERVER + DEPLOYS, body=body, content_type="application/json")
    with pytest.raises(ApiError) as caught:
        list(client.list_items(DEPLOYS, metadata_only=metadata_only))
    assert (caught.value.code, caught.value.reason, caught.value.method) == (200, "InvalidResponse", "GET")


@pytest.mark.parametrize("metadata_only", [False, True], ids=["whole-objects", "metadata-only"])
def test_an_empty_list_page_is_an_empty_list(
    client: KubeClient, mock: responses.RequestsMock, metadata_only: bool
) -> None:
    mock.add(responses.GET, SERVER + DEPLOYS, body=b"")
    assert list(client.list_items(DEPLOYS, metadata_only=metadata_only)) == []
    assert len(mock.calls) == 1


def test_list_items_decodes_each_page_item_by_item_from_its_text(
    client: KubeClient, mock: responses.RequestsMock
) -> None:
    """The page's items stay text until reached (kube/pages.py); what is yielded is what json.loads gives."""
    mock.add(responses.GET, SERVER + DEPLOYS, json=page(["a", "b"], "t1"))
    mock.add(responses.GET, SERVER + DEPLOYS, json=page(["c"]))
    pages = list(client.list_pages(DEPLOYS, lazy=True))
    assert [type(p["items"]).__name__ for p in pages] == ["LazyItems", "LazyItems"]
    assert [p["metadata"].get("continue") for p in pages] == ["t1", None]
    mock.add(responses.GET, SERVER + DEPLOYS, json=page(["a", "b"], "t1"))
    mock.add(responses.GET, SERVER + DEPLOYS, json=page(["c"]))
    assert list(client.list_items(DEPLOYS)) == page(["a", "b"])["items"] + page(["c"])["items"]


def test_a_metadata_list_tells_its_size_from_the_first_page_where_the_server_counts(
    client: KubeClient, mock: responses.RequestsMock
) -> None:
    mock.add(responses.GET, SERVER + DEPLOYS, json=counted_page(["a", "b"], "t1", 3))
    mock.add(responses.GET, SERVER + DEPLOYS, json=page(["c", "d", "e"]))
    items = client.list_items(DEPLOYS, metadata_only=True, limit=2)
    assert items.total is None and not items.read and len(mock.calls) == 0  # nothing read before asked
    assert next(items)["metadata"]["name"] == "a"
    assert items.total == 5 and items.read and len(mock.calls) == 1
    assert [i["metadata"]["name"] for i in items] == ["b", "c", "d", "e"]
    assert items.total == 5


@pytest.mark.parametrize(
    ("first", "total"),
    [(page(["a", "b"], "t1"), None), (page(["a", "b"]), 2)],
    ids=["not counted (a selector)", "one page: the whole list"],
)
def test_a_list_without_a_count_has_no_size_unless_its_first_page_was_all(
    client: KubeClient, mock: responses.RequestsMock, first: dict[str, Any], total: int | None
) -> None:
    mock.add(responses.GET, SERVER + DEPLOYS, json=first)
    items = client.list_items(DEPLOYS, metadata_only=True, field_selector="metadata.namespace!=x", limit=2)
    next(items)
    assert items.total == total
