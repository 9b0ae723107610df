"""Exact write bodies: the guarded JSON patch, Events and run-on-change Jobs (tests/test_audit.py: the
change cause and the events.k8s.io/v1 shape)."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime

from reconcile.model.annotations import Annotations
from reconcile.model.bookkeeping import (
    Bookkeeping,
    RolloutRecord,
    SourceRecord,
    format_rollout,
    parse_rollout,
)
from reconcile.model.kinds import CRONJOB, DEPLOYMENT, STATEFULSET
from reconcile.model.references import Discovery
from reconcile.model.workload import Target
from reconcile.policy.audit import build_event
from reconcile.policy.decision import Action, Decision, Observed
from reconcile.policy.patches import build_job, build_patch, job_name, rollout_state_patch
from tests.workloads import make_target

NOW = datetime(2026, 11, 21, 12, 0, tzinfo=UTC)
KEYS = Annotations()
REC = SourceRecord("configmap", "app", "u1", "11", "*", "bbbb")
OBS = Observed("v1:new", (REC,), "")
RECORDS = json.dumps(
    {"v": 2, "k": "", "s": [["configmap", "app", "u1", "11", "*", "bbbb"]]}, separators=(",", ":")
)
DISC = Discovery(True, False, (), frozenset(), frozenset(), (), ())
TPL = "/spec/template/metadata/annotations/kube-rehash.io~1config-hash"
META = "/metadata/annotations/kube-rehash.io~1"


def target(**kw: object) -> Target:
    return make_target(**{"discovery": DISC, **kw})


def decision(action: Action, previous: str | None = None, changed: tuple[str, ...] = ()) -> Decision:
    return Decision(action, "r", config_hash="v1:new", previous=previous, observed=OBS, changed=changed)


def test_rollout_tests_both_stored_values_and_sets_template_bookkeeping_and_the_rollout_record() -> None:
    t = target(template_hash="v1:old", bookkeeping=Bookkeeping("v1:old"), generation=4)
    ops = build_patch(t, decision(Action.ROLLOUT, "v1:old", ("configmap/app",)), OBS, now=NOW, keys=KEYS)
    record = '{"g":5,"t":"2026-11-21T12:00:00Z","c":["configmap/app"],"s":"progressing"}'
    # "f"/"o": the spec facts after this write (decide.target_from_records).
    assert ops == [
        {"op": "test", "path": TPL, "value": "v1:old"},
        {"op": "test", "path": META + "config-hash", "value": "v1:old"},
        {"op": "add", "path": TPL, "value": "v1:new"},
        {"op": "add", "path": META + "config-hash", "value": "v1:new"},
        {
            "op": "add",
            "path": META + "sources",
            "value": RECORDS[:-1] + ',"g":5,"i":"","f":"hmt","o":[]}',
        },
        {"op": "add", "path": META + "last-rollout", "value": "2026-11-21T12:00:00Z"},
        {
            "op": "add",
            "path": "/metadata/annotations/kubernetes.io~1change-cause",
            "value": "kube-rehash: configmap/app changed",
        },
        {"op": "add", "path": META + "rollout", "value": record},
    ]


def test_a_rollout_record_without_changed_names_names_every_source_and_never_a_value() -> None:
    first_sight = replace(decision(Action.ROLLOUT), configs=("configmap/app",))
    ops = build_patch(target(kind=STATEFULSET), first_sight, OBS, now=NOW, keys=KEYS)
    record = parse_rollout(ops[-1]["value"])
    assert record == RolloutRecord(None, NOW, ("configmap/app",), "progressing")
    assert "bbbb" not in ops[-1]["value"]


def test_a_cronjob_rollout_records_no_rollout_to_watch() -> None:
    t = target(kind=CRONJOB, bookkeeping=Bookkeeping("v1:old"))
    ops = build_patch(t, decision(Action.ROLLOUT), OBS, now=NOW, keys=KEYS)
    assert all(not op["path"].endswith("~1rollout") for op in ops)


def test_moving_a_rollout_record_tests_the_stored_record_and_hash_and_touches_metadata_only() -> None:
    text = '{"g":5,"t":"2026-11-21T12:00:00Z","c":["configmap/app"],"s":"progressing"}'
    record = parse_rollout(text)
    assert record is not None and format_rollout(record) == text
    t = target(bookkeeping=Bookkeeping("v1:new", rollout=record))
    assert rollout_state_patch(t, record, "stalled", KEYS) == [
        {"op": "test", "path": META + "rollout", "value": text},
        {"op": "test", "path": META + "config-hash", "value": "v1:new"},
        {"op": "add", "path": META + "rollout", "value": text.replace("progressing", "stalled")},
    ]


def test_unreadable_rollout_records_are_ignored() -> None:
    for text in (
        "",
        "[]",
        '{"g":"5","t":"2026-11-21T12:00:00Z","c":[],"s":"progressing"}',
        '{"g":5,"t":"yesterday","c":[],"s":"progressing"}',
        '{"g":5,"t":"2026-11-21T12:00:00Z","c":[],"s":"done"}',
        None,
    ):
        assert parse_rollout(text) is None


def test_rollout_that_creates_the_template_annotations_map_pins_the_resource_version() -> None:
    t = target(annotations_map_present=False, bookkeeping=Bookkeeping("v1:old"))
    ops = build_patch(t, decision(Action.ROLLOUT), OBS, now=NOW, keys=KEYS)
    assert ops[:3] == [
        {"op": "test", "path": META + "config-hash", "value": "v1:old"},
        {"op": "test", "path": "/metadata/resourceVersion", "value": "100"},
        {
            "op": "add",
            "path": "/spec/template/metadata/annotations",
            "value": {"kube-rehash.io/config-hash": "v1:new"},
        },
    ]


def test_first_sight_and_map_creation_pin_the_generation_not_a_controllers_status_write() -> None:
    """A controller's status write moves only the resourceVersion: a guard on it made a rollout that
    creates the template's annotations map fail with 422 on a real server while the Deployment rolled."""
    t = target(annotations_map_present=False, bookkeeping=Bookkeeping("v1:old"), generation=7)
    ops = build_patch(t, decision(Action.ROLLOUT), OBS, now=NOW, keys=KEYS)
    assert ops[:2] == [
        {"op": "test", "path": META + "config-hash", "value": "v1:old"},
        {"op": "test", "path": "/metadata/generation", "value": 7},
    ]
    adopt = build_patch(target(generation=3), decision(Action.ADOPT), OBS, now=NOW, keys=KEYS)
    assert adopt[0] == {"op": "test", "path": "/metadata/generation", "value": 3}
    assert not any(op["path"] == "/metadata/resourceVersion" for op in ops + adopt)


