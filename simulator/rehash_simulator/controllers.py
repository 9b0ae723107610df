"""A rollout controller for the simulator: what kube-controller-manager does to the workloads we read.

Why: without it nothing ever finishes a rollout in the simulator, and nothing else writes the workloads
kube-rehash writes, so the costs a real cluster shows after a change (the generation moving twice per
Deployment rollout, status reads until the rollout completes, the record update) never appear in
`make bench`. Opt-in (`Simulator(rollout_seconds=...)`, `python -m rehash_simulator --rollout-seconds N`):
every other use of the simulator keeps a cluster in which rollouts never finish, as with a stuck image pull.

What it writes, and only that (checked against kube-apiserver 1.37's controllers in tests/conformance):
- a Deployment whose pod template changed (or that was created): at once the revision annotation
  `deployment.kubernetes.io/revision` (previous + 1), written as kube-controller-manager does through the
  status subresource, so the generation stays (tests/simulator/test_rollout_controller.py compares the
  sequence with the real server's), with a status that has observed it and updated no replica yet;
  `seconds` later a complete status (every replica updated, ready and available; `NewReplicaSetAvailable`);
- a StatefulSet: `updateRevision` moved and nothing updated yet, then `currentRevision` = `updateRevision`
  and every replica updated and ready;
- a DaemonSet: nothing updated yet, then every scheduled pod updated and available.
"""

from __future__ import annotations

import heapq
import json
import threading
import time
from typing import Any

from .errors import ApiError
from .objects import Obj
from .resources import ResourceType
from .store import Store

REVISION = "deployment.kubernetes.io/revision"
KINDS = ("deployments", "statefulsets", "daemonsets")
# A rollout starts this long after its template changed: a real controller reacts within milliseconds.
REACTION = 0.05
# A DaemonSet's status as its controller writes it for one scheduled pod (every field the API requires:
# typed clients refuse a status without currentNumberScheduled or numberMisscheduled).
DAEMONSET_SCHEDULED = {
    "currentNumberScheduled": 1,
    "desiredNumberScheduled": 1,
    "numberMisscheduled": 0,
    "numberReady": 1,
    "numberAvailable": 1,
}


class RolloutController:
    """Watches the store's writes of workloads; starts and, `seconds` later, finishes their rollouts."""

    def __init__(self, store: Store, seconds: float) -> None:
        self.store = store
        self.seconds = max(0.0, seconds)
        self._due: list[
            tuple[float, int, str, str | None, str, str]
        ] = []  # (when, seq, step, ns, name, kind)
        self._seq = 0
        self._wake = threading.Condition()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True, name="rehash-sim-rollouts")
        store.observe(self._written)

    def start(self) -> RolloutController:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        with self._wake:
            self._wake.notify()

    def _written(self, rtype: ResourceType, old: Obj | None, new: Obj) -> None:
        """Called by the store under its lock after each write: only notes what to do."""
        if rtype.plural not in KINDS:
            return
        before = (old or {}).get("spec", {}).get("template")
        if old is not None and before == new.get("spec", {}).get("template"):
            return
        meta = new["metadata"]
        self._schedule(REACTION, "start", meta.get("namespace"), meta["name"], rtype.plural)

    def _schedule(self, delay: float, step: str, ns: str | None, name: str, kind: str) -> None:
        with self._wake:
            self._seq += 1
            heapq.heappush(self._due, (time.monotonic() + delay, self._seq, step, ns, name, kind))
            self._wake.notify()

    def _run(self) -> None:
        while not self._stop.is_set():
            with self._wake:
                while not self._stop.is_set() and (not self._due or self._due[0][0] > time.monotonic()):
                    self._wake.wait(None if not self._due else max(0.0, self._due[0][0] - time.monotonic()))
                if self._stop.is_set():
                    return
                _, _, step, ns, name, kind = heapq.heappop(self._due)
            try:
                if step == "start":
                    self.store.mutate(kind, ns, name, start_rollout, subresource=True)
                    self._schedule(self.seconds, "finish", ns, name, kind)
                else:
                    self.store.mutate(kind, ns, name, finish_rollout, subresource=True)
            except ApiError:  # the workload was deleted meanwhile: nothing to roll
                continue


def _desired(obj: Obj) -> int:
    replicas = obj.get("spec", {}).get("replicas", 1)
    return replicas if isinstance(replicas, int) and replicas >= 0 else 1


def _template_id(obj: Obj) -> str:
    template = json.dumps(obj.get("spec", {}).get("template"), sort_keys=True)
    return f"{obj['metadata']['name']}-{abs(hash(template)) % 10**10:010d}"


def start_rollout(obj: Obj) -> None:
    """The controller saw a new template: a Deployment's revision moves (and with it its generation, which
    the store bumps as kube-apiserver does); the status observes it, with nothing updated yet."""
    meta = obj["metadata"]
    kind = obj.get("kind")
    status: dict[str, Any] = dict(obj.get("status") or {})
    desired = _desired(obj)
    if kind == "Deployment":
        annotations = meta.setdefault("annotations", {})
        previous = annotations.get(REVISION, "0")
        annotations[REVISION] = str(int(previous) + 1 if str(previous).isdigit() else 1)
        generation = int(meta.get("generation", 1))
        status.update(replicas=desired, updatedReplicas=0, readyReplicas=desired, availableReplicas=desired)
        status["conditions"] = [_condition("Progressing", "ReplicaSetUpdated")]
    elif kind == "StatefulSet":
        generation = int(meta.get("generation", 1))
        status.setdefault("currentRevision", status.get("updateRevision", _template_id(obj)))
        status.update(replicas=desired, updatedReplicas=0, updateRevision=_template_id(obj))
        status.setdefault("readyReplicas", desired)
    else:
        generation = int(meta.get("generation", 1))
        status.update(DAEMONSET_SCHEDULED, updatedNumberScheduled=0)
    status["observedGeneration"] = generation
    obj["status"] = status


def finish_rollout(obj: Obj) -> None:
    """Every replica runs the current template."""
    meta = obj["metadata"]
    kind = obj.get("kind")
    status: dict[str, Any] = dict(obj.get("status") or {})
    desired = _desired(obj)
    status["observedGeneration"] = int(meta.get("generation", 1))
    if kind == "Deployment":
        status.update(
            replicas=desired, updatedReplicas=desired, readyReplicas=desired, availableReplicas=desired
        )
        status["conditions"] = [_condition("Progressing", "NewReplicaSetAvailable")]
    elif kind == "StatefulSet":
        status.update(
            replicas=desired, updatedReplicas=desired, readyReplicas=desired, currentReplicas=desired
        )
        status["currentRevision"] = status.get("updateRevision", _template_id(obj))
    else:
        status.update(DAEMONSET_SCHEDULED, updatedNumberScheduled=1)
    obj["status"] = status


def _condition(kind: str, reason: str) -> dict[str, str]:
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    return {
        "type": kind,
        "status": "True",
        "reason": reason,
        "lastUpdateTime": stamp,
        "lastTransitionTime": stamp,
    }
