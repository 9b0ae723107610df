"""Metadata-first passes end to end: what is read in full, and when, seen in the server's request log.

A steady pass lists workloads metadata-only and reads no workload object; a workload is read in full
only after its spec, its opt-in annotations or one of its recorded sources changed.
"""

from __future__ import annotations

from tests.e2e.conftest import Cluster, configmap, deployment, env_from, secret

WEB = "Deployment/shop/web"
WORKLOAD_PATH = "/apis/apps/v1/namespaces/shop/deployments/web"
METADATA_LIST = "as=PartialObjectMetadataList"


def workload_reads(cluster: Cluster) -> list[str]:
    return [e.path for e in cluster.sim.log.entries() if e.method == "GET" and e.path == WORKLOAD_PATH]


def workload_lists(cluster: Cluster) -> list[str]:
    return [
        e.accept
        for e in cluster.sim.log.entries()
        if e.method == "GET"
        and e.path.startswith("/apis/")
        and e.path.endswith(("deployments", "statefulsets"))
    ]


def adopted(cluster: Cluster) -> None:
    cluster.add(configmap("app", {"a": "1"}), deployment("web", env_from("configmap", "app")))
    assert cluster.run().actions() == {WEB: "adopt"}
    cluster.sim.log.clear()


def test_a_steady_pass_lists_workloads_metadata_only_and_reads_no_workload(cluster: Cluster) -> None:
    adopted(cluster)
    assert cluster.run().actions() == {WEB: "in-sync"}
    assert workload_lists(cluster) and all(METADATA_LIST in accept for accept in workload_lists(cluster))
    assert workload_reads(cluster) == [] and cluster.writes() == []


def test_first_sight_reads_the_workload_once(cluster: Cluster) -> None:
    cluster.add(configmap("app", {"a": "1"}), deployment("web", env_from("configmap", "app")))
    assert cluster.run().actions() == {WEB: "adopt"}
    assert len(workload_reads(cluster)) == 1


def test_a_spec_change_is_read_once_and_refreshed_without_a_rollout(cluster: Cluster) -> None:
    adopted(cluster)
    before = cluster.get("deployments", "shop", "web")
    cluster.sim.store.mutate(
        "deployments",
        "shop",
        "web",
        lambda o: o["spec"]["template"]["spec"]["containers"][0].update(image="app:2"),
    )
    assert cluster.run().actions() == {WEB: "refresh"}
    assert len(workload_reads(cluster)) == 1
    after = cluster.get("deployments", "shop", "web")
    assert after["spec"]["template"] == {
        **before["spec"]["template"],
        "spec": after["spec"]["template"]["spec"],
    }
    cluster.sim.log.clear()
    assert cluster.run().actions() == {WEB: "in-sync"}
    assert workload_reads(cluster) == [] and cluster.writes() == []


def test_a_spec_change_that_adds_a_reference_is_found(cluster: Cluster) -> None:
    adopted(cluster)
    cluster.add(secret("db", {"pw": "x"}))

    def add_secret(obj: dict[str, object]) -> None:
        container = obj["spec"]["template"]["spec"]["containers"][0]  # type: ignore[index]
        container["envFrom"].append({"secretRef": {"name": "db"}})

    cluster.sim.store.mutate("deployments", "shop", "web", add_secret)
    result = cluster.run()
    assert result.actions() == {WEB: "rollout"}
    assert result.report["workloads"][0]["configs"] == ["configmap/app", "secret/db"]


def test_a_changed_source_reads_its_workload_and_the_next_pass_trusts_the_new_record(
    cluster: Cluster,
) -> None:
    adopted(cluster)
    cluster.edit("configmaps", "shop", "app", {"data": {"a": "2"}})
    assert cluster.run().actions() == {WEB: "rollout"}
    assert len(workload_reads(cluster)) == 1
    cluster.sim.log.clear()
    # The rollout bumped the generation once; the record predicted it, so the workload is not read in
    # full again: its one GET is the status read of our unfinished rollout (the simulator runs no
    # controller; test_windows_and_health shows the reads stop once the rollout is complete).
    result = cluster.run()
    assert result.actions() == {WEB: "in-sync"} and result.report["configs_fetched"] == 0
    assert len(workload_reads(cluster)) == 1 and cluster.writes() == []


def test_a_source_label_edit_refreshes_without_a_rollout(cluster: Cluster) -> None:
    adopted(cluster)
    cluster.edit("configmaps", "shop", "app", {"metadata": {"labels": {"team": "a"}}})
    assert cluster.run().actions() == {WEB: "refresh"}
    cluster.sim.log.clear()
    assert cluster.run().actions() == {WEB: "in-sync"}
    assert workload_reads(cluster) == []


def test_an_annotation_that_adds_a_reference_is_found_without_a_spec_change(cluster: Cluster) -> None:
    adopted(cluster)
    cluster.add(configmap("extra", {"b": "1"}))
    cluster.edit(
        "deployments", "shop", "web", {"metadata": {"annotations": {"kube-rehash.io/configmaps": "extra"}}}
    )
    result = cluster.run()
    assert result.actions() == {WEB: "rollout"}
    assert result.report["workloads"][0]["configs"] == ["configmap/app", "configmap/extra"]


def test_an_optional_source_that_appears_is_found(cluster: Cluster) -> None:
    cluster.add(deployment("web", env_from("secret", "late", optional=True)))
    assert cluster.run().actions() == {WEB: "adopt"}
    cluster.add(secret("late", {"k": "v"}))
    assert cluster.run().actions() == {WEB: "rollout"}


def test_an_opt_out_annotation_is_honoured_without_reading_the_workload(cluster: Cluster) -> None:
    adopted(cluster)
    cluster.edit(
        "deployments", "shop", "web", {"metadata": {"annotations": {"kube-rehash.io/ignore": "true"}}}
    )
    assert cluster.run().actions() == {WEB: "skipped"}
    assert workload_reads(cluster) == []


def test_workloads_with_an_ignored_source_are_read_in_full_each_pass_and_stay_in_sync(
    cluster: Cluster,
) -> None:
    ignored = configmap("noisy", {"a": "1"}, annotations={"kube-rehash.io/ignore": "true"})
    pod = env_from("configmap", "app")
    pod["containers"][0]["envFrom"].append({"configMapRef": {"name": "noisy"}})
    cluster.add(configmap("app", {"a": "1"}), ignored, deployment("web", pod))
    assert cluster.run().actions() == {WEB: "adopt"}
    cluster.sim.log.clear()
    # Its records leave the ignored source out, so they cannot vouch for the spec's references.
    assert cluster.run().actions() == {WEB: "in-sync"}
    assert len(workload_reads(cluster)) == 1 and cluster.writes() == []