def test_a_map_created_in_metadata_still_pins_the_resource_version() -> None:
    """Metadata changes do not move most kinds' generation: there only the resourceVersion pins the map."""
    kind = replace(DEPLOYMENT, kind="Thing", template=None, annotations="/metadata/annotations")
    t = target(kind=kind, annotations_map_present=False, generation=3)
    ops = build_patch(t, decision(Action.ROLLOUT), OBS, now=NOW, keys=KEYS)
    assert ops[0] == {"op": "test", "path": "/metadata/resourceVersion", "value": "100"}


def test_rollout_creates_template_metadata_when_absent() -> None:
    t = target(annotations_map_present=False, template_metadata_present=False)
    ops = build_patch(t, decision(Action.ROLLOUT), OBS, now=NOW, keys=KEYS)
    assert {
        "op": "add",
        "path": "/spec/template/metadata",
        "value": {"annotations": {"kube-rehash.io/config-hash": "v1:new"}},
    } in ops


def test_adopt_writes_metadata_only_guarded_by_resource_version() -> None:
    assert build_patch(target(), decision(Action.ADOPT), OBS, now=NOW, keys=KEYS) == [
        {"op": "test", "path": "/metadata/resourceVersion", "value": "100"},
        {"op": "add", "path": META + "config-hash", "value": "v1:new"},
        {"op": "add", "path": META + "sources", "value": RECORDS},
    ]


def test_refresh_never_touches_the_template() -> None:
    t = target(template_hash="v1:new", bookkeeping=Bookkeeping("v1:new"))
    ops = build_patch(t, decision(Action.REFRESH), OBS, now=NOW, keys=KEYS)
    assert all(op["path"].startswith("/metadata/") for op in ops if op["op"] == "add")
    assert {"op": "test", "path": TPL, "value": "v1:new"} in ops


def test_custom_prefix_is_escaped_in_paths() -> None:
    keys = Annotations("rehash.example.com")
    ops = build_patch(target(), decision(Action.ADOPT), OBS, now=NOW, keys=keys)
    assert ops[1]["path"] == "/metadata/annotations/rehash.example.com~1config-hash"


def test_event_names_the_workload_and_carries_no_values() -> None:
    event = build_event(
        target(),
        reason="ConfigChanged",
        message="configmap/app changed",
        warning=False,
        now=NOW,
        action="Rollout",
    )
    assert event["involvedObject"] == {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "namespace": "shop",
        "name": "web",
        "uid": "w1",
    }
    assert (event["reason"], event["type"], event["metadata"]["namespace"]) == (
        "ConfigChanged",
        "Normal",
        "shop",
    )
    assert event["metadata"]["name"].startswith("web.")


def test_job_from_cronjob_is_owned_and_named_per_hash() -> None:
    cronjob = {
        "metadata": {"name": "report", "namespace": "shop", "uid": "c1"},
        "spec": {
            "jobTemplate": {
                "metadata": {"labels": {"app": "r"}},
                "spec": {"template": {"spec": {"containers": []}}},
            }
        },
    }
    job = build_job(cronjob, "v1:new")
    assert job is not None
    assert job["metadata"]["name"] == job_name("report", "v1:new")
    assert job["metadata"]["ownerReferences"][0]["uid"] == "c1"
    assert job["metadata"]["annotations"]["cronjob.kubernetes.io/instantiate"] == "manual"
    assert job["spec"] == cronjob["spec"]["jobTemplate"]["spec"]
    assert len(job_name("x" * 80, "v1:new")) <= 63
    assert CRONJOB.object_path("shop", "report") == "/apis/batch/v1/namespaces/shop/cronjobs/report"


def test_a_workload_without_a_metadata_annotations_map_gets_one_guarded_by_its_resource_version() -> None:
    """Opted in only by Reloader's annotations on its pod template (compat), its metadata may have no
    annotations map: adding a key to it would be refused (422) on every try."""
    t = replace(target(generation=4), metadata_annotations_present=False)
    ops = build_patch(t, decision(Action.ADOPT), OBS, now=NOW, keys=KEYS)
    guard = {"op": "test", "path": "/metadata/resourceVersion", "value": t.resource_version}
    created = {"op": "add", "path": "/metadata/annotations", "value": {}}
    assert guard in ops and ops.index(guard) < ops.index(created)
    first_key = next(i for i, op in enumerate(ops) if op["path"].startswith(META))
    assert ops.index(created) < first_key
