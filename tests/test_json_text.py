"""`load_json` (reconcile/json_text.py) gives what `json.loads` gives: orjson decodes, the standard library
decodes what orjson refuses, and text that is not JSON raises ValueError either way."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reconcile.json_text import load_json

INT64 = st.integers(min_value=-(2**63), max_value=2**64 - 1)
SCALARS = st.none() | st.booleans() | INT64 | st.floats(allow_nan=False, allow_infinity=False) | st.text()
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(), inner, max_size=5),
    max_leaves=30,
)


@given(VALUES, st.booleans(), st.booleans())
def test_a_value_decodes_as_the_standard_library_decodes_it(
    value: Any, ascii_only: bool, as_bytes: bool
) -> None:
    text = json.dumps(value, ensure_ascii=ascii_only)
    decoded = load_json(text.encode("utf-8") if as_bytes else text)
    assert decoded == json.loads(text)
    assert _types(decoded) == _types(json.loads(text))


def _types(value: Any) -> Any:
    """The value's shape with each scalar's type: 1 and 1.0 and True are equal, but not the same value."""
    if isinstance(value, dict):
        return {k: _types(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_types(v) for v in value]
    return type(value)


def test_a_metadata_page_decodes_as_the_standard_library_decodes_it() -> None:
    page = (
        '{"kind":"PartialObjectMetadataList","apiVersion":"meta.k8s.io/v1","metadata":{"resourceVersion":"1003",'
        '"continue":"eyJ2IjoibWV0YS5rOHMuaW8vdjEifQ","remainingItemCount":79500},"items":[{"kind":'
        '"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1","metadata":{"name":"config-0000","namespace":'
        '"ns-0000","labels":{"app.kubernetes.io/part-of":"ns-0000"},"uid":"958d13e7-388d-4259-a8b1-1dfd55d462f1",'
        '"creationTimestamp":"2026-11-29T01:53:09Z","resourceVersion":"1003","generation":9223372036854775807,'
        '"annotations":{"kube-rehash.io/sources":"{\\"v\\":2,\\"s\\":[[\\"configmap\\",\\"caf\\u00e9\\"]]}",'
        '"note":"\\ud83d\\ude00 \\u2028 \\t"}}}]}'
    )
    assert load_json(page) == json.loads(page)
    assert load_json(page.encode()) == json.loads(page)


@pytest.mark.parametrize(
    "text",
    [
        '"\\ud800"',  # an escaped lone surrogate: orjson refuses it, the standard library keeps it
        '{"a": "\\udc00x"}',
        "NaN",
        "[Infinity, -Infinity]",
    ],
)
def test_text_orjson_refuses_is_decoded_by_the_standard_library(text: str) -> None:
    expected = json.loads(text)
    decoded = load_json(text)
    assert repr(decoded) == repr(expected) or (isinstance(decoded, float) and math.isnan(decoded))


def test_an_integer_beyond_64_bits_is_a_float_the_one_difference() -> None:
    """No API server sends one: Kubernetes' integers are int64, and kube-apiserver decodes a larger number in
    a custom resource as a float64 before it stores or sends it."""
    assert load_json("[18446744073709551615, -9223372036854775808]") == [2**64 - 1, -(2**63)]
    assert load_json("123456789012345678901234567890") == float(123456789012345678901234567890)


def test_bytes_are_utf8_only() -> None:
    """JSON exchanged between systems is UTF-8 (RFC 8259); the standard library would guess UTF-16."""
    text = '{"name": "caf\u00e9"}'
    assert load_json(text.encode("utf-8")) == {"name": "caf\u00e9"}
    with pytest.raises(ValueError):
        load_json(text.encode("utf-16-le"))
    with pytest.raises(ValueError):
        load_json(b'{"name": "caf\xe9"}')  # Latin-1


@pytest.mark.parametrize("text", ["", "{", "{'a': 1}", '{"a": 1} x', b"\xff\xfe\x00", "[1,]", "nul"])
def test_text_that_is_not_json_raises_value_error(text: str | bytes) -> None:
    with pytest.raises(ValueError):
        json.loads(text)
    with pytest.raises(ValueError):
        load_json(text)
