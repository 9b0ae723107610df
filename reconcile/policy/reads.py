"""The read strategy: for every read of a pass, one list of a collection or GETs by name.

Why one module: a pass reads four things (workloads in full, their rollout status, source metadata, source
content) at three scopes (a namespace, the whole cluster, one object), and each read can be a list or a GET
each. Spread over the stages, the thresholds drifted apart and status reads bypassed them; here one cost
model answers every case from counts alone, and says why, so `-v` shows why a pass listed what it listed.

The cost model. A GET moves one object in one request. A list moves every object of the collection in one
request per page (`pageSize` objects, handed in as `page`). Requests are what a time budget pays for
(1/qps seconds each at the shipped rate) and what the API server charges a full authn/authz/audit cycle
for; bytes are what a list wastes on the objects nobody wanted. So a list is chosen only where it saves
requests (fewer pages than wanted objects) and the collection holds few enough objects per wanted one
(`Bound.ratio`) that the bytes it wastes stay bounded. Where the collection's size is unknown, small
wants stay GETs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import StrEnum

from reconcile.model.choices import Fetch


class Way(StrEnum):
    LIST = "list"
    GET = "get"


class Read(StrEnum):
    """What is read. Each has its own bound: an unwanted item of a metadata list is ~300 bytes (~40 once
    gzipped), of a content list a whole ConfigMap or Secret, of a workload list a whole pod template."""

    SOURCE_METADATA = "source metadata"
    SOURCE_CONTENT = "source content"
    WORKLOADS = "workloads in full"


@dataclass(frozen=True)
class Costs:
    """What the pass pays for a read: lists come `page` objects a request. `page` is the first page's size
    (`pageSize`, 500 unset): a metadata list read to its end may grow to 1,000 a page (kube/page_size.py),
    but within the bounds a list may be chosen (at most `Bound.ratio` objects per wanted one) its pages are
    fewer than the wanted objects at either size, so the price per page never turns a choice."""

    page: int


@dataclass(frozen=True)
class Bound:
    more_than: int
    """A list is considered only for more wanted objects than this."""
    ratio: int
    """... and only where the collection holds at most this many objects per wanted one."""
    blind_more_than: int = 40
    """Where the collection's size is unknown, a list only for more wanted objects than this (a source
    reader then lists at most `ratio` objects per wanted one: `list_limit`, `keep_listing`)."""


# Measured with `make bench` (docs/engineering/performance-history.md; docs/large-clusters.md, "Time budget"):
# - source metadata: up to 40 names, parallel GETs over kept-alive connections beat a list; a list is worth
#   it where the namespace (or cluster) holds at most 16 objects per wanted one (a metadata GET moves ~300
#   bytes plus ~1 KB of request headers, a list item ~40 bytes once the page is gzipped);
# - source content: a list moves every object in full; it is worth it from 4 wanted objects where the
#   namespace holds at most 16 per wanted one, at any rate: at a rate limit each GET costs the budget 1/qps
#   s and a wasted object a few KB; at qps 0 a request costs about 4 ms (the list floor's steady pass at
#   10x: 1.50 s for 354 requests), as much as decoding a few dozen unwanted ConfigMaps. A bound of 8 at
#   qps 0 would leave a 10x first install 353 GETs for namespaces whose first page does not show every
#   wanted source (docs/engineering/performance-history.md, "At 10x, at the shipped defaults"). A list of a
#   namespace whose size
#   is not known asks for at most that many objects in its first page, which tells the size, with no
#   `limit=1` probe first (at 10x the benchmark's cluster such probes would be 2,000 of a first install's
#   requests). A first install then reads a namespace's sources with one list per kind, not a GET per
#   referenced source (docs/engineering/performance-history.md, "Time budget and the shipped defaults"). A
#   namespace of 6,400
#   ConfigMaps cut into 16 batches is not listed in full by every batch at first sight (that would move
#   550 MB): the first batch's first page shows it too large, and every batch reads by name;
# - workloads in full (to decide them, or for the status of rollouts we started): a list of the
#   namespace's objects of the kind as soon as it saves requests and moves at most 4 objects per wanted
#   one (a Deployment is a few KB; at the shipped qps 20 a GET costs the budget 50 ms: 120 Deployments of
#   one namespace changed at once are one list, not 120 GETs).
BOUNDS = {
    Read.SOURCE_METADATA: Bound(more_than=40, ratio=16),
    Read.SOURCE_CONTENT: Bound(more_than=3, ratio=16, blind_more_than=3),
    Read.WORKLOADS: Bound(more_than=1, ratio=4),
}
# Cluster-wide metadata list of a source kind in a whole-cluster pass: no minimum (one request per page
# serves every namespace), the same ratio as a namespace's metadata list. Its first page tells the size
# where the server says (no selector: ConfigMaps); a list with a field selector (Secrets, Helm releases
# left out) is not told it, and stops once it has shown `ratio` objects per wanted one. Only for at most
# `blind_more_than` wanted sources, which a list of unknown size would not serve, does a `limit=1` probe
# learn the size first: for more, a probe would add 2 requests to every steady pass over the list floor's.
CLUSTER_SOURCES = Bound(more_than=0, ratio=16)
# A workload kind most of whose opted-in workloads need their whole object (first sight, a mass re-apply)
# is listed in full once, paged, instead of per namespace or by name, when more than this many need it.
# At a rate limit a quarter of them is enough: the GETs and namespace lists it replaces cost the budget
# 1/qps s each, the list's pages (500 objects each) far fewer. At 10x the benchmark's cluster at the
# shipped defaults, a first install's third pass has 2,941 unadopted workloads to read: 396 GETs and about
# 500 namespace lists, or 60 pages of one list of each kind (docs/engineering/performance-history.md, "Time
# budget").
KIND_IN_FULL_MIN = 40
KIND_IN_FULL_SHARE = 2
KIND_IN_FULL_SHARE_LIMITED = 4


@dataclass(frozen=True)
class Choice:
    way: Way
    why: str

    @property
    def lists(self) -> bool:
        return self.way is Way.LIST


def pages(total: int, page: int) -> int:
    """Requests a list of `total` objects takes, `page` objects a request."""
    return max(1, math.ceil(total / page))


def choose(read: Read, wanted: int, total: int | None, *, costs: Costs, mode: Fetch = Fetch.AUTO) -> Choice:
    """How to read `wanted` objects of one collection holding `total` (None: unknown) for `read`, at
    these `costs`.

    `mode` is the `fetch` setting for sources (`list`/`get` force the way); workloads ignore it."""
    if read is not Read.WORKLOADS and mode is not Fetch.AUTO:
        return Choice(Way(mode.value), f"fetch: {mode}")
    return weigh(BOUNDS[read], wanted, total, costs.page)


def list_limit(read: Read, wanted: int, *, costs: Costs) -> int:
    """The `limit` of the first page of a list started where the collection's size is unknown: at most
    `ratio` objects per wanted one, so that page alone tells whether a list is worth it (no continue token:
    it was the whole list) and wastes no more than a list the bound allows, with no probe before it."""
    return max(1, min(costs.page, BOUNDS[read].ratio * wanted))


def keep_listing(read: Read, wanted: int, *, listed: int, remaining: int | None, costs: Costs) -> bool:
    """Whether a list started blind goes on after `listed` objects, with `remaining` more to come (None: the
    server did not say): while the whole collection is worth a list. Stopped, the wanted objects its pages
    did not show are read by name."""
    if remaining is None:
        return listed < BOUNDS[read].ratio * wanted
    return choose(read, wanted, listed + remaining, costs=costs).lists


def choose_cluster_sources(wanted: int, total: int | None, *, costs: Costs) -> Choice:
    """Whether a whole-cluster pass learns the identities of `wanted` referenced sources of a kind from one
    cluster-wide metadata list (of `total` objects, None: not told) instead of per namespace."""
    return weigh(CLUSTER_SOURCES, wanted, total, costs.page)


def probes_cluster_size(wanted: int) -> bool:
    """Whether the size of a source kind's cluster-wide collection is asked with a `limit=1` list before
    the list itself: only for so few `wanted` sources that a list of unknown size would not serve them, so a
    page is not spent to learn it. For more, the list's own first page tells it."""
    return wanted <= CLUSTER_SOURCES.blind_more_than


