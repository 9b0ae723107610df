"""The built image itself: what it runs, as whom, and what it leaves out.

Why: tests/test_dockerfile.py reads the Dockerfile and tests/test_image_entrypoint.py installs the wheel as
its build stage does; this looks at the image `make image` really built (podman): the frozen CLI runs as UID
65532 on a read-only root with no capabilities, no network and no writable directory at all; the image holds
no shell, no package manager and no Python but the frozen tree, whose archive carries kube-rehash and its
dependencies but neither pip, the build tools, nor the API simulator and cryptography; and it is at most
100 MB uncompressed.
"""

from __future__ import annotations

import io
import json
import subprocess
import tarfile

import pytest

from reconcile import __version__
from tests.image.frozen import frozen_modules
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


MAX_SIZE = 100 * 1000 * 1000
"""The uncompressed size the image must stay under, as podman counts it."""


def _exported_root(image: str) -> tarfile.TarFile:
    """The image's root filesystem, as `podman export` of a container created from it gives it."""
    created = _podman("create", "--pull", "never", image)
    assert created.returncode == 0, created.stderr
    container = created.stdout.strip()
    try:
        exported = subprocess.run(
            ["podman", "export", container], capture_output=True, env=podman_env(), timeout=120, check=True
        )
    finally:
        _podman("rm", container)
    return tarfile.open(fileobj=io.BytesIO(exported.stdout))


def test_the_image_holds_no_shell_no_package_manager_and_no_python_but_the_frozen_cli(image: str) -> None:
    root = _exported_root(image)
    names = {name.lstrip("./") for name in root.getnames()}
    system_programs = [n for n in names if n.split("/")[0] in {"bin", "sbin"} or n.startswith("usr/bin/")]
    assert not system_programs, "no shell or other program outside the frozen tree"
    # dpkg's records of the copied libraries' packages (for the SBOM; scripts/freeze.py), not its database.
    records = [n for n in names if n.startswith("var/lib/dpkg/status.d/")]
    assert records and all(root.getmember(n).isfile() for n in records)
    assert not [
        n
        for n in set(names) - set(records)
        if n.startswith(("var/lib/dpkg/", "etc/apt", "var/lib/apt", "usr/lib/python"))
        and n != "var/lib/dpkg/status.d"
    ]
    assert not [
        n for n in names if "site-packages" in n or n.rsplit("/", 1)[-1] in {"pip", "python", "python3"}
    ]
    launcher = root.getmember("usr/local/bin/kube-rehash")
    assert launcher.issym() and launcher.linkname == "/opt/kube-rehash/kube-rehash"
    bundled = {
        n.split("/")[3] for n in names if n.startswith("opt/kube-rehash/_internal/") and n.count("/") > 2
    }
    executable = root.extractfile("opt/kube-rehash/kube-rehash")
    assert executable is not None
    frozen = {name.split(".")[0] for name in frozen_modules(executable.read())} | bundled

    assert {"reconcile", "kubernetes", "tzdata", "certifi"} <= frozen
    assert not frozen & {"pip", "setuptools", "wheel", "rehash_simulator", "cryptography", "PyInstaller"}
    assert (root.getmember("etc/passwd").uid, root.getmember("tmp").mode & 0o7777) == (0, 0o1777)
    passwd = root.extractfile("etc/passwd")
    assert passwd is not None and b":65532:65532:" in passwd.read()


def test_the_image_is_at_most_100_mb_uncompressed(image: str) -> None:
    done = _podman("image", "inspect", "--format", "{{.Size}}", image)
    assert done.returncode == 0, done.stderr

    assert int(done.stdout) <= MAX_SIZE


@pytest.mark.parametrize("command", ["demo", "simulate"])
def test_demo_and_simulate_say_the_image_has_no_api_simulator(image: str, command: str) -> None:
    done = _podman("run", "--rm", "--read-only", "--read-only-tmpfs=false", "--network=none", image, command)

    assert done.returncode == 2
    assert (
        done.stderr
        == f"kube-rehash: {command} needs the API simulator: pip install 'kube-rehash[simulator]'\n"
    )


def test_the_frozen_cli_knows_the_iana_time_zones_without_a_zoneinfo_directory(image: str) -> None:
    window = "KUBE_REHASH_RESTART_WINDOW=Mon-Fri 22:00-06:00 Europe/Berlinx"
    done = _podman("run", "--rm", "--read-only", "--network=none", "--env", window, image, "plan")

    assert done.returncode == 2
    assert "unknown time zone 'Europe/Berlinx'" in done.stderr
    assert "did you mean 'Europe/Berlin'?" in done.stderr, "the zones come from the frozen tzdata package"
