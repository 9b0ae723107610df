"""Each preset kind (model/presets.py) writes its operator's documented restart knob and is verified by its
own evidence: the exact write of a rollout, what is watched after it, and which pods are its own.

The operators' controllers cannot run here (docs/testing.md, "Operators' resources: stand-in controllers",
says why per operator); tests/real/test_operator_kinds.py runs the CloneSet and a CR naming a Secret against
stand-in controllers on the real control plane, and tests/real/test_argo_rollouts.py the real Argo Rollouts
controller."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from reconcile.model.annotations import Annotations
from reconcile.model.bookkeeping import Bookkeeping, SourceRecord, parse_rollout
from reconcile.model.kinds import Kind
from reconcile.model.knobs import Evidence, Knob
from reconcile.model.presets import (
    CLONESET,
    CNPG_CLUSTER,
    ECK_ELASTICSEARCH,
    KNATIVE_SERVICE,
    PGO_POSTGRESCLUSTER,
    PRESET_KINDS,
    STRIMZI_PODSET,
    TIDB_GROUPS,
)
from reconcile.model.references import DiscoverySettings, Reference
from reconcile.model.workload import Target, read_target, revise
from reconcile.policy.decision import Action, Decision, Observed
from reconcile.policy.evict import evicts
from reconcile.policy.patches import build_patch
from reconcile.policy.table import settle_listed

NOW = datetime(2026, 11, 21, 12, 0, tzinfo=UTC)
KEYS = Annotations()
REC = SourceRecord("secret", "db", "u1", "11", "*", "bbbb")
OBS = Observed("v1:new", (REC,), "")
WATCH = {"kube-rehash.io/watch": "true"}
TIME = "2026-11-21T12:00:00Z"


def obj(
    kind: Kind, spec: dict[str, Any], *, annotations: dict[str, str] | None = None, **meta: Any
) -> dict[str, Any]:
    return {
        "apiVersion": kind.api_version,
        "kind": kind.kind,
        "metadata": {
            "name": "db",
            "namespace": "data",
            "uid": "u-db",
            "generation": 3,
            "resourceVersion": "41",
            "annotations": {**WATCH, **(annotations or {})},
            **meta,
        },
        "spec": spec,
    }


def target_of(kind: Kind, spec: dict[str, Any], **meta: Any) -> Target:
    target = read_target(obj(kind, spec, **meta), kind, DiscoverySettings())
    return revise(target, bookkeeping=Bookkeeping("v1:old"))


def restart_ops(target: Target) -> list[dict[str, Any]]:
    """The ops of a rollout that are not our bookkeeping or its guards: what restarts the pods."""
    decision = Decision(
        Action.ROLLOUT, "r", config_hash="v1:new", previous="v1:old", observed=OBS, changed=("secret/db",)
    )
    ops = build_patch(target, decision, OBS, now=NOW, keys=KEYS)
    return [
        op
        for op in ops
        if op["op"] != "test"
        and not op["path"].startswith("/metadata/annotations/kube-rehash.io~1")
        and "change-cause" not in op["path"]
    ]


def recorded(target: Target) -> Any:
    decision = Decision(
        Action.ROLLOUT, "r", config_hash="v1:new", previous="v1:old", observed=OBS, changed=("secret/db",)
    )
    ops = build_patch(target, decision, OBS, now=NOW, keys=KEYS)
    rollouts = [op["value"] for op in ops if op["path"] == "/metadata/annotations/kube-rehash.io~1rollout"]
    return parse_rollout(rollouts[0]) if rollouts else None


def test_every_preset_is_watched_and_verified_by_evidence_it_can_read() -> None:
    assert {k.kind: (k.knob, k.verified_by) for k in PRESET_KINDS} == {
        "CloneSet": (Knob.HASH, Evidence.STATUS),
        "Cluster": (Knob.TIMESTAMP, Evidence.PODS),
        "Elasticsearch": (Knob.TIMESTAMP, Evidence.PODS),
        "StrimziPodSet": (Knob.ONE_SHOT, Evidence.PODS),
        "PostgresCluster": (Knob.HASH, Evidence.PODS),
        "PDGroup": (Knob.TIMESTAMP, Evidence.PODS),
        "TiKVGroup": (Knob.TIMESTAMP, Evidence.PODS),
        "TiDBGroup": (Knob.TIMESTAMP, Evidence.PODS),
        "TiFlashGroup": (Knob.TIMESTAMP, Evidence.PODS),
        "Service": (Knob.HASH, Evidence.STATUS_CHANGE),
    }
    assert all(k.watched for k in PRESET_KINDS)


def test_cloudnative_pg_gets_the_cnpg_restart_annotation_on_the_cluster_and_its_env_secrets_are_sources() -> (
    None
):
    spec = {
        "instances": 3,
        "env": [{"name": "X", "valueFrom": {"secretKeyRef": {"name": "db", "key": "pw"}}}],
    }
    target = target_of(CNPG_CLUSTER, spec)
    assert target.discovery.references == (Reference("secret", "db", frozenset({"pw"}), False),)
    assert restart_ops(target) == [
        {"op": "add", "path": "/metadata/annotations/kubectl.kubernetes.io~1restartedAt", "value": TIME}
    ]
    assert target.pod_selector == "cnpg.io/cluster=db"
    assert recorded(target).generation == 3  # a metadata write: a CR's generation stays


def test_eck_gets_a_new_restart_trigger_and_its_node_sets_pod_templates_are_scanned() -> None:
    spec = {
        "nodeSets": [
            {
                "name": "hot",
                "podTemplate": {
                    "spec": {"containers": [{"name": "es", "envFrom": [{"secretRef": {"name": "db"}}]}]}
                },
            }
        ]
    }
    target = target_of(ECK_ELASTICSEARCH, spec)
    assert target.discovery.references == (Reference("secret", "db", None, False),)
    assert restart_ops(target) == [
        {"op": "add", "path": "/metadata/annotations/eck.k8s.elastic.co~1restart-trigger", "value": TIME}
    ]
    assert target.pod_selector == "elasticsearch.k8s.elastic.co/cluster-name=db"


def test_a_strimzi_pod_set_owned_by_its_kafka_gets_the_one_shot_rolling_update_annotation() -> None:
    owner = [
        {
            "apiVersion": "kafka.strimzi.io/v1beta2",
            "kind": "Kafka",
            "name": "k",
            "uid": "u-k",
            "controller": True,
        }
    ]
    spec = {
        "selector": {"matchLabels": {"strimzi.io/cluster": "k", "strimzi.io/name": "k-kafka"}},
        "pods": [
            {
                "metadata": {"name": "k-kafka-0"},
                "spec": {"volumes": [{"name": "c", "secret": {"secretName": "db"}}]},
            }
        ],
    }
    target = target_of(STRIMZI_PODSET, spec, ownerReferences=owner)
    assert settle_listed(target.listed) is None  # its owner honours the annotation: not skipped
    assert target.discovery.references == (Reference("secret", "db", None, False),)
    assert restart_ops(target) == [
        {"op": "add", "path": "/metadata/annotations/strimzi.io~1manual-rolling-update", "value": "true"}
    ]
    assert target.pod_selector == "strimzi.io/cluster=k,strimzi.io/name=k-kafka"


def test_pgo_gets_the_hash_under_spec_metadata_annotations_created_when_absent() -> None:
    absent = target_of(PGO_POSTGRESCLUSTER, {"instances": [{"name": "i1"}]})
    assert restart_ops(absent) == [
        {
            "op": "add",
            "path": "/spec/metadata",
            "value": {"annotations": {"kube-rehash.io/config-hash": "v1:new"}},
        }
    ]
    present = target_of(PGO_POSTGRESCLUSTER, {"metadata": {"annotations": {"team": "a"}}})
    assert restart_ops(present) == [
        {"op": "add", "path": "/spec/metadata/annotations/kube-rehash.io~1config-hash", "value": "v1:new"}
    ]
    assert recorded(present).generation == 4  # a spec write: the generation moves


@pytest.mark.parametrize("group", TIDB_GROUPS, ids=lambda k: k.kind)
def test_tidb_operator_v2_groups_get_pingcaps_restarted_at_in_their_template(group: Kind) -> None:
    target = target_of(group, {"template": {"metadata": {"annotations": {}}, "spec": {}}})
    assert restart_ops(target) == [
        {"op": "add", "path": "/spec/template/metadata/annotations/pingcap.com~1restartedAt", "value": TIME}
    ]
    assert target.pod_selector == "pingcap.com/group=db"
    assert group.plural == group.kind.lower() + "s"


def test_a_knative_service_gets_the_hash_in_its_revision_template_and_records_the_newest_revision() -> None:
    spec = {
        "template": {
            "spec": {
                "containers": [
                    {
                        "image": "x",
                        "env": [{"name": "P", "valueFrom": {"secretKeyRef": {"name": "db", "key": "pw"}}}],
                    }
                ]
            }
        }
    }
    status = {"latestCreatedRevisionName": "db-00001", "observedGeneration": 3}
    target = read_target(
        {**obj(KNATIVE_SERVICE, spec), "status": status}, KNATIVE_SERVICE, DiscoverySettings()
    )
    target = revise(target, bookkeeping=Bookkeeping("v1:old"))
    assert target.discovery.references == (Reference("secret", "db", frozenset({"pw"}), False),)
    assert restart_ops(target) == [
        {
            "op": "add",
            "path": "/spec/template/metadata",
            "value": {"annotations": {"kube-rehash.io/config-hash": "v1:new"}},
        }
    ]
    assert recorded(target).before == "db-00001"


@pytest.mark.parametrize(
    ("strategy", "by_eviction"),
    [("ReCreate", False), (None, False), ("InPlaceIfPossible", True), ("InPlaceOnly", True)],
)
def test_a_cloneset_restarts_by_eviction_under_its_in_place_strategies(
    strategy: str | None, by_eviction: bool
) -> None:
    spec: dict[str, Any] = {
        "selector": {"matchLabels": {"app": "web"}},
        "template": {"metadata": {}, "spec": {"containers": []}},
    }
    if strategy is not None:
        spec["updateStrategy"] = {"type": strategy}
    target = target_of(CLONESET, spec)
    decision = Decision(Action.ROLLOUT, "r", config_hash="v1:new", previous="v1:old", observed=OBS)
    assert evicts(target, decision) is by_eviction
    assert target.pod_selector == "app=web"


def test_presets_are_off_by_default_and_named_in_the_kinds_setting() -> None:
    from reconcile.settings.table import Settings

    assert not set(PRESET_KINDS) & set(Settings().scope.kinds)
    from reconcile.config.settings import load_settings

    env = {"KUBE_REHASH_KINDS": "Deployment,Cluster,StrimziPodSet"}
    settings = load_settings(config_file=None, env=env, flags={})
    assert settings.scope.kinds[1:] == (CNPG_CLUSTER, STRIMZI_PODSET)


def test_explain_says_how_each_kind_restarts_and_what_verifies_its_restarts() -> None:
    from reconcile.cli.explain import Explanation

    cnpg = Explanation(target_of(CNPG_CLUSTER, {}), (), Decision(Action.IN_SYNC, "r")).to_json()
    assert cnpg["restart"] == {
        "by": "the time under kubectl.kubernetes.io/restartedAt in /metadata/annotations",
        "verified_by": "every pod of it created after the restart",
    }
    in_place = target_of(CLONESET, {"updateStrategy": {"type": "InPlaceIfPossible"}, "template": {}})
    text = Explanation(in_place, (), Decision(Action.IN_SYNC, "r")).render_text()
    assert "  restarts by:  eviction of its pods (pods/eviction)" in text
    assert (
        "  verified by:  its status (Deployment) and the change still in /spec/template/metadata/annotations"
        in text
    )
    knative = Explanation(target_of(KNATIVE_SERVICE, {}), (), Decision(Action.IN_SYNC, "r")).to_json()
    assert knative["restart"]["verified_by"] == "a new value of status.latestCreatedRevisionName"
