"""Restarts that are verified, and operators' resources, on the real control plane: a patch is not a restart
until the pods say so.

- A Deployment whose pods do not restart after the patch (paused: it stands in for an owner that reverts or
  ignores the change) is reported not effective within its deadline, is never patched again, and with
  `on-ineffective: evict` gets new pods by eviction.
- A custom resource that names a Secret's key in its own spec restarts its operator's pods once when that
  key changes, and not for another key of the Secret.
- The CloneSet preset under `InPlaceIfPossible` (whose template metadata change OpenKruise applies in place)
  restarts its pods by eviction.
- Each other preset writes its operator's knob, its stand-in operator re-creates the pods once, and the next
  pass finds the restart complete by the preset's own evidence.

Why real: the Deployment controller (paused), the Eviction API, the pods' creation times and the audit log
are the real server's; the operators are stand-ins (tests/real/standins.py) that behave as their
documentation says, since their controllers cannot be built here (docs/testing.md, "Operators' resources:
stand-in controllers").
"""

from __future__ import annotations

import time
from datetime import datetime
from typing import Any

import pytest

from reconcile.model.presets import PRESET_KINDS
from tests.real.conftest import PREFIX, Kube, configmap, pod_spec, secret, wait_until, workload
from tests.real.standins import (
    CloneSetStandIn,
    OperatorStandIn,
    PresetStandIn,
    install_crd,
    preset_crd,
    running,
    settle,
)

DEADLINE = "2s"


def created(pod: dict[str, Any]) -> datetime:
    return datetime.fromisoformat(pod["metadata"]["creationTimestamp"].replace("Z", "+00:00"))


def pods_of(kube: Kube, app: str) -> list[dict[str, Any]]:
    items = kube.get(f"/api/v1/namespaces/{{ns}}/pods?labelSelector=app%3D{app}")["items"]
    return [p for p in items if not p["metadata"].get("deletionTimestamp")]


def uids(kube: Kube, app: str) -> set[str]:
    return {p["metadata"]["uid"] for p in pods_of(kube, app)}


def settled_uids(kube: Kube, app: str, replicas: int = 2, timeout: float = 30) -> set[str]:
    """The pods' uids once the stand-in has left them alone for two seconds: what kube-rehash wrote is
    checked in the audit log (one restart write); this keeps a stand-in's own catch-up out of the count."""
    deadline = time.monotonic() + timeout
    while True:
        before = uids(kube, app)
        time.sleep(2)
        after = uids(kube, app)
        if (before == after and len(after) == replicas) or time.monotonic() > deadline:
            return after


def events(kube: Kube, reason: str) -> list[dict[str, Any]]:
    return list(kube.get(f"/api/v1/namespaces/{{ns}}/events?fieldSelector=reason%3D{reason}")["items"])


def writes_to(kube: Kube, since: int, resource: str) -> list[str]:
    return [e.verb for e in kube.cp.audit(since=since, user="admin") if e.resource == resource and e.is_write]


def test_a_paused_deployment_is_not_effective_by_its_deadline_never_patched_again_then_evicted(
    kube: Kube,
) -> None:
    config = kube.tmp / "config.yaml"
    config.write_text(f"rolloutDeadline: {DEADLINE}\n")
    kube.apply(
        configmap("web-config", {"mode": "blue"}),
        workload("Deployment", "web", pod_spec(configmaps=("web-config",))),
    )
    kube.wait_settled("Deployment", "web")
    assert kube.rehash("--config", str(config)).actions() == {"Deployment/web": "adopt"}
    kube.patch("Deployment", "web", {"spec": {"paused": True}})
    old = uids(kube, "web")

    kube.apply(configmap("web-config", {"mode": "green"}))
    assert kube.rehash("--config", str(config)).actions() == {"Deployment/web": "rollout"}
    settle(2.5)
    verdict = kube.rehash("--config", str(config))
    row = verdict.row("Deployment", "web")
    assert (row["action"], row["rollout_status"]) == ("in-sync", "not-effective"), verdict.stdout
    assert verdict.report["summary"]["not-effective"] == 1
    (event,) = events(kube, "RestartNotEffective")
    assert event["type"] == "Warning" and "configmap/web-config" in event["message"]
    assert "it is paused" in event["message"], event["message"]

    mark = kube.cp.audit_mark()
    again = kube.rehash("--config", str(config))
    assert again.row("Deployment", "web")["rollout_status"] == "not-effective"
    assert writes_to(kube, mark, "deployments") == []  # not patched again, nor its record
    assert len(events(kube, "RestartNotEffective")) == 1 and uids(kube, "web") == old

    kube.patch("Deployment", "web", {"metadata": {"annotations": {f"{PREFIX}/on-ineffective": "evict"}}})
    rows = []
    for _ in range(5):
        rows.append(kube.rehash("--config", str(config)).row("Deployment", "web"))
        if rows[-1]["action"] != "rollout":
            break
        wait_until("the evicted pod replaced", lambda: len(pods_of(kube, "web")) == 2, 60)
    assert [r["action"] for r in rows] == ["rollout", "rollout", "in-sync"], rows
    assert "restart recorded complete" in rows[-1]["reason"]
    assert not uids(kube, "web") & old  # every pod new, from the paused template: no new ReplicaSet
    assert len(kube.replicasets("web")) == 1
    after = kube.rehash("--config", str(config)).row(
        "Deployment", "web"
    )  # the annotation moved its generation
    assert (after["action"], after.get("rollout_status")) == ("refresh", None)
    steady = kube.rehash("--config", str(config)).row("Deployment", "web")
    assert (steady["action"], steady.get("rollout_status")) == ("in-sync", None)


