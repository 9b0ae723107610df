"""Opening a session with the API server for a command: credentials, client options, the budget's gate.

Shared by the commands that talk to a cluster (`run`, `plan`, `explain`, and the demo's passes), below
the command line so none of them imports `cli`.
"""

from __future__ import annotations

import base64
import binascii
import logging
import time
from pathlib import Path

from reconcile.errors import ConfigError, PassCut, RehashError
from reconcile.kube.client import KubeClient
from reconcile.kube.memory import MemoryBudget
from reconcile.pipeline.budget import Budget
from reconcile.settings.table import Settings

log = logging.getLogger("kube-rehash")


def connect(settings: Settings, budget: Budget | None = None) -> KubeClient:
    """An API client for the settings. Nothing is sent yet: the command's first request proves that the
    server answers and accepts the credentials, or ends the command with exit 4 (`NoContact`).

    With a `budget`, every request asks it first (the pass's one time budget)."""
    from reconcile.kube.auth import AuthOptions, load_credentials
    from reconcile.kube.client import ClientOptions
    from reconcile.kube.page_size import GROWN_PAGE_SIZE, first_page_size

    credentials = load_credentials(AuthOptions(settings.connection.kubeconfig, settings.connection.context))
    limits, reading = settings.limits, settings.reading
    options = ClientOptions(
        request_timeout=limits.request_timeout,
        page_size=first_page_size(reading.page_size),
        grown_page_size=GROWN_PAGE_SIZE if reading.page_size is None else None,
        qps=limits.qps,
        pool_size=max(4, limits.concurrency * 2),
        memory=memory_budget(limits.memory_budget),
    )
    client = KubeClient(
        credentials,
        options,
        stop_at=None if budget is not None else time.monotonic() + settings.limits.timeout,
        gate=budget.admit if budget is not None else None,
    )
    log.debug("API server %s, credentials from %s", client.server, credentials.source)
    return client


def memory_budget(setting: int | None) -> MemoryBudget:
    """The pass's memory budget (kube/memory.py): the setting, else half its cgroup's limit, else the
    default; what this process holds now comes off the top. Said at -v."""
    from reconcile.kube.memory import budget_of, resident_bytes, total_budget

    total, resident = total_budget(setting), resident_bytes()
    budget = budget_of(
        total.size, resident, where=total.source, strict=setting is not None, limited=total.limited
    )
    mib = 1024 * 1024
    log.info(
        "memory: %d MiB (%s), the program holding %d MiB; %s",
        total.size // mib,
        total.source,
        resident // mib,
        budget.describe(),
    )
    return budget


HASH_KEY_DATA = "key"
"""The data key of the hash-key Secret (the chart's and cronjob/'s `kube-rehash-hash-key`)."""


def read_hash_key(settings: Settings, client: KubeClient | None = None) -> bytes | None:
    """The pass's hash key: from `hashKeyFile`, or from `hashKeySecret` with one GET through `client`
    (the caller's own access). Errors name the file or Secret, never the key."""
    if settings.reading.hash_key_secret is not None and client is not None:
        return read_key_secret(settings.reading.hash_key_secret, client)
    if settings.reading.hash_key_file is None:
        return None
    try:
        key = Path(settings.reading.hash_key_file).read_bytes().strip()
    except OSError as exc:
        raise ConfigError(
            f"hashKeyFile {settings.reading.hash_key_file}: cannot read it ({exc.strerror})"
        ) from None
    return checked_key(key, f"hashKeyFile {settings.reading.hash_key_file}")


def read_key_secret(ref: str, client: KubeClient) -> bytes:
    namespace, _, name = ref.partition("/")
    where = f"hashKeySecret {ref}"
    try:
        obj = client.get(f"/api/v1/namespaces/{namespace}/secrets/{name}")
    except PassCut:
        raise
    except RehashError as exc:
        raise ConfigError(f"{where}: cannot read it ({exc})") from None
    data = obj.get("data")
    encoded = data.get(HASH_KEY_DATA) if isinstance(data, dict) else None
    if not isinstance(encoded, str):
        raise ConfigError(f"{where}: the Secret has no data key {HASH_KEY_DATA!r}")
    try:
        key = base64.b64decode(encoded, validate=True).strip()
    except binascii.Error:
        raise ConfigError(f"{where}: data key {HASH_KEY_DATA!r} is not valid base64") from None
    return checked_key(key, where)


def checked_key(key: bytes, where: str) -> bytes:
    if len(key) < 16:
        raise ConfigError(f"{where}: the key must have at least 16 bytes")
    return key
