"""Publishing the pass's OpenReports Reports (setting `reports: openreports`): the last stage of a pass, from
its outcomes.

One list of the Reports already there (cluster-wide, or one per namespace given with `-n`: metadata only,
our name and label), then one server-side apply (`fieldManager=kube-rehash`, `force`) per namespace whose
report says something else than the one there, compared by digest annotation: a steady pass sends the
list and nothing more. Without the CRD (the list answers 404) the pass says so in one warning line and
goes on. A report that cannot be written is a failed scope outcome (kind `Report`), as an Event that cannot
be is.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable

from reconcile.errors import NotFound, PassCut, RehashError
from reconcile.kube.client import KubeClient, PatchType
from reconcile.model.choices import DryRun, Reports
from reconcile.output.openreports import (
    API_VERSION,
    MANAGED_BY,
    RESOURCE,
    build_reports,
    digest_key,
    report_name,
)
from reconcile.policy.outcome import Outcome
from reconcile.policy.outcomes import Outcomes
from reconcile.settings.table import Settings

log = logging.getLogger(__name__)
ROW_KIND = "Report"
SELECTOR = ",".join(f"{k}={v}" for k, v in MANAGED_BY.items())


def reports_path(namespace: str | None, name: str | None = None) -> str:
    base = f"/apis/{API_VERSION}"
    path = f"{base}/namespaces/{namespace}/{RESOURCE}" if namespace else f"{base}/{RESOURCE}"
    return f"{path}/{name}" if name else path


def read_digests(
    client: KubeClient, namespaces: Iterable[str | None], *, name: str, key: str
) -> dict[str, str]:
    """namespace → digest of our Reports already there (NotFound: the server has no Report API)."""
    found: dict[str, str] = {}
    for namespace in namespaces:
        items = client.list_items(
            reports_path(namespace),
            label_selector=SELECTOR,
            field_selector=f"metadata.name={name}",
            metadata_only=True,
        )
        for item in items:
            meta = item.get("metadata") or {}
            found[str(meta.get("namespace"))] = str((meta.get("annotations") or {}).get(key, ""))
    return found


def publish_reports(settings: Settings, client: KubeClient, outcomes: Outcomes) -> list[Outcome]:
    """Write the pass's Reports (nothing unless `reports: openreports`); returns the failed scopes."""
    output, scope = settings.output, settings.scope
    if output.reports is not Reports.OPENREPORTS or output.dry_run is DryRun.CLIENT:
        return []
    shard = (scope.shard.index, scope.shard.count) if scope.shard and scope.shard.count > 1 else None
    name, key = report_name(shard), digest_key(scope.prefix)
    scopes: list[str | None] = list(scope.namespaces) or [None]
    try:
        there = read_digests(client, scopes, name=name, key=key)
    except NotFound:
        log.warning(
            "reports: openreports is set, but the server has no %s reports (is the OpenReports CRD "
            "installed?): no reports written",
            API_VERSION,
        )
        return []
    except PassCut:
        log.info("no reports written: the pass may start no more requests")
        return []
    except RehashError as exc:
        return [Outcome.scope_failure(ROW_KIND, "", f"reading the Reports failed: {exc}")]
    dry_run = output.dry_run is not DryRun.NONE
    failures: list[Outcome] = []
    written = unchanged = 0
    for namespace, document in build_reports(
        outcomes.sorted(), name=name, prefix=scope.prefix, dry_run=dry_run
    ):
        if there.get(namespace) == document["metadata"]["annotations"][key]:
            unchanged += 1
            continue
        try:
            client.patch(
                reports_path(namespace, name),
                document,
                patch_type=PatchType.APPLY,
                force=True,
                dry_run=output.dry_run is DryRun.SERVER,
            )
        except PassCut:
            log.info("reports: the pass may start no more requests; the rest are left unwritten")
            break
        except RehashError as exc:
            failures.append(Outcome.scope_failure(ROW_KIND, namespace, f"writing the Report failed: {exc}"))
            continue
        written += 1
    log.info("reports: %d written, %d unchanged, %d failed", written, unchanged, len(failures))
    return failures
