"""The HTTP contract of skipIfPodsNewer's reads (pipeline/origins.py): the exact metadata-only requests
for a Deployment's ReplicaSets, a StatefulSet's update revision and a DaemonSet's ControllerRevisions,
the exact-resourceVersion list that decides a same-second tie, and what each failure means."""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import requests
import responses
import yaml

from reconcile.kube.auth import AuthOptions, load_credentials
from reconcile.kube.client import ClientOptions, KubeClient
from reconcile.model.freshness import Change, Origin
from reconcile.model.kinds import DAEMONSET, DEPLOYMENT, STATEFULSET, Kind
from reconcile.model.references import DiscoverySettings
from reconcile.model.workload import Target, read_target, revise
from reconcile.pipeline.origins import read_origins

SERVER = "https://127.0.0.1:6443"
META_LIST = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json"
META_GET = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json"
T0 = datetime(2026, 11, 25, 12, 0, 0, tzinfo=UTC)
REV = "deployment.kubernetes.io/revision"
TEMPLATE_GENERATION = "deprecated.daemonset.template.generation"
REPLICASETS = "/apis/apps/v1/namespaces/shop/replicasets"
REVISIONS = "/apis/apps/v1/namespaces/shop/controllerrevisions"


@pytest.fixture
def client(tmp_path: Path) -> Iterator[KubeClient]:
    config = tmp_path / "config"
    config.write_text(
        yaml.safe_dump(
            {
                "current-context": "ctx",
                "clusters": [{"name": "c", "cluster": {"server": SERVER}}],
                "users": [{"name": "u", "user": {"token": "tok"}}],
                "contexts": [{"name": "ctx", "context": {"cluster": "c", "user": "u"}}],
            }
        )
    )
    with KubeClient(load_credentials(AuthOptions(kubeconfig=str(config)), env={}), ClientOptions()) as kube:
        yield kube


@pytest.fixture
def mock() -> Iterator[responses.RequestsMock]:
    with responses.RequestsMock(assert_all_requests_are_fired=True) as rsps:
        yield rsps


@pytest.fixture
def executor() -> Iterator[ThreadPoolExecutor]:
    with ThreadPoolExecutor(max_workers=2) as pool:
        yield pool


