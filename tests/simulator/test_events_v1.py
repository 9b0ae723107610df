"""events.k8s.io/v1 as kube-apiserver serves it: one Event, read through either API in that API's shape,
and a new events.k8s.io/v1 Event checked for the fields the server requires."""

from __future__ import annotations

from typing import Any

from simhelpers import call, deployment

from rehash_simulator import Simulator

V1 = "/apis/events.k8s.io/v1/namespaces/shop/events"
CORE = "/api/v1/namespaces/shop/events"
REGARDING = {"apiVersion": "apps/v1", "kind": "Deployment", "namespace": "shop", "name": "web", "uid": "u"}
RELATED = {"apiVersion": "v1", "kind": "Secret", "namespace": "shop", "name": "db"}


def v1_event(**fields: Any) -> dict[str, Any]:
    return {
        "apiVersion": "events.k8s.io/v1",
        "kind": "Event",
        "metadata": {"name": "web.1", "namespace": "shop"},
        "eventTime": "2026-11-21T12:00:03.250000Z",
        "reportingController": "kube-rehash",
        "reportingInstance": "kube-rehash",
        "action": "Restart",
        "reason": "ConfigChanged",
        "regarding": REGARDING,
        "related": RELATED,
        "note": "secret/db changed",
        "type": "Normal",
        **fields,
    }


def test_discovery_offers_create_on_events_in_events_k8s_io(sim: Simulator) -> None:
    resources = call(sim, "GET", "/apis/events.k8s.io/v1").json()["resources"]
    assert [(r["name"], "create" in r["verbs"]) for r in resources] == [("events", True)]


def test_an_event_created_through_events_v1_is_read_through_both_apis_in_their_shapes(sim: Simulator) -> None:
    sim.store.create(deployment("web"))
    created = call(sim, "POST", V1, v1_event())
    assert created.status == 201
    assert (created.json()["apiVersion"], created.json()["regarding"]) == ("events.k8s.io/v1", REGARDING)
    (core,) = call(sim, "GET", CORE).json()["items"]
    assert (core["involvedObject"], core["related"], core["message"], core["reportingComponent"]) == (
        REGARDING,
        RELATED,
        "secret/db changed",
        "kube-rehash",
    )
    listed = call(sim, "GET", V1).json()
    assert listed["apiVersion"] == "events.k8s.io/v1" and listed["kind"] == "EventList"
    (item,) = listed["items"]
    assert (item["regarding"], item["note"]) == (REGARDING, "secret/db changed")
    assert "involvedObject" not in item and "apiVersion" not in item  # a list's items carry no apiVersion


def test_a_new_events_v1_event_without_its_required_fields_is_invalid(sim: Simulator) -> None:
    event = v1_event()
    del event["action"], event["reportingController"]
    refused = call(sim, "POST", V1, event)
    assert refused.status == 422
    causes = [(c["reason"], c["field"]) for c in refused.json()["details"]["causes"]]
    assert causes == [("FieldValueRequired", "reportingController"), ("FieldValueRequired", "action")]
