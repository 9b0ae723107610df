"""A list page decoded item by item (reconcile/kube/pages.py) reads exactly what `json.loads` reads."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reconcile.kube.pages import LAST_APPLIED, LazyItems, read_metadata_page, read_page

scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text()
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20,
)
pages = st.dictionaries(st.sampled_from(["kind", "apiVersion", "metadata", "x"]), values, max_size=4).flatmap(
    lambda head: st.tuples(st.just(head), st.lists(values, max_size=6), st.integers(0, len(head)))
)


def eager(page: dict[str, Any]) -> dict[str, Any]:
    return {k: list(v) if isinstance(v, LazyItems) else v for k, v in page.items()}


@given(pages, st.sampled_from([None, 0, 2]), st.booleans())
def test_a_page_reads_the_same_as_json_loads_wherever_items_is_and_however_it_is_spaced(
    page: tuple[dict[str, Any], list[Any], int], indent: int | None, ascii_only: bool
) -> None:
    head, items, position = page
    members = list(head.items())
    members.insert(position, ("items", items))
    text = json.dumps(dict(members), indent=indent, ensure_ascii=ascii_only)
    read = read_page(text)
    assert isinstance(read["items"], LazyItems)
    assert eager(read) == json.loads(text)
    assert list(read["items"]) == items  # iterable again, from the text


def test_items_that_are_not_an_array_are_decoded_as_they_are() -> None:
    assert read_page('{"items": null, "metadata": {"continue": "t"}}') == {
        "items": None,
        "metadata": {"continue": "t"},
    }
    assert read_page(" {} ") == {}
    with pytest.raises(ValueError, match="not a JSON object"):
        read_page("[]")  # valid JSON, not a page


@pytest.mark.parametrize(
    "text",
    [
        "",
        '{"items": [1, 2}',
        '{"items": [1 2]}',
        '{"items": [1,]}',
        '{"a": 1,}',
        '{"a" 1}',
        '{"a": 1} x',
        '{"items": [{"a": 1}]',
        "{1: 2}",
    ],
)
def test_what_json_loads_refuses_read_page_refuses(text: str) -> None:
    with pytest.raises(ValueError):
        json.loads(text)
    with pytest.raises(ValueError):
        read_page(text)


def test_a_metadata_only_page_drops_managed_fields_and_last_applied_and_keeps_the_rest() -> None:
    applied = '{"apiVersion":"v1","data":{"a":"1"},"kind":"ConfigMap"}\n'
    item = {
        "metadata": {
            "name": "app",
            "uid": "u",
            "annotations": {LAST_APPLIED: applied, "kube-rehash.io/ignore": "true"},
            "managedFields": [{"manager": "helm", "operation": "Apply", "fieldsV1": {"f:data": {}}}],
        }
    }
    text = json.dumps({"metadata": {"continue": "t"}, "items": [item, {"metadata": {"name": "é"}}]})
    slim = read_metadata_page(text)[0]
    assert list(slim["items"]) == [
        {"metadata": {"name": "app", "uid": "u", "annotations": {"kube-rehash.io/ignore": "true"}}},
        {"metadata": {"name": "é"}},
    ]
    assert slim["metadata"] == {"continue": "t"}
    assert list(read_page(text)["items"]) == json.loads(text)["items"]  # a full page keeps everything


managed = st.lists(st.dictionaries(st.sampled_from(["manager", "operation", "fieldsV1"]), values, max_size=3))
items = st.fixed_dictionaries(
    {
        "metadata": st.fixed_dictionaries(
            {"name": st.text(max_size=8), "uid": st.text(max_size=8)},
            optional={
                "managedFields": managed,
                "labels": st.dictionaries(st.text(max_size=8), st.text(max_size=8), max_size=3),
                "annotations": st.dictionaries(
                    st.sampled_from([LAST_APPLIED, "kube-rehash.io/watch", "team"]), st.text(), max_size=3
                ),
            },
        )
    },
    optional={"kind": st.just("PartialObjectMetadata"), "spec": values},
)


def without_dropped(item: dict[str, Any]) -> dict[str, Any]:
    """What a slim page keeps of an item: all of it but managedFields and the last-applied annotation."""
    item = json.loads(json.dumps(item))
    item["metadata"].pop("managedFields", None)
    annotations = item["metadata"].get("annotations")
    if isinstance(annotations, dict):
        annotations.pop(LAST_APPLIED, None)
    return item


@given(st.lists(items | values, max_size=6), st.sampled_from([None, 2]))
def test_a_slim_page_is_json_loads_less_managed_fields_and_last_applied_decoded_once(
    listed: list[Any], indent: int | None
) -> None:
    text = json.dumps({"kind": "PartialObjectMetadataList", "metadata": {"continue": "t"}, "items": listed})
    slim = read_metadata_page(text)[0]
    assert isinstance(slim["items"], list)  # decoded once: no second walk of the text
    expected = json.loads(text)
    expected["items"] = [
        without_dropped(i) if isinstance(i, dict) and isinstance(i.get("metadata"), dict) else i
        for i in expected["items"]
    ]
    assert slim == expected


def test_a_slim_page_with_nothing_to_drop_is_exactly_json_loads() -> None:
    text = json.dumps({"metadata": {}, "items": [{"metadata": {"name": "a", "annotations": {"x": "1"}}}]})
    assert read_metadata_page(text)[0] == json.loads(text)
    with pytest.raises(ValueError, match="not a JSON object"):
        read_metadata_page("[]")


def test_the_items_of_a_slim_page_share_their_key_strings() -> None:
    """Decoded one by one, each item would hold its own copy of every key; kept slim, they share one."""
    item = {
        "metadata": {"name": "a", "labels": {"app": "x"}, "annotations": {"team": "t"}, "managedFields": []}
    }
    first, second = read_metadata_page(json.dumps({"items": [item, item]}))[0]["items"]
    one, other = first["metadata"], second["metadata"]
    for left, right in ((first, second), (one, other), (one["labels"], other["labels"])):
        assert all(a is b for a, b in zip(left, right, strict=True))
    assert all(a is b for a, b in zip(one["annotations"], other["annotations"], strict=True))


def api_server_item(name: str, managed: list[Any], annotations: dict[str, str]) -> dict[str, Any]:
    """A PartialObjectMetadata as kube-apiserver writes it: managedFields last in metadata, metadata last."""
    metadata: dict[str, Any] = {"name": name, "namespace": "web", "uid": "u-" + name}
    if annotations:
        metadata["annotations"] = annotations
    if managed:
        metadata["managedFields"] = managed
    return {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": metadata}


def test_a_thin_metadata_page_keeps_all_its_text() -> None:
    text = json.dumps({"metadata": {}, "items": [api_server_item("a", [], {"team": "t"})]})
    assert read_metadata_page(text)[1] == len(text)


@given(
    st.lists(
        st.tuples(
            st.text(min_size=1, max_size=8),
            managed,
            st.dictionaries(st.sampled_from([LAST_APPLIED, "kube-rehash.io/watch", "team"]), st.text()),
        ),
        max_size=6,
    )
)
def test_what_a_metadata_page_keeps_is_about_its_text_less_what_it_drops(
    listed: list[tuple[str, list[Any], dict[str, str]]],
) -> None:
    """On pages as the API server writes them (compact, managedFields last), the kept length is at most
    the page's text, and at least the slim page written back less one character an item (the estimate
    counts the closing braces after managedFields and not the comma before it)."""
    items = [api_server_item(*i) for i in listed]
    text = write_compact({"kind": "PartialObjectMetadataList", "metadata": {}, "items": items})
    slim, kept = read_metadata_page(text)
    assert len(write_compact(slim)) - len(listed) <= kept <= len(text)


def write_compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)