STORE_KIND = """
customKinds:
  - kind: ObjectStore
    group: example.kube-rehash.io
    version: v1
    resource: objectstores
    annotations: /metadata/annotations
    references:
      - secret: spec.s3.secretRef.name
        keyField: key
    restart: {mode: timestamp, key: example.io/restartedAt}
    pods: {labels: "app={name}", owned: true}
rolloutDeadline: 30s
"""


def test_a_resource_that_names_a_secrets_key_restarts_its_operators_pods_once_for_that_key_only(
    kube: Kube,
) -> None:
    install_crd(kube.cp, "objectstores.yaml")
    config = kube.tmp / "config.yaml"
    config.write_text(STORE_KIND)
    kube.apply(secret("s3", {"accesskey": "a1", "region": "eu-1"}))
    store = {
        "apiVersion": "example.kube-rehash.io/v1",
        "kind": "ObjectStore",
        "metadata": {"name": "store", "annotations": {f"{PREFIX}/watch": "true"}},
        "spec": {"s3": {"bucket": "b", "secretRef": {"name": "s3", "key": "accesskey"}}},
    }
    kube.apply(store)
    path = f"/apis/example.kube-rehash.io/v1/namespaces/{kube.ns}/objectstores/store"
    with running(
        OperatorStandIn(kube.cp, path, f"/api/v1/namespaces/{kube.ns}/pods", key="example.io/restartedAt")
    ):
        wait_until("the operator's two pods", lambda: len(pods_of(kube, "store")) == 2, 30)
        first = kube.rehash("--config", str(config))
        assert first.actions() == {"ObjectStore/store": "adopt"}
        assert first.row("ObjectStore", "store")["configs"] == ["secret/s3"]
        old = uids(kube, "store")

        kube.apply(secret("s3", {"accesskey": "a1", "region": "eu-2"}))  # another key of the Secret
        other = kube.rehash("--config", str(config))  # its records updated, nothing restarted
        assert other.actions() == {"ObjectStore/store": "refresh"}, other.stdout
        settle()
        assert uids(kube, "store") == old

        mark = kube.cp.audit_mark()
        kube.apply(secret("s3", {"accesskey": "a2", "region": "eu-2"}))  # the key the resource names
        rolled = kube.rehash("--config", str(config))
        assert rolled.actions() == {"ObjectStore/store": "rollout"}
        assert "secret/s3 changed" in rolled.row("ObjectStore", "store")["reason"]
        wait_until(
            "the operator's pods re-created",
            lambda: len(pods_of(kube, "store")) == 2 and not uids(kube, "store") & old,
            30,
        )
        new = settled_uids(kube, "store")  # a stand-in's own catch-up after a stale read left out
        checked = kube.rehash("--config", str(config)).row("ObjectStore", "store")
        assert (checked["action"], checked["rollout_status"]) == ("in-sync", "complete")
        steady = kube.rehash("--config", str(config)).row("ObjectStore", "store")
        assert (steady["action"], steady.get("rollout_status")) == ("in-sync", None)
        settle()
        assert uids(kube, "store") == new  # restarted once
    patches = [
        e
        for e in kube.cp.audit(since=mark, user="admin")
        if e.resource == "objectstores" and e.verb == "patch"
    ]
    assert len(patches) == 2  # the restart, then its record moved to complete


def test_the_cloneset_preset_restarts_its_pods_by_eviction_under_in_place_if_possible(kube: Kube) -> None:
    install_crd(kube.cp, "clonesets.yaml")
    config = kube.tmp / "config.yaml"
    config.write_text("kinds: [CloneSet]\n")
    kube.apply(configmap("app", {"v": "1"}))
    body = workload("Deployment", "clones", pod_spec(configmaps=("app",)), replicas=2)
    body.update(apiVersion="apps.kruise.io/v1alpha1", kind="CloneSet")
    body["spec"]["updateStrategy"] = {"type": "InPlaceIfPossible", "maxUnavailable": 2}
    body["spec"].pop("strategy")
    kube.apply(body)
    path = f"/apis/apps.kruise.io/v1alpha1/namespaces/{kube.ns}/clonesets/clones"
    with running(CloneSetStandIn(kube.cp, path, f"/api/v1/namespaces/{kube.ns}/pods")):
        wait_until("the CloneSet's two pods", lambda: len(pods_of(kube, "clones")) == 2, 30)
        assert kube.rehash("--config", str(config)).actions() == {"CloneSet/clones": "adopt"}
        old = uids(kube, "clones")
        kube.apply(configmap("app", {"v": "2"}))
        mark = kube.cp.audit_mark()
        rolled = kube.rehash("--config", str(config)).row("CloneSet", "clones")
        assert rolled["action"] == "rollout" and "evicted" in rolled["reason"], rolled
        wait_until(
            "the evicted pods re-created",
            lambda: len(pods_of(kube, "clones")) == 2 and not uids(kube, "clones") & old,
            30,
        )
        done = kube.rehash("--config", str(config)).row("CloneSet", "clones")
        assert done["action"] == "in-sync" and "pods restarted by eviction" in done["reason"], done
        template = kube.get(path)["spec"]["template"]
        assert f"{PREFIX}/config-hash" not in (template["metadata"].get("annotations") or {})  # never patched
    ours = kube.cp.audit(since=mark, user="admin")
    evicted = sorted(e.name for e in ours if e.uri.split("?")[0].endswith("/eviction"))
    assert len(evicted) == 2 and not [e for e in ours if e.resource == "pods" and e.verb == "delete"]


