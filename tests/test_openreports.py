"""The OpenReports output: each decided namespace's Report built from the pass's rows (exactly), and the
writer's requests: one list, then one server-side apply per report that changed, nothing for a steady
pass, one warning line without the CRD, a failed row for a report that cannot be written."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import responses
import yaml

from reconcile.kube.auth import AuthOptions, load_credentials
from reconcile.kube.client import KubeClient
from reconcile.model.choices import DryRun, Reports
from reconcile.output.openreports import build_report, build_reports, report_name
from reconcile.output.report import Report
from reconcile.pipeline.reports import publish_reports
from reconcile.policy.decision import Deferral
from reconcile.policy.outcome import Outcome
from reconcile.settings.table import Settings

SERVER = "https://api.test"
KEY = "kube-rehash.io/report-digest"
LIST = "/apis/openreports.io/v1alpha1/reports"
SHOP = "/apis/openreports.io/v1alpha1/namespaces/shop/reports/kube-rehash"
WEB = {"apiVersion": "apps/v1", "kind": "Deployment", "namespace": "shop", "name": "web"}


def row(name: str, action: str, reason: str = "r", ns: str = "shop", **fields: Any) -> Outcome:
    return Outcome("Deployment", ns, name, action, reason, configs=("secret/db",), **fields)


ROWS = [
    row("api", "in-sync"),
    row("db", "deferred", "outside restart window; opens 2026-11-22T02:00:00Z", deferral=Deferral.WINDOW),
    row("job", "skipped", "missing required secret/db; nothing written"),
    row("ops", "rollout", "secret/db changed", rollout_status="stalled"),
    row("tell", "notify", "secret/db changed"),
    row("web", "failed", "patch failed: 403 Forbidden"),
]


def test_a_namespace_report_lists_what_a_tenant_must_know_and_counts_the_rest_as_pass() -> None:
    doc = build_report("shop", ROWS, name="kube-rehash", prefix="kube-rehash.io", dry_run=False)
    digest = doc["metadata"]["annotations"].pop(KEY)
    assert len(digest) == 32
    assert doc["metadata"] == {
        "name": "kube-rehash",
        "namespace": "shop",
        "labels": {"app.kubernetes.io/managed-by": "kube-rehash"},
        "annotations": {},
    }
    assert (doc["apiVersion"], doc["kind"], doc["source"]) == (
        "openreports.io/v1alpha1",
        "Report",
        "kube-rehash",
    )
    assert doc["summary"] == {"pass": 1, "fail": 1, "warn": 2, "error": 1, "skip": 1}

    def result(name: str, category: str, outcome: str, message: str, **more: str) -> dict[str, Any]:
        return {
            "source": "kube-rehash",
            "policy": "kube-rehash",
            "rule": category,
            "category": category,
            "result": outcome,
            "message": message,
            "properties": {"sources": "secret/db", **more},
            "resources": [{**WEB, "name": name}],
        }

    assert doc["results"] == [
        result("db", "deferred", "warn", ROWS[1].reason, action="deferred"),
        result("job", "skipped", "skip", ROWS[2].reason, action="skipped"),
        result(
            "ops", "not effective", "fail", "secret/db changed", action="rollout", rolloutStatus="stalled"
        ),
        result("tell", "notified", "warn", "secret/db changed", action="notify"),
        result("web", "failed", "error", "patch failed: 403 Forbidden", action="failed"),
    ]


def test_a_dry_run_reports_pending_rollouts_as_stale() -> None:
    doc = build_report(
        "shop", [row("web", "rollout", "secret/db changed")], name="n", prefix="p", dry_run=True
    )
    assert [(r["category"], r["result"]) for r in doc["results"]] == [("stale", "warn")]
    done = build_report(
        "shop", [row("web", "rollout", "secret/db changed")], name="n", prefix="p", dry_run=False
    )
    assert (done["results"], done["summary"]["pass"]) == ([], 1)


def test_one_report_per_decided_namespace_and_none_for_a_namespace_the_budget_never_reached() -> None:
    rows = [
        row("a", "in-sync", ns="blue"),
        row("*", "deferred", "pass budget", ns="green", deferral=Deferral.BUDGET),
        row("b", "in-sync", ns="shop"),
        Outcome.scope_failure("Namespace", "", "listing namespaces failed"),
    ]
    built = dict(
        build_reports(sorted(rows, key=lambda r: r.namespace), name="kube-rehash", prefix="p", dry_run=False)
    )
    assert sorted(built) == ["blue", "shop"]
    assert built["blue"]["results"] == [] and built["blue"]["summary"]["pass"] == 1


def test_the_same_rows_give_the_same_document_and_another_row_another_digest() -> None:
    first = build_report("shop", ROWS, name="kube-rehash", prefix="p", dry_run=False)
    assert first == build_report("shop", list(ROWS), name="kube-rehash", prefix="p", dry_run=False)
    other = build_report(
        "shop", [*ROWS[:-1], replace(ROWS[-1], reason="x")], name="kube-rehash", prefix="p", dry_run=False
    )
    assert other["metadata"]["annotations"] != first["metadata"]["annotations"]


def test_shards_write_reports_of_their_own_names() -> None:
    assert (report_name(None), report_name((1, 3))) == ("kube-rehash", "kube-rehash-shard-1-of-3")


# -- the writer ----------------------------------------------------------------------------------------------


@pytest.fixture
def client(tmp_path: Path) -> Iterator[KubeClient]:
    config = tmp_path / "config"
    config.write_text(
        yaml.safe_dump(
            {
                "current-context": "c",
                "clusters": [{"name": "c", "cluster": {"server": SERVER}}],
                "users": [{"name": "u", "user": {"token": "t"}}],
                "contexts": [{"name": "c", "context": {"cluster": "c", "user": "u"}}],
            }
        )
    )
    with KubeClient(load_credentials(AuthOptions(kubeconfig=str(config)), env={})) as kube:
        yield kube


def settings(**fields: Any) -> Settings:
    return Settings.of(reports=Reports.OPENREPORTS, **fields)


def pass_report() -> Report:
    return Report.of(rows=[row("web", "failed", "patch failed: 403 Forbidden")])


def listed(digest: str) -> dict[str, Any]:
    meta = {"name": "kube-rehash", "namespace": "shop", "annotations": {KEY: digest}}
    return {"kind": "PartialObjectMetadataList", "metadata": {}, "items": [{"metadata": meta}]}


def expected_digest() -> str:
    doc = build_report("shop", pass_report().rows, name="kube-rehash", prefix="kube-rehash.io", dry_run=False)
    return str(doc["metadata"]["annotations"][KEY])


LIST_QUERY = (
    "?labelSelector=app.kubernetes.io%2Fmanaged-by%3Dkube-rehash"
    "&fieldSelector=metadata.name%3Dkube-rehash&limit=500"
)


@responses.activate
def test_a_changed_report_is_one_forced_server_side_apply_after_one_cluster_wide_list(
    client: KubeClient,
) -> None:
    responses.get(SERVER + LIST, json=listed("old"))
    responses.patch(SERVER + SHOP, json={})
    report = pass_report()
    failures = publish_reports(settings(), client, report.rows)
    assert [(c.request.method, c.request.path_url) for c in responses.calls] == [
        ("GET", LIST + LIST_QUERY),
        ("PATCH", SHOP + "?fieldManager=kube-rehash&force=true"),
    ]
    apply = responses.calls[1].request
    assert apply.headers["Content-Type"] == "application/apply-patch+yaml"
    assert json.loads(apply.body or b"") == build_report(
        "shop", report.rows, name="kube-rehash", prefix="kube-rehash.io", dry_run=False
    )
    assert failures == []


@responses.activate
def test_a_steady_pass_lists_and_writes_nothing(client: KubeClient) -> None:
    responses.get(SERVER + LIST, json=listed(expected_digest()))
    publish_reports(settings(), client, pass_report().rows)
    assert [c.request.method for c in responses.calls] == ["GET"]


@responses.activate
def test_namespaced_scope_lists_each_namespace(client: KubeClient) -> None:
    responses.get(
        SERVER + "/apis/openreports.io/v1alpha1/namespaces/shop/reports", json=listed(expected_digest())
    )
    publish_reports(settings(namespaces=("shop",)), client, pass_report().rows)
    assert [c.request.path_url.split("?")[0] for c in responses.calls] == [
        "/apis/openreports.io/v1alpha1/namespaces/shop/reports"
    ]


@responses.activate
def test_without_the_crd_one_warning_line_and_no_failure(
    client: KubeClient, caplog: pytest.LogCaptureFixture
) -> None:
    responses.get(SERVER + LIST, status=404, json={"kind": "Status", "code": 404, "reason": "NotFound"})
    report = pass_report()
    with caplog.at_level(logging.WARNING):
        failures = publish_reports(settings(), client, report.rows)
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert warnings == [
        "reports: openreports is set, but the server has no openreports.io/v1alpha1 reports "
        "(is the OpenReports CRD installed?): no reports written"
    ]
    assert failures == []


@responses.activate
def test_a_report_that_cannot_be_written_is_a_failed_row(client: KubeClient) -> None:
    responses.get(SERVER + LIST, json=listed("old"))
    forbidden = {"kind": "Status", "code": 403, "reason": "Forbidden", "message": "reports is forbidden"}
    responses.patch(SERVER + SHOP, status=403, json=forbidden)
    failed = publish_reports(settings(), client, pass_report().rows)
    assert [(r.namespace, r.name, r.action) for r in failed] == [("shop", "*", "failed")]
    assert failed[0].reason.startswith("writing the Report failed: ")


def test_reports_off_or_a_client_dry_run_send_nothing(client: KubeClient) -> None:
    with responses.RequestsMock() as mock:
        assert publish_reports(Settings(), client, pass_report().rows) == []
        assert publish_reports(settings(dry_run=DryRun.CLIENT), client, pass_report().rows) == []
        assert len(mock.calls) == 0
