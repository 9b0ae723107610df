"""The combined hash: golden values, the documented encoding, and the properties users rely on."""

from __future__ import annotations

import base64
import hashlib
import hmac

import pytest
import xxhash
from hypothesis import given
from hypothesis import strategies as st

from reconcile.model.hashing import (
    ABSENT,
    ContentError,
    SourceToken,
    combine,
    extract_entries,
    key_fingerprint,
    selection_tag,
    source_token,
)

CM = {"data": {"a": "1", "b": "two"}, "binaryData": {"c": "AAEC"}}
SECRET = {"data": {"pw": base64.b64encode(b"hunter2").decode()}}
KEY = b"0123456789abcdef0123"


def field(value: bytes) -> bytes:
    return len(value).to_bytes(8, "big") + value


def spec_source_digest(entries: dict[bytes, bytes]) -> bytes:
    """docs/hash.md, 'Source digest', written again from the document rather than the code."""
    body = b"kube-rehash/source/v1\x00" + len(entries).to_bytes(8, "big")
    for key in sorted(entries):
        body += field(key) + field(entries[key])
    return xxhash.xxh3_128_digest(body)


def spec_combined(records: list[tuple[str, str, str]]) -> str:
    body = b"kube-rehash/combined/v1\x00" + len(records).to_bytes(8, "big")
    for kind, name, token in sorted(records):
        body += field(kind.encode()) + field(name.encode()) + field(token.encode())
    return "v1:" + xxhash.xxh3_128_hexdigest(body)


def test_golden_source_tokens_are_pinned() -> None:
    assert source_token("configmap", CM, None, None) == "7fd395a3a62802dba1ac3e4c69f5066d"
    assert source_token("configmap", CM, frozenset({"a"}), None) == "7922868ad7f31f1076afe7058e774374"
    assert source_token("secret", SECRET, None, None) == "29372216edd43c9489bc77380c52e4e2"


def test_golden_combined_values_are_pinned() -> None:
    records = [
        SourceToken("configmap", "app", "7fd395a3a62802dba1ac3e4c69f5066d"),
        SourceToken("secret", "db", "29372216edd43c9489bc77380c52e4e2"),
    ]
    assert combine(records, None) == "v1:e30f8f78882d7b5fe483cdde93610c6d"
    assert combine(records, KEY) == "v1k:bfa180c5f8c3c9d810c1a4857a195d60"
    assert combine([SourceToken("configmap", "opt", ABSENT)], None) == "v1:67338f772a6d07990362346761e1d97b"
    assert combine([], None) == "v1:c23dd4a1fd88e78bdb34f375bf8a600b"
    assert key_fingerprint(KEY) == "66dfa3f5d38a"
    assert selection_tag(frozenset({"a", "b"})) == "31a9d8ff707398ec"
    assert selection_tag(None) == "*"


def test_documented_encoding_recomputes_the_stored_value() -> None:
    entries = {b"a": b"1", b"b": b"two", b"c": b"\x00\x01\x02"}
    assert spec_source_digest(entries).hex() == source_token("configmap", CM, None, None)
    secret = spec_source_digest({b"pw": b"hunter2"}).hex()
    cm = spec_source_digest(entries).hex()
    expected = spec_combined([("configmap", "app", cm), ("secret", "db", secret)])
    assert (
        combine([SourceToken("secret", "db", secret), SourceToken("configmap", "app", cm)], None) == expected
    )


def test_keyed_mode_is_hmac_sha256_over_the_digests() -> None:
    digest = spec_source_digest({b"pw": b"hunter2"})
    assert (
        source_token("secret", SECRET, None, KEY) == hmac.new(KEY, digest, hashlib.sha256).digest()[:16].hex()
    )


def test_keyed_value_differs_from_unkeyed_and_between_keys() -> None:
    token = SourceToken("secret", "db", source_token("secret", SECRET, None, None))
    values = {combine([token], None), combine([token], KEY), combine([token], KEY + b"x")}
    assert len(values) == 3


def test_secret_data_is_decoded_so_equal_bytes_hash_equal() -> None:
    as_secret = source_token("secret", {"data": {"k": base64.b64encode(b"v").decode()}}, None, None)
    as_configmap = source_token("configmap", {"data": {"k": "v"}}, None, None)
    assert as_secret == as_configmap


def test_metadata_never_contributes() -> None:
    with_meta = {**CM, "metadata": {"name": "x", "resourceVersion": "9", "labels": {"a": "b"}}}
    assert source_token("configmap", with_meta, None, None) == source_token("configmap", CM, None, None)


def test_key_selection_ignores_other_keys() -> None:
    changed_other = {"data": {"a": "1", "b": "CHANGED"}, "binaryData": {"c": "AAEC"}}
    keys = frozenset({"a"})
    assert source_token("configmap", changed_other, keys, None) == source_token("configmap", CM, keys, None)
    assert source_token("configmap", changed_other, None, None) != source_token("configmap", CM, None, None)


def test_a_missing_source_is_absent_and_differs_from_an_empty_one() -> None:
    assert source_token("configmap", None, None, None) == ABSENT
    empty = combine([SourceToken("configmap", "x", source_token("configmap", {}, None, None))], None)
    assert empty != combine([SourceToken("configmap", "x", ABSENT)], None)


def test_invalid_base64_is_a_content_error_without_the_value() -> None:
    with pytest.raises(ContentError) as info:
        extract_entries("secret", {"data": {"k": "not base64!!"}})
    assert "not base64!!" not in str(info.value)


def test_non_utf8_and_lone_surrogates_hash_without_crashing() -> None:
    assert len(source_token("configmap", {"data": {"k": "\ud800"}}, None, None)) == 32
    binary = base64.b64encode(b"\xff\xfe\x00").decode()
    assert len(source_token("configmap", {"binaryData": {"k": binary}}, None, None)) == 32


def test_field_boundaries_are_unambiguous() -> None:
    # A k=v;-style join would make these equal.
    one = source_token("configmap", {"data": {"a": "b;c=d"}}, None, None)
    two = source_token("configmap", {"data": {"a": "b", "c": "d"}}, None, None)
    assert one != two
    assert combine([SourceToken("configmap", "ab", "c")], None) != combine(
        [SourceToken("configmap", "a", "bc")], None
    )


texts = st.text(min_size=0, max_size=20)
datas = st.dictionaries(texts, texts, max_size=6)


@given(datas, st.randoms())
def test_key_order_never_matters(data: dict[str, str], rnd: object) -> None:
    items = list(data.items())
    rnd.shuffle(items)  # type: ignore[attr-defined]
    shuffled = dict(items)
    assert source_token("configmap", {"data": shuffled}, None, None) == source_token(
        "configmap", {"data": data}, None, None
    )


@given(st.lists(st.tuples(st.sampled_from(["configmap", "secret"]), texts, texts), max_size=6), st.randoms())
def test_reference_order_never_matters(records: list[tuple[str, str, str]], rnd: object) -> None:
    tokens = [SourceToken(*r) for r in records]
    shuffled = list(tokens)
    rnd.shuffle(shuffled)  # type: ignore[attr-defined]
    assert combine(shuffled, None) == combine(tokens, None)


@given(datas, texts, texts)
def test_any_content_change_changes_the_hash(data: dict[str, str], key: str, value: str) -> None:
    changed = {**data, key: value}
    if changed == data:
        return
    before = combine(
        [SourceToken("configmap", "app", source_token("configmap", {"data": data}, None, None))], None
    )
    after = combine(
        [SourceToken("configmap", "app", source_token("configmap", {"data": changed}, None, None))], None
    )
    assert before != after
