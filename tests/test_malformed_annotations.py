"""Bad input fails closed, and is said every pass: a malformed value of any workload annotation kube-rehash
reads (its own; a peer's in compat mode) makes the workload `skipped` with a reason naming the annotation
and the value — on first sight, on a later pass of a workload recorded in sync, and in `explain`/`plan`
(they decide through `decide_target`, whose first step is the same rule). No silent default, no opt-out."""

from __future__ import annotations

from typing import Any

import pytest

from reconcile.model.kinds import CRONJOB, DEPLOYMENT, Kind
from reconcile.model.references import COMPAT_NAMES, DiscoverySettings
from reconcile.model.sources import NamespaceSources, SourceKey, flag_keys, read_meta
from reconcile.model.workload import read_target
from reconcile.pipeline.listing import opted_in_view
from reconcile.policy.decide import decide_target
from reconcile.policy.decision import Action, Decision
from reconcile.policy.rules import Rules
from reconcile.policy.triage import triage_one
from tests.test_plan_keys import NOW

OWN = DiscoverySettings()
COMPAT = DiscoverySettings(compat=frozenset(COMPAT_NAMES))
WATCH = {"kube-rehash.io/watch": "true"}
IN_SYNC = {  # what an earlier pass recorded on a workload in sync (records, key fingerprint, stamp)
    "kube-rehash.io/config-hash": "v1:00000000000000000000000000000000",
    "kube-rehash.io/sources": '{"v":1,"k":"","s":[],"g":1,"i":""}',
}

# (annotations, compat on, the annotation the reason names, the value it shows, the kind)
CASES: list[Any] = [
    pytest.param({"kube-rehash.io/watch": "yes"}, OWN, "kube-rehash.io/watch", '"yes"', id="watch-yes"),
    pytest.param({"kube-rehash.io/watch": "True"}, OWN, "kube-rehash.io/watch", '"True"', id="watch-case"),
    pytest.param({"kube-rehash.io/watch": ""}, OWN, "kube-rehash.io/watch", '""', id="watch-empty"),
    pytest.param({"kube-rehash.io/search": "1"}, OWN, "kube-rehash.io/search", '"1"', id="search"),
    pytest.param({**WATCH, "kube-rehash.io/ignore": "1"}, OWN, "kube-rehash.io/ignore", '"1"', id="ignore"),
    pytest.param({"kube-rehash.io/configmaps": "App"}, OWN, "kube-rehash.io/configmaps", '"App"', id="cms"),
    pytest.param({"kube-rehash.io/secrets": "a,b_c"}, OWN, "kube-rehash.io/secrets", '"b_c"', id="secrets"),
    pytest.param(
        {**WATCH, "kube-rehash.io/min-interval": "ten minutes"},
        OWN,
        "kube-rehash.io/min-interval",
        "'ten minutes'",
        id="min-interval",
    ),
    pytest.param(
        {**WATCH, "kube-rehash.io/restart-window": "whenever"},
        OWN,
        "kube-rehash.io/restart-window",
        "'whenever'",
        id="restart-window",
    ),
    pytest.param(
        {**WATCH, "kube-rehash.io/on-change": "restart"},
        OWN,
        "kube-rehash.io/on-change",
        "'restart'",
        id="on-change",
    ),
    pytest.param(
        {**WATCH, "kube-rehash.io/run-on-change": "yes"},
        OWN,
        "kube-rehash.io/run-on-change",
        '"yes"',
        id="run-on-change",
    ),
    pytest.param(
        {"reloader.stakater.com/auto": "yes"}, COMPAT, "reloader.stakater.com/auto", '"yes"', id="r-auto"
    ),
    pytest.param(
        {"configmap.reloader.stakater.com/auto": "1"},
        COMPAT,
        "configmap.reloader.stakater.com/auto",
        '"1"',
        id="reloader-configmap-auto",
    ),
    pytest.param(
        {"secret.reloader.stakater.com/auto": "on"},
        COMPAT,
        "secret.reloader.stakater.com/auto",
        '"on"',
        id="reloader-secret-auto",
    ),
    pytest.param(
        {"reloader.stakater.com/search": "yes"},
        COMPAT,
        "reloader.stakater.com/search",
        '"yes"',
        id="r-search",
    ),
    pytest.param(
        {"configmap.reloader.stakater.com/reload": "app,app-.*"},
        COMPAT,
        "configmap.reloader.stakater.com/reload",
        '"app-.*": regex patterns are not supported; list names',
        id="reloader-configmap-regex",
    ),
    pytest.param(
        {"secret.reloader.stakater.com/reload": "db-[0-9]+"},
        COMPAT,
        "secret.reloader.stakater.com/reload",
        '"db-[0-9]+": regex patterns are not supported',
        id="reloader-secret-regex",
    ),
    pytest.param(
        {"wave.pusher.com/update-on-config-change": "yes"},
        COMPAT,
        "wave.pusher.com/update-on-config-change",
        '"yes"',
        id="wave-flag",
    ),
    pytest.param(
        {"wave.pusher.com/update-on-config-change": "true", "wave.pusher.com/extra-configmaps": "a/b/c"},
        COMPAT,
        "wave.pusher.com/extra-configmaps",
        '"a/b/c"',
        id="wave-extra-configmaps",
    ),
    pytest.param(
        {"wave.pusher.com/update-on-config-change": "true", "wave.pusher.com/extra-secrets": "Bad"},
        COMPAT,
        "wave.pusher.com/extra-secrets",
        '"Bad"',
        id="wave-extra-secrets",
    ),
    pytest.param(
        {"pod-reloader.cs.sap.com/configmaps": "A"},
        COMPAT,
        "pod-reloader.cs.sap.com/configmaps",
        '"A"',
        id="pr-cms",
    ),
    pytest.param(
        {"pod-reloader.cs.sap.com/secrets": "x y"},
        COMPAT,
        "pod-reloader.cs.sap.com/secrets",
        '"x y"',
        id="pr-sec",
    ),
]


