"""Write charts/kube-rehash/values.schema.json from config/schema.json.

Why generated: the chart's `config` is the configuration file, so its schema must be the file's schema, not a
hand-made copy that drifts; tests/test_chart.py fails when the committed file differs from this output.
`shards` and `pushgateway` are top-level values (they also shape the CronJob), so they move out of `config`.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "charts" / "kube-rehash" / "values.schema.json"
TOP_LEVEL = ("shards", "pushgateway")


def build() -> dict[str, Any]:
    """The chart's values schema: the config file's schema under `config`, the chart's values around it."""
    config: dict[str, Any] = json.loads((ROOT / "config" / "schema.json").read_text())
    props = dict(config["properties"])
    moved = {name: props.pop(name) for name in TOP_LEVEL}
    obj = {"type": "object"}
    str_map = {"type": "object", "additionalProperties": {"type": "string"}}
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "kube-rehash chart values",
        "type": "object",
        "additionalProperties": False,
        "$defs": config.get("$defs", {}),
        "properties": {
            "global": obj,
            "schedule": {"description": "Cron schedule of the pass.", "type": "string", "minLength": 9},
            "scope": {
                "type": "object",
                "additionalProperties": False,
                "properties": {"namespaces": props["namespaces"]},
            },
            "secretsGetOnly": {"type": "boolean"},
            "argoRollouts": {"type": "boolean"},
            "secretsStoreCsi": {"type": "boolean"},
            "runOnChange": {"type": "boolean"},
            "evict": {"type": "boolean"},
            "openreports": {"type": "boolean"},
            **moved,
            "hashKey": {
                "type": "object",
                "additionalProperties": False,
                "properties": {"existingSecret": {"type": "string"}},
            },
            "config": {
                "description": config.get("description", ""),
                "type": "object",
                "additionalProperties": False,
                "properties": props,
            },
            "image": {
                "type": "object",
                "additionalProperties": False,
                "properties": {
                    "repository": {"type": "string"},  # empty: the template's message names the value
                    "tag": {"type": "string"},
                    "digest": {"type": "string", "pattern": "^(|sha256:[0-9a-f]{64})$"},
                    "pullPolicy": {"enum": ["Always", "IfNotPresent", "Never"]},
                },
            },
            "imagePullSecrets": {"type": "array", "items": obj},
            "serviceAccount": {
                "type": "object",
                "additionalProperties": False,
                "properties": {
                    "create": {"type": "boolean"},
                    "name": {"type": "string"},
                    "annotations": str_map,
                },
            },
            "resources": obj,
            "podSecurityContext": obj,
            "securityContext": obj,
            "nodeSelector": str_map,
            "tolerations": {"type": "array", "items": obj},
            "affinity": obj,
            "commonLabels": str_map,
            "commonAnnotations": str_map,
            "monitoring": {
                "description": "The alert rules and Grafana dashboard of deploy/monitoring/, off by default.",
                "type": "object",
                "additionalProperties": False,
                "properties": {
                    "prometheusRule": {
                        "type": "object",
                        "additionalProperties": False,
                        "properties": {"enabled": {"type": "boolean"}, "labels": str_map},
                    },
                    "dashboard": {
                        "type": "object",
                        "additionalProperties": False,
                        "properties": {
                            "enabled": {"type": "boolean"},
                            "labels": str_map,
                            "namespace": {"type": "string"},
                        },
                    },
                },
            },
        },
    }


def render() -> str:
    """The file's text (stable key order, trailing newline)."""
    return json.dumps(build(), indent=2) + "\n"


if __name__ == "__main__":
    if sys.argv[1:] == ["--check"]:
        sys.exit(0 if OUT.read_text() == render() else 1)
    OUT.write_text(render())
