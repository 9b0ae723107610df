"""The notify webhook's place in a pass: notifications held, one POST, and only then their writes.

Why held: a notification's record (the new hash on the workload's metadata) is what tells the next pass
that the change was notified. Written before the webhook answered, a failed delivery would be lost for
good; so while a webhook is configured, the batches leave `notify` decisions unwritten (the Writer holds
them) and, once the batches are done, this module reads the URL from its Secret (one GET, only when
something is pending), POSTs one document listing every held change (reconcile/output/notice.py), and after a
2xx writes the held records and their ConfigChanged Events. When anything fails (the Secret, the URL in
it, the POST), nothing is written: the rows stay `notify` with the error in their reason, one `failed`
row (kind `Webhook`) makes the pass exit 1, and the next pass finds the same change and notifies again.
A steady pass holds nothing and sends nothing. Under --dry-run nothing is held and nothing is sent.
"""

from __future__ import annotations

import base64
import binascii
import logging
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime

from reconcile import __version__
from reconcile.config.settings import Settings
from reconcile.errors import PassCut, RehashError, Stopped
from reconcile.kube.client import KubeClient
from reconcile.model.workload import Target
from reconcile.output.notice import Change, PassIdentity, build_document, encode
from reconcile.output.report import Row
from reconcile.output.webhook import Sender, WebhookError, check_url
from reconcile.pipeline.budget import Budget
from reconcile.pipeline.write import Writer
from reconcile.policy.decide import Planned
from reconcile.policy.decision import Decision, defer_for_stop

log = logging.getLogger(__name__)

WEBHOOK_ROW_KIND = "Webhook"
"""The kind of the `failed` row a failed delivery adds to the report (name `*`, the Secret's namespace)."""
WRITE_TIME = 2.0
"""Seconds before the budget's end by which the POST must be over, kept for the records' writes."""

Held = tuple[Target, Decision]
MakeSender = Callable[[str, float, Budget], Sender]


@dataclass(frozen=True)
class Outcome:
    """What delivering the held notifications did: their rows (replacing the batches' rows), any
    `failed` row, and the uids of the workloads whose records were not written."""

    rows: list[Row]
    failures: list[Row]
    unwritten: frozenset[str]


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
        writer: Writer,
        budget: Budget,
        *,
        now: datetime,
        make_sender: MakeSender = default_sender,
    ) -> None:
        assert settings.webhook_secret is not None
        self.namespace, _, self.secret = settings.webhook_secret.partition("/")
        self.settings = settings
        self.client = client
        self.writer = writer
        self.budget = budget
        self.make_sender = make_sender
        shard = str(settings.shard) if settings.shard else None
        self.identity = PassIdentity(str(uuid.uuid4()), now, shard, settings.webhook_cluster)

    @classmethod
    def for_pass(
        cls, settings: Settings, client: KubeClient, writer: Writer, budget: Budget, *, now: datetime
    ) -> Notifier | None:
        """A notifier when a webhook is configured and the pass writes (no dry run), else None."""
        if settings.webhook_secret is None or settings.dry_run != "none":
            return None
        return cls(settings, client, writer, budget, now=now)

    def deliver(self, held: Sequence[Held]) -> Outcome:
        if not held:
            return Outcome([], [], frozenset())
        if self.budget.stop.is_set():
            return self.cut(held, Stopped("stopped"))
        try:
            url = self.read_url()
            sender = self.make_sender(url, self.settings.webhook_timeout, self.budget)
        except PassCut as exc:
            return self.cut(held, exc)
        except RehashError as exc:
            return self.failed(held, str(exc))
        document = build_document(
            [Change.of(t, d) for t, d in held], self.identity, sender=f"kube-rehash {__version__}"
        )
        try:
            sender.post(encode(document))
        except WebhookError as exc:
            return self.failed(held, str(exc))
        finally:
            sender.close()
        log.info("webhook: %d change(s) delivered; recording them", len(held))
        rows = self.writer.write_batch([Planned(t.listed, d, t) for t, d in held], hold=False)
        return Outcome(rows, [], frozenset())

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
        encoded = data.get(self.settings.webhook_key) if isinstance(data, dict) else None
        if not isinstance(encoded, str):
            raise WebhookError(f"{where} has no key {self.settings.webhook_key!r}")
        try:
            url = base64.b64decode(encoded, validate=True).decode("utf-8").strip()
        except (binascii.Error, UnicodeDecodeError):
            url = ""
        problem = check_url(url)
        if problem:
            raise WebhookError(f"the key {self.settings.webhook_key!r} of {where} {problem}")
        return url

    def failed(self, held: Sequence[Held], error: str) -> Outcome:
        """Nothing written: the rows say why, one failed row makes the pass exit 1."""
        log.warning("%s; %d notification(s) not recorded, the next pass sends them again", error, len(held))
        rows = [
            Row.of(
                t.listed,
                replace(d, reason=f"{d.reason}; not recorded: {error}; the next pass notifies again"),
            )
            for t, d in held
        ]
        failure = Row.scope_failure(WEBHOOK_ROW_KIND, self.namespace, error)
        return Outcome(rows, [failure], frozenset(t.uid for t, _ in held))

    def cut(self, held: Sequence[Held], exc: PassCut) -> Outcome:
        """The pass may start no more requests: the notifications are left to the next pass, deferred."""
        rows = [
            Row.of(t.listed, defer_for_stop(d) if exc.stops_pass else self.writer.cut(exc, d))
            for t, d in held
        ]
        return Outcome(rows, [], frozenset(t.uid for t, _ in held))