def item(annotations: dict[str, str], kind: Kind = DEPLOYMENT) -> dict[str, Any]:
    pod = {"containers": [{"name": "app", "image": "app:1", "envFrom": [{"configMapRef": {"name": "app"}}]}]}
    template = {"metadata": {}, "spec": pod}
    spec: dict[str, Any] = {"template": template}
    if kind is CRONJOB:
        spec = {"jobTemplate": {"spec": {"template": template}}}
    meta = {"name": "web", "namespace": "shop", "uid": "w1", "generation": 1, "annotations": annotations}
    return {"apiVersion": kind.api_version, "kind": kind.kind, "metadata": meta, "spec": spec}


def assert_names(reason: str, annotation: str, value: str) -> None:
    assert reason.startswith("malformed"), reason
    assert annotation in reason and value in reason, reason
    assert reason.endswith("nothing written"), reason


@pytest.mark.parametrize("recorded", [{}, IN_SYNC], ids=["first-sight", "recorded-in-sync"])
@pytest.mark.parametrize(("annotations", "settings", "annotation", "value"), CASES)
def test_a_malformed_annotation_skips_the_workload_naming_it_every_pass(
    annotations: dict[str, str],
    settings: DiscoverySettings,
    annotation: str,
    value: str,
    recorded: dict[str, str],
) -> None:
    kind = CRONJOB if "run-on-change" in annotation else DEPLOYMENT
    obj = item({**annotations, **recorded}, kind)
    listed = opted_in_view(obj, kind, settings)
    assert listed is not None, "the workload gets a row, never dropped in silence"
    settled = triage_one(listed, "")
    assert isinstance(settled, Decision) and settled.action is Action.SKIPPED
    assert_names(settled.reason, annotation, value)
    rules = Rules(settings, None, NOW)
    explained = decide_target(read_target(obj, kind, settings, listed), NamespaceSources("shop"), rules)
    assert explained.action is Action.SKIPPED
    assert explained.reason == settled.reason


def test_booleans_true_and_false_are_the_only_values_and_false_is_no_row() -> None:
    assert opted_in_view(item({"kube-rehash.io/watch": "false"}), DEPLOYMENT, OWN) is None
    listed = opted_in_view(item(WATCH), DEPLOYMENT, OWN)
    assert listed is not None and not listed.problems
    ignored = opted_in_view(item({**WATCH, "kube-rehash.io/ignore": "true"}), DEPLOYMENT, OWN)
    assert ignored is not None
    decision = triage_one(ignored, "")
    assert isinstance(decision, Decision) and decision.reason.startswith("ignored")


def test_peers_annotations_are_not_read_with_compat_off() -> None:
    assert opted_in_view(item({"reloader.stakater.com/auto": "yes"}), DEPLOYMENT, OWN) is None


SOURCE_CASES: list[Any] = [
    pytest.param(WATCH, OWN, {"kube-rehash.io/ignore": "yes"}, "kube-rehash.io/ignore", id="own-ignore"),
    pytest.param(
        WATCH, OWN, {"kube-rehash.io/ignore": "TRUE"}, "kube-rehash.io/ignore", id="own-ignore-case"
    ),
    pytest.param(
        {"kube-rehash.io/search": "true"},
        OWN,
        {"kube-rehash.io/match": "1"},
        "kube-rehash.io/match",
        id="own-match",
    ),
    pytest.param(
        {"reloader.stakater.com/auto": "true"},
        COMPAT,
        {"reloader.stakater.com/ignore": "yes"},
        "reloader.stakater.com/ignore",
        id="reloader-ignore",
    ),
    pytest.param(
        {"reloader.stakater.com/search": "true"},
        COMPAT,
        {"reloader.stakater.com/match": "on"},
        "reloader.stakater.com/match",
        id="reloader-match",
    ),
]


@pytest.mark.parametrize(("annotations", "settings", "source", "annotation"), SOURCE_CASES)
def test_a_malformed_flag_on_a_source_skips_the_workloads_reading_it(
    annotations: dict[str, str], settings: DiscoverySettings, source: dict[str, str], annotation: str
) -> None:
    sources = NamespaceSources("shop")
    meta = read_meta("configmap", {"metadata": {"name": "app", "annotations": source}}, flag_keys(settings))
    assert meta is not None
    sources.found[SourceKey("configmap", "app")] = meta
    sources.listed |= {"configmap", "secret"}
    sources.searched |= {"configmap", "secret"}
    target = read_target(item(annotations), DEPLOYMENT, settings)
    decision = decide_target(target, sources, Rules(settings, None, NOW))
    assert decision.action is Action.SKIPPED, decision
    assert decision.reason.startswith(f"malformed annotation: configmap/app: {annotation}: ")
    assert decision.reason.endswith('is not "true" or "false"; nothing written')
