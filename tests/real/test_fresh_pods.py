"""One restart per sync, for real: a workload and its ConfigMap changed by one `kubectl apply` roll once.

Why: the rule (`skipIfPodsNewer`, reconcile/model/freshness.py) compares times only the real API server writes
(managedFields times, the creationTimestamp of the ReplicaSet or ControllerRevision the real controllers
create for the new template) and decides same-second ties with a list at an exact resourceVersion, which
the simulator does not serve. Only the real controllers can show that the change of template really
produced one new ReplicaSet (or ControllerRevision), and that a ConfigMap changed after the template
still rolls the workload.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from typing import Any

from tests.real.conftest import (
    CLI,
    HASH,
    PREFIX,
    Kube,
    configmap,
    pod_spec,
    template_hash,
    wait_until,
    workload,
)

SUPERSEDED = f"{PREFIX}/superseded-template-hash"
ORIGIN_RESOURCES = {"replicasets", "controllerrevisions"}


def app(kind: str, name: str, image: str) -> dict[str, Any]:
    spec = pod_spec(configmaps=(f"{name}-config",))
    spec["containers"][0]["image"] = f"registry.invalid/app:{image}"
    return workload(kind, name, spec, replicas=2)


def owned(kube: Kube, kind: str, name: str) -> list[dict[str, Any]]:
    """The Deployment's ReplicaSets, or the StatefulSet's or DaemonSet's ControllerRevisions."""
    return kube.replicasets(name) if kind == "Deployment" else kube.revisions(kind, name)


def origin_reads(kube: Kube, mark: int) -> list[str]:
    """The ReplicaSet/ControllerRevision requests kube-rehash (user admin) made since `mark`."""
    return [e.uri for e in kube.cp.audit(since=mark, user="admin") if e.resource in ORIGIN_RESOURCES]


def explained(kube: Kube, kind: str, name: str) -> dict[str, Any]:
    """`kube-rehash explain KIND/NAME -o json` of this namespace."""
    argv = [
        CLI,
        "explain",
        f"{kind}/{name}",
        "-n",
        kube.ns,
        "-o",
        "json",
        "--kubeconfig",
        str(kube.cp.kubeconfig),
    ]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("KUBE_REHASH_", "KUBECONFIG"))}
    done = subprocess.run(argv, capture_output=True, text=True, check=True, timeout=60, env=env)
    doc: dict[str, Any] = json.loads(done.stdout)
    return doc


def adopted(kube: Kube, kind: str, name: str) -> int:
    """Create the workload and its ConfigMap, adopt it; the number of its ReplicaSets/revisions then."""
    kube.apply(configmap(f"{name}-config", {"mode": "blue"}), app(kind, name, "1"))
    kube.wait_settled(kind, name)
    first = kube.rehash()
    assert first.actions() == {f"{kind}/{name}": "adopt"}, first.stdout
    kube.wait_observed(kind, name)
    return len(owned(kube, kind, name))


def check_one_restart_per_sync(kube: Kube, kind: str, name: str) -> None:
    before = adopted(kube, kind, name)

    # One apply changes the ConfigMap (first, as a GitOps sync orders them) and the pod template.
    kube.apply(configmap(f"{name}-config", {"mode": "green"}), app(kind, name, "2"))
    kube.wait_observed(kind, name)
    said = explained(kube, kind, name)
    planned = kube.rehash("--dry-run").row(kind, name)
    mark = kube.cp.audit_mark()
    synced = kube.rehash()
    assert synced.code == 0, synced.stderr
    row = synced.row(kind, name)
    assert row["action"] == "refresh", synced.stdout
    assert row["reason"] == f"pods started after configmap/{name}-config changed"
    # explain and plan said what the run did (one decision path: pipeline/planner.py).
    assert (
        (said["action"], said["reason"])
        == (planned["action"], planned["reason"])
        == ("refresh", row["reason"])
    )
    reads = origin_reads(kube, mark)
    assert reads and all("labelSelector" in uri or "/controllerrevisions/" in uri for uri in reads), reads
    kube.wait_settled(kind, name)
    assert len(owned(kube, kind, name)) == before + 1, "the template change alone restarted the pods"

    # Steady afterwards: in sync, no ReplicaSet or ControllerRevision read, nothing rolled.
    mark = kube.cp.audit_mark()
    steady = kube.rehash()
    assert steady.actions() == {f"{kind}/{name}": "in-sync"}, steady.stdout
    assert origin_reads(kube, mark) == []
    assert len(owned(kube, kind, name)) == before + 1


