"""Smoke test of the benchmark: a tiny cluster, real processes, structural claims only (no timings).

The steady-state pass must download no ConfigMap/Secret content and write nothing; the pass after a
change must download exactly the changed sources; the floor must stay the floor (metadata-only lists,
one metadata GET per referenced source, nothing else), and the naive script's writes must not leak
into a steady pass. Also checks the request/byte counting the benchmark's numbers rest on, the scaling
table, and that the benchmark does not need matplotlib unless asked for a chart.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from benchmarks.__main__ import scenario
from benchmarks.defaults import defaults_checks, defaults_scenario, defaults_table
from benchmarks.floor import KINDS, LIST_FLOOR
from benchmarks.generate import Shape, generate
from benchmarks.harness import Traffic
from benchmarks.midway import midway_scenario
from benchmarks.report import CONTRIBUTORS, checks, record, scaling, shapes_table, shard_table, summarize

TINY = Shape(
    workloads=20,
    opted_in=8,
    namespaces=3,
    configmaps=24,
    secrets=24,
    helm_secrets=3,
    helm_min_kb=1,
    helm_max_kb=4,
)


def entry(
    method: str, path: str, size: int, accept: str = "application/json", status: int = 200
) -> dict[str, object]:
    return {
        "method": method,
        "path": path,
        "bytes_out": size,
        "accept": accept,
        "status": status,
        "query": {},
    }


def test_traffic_classifies_requests_and_sums_bytes() -> None:
    meta = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json"
    meta_list = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json"
    traffic = Traffic.of(
        [
            entry("GET", "/apis/apps/v1/deployments", 1000),
            entry("GET", "/api/v1/namespaces/a/configmaps", 300, meta_list),
            entry("GET", "/apis/apps/v1/namespaces/a/deployments/d", 400),
            entry("GET", "/apis/argoproj.io/v1alpha1/namespaces/a/rollouts/r", 40, status=404),
            entry("GET", "/api/v1/namespaces/a", 30),
            entry("GET", "/api/v1/namespaces/a/configmaps/x", 100, meta),
            entry("GET", "/api/v1/namespaces/a/secrets/y", 700),
            entry("GET", "/api/v1/namespaces/a/secrets/gone", 50, meta, status=404),
            entry("PATCH", "/apis/apps/v1/namespaces/a/deployments/d", 900),
            entry("POST", "/api/v1/namespaces/a/events", 200),
            entry("GET", "/api/v1/namespaces", 80, status=500),
        ]
    )
    assert traffic.requests == 11
    assert traffic.bytes == 3800
    assert (traffic.lists, traffic.metadata_gets, traffic.content_gets, traffic.writes) == (3, 2, 1, 2)
    assert (traffic.metadata_lists, traffic.workload_gets, traffic.other_gets) == (1, 2, 1)
    assert traffic.content_paths == ["/api/v1/namespaces/a/secrets/y"]
    assert traffic.errors == 1
    assert traffic.bytes_by_resource["configmaps"] == 400
    assert traffic.bytes_by_resource["secrets"] == 750
    assert traffic.bytes_by_resource["namespaces"] == 110  # /namespaces/a and the namespace list


def test_generator_is_deterministic_and_references_exist() -> None:
    first, second = generate(TINY), generate(TINY)
    assert json.dumps(first.objects) == json.dumps(second.objects)
    names = {
        (o["kind"].lower(), o["metadata"].get("namespace"), o["metadata"]["name"]) for o in first.objects
    }
    assert first.referenced and all(ref in names for ref in first.referenced)
    assert len(first.references) == TINY.opted_in
    grown = generate(TINY.unrelated_secrets(3))
    assert grown.referenced == first.referenced
    assert len(grown.objects) > len(first.objects)


@pytest.mark.slow
def test_tiny_benchmark_structural_claims(tmp_path: Path) -> None:
    result = scenario(
        TINY,
        tmp_path,
        change_fraction=0.2,
        shards=2,
        qps=0,
        target_repeat=3,
        log=lambda *_: None,
    )
    # kube-rehash and the list floor, which the steady targets compare, are the median of three runs at
    # any scale; the slow contenders run once.
    assert {name: len(row["wall_runs"]) for name, row in result["steady"].items()} == {
        "kube-rehash": 3,
        LIST_FLOOR: 3,
        "naive": 1,
        "floor": 1,
        "kube-rehash-list": 1,
        "kube-rehash-get": 1,
    }
    first = result["first"]["kube-rehash"]
    assert first["summary"]["adopt"] == TINY.opted_in
    steady = result["steady"]["kube-rehash"]
    assert steady["exit"] == 0 and steady["errors"] == 0
    assert steady["content_gets"] == 0 and steady["writes"] == 0 and steady["configs_fetched"] == 0
    assert steady["summary"]["in-sync"] == TINY.opted_in
    floor = result["steady"]["floor"]
    assert floor["exit"] == 0 and floor["errors"] == 0
    # The floor: every workload kind listed metadata-only (one page each here), one metadata GET per
    # referenced source, and nothing else: no pod specs, no content, no writes.
    assert floor["lists"] == floor["metadata_lists"] == len(KINDS)
    assert floor["metadata_gets"] == result["referenced_sources"]
    assert floor["requests"] == floor["lists"] + floor["metadata_gets"]
    assert floor["content_gets"] == floor["workload_gets"] == floor["writes"] == 0
    # All three share one cluster: the naive script's writes must not leak into anyone's steady pass.
    naive = result["steady"]["naive"]
    assert naive["exit"] == 0 and naive["writes"] == 0 and naive["content_gets"] > 0
    assert result["change"]["naive"]["writes"] >= 1
    # The request log counts bytes for both the same way; the tool needs nothing the floor does not read.
    assert steady["metadata_gets"] + steady["lists"] >= 1 and floor["bytes"] > 0
    assert sum(s["requests"] for s in result["shards"]) >= steady["requests"]
    # The shards handle every opted-in workload once between them, and the table says how they split.
    assert sum(s["summary"]["workloads"] for s in result["shards"]) == TINY.opted_in
    assert sum(result["whole_namespace_sizes"]) == TINY.opted_in
    # `fetch: get`, the shards' yardstick: one metadata GET per referenced source, no source lists.
    by_name = result["steady"]["kube-rehash-get"]
    assert by_name["metadata_gets"] == result["referenced_sources"] and by_name["content_gets"] == 0
    assert by_name["metadata_lists"] == by_name["lists"] == len(KINDS)  # workload kinds only
    change = result["change"]["kube-rehash"]
    assert change["content_gets"] == result["changed_sources"] == change["configs_fetched"]
    assert change["content_gets_are_changed_sources"]
    assert change["summary"]["rollout"] >= 1
    # The passes after the change, with the simulator's rollout controller: they converge, none refuses a
    # guarded patch, and the first pass after every rollout completed costs what a steady pass costs.
    after = result["after_change"]
    assert after["converged"] and after["total_refused"] == 0
    last = after["passes"][-1]
    assert last["rollout_status"] == {} and last["writes"] == 0
    assert last["requests"] == steady["requests"]
    assert any(p["rollout_status"].get("complete") for p in after["passes"])
    report = summarize({"command": "test", "machine": {}, "scales": {"1": result}})
    met = {name: ok for name, ok, _ in checks({"scales": {"1": result}})}
    assert met["steady: zero content GETs, zero writes"]
    assert met["change: content only for changed sources"]
    assert "kube-rehash" in report and "## scaling (1x)" in report


def test_scaling_table_has_a_row_per_scale_and_tool() -> None:
    def row(n: int) -> dict[str, float]:
        return {"wall_s": n / 1000, "requests": n, "bytes": n * 1000, "rss_mb": 50}

    def scale(factor: int, tools: tuple[str, ...]) -> dict[str, object]:
        shape = {"workloads": 30 * factor, "opted_in": 10 * factor, "configmaps": 80 * factor}
        shape |= {"secrets": 70 * factor, "unrelated_factor": 1}
        steady = {t: row(100 * factor) for t in tools}
        return {"shape": shape, "steady": steady, "change": {t: row(120 * factor) for t in tools[:2]}}

    tools = ("kube-rehash", "naive", "floor")
    # Out of order on purpose, and 10 after 2 (sorted as numbers, not strings).
    lines = scaling({"scales": {"10": scale(10, tools), "1": scale(1, tools), "2": scale(2, tools)}})
    header, rule, *rows = lines
    assert header.count("|") == rule.count("|") == 15
    assert all(r.count("|") == 15 for r in rows)
    assert [r.split(" | ")[0] for r in rows] == ["| 1x"] * 3 + ["| 2x"] * 3 + ["| 10x"] * 3
    assert rows[3].startswith("| 2x | 60 | 20 | 160 | 140 | kube-rehash | 0.20 | 200 | 0.20 MB | 50 | 0.24 |")
    # The floor has no change pass here: its change cells are marked, not left out.
    assert rows[5].endswith("| floor | 0.20 | 200 | 0.20 MB | 50 | n/a | n/a | n/a | n/a |")


def test_log_file_lines_match_the_in_memory_log(tmp_path: Path) -> None:
    from rehash_simulator import Simulator

    sim = Simulator()
    path = tmp_path / "log.jsonl"
    with path.open("w", encoding="utf-8") as stream, sim:
        sim.log.write_to(stream)
        import requests

        session = requests.Session()
        session.trust_env = False
        ca = tmp_path / "ca.pem"
        ca.write_bytes(sim.ca_pem)
        session.verify = str(ca)
        session.get(f"{sim.url}/api/v1/namespaces", headers={"Authorization": f"Bearer {sim.admin_token}"})
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    entries = sim.log.entries()
    assert [(e.method, e.path, e.bytes_out) for e in entries] == [
        (d["method"], d["path"], d["bytes_out"]) for d in lines
    ]
    assert "body" not in lines[0]


def test_benchmark_imports_without_matplotlib(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    for name in [m for m in sys.modules if m.startswith("benchmarks")]:
        monkeypatch.delitem(sys.modules, name)
    __import__("benchmarks.__main__")
    __import__("benchmarks.report")


def test_a_skewed_shape_keeps_its_share_of_workloads_and_sources_in_the_first_namespace() -> None:
    cluster = generate(TINY.skewed(0.75))
    opted = [ns for _, ns, _ in cluster.references]
    assert len(opted) == TINY.opted_in and opted.count("ns-0000") == 6  # 75% of 8
    configmaps = [o for o in cluster.objects if o["kind"] == "ConfigMap"]
    assert len(configmaps) == TINY.configmaps
    assert sum(o["metadata"]["namespace"] == "ns-0000" for o in configmaps) == 18  # 75% of 24


@pytest.mark.slow
def test_shards_split_a_skewed_cluster_evenly_in_the_benchmark(tmp_path: Path) -> None:
    """Real processes: 75% of the opted-in workloads in one namespace, two shards of half each."""
    result = scenario(
        TINY.skewed(0.75),
        tmp_path,
        change_fraction=0.2,
        shards=2,
        qps=0,
        passes=("steady",),
        tools=("kube-rehash",),
        log=lambda *_: None,
    )
    sizes = [s["summary"]["workloads"] for s in result["shards"]]
    assert sizes == [4, 4]
    assert all(s["exit"] == 0 and s["summary"]["in-sync"] == 4 for s in result["shards"])
    assert sorted(result["whole_namespace_sizes"]) in ([1, 7], [2, 6])  # what whole namespaces gave
    assert result["shared_namespaces"] == 1  # the big namespace, read by both shards
    lines = shard_table(result)
    assert [row.split(" | ")[1] for row in lines if row.startswith(("| 0/2", "| 1/2"))] == ["4", "4"]
    met = {name: ok for name, ok, _ in checks({"scales": {}, "skewed_shards": result})}
    assert met["skewed (75% in one namespace): each shard's opted-in workloads within ±15% of 1/N"]


@pytest.mark.slow
def test_the_shipped_defaults_scenario_installs_in_one_pass_and_reads_only_changed_content(
    tmp_path: Path,
) -> None:
    """Real processes at the shipped defaults (no config file): first install, steady, change."""
    kube_rehash = str(Path(sys.executable).parent / "kube-rehash")
    result = defaults_scenario(
        TINY,
        tmp_path,
        kube_rehash=kube_rehash,
        naive=[sys.executable, "-m", "benchmarks.naive"],
        change_fraction=0.2,
        log=lambda *_: None,
    )
    (first,) = result["first"]
    assert first["exit"] == 0 and first["summary"]["adopt"] == TINY.opted_in
    assert result["steady"]["content_gets"] == 0 and result["steady"]["writes"] == 0
    assert result["change"]["content_gets_are_changed_sources"]
    after = result["after_change"]
    assert after["converged"] and after["total_refused"] == 0
    assert after["passes"][-1]["requests"] == result["steady"]["requests"]
    met = {name: ok for name, ok, _ in defaults_checks(result, None)}
    # The request count against naive is a 1x target: on 8 workloads fixed costs (a list per kind) dominate.
    assert met["shipped defaults, 1x: the first install completes in at most 1 pass(es) within the budget"]
    assert met["shipped defaults, 1x: the change pass reads content only for the changed sources"]
    assert met["shipped defaults, 1x: a 5% change is rolled in one pass"]
    assert any("naive script, first pass" in line for line in defaults_table(result))


def defaults_run(first_passes: int, change_deferred: int) -> dict[str, Any]:
    """A defaults scenario's result as `defaults_scenario` writes it: a 10x first install in passes."""

    def row(adopt: int, deferred: int, rollout: int = 0, requests: int = 4000) -> dict[str, Any]:
        summary = {"workloads": 10_000, "adopt": adopt, "deferred": deferred, "rollout": rollout}
        return {"summary": summary, "wall_s": 230.0, "requests": requests, "content_gets": 0}

    shares = [10_000 // first_passes] * first_passes
    shares[-1] += 10_000 - sum(shares)
    first = [row(share, 10_000 - sum(shares[: i + 1])) for i, share in enumerate(shares)]
    change = row(0, change_deferred, rollout=1385, requests=4500)
    change.update(content_gets=1354, content_gets_are_changed_sources=True, budget_exhausted=False)
    return {
        "shape": {"opted_in": 10_000},
        "first": first,
        "steady": {"bytes": 1, "wall_s": 1.0, "requests": 440},
        "change": change,
        "changed_sources": 1354,
        "naive_first": {"requests": 37_376},
    }


def test_the_defaults_checks_allow_a_10x_first_install_three_passes_and_a_change_one() -> None:
    floor = {"bytes": 1, "wall_s": 1.0, "requests": 380}

    def met(result: dict[str, Any]) -> dict[str, bool]:
        return {name.split(": ", 1)[1]: ok for name, ok, _ in defaults_checks(result, floor, 10)}

    good = met(defaults_run(3, 0))
    assert good["the first install completes in at most 3 pass(es) within the budget"]
    assert good["a 5% change is rolled in one pass"]
    assert good["change requests ≤ the floor's + one Event per rollout"]  # 4,500 ≤ 380 + 1,354 + 2 x 1,385
    assert not met(defaults_run(4, 0))["the first install completes in at most 3 pass(es) within the budget"]
    assert not met(defaults_run(3, 12))["a 5% change is rolled in one pass"]


def test_each_scale_is_checked_against_the_list_floor_on_both_shapes() -> None:
    def row(requests: int, size: int, wall: float, rss: float = 48.0, **summary: int) -> dict[str, Any]:
        found = {"requests": requests, "bytes": size, "wall_s": wall, "rss_mb": rss}
        return {**found, "summary": summary} if summary else found

    ten = {
        "shape": {"opted_in": 10_000},
        "changed_sources": 1_159,
        "first": {"kube-rehash": row(12_311, 10**8, 82.5, 45.0, adopt=10_000)},
        "steady": {"kube-rehash": row(357, 8_821_044, 3.2), "floor-list": row(354, 8_819_736, 1.5)},
        "change": {"kube-rehash": row(3_900, 10**7, 20.0, 50.0, rollout=1_192)},
    }
    realistic = {**ten, "steady": {**ten["steady"], "kube-rehash": row(357, 8_819_736, 2.5, 70.0)}}
    found = {
        name: (met, shown)
        for name, met, shown in checks({"scales": {"10": ten}, "realistic": {"10": realistic}})
    }
    assert found["10x thin: steady requests ≤ 1.1 x the list floor's"] == (True, "357 vs 354 (1.008 x)")
    assert found["10x thin: steady bytes ≤ 1.0 x the list floor's"][0] is False
    assert found["10x thin: steady wall ≤ 1.5 x the list floor's + 0.3 s"] == (
        False,
        "3.20 s vs 2.55 s (list floor 1.50 s)",
    )
    assert found["10x thin: change requests ≤ the list floor's + changed sources + 2 x rollouts"] == (
        False,
        "3900 vs 354 + 1159 + 2 x 1192 = 3897",
    )
    assert found["10x thin: first install in one pass, ≤ 12,500 requests"][0] is True
    assert found["10x thin: peak RSS of every pass ≤ 64 MiB"] == (
        True,
        "first 45.0, steady 48.0, change 50.0",
    )
    assert found["10x realistic: steady wall ≤ 1.5 x the list floor's + 0.3 s"][0] is True
    assert found["10x realistic: peak RSS of every pass ≤ 64 MiB"][0] is False
    lines = shapes_table({"scales": {"10": ten}, "realistic": {"10": realistic}})
    assert len(lines) == 2 + 4
    assert lines[3] == (
        "| 10x | steady | kube-rehash | 357 | 357 | 8.82 MB | 8.82 MB | 3.20 | 2.50 | 48.0 | 70.0 |"
    )


def test_the_run_of_record_page_is_written_from_the_results_and_each_memory_run() -> None:
    results = json.loads(Path("benchmarks/results.json").read_text())
    memory = json.loads(Path("benchmarks/results-memory.json").read_text())
    page = record(results, {"benchmarks/results-memory.json": memory})
    assert page.startswith("# The run of record\n")
    assert f"command: {results['command']}" in page and "\n### targets\n" in page
    assert f"### peak RSS (MiB): `{memory['command']}` (benchmarks/results-memory.json)" in page
    assert "\n## " not in page  # the summary's sections sit under the page's title
    assert page.endswith("\n\n" + CONTRIBUTORS + "\n")  # the one link into docs/engineering, last


def test_the_midway_scenario_adopts_the_first_namespaces_then_passes_at_the_defaults(tmp_path: Path) -> None:
    """Real processes: a scoped pass adopts the first namespaces in key order, a pass at the shipped
    defaults adopts the rest and says how it walked."""
    result = midway_scenario(TINY, 1 / 3, tmp_path)
    scoped, after = result["scoped_adoption"], result["defaults_pass"]
    assert result["adopted_namespaces"] == 1
    assert scoped["exit"] == 0 and 0 < scoped["summary"]["adopt"] < TINY.opted_in
    assert after["exit"] == 0 and after["summary"]["deferred"] == 0
    assert after["summary"]["adopt"] + after["summary"]["in-sync"] == TINY.opted_in
    assert after["summary"]["in-sync"] == scoped["summary"]["adopt"]
