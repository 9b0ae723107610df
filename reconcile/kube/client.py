"""The one place that sends HTTP requests to the Kubernetes API.

A deliberately small synchronous client: GET, paged LIST, PATCH and POST of raw JSON dicts, nothing typed.
Each call builds its request as a value (kube/request.py) and hands it to the one send policy
(kube/exchange.py: the time budget's gate, the rate limit, retries, re-authentication, errors from the
server's `Status`, and the most bytes an answer may hold); a list's pages are walked by kube/lists.py, which
survives expiring `continue` tokens and pages too large for the pass's memory budget (kube/memory.py). One
`requests.Session` is shared, so a small thread pool may call it.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any

import requests

from reconcile import __version__
from reconcile.errors import ConfigError, PassCut, RehashError
from reconcile.kube import request as req
from reconcile.kube.ahead import Arrived, ReadAhead
from reconcile.kube.answers import decode, decoder
from reconcile.kube.auth import Credentials
from reconcile.kube.exchange import Exchange, Gate, Retries
from reconcile.kube.lists import ListedItems, ListPager, page_objects
from reconcile.kube.memory import MemoryBudget
from reconcile.kube.page_size import PAGE_SIZE, PageLimits
from reconcile.kube.request import DEFAULT_FIELD_MANAGER, ListQuery, PatchType, Request
from reconcile.kube.transport import ApiStats

__all__ = [
    "ClientOptions",
    "Gate",
    "KubeClient",
    "ListPager",
    "ListedItems",
    "PatchType",
    "namespace_exclusions",
]

log = logging.getLogger(__name__)


def namespace_exclusions(namespaces: Iterable[str]) -> list[str]:
    """Field-selector terms that leave these namespaces out of a cluster-wide list (joined with ",")."""
    return [f"metadata.namespace!={n}" for n in sorted(namespaces)]


@dataclass(frozen=True)
class ClientOptions:
    """How the client sends: timeouts and retries, paging, rate, connections; every duration in seconds."""

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
    memory: MemoryBudget | None = None
    """The pass's memory budget: the most bytes an answer may hold, pages and pages read ahead (None: no
    bound on answers, the read-ahead's own)."""

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

    @property
    def retries(self) -> Retries:
        return Retries(
            self.request_timeout, self.deadline, self.max_retries, self.backoff_base, self.backoff_max
        )

    @property
    def answer_cap(self) -> int | None:
        return self.memory.answer_cap if self.memory is not None else None


class KubeClient:
    """Raw-JSON Kubernetes API client; see kube/exchange.py for the retry rules."""

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
        self.exchange = Exchange(
            credentials,
            options.retries,
            self.stats,
            qps=options.qps,
            pool_size=options.pool_size,
            user_agent=options.user_agent,
            stop_at=stop_at,
            gate=gate,
            clock=clock,
            sleep=sleep,
        )
        ahead = options.memory.ahead_bytes if options.memory is not None else None
        self._read_ahead = ReadAhead(limit=ahead)

    @property
    def server(self) -> str:
        return self.exchange.server

    def __enter__(self) -> KubeClient:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        self._read_ahead.close()
        self.exchange.close()

    def get(self, path: str, *, metadata_only: bool = False) -> dict[str, Any]:
        return self._call(req.get(path, metadata_only=metadata_only))

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
        """Pages of a collection GET (`limit` defaults to `page_size`); see kube/lists.py about expired
        tokens and pages too large. `lazy`: a page of whole objects keeps its `items` as text, each decoded
        as it is iterated; a metadata page is decoded once, its items slimmed (kube/pages.py).
        `read_ahead`: each next page is requested while the caller works on the one before it."""
        query = ListQuery(path, label_selector, field_selector, metadata_only)
        base = limit or self.options.page_size
        grows = read_ahead and metadata_only and limit is None
        memory = self.options.memory
        limits = PageLimits(
            base,
            self.options.grown_page_size if grows else None,
            page_bytes=memory.page_bytes if memory is not None else None,
        )
        decode_page = decoder(metadata_only=metadata_only, lazy=lazy)
        expected = [0]  # the bytes the list's next page is expected to hold, from the page before it

        def reach(response: requests.Response) -> dict[str, Any]:
            size = len(response.content)
            page, kept = decode_page(response, "GET", path)
            objects = page_objects(page)
            expected[0] = int(size * limits.note(objects, size, kept))
            return page

        def fetch(token: str | None, page_limit: int) -> dict[str, Any]:
            return reach(self._respond(query.page(token, page_limit)))

        def send_ahead(token: str | None, page_limit: int) -> Future[Arrived[dict[str, Any]]] | None:
            if token is None and not self.exchange.accepted:  # the first contact goes alone (`respond`)
                return None
            request = query.page(token, page_limit)
            # A first page's size is not known yet: it counts as a page of the budget's size.
            weight = expected[0] or (memory.page_bytes if memory is not None else 0)
            return self._read_ahead.send(lambda: self._respond(request), weight, reach)

        return ListPager(
            fetch,
            limits,
            send_ahead if read_ahead else None,
            on_restart=lambda: self.stats.record_retry("410"),
        )

    def list_at(
        self, path: str, *, resource_version: str, label_selector: str | None = None
    ) -> dict[str, Any]:
        """One unpaged metadata-only list of the collection exactly as it was at `resource_version`
        (`resourceVersionMatch=Exact`; a 410 when etcd compacted that version away)."""
        return self._call(ListQuery(path, label_selector).at(resource_version))

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
        force: bool = False,
    ) -> dict[str, Any]:
        """A PATCH; `force` (server-side apply only) takes over fields other managers own."""
        request = req.patch(
            path, body, patch_type=patch_type, dry_run=dry_run, field_manager=field_manager, force=force
        )
        return self._call(request)

    def create(
        self,
        path: str,
        body: Mapping[str, Any],
        *,
        dry_run: bool = False,
        field_manager: str = DEFAULT_FIELD_MANAGER,
    ) -> dict[str, Any]:
        """POST to a collection; of network failures only those where nothing was sent are retried."""
        return self._call(req.create(path, body, dry_run=dry_run, field_manager=field_manager))

    def evict(self, path: str, body: Mapping[str, Any], *, dry_run: bool = False) -> dict[str, Any]:
        """POST a policy/v1 Eviction to a pod's `eviction` subresource; a 429 is a PodDisruptionBudget's
        answer (its cause names the budget), raised at once."""
        return self._call(req.evict(path, body, dry_run=dry_run))

    def _respond(self, request: Request) -> requests.Response:
        return self.exchange.respond(request, cap=self.options.answer_cap)

    def _call(self, request: Request) -> dict[str, Any]:
        """The request's decoded JSON object."""
        return decode(self._respond(request), request.method, request.path)
