"""A loopback HTTP server that takes OTLP/HTTP metric exports and keeps their bodies, decoded by the
official protobuf classes, for the tests of the OTLP push (tests/test_otlp.py, tests/reliability)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import ExportMetricsServiceRequest


@dataclass
class Captured:
    url: str
    status: int = 200
    requests: list[tuple[str, str, bytes]] = field(default_factory=list)
    """(path, content type, body) of each request."""

    def decoded(self, index: int = -1) -> ExportMetricsServiceRequest:
        message = ExportMetricsServiceRequest()
        message.ParseFromString(self.requests[index][2])
        return message


def gauges(message: ExportMetricsServiceRequest) -> dict[str, list[tuple[dict[str, str], float]]]:
    """metric name → [(attributes, value)] of every gauge data point of an export."""
    out: dict[str, list[tuple[dict[str, str], float]]] = {}
    for resource_metrics in message.resource_metrics:
        for scope in resource_metrics.scope_metrics:
            for metric in scope.metrics:
                points = out.setdefault(metric.name, [])
                for point in metric.gauge.data_points:
                    attributes = {a.key: a.value.string_value for a in point.attributes}
                    value = point.as_double if point.HasField("as_double") else float(point.as_int)
                    points.append((attributes, value))
    return out


def resource_of(message: ExportMetricsServiceRequest) -> dict[str, Any]:
    (resource_metrics,) = message.resource_metrics
    return {a.key: a.value.string_value for a in resource_metrics.resource.attributes}


@contextmanager
def otlp_receiver(status: int = 200) -> Iterator[Captured]:
    captured = Captured("")

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            captured.requests.append((self.path, self.headers.get("Content-Type", ""), body))
            self.send_response(captured.status)
            self.send_header("Content-Type", "application/x-protobuf")
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    captured.url = f"http://127.0.0.1:{server.server_address[1]}/v1/metrics"
    captured.status = status
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield captured
    finally:
        server.shutdown()
        server.server_close()
