"""The read stage (reconcile/pipeline/read.py) over the transport fake: for the values it is asked (whole
workloads, source metadata, source content), the exact GETs and lists it sends and the `FullViews` and
`NamespaceSources` it returns; a failure settles its own object only, a refused budget cuts."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
import responses

from reconcile.errors import BudgetExhausted, Forbidden, NotFound, ServerError
from reconcile.kube.client import KubeClient
from reconcile.model.choices import Fetch
from reconcile.model.hashing import source_token
from reconcile.model.kinds import CRONJOB, DEPLOYMENT
from reconcile.model.references import Reference
from reconcile.model.sources import Hashed, SourceKey, SourceMeta
from reconcile.model.workload import Listed, Target, read_listed, read_target
from reconcile.pipeline.budget import Budget
from reconcile.pipeline.fetch import SourceReader
from reconcile.pipeline.namespace_stream import NamespaceStream
from reconcile.pipeline.read import ReadStage, prefetch_kinds
from tests.e2e.conftest import configmap, cronjob, deployment, env_from, env_key, secret
from tests.stages.http import (
    CONFIGMAPS,
    DEPLOYS,
    DISCOVERY,
    JSON,
    META_GET,
    META_LIST,
    SERVER,
    accepts,
    calls,
    make_client,
    metadata_only,
    page,
    read_contents,
    read_metadata,
    stamped,
    status,
)

SECRETS = "/api/v1/namespaces/shop/secrets"


def workload(name: str, source: str = "app") -> dict[str, Any]:
    return stamped(deployment(name, env_from("configmap", source)), uid=f"uid-{name}", resource_version="7")


def listed(obj: dict[str, Any]) -> Listed:
    return read_listed(metadata_only(obj), DEPLOYMENT, DISCOVERY)


def cm(name: str, rv: str = "5", **data: str) -> dict[str, Any]:
    return stamped(configmap(name, data or {"k": "v"}), uid=f"cm-{name}", resource_version=rv)


# -- read_views: whole workloads ------------------------------------------------------------------


def test_read_views_gets_each_asked_workload_by_name_and_returns_its_full_view(
    stage: ReadStage, mock: responses.RequestsMock
) -> None:
    web, api = workload("web"), workload("api", source="api-config")
    for obj in (web, api):
        mock.add(responses.GET, SERVER + f"{DEPLOYS}/{obj['metadata']['name']}", json=obj)
    views = stage.read_views([listed(web), listed(api)])
    assert calls(mock) == [f"GET {DEPLOYS}/web", f"GET {DEPLOYS}/api"]
    assert accepts(mock) == [JSON, JSON]
    assert [(t.name, t.resource_version) for t in views.targets] == [("web", "7"), ("api", "7")]
    assert views.targets[1].discovery.references == (Reference("configmap", "api-config", None, False),)
    assert (views.failed, views.gone, views.cut) == ({}, set(), False)


def test_a_workload_deleted_since_listed_is_gone_and_a_500_fails_that_workload_only(
    stage: ReadStage, mock: responses.RequestsMock
) -> None:
    web, api, db = workload("web"), workload("api"), workload("db")
    mock.add(responses.GET, SERVER + f"{DEPLOYS}/web", status=404, json=status(404, "NotFound"))
    mock.add(responses.GET, SERVER + f"{DEPLOYS}/api", status=500, json=status(500, "InternalError", "etcd"))
    mock.add(responses.GET, SERVER + f"{DEPLOYS}/db", json=db)
    views = stage.read_views([listed(web), listed(api), listed(db)])
    assert len(mock.calls) == 3
    assert views.gone == {"uid-web"}
    assert list(views.failed) == ["uid-api"] and views.failed["uid-api"].startswith(
        "reading the workload failed"
    )
    assert [t.name for t in views.targets] == ["db"]


def test_a_workload_that_opted_out_or_was_recreated_since_listed_is_gone(
    stage: ReadStage, mock: responses.RequestsMock
) -> None:
    web, api = workload("web"), workload("api")
    mock.add(
        responses.GET,
        SERVER + f"{DEPLOYS}/web",
        json={**web, "metadata": {**web["metadata"], "annotations": {}}},
    )
    mock.add(
        responses.GET, SERVER + f"{DEPLOYS}/api", json={**api, "metadata": {**api["metadata"], "uid": "new"}}
    )
    views = stage.read_views([listed(web), listed(api)])
    assert (views.gone, views.targets) == ({"uid-web", "uid-api"}, [])


def test_a_prefetched_workload_is_not_read_again(client: KubeClient, mock: responses.RequestsMock) -> None:
    web, api = workload("web"), workload("api")
    mock.add(responses.GET, SERVER + f"{DEPLOYS}/api", json=api)
    with ThreadPoolExecutor(max_workers=1) as executor:
        reader = SourceReader(client, executor, mode=Fetch.AUTO, settings=DISCOVERY, hash_key=None)
        prefetched = {"uid-web": read_target(web, DEPLOYMENT, DISCOVERY)}
        views = ReadStage(client, executor, reader, DISCOVERY, prefetched).read_views(
            [listed(web), listed(api)]
        )
    assert calls(mock) == [f"GET {DEPLOYS}/api"]
    assert sorted(t.name for t in views.targets) == ["api", "web"]


def test_many_workloads_of_a_small_namespace_are_read_with_one_list_of_it(
    stage: ReadStage, mock: responses.RequestsMock
) -> None:
    objs = [workload(n) for n in ("a", "b", "c")]
    mock.add(responses.GET, SERVER + DEPLOYS, json=page([objs[0], objs[2], workload("other")], meta=False))
    stage.census = {("shop", "deployments"): 4}
    views = stage.read_views([listed(o) for o in objs])
    assert calls(mock) == [f"GET {DEPLOYS}?limit=500"] and accepts(mock) == [JSON]
    assert [t.name for t in views.targets] == ["a", "c"]
    assert views.gone == {"uid-b"}  # not in the list: deleted since it was listed


def test_read_views_the_budget_refuses_is_cut_and_sends_nothing(
    spent_stage: ReadStage, mock: responses.RequestsMock
) -> None:
    views = spent_stage.read_views([listed(workload("web"))])
    assert calls(mock) == []
    assert views.cut and (views.targets, views.failed, views.gone) == ([], {}, set())


# -- read_metadata: source identities --------------------------------------------------------------


def test_read_metadata_gets_each_asked_source_metadata_only_and_returns_its_identity(
    stage: ReadStage, mock: responses.RequestsMock
) -> None:
    mock.add(responses.GET, SERVER + f"{CONFIGMAPS}/app", json=metadata_only(cm("app", rv="41")))
    mock.add(responses.GET, SERVER + f"{CONFIGMAPS}/base", json=metadata_only(cm("base")))
    token = stamped(secret("token", {"t": "x"}), uid="s-1", resource_version="9")
    mock.add(responses.GET, SERVER + f"{SECRETS}/token", json=metadata_only(token))
    sources = read_metadata(stage, "shop", {"configmap": {"base", "app"}, "secret": {"token"}}, frozenset())
    assert calls(mock) == [f"GET {CONFIGMAPS}/app", f"GET {CONFIGMAPS}/base", f"GET {SECRETS}/token"]
    assert accepts(mock) == [META_GET] * 3
    assert sources.found == {
        SourceKey("configmap", "app"): SourceMeta("configmap", "app", "cm-app", "41"),
        SourceKey("configmap", "base"): SourceMeta("configmap", "base", "cm-base", "5"),
        SourceKey("secret", "token"): SourceMeta("secret", "token", "s-1", "9"),
    }
    assert (sources.absent, sources.broken, sources.tokens, sources.cut) == (set(), {}, {}, False)


def test_a_missing_source_is_absent_and_a_500_breaks_that_source_only(
    stage: ReadStage, mock: responses.RequestsMock
) -> None:
    mock.add(responses.GET, SERVER + f"{CONFIGMAPS}/app", status=500, json=status(500, "InternalError"))
    mock.add(responses.GET, SERVER + f"{CONFIGMAPS}/gone", status=404, json=status(404, "NotFound"))
    mock.add(responses.GET, SERVER + f"{CONFIGMAPS}/ok", json=metadata_only(cm("ok")))
    sources = read_metadata(stage, "shop", {"configmap": {"app", "gone", "ok"}}, frozenset())
    assert len(mock.calls) == 3
    assert sources.absent == {SourceKey("configmap", "gone")}
    assert isinstance(sources.broken[SourceKey("configmap", "app")], ServerError)
    assert list(sources.found) == [SourceKey("configmap", "ok")]


def test_search_mode_lists_the_kind_metadata_only_and_secrets_without_helm_releases(
    stage: ReadStage, mock: responses.RequestsMock
) -> None:
    mock.add(responses.GET, SERVER + CONFIGMAPS, json=page([cm("a"), cm("b")]))
    mock.add(responses.GET, SERVER + SECRETS, json=page([]))
    sources = read_metadata(stage, "shop", {}, frozenset({"configmap", "secret"}))
    assert calls(mock) == [
        f"GET {CONFIGMAPS}?limit=500",
        f"GET {SECRETS}?fieldSelector=type!=helm.sh/release.v1&limit=500",
    ]
    assert accepts(mock) == [META_LIST, META_LIST]
    assert sources.listed == sources.searched == {"configmap", "secret"}
    assert sorted(k.name for k in sources.found) == ["a", "b"]
    assert sources.is_absent(SourceKey("configmap", "c"))  # listed completely: not there is absent


def test_nothing_asked_sends_nothing(stage: ReadStage, mock: responses.RequestsMock) -> None:
    assert read_metadata(stage, "shop", {}, frozenset()).found == {}
    assert read_contents(stage, "shop", {}).tokens == {}
    assert stage.read_views([]).targets == []
    assert calls(mock) == []


def test_read_metadata_the_budget_refuses_is_cut(
    spent_stage: ReadStage, mock: responses.RequestsMock
) -> None:
    sources = read_metadata(spent_stage, "shop", {"configmap": {"app"}}, frozenset())
    assert calls(mock) == []
    assert sources.cut and not sources.knows(SourceKey("configmap", "app"))


# -- read_contents: content digests ----------------------------------------------------------------


def test_read_contents_gets_each_source_once_and_returns_a_token_per_asked_selection(
    stage: ReadStage, mock: responses.RequestsMock
) -> None:
    app = cm("app", rv="41", host="h", port="80")
    mock.add(responses.GET, SERVER + f"{CONFIGMAPS}/app", json=app)
    whole, port = None, frozenset({"port"})
    sources = read_contents(stage, "shop", {SourceKey("configmap", "app"): {whole, port}})
    assert calls(mock) == [f"GET {CONFIGMAPS}/app"] and accepts(mock) == [JSON]
    key = SourceKey("configmap", "app")
    assert sources.tokens == {
        (key, whole): Hashed(source_token("configmap", app, None, None), "cm-app", "41"),
        (key, port): Hashed(source_token("configmap", app, port, None), "cm-app", "41"),
    }
    assert sources.tokens[(key, whole)] != sources.tokens[(key, port)]
    assert sources.found[key] == SourceMeta("configmap", "app", "cm-app", "41")
    assert stage.reader.contents_fetched == 1


def test_read_contents_a_500_on_one_source_breaks_it_and_the_others_are_still_hashed(
    stage: ReadStage, mock: responses.RequestsMock
) -> None:
    mock.add(responses.GET, SERVER + f"{CONFIGMAPS}/a", status=500, json=status(500, "InternalError"))
    mock.add(responses.GET, SERVER + f"{CONFIGMAPS}/b", json=cm("b"))
    mock.add(responses.GET, SERVER + f"{CONFIGMAPS}/c", status=404, json=status(404, "NotFound"))
    wanted = {SourceKey("configmap", n): {None} for n in ("a", "b", "c")}
    sources = read_contents(stage, "shop", wanted)
    assert calls(mock) == [f"GET {CONFIGMAPS}/a", f"GET {CONFIGMAPS}/b", f"GET {CONFIGMAPS}/c"]
    assert list(sources.broken) == [SourceKey("configmap", "a")]
    assert list(sources.tokens) == [(SourceKey("configmap", "b"), None)]
    assert sources.absent == {SourceKey("configmap", "c")}


# -- prefetch_kinds: one full list per kind --------------------------------------------------------


def test_prefetch_lists_each_kind_in_full_and_keeps_only_the_wanted_workloads(
    client: KubeClient, mock: responses.RequestsMock
) -> None:
    web, api = workload("web"), workload("api")
    job = stamped(cronjob("nightly", env_key("configmap", "app", "k")), uid="uid-nightly")
    mock.add(responses.GET, SERVER + "/apis/apps/v1/deployments", json=page([web, api], meta=False))
    mock.add(responses.GET, SERVER + "/apis/batch/v1/cronjobs", json=page([job], meta=False))
    wanted = {"uid-web": listed(web), "uid-nightly": read_listed(metadata_only(job), CRONJOB, DISCOVERY)}
    got = prefetch_kinds(
        client, [DEPLOYMENT, CRONJOB], wanted, DISCOVERY, field_selector="metadata.namespace!=x"
    )
    assert calls(mock) == [
        "GET /apis/apps/v1/deployments?fieldSelector=metadata.namespace!=x&limit=500",
        "GET /apis/batch/v1/cronjobs?fieldSelector=metadata.namespace!=x&limit=500",
    ]
    assert accepts(mock) == [JSON, JSON]
    assert got == {
        "uid-web": read_target(web, DEPLOYMENT, DISCOVERY),
        "uid-nightly": read_target(job, CRONJOB, DISCOVERY),
    }
    # The views held until their batch share the listed workload, not a copy of it.
    assert all(isinstance(t, Target) and t.listed is wanted[uid] for uid, t in got.items())


def test_a_workload_changed_since_it_was_listed_keeps_the_view_the_full_list_read(
    client: KubeClient, mock: responses.RequestsMock
) -> None:
    web = workload("web")
    changed = {**web, "metadata": {**web["metadata"], "generation": 9}}
    mock.add(responses.GET, SERVER + "/apis/apps/v1/deployments", json=page([changed], meta=False))
    got = prefetch_kinds(client, [DEPLOYMENT], {"uid-web": listed(web)}, DISCOVERY)
    target = got["uid-web"]
    assert isinstance(target, Target) and target.listed.generation == 9


def test_prefetch_per_namespace_and_a_failed_list_leaves_its_workloads_to_their_batches(
    client: KubeClient, mock: responses.RequestsMock
) -> None:
    web = workload("web")
    mock.add(
        responses.GET,
        SERVER + "/apis/apps/v1/namespaces/a/deployments",
        status=403,
        json=status(403, "Forbidden"),
    )
    mock.add(responses.GET, SERVER + DEPLOYS, json=page([web], meta=False))
    got = prefetch_kinds(client, [DEPLOYMENT], {"uid-web": listed(web)}, DISCOVERY, scopes=["a", "shop"])
    assert calls(mock) == ["GET /apis/apps/v1/namespaces/a/deployments?limit=500", f"GET {DEPLOYS}?limit=500"]
    assert list(got) == ["uid-web"]


def test_prefetch_the_budget_refuses_raises_pass_cut(tmp_path: Path, mock: responses.RequestsMock) -> None:
    with make_client(tmp_path, gate=Budget(0.0).admit) as client, pytest.raises(BudgetExhausted):
        prefetch_kinds(client, [DEPLOYMENT], {}, DISCOVERY)
    assert calls(mock) == []


def test_the_errors_a_read_returns_keep_their_http_meaning(
    stage: ReadStage, mock: responses.RequestsMock
) -> None:
    mock.add(responses.GET, SERVER + f"{CONFIGMAPS}/a", status=403, json=status(403, "Forbidden"))
    sources = read_metadata(stage, "shop", {"configmap": {"a"}}, frozenset())
    assert isinstance(sources.broken[SourceKey("configmap", "a")], Forbidden)
    assert not isinstance(sources.broken[SourceKey("configmap", "a")], NotFound)


def test_a_failed_list_of_a_namespace_fails_each_workload_it_was_to_read(
    stage: ReadStage, mock: responses.RequestsMock
) -> None:
    mock.add(responses.GET, SERVER + DEPLOYS, status=403, json=status(403, "Forbidden"))
    stage.census = {("shop", "deployments"): 2}
    views = stage.read_views([listed(workload("a")), listed(workload("b"))])
    assert calls(mock) == [f"GET {DEPLOYS}?limit=500"]
    assert sorted(views.failed) == ["uid-a", "uid-b"] and views.targets == []


def test_a_new_stretch_of_a_streamed_walk_keeps_no_list_of_the_last_one(stage: ReadStage) -> None:
    """A list left from the stretch before has passed the namespaces the new one starts with: were it kept
    where the new stretch opens none for its kind, it would show their sources as absent."""
    reader = stage.reader
    reader._streams = {"configmap": NamespaceStream(iter([configmap("app", {"k": "v"}, ns="b")]))}
    reader._streams["configmap"].take("b")
    reader.stream_cluster({})  # nothing wanted: no list opened, no request
    reader.follow("a", {("a", "configmap"): frozenset({"app"})})
    assert reader._streams == {} and reader._cluster == {}
