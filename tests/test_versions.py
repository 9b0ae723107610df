"""The supported Kubernetes versions table (tests/cluster/versions.txt) agrees with the go.mod each row names,
and KUBE_VERSION picks the control plane the build script and the tests use."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from tests.cluster.controlplane import CACHE, binary_dir, pinned_version
from tests.cluster.versions import HERE, selected_version, supported_versions

ROOT = HERE.parent.parent


def pin(go_mod: Path, module: str) -> str:
    match = re.search(rf"^\s*{re.escape(module)}\s+(v\S+)", go_mod.read_text(), re.M)
    assert match, f"{go_mod} does not pin {module}"
    return match[1]


def test_each_row_is_what_its_module_pins_and_its_minor_is_its_release() -> None:
    for row in supported_versions():
        go_mod = row.module / "go.mod"
        assert pin(go_mod, "k8s.io/kubernetes") == row.kubernetes, go_mod
        assert pin(go_mod, "go.etcd.io/etcd/server/v3") == row.etcd, go_mod
        assert row.kubernetes.startswith(f"v{row.minor}."), row
        assert (row.module / "go.sum").is_file(), row


def test_rows_go_oldest_to_newest_and_the_newest_is_the_default_module() -> None:
    rows = supported_versions()
    minors = [tuple(int(part) for part in row.minor.split(".")) for row in rows]

    assert minors == sorted(set(minors)) and len(rows) >= 2
    assert rows[-1].module == HERE


def test_kube_version_picks_the_row_and_its_cache_directory(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("KUBE_REHASH_CONTROL_PLANE_DIR", raising=False)
    oldest, newest = supported_versions()[0], supported_versions()[-1]

    monkeypatch.delenv("KUBE_VERSION", raising=False)
    assert (pinned_version(), binary_dir()) == (newest.kubernetes, CACHE / newest.kubernetes)
    monkeypatch.setenv("KUBE_VERSION", oldest.minor)
    assert selected_version() == oldest
    assert (pinned_version(), binary_dir()) == (oldest.kubernetes, CACHE / oldest.kubernetes)


def test_an_unsupported_kube_version_is_refused_naming_the_supported_ones(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("KUBE_VERSION", "1.20")
    minors = ", ".join(row.minor for row in supported_versions())

    with pytest.raises(ValueError, match=re.escape("KUBE_VERSION=1.20 is not supported: ") + ".*" + minors):
        selected_version()
    build = subprocess.run(
        ["bash", str(ROOT / "scripts" / "build-control-plane.sh")],
        env={"KUBE_VERSION": "1.20", "PATH": "/usr/bin:/bin"},  # refused before it looks for go
        capture_output=True,
        text=True,
        check=False,
    )
    assert build.returncode == 1 and "KUBE_VERSION=1.20 is not supported" in build.stderr, build.stderr
