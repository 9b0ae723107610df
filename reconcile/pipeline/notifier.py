"""The notify webhook's place in a pass: one POST of the held notifications, before their records.

Why held: a notification's record (the new hash on the workload's metadata) is what tells the next pass
that the change was notified. Written before the webhook answered, a failed delivery would be lost for
good; so while a webhook is configured, the batches leave `notify` decisions unwritten (policy/limits.py)
and, once the batches are done, this module reads the URL from its Secret (one GET, only when something
is pending) and POSTs one document listing every held change (reconcile/output/notice.py); only after a
2xx does the pass write the held records and their ConfigChanged Events (pipeline/writes.py). When
anything fails (the Secret, the URL in it, the POST), nothing is written: the rows stay `notify` with the
error in their reason, one `failed` row (kind `Webhook`) makes the pass exit 1, and the next pass finds the
same change and notifies again. A steady pass holds nothing and sends nothing. Under --dry-run nothing is
held and nothing is sent.
"""

from __future__ import annotations

import base64
import binascii
import logging
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime

from reconcile import __version__
from reconcile.errors import PassCut, RehashError, Stopped
from reconcile.kube.client import KubeClient
from reconcile.model.choices import DryRun
from reconcile.output.notice import Change, PassIdentity, build_document, encode
from reconcile.output.webhook import Sender, WebhookError, check_url
from reconcile.pipeline.budget import Budget
from reconcile.policy.planned import Planned
from reconcile.settings.table import Settings

log = logging.getLogger(__name__)

WEBHOOK_ROW_KIND = "Webhook"
"""The kind of the `failed` row a failed delivery adds to the report (name `*`, the Secret's namespace)."""
WRITE_TIME = 2.0
"""Seconds before the budget's end by which the POST must be over, kept for the records' writes."""

MakeSender = Callable[[str, float, Budget], Sender]


@dataclass(frozen=True)
class Delivery:
    """What delivering the held notifications came to: delivered, refused with an error (nothing may be
    written), or cut short by the pass's budget or a stop (nothing sent)."""

    delivered: bool
    error: str | None = None
    cut: PassCut | None = None


def default_sender(url: str, timeout: float, budget: Budget) -> Sender:
    end = budget.end - min(WRITE_TIME, budget.reserve / 2)
    return Sender(
        url,
        timeout,
        may_start=budget.may_write,
        deadline=end,
        user_agent=f"kube-rehash/{__version__}",
        clock=budget.clock,
    )


class Notifier:
    """Delivers one pass's held notifications through the webhook the settings name."""

    def __init__(
        self,
        settings: Settings,
        client: KubeClient,
        budget: Budget,
        *,
        now: datetime,
        make_sender: MakeSender = default_sender,
    ) -> None:
        assert settings.notify.webhook_secret is not None
        self.namespace, _, self.secret = settings.notify.webhook_secret.partition("/")
        self.settings = settings
        self.client = client
        self.budget = budget
        self.make_sender = make_sender
        shard = str(settings.scope.shard) if settings.scope.shard else None
        self.identity = PassIdentity(str(uuid.uuid4()), now, shard, settings.notify.webhook_cluster)

    @classmethod
    def for_pass(
        cls, settings: Settings, client: KubeClient, budget: Budget, *, now: datetime
    ) -> Notifier | None:
        """A notifier when a webhook is configured and the pass writes (no dry run), else None."""
        if settings.notify.webhook_secret is None or settings.output.dry_run is not DryRun.NONE:
            return None
        return cls(settings, client, budget, now=now)

    def deliver(self, held: Sequence[Planned]) -> Delivery:
        """One POST listing every held change (nothing when none is held)."""
        if not held:
            return Delivery(True)
        if self.budget.stop.is_set():
            return Delivery(False, cut=Stopped("stopped"))
        try:
            url = self.read_url()
            sender = self.make_sender(url, self.settings.notify.webhook_timeout, self.budget)
        except PassCut as exc:
            return Delivery(False, cut=exc)
        except RehashError as exc:
            return self.failed(held, str(exc))
        changes = [Change.of(p.full, p.decision) for p in held if p.full is not None]
        document = build_document(changes, self.identity, sender=f"kube-rehash {__version__}")
        try:
            sender.post(encode(document))
        except WebhookError as exc:
            return self.failed(held, str(exc))
        finally:
            sender.close()
        log.info("webhook: %d change(s) delivered; recording them", len(held))
        return Delivery(True)

    def read_url(self) -> str:
        """The URL from the Secret's key (one GET). Errors name the Secret and key, never the value."""
        where = f"the webhook Secret {self.namespace}/{self.secret}"
        try:
            obj = self.client.get(f"/api/v1/namespaces/{self.namespace}/secrets/{self.secret}")
        except PassCut:
            raise
        except RehashError as exc:
            raise WebhookError(f"reading {where} failed: {exc}") from None
        data = obj.get("data")
        encoded = data.get(self.settings.notify.webhook_key) if isinstance(data, dict) else None
        if not isinstance(encoded, str):
            raise WebhookError(f"{where} has no key {self.settings.notify.webhook_key!r}")
        try:
            url = base64.b64decode(encoded, validate=True).decode("utf-8").strip()
        except (binascii.Error, UnicodeDecodeError):
            url = ""
        problem = check_url(url)
        if problem:
            raise WebhookError(f"the key {self.settings.notify.webhook_key!r} of {where} {problem}")
        return url

    def failed(self, held: Sequence[Planned], error: str) -> Delivery:
        """Nothing may be written: the rows say why, one failed row makes the pass exit 1."""
        log.warning("%s; %d notification(s) not recorded, the next pass sends them again", error, len(held))
        return Delivery(False, error=error)