def cluster_list_cap(wanted: int) -> int:
    """The objects a cluster-wide source list of unknown size may show for `wanted` sources before it is
    dropped for reads namespace by namespace."""
    return CLUSTER_SOURCES.ratio * wanted


def weigh(bound: Bound, wanted: int, total: int | None, page: int) -> Choice:
    if wanted <= bound.more_than:
        return Choice(Way.GET, f"{wanted} wanted: at most {bound.more_than} are read by name")
    if total is None:
        if wanted <= bound.blind_more_than:
            return Choice(Way.GET, f"{wanted} wanted of a collection of unknown size")
        return Choice(
            Way.LIST,
            f"{wanted} wanted of a collection of unknown size: a list of at most {bound.ratio} a wanted one",
        )
    if pages(total, page) >= wanted:
        return Choice(Way.GET, f"{wanted} wanted: a list of {total} costs {pages(total, page)} pages")
    if total > bound.ratio * wanted:
        return Choice(Way.GET, f"{wanted} wanted of {total}: over {bound.ratio} per wanted one")
    return Choice(Way.LIST, f"{wanted} wanted of {total}: one list of {pages(total, page)} page(s)")


def choose_kind_in_full(needing: int, opted: int, *, rate_limited: bool = False) -> Choice:
    """Whether a workload kind is listed in full once (cluster-wide, or per namespace under -n) because
    more than `KIND_IN_FULL_MIN` of its `opted` opted-in workloads, and most of them (a quarter at a rate
    limit), need their spec."""
    share = KIND_IN_FULL_SHARE_LIMITED if rate_limited else KIND_IN_FULL_SHARE
    why = f"{needing} of {opted} opted-in workloads need their spec" + (
        " (at a rate limit)" if rate_limited else ""
    )
    if needing > KIND_IN_FULL_MIN and needing * share > opted:
        return Choice(Way.LIST, why)
    return Choice(Way.GET, why)


