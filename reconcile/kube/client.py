"""The one place that sends HTTP requests to the Kubernetes API.

A deliberately small synchronous client: GET, paged LIST, PATCH and POST of raw JSON dicts, nothing typed.
It owns what every caller would otherwise get subtly wrong: bounded retries with full-jitter backoff
(429 honouring Retry-After, 5xx, connection errors), never retrying what a retry cannot fix (400, 403, 404,
409, 410, 422), one reload of the credentials after a 401, a client-side rate limit, list paging that
survives expiring `continue` tokens (below), and errors built from the server's `Status` that never carry a
token, a header or a request body. One `requests.Session` is shared, so a small thread pool may call it.

A dead server is said at once: until the server has answered once, a refused connection (or a host that does
not resolve) gets one short retry, then UnreachableError names the address (a wrong address in a kubeconfig
fails in about a second, not after a minute of backoff); once it has answered, the same failure is retried
like any other (a kube-apiserver restarting mid-pass). Every retry is logged at WARNING, the default
verbosity, with its cause and wait, so a server that accepts but never answers shows while it is waited for.

Expired `continue` tokens. A paged list reads one etcd snapshot; when etcd compacts it away before the
last page (a busy cluster, a slow pass), the next `continue` request answers 410 Expired. Restarting from
the first page is no cure: a pass slow enough to lose one token loses the next as well. So, like
client-go's pager (k8s.io/client-go/tools/pager, `ListPager.List` with `FullListIfExpired`, the default),
a 410 on a `continue` request is answered with one full list: the same path, selectors and Accept header,
without `limit` and `continue` and without a resourceVersion (we never request one, so it is a fresh,
consistent read). That request carries no token, so it cannot expire, and a list never fails for an
expired token. It is one response instead of pages, but a metadata-only list stays metadata-only
(PartialObjectMetadataList), so its size is bounded by the objects' metadata. Like client-go, a 410 on
the first page (no token) is not answered with a fallback: there is no token to blame, it is raised as
Gone. client-go falls back only when the error's reason is `Expired`; we fall back on any 410 to a
`continue` request, since the token's snapshot is the only thing such a request can have lost.
"""

from __future__ import annotations

import json
import logging
import random
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from concurrent.futures import Future
from dataclasses import dataclass
from enum import StrEnum
from itertools import chain
from typing import Any

import requests

from reconcile import __version__
from reconcile.errors import (
    MAX_BODY_EXCERPT,
    ApiError,
    ConfigError,
    CredentialsError,
    Gone,
    NoContact,
    PassCut,
    RehashError,
    Unauthorized,
    UnreachableError,
    api_error_for,
)
from reconcile.json_text import load_json
from reconcile.kube.ahead import Arrived, ReadAhead, give_up
from reconcile.kube.auth import Credentials
from reconcile.kube.page_size import PAGE_SIZE, PageLimits
from reconcile.kube.pages import object_count, read_metadata_page, read_page
from reconcile.kube.transport import (
    BROKEN_ANSWERS,
    CUT_OFF_ANSWERS,
    ApiStats,
    RateLimiter,
    ServerNameAdapter,
    connection_cause,
    describe_error,
    never_connected,
    read_body,
)

log = logging.getLogger(__name__)

JSON = "application/json"
ACCEPT_METADATA = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json"
ACCEPT_METADATA_LIST = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json"
RETRIED_STATUS = frozenset({429, 500, 502, 503, 504})
DEFAULT_FIELD_MANAGER = "kube-rehash"
# A server that never answered and refuses connections (a wrong address) gets this many retries, this far
# apart, before the pass ends with exit 4: a wrong address is said at once, a starting server waited for.
FIRST_CONTACT_RETRIES = 1
FIRST_CONTACT_RETRY_DELAY = 0.5
# Asked before each request attempt with its verb (get, list, patch, create): raises to refuse it, or
# returns the clock() time by which the attempt (and any retry) must be over.
Gate = Callable[[str], float]


def namespace_exclusions(namespaces: Iterable[str]) -> list[str]:
    """Field-selector terms that leave these namespaces out of a cluster-wide list (joined with ",")."""
    return [f"metadata.namespace!={n}" for n in sorted(namespaces)]


class PatchType(StrEnum):
    """Content type of a PATCH body."""

    JSON = "application/json-patch+json"
    MERGE = "application/merge-patch+json"
    STRATEGIC = "application/strategic-merge-patch+json"


