"""The listing stage (reconcile/pipeline/listing.py) over the transport fake: the exact metadata-only list
requests it sends, and the `Listed` values and scope rows it returns."""

from __future__ import annotations

from pathlib import Path

import pytest
import responses

from reconcile.kube.client import KubeClient
from reconcile.model.kinds import CRONJOB, DEPLOYMENT, ROLLOUT
from reconcile.model.references import Reference
from reconcile.pipeline.budget import Budget
from reconcile.pipeline.listing import list_targets
from reconcile.policy.decision import Deferral
from reconcile.policy.outcome import Outcome
from reconcile.settings.table import Settings
from reconcile.settings.values import Shard
from tests.e2e.conftest import configmap, cronjob, deployment, env_from
from tests.stages.http import (
    DISCOVERY,
    META_LIST,
    SERVER,
    accepts,
    adopted,
    calls,
    make_client,
    page,
    stamped,
)
from tests.stages.http import status as status_body

ALL_DEPLOYS = "/apis/apps/v1/deployments"
ALL_CRONJOBS = "/apis/batch/v1/cronjobs"
ALL_ROLLOUTS = "/apis/argoproj.io/v1alpha1/rollouts"


@pytest.fixture
def page_size() -> int:
    """Two objects per page, so the tests see the listing follow `continue` tokens."""
    return 2


def watched(name: str, ns: str = "shop") -> dict[str, object]:
    return stamped(deployment(name, env_from("configmap", "app"), ns=ns), uid=f"uid-{name}")


def plain(name: str, ns: str = "shop") -> dict[str, object]:
    return stamped(deployment(name, ns=ns, annotations={}), uid=f"uid-{name}")


def test_a_cluster_wide_list_is_metadata_only_paged_and_leaves_excluded_namespaces_out(
    client: KubeClient, mock: responses.RequestsMock
) -> None:
    mock.add(responses.GET, SERVER + ALL_DEPLOYS, json=page([watched("a"), watched("b")], "c1"))
    mock.add(responses.GET, SERVER + ALL_DEPLOYS, json=page([watched("c")]))
    settings = Settings.of(kinds=(DEPLOYMENT,), exclude_namespaces=("kube-system", "infra"))
    listing = list_targets(settings, client, DISCOVERY)
    selector = "fieldSelector=metadata.namespace!=infra,metadata.namespace!=kube-system"
    assert calls(mock) == [
        f"GET {ALL_DEPLOYS}?{selector}&limit=2",
        f"GET {ALL_DEPLOYS}?{selector}&limit=2&continue=c1",
    ]
    assert accepts(mock) == [META_LIST, META_LIST]
    assert [w.ref for w in listing.workloads] == [
        "Deployment/shop/a",
        "Deployment/shop/b",
        "Deployment/shop/c",
    ]
    assert listing.failures == []


def test_only_opted_in_workloads_are_kept_but_the_census_counts_every_object(
    client: KubeClient, mock: responses.RequestsMock
) -> None:
    mock.add(responses.GET, SERVER + ALL_DEPLOYS, json=page([watched("a"), plain("b")]))
    listing = list_targets(Settings.of(kinds=(DEPLOYMENT,)), client, DISCOVERY)
    assert [w.name for w in listing.workloads] == ["a"]
    assert listing.census == {("shop", "deployments"): 2}


def test_a_listed_workload_carries_its_identity_and_parsed_bookkeeping_but_no_pod_spec(
    client: KubeClient, mock: responses.RequestsMock
) -> None:
    app = stamped(configmap("app", {"k": "v"}), uid="cm-1", resource_version="41")
    stored = adopted(watched("a"), [app])
    mock.add(responses.GET, SERVER + ALL_DEPLOYS, json=page([stored]))
    (listed,) = list_targets(Settings.of(kinds=(DEPLOYMENT,)), client, DISCOVERY).workloads
    assert (listed.kind, listed.namespace, listed.name, listed.uid) == (DEPLOYMENT, "shop", "a", "uid-a")
    assert listed.generation == 2  # the adopt patch moved a Deployment's generation once
    book = listed.bookkeeping
    assert book.generation == 2 and book.config_hash is not None and book.facts is not None
    assert [(r.kind, r.name, r.uid, r.resource_version) for r in book.records or ()] == [
        ("configmap", "app", "cm-1", "41")
    ]
    # Its references are the recorded sources: the list carries no pod template.
    assert listed.discovery.references == (Reference("configmap", "app", None, False),)


def test_a_forbidden_list_is_a_failed_scope_row_and_the_other_kinds_are_still_listed(
    client: KubeClient, mock: responses.RequestsMock
) -> None:
    body = status_body(403, "Forbidden", 'deployments.apps is forbidden: cannot list resource "deployments"')
    mock.add(responses.GET, SERVER + ALL_DEPLOYS, status=403, json=body)
    job = stamped(cronjob("nightly", env_from("configmap", "app")), uid="uid-nightly")
    mock.add(responses.GET, SERVER + ALL_CRONJOBS, json=page([job]))
    listing = list_targets(Settings.of(kinds=(DEPLOYMENT, CRONJOB)), client, DISCOVERY)
    assert calls(mock) == [f"GET {ALL_DEPLOYS}?limit=2", f"GET {ALL_CRONJOBS}?limit=2"]
    (row,) = listing.failures
    assert (row.kind, row.namespace, row.name, row.action) == ("Deployment", "*", "*", "failed")
    assert row.reason.startswith("list failed: ") and "forbidden" in row.reason
    assert [w.ref for w in listing.workloads] == ["CronJob/shop/nightly"]


