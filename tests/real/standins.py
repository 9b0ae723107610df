"""Stand-in controllers for operators whose real controllers cannot run here (docs/testing.md, "Operators'
resources: stand-in controllers", says why per operator): a thread each, reconciling one custom resource on
the real control plane the way its operator documents, with pods on kwok nodes, so that a restart shows as the
pods' creation times.

- `CloneSetStandIn`: OpenKruise's CloneSet (openkruise.io/docs/user-manuals/cloneset). It keeps
  `spec.replicas` pods from `spec.template`, each controlled by the CloneSet; a pod deleted (or evicted) is
  re-created from the current template; under `InPlaceIfPossible`/`InPlaceOnly` a change of the template's
  metadata only is applied to the running pods in place ("In-place update": only metadata and images are
  updated in place), under `ReCreate` the pods are re-created. Its status carries the replica counts.
- `OperatorStandIn`: an operator that copies a restart annotation of its resource to its pods and
  re-creates each pod whose copy differs (CloudNativePG's `kubectl.kubernetes.io/restartedAt`, ECK's
  restart trigger, TiDB's `pingcap.com/restartedAt` all work this way).
- `PresetStandIn`: the operator of a preset kind (model/presets.py), on a CRD made from the preset's entry
  (`preset_crd`; `SOURCES` names the documented API each follows), honouring the preset's knob where its
  operator documents it.
"""

from __future__ import annotations

import secrets
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import yaml

from reconcile.model.kinds import Kind
from reconcile.model.knobs import Evidence, Knob
from reconcile.model.pointer import resolve
from tests.cluster.controlplane import ControlPlane
from tests.real.conftest import PREFIX, wait_until

DATA = Path(__file__).resolve().parents[1] / "data" / "operators"
IN_PLACE = ("InPlaceIfPossible", "InPlaceOnly")


def install_crd(cp: ControlPlane, file: str | dict[str, Any]) -> None:
    """A CRD (from tests/data/operators, or as given), established (idempotent on the shared control
    plane)."""
    crd = yaml.safe_load((DATA / file).read_text()) if isinstance(file, str) else file
    status, _ = cp.request("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd)
    assert status in (201, 409), status
    path = f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{crd['metadata']['name']}"

    def established() -> bool:
        conditions = (cp.api("GET", path).get("status") or {}).get("conditions") or []
        return any(c.get("type") == "Established" and c.get("status") == "True" for c in conditions)

    wait_until(f"the CRD {crd['metadata']['name']} to be established", established, 60)


class StandIn:
    """A reconcile loop for one resource, every 0.2 s, until stopped."""

    def __init__(self, cp: ControlPlane, path: str, pods_path: str) -> None:
        self.cp, self.path, self.pods_path = cp, path, pods_path
        self.stop = threading.Event()
        self.errors: list[str] = []
        self.thread = threading.Thread(target=self.loop, daemon=True)

    def loop(self) -> None:
        while not self.stop.is_set():
            try:
                status, obj = self.cp.request("GET", self.path)
                if status == 200:
                    self.reconcile(obj)
            except Exception as exc:  # a stand-in reports, the test asserts
                self.errors.append(repr(exc))
            self.stop.wait(0.2)

    def reconcile(self, obj: dict[str, Any]) -> None:
        raise NotImplementedError

    def pods(self, obj: dict[str, Any]) -> list[dict[str, Any]]:
        """Its pods that are not terminating (controlled by `obj`)."""
        uid = obj["metadata"]["uid"]
        items = self.cp.api("GET", self.pods_path)["items"]
        return [
            p
            for p in items
            if not p["metadata"].get("deletionTimestamp")
            and any(r.get("uid") == uid for r in p["metadata"].get("ownerReferences", []))
        ]

    def create_pod(self, obj: dict[str, Any], template: dict[str, Any]) -> None:
        meta = template.get("metadata") or {}
        name = obj["metadata"]["name"]
        owner = {
            "apiVersion": obj["apiVersion"],
            "kind": obj["kind"],
            "name": name,
            "uid": obj["metadata"]["uid"],
            "controller": True,
        }
        pod = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": f"{name}-{secrets.token_hex(3)}",
                "labels": dict(meta.get("labels") or {}),
                "annotations": dict(meta.get("annotations") or {}),
                "ownerReferences": [owner],
            },
            "spec": template["spec"],
        }
        self.cp.api("POST", self.pods_path, pod)


