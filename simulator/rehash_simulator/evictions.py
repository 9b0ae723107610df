"""The `pods/{name}/eviction` subresource (policy/v1 Eviction), with PodDisruptionBudget refusals.

Why: kube-rehash restarts the pods of a workload with `restart: evict` through this subresource, and a
PodDisruptionBudget's refusal is the answer it must respect. What kube-apiserver 1.37 does
(pkg/registry/core/pod/storage/eviction.go), and so this module:
- a pod that does not exist: 404 (`pods "x" not found`); an Eviction naming another pod: 400;
- a pod already terminating, or not running (Pending, Succeeded, Failed; a pod created over HTTP has no
  status, so it is Pending): deleted without asking any budget;
- more than one budget selecting the pod: 500; none: the pod is deleted, 201 with a Success Status;
- one budget: refused with 429 TooManyRequests (`Cannot evict pod as it would violate the pod's
  disruption budget.`, one cause of reason `DisruptionBudget` naming the budget) when it allows no
  disruption; else the pod is deleted and 201.
The real server reads `status.disruptionsAllowed`, which kube-controller-manager's disruption controller
keeps; the simulator runs no controller, so it works the number out at eviction time from the pods the
budget selects (healthy: phase Running and condition Ready true), the scale of their ReplicaSets or
StatefulSets, and its `minAvailable` or `maxUnavailable` (integers, or percentages rounded up as the
controller does).
"""

from __future__ import annotations

import json
import math
from typing import Any

from .errors import ApiError
from .selectors import label_predicate
from .store import Store


def evict(store: Store, namespace: str, name: str, body: dict[str, Any], *, dry_run: bool) -> bytes:
    """Evict one pod as kube-apiserver does; returns the 201 Success Status body (raises ApiError)."""
    named = (body.get("metadata") or {}).get("name") if isinstance(body.get("metadata"), dict) else None
    if named and named != name:
        raise ApiError(400, "name in URL does not match name in Eviction object", reason="BadRequest")
    pod = store.get("pods", namespace, name)
    status = pod.get("status") or {}
    terminating = bool(pod["metadata"].get("deletionTimestamp"))
    if not terminating and status.get("phase") == "Running":  # kube-apiserver's canIgnorePDB
        budgets = [b for b in store.list("poddisruptionbudgets", namespace) if selects(b, pod)]
        if len(budgets) > 1:
            raise ApiError(
                500,
                "This pod has more than one PodDisruptionBudget, "
                "which the eviction subresource does not support.",
                reason="InternalError",
            )
        if budgets:
            refuse_if_over(store, budgets[0], namespace)
    store.delete("pods", namespace, name, dry_run=dry_run)
    done = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201}
    return json.dumps(done, separators=(",", ":")).encode()


def selector_text(selector: Any) -> str | None:
    """A budget's `matchLabels` as a label selector (None: a selector the simulator does not evaluate)."""
    if not isinstance(selector, dict) or selector.get("matchExpressions"):
        return None
    labels = selector.get("matchLabels") or {}
    return ",".join(f"{k}={v}" for k, v in sorted(labels.items()))


def selects(budget: dict[str, Any], pod: dict[str, Any]) -> bool:
    text = selector_text((budget.get("spec") or {}).get("selector"))
    if text is None:
        return False
    if text == "":  # an empty selector selects every pod of the namespace (policy/v1)
        return True
    return label_predicate(text)(pod)


def healthy(pod: dict[str, Any]) -> bool:
    status = pod.get("status") or {}
    ready = any(
        c.get("type") == "Ready" and c.get("status") == "True" for c in status.get("conditions") or ()
    )
    return status.get("phase") == "Running" and ready and not pod["metadata"].get("deletionTimestamp")


def refuse_if_over(store: Store, budget: dict[str, Any], namespace: str) -> None:
    """429 when evicting one more pod the budget selects would leave fewer healthy pods than it wants."""
    spec = budget.get("spec") or {}
    pods = [p for p in store.list("pods", namespace) if selects(budget, p)]
    current = sum(1 for p in pods if healthy(p))
    expected = expected_pods(store, namespace, pods)
    if "minAvailable" in spec:
        desired = scaled(spec["minAvailable"], expected)
    else:
        desired = max(0, expected - scaled(spec.get("maxUnavailable", 0), expected))
    if current - desired > 0:
        return
    name = budget["metadata"]["name"]
    raise ApiError(
        429,
        "Cannot evict pod as it would violate the pod's disruption budget.",
        reason="TooManyRequests",
        details={
            "causes": [
                {
                    "reason": "DisruptionBudget",
                    "message": f"The disruption budget {name} needs {desired} healthy pods "
                    f"and has {current} currently",
                }
            ]
        },
    )


def expected_pods(store: Store, namespace: str, pods: list[dict[str, Any]]) -> int:
    """How many pods the budget expects: the `spec.replicas` of each ReplicaSet or StatefulSet controlling
    some of them (the disruption controller reads its controller's scale), plus the pods of no such owner."""
    scale = {
        o["metadata"]["uid"]: o.get("spec", {}).get("replicas", 1)
        for plural in ("replicasets", "statefulsets")
        for o in store.list(plural, namespace)
    }
    owners: set[str] = set()
    loose = 0
    for pod in pods:
        refs = [r for r in pod["metadata"].get("ownerReferences") or () if r.get("controller") is True]
        uid = str(refs[0].get("uid")) if refs else ""
        if uid in scale:
            owners.add(uid)
        else:
            loose += 1
    return loose + sum(int(scale[uid]) for uid in owners)


def scaled(value: Any, expected: int) -> int:
    """An IntOrString of a budget: an integer, or a percentage of the expected pods rounded up."""
    if isinstance(value, str) and value.endswith("%"):
        return math.ceil(int(value[:-1]) * expected / 100)
    return int(value)