@dataclass(frozen=True)
class ClientOptions:
    """Transport settings; every duration is in seconds."""

    request_timeout: float = 10.0
    """Connect and read timeout of one HTTP request."""
    deadline: float = 60.0
    """Most time spent on one call, retries and their sleeps included."""
    max_retries: int = 8
    backoff_base: float = 0.25
    backoff_max: float = 8.0
    page_size: int = PAGE_SIZE
    grown_page_size: int | None = None
    """Most objects a page of a metadata-only list read to its end asks for, growing from `page_size` by
    the bytes of the page before (kube/page_size.py); None: every page asks for `page_size`."""
    qps: float = 0.0
    """Client-side request rate limit (token bucket); 0 means unlimited."""
    pool_size: int = 8
    user_agent: str = f"kube-rehash/{__version__}"

    def __post_init__(self) -> None:
        positive = {
            "request_timeout": self.request_timeout,
            "deadline": self.deadline,
            "backoff_base": self.backoff_base,
            "page_size": self.page_size,
            "pool_size": self.pool_size,
        }
        for name, value in positive.items():
            if not value > 0:
                raise ConfigError(f"client option {name} must be > 0, got {value!r}")
        if self.grown_page_size is not None and self.grown_page_size < self.page_size:
            raise ConfigError("client option grown_page_size must be >= page_size")
        if self.max_retries < 0 or self.qps < 0:
            raise ConfigError("client options max_retries and qps must be >= 0")
        if self.backoff_max < self.backoff_base:
            raise ConfigError("client option backoff_max must be >= backoff_base")
        if not self.user_agent.strip():
            raise ConfigError("client option user_agent must not be empty")


class ListPager(Iterator[dict[str, Any]]):
    """Iterates over the pages (List objects) of one list call, following `continue` tokens.

    `fetch(token)` reads one page (`token` None: the first page); `fetch_all()` reads the whole list in
    one unpaged response. When a `continue` token has expired (410), the rest of the list is read by one
    `fetch_all()` (see the module docstring), yielded as the last page. That page repeats the items
    yielded before it, possibly in newer versions: `fell_back` turns True when it is yielded, so a caller
    collecting items may drop what it gathered. A 410 on the first page, or an error of the full list,
    is raised.

    With `send_ahead`, the request for the next page is sent as soon as a page gives its token, on another
    thread (kube/ahead.py; it may decline, and the page is then requested when reached), so the caller works
    on one page while the next one travels; that page is decoded here, when the caller reaches it, and what
    its request raised is raised then, as if it had been sent then. Only for a list its caller reads to the
    end: a caller that stops early leaves one request made for nothing.
    """

    def __init__(
        self,
        fetch: Callable[[str | None], dict[str, Any]],
        fetch_all: Callable[[], dict[str, Any]],
        send_ahead: Callable[[str | None], Future[Arrived[dict[str, Any]]] | None] | None = None,
    ) -> None:
        self._fetch = fetch
        self._fetch_all = fetch_all
        self._send_ahead = send_ahead
        self._pending: Future[Arrived[dict[str, Any]]] | None = None
        self._token: str | None = None
        self._done = False
        self.fell_back = False
        self.held = False
        """No page is sent ahead while held (`release`): the caller is still deciding whether to go on."""

    def __iter__(self) -> ListPager:
        return self

    def __next__(self) -> dict[str, Any]:
        if self._done:
            raise StopIteration
        pending, self._pending = self._pending, None
        try:
            page = pending.result()() if pending is not None else self._fetch(self._token)
        except Gone:
            if self._token is None:
                self._done = True
                raise
            log.info("list continue token expired; reading the rest of the list as one full list")
            self._done = True
            self.fell_back = True
            return self._fetch_all()
        except Exception:
            self._done = True
            raise
        metadata = page.get("metadata")
        token = metadata.get("continue") if isinstance(metadata, dict) else None
        self._token = str(token) if token else None
        self._done = self._token is None
        if not self.held:
            self._ahead()
        return page

    def close(self) -> None:
        """Give the list up: no page more is read, and a page sent ahead is let go when it arrives."""
        self._done = True
        pending, self._pending = self._pending, None
        if pending is not None:
            give_up(pending)

    def release(self) -> None:
        """End `held`: the next page is sent ahead now, if there is one."""
        self.held = False
        self._ahead()

    def start(self) -> None:
        """Send the first page's request ahead now (where pages are sent ahead), before the caller reaches
        it: a caller opening several lists it will walk in step has their first pages travel together."""
        if self._send_ahead is not None and self._token is None and self._pending is None and not self._done:
            self._pending = self._send_ahead(None)

    def _ahead(self) -> None:
        if self._send_ahead is not None and self._token is not None and self._pending is None:
            self._pending = self._send_ahead(self._token)