class CloneSetStandIn(StandIn):
    def reconcile(self, obj: dict[str, Any]) -> None:
        spec = obj["spec"]
        template = spec["template"]
        want = (template.get("metadata") or {}).get("annotations") or {}
        in_place = (spec.get("updateStrategy") or {}).get("type") in IN_PLACE
        pods = self.pods(obj)
        for pod in pods:
            if (pod["metadata"].get("annotations") or {}) == want:
                continue
            if in_place:  # metadata only: updated on the running pod, which is not re-created
                body = {
                    "metadata": {
                        "annotations": {**dict.fromkeys(pod["metadata"].get("annotations") or {}), **want}
                    }
                }
                path = f"{self.pods_path}/{pod['metadata']['name']}"
                self.cp.request("PATCH", path, body, content_type="application/merge-patch+json")
            else:
                self.cp.request("DELETE", f"{self.pods_path}/{pod['metadata']['name']}")
        for _ in range(spec.get("replicas", 1) - len(pods)):
            self.create_pod(obj, template)
        count = len(self.pods(obj))
        status = {
            "observedGeneration": obj["metadata"]["generation"],
            **dict.fromkeys(("replicas", "updatedReplicas", "readyReplicas", "availableReplicas"), count),
        }
        if obj.get("status") != status:
            self.cp.request("PUT", f"{self.path}/status", {**obj, "status": status})  # a 409: next loop


class OperatorStandIn(StandIn):
    def __init__(self, cp: ControlPlane, path: str, pods_path: str, *, key: str, replicas: int = 2) -> None:
        super().__init__(cp, path, pods_path)
        self.key, self.replicas = key, replicas

    def reconcile(self, obj: dict[str, Any]) -> None:
        stamp = (obj["metadata"].get("annotations") or {}).get(self.key, "")
        labels = {"app": obj["metadata"]["name"]}
        template = {
            "metadata": {"labels": labels, "annotations": {self.key: stamp}},
            "spec": {"containers": [{"name": "server", "image": "registry.invalid/store:1"}]},
        }
        pods = self.pods(obj)
        for pod in pods:
            if (pod["metadata"].get("annotations") or {}).get(self.key, "") != stamp:
                self.cp.request("DELETE", f"{self.pods_path}/{pod['metadata']['name']}")
        for _ in range(self.replicas - len(pods)):
            self.create_pod(obj, template)


@contextmanager
def running(stand_in: StandIn) -> Iterator[StandIn]:
    stand_in.thread.start()
    try:
        yield stand_in
    finally:
        stand_in.stop.set()
        stand_in.thread.join(timeout=10)
    assert stand_in.errors == [], stand_in.errors[:3]


def settle(seconds: float = 1.0) -> None:
    """Let a stand-in's loop run a few times."""
    time.sleep(seconds)


# --- the preset kinds' operators --------------------------------------------------------------------------

SOURCES = {
    "Cluster": "cloudnative-pg docs/src/rolling_update.md; `kubectl cnpg restart`",
    "Elasticsearch": "ECK v3.5.0 pkg/apis/elasticsearch/v1 (RestartTriggerAnnotation)",
    "StrimziPodSet": "strimzi.io docs, 'Manually starting rolling updates of Kafka and other operands'",
    "PostgresCluster": "Crunchy PGO v5 docs, 'Administrative Tasks: Manually Restarting PostgreSQL'",
    "TiKVGroup": "tidb-operator v2 api/core/v1alpha1 (groups, pingcap.com/group)",
    "Service": "knative.dev/serving v1 API (Service, status.latestCreatedRevisionName)",
}
"""Where each operator documents the API its stand-in CRD and controller follow."""


