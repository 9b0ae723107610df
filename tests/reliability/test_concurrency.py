"""Concurrent writers: nobody's change is lost, and overlapping passes roll a workload once per change.

The simulator's mutate hook runs a write just before our PATCH is served: the state our decision was
based on is gone, so the guarded patch must fail (422 on a JSON-patch `test`, 409 on resourceVersion)
and the pass must re-read and decide again.
"""

from __future__ import annotations

import subprocess
import threading
from typing import Any

from tests.e2e.conftest import CLI, Cluster, configmap, deployment, env_from
from tests.reliability.helpers import (
    HASH_KEY,
    actions,
    expected_hash,
    in_process_pass,
    template_hash_changes,
    template_hash_of,
)

WEB = "Deployment/shop/web"


def seed_and_adopt(c: Cluster, names: tuple[str, ...] = ("web",)) -> None:
    c.add(configmap("app", {"a": "1"}), *(deployment(n, env_from("configmap", "app")) for n in names))
    assert set(actions(in_process_pass(c.sim, c.kubeconfig)).values()) == {"adopt"}
    c.sim.log.clear()


def current(c: Cluster) -> str:
    return expected_hash(c.sim, "shop", [("configmap", "app", None)])


def test_another_pass_rolling_first_makes_ours_re_read_and_not_roll_again(sim: Cluster) -> None:
    seed_and_adopt(sim)
    sim.edit("configmaps", "shop", "app", {"data": {"a": "2"}})
    new = current(sim)

    def other_pass(store: Any) -> None:  # what a concurrent kube-rehash pass writes for the same change
        def roll(obj: dict[str, Any]) -> None:
            obj["spec"]["template"]["metadata"].setdefault("annotations", {})[HASH_KEY] = new
            obj["metadata"]["annotations"][HASH_KEY] = new

        store.mutate("deployments", "shop", "web", roll)

    sim.sim.faults.mutate(other_pass, method="PATCH", path="/deployments/web$", max_count=1)
    report = in_process_pass(sim.sim, sim.kubeconfig)
    patches = [e.status for e in sim.sim.log.entries(method="PATCH")]
    assert patches[0] == 422  # the JSON-patch `test` of the stored value failed
    assert actions(report) == {WEB: "refresh"}  # re-read: already rolled, only bookkeeping left
    assert template_hash_changes(sim.sim, "deployments", "shop", "web") == 1
    assert template_hash_of(sim.get("deployments", "shop", "web")) == new


def test_an_unrelated_concurrent_edit_is_kept_and_our_rollout_still_lands(sim: Cluster) -> None:
    seed_and_adopt(sim)
    sim.edit("configmaps", "shop", "app", {"data": {"a": "2"}})

    def new_image(store: Any) -> None:
        store.mutate(
            "deployments",
            "shop",
            "web",
            lambda o: o["spec"]["template"]["spec"]["containers"][0].__setitem__("image", "app:2"),
        )

    sim.sim.faults.mutate(new_image, method="PATCH", path="/deployments/web$", max_count=1)
    report = in_process_pass(sim.sim, sim.kubeconfig)
    assert actions(report) == {WEB: "rollout"}
    web = sim.get("deployments", "shop", "web")
    assert web["spec"]["template"]["spec"]["containers"][0]["image"] == "app:2"  # their change survived
    assert template_hash_of(web) == current(sim)


def test_a_concurrent_spec_edit_before_the_first_sight_write_fails_the_generation_guard_and_is_kept(
    sim: Cluster,
) -> None:
    """The first-sight write rests on the spec it read (its references): a spec edit in between moves the
    generation, the guard fails, the workload is read again and adopted with the edit kept."""
    sim.add(configmap("app", {"a": "1"}), deployment("web", env_from("configmap", "app")))

    def relabel_pods(store: Any) -> None:
        store.mutate(
            "deployments", "shop", "web", lambda o: o["spec"]["template"]["metadata"]["labels"].update(x="1")
        )

    sim.sim.faults.mutate(relabel_pods, method="PATCH", path="/deployments/web$", max_count=1)
    report = in_process_pass(sim.sim, sim.kubeconfig)
    assert [e.status for e in sim.sim.log.entries(method="PATCH")] == [422, 200]
    assert actions(report) == {WEB: "adopt"}
    web = sim.get("deployments", "shop", "web")
    assert web["spec"]["template"]["metadata"]["labels"]["x"] == "1"
    assert web["metadata"]["annotations"][HASH_KEY] == current(sim)


