"""A namespace's source list whose size is not known (reconcile/pipeline/bounded_list.py), over the transport
fake: no `limit=1` probe before it; its first page asks for at most the read bound's objects and tells
whether the list goes on; a list stopped early never makes a name it did not show absent, and its size
serves the namespace's later batches."""

from __future__ import annotations

from typing import Any

import responses

from reconcile.model.hashing import source_token
from reconcile.model.sources import Hashed, SourceKey
from reconcile.pipeline.read import ReadStage
from reconcile.policy.reads import BOUNDS, Read
from tests.e2e.conftest import configmap
from tests.stages.http import (
    CONFIGMAPS,
    META_LIST,
    SERVER,
    calls,
    page,
    read_contents,
    read_metadata,
    stamped,
    status,
)

CONTENT_RATIO = BOUNDS[Read.SOURCE_CONTENT].ratio  # the client of these tests runs at qps 0


def cm(name: str) -> dict[str, Any]:
    return stamped(configmap(name, {"k": name}), uid=f"uid-{name}", resource_version="3")


def full_page(items: list[dict[str, Any]], token: str | None = None, remaining: int | None = None) -> Any:
    body = page(items, token, meta=False)
    if remaining is not None:
        body["metadata"]["remainingItemCount"] = remaining
    return body


def wants(*names: str) -> dict[SourceKey, set[frozenset[str] | None]]:
    return {SourceKey("configmap", n): {None} for n in names}


def test_a_namespace_that_fits_is_read_with_one_list_and_no_size_probe(
    stage: ReadStage, mock: responses.RequestsMock
) -> None:
    names = ("a", "b", "c", "d")
    listed = [cm(n) for n in (*names, "unused")]
    mock.add(responses.GET, SERVER + CONFIGMAPS, json=full_page(listed))
    sources = read_contents(stage, "shop", wants(*names, "gone"))
    assert calls(mock) == [f"GET {CONFIGMAPS}?limit={CONTENT_RATIO * 5}"]
    assert mock.calls[0].request.headers["Accept"] == "application/json"
    assert sources.tokens[(SourceKey("configmap", "a"), None)] == Hashed(
        source_token("configmap", cm("a"), None, None), "uid-a", "3"
    )
    assert len(sources.tokens) == 4
    assert sources.is_absent(SourceKey("configmap", "gone"))  # the whole list did not show it


def test_a_namespace_too_large_stops_after_the_first_page_and_reads_the_rest_by_name(
    stage: ReadStage, mock: responses.RequestsMock
) -> None:
    limit = CONTENT_RATIO * 4
    first = [cm("a"), cm("b"), *(cm(f"filler-{i:02d}") for i in range(limit - 2))]
    mock.add(responses.GET, SERVER + CONFIGMAPS, json=full_page(first, token="t1", remaining=limit))
    mock.add(responses.GET, SERVER + f"{CONFIGMAPS}/x", json=cm("x"))
    mock.add(responses.GET, SERVER + f"{CONFIGMAPS}/y", status=404, json=status(404, "NotFound"))
    sources = read_contents(stage, "shop", wants("a", "b", "x", "y"))
    # 2 x limit objects for 4 wanted: over the bound, so no second page.
    assert calls(mock) == [f"GET {CONFIGMAPS}?limit={limit}", f"GET {CONFIGMAPS}/x", f"GET {CONFIGMAPS}/y"]
    assert {key.name for key, _ in sources.tokens} == {"a", "b", "x"}
    assert sources.absent == {SourceKey("configmap", "y")}  # confirmed by name, not by the partial list
    assert not sources.is_absent(SourceKey("configmap", "elsewhere"))
    # A later batch of the namespace knows its size from that page: by name at once, no list again.
    mock.add(responses.GET, SERVER + f"{CONFIGMAPS}/p", json=cm("p"))
    mock.add(responses.GET, SERVER + f"{CONFIGMAPS}/q", json=cm("q"))
    mock.add(responses.GET, SERVER + f"{CONFIGMAPS}/r", json=cm("r"))
    mock.add(responses.GET, SERVER + f"{CONFIGMAPS}/s", json=cm("s"))
    later = read_contents(stage, "shop", wants("p", "q", "r", "s"))
    assert calls(mock)[3:] == [f"GET {CONFIGMAPS}/{n}" for n in "pqrs"]
    assert len(later.tokens) == 4


