"""Cluster-wide lists taken a namespace at a time (pipeline/namespace_stream.py), and the tally a streamed
pass plans from (policy/tally.py): pure, no server."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reconcile.errors import BudgetExhausted, RehashError
from reconcile.model.kinds import DEPLOYMENT, STATEFULSET
from reconcile.model.order import namespace_order
from reconcile.pipeline.namespace_stream import (
    NamespaceStream,
    namespace_of,
    next_namespace,
    runs_of,
    take_each,
)
from reconcile.policy.reads import KIND_IN_FULL_MIN, estimate_reads
from reconcile.policy.tally import Tally, tally_of
from reconcile.policy.triage import triage_listed
from tests.test_triage import listed

NAME = st.from_regex(r"[a-z]([a-z0-9-]{0,6}[a-z0-9])?", fullmatch=True)


def item(namespace: str, name: str) -> dict[str, Any]:
    return {"metadata": {"namespace": namespace, "name": name}}


def in_key_order(keys: set[tuple[str, str]]) -> list[dict[str, Any]]:
    """Objects as the API server lists them: by etcd key, `namespace/name`."""
    return [item(ns, n) for ns, n in sorted(keys, key=lambda k: f"{k[0]}/{k[1]}")]


def test_a_page_of_odd_objects_is_split_by_namespace_as_namespace_of_reads_each() -> None:
    page: list[Any] = [
        {"metadata": {"name": "no-namespace"}},
        {"metadata": "not an object"},
        {},
        item("a", "x"),
        {"metadata": {"namespace": 7, "name": "y"}},
        {"metadata": {"namespace": "7", "name": "z"}},
        item("b", "w"),
    ]
    assert runs_of(page) == [("", 0, 3), ("a", 3, 4), ("7", 4, 6), ("b", 6, 7)]


class OtherMapping(dict[str, Any]):
    """A metadata that is a mapping but not a `dict`: `namespace_of` reads no namespace from it."""


ODD_METADATA = st.one_of(
    st.fixed_dictionaries({"namespace": st.one_of(NAME, st.integers(0, 3), st.none())}),
    st.fixed_dictionaries({"name": NAME}),
    st.builds(lambda ns: OtherMapping(namespace=ns), NAME),
    st.just("not an object"),
)


@given(
    st.lists(
        st.one_of(
            st.builds(item, NAME, NAME), st.builds(lambda m: {"metadata": m}, ODD_METADATA), st.just({})
        )
    )
)
def test_a_page_is_split_into_the_stretches_namespace_of_reads_object_by_object(page: list[Any]) -> None:
    expected: list[tuple[str, int, int]] = []
    for index, obj in enumerate(page):
        namespace = namespace_of(obj)
        if expected and expected[-1][0] == namespace:
            expected[-1] = (namespace, expected[-1][1], index + 1)
        else:
            expected.append((namespace, index, index + 1))
    assert runs_of(page) == expected


@given(st.sets(st.tuples(NAME, NAME), max_size=40))
def test_taking_every_namespace_in_list_order_yields_each_object_once_grouped(
    keys: set[tuple[str, str]],
) -> None:
    stream = NamespaceStream(iter(in_key_order(keys)))
    namespaces = sorted({ns for ns, _ in keys}, key=namespace_order)
    taken = {ns: stream.take(ns) for ns in namespaces}
    assert {(ns, o["metadata"]["name"]) for ns, objs in taken.items() for o in objs} == keys
    assert all(o["metadata"]["namespace"] == ns for ns, objs in taken.items() for o in objs)


def test_the_list_order_is_the_key_order_not_the_names() -> None:
    assert sorted(["a", "a-b", "ab"], key=namespace_order) == ["a-b", "a", "ab"]
    stream = NamespaceStream(iter(in_key_order({("a", "x"), ("a-b", "y"), ("ab", "z")})))
    assert [o["metadata"]["name"] for o in stream.take("a-b")] == ["y"]
    assert [o["metadata"]["name"] for o in stream.take("a")] == ["x"]


def test_a_namespace_taken_later_passes_by_those_before_it_and_reads_no_further_than_it() -> None:
    pulled: list[str] = []

    def pages() -> Iterator[dict[str, Any]]:
        for obj in in_key_order({("a", "1"), ("b", "2"), ("c", "3"), ("d", "4")}):
            pulled.append(obj["metadata"]["namespace"])
            yield obj

    stream = NamespaceStream(pages())
    assert [o["metadata"]["namespace"] for o in stream.take("c")] == ["c"]
    assert pulled == ["a", "b", "c", "d"]  # one object past the namespace: where the next one starts
    assert stream.take("b") == []  # behind the stream: never re-read
    assert [o["metadata"]["name"] for o in stream.take("d")] == ["4"]
    assert stream.take("e") == []


@pytest.mark.parametrize("error", [BudgetExhausted("pass budget"), RehashError("list failed")])
def test_what_the_list_raises_is_raised_once_and_the_stream_is_then_over(error: RehashError) -> None:
    def pages() -> Iterator[dict[str, Any]]:
        yield item("a", "1")
        raise error

    stream = NamespaceStream(pages())
    with pytest.raises(type(error)):
        stream.take("a")
    assert stream.take("b") == []


def test_the_tally_counts_what_triage_says_each_workload_needs() -> None:
    fresh = [listed(f"w{i}", f"ns-{i % 3}") for i in range(KIND_IN_FULL_MIN + 2)]
    sets = [listed("s", "ns-0", STATEFULSET)]
    ignored = [listed("off", "ns-1", **{"kube-rehash.io/ignore": "true"})]
    views = fresh + sets + ignored
    triage = triage_listed(views, "")
    tally = tally_of(views, triage)
    assert tally.total == len(views)
    assert tally.workloads == {"ns-0": 15, "ns-1": 15, "ns-2": 14}
    assert tally.namespaces() == ["ns-0", "ns-1", "ns-2"]
    assert tally.need_spec == {"deployments": KIND_IN_FULL_MIN + 2, "statefulsets": 1}
    assert tally.opted == {"deployments": KIND_IN_FULL_MIN + 3, "statefulsets": 1}
    assert tally.kinds_in_full() == [DEPLOYMENT]
    assert tally.spec_namespaces == {"ns-0", "ns-1", "ns-2"}
    assert tally.reads_estimate([DEPLOYMENT], recorded_by_name=True, content_by_name=True) == estimate_reads(
        unread=1, first_sight=KIND_IN_FULL_MIN + 3, by_name=0
    )
    assert tally.reads_estimate([DEPLOYMENT], recorded_by_name=True, content_by_name=False) == estimate_reads(
        unread=1, first_sight=KIND_IN_FULL_MIN + 3, by_name=0, namespaces=3
    )


def test_an_empty_tally_plans_nothing() -> None:
    tally = Tally()
    assert tally.total == 0 and tally.namespaces() == [] and tally.kinds_in_full() == []
    assert tally.reads_estimate([], recorded_by_name=True, content_by_name=True) == 0


def test_a_list_out_of_key_order_is_noticed_once_drained_and_a_sorted_one_is_not() -> None:
    unsorted = NamespaceStream(iter([item("a", "1"), item("c", "3"), item("b", "2")]))
    assert [o["metadata"]["name"] for o in unsorted.take("a")] == ["1"]
    assert not unsorted.disordered
    unsorted.drain()
    assert unsorted.disordered
    ordered = NamespaceStream(iter(in_key_order({("a", "1"), ("a", "0"), ("b", "2"), ("c", "3")})))
    ordered.take("a")
    ordered.drain()
    assert not ordered.disordered


@given(st.lists(st.tuples(NAME, NAME), max_size=30), st.lists(st.tuples(NAME, NAME), max_size=30))
def test_walking_by_the_first_namespace_any_list_has_next_takes_every_object_in_any_order(
    first: list[tuple[str, str]], second: list[tuple[str, str]]
) -> None:
    """Lists in any order, even out of key order: taking the namespace `next_namespace` names from every
    stream without passing by takes each object exactly once."""
    streams = {
        k: NamespaceStream(iter([item(ns, n) for ns, n in keys])) for k, keys in enumerate((first, second))
    }
    taken: list[tuple[int, str, str]] = []
    while (namespace := next_namespace(streams, lambda key, exc: None)) is not None:
        for key, objects in take_each(streams, namespace, lambda k, exc: None, pass_by=False):
            assert all(o["metadata"]["namespace"] == namespace for o in objects)
            taken += [(key, namespace, o["metadata"]["name"]) for o in objects]
    assert sorted(taken) == sorted([(0, ns, n) for ns, n in first] + [(1, ns, n) for ns, n in second])


def test_a_list_that_fails_while_the_next_namespace_is_sought_is_told_and_left_out() -> None:
    def failing() -> Iterator[dict[str, Any]]:
        raise RehashError("list failed")
        yield item("a", "1")

    streams = {"ok": NamespaceStream(iter([item("b", "1")])), "bad": NamespaceStream(failing())}
    told: list[str] = []
    assert next_namespace(streams, lambda key, exc: told.append(key)) == "b"
    assert told == ["bad"] and list(streams) == ["ok"]
    assert not streams["ok"].over
    streams["ok"].take("b")
    assert next_namespace(streams, lambda key, exc: None) is None and streams["ok"].over


class Paged:
    """A list that gives its objects a page at a time, as `ListedItems.chunks` does."""

    def __init__(self, objects: list[dict[str, Any]], sizes: list[int]) -> None:
        self.pages: list[list[dict[str, Any]]] = []
        self.read = 0
        at = 0
        for size in [*sizes, len(objects)]:
            if at >= len(objects):
                break
            self.pages.append(objects[at : at + max(size, 1)])
            at += max(size, 1)

    def __iter__(self) -> Iterator[dict[str, Any]]:
        raise AssertionError("a paged list is walked by its chunks")

    def chunks(self) -> Iterator[list[dict[str, Any]]]:
        for page in self.pages:
            self.read += 1
            yield page


@given(
    st.sets(st.tuples(NAME, NAME), max_size=40),
    st.lists(st.integers(min_value=1, max_value=7), max_size=12),
)
def test_a_list_read_by_pages_gives_each_namespace_whole_however_its_pages_split_it(
    keys: set[tuple[str, str]], sizes: list[int]
) -> None:
    """A namespace's objects may span pages, and a page may hold several namespaces: taking every
    namespace in list order still yields each object once, grouped, and a sorted list is never disordered."""
    stream = NamespaceStream(Paged(in_key_order(keys), sizes))  # type: ignore[arg-type]
    namespaces = sorted({ns for ns, _ in keys}, key=namespace_order)
    taken = {ns: stream.take(ns) for ns in namespaces}
    assert {(ns, o["metadata"]["name"]) for ns, objs in taken.items() for o in objs} == keys
    assert all(o["metadata"]["namespace"] == ns for ns, objs in taken.items() for o in objs)
    assert [len(objs) for objs in taken.values()] == [sum(1 for k in keys if k[0] == ns) for ns in namespaces]
    stream.drain()
    assert stream.over and not stream.disordered


def test_a_paged_list_is_read_no_further_than_the_page_where_the_next_namespace_starts() -> None:
    paged = Paged(in_key_order({("a", "1"), ("a", "2"), ("b", "3"), ("c", "4"), ("d", "5")}), [2, 2])
    stream = NamespaceStream(paged)  # type: ignore[arg-type]
    assert [o["metadata"]["name"] for o in stream.take("a")] == ["1", "2"]
    assert paged.read == 2  # the page after `a`'s: where the next namespace starts
    assert [o["metadata"]["name"] for o in stream.take("c")] == ["4"]
    assert paged.read == 3
    assert stream.upcoming() == "d"


@pytest.mark.parametrize(
    "sizes", [[1, 1, 1], [3], [2, 1], [1, 2]], ids=["a-page-each", "one-page", "split-after", "split-before"]
)
def test_a_paged_list_out_of_key_order_is_noticed_where_the_walk_reaches_it_in_or_across_pages(
    sizes: list[int],
) -> None:
    stream = NamespaceStream(Paged([item("a", "1"), item("c", "3"), item("b", "2")], sizes))  # type: ignore[arg-type]
    assert [o["metadata"]["name"] for o in stream.take("a")] == ["1"]
    assert not stream.disordered  # `c` is the next namespace, in order so far
    assert [o["metadata"]["name"] for o in stream.take("c")] == ["3"]
    assert stream.disordered  # `b`, passed by after `c`, sorts before it: the walk recovers it


def test_what_a_paged_list_raises_is_raised_once_and_the_stream_is_then_over() -> None:
    class Failing(Paged):
        def chunks(self) -> Iterator[list[dict[str, Any]]]:
            yield [item("a", "1"), item("b", "2")]
            raise RehashError("list failed")

    stream = NamespaceStream(Failing([], []))  # type: ignore[arg-type]
    assert [o["metadata"]["name"] for o in stream.take("a")] == ["1"]
    with pytest.raises(RehashError):
        stream.take("c")
    assert stream.take("d") == [] and stream.over


def test_a_page_lets_go_of_each_stretch_once_taken_or_passed_by_and_keeps_the_rest() -> None:
    paged = Paged([item("a", "1"), item("a", "2"), item("b", "3"), item("c", "4"), item("c", "5")], [4])
    first = paged.pages[0]
    stream = NamespaceStream(paged)
    taken = stream.take("b")
    assert taken == [item("b", "3")]  # what was taken is whole; the page no longer holds it
    assert first == [None, None, None, item("c", "4")]
    assert [o["metadata"]["name"] for o in stream.take("c")] == ["4", "5"]
    assert first == [None] * 4
