"""The one label-selector parser (reconcile/model/selectors.py): the API server's grammar, canonical text,
matching, and the errors that name the bad requirement."""

from __future__ import annotations

import pytest

from reconcile.model.selectors import SelectorError, parse_selector


@pytest.mark.parametrize(
    ("text", "labels", "expected"),
    [
        ("a=b", {"a": "b"}, True),
        ("a==b", {"a": "b"}, True),
        ("a=b", {"a": "c"}, False),
        ("a!=b", {}, True),
        ("a!=b", {"a": "b"}, False),
        ("a in (x, y)", {"a": "y"}, True),
        ("a in (x,y)", {"a": "z"}, False),
        ("a notin (x)", {"a": "z"}, True),
        ("a notin (x)", {}, True),
        ("a", {"a": ""}, True),
        ("!a", {"a": "1"}, False),
        ("!a", {}, True),
        (
            "app.kubernetes.io/part-of=shop, tier in (web,api), !legacy",
            {"app.kubernetes.io/part-of": "shop", "tier": "api"},
            True,
        ),
        ("a=1,b=2", {"a": "1"}, False),
    ],
)
def test_requirements_are_anded_and_match_as_the_api_server_does(
    text: str, labels: dict[str, str], expected: bool
) -> None:
    assert parse_selector(text).matches(labels) is expected


def test_equal_selectors_have_one_canonical_text() -> None:
    one = parse_selector("tier in (web,api), a==b ,!old")
    other = parse_selector("!old,a=b,tier in (api, web, api)")
    assert one == other and one.text == "a=b,!old,tier in (api,web)" == other.text


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ("", "empty"),
        ("a=b,,c=d", "empty requirement"),
        ("a in (x", "unbalanced"),
        ("a in ()", "at least one value"),
        ("a b", "not a requirement"),
        ("a=b c", "not a requirement"),
        ("-a=b", "'-a' is not a valid label key"),
        ("a=" + "x" * 64, "not a valid label value"),
        ("a>3", "not a requirement"),
    ],
)
def test_bad_syntax_is_refused_naming_the_requirement(text: str, named: str) -> None:
    with pytest.raises(SelectorError, match=named):
        parse_selector(text)


@pytest.mark.parametrize(
    "text",
    [
        "a=b",
        "a!=b",
        "a in (x,y)",
        "a notin (x)",
        "a",
        "!a",
        "example.com/tier in (web, api),!legacy,team==pay",
    ],
)
def test_the_canonical_text_parses_back_to_the_same_selector(text: str) -> None:
    selector = parse_selector(text)
    assert parse_selector(selector.text) == selector
