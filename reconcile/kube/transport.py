"""Transport pieces under the API client: request accounting, the client-side rate limit, the TLS
server name a kubeconfig may set apart from the server URL (`tls-server-name`), and the short words for
why a connection failed that retries are logged with and errors end in."""

from __future__ import annotations

import errno
import re
import threading
from collections import Counter
from collections.abc import Callable
from typing import Any

import requests
from requests.adapters import HTTPAdapter
from urllib3.exceptions import NameResolutionError, NewConnectionError

from reconcile.errors import MAX_BODY_EXCERPT, AnswerTooLarge


class ServerNameAdapter(HTTPAdapter):
    """An HTTPAdapter that, given a server name, sends it as SNI and checks the server's certificate
    against it instead of the URL's host (kubeconfig `tls-server-name`, e.g. a server reached by IP)."""

    def __init__(self, server_name: str | None, **kwargs: Any) -> None:
        self.server_name = server_name or None
        super().__init__(**kwargs)

    def init_poolmanager(self, *args: Any, **pool_kwargs: Any) -> None:
        if self.server_name:
            pool_kwargs["server_hostname"] = self.server_name
        super().init_poolmanager(*args, **pool_kwargs)

    def proxy_manager_for(self, proxy: str, **proxy_kwargs: Any) -> Any:
        if self.server_name:
            proxy_kwargs["server_hostname"] = self.server_name
        return super().proxy_manager_for(proxy, **proxy_kwargs)


READ_PIECE = 1024 * 1024
"""Decoded bytes read at a time from a streamed answer: large pieces, as few handovers of the GIL as a
bounded read allows."""


def read_body(response: requests.Response, cap: int | None = None) -> None:
    """Read a streamed response's whole body now, as `requests` does for a request that does not stream,
    but in pieces of `READ_PIECE` rather than 10 KiB: each piece takes the GIL back from the pass's one busy
    thread, so a page read ahead in small pieces arrives late (docs/engineering/performance-history.md, "Pages
    sent ahead"). Past `cap` bytes (decoded: gzip undone) the answer is dropped unread and `AnswerTooLarge`
    raised, so no answer outgrows the pass's memory budget, whatever the server sends. The other errors are
    `requests`' own, as without streaming."""
    pieces: list[bytes] = []
    size = 0
    for piece in response.iter_content(chunk_size=READ_PIECE):
        size += len(piece)
        if cap is not None and size > cap:
            response.close()
            raise AnswerTooLarge(f"the answer passed {cap // 1024} KiB, the most one answer may hold")
        pieces.append(piece)
    # `_content` is the attribute `Response.content` fills from the same iterator.
    response._content = b"".join(pieces)
    pieces.clear()