def choose_kind_whole_midway(
    *, needing: int, reads: int, walked: int, remaining: int, whole_pages: int
) -> Choice:
    """Whether a walk that planned no kind in full lists a kind whole from where it is, having met `needing`
    workloads of it that need their spec, read with `reads` namespace lists or GETs, over the `walked`
    objects since the first of them: when more than `KIND_IN_FULL_MIN` did, and the `remaining` objects, at
    that rate, would take more reads than the list's `whole_pages` (all of them: a list starts at the first
    namespace, and passes by those already walked). The rate is counted from the first namespace that
    needed a read, not from the sample: an in-sync stretch before it says nothing of what follows."""
    if needing <= KIND_IN_FULL_MIN or walked <= 0:
        return Choice(Way.GET, f"{needing} need their spec: at most {KIND_IN_FULL_MIN} are read as met")
    expected = reads * remaining / walked
    why = (
        f"{needing} need their spec, read with {reads} requests over the {walked} objects since the first: "
        f"about {expected:.0f} more for the {remaining} left, where the list of the whole kind is "
        f"{whole_pages} pages"
    )
    return Choice(Way.LIST if expected > whole_pages else Way.GET, why)


# Reads of its sources' content a workload that needs its spec costs, about, where they are read by name:
# with its object and its write, the estimate that decides whether a pass may not fit its budget and must
# rotate its start. Where content is read per namespace, a namespace costs about as many (a content list of
# each source kind), however many of its workloads need their spec: at 10x the benchmark's cluster a first
# install is 10,000 writes and 2,000 namespace lists, where three requests per workload (30,000) would make
# a pass at qps 0 that fits in 82 s rotate, and its lists of whole workloads pass by the namespaces before
# its start (430 pages where 240 hold them all).
CONTENT_READS = 2
# Seconds per request assumed when no rate limit is set (qps 0), for the same estimates.
UNLIMITED_REQUEST_SECONDS = 0.005


def estimate_reads(*, unread: int, first_sight: int, by_name: int, namespaces: int | None = None) -> int:
    """The requests a pass's batches need: a whole-object read for each workload that needs its spec and
    no full list of its kind served (`unread`); for each of those `first_sight`, its write and its sources'
    content, at most `CONTENT_READS` per namespace where content is read per namespace (`namespaces`: how
    many namespaces hold them; None: read by name); and a GET per recorded source read by name
    (`by_name`)."""
    content = CONTENT_READS * first_sight
    if namespaces is not None:
        content = min(content, CONTENT_READS * namespaces)
    return unread + first_sight + content + by_name


def request_seconds(qps: float) -> float:
    """What one request costs the budget at the pass's rate."""
    return 1.0 / qps if qps > 0 else UNLIMITED_REQUEST_SECONDS


def requests_to_read(wanted: int, total: int | None, *, costs: Costs) -> int:
    """Requests that reading `wanted` workloads of a collection of `total` in full takes, as chosen."""
    if choose(Read.WORKLOADS, wanted, total, costs=costs).lists:
        return pages(total, costs.page) if total is not None else 1
    return wanted