ENV = [{"name": "PASSWORD", "valueFrom": {"secretKeyRef": {"name": "creds", "key": "password"}}}]
CONTAINER = {"name": "server", "image": "registry.invalid/operand:1", "env": ENV}
PRESET_SPECS: dict[str, dict[str, Any]] = {
    "Cluster": {"instances": 2, "env": ENV},
    "Elasticsearch": {
        "nodeSets": [{"name": "default", "count": 2, "podTemplate": {"spec": {"containers": [CONTAINER]}}}]
    },
    "StrimziPodSet": {
        "selector": {"matchLabels": {"strimzi.io/cluster": "db", "strimzi.io/name": "db-kafka"}},
        "pods": [{"metadata": {"name": "db-kafka-0"}, "spec": {"containers": [CONTAINER]}}],
    },
    "PostgresCluster": {"instances": [{"name": "i1", "replicas": 2}]},
    "TiKVGroup": {"replicas": 2, "template": {"metadata": {"annotations": {}}, "spec": {}}},
    "Service": {"template": {"spec": {"containers": [CONTAINER]}}},
}
"""Each preset's resource, naming the Secret `creds` where its spec can (the others by annotation)."""


@pytest.mark.parametrize("name", sorted(PRESET_SPECS))
def test_each_preset_restarts_its_operators_pods_once_by_its_knob_and_verifies_it(
    kube: Kube, name: str
) -> None:
    kind = next(k for k in PRESET_KINDS if k.kind == name)
    install_crd(kube.cp, preset_crd(kind))
    config = kube.tmp / "config.yaml"
    config.write_text(f"kinds: [{name}]\nrolloutDeadline: 30s\n")
    kube.apply(secret("creds", {"password": "p1"}), configmap("kafka", {"kind": "Kafka"}))
    annotations = {f"{PREFIX}/watch": "true"}
    if not (kind.spec_references or kind.pod_specs or kind.template):
        annotations[f"{PREFIX}/secrets"] = "creds"  # its spec names no Secret: named by annotation
    meta: dict[str, Any] = {"name": "db", "annotations": annotations}
    if kind.owner_honours_knob:  # owned by its operator's resource (a StrimziPodSet by its Kafka)
        uid = kube.obj("ConfigMap", "kafka")["metadata"]["uid"]
        meta["ownerReferences"] = [
            {"apiVersion": "v1", "kind": "ConfigMap", "name": "kafka", "uid": uid, "controller": True}
        ]
    kube.apply({"apiVersion": kind.api_version, "kind": name, "metadata": meta, "spec": PRESET_SPECS[name]})
    path = f"{kind.prefix}/namespaces/{kube.ns}/{kind.plural}/db"
    pods_path = f"/api/v1/namespaces/{kube.ns}/pods"
    with running(PresetStandIn(kube.cp, kind, path, pods_path)) as stand_in:

        def live() -> set[str]:
            return {p["metadata"]["uid"] for p in stand_in.pods(kube.get(path))}

        wait_until("the operator's two pods", lambda: len(live()) == 2, 30)
        first = kube.rehash("--config", str(config))
        assert first.actions() == {f"{name}/db": "adopt"}, first.stdout
        assert first.row(name, "db")["configs"] == ["secret/creds"]
        old = live()
        kube.apply(secret("creds", {"password": "p2"}))
        rolled = kube.rehash("--config", str(config))
        assert rolled.actions() == {f"{name}/db": "rollout"}, rolled.stdout
        wait_until("the operator's pods re-created", lambda: len(live()) == 2 and not live() & old, 30)
        new = live()
        checked = kube.rehash("--config", str(config)).row(name, "db")
        assert (checked["action"], checked["rollout_status"]) == ("in-sync", "complete"), checked
        steady = kube.rehash("--config", str(config)).row(name, "db")
        assert (steady["action"], steady.get("rollout_status")) == ("in-sync", None), steady
        settle()
        assert live() == new  # restarted once