def check_a_later_change_still_rolls(kube: Kube, kind: str, name: str) -> None:
    before = adopted(kube, kind, name)

    # The template first; the ConfigMap a few seconds after its new ReplicaSet/revision exists.
    kube.apply(app(kind, name, "2"))
    kube.wait_observed(kind, name)
    wait_until("the new template's object", lambda: len(owned(kube, kind, name)) == before + 1, 30)
    time.sleep(2.0)
    kube.apply(configmap(f"{name}-config", {"mode": "green"}))
    rolled = kube.rehash()
    assert rolled.code == 0, rolled.stderr
    assert rolled.row(kind, name)["action"] == "rollout", rolled.stdout
    kube.wait_settled(kind, name)
    assert len(owned(kube, kind, name)) == before + 2, "the ConfigMap's change did not roll the pods"


def test_a_deployment_and_its_configmap_applied_together_roll_once(kube: Kube) -> None:
    check_one_restart_per_sync(kube, "Deployment", "web")


def test_a_configmap_changed_after_the_deployments_template_rolls_again(kube: Kube) -> None:
    check_a_later_change_still_rolls(kube, "Deployment", "web")


def test_a_statefulset_and_its_configmap_applied_together_roll_once(kube: Kube) -> None:
    check_one_restart_per_sync(kube, "StatefulSet", "db")


def test_a_configmap_changed_after_the_statefulsets_template_rolls_again(kube: Kube) -> None:
    check_a_later_change_still_rolls(kube, "StatefulSet", "db")


def test_a_daemonset_and_its_configmap_applied_together_roll_once(kube: Kube) -> None:
    check_one_restart_per_sync(kube, "DaemonSet", "agent")


def test_a_configmap_changed_after_the_daemonsets_template_rolls_again(kube: Kube) -> None:
    check_a_later_change_still_rolls(kube, "DaemonSet", "agent")


def test_the_template_hash_our_rollout_wrote_is_superseded_not_rolled_again(kube: Kube) -> None:
    """After a rollout of ours the template carries our hash; a sync that changes both leaves it behind,
    recorded as superseded, so neither that pass nor a later spec-only change rolls for it."""
    before = adopted(kube, "Deployment", "web")
    kube.apply(configmap("web-config", {"mode": "green"}))
    assert kube.rehash().actions() == {"Deployment/web": "rollout"}
    kube.wait_settled("Deployment", "web")
    ours = template_hash(kube.obj("Deployment", "web")["spec"]["template"])
    assert ours is not None

    kube.apply(configmap("web-config", {"mode": "red"}), app("Deployment", "web", "2"))
    kube.wait_observed("Deployment", "web")
    synced = kube.rehash()
    assert synced.actions() == {"Deployment/web": "refresh"}, synced.stdout
    annotations = kube.obj("Deployment", "web")["metadata"]["annotations"]
    assert annotations[SUPERSEDED] == ours and annotations[HASH] == synced.row("Deployment", "web")["hash"]
    kube.wait_settled("Deployment", "web")
    said = explained(kube, "Deployment", "web")
    assert said["stored"]["superseded_template"] == ours and said["action"] == "in-sync"

    kube.apply(app("Deployment", "web", "3"))  # a spec-only change: the pass reads the workload in full
    kube.wait_observed("Deployment", "web")
    later = kube.rehash()
    assert later.actions()["Deployment/web"] in ("in-sync", "refresh"), later.stdout
    kube.wait_settled("Deployment", "web")
    assert len(kube.replicasets("web")) == before + 3  # ours, the sync's template, the image bump


def test_skip_if_pods_newer_false_rolls_as_before(kube: Kube) -> None:
    before = adopted(kube, "Deployment", "web")
    kube.apply(configmap("web-config", {"mode": "green"}), app("Deployment", "web", "2"))
    kube.wait_observed("Deployment", "web")
    mark = kube.cp.audit_mark()
    rolled = kube.rehash("--no-skip-if-pods-newer")
    assert rolled.actions() == {"Deployment/web": "rollout"}, rolled.stdout
    assert origin_reads(kube, mark) == []
    kube.wait_settled("Deployment", "web")
    assert len(kube.replicasets("web")) == before + 2
