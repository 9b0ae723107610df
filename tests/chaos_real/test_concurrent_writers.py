"""A GitOps controller and an autoscaler writing the same Deployments while kube-rehash passes run.

Why: in real clusters kube-rehash is never the only writer. A GitOps controller re-applies the manifests
with server-side apply (`kubectl apply --server-side --field-manager=gitops`: it owns the template but not
our annotation) and something scales the Deployments. Server-side apply must keep each writer's fields:
no lost update (the last scale and the GitOps spec survive our patches), no double restart (one new
ReplicaSet per change, the re-applies restart nothing), and no fight (the re-applies never conflict; in
`managedFields` kube-rehash owns its annotations and gitops the containers).
"""

from __future__ import annotations

import json
import threading
import time
from typing import Any

from tests.chaos_real.harness import PREFIX, Cluster, Figures, configmap, deployment, template_hash

COUNT, SOURCES = 12, 3
ROUNDS = 2
BUDGET = 60.0
LOOP_ITERATIONS, LOOP_SECONDS = 40, 60.0


def _gitops_manifests(ns: str, names: list[str]) -> str:
    """What the GitOps controller applies: the Deployments without `replicas` (the scaler's) and without
    anything of kube-rehash's (it does not know about it)."""
    items = []
    for i, name in enumerate(names):
        manifest = deployment(ns, name, f"cm{i % SOURCES}")
        del manifest["spec"]["replicas"]
        items.append(manifest)
    return json.dumps({"apiVersion": "v1", "kind": "List", "items": items})


class Loop(threading.Thread):
    """Runs `step(i)` until stopped, at most LOOP_ITERATIONS times and LOOP_SECONDS; collects failures."""

    def __init__(self, step: Any) -> None:
        super().__init__(daemon=True)
        self.step = step
        self.runs = 0
        self.errors: list[str] = []
        self.stop = threading.Event()

    def run(self) -> None:
        deadline = time.monotonic() + LOOP_SECONDS
        while not self.stop.is_set() and self.runs < LOOP_ITERATIONS and time.monotonic() < deadline:
            try:
                self.step(self.runs)
            except AssertionError as exc:
                self.errors.append(str(exc)[:500])
            self.runs += 1
            self.stop.wait(0.1)


def _managers(obj: dict[str, Any]) -> dict[str, str]:
    """managedFields as {manager: its fieldsV1 as JSON text}."""
    return {
        m["manager"]: json.dumps(m.get("fieldsV1", {})) for m in obj["metadata"].get("managedFields") or []
    }


