"""Opening a session with the API server for a command: credentials, client options, the budget's gate.

Shared by the commands that talk to a cluster (`run`, `plan`, `explain`, and the demo's passes), below
the command line so none of them imports `cli`.
"""

from __future__ import annotations

import logging
import time
from pathlib import Path

from reconcile.pipeline.budget import Budget
from reconcile.errors import ConfigError, Unauthorized
from reconcile.kube.client import KubeClient
from reconcile.config.settings import Settings

log = logging.getLogger("kube-rehash")


def connect(settings: Settings, budget: Budget | None = None) -> KubeClient:
    """An API client for the settings, after proving the server answers and accepts the credentials.

    With a `budget`, every request asks it first (the pass's one time budget)."""
    from reconcile.kube.auth import AuthOptions, load_credentials
    from reconcile.kube.client import ClientOptions

    credentials = load_credentials(AuthOptions(settings.kubeconfig, settings.context))
    options = ClientOptions(
        request_timeout=settings.request_timeout,
        page_size=settings.page_size,
        qps=settings.qps,
        pool_size=max(4, settings.concurrency * 2),
    )
    client = KubeClient(
        credentials,
        options,
        stop_at=None if budget is not None else time.monotonic() + settings.timeout,
        gate=budget.admit if budget is not None else None,
    )
    try:
        client.check_connection()
    except Unauthorized as exc:
        raise Unauthorized(
            exc.code, exc.reason, f"credentials rejected by {client.server} ({credentials.source})"
        ) from None
    log.debug("connected to %s using %s", client.server, credentials.source)
    return client


def read_hash_key(settings: Settings) -> bytes | None:
    if settings.hash_key_file is None:
        return None
    try:
        key = Path(settings.hash_key_file).read_bytes().strip()
    except OSError as exc:
        raise ConfigError(f"hashKeyFile {settings.hash_key_file}: cannot read it ({exc.strerror})") from None
    if len(key) < 16:
        raise ConfigError(f"hashKeyFile {settings.hash_key_file}: the key must have at least 16 bytes")
    return key