def test_a_status_or_label_write_before_the_first_sight_write_is_no_conflict(sim: Cluster) -> None:
    """A controller's status write or a label edit moves only the resourceVersion: nothing our decision
    rests on, so the guarded patch goes through at once and keeps the edit (a real deployment controller
    writes status while a new Deployment rolls out: guarding on the resourceVersion refused us with 422)."""
    sim.add(configmap("app", {"a": "1"}), deployment("web", env_from("configmap", "app")))

    def relabel(store: Any) -> None:
        store.mutate(
            "deployments", "shop", "web", lambda o: o["metadata"].setdefault("labels", {}).update(x="1")
        )

    sim.sim.faults.mutate(relabel, method="PATCH", path="/deployments/web$", max_count=1)
    report = in_process_pass(sim.sim, sim.kubeconfig)
    assert [e.status for e in sim.sim.log.entries(method="PATCH")] == [200]
    assert actions(report) == {WEB: "adopt"}
    web = sim.get("deployments", "shop", "web")
    assert web["metadata"]["labels"] == {"x": "1"}
    assert web["metadata"]["annotations"][HASH_KEY] == current(sim)


def test_a_writer_that_keeps_racing_us_fails_the_workload_after_bounded_re_reads(sim: Cluster) -> None:
    seed_and_adopt(sim, ("web", "api"))
    sim.edit("configmaps", "shop", "app", {"data": {"a": "2"}})
    counter = iter(range(1000))

    def churn(store: Any) -> None:
        value = f"v1:{next(counter):032x}"
        store.mutate(
            "deployments", "shop", "web", lambda o: o["metadata"]["annotations"].update({HASH_KEY: value})
        )

    sim.sim.faults.mutate(churn, method="PATCH", path="/deployments/web$")
    report = in_process_pass(sim.sim, sim.kubeconfig)
    assert actions(report) == {WEB: "failed", "Deployment/shop/api": "rollout"}
    row = next(r for r in report.rows if r.name == "web")
    assert "kept changing" in row.reason
    assert sim.sim.log.count(method="PATCH", path="/deployments/web$") == 4  # 1 + MAX_REDECIDE
    assert template_hash_changes(sim.sim, "deployments", "shop", "web") == 0


def test_a_workload_opted_out_between_read_and_patch_is_left_alone(sim: Cluster) -> None:
    seed_and_adopt(sim)
    sim.edit("configmaps", "shop", "app", {"data": {"a": "2"}})

    def opt_out(store: Any) -> None:
        store.mutate(
            "deployments",
            "shop",
            "web",
            lambda o: o["metadata"]["annotations"].update({"kube-rehash.io/ignore": "true"}),
        )

    sim.sim.faults.mutate(opt_out, method="PATCH", path="/deployments/web$", max_count=1)
    report = in_process_pass(sim.sim, sim.kubeconfig)
    assert actions(report) == {WEB: "skipped"}
    assert template_hash_changes(sim.sim, "deployments", "shop", "web") == 0


def test_two_overlapping_in_process_passes_roll_each_workload_once(sim: Cluster) -> None:
    names = tuple(f"w{i}" for i in range(6))
    seed_and_adopt(sim, names)
    sim.edit("configmaps", "shop", "app", {"data": {"a": "2"}})
    sim.sim.faults.delay(0.2, method="PATCH")  # both passes decide before either writes
    reports: list[Any] = []
    threads = [
        threading.Thread(target=lambda: reports.append(in_process_pass(sim.sim, sim.kubeconfig)))
        for _ in range(2)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(reports) == 2 and not any(r.failed for r in reports)
    for name in names:
        assert template_hash_changes(sim.sim, "deployments", "shop", name) == 1, name
        rolled = [actions(r)[f"Deployment/shop/{name}"] for r in reports]
        assert rolled.count("rollout") == 1, rolled
    assert sim.sim.store.count("events") == len(names)  # one ConfigChanged Event per rollout


def test_two_overlapping_cli_passes_roll_each_workload_once(cluster: Cluster) -> None:
    names = ("a", "b", "c")
    cluster.add(configmap("app", {"a": "1"}), *(deployment(n, env_from("configmap", "app")) for n in names))
    assert cluster.run().code == 0
    cluster.edit("configmaps", "shop", "app", {"data": {"a": "2"}})
    cluster.sim.faults.delay(0.3, method="PATCH")
    argv = [CLI, "run", "-o", "json", "--kubeconfig", str(cluster.kubeconfig)]
    procs = [
        subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(2)
    ]
    outs = [p.communicate(timeout=60) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs
    for name in names:
        assert template_hash_changes(cluster.sim, "deployments", "shop", name) == 1, name
