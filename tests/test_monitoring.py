"""The alert rules and the Grafana dashboard of deploy/monitoring/, checked by the real, pinned promtool.

promtool (`make promtool`, tools/promtool/go.mod) is Prometheus's own parser and rule evaluator: it checks the
rule file, runs its unit tests (deploy/monitoring/kube-rehash.rules.test.yaml: synthetic series on which each
alert fires and stays silent), checks every dashboard query (written as recording rules of a generated rule
file) and the rules the chart renders. The metric names a rule or a panel may use are those
reconcile/output/metrics.py pushes, read from its registry, not from a list kept here. Without the promtool
binary the `promtool` fixture (tests/conftest.py) skips locally and fails under CI=true. Marker `promtool`.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from reconcile.cli.commands import count_undelivered, rolled_workloads
from reconcile.output.metrics import build_registry
from reconcile.output.report import Report
from reconcile.pipeline.notifier import WEBHOOK_ROW_KIND
from reconcile.policy.decision import BAD_INPUT, Deferral
from reconcile.policy.outcome import Outcome

ROOT = Path(__file__).resolve().parent.parent
MONITORING = ROOT / "deploy" / "monitoring"
RULES = MONITORING / "kube-rehash.rules.yaml"
RULE_TESTS = MONITORING / "kube-rehash.rules.test.yaml"
DASHBOARD = MONITORING / "kube-rehash.dashboard.json"

# What a dashboard variable stands for when its query is checked: every job and shard.
VARIABLES = {"$job": ".*", "$shard": ".*"}
# PromQL words that are neither metric names nor functions (a function is a word followed by "(").
PROMQL_WORDS = {"and", "or", "unless", "bool", "offset", "group_left", "group_right", "inf", "nan"}


def promtool_binary() -> Path:
    """The pinned promtool: .cache/promtool/<its version in tools/promtool/go.mod>/promtool."""
    gomod = (ROOT / "tools" / "promtool" / "go.mod").read_text(encoding="utf-8")
    match = re.search(r"^\s*(?:require\s+)?github\.com/prometheus/prometheus\s+(v\S+)", gomod, re.MULTILINE)
    assert match, "tools/promtool/go.mod does not require github.com/prometheus/prometheus"
    cache = Path(os.environ.get("PROMTOOL_CACHE", ROOT / ".cache" / "promtool"))
    return cache / match.group(1) / "promtool"


def run_promtool(promtool: Path, *args: str, cwd: Path = ROOT) -> str:
    result = subprocess.run([str(promtool), *args], capture_output=True, text=True, cwd=cwd, check=False)
    assert result.returncode == 0, f"promtool {' '.join(args)} failed:\n{result.stdout}{result.stderr}"
    return result.stdout


def pushed_metric_names() -> set[str]:
    """The names of every metric family a pass pushes (a successful one, with the opt-in metrics on)."""
    registry = build_registry(
        summary={"workloads": 1, "rollout": 1, "stalled": 0},
        api_requests={("list", 200): 1},
        configs_fetched=1,
        duration_seconds=1.0,
        success=True,
        deferred={Deferral.BUDGET: 1},
        notifications_undelivered=0,
        rolled=[("shop", "Deployment", "web")],  # the opt-in per-workload series (metricsPerWorkload)
    )
    return {family.name for family in registry.collect()}


def metric_names(expr: str) -> set[str]:
    """The metric names a PromQL expression selects: the words left once strings, label matchers, ranges,
    offsets and grouping clauses are removed, that are not functions, aggregations or keywords."""
    text = re.sub(r'"(?:[^"\\]|\\.)*"', '""', expr)
    text = re.sub(r"\{[^}]*\}|\[[^\]]*\]|\boffset\s+\w+", " ", text)
    text = re.sub(r"\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", " ", text)
    names = set()
    for word in re.finditer(r"(?<![\w.])[a-zA-Z_:][\w:]*", text):
        if word.group() in PROMQL_WORDS or text[word.end() :].lstrip().startswith("("):
            continue
        names.add(word.group())
    return names


def alert_rules() -> list[dict[str, Any]]:
    groups = yaml.safe_load(RULES.read_text(encoding="utf-8"))["groups"]
    return [rule for group in groups for rule in group["rules"]]


def dashboard() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(DASHBOARD.read_text(encoding="utf-8"))
    return loaded


def dashboard_queries() -> dict[str, str]:
    """Every PromQL query of the dashboard, named: each panel target's, and each variable's selector (the
    metric of `label_values(selector, label)`), with the variables replaced by what they stand for."""
    queries = {}
    for panel in dashboard()["panels"]:
        for target in panel["targets"]:
            queries[f"panel {panel['id']} ({panel['title']}) target {target['refId']}"] = target["expr"]
    for variable in dashboard()["templating"]["list"]:
        if variable["type"] == "query":
            match = re.fullmatch(r"label_values\((.+),\s*\w+\)", variable["query"]["query"])
            assert match, f"variable {variable['name']}: not label_values(selector, label)"
            queries[f"variable {variable['name']}"] = match.group(1)
    for name, query in queries.items():
        expr = query
        for variable, value in VARIABLES.items():
            expr = expr.replace(variable, value)
        assert "$" not in expr, f"{name}: a variable the test does not know: {expr}"
        queries[name] = expr
    return queries


def write_rule_file(path: Path, queries: dict[str, str]) -> Path:
    """The queries as recording rules, so that `promtool check rules` parses each one."""
    rules = [
        {"record": f"kube_rehash_dashboard:query_{i}", "expr": e} for i, e in enumerate(queries.values())
    ]
    path.write_text(yaml.safe_dump({"groups": [{"name": "dashboard", "rules": rules}]}), encoding="utf-8")
    return path


@pytest.mark.promtool
def test_promtool_accepts_the_alert_rules(promtool: Path) -> None:
    out = run_promtool(promtool, "check", "rules", str(RULES))
    assert f"SUCCESS: {len(alert_rules())} rules found" in out


@pytest.mark.promtool
def test_each_alert_fires_and_stays_silent_in_the_promtool_unit_tests(promtool: Path) -> None:
    cases = yaml.safe_load(RULE_TESTS.read_text(encoding="utf-8"))["tests"]
    checks = [check for case in cases for check in case["alert_rule_test"]]
    for rule in alert_rules():
        mine = [c for c in checks if c["alertname"] == rule["alert"]]
        assert any(c["exp_alerts"] for c in mine), f"{rule['alert']}: no test where it fires"
        assert any(not c["exp_alerts"] for c in mine), f"{rule['alert']}: no test where it stays silent"
    out = run_promtool(promtool, "test", "rules", RULE_TESTS.name, cwd=MONITORING)
    assert "SUCCESS" in out


def test_the_rules_and_the_dashboard_name_only_metrics_kube_rehash_pushes() -> None:
    pushed = pushed_metric_names()
    used = {rule["alert"]: metric_names(rule["expr"]) for rule in alert_rules()}
    used.update({name: metric_names(expr) for name, expr in dashboard_queries().items()})
    for name, metrics in used.items():
        assert metrics, f"{name}: selects no metric"
        assert metrics <= pushed, f"{name}: {sorted(metrics - pushed)} is not pushed by kube-rehash"


def test_the_dashboard_shows_every_metric_kube_rehash_pushes() -> None:
    shown = set().union(*(metric_names(expr) for expr in dashboard_queries().values()))
    assert shown == pushed_metric_names()


def test_the_metric_name_reader_sees_through_promql_syntax() -> None:
    expr = 'max by (job) (rate(a_total{x="y}"}[5m] offset 1h)) > on (job) group_left b and c unless sum(d)'
    assert metric_names(expr) == {"a_total", "b", "c", "d"}


@pytest.mark.promtool
def test_promtool_parses_every_dashboard_query(promtool: Path, tmp_path: Path) -> None:
    queries = dashboard_queries()
    path = write_rule_file(tmp_path / "dashboard.rules.yaml", queries)
    assert f"SUCCESS: {len(queries)} rules found" in run_promtool(promtool, "check", "rules", str(path))


@pytest.mark.promtool
def test_promtool_rejects_a_query_that_does_not_parse(promtool: Path, tmp_path: Path) -> None:
    path = write_rule_file(tmp_path / "bad.rules.yaml", {"bad": "sum by (shard (kube_rehash_workloads)"})
    result = subprocess.run(
        [str(promtool), "check", "rules", str(path)], capture_output=True, text=True, check=False
    )
    assert result.returncode != 0 and "parse error" in result.stdout + result.stderr


def test_the_dashboard_follows_the_grafana_dashboard_model() -> None:
    model = dashboard()
    assert model["uid"] == "kube-rehash" and isinstance(model["schemaVersion"], int)
    ids = [panel["id"] for panel in model["panels"]]
    assert len(ids) == len(set(ids)), "panel ids repeat"
    cells: set[tuple[int, int]] = set()
    for panel in model["panels"]:
        assert panel["type"] in {"stat", "timeseries"}, panel["title"]
        assert panel["datasource"] == {"type": "prometheus", "uid": "${datasource}"}, panel["title"]
        pos = panel["gridPos"]
        assert pos["x"] >= 0 and pos["x"] + pos["w"] <= 24, f"{panel['title']}: wider than the grid"
        mine = {
            (x, y) for x in range(pos["x"], pos["x"] + pos["w"]) for y in range(pos["y"], pos["y"] + pos["h"])
        }
        assert not mine & cells, f"{panel['title']}: overlaps another panel"
        cells |= mine
        refs = [target["refId"] for target in panel["targets"]]
        assert refs and len(refs) == len(set(refs)), f"{panel['title']}: targets without distinct refIds"
    variables = {v["name"]: v for v in model["templating"]["list"]}
    assert (
        variables["datasource"]["type"] == "datasource" and variables["datasource"]["query"] == "prometheus"
    )


def test_the_generated_copies_of_the_monitoring_files_are_current() -> None:
    result = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "gen-monitoring.py"), "--check"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.helm
@pytest.mark.promtool
def test_the_chart_installs_rules_promtool_accepts_and_the_dashboard_on_request(
    helm: Path, promtool: Path, tmp_path: Path
) -> None:
    from tests.test_chart import helm_template

    kinds = {(d["kind"], d["metadata"]["name"]) for d in helm_template(helm)}
    assert ("PrometheusRule", "kube-rehash") not in kinds
    assert ("ConfigMap", "kube-rehash-dashboard") not in kinds
    docs = helm_template(
        helm,
        *("--set", "monitoring.prometheusRule.enabled=true", "--set", "monitoring.dashboard.enabled=true"),
        *("--set", "monitoring.prometheusRule.labels.release=prom"),
    )
    by_kind = {(d["kind"], d["metadata"]["name"]): d for d in docs}
    rule = by_kind[("PrometheusRule", "kube-rehash")]
    assert (
        rule["apiVersion"] == "monitoring.coreos.com/v1" and rule["metadata"]["labels"]["release"] == "prom"
    )
    path = tmp_path / "chart.rules.yaml"
    path.write_text(yaml.safe_dump(rule["spec"]), encoding="utf-8")
    assert f"SUCCESS: {len(alert_rules())} rules found" in run_promtool(promtool, "check", "rules", str(path))
    assert rule["spec"] == yaml.safe_load(RULES.read_text(encoding="utf-8"))
    board = by_kind[("ConfigMap", "kube-rehash-dashboard")]
    assert board["metadata"]["labels"]["grafana_dashboard"] == "1"
    assert json.loads(board["data"]["kube-rehash.json"]) == dashboard()


def test_kubectl_apply_k_of_deploy_monitoring_carries_the_rules_and_the_dashboard() -> None:
    kubectl = Path(sys.executable).parent / "kubectl"
    out = subprocess.run(
        [str(kubectl), "kustomize", str(MONITORING)], capture_output=True, text=True, check=True
    ).stdout
    docs = {d["kind"]: d for d in yaml.safe_load_all(out)}
    assert docs["PrometheusRule"]["spec"] == yaml.safe_load(RULES.read_text(encoding="utf-8"))
    assert docs["PrometheusRule"]["metadata"]["namespace"] == "kube-rehash"
    assert json.loads(docs["ConfigMap"]["data"]["kube-rehash.json"]) == dashboard()
    assert docs["ConfigMap"]["metadata"]["labels"]["grafana_dashboard"] == "1"


def _row(kind: str, action: str) -> Outcome:
    return Outcome(kind=kind, namespace="apps", name="web", action=action, reason="r")


def test_undelivered_notifications_are_the_notify_rows_of_a_pass_whose_webhook_failed() -> None:
    notified = [_row("Deployment", "notify"), _row("StatefulSet", "notify"), _row("Deployment", "rollout")]
    assert count_undelivered(Report.of(rows=notified)) == 0
    failed_elsewhere = [*notified, _row("Deployment", "failed")]
    assert count_undelivered(Report.of(rows=failed_elsewhere)) == 0
    assert count_undelivered(Report.of(rows=[*notified, _row(WEBHOOK_ROW_KIND, "failed")])) == 2


def test_the_per_workload_series_name_the_rows_the_pass_rolled() -> None:
    rows = [_row("Deployment", "rollout"), _row("StatefulSet", "in-sync"), _row("DaemonSet", "rollout")]
    expected = [("apps", "Deployment", "web"), ("apps", "DaemonSet", "web")]
    assert rolled_workloads(Report.of(rows=rows)) == expected


def test_the_bad_input_alert_names_exactly_the_skip_reasons_its_owners_can_fix() -> None:
    rules = yaml.safe_load(RULES.read_text())
    alert = next(
        r
        for g in rules["groups"]
        for r in g["rules"]
        if r.get("alert") == "KubeRehashWorkloadsSkippedForBadInput"
    )
    match = re.search(r'reason=~"([^"]*)"', alert["expr"])
    assert match is not None, alert["expr"]
    assert set(match.group(1).split("|")) == {reason.value for reason in BAD_INPUT}
