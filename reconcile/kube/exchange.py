"""How a request goes out and comes back: the one send policy around one HTTP exchange.

Every request passes the pass's time budget (the gate) and the client-side rate limit, and its answer is
read whole, up to the most bytes an answer may hold (`cap`: above it the answer is dropped unread and
`AnswerTooLarge` raised, so no answer can outgrow the pass's memory budget). What fails is answered here
once for every caller: bounded retries with full-jitter backoff (429 honouring Retry-After, 5xx,
connection errors), never retrying what a retry cannot fix (400, 403, 404, 409, 410, 422), one reload of
the credentials after a 401, and errors built from the server's `Status`.

A dead server is said at once: until the server has answered once, a refused connection (or a host that does
not resolve) gets one short retry, then UnreachableError names the address (a wrong address in a kubeconfig
fails in about a second, not after a minute of backoff); once it has answered, the same failure is retried
like any other (a kube-apiserver restarting mid-pass). Every retry is logged at WARNING, the default
verbosity, with its cause and wait, so a server that accepts but never answers shows while it is waited for.
A write whose earlier attempt may have been served though its answer never came is marked
(`ApiError.unanswered_before`): a failed precondition then may be about that attempt's own write.
"""

from __future__ import annotations

import logging
import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

import requests

from reconcile.errors import (
    AnswerTooLarge,
    CredentialsError,
    NoContact,
    PassCut,
    RehashError,
    Unauthorized,
    UnreachableError,
)
from reconcile.kube.answers import error_from, retries_allowed, retry_after
from reconcile.kube.auth import Credentials
from reconcile.kube.request import Request
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

# A server that never answered and refuses connections (a wrong address) gets this many retries, this far
# apart, before the pass ends with exit 4: a wrong address is said at once, a starting server waited for.
FIRST_CONTACT_RETRIES = 1
FIRST_CONTACT_RETRY_DELAY = 0.5
# Asked before each request attempt with its verb (get, list, patch, create): raises to refuse it, or
# returns the clock() time by which the attempt (and any retry) must be over.
Gate = Callable[[str], float]


@dataclass(frozen=True)
class Retries:
    """How long one call may take, and how its attempts are spaced; every duration in seconds."""

    request_timeout: float = 10.0
    """Connect and read timeout of one HTTP request."""
    deadline: float = 60.0
    """Most time spent on one call, retries and their sleeps included."""
    max_retries: int = 8
    backoff_base: float = 0.25
    backoff_max: float = 8.0


@dataclass
class Attempts:
    """What the attempts of one call have come to so far."""

    deadline: float
    retries: int = 0
    reauthenticated: bool = False
    failed: RehashError | None = None
    """Why the previous attempt is being retried."""
    unanswered: bool = False
    """An attempt was sent and its answer lost (or a 5xx): the server may have served it."""


