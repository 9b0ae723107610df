"""Push one pass's metrics over OTLP/HTTP (protobuf), for teams that run an OpenTelemetry Collector or
Prometheus' OTLP receiver instead of a Pushgateway.

The metrics are the Pushgateway's, taken from the same registry (output/metrics.py `build_registry`: one
source of truth for names, help texts and labels), each family one OTLP gauge with its labels as data-point
attributes plus `shard`, as the Pushgateway's grouping key labels them (so the dashboard's queries read
either source). The resource says the same: `service.name` (kube-rehash, which Prometheus turns into the
`job` label), `service.instance.id` (the shard, `all` when unsharded; Prometheus' `instance` label, so shards
never overwrite each other), `kube_rehash.shard` and, when set, `k8s.cluster.name`. No attribute names
the pod: a CronJob's pods are new every pass, and a label per pod would make a new series every pass.

Built with the official SDK and exporter, read once through an in-memory reader and exported once,
synchronously, so the pass knows whether the receiver took it. A failure is logged by the caller and never
fails the pass, as for the Pushgateway.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from prometheus_client import CollectorRegistry

from reconcile.errors import RehashError
from reconcile.output.metrics import redact_url

if TYPE_CHECKING:
    from opentelemetry.sdk.metrics.export import MetricsData

SERVICE_NAME = "kube-rehash"
Points = Iterable[tuple[float, dict[str, str]]]
_MAX_MESSAGE = 200


class OtlpPushError(RehashError):
    """The OTLP receiver could not be reached or refused the metrics. Reported, never fails the pass."""


def resource_attributes(*, shard: str, cluster_name: str | None) -> dict[str, str]:
    attributes = {"service.name": SERVICE_NAME, "service.instance.id": shard, "kube_rehash.shard": shard}
    if cluster_name:
        attributes["k8s.cluster.name"] = cluster_name
    return attributes


def collect_metrics(registry: CollectorRegistry, *, shard: str, cluster_name: str | None) -> MetricsData:
    """The registry's families as OTLP gauges under this pass's resource, collected once."""
    from opentelemetry.metrics import CallbackOptions, Observation
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import InMemoryMetricReader
    from opentelemetry.sdk.resources import Resource

    reader = InMemoryMetricReader()
    resource = Resource(resource_attributes(shard=shard, cluster_name=cluster_name))
    provider = MeterProvider(resource=resource, metric_readers=[reader])
    meter = provider.get_meter("reconcile")
    for family in registry.collect():
        points = [(sample.value, {**sample.labels, "shard": shard}) for sample in family.samples]

        def observe(
            _: CallbackOptions, points: Iterable[tuple[float, dict[str, str]]] = points
        ) -> list[Observation]:
            return [Observation(value, labels) for value, labels in points]

        meter.create_observable_gauge(family.name, callbacks=[observe], description=family.documentation)
    data = reader.get_metrics_data()
    provider.shutdown()
    assert data is not None
    return data


def push_otlp(
    url: str,
    registry: CollectorRegistry,
    *,
    shard: str,
    cluster_name: str | None,
    timeout: float = 5.0,
) -> None:
    """Export the registry's metrics to the OTLP/HTTP metrics endpoint `url` (its whole path, e.g.
    `http://collector:4318/v1/metrics`). Raises OtlpPushError with a one-line message when it fails."""
    from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
    from opentelemetry.sdk.metrics.export import MetricExportResult

    data = collect_metrics(registry, shard=shard, cluster_name=cluster_name)
    exporter = OTLPMetricExporter(endpoint=url, timeout=timeout)
    try:
        result = exporter.export(data, timeout_millis=timeout * 1000)
    except Exception as exc:  # the exporter reports most failures as a result; anything else too
        raise OtlpPushError(_message(url, " ".join(str(exc).split()) or type(exc).__name__)) from exc
    finally:
        exporter.shutdown()
    if result is not MetricExportResult.SUCCESS:
        raise OtlpPushError(_message(url, "the receiver did not take them (see the exporter's log line)"))


def _message(url: str, detail: str) -> str:
    try:
        where = redact_url(url)
    except ValueError:
        where = "the OTLP endpoint (malformed URL)"
    message = f"cannot push metrics over OTLP to {where}: {detail}"
    return message if len(message) <= _MAX_MESSAGE else message[: _MAX_MESSAGE - 3] + "..."
