"""Metadata-first passes end to end: what is read in full, and when, seen in the server's request log.

A steady pass lists workloads metadata-only and reads no workload object; a workload is read in full
only after its spec, its opt-in annotations or one of its recorded sources changed.
"""

from __future__ import annotations

import pytest

from tests.e2e.conftest import Backend, configmap, deployment, env_from, secret

WEB = "Deployment/shop/web"
WORKLOAD_PATH = "/apis/apps/v1/namespaces/shop/deployments/web"
METADATA_LIST = "as=PartialObjectMetadataList"


def workload_reads(cluster: Backend) -> list[str]:
    return [e.path for e in cluster.requests("GET") if e.path == WORKLOAD_PATH]


def workload_lists(cluster: Backend) -> list[str]:
    """The Accept headers of the workload lists (simulator only: the audit log does not record them)."""
    return [
        e.accept
        for e in cluster.requests("GET")
        if e.path.startswith("/apis/") and e.path.endswith(("deployments", "statefulsets"))
    ]


def adopted(cluster: Backend) -> None:
    cluster.add(configmap("app", {"a": "1"}), deployment("web", env_from("configmap", "app")))
    assert cluster.run().actions() == {WEB: "adopt"}
    cluster.clear_log()


def test_a_steady_pass_reads_no_workload(cluster: Backend) -> None:
    adopted(cluster)
    assert cluster.run().actions() == {WEB: "in-sync"}
    assert workload_reads(cluster) == [] and cluster.writes() == []


@pytest.mark.sim_only("the Accept header of a request: the audit log does not record it")
def test_a_steady_pass_lists_workloads_metadata_only(cluster: Backend) -> None:
    adopted(cluster)
    assert cluster.run().actions() == {WEB: "in-sync"}
    assert workload_lists(cluster) and all(METADATA_LIST in accept for accept in workload_lists(cluster))


def test_first_sight_reads_the_workload_once(cluster: Backend) -> None:
    cluster.add(configmap("app", {"a": "1"}), deployment("web", env_from("configmap", "app")))
    assert cluster.run().actions() == {WEB: "adopt"}
    assert len(workload_reads(cluster)) == 1


def test_a_spec_change_is_read_once_and_refreshed_without_a_rollout(cluster: Backend) -> None:
    adopted(cluster)
    before = cluster.get("deployments", "shop", "web")
    cluster.mutate(
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
    cluster.clear_log()
    assert cluster.run().actions() == {WEB: "in-sync"}
    assert workload_reads(cluster) == [] and cluster.writes() == []


def test_a_spec_change_that_adds_a_reference_is_found(cluster: Backend) -> None:
    adopted(cluster)
    cluster.add(secret("db", {"pw": "x"}))

    def add_secret(obj: dict[str, object]) -> None:
        container = obj["spec"]["template"]["spec"]["containers"][0]  # type: ignore[index]
        container["envFrom"].append({"secretRef": {"name": "db"}})

    cluster.mutate("deployments", "shop", "web", add_secret)
    if cluster.name == "real":
        cluster.wait_rolled_out("deployments", "shop", "web")
    result = cluster.run()
    row = result.report["workloads"][0]
    assert row["configs"] == ["configmap/app", "secret/db"]
    if cluster.name == "real":
        # The spec change itself started pods that read secret/db, created before it: recorded, not rolled
        # again (skipIfPodsNewer; the simulator keeps no managedFields, so there it rolls).
        assert (row["action"], row["reason"]) == ("refresh", "pods started after secret/db changed")
    else:
        assert result.actions() == {WEB: "rollout"}


@pytest.mark.sim_only("a rollout left unfinished: a real Deployment controller completes it")
def test_a_changed_source_rolls_its_workload_from_the_records_and_the_next_pass_trusts_the_new_record(
    cluster: Backend,
) -> None:
    adopted(cluster)
    cluster.edit("configmaps", "shop", "app", {"data": {"a": "2"}})
    assert cluster.run().actions() == {WEB: "rollout"}
    # The records and the generation prove the spec unchanged: decided without reading the workload, one
    # patch that tests the generation and the stored hash.
    assert workload_reads(cluster) == []
    (patch,) = [r for r in cluster.writes() if r.method == "PATCH"]
    assert patch.status == 200
    cluster.clear_log()
    # The rollout bumped the generation once; the record predicted it, so the workload is not read in
    # full again: its one GET is the status read of our unfinished rollout (the simulator runs no
    # controller; test_windows_and_health shows the reads stop once the rollout is complete).
    result = cluster.run()
    assert result.actions() == {WEB: "in-sync"} and result.report["configs_fetched"] == 0
    assert len(workload_reads(cluster)) == 1 and cluster.writes() == []


def test_a_source_label_edit_refreshes_without_a_rollout(cluster: Backend) -> None:
    adopted(cluster)
    cluster.edit("configmaps", "shop", "app", {"metadata": {"labels": {"team": "a"}}})
    assert cluster.run().actions() == {WEB: "refresh"}
    cluster.clear_log()
    assert cluster.run().actions() == {WEB: "in-sync"}
    assert workload_reads(cluster) == []


def test_an_annotation_that_adds_a_reference_is_found_without_a_spec_change(cluster: Backend) -> None:
    adopted(cluster)
    cluster.add(configmap("extra", {"b": "1"}))
    cluster.edit(
        "deployments", "shop", "web", {"metadata": {"annotations": {"kube-rehash.io/configmaps": "extra"}}}
    )
    result = cluster.run()
    assert result.actions() == {WEB: "rollout"}
    assert result.report["workloads"][0]["configs"] == ["configmap/app", "configmap/extra"]


def test_an_optional_source_that_appears_is_found(cluster: Backend) -> None:
    cluster.add(deployment("web", env_from("secret", "late", optional=True)))
    assert cluster.run().actions() == {WEB: "adopt"}
    cluster.add(secret("late", {"k": "v"}))
    assert cluster.run().actions() == {WEB: "rollout"}


def test_an_opt_out_annotation_is_honoured_without_reading_the_workload(cluster: Backend) -> None:
    adopted(cluster)
    cluster.edit(
        "deployments", "shop", "web", {"metadata": {"annotations": {"kube-rehash.io/ignore": "true"}}}
    )
    assert cluster.run().actions() == {WEB: "skipped"}
    assert workload_reads(cluster) == []


def test_workloads_with_an_ignored_source_are_read_in_full_each_pass_and_stay_in_sync(
    cluster: Backend,
) -> None:
    ignored = configmap("noisy", {"a": "1"}, annotations={"kube-rehash.io/ignore": "true"})
    pod = env_from("configmap", "app")
    pod["containers"][0]["envFrom"].append({"configMapRef": {"name": "noisy"}})
    cluster.add(configmap("app", {"a": "1"}), ignored, deployment("web", pod))
    assert cluster.run().actions() == {WEB: "adopt"}
    cluster.clear_log()
    # Its records leave the ignored source out, so they cannot vouch for the spec's references.
    assert cluster.run().actions() == {WEB: "in-sync"}
    assert len(workload_reads(cluster)) == 1 and cluster.writes() == []
