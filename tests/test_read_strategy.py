"""The read strategy (policy.reads): list or GET for every read of a pass, from counts alone."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

import pytest

from reconcile.kube.page_size import GROWN_PAGE_SIZE
from reconcile.model.choices import Fetch
from reconcile.policy.reads import (
    Choice,
    Costs,
    Read,
    Way,
    choose,
    choose_cluster_sources,
    choose_kind_in_full,
    choose_kind_whole_midway,
    cluster_list_cap,
    estimate_reads,
    keep_listing,
    list_limit,
    probes_cluster_size,
    request_seconds,
    requests_to_read,
)

LIST, GET = Way.LIST, Way.GET

PAGE = 500  # the shipped pageSize
COSTS = Costs(PAGE)  # qps 0: requests and bytes both cost time


@pytest.mark.parametrize(
    ("read", "wanted", "total", "way"),
    [
        # Workloads in full (to decide them, or for our rollouts' status): a list as soon as it saves
        # requests and moves at most 4 objects per wanted one.
        (Read.WORKLOADS, 1, 1, GET),  # one object: a GET is as cheap
        (Read.WORKLOADS, 2, 3, LIST),
        (Read.WORKLOADS, 50, 120, LIST),  # a mass change in a namespace of 120: 1 request, not 50
        (Read.WORKLOADS, 30, 120, LIST),
        (Read.WORKLOADS, 29, 120, GET),  # over 4 per wanted one
        (Read.WORKLOADS, 3, 75, GET),  # a few of a large namespace
        (Read.WORKLOADS, 40, None, GET),  # size unknown: small wants stay GETs
        (Read.WORKLOADS, 41, None, LIST),
        (Read.WORKLOADS, 3, 3 * PAGE, GET),  # a list of 3 pages saves nothing
        # Source metadata: by name up to 40, then a list where at most 16 objects per wanted one.
        (Read.SOURCE_METADATA, 40, 41, GET),
        (Read.SOURCE_METADATA, 41, 16 * 41, LIST),
        (Read.SOURCE_METADATA, 41, 16 * 41 + 1, GET),
        (Read.SOURCE_METADATA, 41, None, LIST),  # a list whose first page tells the size (BoundedList)
        # Source content: a list moves whole objects: from 4 wanted, at most 16 per wanted one.
        (Read.SOURCE_CONTENT, 3, 3, GET),
        (Read.SOURCE_CONTENT, 4, None, LIST),
        (Read.SOURCE_CONTENT, 12, 80, LIST),  # a first install's namespace: 1 request instead of 12
        (Read.SOURCE_CONTENT, 41, 16 * 41, LIST),
        (Read.SOURCE_CONTENT, 41, 16 * 41 + 1, GET),
    ],
)
def test_list_or_get_table(read: Read, wanted: int, total: int | None, way: Way) -> None:
    choice = choose(read, wanted, total, costs=COSTS)
    assert choice.way is way, choice.why
    assert str(wanted) in choice.why  # the reason -v logs names the counts it weighed


def test_the_fetch_setting_forces_the_way_for_sources_only() -> None:
    assert choose(Read.SOURCE_METADATA, 1000, 1000, mode=Fetch.GET, costs=COSTS).way is GET
    assert choose(Read.SOURCE_CONTENT, 1, 10_000, mode=Fetch.LIST, costs=COSTS).way is LIST
    assert choose(Read.WORKLOADS, 1, 10_000, mode=Fetch.LIST, costs=COSTS).way is GET
    assert choose(Read.SOURCE_METADATA, 1, 1, mode=Fetch.LIST, costs=COSTS).why == "fetch: list"


def test_cluster_wide_source_lists() -> None:
    assert choose_cluster_sources(100, 1600, costs=COSTS).way is LIST
    assert (
        choose_cluster_sources(100, 1601, costs=COSTS).way is GET
    )  # sparse: stays flat in unrelated objects
    assert choose_cluster_sources(0, 10, costs=COSTS).way is GET


def test_a_cluster_wide_list_of_unknown_size_is_read_up_to_its_cap_for_more_than_a_few_wanted() -> None:
    assert choose_cluster_sources(41, None, costs=COSTS).way is LIST
    assert cluster_list_cap(41) == 16 * 41
    assert choose_cluster_sources(40, None, costs=COSTS).way is GET


def test_only_a_few_wanted_sources_are_worth_a_size_probe_before_a_cluster_wide_list() -> None:
    assert probes_cluster_size(40)
    assert not probes_cluster_size(41)  # the list's first page tells the size, or the list is capped


def test_a_kind_is_listed_in_full_once_when_most_of_many_need_their_spec() -> None:
    assert choose_kind_in_full(41, 60).way is LIST
    assert choose_kind_in_full(41, 82).way is GET  # not most of them
    assert choose_kind_in_full(40, 40).way is GET  # not many


def test_at_a_rate_limit_a_kind_is_listed_in_full_once_a_quarter_of_it_needs_its_spec() -> None:
    # A first install's third pass at 10x: 2,941 of 10,000 unadopted, each a GET or a namespace list.
    assert choose_kind_in_full(2941, 10_000, rate_limited=True).way is LIST
    assert choose_kind_in_full(2941, 10_000).way is GET
    assert choose_kind_in_full(2500, 10_000, rate_limited=True).way is GET
    assert choose_kind_in_full(40, 41, rate_limited=True).way is GET  # not many


# needing, reads, walked since the first, remaining, whole pages -> way
MIDWAY = [
    # 10x, a first install's second pass past an in-sync stretch: 45 unseen Deployments in 5 namespaces
    # of the 150 objects walked since the first of them, 18,000 objects left, the whole list 150 pages.
    ((45, 5, 150, 18_000, 150), LIST),
    ((45, 5, 150, 4_000, 150), GET),  # near the end: 133 reads expected
    ((40, 5, 150, 18_000, 1), GET),  # not many yet
    ((41, 41, 20_000, 10_000, 20), LIST),  # one new workload in every namespace: a read each
    ((41, 41, 20_000, 10_000, 21), GET),  # the list costs more than the 20.5 reads expected
    ((41, 14, 0, 10_000, 1), GET),  # nothing walked: no rate
]


@pytest.mark.parametrize(("counts", "way"), MIDWAY)
def test_a_light_walk_lists_a_kind_whole_midway_when_the_rest_would_read_more_than_its_pages(
    counts: tuple[int, int, int, int, int], way: Way
) -> None:
    needing, reads, walked, remaining, pages = counts
    choice = choose_kind_whole_midway(
        needing=needing, reads=reads, walked=walked, remaining=remaining, whole_pages=pages
    )
    assert choice.way is way
    if way is LIST:
        expected = f"about {reads * remaining / walked:.0f} more for the {remaining} left"
        assert f"{expected}, where the list of the whole kind is {pages} pages" in choice.why


def test_requests_follow_the_choice() -> None:
    assert requests_to_read(50, 120, costs=COSTS) == 1
    assert requests_to_read(3, 75, costs=COSTS) == 3
    assert requests_to_read(41, None, costs=COSTS) == 1
    assert requests_to_read(600, 1200, costs=COSTS) == 3


def test_request_seconds_at_the_pass_rate() -> None:
    assert request_seconds(20) == pytest.approx(0.05)
    assert 0 < request_seconds(0) < 0.05  # unlimited: still not free, for the estimates


@pytest.mark.parametrize(
    ("wanted", "total", "way"),
    [
        (3, 3, GET),  # a list saves little, and its first page is lost when it proves too large
        (3, None, GET),
        (4, None, LIST),  # worth a list whose first page tells the namespace's size
        (12, 80, LIST),  # a first install's namespace: 1 request instead of 12
        (12, 192, LIST),  # 16 per wanted one
        (12, 193, GET),  # sparser: the bytes it would waste stay bounded
        (600, 1200, LIST),
    ],
)
def test_content_is_listed_wherever_the_list_saves_requests_and_wastes_at_most_16_per_wanted_one(
    wanted: int, total: int | None, way: Way
) -> None:
    choice = choose(Read.SOURCE_CONTENT, wanted, total, costs=COSTS)
    assert choice.way is way, choice.why


@pytest.mark.parametrize(
    ("read", "wanted", "costs", "limit"),
    [
        (Read.SOURCE_CONTENT, 12, COSTS, 192),  # 16 per wanted one
        (Read.SOURCE_CONTENT, 100, COSTS, PAGE),  # never more than a page
        (Read.SOURCE_METADATA, 41, COSTS, PAGE),
        (Read.SOURCE_METADATA, 20, Costs(10), 10),  # the configured page size
    ],
)
def test_a_list_of_unknown_size_asks_its_first_page_for_at_most_the_bound(
    read: Read, wanted: int, costs: Costs, limit: int
) -> None:
    assert list_limit(read, wanted, costs=costs) == limit


@pytest.mark.parametrize(
    ("wanted", "listed", "remaining", "goes_on"),
    [
        (50, 500, 200, True),  # 700 objects for 50 wanted: 14 per wanted one, within 16
        (50, 500, 301, False),  # 801: over 16 per wanted one; the rest is read by name
        (40, 500, None, True),  # the server did not say: on while at most 16 per wanted one were listed
        (40, 640, None, False),
    ],
)
def test_a_list_started_blind_goes_on_while_the_collection_is_worth_a_list(
    wanted: int, listed: int, remaining: int | None, goes_on: bool
) -> None:
    read = Read.SOURCE_CONTENT
    assert keep_listing(read, wanted, listed=listed, remaining=remaining, costs=COSTS) is goes_on


def test_a_first_install_whose_content_is_read_per_namespace_is_estimated_by_its_namespaces() -> None:
    """Each first-sight workload costs its write and its sources' content: two reads by name, or, read per
    namespace, at most a content list of each source kind per namespace (10x: 10,000 + 2,000)."""
    assert estimate_reads(unread=0, first_sight=10_000, by_name=0, namespaces=1_000) == 12_000
    assert estimate_reads(unread=0, first_sight=10_000, by_name=0) == 30_000
    assert estimate_reads(unread=3, first_sight=3, by_name=5, namespaces=5) == 3 + 3 + 6 + 5


DECIDERS = [*(partial(choose, read) for read in Read), choose_cluster_sources]
"""Every list-or-GET choice priced per page: each read at one collection, and a source kind cluster-wide."""


@pytest.mark.parametrize("decide", DECIDERS, ids=[*(read.name for read in Read), "cluster-sources"])
def test_a_choice_is_the_same_whether_the_list_s_pages_grow_or_not(decide: Callable[..., Choice]) -> None:
    """The strategy prices a list at the shipped 500 objects a page, while a metadata list read to its end
    grows to 1,000 (kube/page_size.py). Within the bounds a list may be chosen (at most `Bound.ratio` objects
    per wanted one), its pages are always fewer than the wanted objects at either size, so the price per page
    never turns a choice: every (wanted, total) decides the same at 500 and at 1,000 a page."""
    grown = Costs(GROWN_PAGE_SIZE)
    for wanted in range(1, 200):
        for total in [*range(0, 40 * wanted, max(1, wanted // 3)), 40 * wanted, None]:
            assert decide(wanted, total, costs=COSTS).way is decide(wanted, total, costs=grown).way
