"""Where a request's Authorization header comes from, and when it is fetched again.

It exists so `Credentials.authorization()` (asked on every request) is cheap and refreshes only when due:
a fixed token or basic auth never changes; a token file (kubeconfig `tokenFile`, the in-cluster service
account's projected token) is re-read at most once per interval because it rotates; an exec plugin runs
again once its credential nears expiry. The caller holds a lock around every call.
"""

from __future__ import annotations

import datetime
import logging
import time
from typing import Protocol

from reconcile.errors import CredentialsError
from reconcile.kube.exec_plugin import ExecCredential, ExecPlugin

log = logging.getLogger(__name__)


class HeaderSource(Protocol):
    """Gives the Authorization header value (None: none to send) and an exec-issued client cert pair."""

    def header(self) -> str | None: ...

    def client_cert(self) -> tuple[str, str] | None: ...


class StaticHeader:
    """A header that never changes: a kubeconfig `token`, or `username`/`password` as basic auth."""

    def __init__(self, value: str) -> None:
        self._value = value

    def header(self) -> str | None:
        """The fixed header value."""
        return self._value

    def client_cert(self) -> tuple[str, str] | None:
        """Never a certificate."""
        return None


class FileToken:
    """A bearer token read from a file, read again at most once per `interval` (tokens rotate)."""

    def __init__(self, path: str, interval: datetime.timedelta, scheme: str, where: str) -> None:
        self._path, self._interval, self._scheme = path, interval.total_seconds(), scheme
        self._token = self._read()
        if self._token is None:
            raise CredentialsError(f"{where}: token file {path} cannot be read or is empty")
        self._read_at = time.monotonic()

    def header(self) -> str | None:
        """`<scheme> <token>`, the file re-read when the interval has passed (the last token kept if not)."""
        if time.monotonic() - self._read_at >= self._interval:
            token = self._read()
            self._read_at = time.monotonic()
            if token is None:
                log.warning(
                    "token file %s cannot be read or is empty; keeping the previous token", self._path
                )
            else:
                self._token = token
        return f"{self._scheme} {self._token}"

    def client_cert(self) -> tuple[str, str] | None:
        """Never a certificate."""
        return None

    def _read(self) -> str | None:
        try:
            with open(self._path, encoding="utf-8") as handle:
                return handle.read().strip() or None
        except (OSError, UnicodeDecodeError):
            return None


class ExecToken:
    """An exec plugin's credential, cached and fetched again once it nears its expirationTimestamp."""

    def __init__(self, plugin: ExecPlugin) -> None:
        self._plugin = plugin
        self._credential: ExecCredential = plugin.run()

    def header(self) -> str | None:
        """`Bearer <token>` (None for a certificate), running the plugin again when the credential is due."""
        now = datetime.datetime.now(datetime.UTC)
        if self._credential.is_due(now):
            try:
                self._credential = self._plugin.run()
            except CredentialsError as exc:
                expires = self._credential.expires
                if expires is None or now >= expires:
                    raise
                log.warning("%s; the current credential is used until it expires at %s", exc, expires)
        token = self._credential.token
        return f"Bearer {token}" if token else None

    def client_cert(self) -> tuple[str, str] | None:
        """The certificate and key files the plugin issued, if it issued a certificate."""
        return self._credential.cert