class ApiStats:
    """Thread-safe request counters for the run report and metrics."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._requests: Counter[tuple[str, str]] = Counter()
        self._retries: Counter[str] = Counter()
        self._bytes = 0

    def record_request(self, verb: str, status: int | str, received: int = 0) -> None:
        """Count one HTTP exchange; `status` is the code, or "error" when no response came back."""
        with self._lock:
            self._requests[(verb, str(status))] += 1
            self._bytes += received

    def record_retry(self, reason: str) -> None:
        with self._lock:
            self._retries[reason] += 1

    @property
    def retries_total(self) -> int:
        with self._lock:
            return sum(self._retries.values())

    def snapshot(self) -> dict[str, object]:
        """JSON-friendly copy: {"requests": {verb: {status: n}}, "retries": {reason: n}, totals, bytes}."""
        with self._lock:
            by_verb: dict[str, dict[str, int]] = {}
            for (verb, status), count in sorted(self._requests.items()):
                by_verb.setdefault(verb, {})[status] = count
            return {
                "requests": by_verb,
                "requests_total": sum(self._requests.values()),
                "retries": dict(sorted(self._retries.items())),
                "retries_total": sum(self._retries.values()),
                "bytes_received": self._bytes,
            }


class RateLimiter:
    """Token bucket shared by all threads: `qps` requests per second, bursts up to max(1, qps)."""

    def __init__(self, qps: float, clock: Callable[[], float], sleep: Callable[[float], None]) -> None:
        self._qps = qps
        self._capacity = max(1.0, qps)
        self._tokens = self._capacity
        self._clock = clock
        self._sleep = sleep
        self._last = clock()
        self._lock = threading.Lock()

    def acquire(self) -> None:
        """Take one token, sleeping until it is available (reserved under the lock, slept outside)."""
        if self._qps <= 0:
            return
        with self._lock:
            now = self._clock()
            self._tokens = min(self._capacity, self._tokens + (now - self._last) * self._qps)
            self._last = now
            self._tokens -= 1.0
            wait = -self._tokens / self._qps if self._tokens < 0 else 0.0
        if wait > 0:
            self._sleep(wait)


# The request got no whole answer: no connection, no answer in time, or a body cut off mid-stream (a
# server killed while it was sending a page). Each is retried like a reset; a POST is not sent again.
BROKEN_ANSWERS: tuple[type[requests.RequestException], ...] = (
    requests.ConnectionError,
    requests.Timeout,
    requests.exceptions.ChunkedEncodingError,
    requests.exceptions.ContentDecodingError,
)


CUT_OFF_ANSWERS: tuple[type[requests.RequestException], ...] = (
    requests.exceptions.ChunkedEncodingError,
    requests.exceptions.ContentDecodingError,
)
"""Of `BROKEN_ANSWERS`, those that came after the server's status line and headers: it did answer."""


def never_connected(exc: requests.RequestException) -> bool:
    """True when the connection was never established (refused, DNS), so even a POST may be sent again."""
    return isinstance(_reason(exc), NewConnectionError)


def connection_cause(exc: requests.RequestException, timeout: float) -> str:
    """Why a request got no answer, in a few words free of URLs: "connection refused", "no answer within
    10s (read timeout)", "host not found (...)", else the errno or SSL text of the failure."""
    reason = _reason(exc)
    if isinstance(exc, requests.ConnectTimeout):
        return f"no connection within {timeout:g}s (connect timeout)"
    if isinstance(exc, requests.ReadTimeout):
        return f"no answer within {timeout:g}s (read timeout)"
    if isinstance(reason, NameResolutionError):
        return f"host not found ({describe_error(reason)})"
    if isinstance(reason, NewConnectionError) and _errno(reason) == errno.ECONNREFUSED:
        return "connection refused"
    if isinstance(exc, (requests.exceptions.ChunkedEncodingError, requests.exceptions.ContentDecodingError)):
        return "the answer was cut off mid-body (connection broken)"
    return describe_error(exc)


def _reason(exc: BaseException) -> object:
    return getattr(exc.args[0], "reason", None) if exc.args else None


def _errno(exc: BaseException) -> int | None:
    """The errno of the OSError behind a failed connection (urllib3 keeps it as the cause)."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, OSError) and seen.errno is not None:
            return seen.errno
        seen = seen.__cause__ or seen.__context__
    match = re.search(r"\[Errno (-?\d+)\]", str(exc))
    return int(match.group(1)) if match else None


_CAUSES = (
    re.compile(r"\[(?:SSL|X509)[^\]]*\][^()'\"]*"),
    re.compile(r"\[Errno -?\d+\][^()'\"]*"),
    re.compile(r"(?:Read|Connect) timed out"),
)


def describe_error(exc: BaseException) -> str:
    """A short cause for a connection failure (e.g. "[Errno 111] Connection refused"), free of URLs."""
    text = str(exc)
    for pattern in _CAUSES:
        match = pattern.search(text)
        if match:
            flat = " ".join(match.group(0).strip(" :,").split())
            return flat if len(flat) <= MAX_BODY_EXCERPT else flat[: MAX_BODY_EXCERPT - 3] + "..."
    return type(exc).__name__