def stamp(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def workload(kind: Kind) -> Target:
    obj = {
        "metadata": {
            "name": "web",
            "namespace": "shop",
            "uid": "w1",
            "generation": 6,
            "annotations": {"kube-rehash.io/watch": "true", REV: "3", TEMPLATE_GENERATION: "3"},
        },
        "spec": {"selector": {"matchLabels": {"app": "web"}}, "template": {"spec": {"containers": []}}},
        "status": {"observedGeneration": 6, "updateRevision": "web-7f"},
    }
    return read_target(obj, kind, DiscoverySettings())


def item(name: str, created: datetime, **annotations: str) -> dict[str, Any]:
    owners = [{"uid": "w1", "controller": True, "kind": "X", "name": "web"}]
    metadata = {"name": name, "creationTimestamp": stamp(created), "ownerReferences": owners}
    return {"metadata": {**metadata, "annotations": annotations}}


def listing(*items: dict[str, Any]) -> dict[str, Any]:
    return {
        "kind": "PartialObjectMetadataList",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": {},
        "items": list(items),
    }


def sent(mock: responses.RequestsMock, index: int) -> requests.PreparedRequest:
    request = mock.calls[index].request
    assert isinstance(request, requests.PreparedRequest)
    return request


BEFORE = {"configmap/app": Change(T0 - timedelta(seconds=3), "41")}


def test_a_deployments_replicasets_are_listed_metadata_only_by_its_selector(
    client: KubeClient, mock: responses.RequestsMock, executor: ThreadPoolExecutor
) -> None:
    current = item("web-b", T0, **{REV: "3"})
    mock.get(SERVER + REPLICASETS, json=listing(item("web-a", T0 - timedelta(days=1), **{REV: "2"}), current))
    origins, refused, cut = read_origins(client, executor, [(workload(DEPLOYMENT), BEFORE)])
    assert (origins, refused, cut) == ({"w1": Origin("web-b", T0)}, {}, False)
    assert len(mock.calls) == 1
    request = sent(mock, 0)
    assert request.method == "GET"
    assert request.url == f"{SERVER}{REPLICASETS}?labelSelector=app%3Dweb&limit=500"
    assert request.headers["Accept"] == META_LIST


def test_a_statefulsets_update_revision_is_one_metadata_get(
    client: KubeClient, mock: responses.RequestsMock, executor: ThreadPoolExecutor
) -> None:
    mock.get(SERVER + REVISIONS + "/web-7f", json=item("web-7f", T0))
    origins, _, _ = read_origins(client, executor, [(workload(STATEFULSET), BEFORE)])
    assert origins == {"w1": Origin("web-7f", T0)}
    request = sent(mock, 0)
    assert (request.method, request.url) == ("GET", f"{SERVER}{REVISIONS}/web-7f")
    assert request.headers["Accept"] == META_GET


def test_a_daemonsets_revisions_are_listed_metadata_only_by_its_selector(
    client: KubeClient, mock: responses.RequestsMock, executor: ThreadPoolExecutor
) -> None:
    newest = item("web-2", T0, **{TEMPLATE_GENERATION: "3"})
    mock.get(SERVER + REVISIONS, json=listing(item("web-1", T0 - timedelta(hours=1)), newest))
    origins, _, _ = read_origins(client, executor, [(workload(DAEMONSET), BEFORE)])
    assert origins == {"w1": Origin("web-2", T0)}
    request = sent(mock, 0)
    assert request.url == f"{SERVER}{REVISIONS}?labelSelector=app%3Dweb&limit=500"
    assert request.headers["Accept"] == META_LIST


def test_a_same_second_tie_is_decided_by_a_list_at_the_sources_exact_version(
    client: KubeClient, mock: responses.RequestsMock, executor: ThreadPoolExecutor
) -> None:
    mock.get(SERVER + REPLICASETS, json=listing(item("web-b", T0, **{REV: "3"})))
    mock.get(SERVER + REPLICASETS, json=listing(item("web-a", T0 - timedelta(days=1), **{REV: "2"})))
    tie = {"configmap/app": Change(T0, "41")}
    origins, _, _ = read_origins(client, executor, [(workload(DEPLOYMENT), tie)])
    assert origins == {"w1": Origin("web-b", T0, absent_at=frozenset({"41"}))}
    request = sent(mock, 1)
    assert request.method == "GET"
    assert request.url == (
        f"{SERVER}{REPLICASETS}?resourceVersion=41&resourceVersionMatch=Exact&labelSelector=app%3Dweb"
    )
    assert request.headers["Accept"] == META_LIST


def test_a_tie_whose_template_already_existed_or_whose_version_is_compacted_proves_nothing(
    client: KubeClient, mock: responses.RequestsMock, executor: ThreadPoolExecutor
) -> None:
    current = item("web-b", T0, **{REV: "3"})
    mock.get(SERVER + REPLICASETS, json=listing(current))
    mock.get(SERVER + REPLICASETS, json=listing(current))  # already there at version 41
    gone = {"kind": "Status", "code": 410, "reason": "Expired", "message": "too old resource version"}
    mock.get(SERVER + REPLICASETS, json=gone, status=410)  # version 42 compacted away
    tie = {"configmap/a": Change(T0, "41"), "configmap/b": Change(T0, "42")}
    origins, _, _ = read_origins(client, executor, [(workload(DEPLOYMENT), tie)])
    assert origins == {"w1": Origin("web-b", T0)}


def test_a_403_fails_the_workload_and_other_errors_leave_it_to_roll(
    client: KubeClient, mock: responses.RequestsMock, executor: ThreadPoolExecutor
) -> None:
    forbidden = {"kind": "Status", "code": 403, "reason": "Forbidden", "message": "replicasets is forbidden"}
    mock.get(SERVER + REPLICASETS, json=forbidden, status=403)
    origins, refused, _ = read_origins(client, executor, [(workload(DEPLOYMENT), BEFORE)])
    assert origins == {"w1": None} and list(refused) == ["w1"]  # read, and not known
    assert "ReplicaSets of Deployment/shop/web was refused" in refused["w1"]

    mock.get(
        SERVER + REVISIONS + "/web-7f", json={"kind": "Status", "code": 404, "reason": "NotFound"}, status=404
    )
    missing = revise(workload(STATEFULSET), uid="w1")
    assert read_origins(client, executor, [(missing, BEFORE)])[:2] == ({"w1": None}, {})
