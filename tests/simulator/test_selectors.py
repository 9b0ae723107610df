"""Label and field selector parsing and matching."""

from __future__ import annotations

import pytest

from rehash_simulator.errors import ApiError
from rehash_simulator.selectors import field_predicate, label_predicate

OBJ = {"metadata": {"name": "a", "namespace": "ns", "labels": {"app": "web", "tier": "front", "n": "5"}}}


@pytest.mark.parametrize(
    ("selector", "expected"),
    [
        ("", True),
        ("app=web", True),
        ("app==web", True),
        ("app!=web", False),
        ("app!=db", True),
        ("missing!=x", True),
        ("app in (web,db)", True),
        ("app in (db, cache)", False),
        ("app notin (db,cache)", True),
        ("app notin (web)", False),
        ("missing notin (x)", True),
        ("app", True),
        ("missing", False),
        ("!missing", True),
        ("!app", False),
        ("app=web,tier=front", True),
        ("app=web,tier=back", False),
        ("app in (web,db),!missing,tier", True),
        ("n>3", True),
        ("n<3", False),
        ("example.com/key=x", False),
    ],
)
def test_label_selector_table(selector: str, expected: bool) -> None:
    assert label_predicate(selector)(OBJ) is expected


@pytest.mark.parametrize("selector", ["app=(", "app in web", "a b", "app=web,", "=x", "app in (a b)"])
def test_bad_label_selector_is_400(selector: str) -> None:
    with pytest.raises(ApiError) as caught:
        label_predicate(selector)
    assert caught.value.code == 400


@pytest.mark.parametrize(
    ("selector", "expected"),
    [
        ("metadata.name=a", True),
        ("metadata.name==a", True),
        ("metadata.name!=a", False),
        ("metadata.namespace=ns,metadata.name=a", True),
        ("metadata.namespace=ns,metadata.name=b", False),
    ],
)
def test_field_selector_table(selector: str, expected: bool) -> None:
    assert field_predicate(selector, "configmaps")(OBJ) is expected


def test_secret_type_field() -> None:
    helm = {"metadata": {"name": "h"}, "type": "helm.sh/release.v1"}
    plain = {"metadata": {"name": "p"}, "type": "Opaque"}
    match = field_predicate("type!=helm.sh/release.v1", "secrets")
    assert [match(helm), match(plain)] == [False, True]


def test_unsupported_field_is_400_with_real_message() -> None:
    with pytest.raises(ApiError) as caught:
        field_predicate("type=Opaque", "configmaps")
    assert caught.value.code == 400
    assert caught.value.message == "field label not supported: type"


def test_bad_field_syntax_is_400() -> None:
    with pytest.raises(ApiError) as caught:
        field_predicate("metadata.name", "configmaps")
    assert caught.value.code == 400