class Exchange:
    """Sends requests through one shared `requests.Session` (a small thread pool may call it)."""

    def __init__(
        self,
        credentials: Credentials,
        retries: Retries,
        stats: ApiStats,
        *,
        qps: float = 0.0,
        pool_size: int = 8,
        user_agent: str,
        stop_at: float | None = None,
        gate: Gate | None = None,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.credentials = credentials
        self.retries = retries
        self.stats = stats
        self.user_agent = user_agent
        self.pool_size = pool_size
        self._stop_at = stop_at
        self._gate = gate
        self._clock = clock
        self._sleep = sleep
        self._random = random.Random()
        self._limiter = RateLimiter(qps, clock, sleep)
        self._session_lock = threading.Lock()
        self._retired: list[requests.Session] = []
        self._session = self._new_session()
        self.answered = False
        """Whether the server has answered once (any status): until then a refused connection fails fast."""
        self.accepted = False
        """Whether the server has answered once with the credentials accepted (any status but 401): until
        then an unreachable server or rejected credentials end the command (`NoContact`)."""

    @property
    def server(self) -> str:
        return self.credentials.server

    def close(self) -> None:
        with self._session_lock:
            for session in [*self._retired, self._session]:
                session.close()
            self._retired.clear()

    def respond(self, request: Request, *, cap: int | None = None) -> requests.Response:
        """The request's successful (2xx) response, its body read (at most `cap` bytes), retried as the
        module docstring says; the typed error of any other outcome. Until a request has been answered with
        the credentials accepted, an unreachable server or rejected credentials raise `NoContact` instead:
        the command's first request proves the server and the credentials, with no request of its own
        ahead of the work."""
        try:
            return self._attempts(request, cap)
        except (UnreachableError, Unauthorized) as exc:
            if self.accepted:
                raise
            raise NoContact(self._no_contact(exc)) from exc

    def _no_contact(self, error: UnreachableError | Unauthorized) -> RehashError:
        if isinstance(error, Unauthorized):
            source = self.credentials.source
            return Unauthorized(error.code, error.reason, f"credentials rejected by {self.server} ({source})")
        return error

    def _attempts(self, request: Request, cap: int | None) -> requests.Response:
        deadline = self._clock() + self.retries.deadline
        if self._stop_at is not None:
            deadline = min(deadline, self._stop_at)
        state = Attempts(deadline)
        while True:
            timeout = self._admit(request, state)
            try:
                response = self._send(request, timeout, cap)
            except BROKEN_ANSWERS as exc:
                self._retry_broken(request, exc, timeout, state)
                continue
            if self._accept(request, response, state):
                return response

    def _admit(self, request: Request, state: Attempts) -> float:
        """Wait for the rate limit and pass the budget's gate; the timeout of the attempt."""
        self._limiter.acquire()
        if self._gate is not None:
            try:
                state.deadline = min(state.deadline, self._gate(request.verb))
            except PassCut:
                if state.failed is not None:  # the retries ran out of time: that is the request's failure
                    raise state.failed from None
                raise
        return min(self.retries.request_timeout, max(state.deadline - self._clock(), 1.0))

    def _send(self, request: Request, timeout: float, cap: int | None) -> requests.Response:
        try:
            response = self._session.request(
                request.method,
                self.server + request.path,
                params=request.params or None,
                data=request.body,
                headers=self._headers(request),
                timeout=timeout,
                stream=True,
            )
            read_body(response, cap)
        except requests.exceptions.SSLError as exc:
            self.stats.record_request(request.verb, "error")
            trust = self.credentials.trust
            raise UnreachableError(
                f"{self.server}: TLS failure: {describe_error(exc)} (server certificate checked against "
                f"{trust})"
            ) from exc
        except AnswerTooLarge as exc:
            self.answered = self.accepted = True
            self.stats.record_request(request.verb, "too-large")
            raise AnswerTooLarge(f"{request.label}: {exc}") from None
        return response

    def _retry_broken(
        self, request: Request, exc: requests.RequestException, timeout: float, state: Attempts
    ) -> None:
        """An attempt that got no whole answer: retried, or UnreachableError."""
        self.stats.record_request(request.verb, "error")
        if isinstance(exc, CUT_OFF_ANSWERS):  # its body was cut off: the server had answered, 2xx
            self.answered = self.accepted = True
        sent = not (never_connected(exc) or isinstance(exc, requests.ConnectTimeout))
        state.unanswered = state.unanswered or sent
        cause = connection_cause(exc, timeout)
        self._retry_connection_failure(exc, cause=cause, request=request, state=state)
        state.failed = UnreachableError(f"cannot reach the API server at {self.server}: {cause}")
        state.retries += 1

    def _accept(self, request: Request, response: requests.Response, state: Attempts) -> bool:
        """Whether this answer is the request's (2xx); else sleeps before a retry or raises its error."""
        self.answered = True
        code = response.status_code
        if code != 401:
            self.accepted = True
        self.stats.record_request(request.verb, code, len(response.content))
        log.debug("%s -> %d", request.label, code)
        if 200 <= code < 300:
            return True
        error = error_from(response, request.method, request.path)
        error.unanswered_before = state.unanswered
        state.unanswered = state.unanswered or code >= 500
        if code == 401 and not state.reauthenticated:
            state.reauthenticated = True
            try:
                self._reauthenticate()
            except CredentialsError as reload_error:
                raise error from reload_error
            self.stats.record_retry("unauthorized")
            return False
        if code in request.retried and retries_allowed(error, state.retries):
            waited = retry_after(response) if code == 429 else None
            delay = self._backoff(state.retries) if waited is None else waited
            if self._may_retry(state.retries, delay, state.deadline):
                log.warning(
                    "%s: %d %s; retry %d in %.2fs",
                    request.label,
                    code,
                    error.reason,
                    state.retries + 1,
                    delay,
                )
                self._pause(str(code), delay)
                state.failed = error
                state.retries += 1
                return False
        raise error

    def _headers(self, request: Request) -> dict[str, str]:
        headers = {"Accept": request.accept, "User-Agent": self.user_agent}
        if request.content_type:
            headers["Content-Type"] = request.content_type
        authorization = self.credentials.authorization()  # runs the loader's refresh hook
        if authorization:
            headers["Authorization"] = authorization
        return headers

    def _new_session(self) -> requests.Session:
        session = self.credentials.new_session()
        adapter = ServerNameAdapter(
            self.credentials.server_name,
            pool_connections=1,
            pool_maxsize=self.pool_size,
            max_retries=0,
        )
        session.mount("https://", adapter)
        session.mount("http://", adapter)
        return session

    def _reauthenticate(self) -> None:
        self.credentials.reload()
        fresh = self._new_session()  # a reloaded exec plugin may have issued a new client certificate
        with self._session_lock:
            self._retired.append(self._session)
            self._session = fresh

    def _retry_connection_failure(
        self, exc: requests.RequestException, *, cause: str, request: Request, state: Attempts
    ) -> None:
        """Log and sleep before the next attempt, or raise UnreachableError when it may not or cannot happen.

        A server that has not answered once in this client's life and refuses the connection (or whose
        host does not resolve) gets one short retry, then the pass ends (a wrong address is said at once);
        once it has answered, it is retried with backoff like any failure (a server restarting mid-pass).
        A POST that may have reached the server (read timeout, reset) is not sent again (no double create).
        """
        reason = "timeout" if isinstance(exc, requests.Timeout) else "connection"
        retries = state.retries
        first_contact = not self.answered and never_connected(exc)
        if first_contact:
            delay = FIRST_CONTACT_RETRY_DELAY if retries < FIRST_CONTACT_RETRIES else None
        else:
            delay = self._backoff(retries)
        resendable = not request.creates or isinstance(exc, requests.ConnectTimeout) or never_connected(exc)
        if delay is None or not (resendable and self._may_retry(retries, delay, state.deadline)):
            attempts = f" after {retries + 1} attempts" if retries else ""
            raise UnreachableError(
                f"cannot reach the API server at {self.server}{attempts}: {cause}"
            ) from exc
        log.warning(
            "API server %s: %s on %s; retry %d in %.2fs",
            self.server,
            cause,
            request.label,
            retries + 1,
            delay,
        )
        self._pause(reason, delay)

    def _backoff(self, retries: int) -> float:
        """Full jitter: uniform in [0, min(backoff_max, base * 2**retries)]."""
        ceiling = min(self.retries.backoff_max, self.retries.backoff_base * (2 ** min(retries, 30)))
        return self._random.uniform(0.0, ceiling)

    def _may_retry(self, retries: int, delay: float, deadline: float) -> bool:
        return retries < self.retries.max_retries and self._clock() + delay < deadline

    def _pause(self, reason: str, delay: float) -> None:
        self.stats.record_retry(reason)
        if delay > 0:
            self._sleep(delay)
