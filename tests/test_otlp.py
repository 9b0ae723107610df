"""The OTLP push: the Pushgateway's metrics, one gauge per family, under a resource that names the service,
the cluster and the shard and never a pod; sent as one HTTP/protobuf export; a refusal is an error the
caller logs."""

from __future__ import annotations

import pytest
from prometheus_client import CollectorRegistry

from reconcile.output.metrics import build_registry
from reconcile.output.otlp import OtlpPushError, collect_metrics, push_otlp
from reconcile.policy.decision import Deferral
from tests.otlp_capture import gauges, otlp_receiver, resource_of

SUMMARY = {"workloads": 3, "rollout": 2, "in-sync": 1, "stalled": 1}


def registry(success: bool = True, rolled: list[tuple[str, str, str]] | None = None) -> CollectorRegistry:
    return build_registry(
        summary=SUMMARY,
        api_requests={("list", 200): 4, ("patch", 422): 1},
        configs_fetched=5,
        duration_seconds=1.5,
        success=success,
        deferred={Deferral.WINDOW: 2},
        notifications_undelivered=0,
        rolled=rolled,
        now=1_700_000_000.0,
    )


def test_the_otlp_export_carries_every_pushgateway_family_with_its_labels_and_values() -> None:
    reg = registry(rolled=[("shop", "Deployment", "web")])
    with otlp_receiver() as receiver:
        push_otlp(receiver.url, reg, shard="all", cluster_name="prod-eu")
    ((path, content_type, _),) = receiver.requests
    assert (path, content_type) == ("/v1/metrics", "application/x-protobuf")
    message = receiver.decoded()
    assert resource_of(message) == {
        "service.name": "kube-rehash",
        "service.instance.id": "all",
        "kube_rehash.shard": "all",
        "k8s.cluster.name": "prod-eu",
    }
    got = gauges(message)
    assert sorted(got) == sorted(family.name for family in reg.collect())
    assert sorted(got["kube_rehash_workloads"], key=str) == [
        ({"action": "in-sync", "shard": "all"}, 1.0),
        ({"action": "rollout", "shard": "all"}, 2.0),
    ]
    assert sorted(got["kube_rehash_api_requests"], key=str) == [
        ({"code": "200", "shard": "all", "verb": "list"}, 4.0),
        ({"code": "422", "shard": "all", "verb": "patch"}, 1.0),
    ]
    assert got["kube_rehash_rollouts_stalled"] == [({"shard": "all"}, 1.0)]
    assert ({"reason": "window", "shard": "all"}, 2.0) in got["kube_rehash_deferred"]
    assert got["kube_rehash_last_success_timestamp_seconds"] == [({"shard": "all"}, 1_700_000_000.0)]
    assert got["kube_rehash_workload_last_rollout_timestamp_seconds"] == [
        ({"namespace": "shop", "kind": "Deployment", "name": "web", "shard": "all"}, 1_700_000_000.0)
    ]


def test_a_failed_pass_sends_no_last_success_and_an_unnamed_cluster_no_cluster_attribute() -> None:
    data = collect_metrics(registry(success=False), shard="2", cluster_name=None)
    (resource_metrics,) = data.resource_metrics
    assert dict(resource_metrics.resource.attributes) == {
        "service.name": "kube-rehash",
        "service.instance.id": "2",
        "kube_rehash.shard": "2",
    }
    names = {m.name for scope in resource_metrics.scope_metrics for m in scope.metrics}
    assert "kube_rehash_last_success_timestamp_seconds" not in names


def test_no_resource_or_point_attribute_names_a_pod_or_host() -> None:
    data = collect_metrics(registry(), shard="all", cluster_name="c")
    (resource_metrics,) = data.resource_metrics
    keys = set(resource_metrics.resource.attributes)
    for scope in resource_metrics.scope_metrics:
        for metric in scope.metrics:
            for point in metric.data.data_points:
                keys |= set(point.attributes or {})
    assert not {k for k in keys if k.startswith(("k8s.pod", "host.", "process.", "container."))}


def test_a_receiver_that_refuses_the_export_is_an_otlp_push_error() -> None:
    with (
        otlp_receiver(status=400) as receiver,
        pytest.raises(
            OtlpPushError, match=r"^cannot push metrics over OTLP to http://127\.0\.0\.1:\d+/v1/metrics"
        ),
    ):
        push_otlp(receiver.url, registry(), shard="all", cluster_name=None, timeout=2.0)


def test_credentials_in_the_endpoint_never_appear_in_the_error() -> None:
    with pytest.raises(OtlpPushError) as raised:
        push_otlp(
            "http://user:pa55word@127.0.0.1:9/v1/metrics",
            registry(),
            shard="all",
            cluster_name=None,
            timeout=1.0,
        )
    assert "pa55word" not in str(raised.value) and "127.0.0.1:9" in str(raised.value)
