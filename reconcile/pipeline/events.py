"""Events on workloads, in the API the server offers: asked once, when the pass has its first Event to send.

A steady pass sends no Event and so no request for this; a pass that does asks
`GET /apis/events.k8s.io/v1` (one small discovery document) before its first Event, and every later Event
of the pass uses the answer. A server without that API (404), or one that does not answer the question,
gets core/v1 Events, which every server takes. A role that may create only core/v1 Events (RBAC written
before kube-rehash used events.k8s.io) gets one 403, a warning saying what to grant, and core/v1 Events for
the rest of the pass.
"""

from __future__ import annotations

import logging
import threading
from datetime import datetime
from typing import Any

from reconcile.errors import Forbidden, NotFound, PassCut, RehashError
from reconcile.kube.client import KubeClient
from reconcile.model.workload import Listed
from reconcile.policy.audit import EVENTS_V1, EventApi, build_event, events_path, serves_events_v1

log = logging.getLogger(__name__)


class EventSender:
    """Sends one pass's Events; the Event API is found on first use (thread-safe: writes run on a pool)."""

    def __init__(self, client: KubeClient, *, now: datetime, dry_run: bool) -> None:
        self.client = client
        self.now = now
        self.dry_run = dry_run
        self._api: EventApi | None = None
        self._lock = threading.Lock()

    def api(self) -> EventApi:
        with self._lock:
            if self._api is None:
                self._api = self.ask()
            return self._api

    def ask(self) -> EventApi:
        try:
            served = serves_events_v1(self.client.get(f"/apis/{EVENTS_V1}"))
        except NotFound:
            served = False
        except PassCut:
            raise
        except RehashError as exc:
            log.info("could not tell whether the server serves %s (%s): core/v1 Events", EVENTS_V1, exc)
            served = False
        return EventApi.EVENTS_V1 if served else EventApi.CORE

    def send(
        self,
        target: Listed,
        *,
        reason: str,
        message: str,
        warning: bool,
        action: str,
        related: dict[str, Any] | None,
    ) -> None:
        """POST one Event; raises what the API server answered (PassCut when the pass may not send it)."""
        api = self.api()
        event = build_event(
            target,
            reason=reason,
            message=message,
            warning=warning,
            now=self.now,
            action=action,
            related=related,
            api=api,
        )
        try:
            self.client.create(events_path(target, api), event, dry_run=self.dry_run)
        except Forbidden:
            if api is EventApi.CORE:
                raise
            with self._lock:
                demoted, self._api = self._api is EventApi.EVENTS_V1, EventApi.CORE
            if demoted:
                log.warning(
                    "creating %s Events is forbidden: core/v1 Events for the rest of the pass "
                    "(grant create on events in the API group events.k8s.io)",
                    EVENTS_V1,
                )
            self.send(target, reason=reason, message=message, warning=warning, action=action, related=related)
