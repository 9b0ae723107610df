"""Sending the notify webhook's document: one POST with a timeout, retried with backoff within the pass.

Why outside kube/: the webhook is not the API server, and nothing of the API client applies to it (no
credentials, no rate limit, no Status bodies). It is the one named exception to the import contract
"Only kube/ speaks HTTP" (.importlinter), kept to this module.

The URL is a credential (Slack's and Teams' incoming-webhook URLs embed their token): it is never
logged, and no error raised here contains it. `requests` puts the URL into its exceptions' text, so an
error says only what happened (an HTTP status, a timeout, `[Errno 111] Connection refused`); urllib3
logs request paths at debug level (`-vvv`), so a filter on its loggers blanks out the URL's parts.

Delivery is at least once: a POST whose answer was lost (a read timeout, a reset connection) is sent
again, since a missed notification is worse than a repeated one; receivers may de-duplicate on the
document's `pass.id`. Redirects are not followed (a 3xx is a failure): a moved webhook is a
configuration to fix, and following one would re-send the body to a host nobody configured.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from urllib.parse import urlsplit

import requests

from reconcile.errors import RehashError

log = logging.getLogger(__name__)

RETRIED_STATUS = frozenset({408, 425, 429, 500, 502, 503, 504})
MAX_ATTEMPTS = 4
BACKOFF_BASE = 0.5
BACKOFF_MAX = 8.0
MIN_ATTEMPT_SECONDS = 0.5
"""An attempt that would have less time than this before the deadline is not started."""
CONTENT_TYPE = "application/json"

_CAUSES = (
    re.compile(r"\[SSL[^\]]*\][^()'\"]*"),
    re.compile(r"\[Errno -?\d+\][^()'\"]*"),
    re.compile(r"(?:Read|Connect) timed out"),
)


class _Redactor(logging.Filter):
    """Replaces the registered webhook URLs' parts in urllib3's log records with `<webhook>`."""

    def __init__(self) -> None:
        super().__init__()
        self.secrets: set[str] = set()

    def add(self, url: str) -> None:
        parts = urlsplit(url)
        path = parts.path + (f"?{parts.query}" if parts.query else "")
        self.secrets.update(s for s in (url, path, parts.netloc) if len(s) > 1)

    def filter(self, record: logging.LogRecord) -> bool:
        if self.secrets:
            message = record.getMessage()
            if any(secret in message for secret in self.secrets):
                for secret in sorted(self.secrets, key=len, reverse=True):
                    message = message.replace(secret, "<webhook>")
                record.msg, record.args = message, ()
        return True


REDACTOR = _Redactor()
for _name in ("urllib3.connectionpool", "urllib3.connection", "urllib3.util.retry"):
    logging.getLogger(_name).addFilter(REDACTOR)


class WebhookError(RehashError):
    """The document was not delivered. The message never contains the URL."""


def check_url(url: str) -> str | None:
    """Why `url` is not a webhook URL (an http(s) URL with a host), or None. Never quotes it."""
    try:
        parts = urlsplit(url)
        host = parts.hostname
    except ValueError:
        return "is not a URL"
    if parts.scheme not in ("http", "https") or not host or any(c.isspace() for c in url):
        return "is not an http(s) URL"
    return None


@dataclass
class Sender:
    """POSTs documents to one URL. `may_start` is asked before every attempt (the pass's budget) and
    `deadline` (on `clock`) bounds every attempt and every pause between them."""

    url: str = field(repr=False)
    timeout: float
    may_start: Callable[[], bool]
    deadline: float
    user_agent: str = "kube-rehash"
    clock: Callable[[], float] = time.monotonic
    sleep: Callable[[float], None] = time.sleep
    session: requests.Session = field(default_factory=requests.Session, repr=False)
    attempts: int = field(init=False, default=0)

    def __post_init__(self) -> None:
        REDACTOR.add(self.url)

    def post(self, body: bytes) -> int:
        """Deliver `body`; return the 2xx status, or raise WebhookError (after the retries the deadline
        and MAX_ATTEMPTS allow; never for a 4xx other than 408, 425 and 429)."""
        headers = {"Content-Type": CONTENT_TYPE, "User-Agent": self.user_agent}
        problem = "not sent: the pass had no time left"
        for attempt in range(MAX_ATTEMPTS):
            left = self.deadline - self.clock()
            if not self.may_start() or left < MIN_ATTEMPT_SECONDS:
                break
            self.attempts = attempt + 1
            delay: float | None = None
            try:
                response = self.session.post(
                    self.url,
                    data=body,
                    headers=headers,
                    timeout=min(self.timeout, left),
                    allow_redirects=False,
                )
            except requests.RequestException as exc:
                problem = describe(exc)
            else:
                code = response.status_code
                if 200 <= code < 300:
                    log.info("webhook delivered (HTTP %d, attempt %d)", code, self.attempts)
                    return code
                problem = f"HTTP {code} {response.reason or ''}".rstrip()
                if code not in RETRIED_STATUS:
                    break
                delay = retry_after(response)
            if attempt + 1 == MAX_ATTEMPTS:
                break
            pause = backoff(attempt) if delay is None else delay
            if self.clock() + pause + MIN_ATTEMPT_SECONDS > self.deadline:
                break
            log.info("webhook attempt %d failed (%s); retrying in %.1fs", self.attempts, problem, pause)
            self.sleep(pause)
        tries = f" after {self.attempts} attempts" if self.attempts > 1 else ""
        raise WebhookError(f"webhook delivery failed{tries}: {problem}")

    def close(self) -> None:
        self.session.close()


def backoff(attempt: int) -> float:
    """0.5 s, 1 s, 2 s, ... at most BACKOFF_MAX: a few retries fit a pass's remaining budget."""
    return float(min(BACKOFF_MAX, BACKOFF_BASE * 2**attempt))


def retry_after(response: requests.Response) -> float | None:
    try:
        return max(0.0, float(response.headers.get("Retry-After", "").strip()))
    except ValueError:
        return None


def describe(exc: requests.RequestException) -> str:
    """What went wrong, without the URL `requests` writes into its exceptions."""
    if isinstance(exc, requests.exceptions.SSLError):
        what = "TLS failure"
    elif isinstance(exc, requests.Timeout):
        what = "timed out"
    elif isinstance(exc, requests.ConnectionError):
        what = "connection failed"
    else:
        what = type(exc).__name__
    text = str(exc)
    for pattern in _CAUSES:
        match = pattern.search(text)
        if match:
            return f"{what} ({match.group(0).strip(' :,')})"
    return what