def test_a_list_worth_going_on_is_read_to_its_end(stage: ReadStage, mock: responses.RequestsMock) -> None:
    limit = CONTENT_RATIO * 4
    first = [cm("a"), *(cm(f"filler-{i:02d}") for i in range(limit - 1))]
    mock.add(responses.GET, SERVER + CONFIGMAPS, json=full_page(first, token="t1", remaining=3))
    mock.add(responses.GET, SERVER + CONFIGMAPS, json=full_page([cm("x"), cm("y"), cm("z")]))
    sources = read_contents(stage, "shop", wants("a", "x", "y", "z", "gone"))
    assert calls(mock) == [
        f"GET {CONFIGMAPS}?limit={CONTENT_RATIO * 5}",
        f"GET {CONFIGMAPS}?limit={CONTENT_RATIO * 5}&continue=t1",
    ]
    assert len(sources.tokens) == 4 and sources.is_absent(SourceKey("configmap", "gone"))


def test_a_server_that_does_not_count_stops_the_list_at_the_bound(
    stage: ReadStage, mock: responses.RequestsMock
) -> None:
    limit = CONTENT_RATIO * 4
    first = [cm("a"), *(cm(f"filler-{i:02d}") for i in range(limit - 1))]
    mock.add(responses.GET, SERVER + CONFIGMAPS, json=full_page(first, token="t1"))  # no remainingItemCount
    for name in ("x", "y", "z"):
        mock.add(responses.GET, SERVER + f"{CONFIGMAPS}/{name}", json=cm(name))
    sources = read_contents(stage, "shop", wants("a", "x", "y", "z"))
    assert calls(mock) == [f"GET {CONFIGMAPS}?limit={limit}", *(f"GET {CONFIGMAPS}/{n}" for n in "xyz")]
    assert len(sources.tokens) == 4


def test_many_names_metadata_is_one_paged_list_without_a_probe(
    stage: ReadStage, mock: responses.RequestsMock
) -> None:
    names = {f"cm-{i:02d}" for i in range(41)}
    mock.add(responses.GET, SERVER + CONFIGMAPS, json=page([cm(n) for n in sorted(names)]))
    sources = read_metadata(stage, "shop", {"configmap": names | {"gone"}}, frozenset())
    assert calls(mock) == [f"GET {CONFIGMAPS}?limit=500"]
    assert mock.calls[0].request.headers["Accept"] == META_LIST
    assert len(sources.found) == 41 and sources.is_absent(SourceKey("configmap", "gone"))


def test_a_metadata_list_stopped_early_leaves_the_names_it_did_not_show_to_gets(
    stage: ReadStage, mock: responses.RequestsMock
) -> None:
    shown = [f"cm-{i:03d}" for i in range(500)]
    wanted = set(shown[:40]) | {"zz-late", "zz-gone"}  # 42 names: a list is worth considering
    more = 1000  # 1,500 objects for 42 wanted: over 16 per wanted one
    body = page([cm(n) for n in shown], token="t1")
    body["metadata"]["remainingItemCount"] = more
    mock.add(responses.GET, SERVER + CONFIGMAPS, json=body)
    mock.add(responses.GET, SERVER + f"{CONFIGMAPS}/zz-gone", status=404, json=status(404, "NotFound"))
    mock.add(responses.GET, SERVER + f"{CONFIGMAPS}/zz-late", json=cm("zz-late"))
    sources = read_metadata(stage, "shop", {"configmap": wanted}, frozenset())
    assert calls(mock) == [
        f"GET {CONFIGMAPS}?limit=500",
        f"GET {CONFIGMAPS}/zz-gone",
        f"GET {CONFIGMAPS}/zz-late",
    ]
    assert SourceKey("configmap", "zz-late") in sources.found
    assert sources.absent == {SourceKey("configmap", "zz-gone")}
    assert not sources.is_absent(SourceKey("configmap", "not-wanted-and-not-shown"))