class ListedItems(Iterator[dict[str, Any]]):
    """The items of one paged list, each once: the full list read after an expired token resumes after the
    last item yielded. The API server returns a list in storage-key order (`namespace/name`, or `name`), so
    comparing keys needs only the last one, where a set of every uid would grow with the list (an object
    created or re-created behind that point during the list is left for the next pass, as a list started a
    moment earlier would have missed it).

    Once its first page is read, `total` is how many objects the collection held, where the server said
    (a pass that walks several lists in step weighs its plan on their sizes: pipeline/listing.py)."""

    def __init__(self, pager: ListPager) -> None:
        self.total: int | None = None
        self.read = False
        """The first page was read."""
        self._pager = pager
        self._chunks: Iterator[list[dict[str, Any]]] = self._walk(pager)
        self._items: Iterator[dict[str, Any]] = chain.from_iterable(self._chunks)

    def __iter__(self) -> ListedItems:
        return self

    def __next__(self) -> dict[str, Any]:
        return next(self._items)

    def size(self) -> int | None:
        """Read the first page now, sending none ahead of it, and give `total` (None: the server did not
        say): for a caller that decides from the list's size whether it is worth reading on (`go_on`) or
        dropping, which then costs that one page. Before iterating."""
        if not self.read:
            self._pager.held = True
            first = next(self._chunks, None)
            if first is not None:
                self._chunks = chain([first], self._chunks)
                self._items = chain.from_iterable(self._chunks)
        return self.total

    def close(self) -> None:
        """Give the list up: it yields nothing more, not even a page already read (`ListPager.close`)."""
        self._pager.close()
        self._chunks = iter(())
        self._items = iter(())

    def go_on(self) -> None:
        """After `size`: the list is read on, its next page sent ahead now where it reads ahead."""
        self._pager.release()

    def start(self) -> None:
        """Before the first item is taken: its page is requested now, on a read-ahead thread, where the list
        reads ahead (`ListPager.start`) and the server has accepted the credentials once (before that, the
        page is requested when reached: the first contact goes alone). A list its caller may not read costs
        that page all the same."""
        if not self.read:
            self._pager.start()

    def chunks(self) -> Iterator[list[dict[str, Any]]]:
        """The same items, a decoded page at a time (an object at a time where a page's items are decoded
        as they are reached: kube/pages.py), for a reader with per-page work to share; not to be mixed with
        iterating the items."""
        return self._chunks

    def _walk(self, pager: ListPager) -> Iterator[list[dict[str, Any]]]:
        last: str | None = None  # the key of the last item yielded, taken only once the list fell back
        previous: Mapping[str, Any] | None = None
        for page in pager:
            if not self.read:
                self.read, self.total = True, object_count(page)
            if pager.fell_back and last is None and previous is not None:
                last = storage_key(previous)
            items = page.get("items") or []
            if last is None and isinstance(items, list):
                if items:
                    previous = items[-1]
                    yield items
                continue
            for item in items:
                if last is not None:
                    key = storage_key(item)
                    if key <= last:
                        continue
                    last = key
                previous = item
                yield [item]


