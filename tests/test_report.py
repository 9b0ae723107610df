"""The report's JSON is written row by row and its text table stays readable at any size."""

from __future__ import annotations

import io
import json

from reconcile.output.report import TEXT_ROWS_IN_FULL, Report
from reconcile.policy.decision import Skip
from reconcile.policy.outcome import Outcome


def rows(count: int, action: str = "in-sync") -> list[Outcome]:
    return [
        Outcome(
            "Deployment",
            f"ns-{i % 7}",
            f"web-{i}",
            action,
            "hash unchanged",
            configs=(f"ConfigMap/conf-{i}", "Secret/creds"),
            hash=f"{i:016x}",
            rollout_status="progressing" if i % 3 == 0 else None,
        )
        for i in range(count)
    ]


def test_the_streamed_json_is_the_same_text_as_one_dump_of_the_document() -> None:
    api = {"requests": {"list": {"200": 3}}, "bytes": 1024}
    failed_list = Outcome.scope_failure("Deployment", "*", 'list "failed"\n')
    for report in (
        Report.of(api=api),
        Report.of(rows=rows(1), api=api),
        Report.of(dry_run=True, rows=[*rows(25), failed_list], api=api),
    ):
        out = io.StringIO()
        report.write_json(out)
        assert out.getvalue() == json.dumps(report.to_json(), indent=2)
        assert report.render_json() == out.getvalue()
        assert json.loads(out.getvalue())["summary"]["workloads"] == len(report.rows)


def test_a_large_text_report_lists_only_the_rows_not_in_sync_and_counts_the_rest() -> None:
    report = Report.of(rows=rows(TEXT_ROWS_IN_FULL) + rows(3, action="rollout"))
    lines = report.render_text().splitlines()
    assert lines[0] == f"{TEXT_ROWS_IN_FULL} workloads in sync are not listed (-o json lists all)"
    assert lines[1].split() == ["ACTION", "KIND", "NAMESPACE", "NAME", "REASON"]
    assert [line.split()[0] for line in lines[2:-1]] == ["rollout"] * 3
    assert lines[-1].startswith(f"{TEXT_ROWS_IN_FULL + 3} workloads: 3 rollout, {TEXT_ROWS_IN_FULL} in-sync")


def test_a_small_text_report_lists_every_row() -> None:
    report = Report.of(rows=rows(5) + rows(1, action="rollout"))
    lines = report.render_text().splitlines()
    assert len(lines) == 1 + 6 + 1
    assert sum(1 for line in lines if line.startswith("in-sync")) == 5


def test_the_summary_line_counts_workloads_and_scopes_apart_with_plurals() -> None:
    failed_scopes = [
        Outcome.scope_failure("Deployment", f"ns-{i}", "list failed: 403 Forbidden") for i in range(5)
    ]
    assert Report.of(rows=failed_scopes).summary_line().startswith("0 workloads; 5 scopes failed in ")
    one = Report.of(rows=rows(1, action="rollout") + failed_scopes[:1])
    assert one.summary_line().startswith("1 workload: 1 rollout; 1 scope failed in ")
    assert Report.of().summary_line().startswith("0 workloads: nothing to do in ")
    assert Report.of(rows=rows(2)).summary_line().startswith("2 workloads: 2 in-sync in ")


def test_the_json_summary_still_counts_scope_rows_under_their_action() -> None:
    report = Report.of(rows=[*rows(2), Outcome.scope_failure("StatefulSet", "*", "list failed")])
    assert report.summary()["workloads"] == 3 and report.summary()["failed"] == 1


def test_skipped_rows_are_counted_by_reason_and_keep_it_when_packed() -> None:
    rows = [
        Outcome("Deployment", "shop", f"w{i:03d}", "skipped", "malformed annotation: x", skip=Skip.MALFORMED)
        for i in range(300)  # more than a packed block
    ]
    rows.append(Outcome("Deployment", "shop", "z", "skipped", "ignored: …", skip=Skip.IGNORED))
    report = Report.of(rows)
    counts = report.skipped_by_reason()
    assert counts[Skip.MALFORMED] == 300 and counts[Skip.IGNORED] == 1 and counts[Skip.MISSING_SOURCE] == 0
    assert {row.skip for row in report.rows} == {Skip.MALFORMED, Skip.IGNORED}
