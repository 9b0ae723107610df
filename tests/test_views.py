"""Metadata-first detection without a server: the generation stamp, when recorded sources are
trusted, confirming a workload from its sources' metadata, and what the writes record."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from reconcile.errors import RehashError
from reconcile.model.annotations import Annotations
from reconcile.model.bookkeeping import RECORDS_FORMAT, SourceRecord, format_records, parse_records
from reconcile.model.hashing import SourceToken, combine
from reconcile.model.kinds import CRONJOB, DEPLOYMENT
from reconcile.model.references import DiscoverySettings, Reference, discover
from reconcile.model.sources import NamespaceSources, SourceKey, SourceMeta
from reconcile.model.workload import Listed, read_listed, read_target, records_trusted, revise
from reconcile.policy.decide import Rules, confirm_recorded
from reconcile.policy.decision import Action, Decision, Observed
from reconcile.policy.patches import build_patch
from reconcile.policy.table import decide

NOW = datetime(2026, 11, 21, 12, 0, tzinfo=UTC)
SETTINGS = DiscoverySettings()
KEYS = Annotations()
CM = SourceRecord("configmap", "app", "u1", "10", "*", "aaaa")
OPTIONAL_ABSENT = SourceRecord("secret", "extra", "", "", "*", "absent")
RECORDS = (CM, OPTIONAL_ABSENT)
HASH = combine((SourceToken(r.kind, r.name, r.token) for r in RECORDS), None)


def deployment(generation: int = 3, stamp: int | None = 3, **annotations: str) -> dict[str, Any]:
    """A full Deployment object whose bookkeeping was written at generation `stamp`, before the
    extra `annotations` were added."""
    pod = {"containers": [{"name": "a", "envFrom": [{"configMapRef": {"name": "app"}}]}]}
    obj: dict[str, Any] = {
        "metadata": {
            "name": "web",
            "namespace": "shop",
            "uid": "w1",
            "resourceVersion": "50",
            "generation": generation,
            "annotations": {"kube-rehash.io/watch": "true"},
        },
        "spec": {"template": {"metadata": {"annotations": {KEYS.config_hash: HASH}}, "spec": pod}},
    }
    inputs = read_target(obj, DEPLOYMENT, SETTINGS).inputs
    meta = obj["metadata"]["annotations"]
    meta.update(annotations)
    meta[KEYS.config_hash] = HASH
    meta[KEYS.sources] = format_records(RECORDS, "", generation=stamp, inputs=inputs)
    return obj


def metadata_only(obj: dict[str, Any]) -> dict[str, Any]:
    return {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": obj["metadata"]}


def test_records_round_trip_with_the_generation_stamp() -> None:
    text = format_records(RECORDS, "kf", generation=7, inputs="abc")
    doc = parse_records(text)
    assert doc is not None and (doc.records, doc.key_fingerprint, doc.generation, doc.inputs) == (
        tuple(sorted(RECORDS)),
        "kf",
        7,
        "abc",
    )
    assert json.loads(format_records(RECORDS, "kf"))["v"] == RECORDS_FORMAT and "g" not in json.loads(
        format_records(RECORDS, "kf")
    )


@pytest.mark.parametrize("stamp", ["7", True, None, 7.5])
def test_a_malformed_generation_stamp_is_ignored_not_trusted(stamp: Any) -> None:
    doc = json.loads(format_records(RECORDS, "", generation=1, inputs="x"))
    doc["g"] = stamp
    parsed = parse_records(json.dumps(doc))
    assert parsed is not None and parsed.records == tuple(sorted(RECORDS)) and parsed.generation is None


def test_a_listed_view_takes_its_references_from_the_records() -> None:
    view = read_listed(metadata_only(deployment()), DEPLOYMENT, SETTINGS)
    assert isinstance(view, Listed) and view.discovery.opted_in and view.generation == 3
    assert view.discovery.references == (
        Reference("configmap", "app", None, False),
        Reference("secret", "extra", None, True),
    )
    assert records_trusted(view, "")


def test_listed_and_full_views_agree_on_the_discovery_inputs() -> None:
    obj = deployment()
    assert (
        read_listed(metadata_only(obj), DEPLOYMENT, SETTINGS).inputs
        == read_target(obj, DEPLOYMENT, SETTINGS).inputs
    )


@pytest.mark.parametrize(
    ("why", "obj", "fingerprint"),
    [
        ("the spec changed (new generation)", deployment(generation=4), ""),
        ("no stamp was recorded", deployment(stamp=None), ""),
        ("an explicit reference list was added", deployment(**{"kube-rehash.io/configmaps": "more"}), ""),
        ("search mode finds sources by listing", deployment(**{"kube-rehash.io/search": "true"}), ""),
        ("the hash key changed", deployment(), "otherkey"),
    ],
)
def test_recorded_sources_are_not_trusted_when(why: str, obj: dict[str, Any], fingerprint: str) -> None:
    view = read_listed(metadata_only(obj), DEPLOYMENT, SETTINGS)
    assert not records_trusted(view, fingerprint), why


def test_annotations_discovery_does_not_read_leave_the_inputs_alone() -> None:
    base = discover({"kube-rehash.io/watch": "true"}, None, SETTINGS)
    noisy = discover(
        {"kube-rehash.io/watch": "true", "deployment.kubernetes.io/revision": "9", "team": "a"},
        None,
        SETTINGS,
    )
    assert base.inputs == noisy.inputs
    reloader = DiscoverySettings(compat=frozenset({"reloader"}))
    # Settings that read other keys change nothing while those keys are absent (a release or a setting
    # that reads one more annotation keeps today's records trusted) ...
    assert discover({"kube-rehash.io/watch": "true"}, None, reloader).inputs == base.inputs
    # ... and count once one of them is present: with compat on it is read, with compat off it is not.
    peer = {"kube-rehash.io/watch": "true", "reloader.stakater.com/auto": "true"}
    assert discover(peer, None, reloader).inputs != discover(peer, None, SETTINGS).inputs
    assert discover(peer, None, SETTINGS).inputs == base.inputs


def sources(*metas: SourceMeta) -> NamespaceSources:
    """What a survey found; the recorded optional Secret `extra` is absent unless found."""
    found = {SourceKey(m.kind, m.name): m for m in metas}
    absent = {SourceKey("secret", "extra")} - found.keys()
    return NamespaceSources("shop", found, absent=absent)


UNCHANGED = SourceMeta("configmap", "app", "u1", "10")


def confirm(found: NamespaceSources, unreadable: tuple[str, ...] = (), **book: Any) -> Decision | None:
    view = read_listed(metadata_only(deployment()), DEPLOYMENT, SETTINGS)
    if book:
        view = replace(view, bookkeeping=replace(view.bookkeeping, **book))
    for label in unreadable:
        kind, name = label.split("/")
        found.broken[SourceKey(kind, name)] = RehashError(f"{label}: 403 Forbidden")
        found.absent.discard(SourceKey(kind, name))
        if name == "*":
            found.found.pop(SourceKey(kind, "app"), None)
    return confirm_recorded(view, found, Rules(SETTINGS, None, NOW))


def test_unchanged_identities_confirm_the_workload_in_sync() -> None:
    decision = confirm(sources(UNCHANGED))
    assert decision is not None and decision.action is Action.IN_SYNC and decision.config_hash == HASH


def test_a_metadata_only_confirmation_does_not_claim_the_template_annotation_is_absent() -> None:
    """The pod template was not read, so its annotation is unknown, not absent (even after a rollout)."""
    decision = confirm(sources(UNCHANGED), last_rollout=NOW - timedelta(hours=1))
    assert decision is not None and decision.action is Action.IN_SYNC
    assert decision.reason == "content unchanged"


@pytest.mark.parametrize(
    ("why", "found", "unreadable", "book"),
    [
        ("a new resourceVersion", sources(replace(UNCHANGED, resource_version="11")), (), {}),
        ("recreated under the same name", sources(replace(UNCHANGED, uid="u2")), (), {}),
        ("deleted", sources(), (), {}),
        (
            "an optional source appeared",
            sources(UNCHANGED, SourceMeta("secret", "extra", "u9", "1")),
            (),
            {},
        ),
        (
            "the source is now ignored",
            sources(replace(UNCHANGED, flags=frozenset({"kube-rehash.io/ignore"}))),
            (),
            {},
        ),
        ("the source could not be read", sources(UNCHANGED), ("secret/extra",), {}),
        ("its kind could not be listed", sources(UNCHANGED), ("configmap/*",), {}),
        ("the stored hash disagrees with the records", sources(UNCHANGED), (), {"config_hash": "v1:x"}),
    ],
)
def test_a_workload_is_read_in_full_when(
    why: str, found: NamespaceSources, unreadable: tuple[str, ...], book: dict[str, Any]
) -> None:
    assert confirm(found, unreadable, **book) is None, why


def full_view(**kw: Any) -> Any:
    return revise(read_target(deployment(), DEPLOYMENT, SETTINGS), **kw)


OBSERVED = Observed(HASH, tuple(sorted(RECORDS)))


def test_a_full_view_with_a_stale_stamp_refreshes_without_a_rollout() -> None:
    target = full_view(generation=4)
    assert decide(target, OBSERVED, now=NOW).action is Action.REFRESH
    assert decide(full_view(), OBSERVED, now=NOW).action is Action.IN_SYNC


def test_incomplete_records_are_never_stamped_so_never_refreshed_for_it() -> None:
    unstamped = full_view(generation=4)
    unstamped = revise(unstamped, bookkeeping=replace(unstamped.bookkeeping, generation=None, inputs=""))
    assert decide(unstamped, replace(OBSERVED, complete=False), now=NOW).action is Action.IN_SYNC


def stamp_of(ops: list[dict[str, Any]]) -> Any:
    (records,) = [op["value"] for op in ops if op["path"].endswith("sources")]
    return json.loads(records).get("g")


@pytest.mark.parametrize(
    ("action", "kind", "complete", "expected"),
    [
        (Action.ROLLOUT, DEPLOYMENT, True, 4),  # the template annotation is spec: one bump
        (Action.ROLLOUT, CRONJOB, True, 4),
        (Action.REFRESH, CRONJOB, True, 3),  # metadata only: no bump
        (Action.ADOPT, CRONJOB, True, 3),
        # A Deployment's generation also follows its annotations (Kind.annotations_bump_generation).
        (Action.REFRESH, DEPLOYMENT, True, 4),
        (Action.ADOPT, DEPLOYMENT, True, 4),
        (Action.ROLLOUT, DEPLOYMENT, False, None),  # an ignored source or search mode: never trusted
    ],
)
def test_writes_record_the_generation_the_server_will_hold(
    action: Action, kind: Any, complete: bool, expected: int | None
) -> None:
    target = full_view(kind=kind, template_hash="v1:old")
    observed = replace(OBSERVED, config_hash="v1:new", complete=complete)
    decision = Decision(action, "r", config_hash="v1:new", previous="v1:old", observed=observed)
    assert stamp_of(build_patch(target, decision, observed, now=NOW, keys=KEYS)) == expected