class KubeClient:
    """Raw-JSON Kubernetes API client; see the module docstring for the retry rules."""

    def __init__(
        self,
        credentials: Credentials,
        options: ClientOptions = ClientOptions(),
        *,
        stop_at: float | None = None,
        gate: Gate | None = None,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        """`stop_at` is a `clock()` deadline for the whole pass: no retry sleeps past it. `gate` is asked
        before every attempt (the pass's time budget): it raises to refuse the request, or returns the
        `clock()` time by which the request and its retries must be over."""
        self.options = options
        self.stats = ApiStats()
        self._credentials = credentials
        self._stop_at = stop_at
        self._gate = gate
        self._clock = clock
        self._sleep = sleep
        self._random = random.Random()
        self._limiter = RateLimiter(options.qps, clock, sleep)
        self._session_lock = threading.Lock()
        self._retired: list[requests.Session] = []
        self._session = self._new_session()
        self._read_ahead = ReadAhead()
        self._answered = False
        """Whether the server has answered once (any status): until then a refused connection fails fast."""
        self._accepted = False
        """Whether the server has answered once with the credentials accepted (any status but 401): until
        then an unreachable server or rejected credentials end the command (`NoContact`)."""

    @property
    def server(self) -> str:
        return self._credentials.server

    def __enter__(self) -> KubeClient:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        with self._session_lock:
            self._read_ahead.close()
            for session in [*self._retired, self._session]:
                session.close()
            self._retired.clear()

    def get(self, path: str, *, metadata_only: bool = False) -> dict[str, Any]:
        accept = ACCEPT_METADATA if metadata_only else JSON
        return self._call("get", "GET", path, accept=accept)

    def get_or_error(self, path: str, *, metadata_only: bool = False) -> dict[str, Any] | RehashError:
        """One GET whose failure (NotFound included) is a value for the caller to settle, so one object's
        error never stops its batch; only `PassCut`, the pass's own stop, is raised."""
        try:
            return self.get(path, metadata_only=metadata_only)
        except PassCut:
            raise
        except RehashError as exc:
            return exc

    def list_pages(
        self,
        path: str,
        *,
        label_selector: str | None = None,
        field_selector: str | None = None,
        metadata_only: bool = False,
        limit: int | None = None,
        lazy: bool = False,
        read_ahead: bool = False,
    ) -> ListPager:
        """Pages of a collection GET (`limit` defaults to `page_size`); see ListPager about expired tokens.
        `lazy`: a page of whole objects keeps its `items` as text, each decoded as it is iterated; a metadata
        page is decoded once, its items slimmed (kube/pages.py). `read_ahead`: each next page is requested
        while the caller works on the one before it (ListPager)."""
        selectors: dict[str, str] = {}
        if label_selector:
            selectors["labelSelector"] = label_selector
        if field_selector:
            selectors["fieldSelector"] = field_selector
        base = limit or self.options.page_size
        grows = read_ahead and metadata_only and limit is None
        limits = PageLimits(base, self.options.grown_page_size if grows else None)
        accept = ACCEPT_METADATA_LIST if metadata_only else JSON

        decode = (_decode_metadata_page if metadata_only else _decode_page) if lazy else _decode_whole

        expected = [0]  # the bytes the list's next page is expected to hold, from the page before it

        def paged(token: str | None) -> dict[str, str]:
            params = {**selectors, "limit": str(limits.limit)}
            return {**params, "continue": token} if token else params

        def fetch(token: str | None) -> dict[str, Any]:
            return reach(self._respond("list", "GET", path, params=paged(token), accept=accept))

        def fetch_all() -> dict[str, Any]:
            self.stats.record_retry("410")  # counted like the retried statuses
            response = self._respond("list", "GET", path, params=selectors, accept=accept)
            return decode(response, "GET", path)[0]

        def reach(response: requests.Response) -> dict[str, Any]:
            size = len(response.content)
            page, kept = decode(response, "GET", path)
            items = page.get("items")
            objects = len(items) if isinstance(items, list) else 0
            expected[0] = int(size * limits.note(objects, size, kept))
            return page

        def send_ahead(token: str | None) -> Future[Arrived[dict[str, Any]]] | None:
            if token is None and not self._accepted:  # the first contact goes alone (`_respond`)
                return None
            params = paged(token)

            def request() -> requests.Response:
                return self._respond("list", "GET", path, params=params, accept=accept)

            return self._read_ahead.send(request, expected[0], reach)

        return ListPager(fetch, fetch_all, send_ahead if read_ahead else None)

    def list_at(
        self, path: str, *, resource_version: str, label_selector: str | None = None
    ) -> dict[str, Any]:
        """One unpaged metadata-only list of the collection exactly as it was at `resource_version`
        (`resourceVersionMatch=Exact`; a 410 when etcd compacted that version away)."""
        params = {"resourceVersion": resource_version, "resourceVersionMatch": "Exact"}
        if label_selector:
            params["labelSelector"] = label_selector
        return self._call("list", "GET", path, params=params, accept=ACCEPT_METADATA_LIST)

    def list_items(
        self,
        path: str,
        *,
        label_selector: str | None = None,
        field_selector: str | None = None,
        metadata_only: bool = False,
        limit: int | None = None,
        read_ahead: bool = False,
    ) -> ListedItems:
        """Items of all pages, each once (`ListedItems`). `read_ahead` (a metadata-only list its caller reads
        to the end): each next page is requested while the caller works on the one before it."""
        pager = self.list_pages(
            path,
            label_selector=label_selector,
            field_selector=field_selector,
            metadata_only=metadata_only,
            limit=limit,
            lazy=True,
            read_ahead=read_ahead and metadata_only,
        )
        return ListedItems(pager)

    def patch(
        self,
        path: str,
        body: Any,
        *,
        patch_type: PatchType,
        dry_run: bool = False,
        field_manager: str = DEFAULT_FIELD_MANAGER,
    ) -> dict[str, Any]:
        params = _write_params(dry_run, field_manager)
        return self._call("patch", "PATCH", path, params=params, body=body, content_type=patch_type.value)

    def create(
        self,
        path: str,
        body: Mapping[str, Any],
        *,
        dry_run: bool = False,
        field_manager: str = DEFAULT_FIELD_MANAGER,
    ) -> dict[str, Any]:
        """POST to a collection; of network failures only those where nothing was sent are retried."""
        params = _write_params(dry_run, field_manager)
        return self._call("create", "POST", path, params=params, body=body, content_type=JSON)

    def evict(self, path: str, body: Mapping[str, Any], *, dry_run: bool = False) -> dict[str, Any]:
        """POST a policy/v1 Eviction to a pod's `eviction` subresource. A 429 is a PodDisruptionBudget's
        answer (its cause names the budget), raised at once: retrying it within the pass helps nobody."""
        params = _write_params(dry_run, DEFAULT_FIELD_MANAGER)
        return self._call(
            "create",
            "POST",
            path,
            params=params,
            body=body,
            content_type=JSON,
            retried=RETRIED_STATUS - {429},
        )

    def _new_session(self) -> requests.Session:
        session = self._credentials.new_session()
        adapter = ServerNameAdapter(
            self._credentials.server_name,
            pool_connections=1,
            pool_maxsize=self.options.pool_size,
            max_retries=0,
        )
        session.mount("https://", adapter)
        session.mount("http://", adapter)
        return session

    def _reauthenticate(self) -> None:
        self._credentials.reload()
        fresh = self._new_session()  # a reloaded exec plugin may have issued a new client certificate
        with self._session_lock:
            self._retired.append(self._session)
            self._session = fresh

    def _call(self, verb: str, method: str, path: str, **request: Any) -> dict[str, Any]:
        """The request's decoded JSON object (`_respond` takes the keyword arguments)."""
        return _decode(self._respond(verb, method, path, **request), method, path)

    def _respond(self, verb: str, method: str, path: str, **request: Any) -> requests.Response:
        """The request's successful (2xx) response, retried as the module docstring says; the typed error
        of any other outcome. Until a request has been answered with the credentials accepted, an
        unreachable server or rejected credentials raise `NoContact` instead: the command's first request
        proves the server and the credentials, with no request of its own ahead of the work."""
        try:
            return self._exchange(verb, method, path, **request)
        except (UnreachableError, Unauthorized) as exc:
            if self._accepted:
                raise
            raise NoContact(self._no_contact(exc)) from exc

    def _no_contact(self, error: UnreachableError | Unauthorized) -> RehashError:
        if isinstance(error, Unauthorized):
            source = self._credentials.source
            return Unauthorized(error.code, error.reason, f"credentials rejected by {self.server} ({source})")
        return error

    def _exchange(
        self,
        verb: str,
        method: str,
        path: str,
        *,
        params: Mapping[str, str] | None = None,
        body: Any = None,
        content_type: str | None = None,
        accept: str = JSON,
        retried: frozenset[int] = RETRIED_STATUS,
    ) -> requests.Response:
        """`_respond`'s request and its retries."""
        deadline = self._clock() + self.options.deadline
        if self._stop_at is not None:
            deadline = min(deadline, self._stop_at)
        data = None if body is None else json.dumps(body, separators=(",", ":")).encode()
        url = self.server + path
        retries = 0
        reauthenticated = False
        failed: RehashError | None = None  # why the previous attempt is being retried
        unanswered = False  # an attempt was sent and its answer lost: the server may have served it
        while True:
            self._limiter.acquire()
            if self._gate is not None:
                try:
                    deadline = min(deadline, self._gate(verb))
                except PassCut:
                    if failed is not None:  # the retries ran out of time: that is the request's failure
                        raise failed from None
                    raise
            timeout = min(self.options.request_timeout, max(deadline - self._clock(), 1.0))
            try:
                response = self._session.request(
                    method,
                    url,
                    params=params,
                    data=data,
                    headers=self._headers(accept, content_type),
                    timeout=timeout,
                    stream=True,
                )
                read_body(response)
            except requests.exceptions.SSLError as exc:
                self.stats.record_request(verb, "error")
                trust = self._credentials.trust
                raise UnreachableError(
                    f"{self.server}: TLS failure: {describe_error(exc)} (server certificate checked against "
                    f"{trust})"
                ) from exc
            except BROKEN_ANSWERS as exc:
                self.stats.record_request(verb, "error")
                if isinstance(exc, CUT_OFF_ANSWERS):  # its body was cut off: the server had answered, 2xx
                    self._answered = self._accepted = True
                sent = not (never_connected(exc) or isinstance(exc, requests.ConnectTimeout))
                unanswered = unanswered or sent
                cause = connection_cause(exc, timeout)
                self._retry_connection_failure(
                    exc,
                    cause=cause,
                    request=f"{method} {path}",
                    is_create=verb == "create",
                    retries=retries,
                    deadline=deadline,
                )
                failed = UnreachableError(f"cannot reach the API server at {self.server}: {cause}")
                retries += 1
                continue
            self._answered = True
            code = response.status_code
            if code != 401:
                self._accepted = True
            self.stats.record_request(verb, code, len(response.content))
            log.debug("%s %s -> %d", method, path, code)
            if 200 <= code < 300:
                return response
            error = _error_from(response, method, path)
            error.unanswered_before = unanswered
            unanswered = unanswered or code >= 500
            if code == 401 and not reauthenticated:
                reauthenticated = True
                try:
                    self._reauthenticate()
                except CredentialsError as reload_error:
                    raise error from reload_error
                self.stats.record_retry("unauthorized")
                continue
            if code in retried:
                retry_after = _retry_after(response) if code == 429 else None
                delay = self._backoff(retries) if retry_after is None else retry_after
                if self._may_retry(retries, delay, deadline):
                    log.warning(
                        "%s %s: %d %s; retry %d in %.2fs",
                        method,
                        path,
                        code,
                        error.reason,
                        retries + 1,
                        delay,
                    )
                    self._pause(str(code), delay)
                    failed = error
                    retries += 1
                    continue
            raise error

    def _headers(self, accept: str, content_type: str | None) -> dict[str, str]:
        headers = {"Accept": accept, "User-Agent": self.options.user_agent}
        if content_type:
            headers["Content-Type"] = content_type
        authorization = self._credentials.authorization()  # runs the loader's refresh hook
        if authorization:
            headers["Authorization"] = authorization
        return headers

    def _retry_connection_failure(
        self,
        exc: requests.RequestException,
        *,
        cause: str,
        request: str,
        is_create: bool,
        retries: int,
        deadline: float,
    ) -> None:
        """Log and sleep before the next attempt, or raise UnreachableError when it may not or cannot happen.

        A server that has not answered once in this client's life and refuses the connection (or whose
        host does not resolve) gets one short retry, then the pass ends (a wrong address is said at once);
        once it has answered, it is retried with backoff like any failure (a server restarting mid-pass).
        A POST that may have reached the server (read timeout, reset) is not sent again (no double create).
        """
        reason = "timeout" if isinstance(exc, requests.Timeout) else "connection"
        first_contact = not self._answered and never_connected(exc)
        if first_contact:
            delay = FIRST_CONTACT_RETRY_DELAY if retries < FIRST_CONTACT_RETRIES else None
        else:
            delay = self._backoff(retries)
        resendable = not is_create or isinstance(exc, requests.ConnectTimeout) or never_connected(exc)
        if delay is None or not (resendable and self._may_retry(retries, delay, deadline)):
            attempts = f" after {retries + 1} attempts" if retries else ""
            raise UnreachableError(
                f"cannot reach the API server at {self.server}{attempts}: {cause}"
            ) from exc
        log.warning(
            "API server %s: %s on %s; retry %d in %.2fs", self.server, cause, request, retries + 1, delay
        )
        self._pause(reason, delay)

    def _backoff(self, retries: int) -> float:
        """Full jitter: uniform in [0, min(backoff_max, base * 2**retries)]."""
        ceiling = min(self.options.backoff_max, self.options.backoff_base * (2 ** min(retries, 30)))
        return self._random.uniform(0.0, ceiling)

    def _may_retry(self, retries: int, delay: float, deadline: float) -> bool:
        return retries < self.options.max_retries and self._clock() + delay < deadline

    def _pause(self, reason: str, delay: float) -> None:
        self.stats.record_retry(reason)
        if delay > 0:
            self._sleep(delay)


def _write_params(dry_run: bool, field_manager: str) -> dict[str, str]:
    params = {"fieldManager": field_manager}
    if dry_run:
        params["dryRun"] = "All"
    return params


def storage_key(item: Mapping[str, Any]) -> str:
    """The order the API server lists objects in: etcd's key, `namespace/name` (or `name`)."""
    metadata = item.get("metadata") or {}
    namespace = metadata.get("namespace")
    name = str(metadata.get("name", ""))
    return f"{namespace}/{name}" if namespace else name


def _decode(response: requests.Response, method: str, path: str) -> dict[str, Any]:
    if not response.content:
        return {}
    try:
        document = load_json(response.content)
    except ValueError:
        document = None
    if not isinstance(document, dict):
        raise _not_an_object(response, method, path)
    return document


def _decode_whole(response: requests.Response, method: str, path: str) -> tuple[dict[str, Any], int]:
    """A list page decoded at once, and its length: all of it is kept."""
    return _decode(response, method, path), len(response.content)


def _decode_page(response: requests.Response, method: str, path: str) -> tuple[dict[str, Any], int]:
    """A list page whose items are decoded as they are iterated, and its length: its text is kept while
    they are."""
    return _decode_text(response, method, path, lambda text: (read_page(text), len(response.content)))


def _decode_metadata_page(response: requests.Response, method: str, path: str) -> tuple[dict[str, Any], int]:
    """A metadata-only page decoded once, its items without managedFields and last-applied annotation,
    and the length of the text it keeps (kube/pages.py)."""
    return _decode_text(response, method, path, read_metadata_page)


def _decode_text(
    response: requests.Response,
    method: str,
    path: str,
    read: Callable[[str], tuple[dict[str, Any], int]],
) -> tuple[dict[str, Any], int]:
    """`read` of the body as text (JSON is UTF-8: RFC 8259); an empty body is an empty page, and a body
    that is not UTF-8 or not a JSON object is the server's error, as `_decode` reports it."""
    if not response.content:
        return {}, 0
    try:
        return read(response.content.decode("utf-8"))
    except ValueError:  # UnicodeDecodeError and JSONDecodeError included
        raise _not_an_object(response, method, path) from None


def _not_an_object(response: requests.Response, method: str, path: str) -> ApiError:
    return ApiError(
        response.status_code, "InvalidResponse", "the response is not a JSON object", method=method, path=path
    )


def _error_from(response: requests.Response, method: str, path: str) -> ApiError:
    """The typed error of a non-2xx response: Status reason and message, else a short body excerpt."""
    try:
        status = response.json()
    except ValueError:
        status = None
    if isinstance(status, dict) and status.get("kind") == "Status":
        reason = str(status.get("reason") or response.reason or "")
        message = str(status.get("message") or "")
        details = status.get("details")
        causes = details.get("causes") if isinstance(details, dict) else None
        budgets = [  # an eviction's refusal: the Status message does not name the budget, its cause does
            str(c.get("message"))
            for c in (causes if isinstance(causes, list) else ())
            if isinstance(c, dict) and c.get("reason") == "DisruptionBudget" and c.get("message")
        ]
        if budgets:
            message = f"{message} ({'; '.join(budgets)})"
    else:
        reason = str(response.reason or "")
        message = _excerpt(response.text)
    return api_error_for(response.status_code, reason, message, method=method, path=path)


def _retry_after(response: requests.Response) -> float | None:
    value = response.headers.get("Retry-After", "").strip()
    try:
        seconds = float(value)
    except ValueError:
        return None  # absent, or an HTTP date (the API server sends seconds)
    return max(0.0, seconds)


def _excerpt(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= MAX_BODY_EXCERPT else flat[: MAX_BODY_EXCERPT - 3] + "..."
