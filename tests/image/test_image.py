"""The built image itself: what it runs, as whom, and what it leaves out.

Why: tests/test_dockerfile.py reads the Dockerfile and tests/test_image_entrypoint.py installs the wheel as
its stages do; this looks at the image `make image` really built (podman): the console script runs as UID
65532 on a read-only root with no capabilities, no network and no writable directory at all, and neither
pip, the build tools, nor the API simulator and cryptography are in it.
"""

from __future__ import annotations

import json
import subprocess

import pytest

from reconcile import __version__
from tests.image.pod import built_image, podman_env

pytestmark = pytest.mark.image


@pytest.fixture(scope="module")
def image() -> str:
    return built_image()


def _podman(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["podman", *args], capture_output=True, text=True, env=podman_env(), timeout=120, check=False
    )


def test_the_image_runs_kube_rehash_run_as_uid_65532_by_default(image: str) -> None:
    done = _podman("image", "inspect", image)
    assert done.returncode == 0, done.stderr
    config = json.loads(done.stdout)[0]["Config"]

    assert config["User"] == "65532:65532"
    assert config["Entrypoint"] == ["kube-rehash"]
    assert config["Cmd"] == ["run"]


def test_version_runs_on_a_read_only_root_without_capabilities_or_network(image: str) -> None:
    confined = ["--read-only", "--read-only-tmpfs=false", "--cap-drop=all", "--network=none"]
    done = _podman("run", "--rm", *confined, "--security-opt", "no-new-privileges", image, "version")

    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"kube-rehash {__version__}"


def test_the_image_carries_neither_pip_nor_build_tools_nor_the_simulator(image: str) -> None:
    modules = ["pip", "setuptools", "wheel", "rehash_simulator", "cryptography", "reconcile", "kubernetes"]
    probe = f"import importlib.util as u; print(' '.join(m for m in {modules!r} if u.find_spec(m)))"
    done = _podman(
        "run", "--rm", "--read-only", "--network=none", "--entrypoint", "python", image, "-c", probe
    )

    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["reconcile", "kubernetes"]
