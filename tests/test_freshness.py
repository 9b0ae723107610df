"""Pods already newer than the change (skipIfPodsNewer), without a server: the two times, their
comparison (properties), which workloads may ask, the decision, and what the refresh writes."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reconcile.model.annotations import Annotations
from reconcile.model.bookkeeping import SourceRecord, format_records
from reconcile.model.freshness import (
    Change,
    Lineage,
    Origin,
    content_changed_at,
    fresh_reason,
    lineage_of,
    parse_timestamp,
    pods_newer,
    template_origin,
    tied_versions,
)
from reconcile.model.hashing import SourceToken, combine
from reconcile.model.kinds import CRONJOB, DEPLOYMENT, STATEFULSET
from reconcile.model.references import DiscoverySettings
from reconcile.model.sources import Hashed, NamespaceSources, SourceKey, SourceMeta
from reconcile.model.workload import read_target, revise
from reconcile.policy.decide import Rules, change_times, decide_target
from reconcile.policy.decision import Action
from reconcile.policy.patches import build_patch
from reconcile.policy.table import decide
from reconcile.settings.policy import PolicySettings

T0 = datetime(2026, 11, 25, 12, 0, 0, tzinfo=UTC)
KEYS = Annotations()
SETTINGS = DiscoverySettings()


def stamp(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def entry(moment: datetime | None, *fields: str, manager: str = "kubectl") -> dict[str, Any]:
    out: dict[str, Any] = {"manager": manager, "operation": "Update", "apiVersion": "v1"}
    out["fieldsV1"] = {f: {} for f in fields}
    if moment is not None:
        out["time"] = stamp(moment)
    return out


def source(*entries: dict[str, Any], created: datetime = T0) -> dict[str, Any]:
    metadata = {"name": "app", "creationTimestamp": stamp(created), "managedFields": list(entries)}
    return {"metadata": metadata, "data": {"a": "1"}}


# --- the time a source's content last changed ----------------------------------------------------------


def test_the_newest_owner_of_the_content_dates_it() -> None:
    obj = source(
        entry(T0 + timedelta(seconds=5), "f:data", manager="argocd"),
        entry(T0 + timedelta(seconds=9), "f:binaryData", manager="flux"),
        entry(T0 + timedelta(seconds=60), "f:metadata"),  # a label edit later: not a content change
    )
    assert content_changed_at(obj) == T0 + timedelta(seconds=9)


@pytest.mark.parametrize("field", ["f:data", "f:binaryData", "f:stringData"])
def test_each_content_field_counts(field: str) -> None:
    assert content_changed_at(source(entry(T0, field))) == T0


@pytest.mark.parametrize(
    ("why", "obj"),
    [
        ("no managedFields (the simulator)", {"metadata": {"name": "app"}, "data": {"a": "1"}}),
        ("empty managedFields", source()),
        ("nobody owns the content", source(entry(T0, "f:metadata"))),
        ("an owner of the content without a time", source(entry(None, "f:data"))),
        ("an owner with an unreadable time", source({**entry(T0, "f:data"), "time": "yesterday"})),
    ],
)
def test_an_unknown_change_time(why: str, obj: dict[str, Any]) -> None:
    assert content_changed_at(obj) is None, why


def test_never_earlier_than_the_creation() -> None:
    # Deleted and created again: an entry carried over can be older than the object.
    obj = source(entry(T0, "f:data"), created=T0 + timedelta(seconds=30))
    assert content_changed_at(obj) == T0 + timedelta(seconds=30)


def test_timestamps_are_whole_seconds_in_utc() -> None:
    assert parse_timestamp("2026-11-25T12:00:00Z") == T0
    assert parse_timestamp("2026-11-25T13:00:00.750+01:00") == T0
    assert parse_timestamp("2026-11-25T12:00:00") is None  # no zone: not the API server's
    assert parse_timestamp(None) is None and parse_timestamp("") is None


# --- the comparison (properties) -----------------------------------------------------------------------

moments = st.datetimes(
    min_value=datetime(2020, 1, 1), max_value=datetime(2030, 1, 1), timezones=st.just(UTC)
).map(lambda d: d.replace(microsecond=0))
versions = st.integers(min_value=1, max_value=10**9).map(str)
changes = st.dictionaries(
    st.sampled_from(["configmap/a", "configmap/b", "secret/c"]),
    st.builds(Change, moments, versions),
    min_size=1,
)


@given(changes, moments)
def test_pods_are_newer_exactly_when_every_change_is_strictly_earlier(
    found: dict[str, Change], started: datetime
) -> None:
    origin = Origin("web-1", started)
    expected = all(c.at is not None and c.at < started for c in found.values())
    assert pods_newer(found, origin) is expected


@given(changes, moments, st.integers(min_value=0, max_value=10**6))
def test_a_later_template_never_turns_newer_pods_into_a_rollout(
    found: dict[str, Change], started: datetime, later: int
) -> None:
    if pods_newer(found, Origin("rs", started)):
        assert pods_newer(found, Origin("rs", started + timedelta(seconds=later)))


@given(moments, versions, st.integers(min_value=0, max_value=999_999))
def test_equal_seconds_roll_unless_the_template_provably_came_after(
    at: datetime, version: str, micros: int
) -> None:
    change = {"configmap/a": Change(at, version)}
    started = at + timedelta(microseconds=micros)  # the same second, whatever the fraction
    assert not pods_newer(change, Origin("rs", started))
    assert tied_versions(change, Origin("rs", started)) == (version,)
    assert pods_newer(change, Origin("rs", started, absent_at=frozenset({version})))
    assert not pods_newer(change, Origin("rs", started, absent_at=frozenset({version + "0"})))


@given(changes, moments)
def test_any_unknown_change_time_rolls(found: dict[str, Change], started: datetime) -> None:
    label = sorted(found)[0]
    unknown = {**found, label: Change(None, "1")}
    assert not pods_newer(unknown, Origin("rs", started + timedelta(days=3650)))
    assert tied_versions(unknown, Origin("rs", started)) == ()


def test_nothing_to_check_when_a_change_is_later_or_nothing_ties() -> None:
    origin = Origin("rs", T0)
    later = {"configmap/a": Change(T0, "5"), "configmap/b": Change(T0 + timedelta(seconds=1), "6")}
    assert tied_versions(later, origin) == ()
    assert tied_versions({"configmap/a": Change(T0 - timedelta(seconds=1), "5")}, origin) == ()
    assert not pods_newer({}, origin) and not pods_newer({"configmap/a": Change(T0, "5")}, None)


def test_clock_skew_cannot_matter_both_times_come_from_the_api_server() -> None:
    # Both sides are API-server timestamps; the pass's own clock is never compared with either.
    origin = Origin("rs", T0)
    change = {"configmap/a": Change(T0 - timedelta(seconds=1), "5")}
    assert pods_newer(change, origin)


def test_the_reason_names_the_changed_sources() -> None:
    assert fresh_reason(["configmap/app"]) == "pods started after configmap/app changed"
    many = [f"configmap/c{i}" for i in range(12)]
    assert fresh_reason(many).endswith("configmap/c9 and 2 more changed")


# --- the current template's object -----------------------------------------------------------------------


def lineage(kind: str = "Deployment", **kw: Any) -> Lineage:
    base = Lineage(kind, "w1", 5, 5, (("app", "web"),), revision="3")
    return replace(base, **kw)


def item(name: str, created: datetime, owner: str = "w1", **annotations: str) -> dict[str, Any]:
    owners = [{"uid": owner, "controller": True, "kind": "Deployment", "name": "web"}]
    metadata = {"name": name, "creationTimestamp": stamp(created), "ownerReferences": owners}
    return {"metadata": {**metadata, "annotations": annotations}}


REV = "deployment.kubernetes.io/revision"


def test_a_deployments_template_is_its_highest_revision() -> None:
    items = [
        item("web-a", T0, **{REV: "2"}),
        item("web-b", T0 + timedelta(seconds=9), **{REV: "3"}),
        item("other", T0 + timedelta(seconds=99), owner="w2", **{REV: "7"}),  # another Deployment's
    ]
    assert template_origin(lineage(), items) == Origin("web-b", T0 + timedelta(seconds=9))


@pytest.mark.parametrize(
    ("why", "facts", "items"),
    [
        ("the controller has not observed the spec", {"observed_generation": 4}, None),
        ("the Deployment's revision is not the newest", {"revision": "4"}, None),
        ("paused: its template does not replace the pods", {"every_pod_replaced": False}, None),
        ("no revision annotation yet", {"revision": None}, None),
        (
            "two ReplicaSets claim the revision",
            {},
            [item("x", T0, **{REV: "3"}), item("y", T0, **{REV: "3"})],
        ),
        ("no ReplicaSet of its own", {}, [item("x", T0, owner="w2", **{REV: "3"})]),
    ],
)
def test_no_deployment_template_on_doubt(why: str, facts: dict[str, Any], items: Any) -> None:
    found = items or [item("web-a", T0, **{REV: "2"}), item("web-b", T0, **{REV: "3"})]
    assert template_origin(lineage(**facts), found) is None, why


def test_a_statefulsets_template_is_its_update_revision() -> None:
    facts = lineage("StatefulSet", revision="db-7f")
    items = [item("db-7f", T0), item("db-11", T0 + timedelta(seconds=50))]
    assert template_origin(facts, items) == Origin("db-7f", T0)
    assert template_origin(facts, [item("db-11", T0)]) is None


def test_a_daemonsets_template_is_its_newest_revision_of_its_template_generation() -> None:
    generation = "deprecated.daemonset.template.generation"
    facts = lineage("DaemonSet", revision="4")
    newest = item("agent-2", T0 + timedelta(seconds=5), **{generation: "4"})
    assert template_origin(facts, [item("agent-1", T0, **{generation: "3"}), newest]) == Origin(
        "agent-2", T0 + timedelta(seconds=5)
    )
    # A rollback reuses an older revision: the newest one is not the current template.
    assert template_origin(replace(facts, revision="5"), [newest]) is None


def workload_obj(kind: str, **spec: Any) -> dict[str, Any]:
    return {
        "metadata": {"uid": "w1", "generation": 5, "annotations": {REV: "3"}},
        "spec": {"selector": {"matchLabels": {"tier": "x", "app": "web"}}, **spec},
        "status": {"observedGeneration": 5, "updateRevision": "db-7f"},
    }


def test_lineage_facts_of_the_three_kinds() -> None:
    deployment = lineage_of(workload_obj("Deployment"), "Deployment")
    assert deployment is not None and deployment.settled and deployment.revision == "3"
    assert deployment.label_selector == "app=web,tier=x"
    assert lineage_of(workload_obj("Deployment", paused=True), "Deployment").settled is False  # type: ignore[union-attr]
    sts = lineage_of(workload_obj("StatefulSet"), "StatefulSet")
    assert sts is not None and sts.settled and sts.revision == "db-7f"
    partitioned = {"updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": 1}}}
    assert lineage_of(workload_obj("StatefulSet", **partitioned), "StatefulSet").settled is False  # type: ignore[union-attr]
    on_delete = {"updateStrategy": {"type": "OnDelete"}}
    assert lineage_of(workload_obj("DaemonSet", **on_delete), "DaemonSet").settled is False  # type: ignore[union-attr]
    assert lineage_of(workload_obj("CronJob"), CRONJOB.revisions) is None  # its Jobs prove nothing


# --- which workloads ask, and the decision -------------------------------------------------------------

OLD = SourceRecord("configmap", "app", "u1", "10", "*", "aaaa")
NEW_TOKEN = "bbbb"
OLD_HASH = combine([SourceToken("configmap", "app", "aaaa")], None)
NEW_HASH = combine([SourceToken("configmap", "app", NEW_TOKEN)], None)
RULES = Rules(SETTINGS, None, T0 + timedelta(hours=1))


def full_view(
    generation: int = 6, template: str | None = OLD_HASH, kind: Any = DEPLOYMENT, **more: str
) -> Any:
    """A Deployment adopted (or rolled) at generation 5 whose spec has moved to `generation`."""
    pod = {"containers": [{"name": "a", "envFrom": [{"configMapRef": {"name": "app"}}]}]}
    tmeta = {"annotations": {KEYS.config_hash: template}} if template else {}
    obj: dict[str, Any] = {
        "metadata": {
            "name": "web",
            "namespace": "shop",
            "uid": "w1",
            "resourceVersion": "50",
            "generation": generation,
            "annotations": {"kube-rehash.io/watch": "true", REV: "3", **more},
        },
        "spec": {"selector": {"matchLabels": {"app": "web"}}, "template": {"metadata": tmeta, "spec": pod}},
        "status": {"observedGeneration": generation, "updateRevision": "web-7f"},
    }
    inputs = read_target(obj, kind, SETTINGS).inputs
    annotations = obj["metadata"]["annotations"]
    annotations[KEYS.config_hash] = OLD_HASH
    annotations[KEYS.sources] = format_records((OLD,), "", generation=5, inputs=inputs)
    return read_target(obj, kind, SETTINGS)


def changed_sources(at: datetime | None = T0) -> NamespaceSources:
    found = NamespaceSources("shop")
    key = SourceKey("configmap", "app")
    found.found[key] = SourceMeta("configmap", "app", "u1", "11")
    found.tokens[(key, None)] = Hashed(NEW_TOKEN, "u1", "11", at)
    return found


def test_a_changed_workload_whose_spec_moved_asks_with_its_change_times() -> None:
    target = full_view()
    decision = decide_target(target, changed_sources(), RULES)
    assert decision.action is Action.ROLLOUT
    assert change_times(target, decision, changed_sources(), RULES) == {"configmap/app": Change(T0, "11")}


@pytest.mark.parametrize(
    ("why", "target", "sources", "rules"),
    [
        ("the spec did not move: its template predates our record", full_view(generation=5), None, RULES),
        ("the change time is unknown (no managedFields)", full_view(), changed_sources(None), RULES),
        (
            "skipIfPodsNewer: false",
            full_view(),
            None,
            replace(RULES, policy=PolicySettings(skip_if_pods_newer=False)),
        ),
        ("a StatefulSet whose controller did not observe its spec", None, None, RULES),
    ],
)
def test_no_extra_read_for(why: str, target: Any, sources: Any, rules: Rules) -> None:
    if target is None:
        target = full_view(kind=STATEFULSET)
        target = replace(target, lineage=replace(target.lineage, observed_generation=5))
    found = sources or changed_sources()
    decision = decide_target(target, found, rules)
    assert change_times(target, decision, found, rules) is None, why


def test_a_steady_or_unchanged_workload_never_asks() -> None:
    unchanged = NamespaceSources("shop")
    unchanged.found[SourceKey("configmap", "app")] = SourceMeta("configmap", "app", "u1", "10")
    target = full_view()
    decision = decide_target(target, unchanged, RULES)
    assert decision.action is Action.REFRESH  # the spec moved, the config did not
    assert change_times(target, decision, unchanged, RULES) is None


def test_pods_newer_than_the_change_refresh_and_otherwise_roll() -> None:
    target = full_view()
    newer = decide_target(target, changed_sources(), RULES, origin=Origin("web-3", T0 + timedelta(seconds=1)))
    assert (newer.action, newer.reason) == (Action.REFRESH, "pods started after configmap/app changed")
    assert newer.config_hash == NEW_HASH and newer.previous == OLD_HASH
    same_second = decide_target(target, changed_sources(), RULES, origin=Origin("web-3", T0))
    assert same_second.action is Action.ROLLOUT
    proven = Origin("web-3", T0, absent_at=frozenset({"11"}))
    assert decide_target(target, changed_sources(), RULES, origin=proven).action is Action.REFRESH
    older = decide_target(target, changed_sources(), RULES, origin=Origin("web-2", T0 - timedelta(seconds=1)))
    assert older.action is Action.ROLLOUT


def test_the_refresh_keeps_the_template_and_records_it_as_superseded() -> None:
    target = full_view()
    decision = decide_target(
        target, changed_sources(), RULES, origin=Origin("web-3", T0 + timedelta(seconds=1))
    )
    assert decision.observed is not None
    ops = build_patch(target, decision, decision.observed, now=RULES.now, keys=KEYS)
    paths = {op["path"]: op for op in ops if op["op"] == "add"}
    assert not any(p.startswith("/spec/") for p in paths)  # no template change: no restart
    assert paths["/metadata/annotations/kube-rehash.io~1config-hash"]["value"] == NEW_HASH
    assert paths["/metadata/annotations/kube-rehash.io~1superseded-template-hash"]["value"] == OLD_HASH
    assert {
        "op": "test",
        "path": "/spec/template/metadata/annotations/kube-rehash.io~1config-hash",
        "value": OLD_HASH,
    } in ops


def test_a_superseded_template_hash_stands_for_the_recorded_one() -> None:
    """The next full read (a spec change) sees the old template hash and decides by the metadata's."""
    target = full_view(generation=8)
    book = replace(target.bookkeeping, config_hash=NEW_HASH, superseded=OLD_HASH, generation=7)
    target = revise(target, bookkeeping=book)
    observed = decide_target(target, changed_sources(), RULES).observed
    assert observed is not None and observed.config_hash == NEW_HASH
    assert decide(target, observed, now=RULES.now).action is Action.REFRESH  # the new generation
    # Without the marker, the same workload would roll.
    plain = revise(target, bookkeeping=replace(book, superseded=None))
    assert decide(plain, observed, now=RULES.now).action is Action.ROLLOUT


def test_a_rollout_removes_the_superseded_marker() -> None:
    target = full_view()
    target = revise(target, bookkeeping=replace(target.bookkeeping, superseded="v1:older"))
    decision = decide_target(target, changed_sources(), RULES)
    assert decision.action is Action.ROLLOUT and decision.observed is not None
    ops = build_patch(target, decision, decision.observed, now=RULES.now, keys=KEYS)
    assert {"op": "remove", "path": "/metadata/annotations/kube-rehash.io~1superseded-template-hash"} in ops
