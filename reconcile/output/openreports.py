"""The OpenReports `Report` of each namespace a pass decided: what its tenants need to know, built from the
pass's outcomes (pure: reconcile/pipeline/reports.py writes them).

A tenant who may read `reports` in their namespace, and nothing else, sees there which of their workloads
wait for a restart (deferred, or pending in a dry run), were only notified, failed, did not take effect
(a stalled rollout) or were skipped, each with the reason and the sources involved; the summary counts
every decided workload, those with nothing to say as `pass`. Names only, never content: rows carry no
Secret value, and nothing else goes in.

A namespace with nothing to say gets a report with no results (its summary still counts its workloads),
so a tenant tells "all in sync" from "never reported". The document does not change while the rows do
not (no timestamp in it), so a steady pass writes nothing: the writer compares the digest annotation.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Iterator
from itertools import groupby
from operator import attrgetter
from typing import Any

from reconcile.model.bookkeeping import NOT_EFFECTIVE, STALLED
from reconcile.model.presets import KNOWN_KINDS
from reconcile.policy.decision import Action, Deferral
from reconcile.policy.outcome import Outcome

API_VERSION = "openreports.io/v1alpha1"
RESOURCE = "reports"
REPORT_NAME = "kube-rehash"
SOURCE = "kube-rehash"
POLICY = "kube-rehash"
MANAGED_BY = {"app.kubernetes.io/managed-by": "kube-rehash"}
UNDECIDED = frozenset({Deferral.BUDGET, Deferral.STOPPED})
"""Rows the pass did not get to: a namespace with only these was not decided, and keeps its report."""
RESULTS = ("pass", "fail", "warn", "error", "skip")
MESSAGE_LIMIT = 1024
_API_VERSIONS = {k.kind: k.api_version for k in KNOWN_KINDS}


def report_name(shard: tuple[int, int] | None) -> str:
    """`kube-rehash`, or one name per shard (`kube-rehash-shard-1-of-3`): shards split namespaces."""
    return REPORT_NAME if shard is None else f"{REPORT_NAME}-shard-{shard[0]}-of-{shard[1]}"


def digest_key(prefix: str) -> str:
    return f"{prefix}/report-digest"


def category(row: Outcome, *, dry_run: bool) -> tuple[str, str] | None:
    """(category, result) of a row worth telling a tenant, or None (in sync, adopted, rolled)."""
    if row.action == Action.FAILED.value:
        return "failed", "error"
    if row.rollout_status in (STALLED, NOT_EFFECTIVE):  # stuck, or its pods never restarted
        return "not effective", "fail"
    if row.action == Action.DEFERRED.value:
        return "deferred", "warn"
    if row.action == Action.ROLLOUT.value and dry_run:
        return "stale", "warn"
    if row.action == Action.NOTIFY.value:
        return "notified", "warn"
    if row.action == Action.SKIPPED.value:
        return "skipped", "skip"
    return None


def result_of(row: Outcome, name: str, outcome: str) -> dict[str, Any]:
    """One result: the workload (none for a whole scope's row), what became of it and why."""
    properties = {"action": row.action, "sources": ", ".join(row.configs)}
    if row.rollout_status is not None:
        properties["rolloutStatus"] = row.rollout_status
    result: dict[str, Any] = {
        "source": SOURCE,
        "policy": POLICY,
        "rule": name,
        "category": name,
        "result": outcome,
        "message": row.reason[:MESSAGE_LIMIT],
        "properties": {k: v for k, v in properties.items() if v},
    }
    if row.is_scope:
        result["properties"]["scope"] = row.kind
    else:
        ref = {"kind": row.kind, "namespace": row.namespace, "name": row.name}
        if row.kind in _API_VERSIONS:
            ref["apiVersion"] = _API_VERSIONS[row.kind]
        result["resources"] = [ref]
    return result


def build_report(
    namespace: str, rows: Iterable[Outcome], *, name: str, prefix: str, dry_run: bool
) -> dict[str, Any]:
    """The Report of one namespace's rows (in their order), with its digest annotation."""
    summary = dict.fromkeys(RESULTS, 0)
    results = []
    for row in rows:
        told = category(row, dry_run=dry_run)
        if told is None:
            summary["pass"] += 1
            continue
        summary[told[1]] += 1
        results.append(result_of(row, *told))
    body = {"source": SOURCE, "summary": summary, "results": results}
    return {
        "apiVersion": API_VERSION,
        "kind": "Report",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "labels": dict(MANAGED_BY),
            "annotations": {digest_key(prefix): digest(body)},
        },
        **body,
    }


def digest(body: dict[str, Any]) -> str:
    """A short digest of what a report says, to tell a changed report from one already there."""
    text = json.dumps(body, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def build_reports(
    rows: Iterable[Outcome], *, name: str, prefix: str, dry_run: bool
) -> Iterator[tuple[str, dict[str, Any]]]:
    """(namespace, Report) of each namespace the rows decided, one namespace's rows held at a time:
    `rows` come grouped by namespace (`Report.sorted_rows`). Cluster-wide scope rows (no namespace) go
    nowhere: no tenant owns them."""
    for namespace, group in groupby(rows, key=attrgetter("namespace")):
        kept = list(group)
        if namespace and any(row.deferral not in UNDECIDED for row in kept):
            yield namespace, build_report(namespace, kept, name=name, prefix=prefix, dry_run=dry_run)
