"""Helpers shared by the simulator tests: raw HTTPS calls and small manifests."""

from __future__ import annotations

import json
import ssl
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rehash_simulator import Simulator

KUBECTL = str(Path(__file__).resolve().parents[2] / ".venv" / "bin" / "kubectl")


@dataclass
class Reply:
    status: int
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


def call(
    sim: Simulator,
    method: str,
    path: str,
    body: Any = None,
    *,
    token: str | None = None,
    content_type: str = "application/json",
    accept: str = "application/json",
    headers: dict[str, str] | None = None,
) -> Reply:
    """One HTTPS request to the simulator, verified against its CA; errors returned, not raised."""
    context = ssl.create_default_context(cadata=sim.ca_pem.decode())
    data = None
    if body is not None:
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
    request = urllib.request.Request(sim.url + path, data=data, method=method)
    request.add_header("Authorization", f"Bearer {token or sim.admin_token}")
    request.add_header("Accept", accept)
    if data is not None:
        request.add_header("Content-Type", content_type)
    for key, value in (headers or {}).items():
        request.add_header(key, value)
    try:
        with urllib.request.urlopen(request, context=context, timeout=10) as response:
            return Reply(response.status, dict(response.headers), response.read())
    except urllib.error.HTTPError as exc:
        return Reply(exc.code, dict(exc.headers), exc.read())


def deployment(name: str, namespace: str = "shop", **labels: str) -> dict[str, Any]:
    labels = labels or {"app": name}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": namespace, "labels": dict(labels)},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": dict(labels)},
            "template": {
                "metadata": {"labels": dict(labels)},
                "spec": {
                    "containers": [{"name": "app", "image": "nginx:1", "env": [{"name": "A", "value": "1"}]}]
                },
            },
        },
    }


def configmap(
    name: str, namespace: str = "shop", data: dict[str, str] | None = None, **labels: str
) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": namespace, "labels": dict(labels)},
        "data": dict(data or {"k": "v"}),
    }
