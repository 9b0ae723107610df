"""The supported Kubernetes versions (tests/cluster/versions.txt) and the one this run uses.

Why: users run what their provider gives them, so the real-server suites run on every supported minor
(`make test-versions`); `KUBE_VERSION=1.34` picks a row for `make cluster`, `make control-plane` and the tests
(tests/cluster/controlplane.py reads the go.mod of that row's module directory).
scripts/build-control-plane.sh reads the same table with awk.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
TABLE = HERE / "versions.txt"


@dataclass(frozen=True)
class KubeVersion:
    """One row: a minor, its pinned release, the etcd that release pins, and the module that pins both."""

    minor: str
    kubernetes: str
    etcd: str
    module: Path


def supported_versions() -> list[KubeVersion]:
    """Every row of the table, oldest first."""
    rows = []
    for line in TABLE.read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            minor, kubernetes, etcd, module = line.split()
            rows.append(KubeVersion(minor, kubernetes, etcd, (HERE / module).resolve()))
    return rows


def selected_version() -> KubeVersion:
    """The row $KUBE_VERSION names (a minor such as 1.34), else the newest."""
    rows = supported_versions()
    wanted = os.environ.get("KUBE_VERSION", "")
    if not wanted:
        return rows[-1]
    for row in rows:
        if row.minor == wanted:
            return row
    minors = ", ".join(r.minor for r in rows)
    raise ValueError(f"KUBE_VERSION={wanted} is not supported: {TABLE} lists {minors}")