def preset_crd(kind: Kind) -> dict[str, Any]:
    """A CRD for a preset kind's resource (`SOURCES` names the documented API it follows): its group,
    version, plural and kind, a status subresource, and fields kept as given."""
    loose = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{kind.plural}.{kind.group}", "annotations": {"source": SOURCES[kind.kind]}},
        "spec": {
            "group": kind.group,
            "scope": "Namespaced",
            "names": {"plural": kind.plural, "singular": kind.kind.lower(), "kind": kind.kind},
            "versions": [
                {
                    "name": kind.version,
                    "served": True,
                    "storage": True,
                    "subresources": {"status": {}},
                    "schema": {
                        "openAPIV3Schema": {"type": "object", "properties": {"spec": loose, "status": loose}}
                    },
                }
            ],
        },
    }


class PresetStandIn(StandIn):
    """A preset kind's operator as it documents its knob: it keeps two pods labelled as the preset selects
    them, controlled by the resource, each carrying the knob's value it started with; a new value (a time,
    a hash) re-creates them; a one-shot value re-creates them and is removed. A kind with a `Ready`
    condition gets one; a Knative Service gets a new Revision name per template change."""

    def __init__(self, cp: ControlPlane, kind: Kind, path: str, pods_path: str) -> None:
        super().__init__(cp, path, pods_path)
        self.kind = kind
        self.revisions = 0
        self.seen: str | None = None

    def knob(self, obj: dict[str, Any]) -> str:
        annotations = resolve(obj, self.kind.annotations_pointer) or {}
        return str(annotations.get(self.kind.knob_key or f"{PREFIX}/config-hash", ""))

    def reconcile(self, obj: dict[str, Any]) -> None:
        kind, name = self.kind, obj["metadata"]["name"]
        value = self.knob(obj)
        if kind.knob is Knob.ONE_SHOT and value == kind.knob_value:
            for pod in self.pods(obj):
                self.cp.request("DELETE", f"{self.pods_path}/{pod['metadata']['name']}")
            body = {"metadata": {"annotations": {kind.knob_key: None}}}
            self.cp.request("PATCH", self.path, body, content_type="application/merge-patch+json")
            return
        pods = self.pods(obj)
        for pod in pods:
            if pod["metadata"]["annotations"].get("stand-in/knob") != value:
                self.cp.request("DELETE", f"{self.pods_path}/{pod['metadata']['name']}")
        assert kind.pod_selection is not None or kind.verified_by is Evidence.STATUS_CHANGE
        selector = (
            kind.pod_selection.selector_of(obj, name)
            if kind.pod_selection
            else f"serving.knative.dev/service={name}"
        )
        labels = dict(pair.split("=", 1) for pair in (selector or "").split(","))
        template = {
            "metadata": {"labels": labels, "annotations": {"stand-in/knob": value}},
            "spec": {"containers": [{"name": "server", "image": "registry.invalid/operand:1"}]},
        }
        for _ in range(2 - len(pods)):
            self.create_pod(obj, template)
        if value != self.seen:
            self.seen, self.revisions = value, self.revisions + 1
        self.write_status(obj, name)

    def write_status(self, obj: dict[str, Any], name: str) -> None:
        if self.kind.health is None:
            return
        status: dict[str, Any] = {
            "observedGeneration": obj["metadata"]["generation"],
            "conditions": [{"type": "Ready", "status": "True"}],
        }
        if self.kind.verified_by is Evidence.STATUS_CHANGE:
            status["latestCreatedRevisionName"] = f"{name}-{self.revisions:05d}"
        if obj.get("status") != status:
            self.cp.request("PUT", f"{self.path}/status", {**obj, "status": status})