def test_gitops_reapplies_and_scaling_during_passes_lose_nothing_restart_once_and_never_fight(
    plane: Cluster,
) -> None:
    cluster = plane
    ns = cluster.namespace("writers")
    names = [f"d{i:02d}" for i in range(COUNT)]
    manifests = _gitops_manifests(ns, names)
    cluster.apply(*(configmap(ns, f"cm{j}", {"v": "0"}) for j in range(SOURCES)))
    gitops = ("apply", "--server-side", "--field-manager=gitops", "-f", "-")
    cluster.kubectl(*gitops, stdin=manifests)
    cluster.wait_observed(ns)
    assert set(cluster.run("-n", ns).actions().values()) == {"adopt"}

    figures = Figures("GitOps server-side re-apply loop + scale loop during passes")
    replicas: list[int] = []

    def reapply(_: int) -> None:
        # Without --force-conflicts: a conflict over a field (a fight) fails the apply.
        cluster.kubectl(*gitops, stdin=manifests)

    def scale(i: int) -> None:
        want = 1 + i % 2
        cluster.kubectl("scale", "deployment", *names, "-n", ns, f"--replicas={want}")
        replicas.append(want)

    loops = [Loop(reapply), Loop(scale)]
    for loop in loops:
        loop.start()
    try:
        for round_ in range(1, ROUNDS + 1):
            cluster.apply(*(configmap(ns, f"cm{j}", {"v": str(round_)}) for j in range(SOURCES)))
            figures.expected += COUNT
            for _ in range(3):  # the pass, and at most two more if other writers kept winning races
                result = cluster.run("-n", ns, timeout=BUDGET)
                figures.count(result)
                # A writer that wins every one of the 4 attempts (1 + 3 re-reads) of a guarded patch fails
                # that workload for this pass (exit 1); the next pass does it. Nothing else may fail.
                failures = [r["reason"] for r in result.report["workloads"] if r["action"] == "failed"]
                assert all("kept changing under us" in reason for reason in failures), failures
                assert result.code == (1 if failures else 0), result.stderr
                figures.notes["kept changing (failed, redone next pass)"] = figures.notes.get(
                    "kept changing (failed, redone next pass)", 0
                ) + len(failures)
                actions = set(result.actions().values())
                assert actions <= {"rollout", "refresh", "in-sync", "failed"}, result.actions()
                # A scale or a re-apply moves the generation: `refresh` (bookkeeping only) is no work left.
                if actions <= {"refresh", "in-sync"}:
                    break
            else:
                raise AssertionError(f"round {round_} did not converge in 3 passes: {result.actions()}")
            # The controller has made this round's ReplicaSets before the next change: two template changes
            # in quick succession would otherwise make one ReplicaSet (the controller acts on the latest).
            cluster.wait_observed(ns)
    finally:
        for loop in loops:
            loop.stop.set()
        for loop in loops:
            loop.join(30)
    figures.injected = sum(loop.runs for loop in loops)
    figures.notes["gitops re-applies"], figures.notes["scales"] = loops[0].runs, loops[1].runs
    assert [loop.errors for loop in loops] == [[], []], "a writer failed (a conflict is a fight over fields)"
    assert loops[0].runs >= 2 and loops[1].runs >= 2, [loop.runs for loop in loops]

    # The writers stopped: one pass records their last generation (refresh), the next one is steady.
    settle = cluster.run("-n", ns)
    figures.count(settle)
    assert set(settle.actions().values()) <= {"refresh", "in-sync"}, settle.actions()
    steady = cluster.run("-n", ns)
    figures.count(steady)
    assert set(steady.actions().values()) == {"in-sync"}, steady.actions()
    cluster.wait_observed(ns)
    counts = cluster.rs_counts(ns)
    figures.lost = sum(max(0, 1 + ROUNDS - counts[n]) for n in names)
    figures.doubled = sum(max(0, counts[n] - 1 - ROUNDS) for n in names)
    figures.done = figures.expected - figures.lost
    figures.save()
    assert counts == dict.fromkeys(names, 1 + ROUNDS), counts

    rows = steady.rows()
    for obj in cluster.deployments(ns):
        name = obj["metadata"]["name"]
        # No lost update: the scaler's last word and the GitOps spec are there, and so is our hash.
        assert obj["spec"]["replicas"] == replicas[-1], name
        assert obj["spec"]["template"]["spec"]["containers"][0]["image"] == "registry.invalid/app:1"
        assert template_hash(obj["spec"]["template"]) == rows[f"Deployment/{ns}/{name}"]["hash"], name
        # Ownership: kube-rehash owns the annotations it writes and none of the spec it does not write;
        # gitops owns the containers and none of the annotations kube-rehash writes.
        managers = _managers(obj)
        ours, theirs = managers["kube-rehash"], managers["gitops"]
        assert f"f:{PREFIX}/config-hash" in ours and f"f:{PREFIX}/sources" in ours, ours
        assert "f:containers" not in ours and "f:replicas" not in ours, ours
        # (The opt-in `watch` annotation is in the GitOps manifest: theirs, rightly.)
        assert "f:containers" in theirs and f"f:{PREFIX}/watch" in theirs, theirs
        assert f"f:{PREFIX}/config-hash" not in theirs and f"f:{PREFIX}/sources" not in theirs, theirs
        assert "f:replicas" not in theirs, theirs
