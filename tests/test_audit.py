"""The audit trail's bodies: the change cause a rollout sets, and Events that name the changed source in
`related`, in the events.k8s.io/v1 shape or the core/v1 one; names of sources and keys, never content."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
import responses
import yaml

from reconcile.kube.auth import AuthOptions, load_credentials
from reconcile.kube.client import KubeClient
from reconcile.model.annotations import Annotations
from reconcile.model.bookkeeping import Bookkeeping, SourceRecord
from reconcile.model.references import Discovery
from reconcile.pipeline.events import EventSender
from reconcile.policy.audit import (
    CHANGE_CAUSE_LIMIT,
    EventApi,
    build_event,
    change_cause,
    related_source,
    serves_events_v1,
)
from reconcile.policy.decision import Action, Decision, Observed
from reconcile.policy.patches import build_patch
from tests.workloads import make_target

NOW = datetime(2026, 11, 21, 12, 0, 3, 250000, tzinfo=UTC)
KEYS = Annotations()
DB = SourceRecord("secret", "db", "u-db", "7", "k:password", "tok-db", ("password",))
APP = SourceRecord("configmap", "app", "u-app", "9", "*", "tok-app")
OBS = Observed("v1:new", (APP, DB), "")
DISC = Discovery(True, False, (), frozenset(), frozenset(), (), ())
CAUSE_PATH = "/metadata/annotations/kubernetes.io~1change-cause"
SERVER = "https://api.test"


def rollout(changed: tuple[str, ...], configs: tuple[str, ...] = ("configmap/app", "secret/db")) -> Decision:
    return Decision(
        Action.ROLLOUT,
        "r",
        config_hash="v1:new",
        previous="v1:old",
        configs=configs,
        changed=changed,
        observed=OBS,
    )


def test_the_change_cause_names_the_changed_secret_and_its_keys() -> None:
    assert change_cause(rollout(("secret/db",))) == "kube-rehash: secret/db changed (keys: password)"


def test_a_whole_object_source_is_named_without_keys_and_every_changed_source_has_a_clause() -> None:
    cause = change_cause(rollout(("configmap/app", "secret/db")))
    assert cause == "kube-rehash: configmap/app changed; secret/db changed (keys: password)"


def test_first_sight_names_every_source() -> None:
    assert (
        change_cause(rollout(())) == "kube-rehash: configmap/app changed; secret/db changed (keys: password)"
    )


def test_a_long_list_of_sources_is_cut_saying_how_many_were_left_out() -> None:
    labels = tuple(f"configmap/source-{i:03d}" for i in range(200))
    cause = change_cause(rollout(labels, configs=labels))
    assert len(cause) <= CHANGE_CAUSE_LIMIT
    kept = cause.count("changed;")
    assert cause.endswith(f"; and {200 - kept} more changed")


def test_a_rollout_patch_sets_the_change_cause_and_an_adopt_does_not() -> None:
    target = make_target(discovery=DISC, template_hash="v1:old", bookkeeping=Bookkeeping("v1:old"))
    ops = build_patch(target, rollout(("secret/db",)), OBS, now=NOW, keys=KEYS)
    assert {
        "op": "add",
        "path": CAUSE_PATH,
        "value": "kube-rehash: secret/db changed (keys: password)",
    } in ops
    adopt = Decision(Action.ADOPT, "first sight", config_hash="v1:new", observed=OBS)
    assert all(
        op["path"] != CAUSE_PATH
        for op in build_patch(make_target(discovery=DISC), adopt, OBS, now=NOW, keys=KEYS)
    )


def test_related_names_the_first_changed_source_with_its_uid() -> None:
    assert related_source("shop", ("secret/db", "configmap/app"), OBS.records) == {
        "apiVersion": "v1",
        "kind": "Secret",
        "namespace": "shop",
        "name": "db",
        "uid": "u-db",
    }
    assert related_source("shop", ("configmap/gone",), OBS.records) == {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "namespace": "shop",
        "name": "gone",
    }
    assert related_source("shop", ()) is None


def test_an_events_v1_event_has_the_v1_fields_and_names_the_related_source() -> None:
    related = related_source("shop", ("secret/db",), OBS.records)
    event = build_event(
        make_target(discovery=DISC).listed,
        reason="ConfigChanged",
        message="kube-rehash rolled out: secret/db changed",
        warning=False,
        now=NOW,
        action="Restart",
        related=related,
        api=EventApi.EVENTS_V1,
    )
    name = event["metadata"].pop("name")
    assert name.startswith("web.")
    assert event == {
        "apiVersion": "events.k8s.io/v1",
        "kind": "Event",
        "metadata": {"namespace": "shop"},
        "eventTime": "2026-11-21T12:00:03.250000Z",
        "reportingController": "kube-rehash",
        "reportingInstance": "kube-rehash",
        "action": "Restart",
        "reason": "ConfigChanged",
        "regarding": {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "namespace": "shop",
            "name": "web",
            "uid": "w1",
        },
        "related": related,
        "note": "kube-rehash rolled out: secret/db changed",
        "type": "Normal",
    }


def test_a_core_event_carries_related_and_action_too() -> None:
    related = related_source("shop", ("secret/db",), OBS.records)
    event = build_event(
        make_target(discovery=DISC).listed,
        reason="RolloutFailed",
        message="m",
        warning=True,
        now=NOW,
        action="Patch",
        related=related,
    )
    assert (event["apiVersion"], event["type"], event["action"], event["related"]) == (
        "v1",
        "Warning",
        "Patch",
        related,
    )


def test_discovery_that_offers_create_on_events_means_events_v1() -> None:
    offered = {"resources": [{"name": "events", "verbs": ["create", "get", "list"]}]}
    assert serves_events_v1(offered)
    assert not serves_events_v1({"resources": [{"name": "events", "verbs": ["get"]}]})
    assert not serves_events_v1({"resources": []})


@pytest.fixture
def client(tmp_path: Path) -> Iterator[KubeClient]:
    config = tmp_path / "config"
    config.write_text(
        yaml.safe_dump(
            {
                "current-context": "c",
                "clusters": [{"name": "c", "cluster": {"server": SERVER}}],
                "users": [{"name": "u", "user": {"token": "t"}}],
                "contexts": [{"name": "c", "context": {"cluster": "c", "user": "u"}}],
            }
        )
    )
    with KubeClient(load_credentials(AuthOptions(kubeconfig=str(config)), env={})) as kube:
        yield kube


@responses.activate
def test_the_event_api_is_asked_once_per_pass_and_a_server_without_it_gets_core_events(
    client: KubeClient,
) -> None:
    responses.get(f"{SERVER}/apis/events.k8s.io/v1", status=404, json={"kind": "Status", "code": 404})
    responses.post(f"{SERVER}/api/v1/namespaces/shop/events", status=201, json={})
    sender = EventSender(client, now=NOW, dry_run=False)
    listed = make_target(discovery=DISC).listed
    for _ in range(2):
        sender.send(
            listed, reason="ConfigChanged", message="m", warning=False, action="Restart", related=None
        )
    calls = [(c.request.method, c.request.path_url) for c in responses.calls]
    assert calls == [
        ("GET", "/apis/events.k8s.io/v1"),
        ("POST", "/api/v1/namespaces/shop/events?fieldManager=kube-rehash"),
        ("POST", "/api/v1/namespaces/shop/events?fieldManager=kube-rehash"),
    ]
    assert responses.calls[1].request.headers["Content-Type"] == "application/json"
    assert json.loads(responses.calls[1].request.body or b"")["involvedObject"]["name"] == "web"


@responses.activate
def test_a_role_that_may_create_only_core_events_falls_back_to_them_after_one_403(
    client: KubeClient,
) -> None:
    offered = {"kind": "APIResourceList", "resources": [{"name": "events", "verbs": ["create"]}]}
    responses.get(f"{SERVER}/apis/events.k8s.io/v1", json=offered)
    forbidden = {"kind": "Status", "code": 403, "reason": "Forbidden", "message": "no"}
    responses.post(f"{SERVER}/apis/events.k8s.io/v1/namespaces/shop/events", status=403, json=forbidden)
    responses.post(f"{SERVER}/api/v1/namespaces/shop/events", status=201, json={})
    sender = EventSender(client, now=NOW, dry_run=False)
    listed = make_target(discovery=DISC).listed
    for _ in range(2):
        sender.send(
            listed, reason="ConfigChanged", message="m", warning=False, action="Restart", related=None
        )
    assert [(c.request.method, c.request.path_url.split("?")[0]) for c in responses.calls] == [
        ("GET", "/apis/events.k8s.io/v1"),
        ("POST", "/apis/events.k8s.io/v1/namespaces/shop/events"),
        ("POST", "/api/v1/namespaces/shop/events"),
        ("POST", "/api/v1/namespaces/shop/events"),
    ]
    sent = json.loads(responses.calls[1].request.body or b"")
    assert (sent["apiVersion"], sent["regarding"]["name"]) == ("events.k8s.io/v1", "web")


@pytest.mark.parametrize("api", list(EventApi))
def test_no_event_shape_carries_a_source_token(api: EventApi) -> None:
    related = related_source("shop", ("secret/db",), OBS.records)
    event = build_event(
        make_target(discovery=DISC).listed,
        reason="ConfigChanged",
        message=change_cause(rollout(("secret/db",))),
        warning=False,
        now=NOW,
        action="Restart",
        related=related,
        api=api,
    )
    assert "tok-db" not in json.dumps(event)