def test_a_kind_the_cluster_does_not_serve_is_skipped_without_a_row_and_not_asked_again(
    tmp_path: Path, mock: responses.RequestsMock
) -> None:
    for ns in ("a", "b"):
        mock.add(
            responses.GET,
            SERVER + f"/apis/apps/v1/namespaces/{ns}/deployments",
            json=page([watched("w", ns)]),
        )
    missing = status_body(404, "NotFound", "the server could not find the requested resource")
    mock.add(
        responses.GET, SERVER + "/apis/argoproj.io/v1alpha1/namespaces/a/rollouts", status=404, json=missing
    )
    settings = Settings.of(kinds=(DEPLOYMENT, ROLLOUT), namespaces=("a", "b"))
    with make_client(tmp_path) as client:
        listing = list_targets(settings, client, DISCOVERY)
    # One 404 means the kind is not served: namespace b is not asked for Rollouts.
    assert calls(mock) == [
        "GET /apis/apps/v1/namespaces/a/deployments?limit=500",
        "GET /apis/apps/v1/namespaces/b/deployments?limit=500",
        "GET /apis/argoproj.io/v1alpha1/namespaces/a/rollouts?limit=500",
    ]
    assert listing.failures == []
    assert [w.ref for w in listing.workloads] == ["Deployment/a/w", "Deployment/b/w"]


def test_given_namespaces_are_listed_one_by_one_sorted_less_the_excluded_never_cluster_wide(
    client: KubeClient, mock: responses.RequestsMock
) -> None:
    for ns in ("a", "c"):
        mock.add(
            responses.GET,
            SERVER + f"/apis/apps/v1/namespaces/{ns}/deployments",
            json=page([watched("w", ns)]),
        )
    settings = Settings.of(kinds=(DEPLOYMENT,), namespaces=("c", "b", "a"), exclude_namespaces=("b",))
    listing = list_targets(settings, client, DISCOVERY)
    assert calls(mock) == [
        "GET /apis/apps/v1/namespaces/a/deployments?limit=2",
        "GET /apis/apps/v1/namespaces/c/deployments?limit=2",
    ]
    assert [w.ref for w in listing.workloads] == ["Deployment/a/w", "Deployment/c/w"]


def test_each_shard_sends_the_same_lists_and_keeps_a_disjoint_share_of_every_opted_in_workload(
    tmp_path: Path,
) -> None:
    items = [watched(f"w{i}", ns) for ns in ("a", "b", "c") for i in range(4)]
    shares: list[set[str]] = []
    sent: list[list[str]] = []
    for index in range(2):
        with responses.RequestsMock() as mock, make_client(tmp_path) as client:
            mock.add(responses.GET, SERVER + ALL_DEPLOYS, json=page(items))
            settings = Settings.of(kinds=(DEPLOYMENT,), shard=Shard(index, 2))
            shares.append({w.ref for w in list_targets(settings, client, DISCOVERY).workloads})
            sent.append(calls(mock))
    assert sent == [[f"GET {ALL_DEPLOYS}?limit=500"]] * 2
    assert shares[0].isdisjoint(shares[1]) and shares[0] and shares[1]
    assert shares[0] | shares[1] == {f"Deployment/{ns}/w{i}" for ns in ("a", "b", "c") for i in range(4)}


def test_a_list_the_budget_refuses_is_a_deferred_scope_row_and_sends_nothing(
    tmp_path: Path, mock: responses.RequestsMock
) -> None:
    budget = Budget(timeout=0.0)
    with make_client(tmp_path, gate=budget.admit) as client:
        listing = list_targets(Settings.of(kinds=(DEPLOYMENT,), namespaces=("shop",)), client, DISCOVERY)
    assert calls(mock) == []
    (row,) = listing.failures
    assert row == Outcome.scope_deferred("Deployment", "shop", row.reason, Deferral.BUDGET)
    assert row.reason.endswith("; not listed") and budget.exhausted


def test_an_expired_continue_token_reads_the_list_again_paged_and_keeps_each_workload_once(
    client: KubeClient, mock: responses.RequestsMock
) -> None:
    mock.add(responses.GET, SERVER + ALL_DEPLOYS, json=page([watched("a"), watched("b")], "c1"))
    expired = status_body(410, "Expired", "The provided continue parameter is too old")
    mock.add(responses.GET, SERVER + ALL_DEPLOYS, status=410, json=expired)
    mock.add(responses.GET, SERVER + ALL_DEPLOYS, json=page([watched("a"), watched("b")], "c2"))
    mock.add(responses.GET, SERVER + ALL_DEPLOYS, json=page([watched("c")]))
    listing = list_targets(Settings.of(kinds=(DEPLOYMENT,)), client, DISCOVERY)
    assert calls(mock) == [
        f"GET {ALL_DEPLOYS}?limit=2",
        f"GET {ALL_DEPLOYS}?limit=2&continue=c1",
        f"GET {ALL_DEPLOYS}?limit=2",
        f"GET {ALL_DEPLOYS}?limit=2&continue=c2",
    ]
    assert [w.name for w in listing.workloads] == ["a", "b", "c"]
    assert listing.census == {("shop", "deployments"): 3}
