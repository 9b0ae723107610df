"""The pods of a custom resource (pipeline/pod_reads.py `selected_pods`): one metadata-only list of the
namespace's pods, by the kind's label selector, keeping the pods the resource controls where its kind says
so; with `owned` and no selector, the pods it controls among all of the namespace's."""

from __future__ import annotations

from datetime import UTC, datetime
from urllib.parse import parse_qs, urlsplit

import responses

from reconcile.kube.client import KubeClient
from reconcile.model.pods import Pod
from reconcile.pipeline.pod_reads import selected_pods
from tests.test_kube_client import SERVER, client, clock, creds, mock, sent

__all__ = ["client", "clock", "creds", "mock"]  # the fixtures these tests use

PODS = "/api/v1/namespaces/data/pods"


def pod(name: str, owner: str | None) -> dict[str, object]:
    meta: dict[str, object] = {"name": name, "creationTimestamp": "2026-11-21T12:00:05Z"}
    if owner is not None:
        meta["ownerReferences"] = [{"kind": "Cluster", "name": "db", "uid": owner, "controller": True}]
    return {"metadata": meta}


def listed(mock: responses.RequestsMock) -> None:
    items = [pod("db-1", "u-db"), pod("db-2", "u-other"), pod("loose", None)]
    mock.add(
        responses.GET,
        SERVER + PODS,
        json={"kind": "PartialObjectMetadataList", "metadata": {}, "items": items},
    )


def test_a_selector_lists_the_namespaces_pods_once_metadata_only_keeping_those_it_controls(
    client: KubeClient, mock: responses.RequestsMock
) -> None:
    listed(mock)
    found = selected_pods(client, "data", "cnpg.io/cluster=db", "u-db")
    assert found == (Pod("db-1", datetime(2026, 11, 21, 12, 0, 5, tzinfo=UTC), False),)
    request = sent(mock, 0)
    assert request.method == "GET" and urlsplit(request.url).path == PODS
    assert parse_qs(urlsplit(request.url).query)["labelSelector"] == ["cnpg.io/cluster=db"]
    assert "as=PartialObjectMetadataList" in request.headers["Accept"]


def test_owned_alone_lists_every_pod_of_the_namespace_and_keeps_its_own_and_nothing_lists_nothing(
    client: KubeClient, mock: responses.RequestsMock
) -> None:
    listed(mock)
    assert [p.name for p in selected_pods(client, "data", None, "u-db")] == ["db-1"]  # type: ignore[union-attr]
    assert "labelSelector" not in (urlsplit(sent(mock, 0).url).query or "")
    assert [p.name for p in selected_pods(client, "data", "app=db", None)] == ["db-1", "db-2", "loose"]  # type: ignore[union-attr]
    assert selected_pods(client, "data", None, None) == () and len(mock.calls) == 2
