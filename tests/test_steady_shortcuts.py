"""The steady pass's shortcuts give what the general code gives (docs/engineering/performance-history.md,
"Steady-pass CPU").

A listed workload's discovery is shared by the workloads whose consulted annotations are equal
(`discover_listed`), records are sorted on one key tuple each (`sorted_records`), record rows are checked
without generators (`parse_row`) and a report row is written with the C encoder (`indented_row`): each is
checked here against the code it stands for, on generated and on odd inputs.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reconcile.model.bookkeeping import SourceRecord, parse_row, sorted_records
from reconcile.model.references import (
    COMPAT_NAMES,
    DiscoverySettings,
    consulted_keys,
    discover,
    discover_listed,
)
from reconcile.output.report import indented_row

settings = st.builds(
    DiscoverySettings,
    compat=st.frozensets(st.sampled_from(COMPAT_NAMES)),
    prefix=st.sampled_from(["kube-rehash.io", "example.com"]),
)
annotation_values = st.sampled_from(["true", "false", "yes", "", "a,b", " a , b/c ", "other/a", "x=y", "!"])


@st.composite
def listed_annotations(draw: st.DrawFn) -> tuple[DiscoverySettings, dict[str, Any]]:
    chosen = draw(settings)
    keys = [*consulted_keys(chosen), "team", "deployment.kubernetes.io/revision"]
    annotations = draw(st.dictionaries(st.sampled_from(keys), annotation_values | st.integers(), max_size=6))
    return chosen, annotations


@given(listed_annotations(), st.sampled_from(["ns-a", "ns-b", "other"]))
def test_a_listed_workloads_shared_discovery_equals_its_own(
    case: tuple[DiscoverySettings, dict[str, Any]], namespace: str
) -> None:
    chosen, annotations = case
    expected = discover(annotations, None, chosen, namespace=namespace)
    assert discover_listed(annotations, chosen, namespace=namespace) == expected
    assert discover_listed(dict(annotations), chosen, namespace=namespace) == expected  # from the cache


def test_wave_extras_are_discovered_per_namespace() -> None:
    """Only wave's extra lists read the namespace: `ns/name` counts in `ns` only, cached or not."""
    chosen = DiscoverySettings(compat=frozenset({"wave"}))
    annotations = {
        "wave.pusher.com/update-on-config-change": "true",
        "wave.pusher.com/extra-configmaps": "a/x",
    }
    inside = discover_listed(annotations, chosen, namespace="a")
    outside = discover_listed(annotations, chosen, namespace="b")
    assert [r.name for r in inside.references] == ["x"]
    assert outside.references == () and outside.problems


records = st.builds(
    SourceRecord,
    kind=st.sampled_from(["configmap", "secret"]),
    name=st.sampled_from(["a", "b"]),
    uid=st.sampled_from(["", "u1", "u2"]),
    resource_version=st.sampled_from(["1", "2"]),
    selection=st.sampled_from(["*", "k1"]),
    token=st.sampled_from(["t1", "t2"]),
    keys=st.lists(st.sampled_from(["x", "y"]), max_size=2, unique=True).map(lambda k: tuple(sorted(k))),
)


@given(st.lists(records, max_size=6))
def test_records_sorted_on_a_key_tuple_are_in_the_dataclass_order(listed: list[SourceRecord]) -> None:
    assert sorted_records(listed) == tuple(sorted(listed))


@pytest.mark.parametrize(
    ("row", "named", "read"),
    [
        (["configmap", "a", "u", "1", "*", "t"], True, True),
        (["configmap", "a", "u", "1", "k1", "t", ["y", "x"]], True, True),
        (["configmap", "a", "u", "1", "*", "t", []], True, False),  # empty names are not written
        (["configmap", "a", "u", "1", "*", "t", ""], True, False),
        (["configmap", "a", "u", "1", "*", "t", ["x", 1]], True, False),
        (["configmap", "a", "u", "1", "*", "t", ["x"]], False, False),  # format 1 has no names
        (["configmap", "a", "u", 1, "*", "t"], True, False),
        (["configmap", "a", "u", "1", "*"], True, False),
        ("configmap", True, False),
    ],
)
def test_a_record_row_is_read_only_when_well_formed(row: Any, named: bool, read: bool) -> None:
    record = parse_row(row, named=named)
    assert (record is not None) is read
    if record is not None and len(row) == 7:
        assert record.keys == tuple(sorted(row[6]))


scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text()
documents = st.dictionaries(
    st.text(), scalars | st.lists(st.text(), max_size=3) | st.lists(scalars, max_size=2), max_size=9
)


@given(documents)
def test_a_report_row_is_the_text_json_dumps_indents(doc: dict[str, Any]) -> None:
    assert indented_row(doc) == json.dumps(doc, indent=2).replace("\n", "\n    ")


def test_a_report_row_of_another_shape_is_written_by_json_dumps() -> None:
    for doc in ({"a": {"b": [1]}}, {"a": [{"b": 1}]}, {1: "x"}, {1: ["x"]}, {"a": ("x",)}):
        assert indented_row(doc) == json.dumps(doc, indent=2).replace("\n", "\n    ")
