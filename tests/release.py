"""The complete release in dist/ for the tests that check its image archive, SBOMs and image signature
(tests/test_dist_image.py, tests/test_sbom.py, tests/test_image_signing.py): `make dist`'s artefacts
(scripts/build-dist.py), then the image archive and the SBOMs (scripts/dist-extras.py), each cached, so the
tests run the same scripts `make dist` does; and a podman with a store of its own, where an archive is loaded
as a user would load it (nothing in the machine's store to borrow layers from).
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import json
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType
from typing import Any

from tests.image.frozen import frozen_modules
from tests.image.pod import built_image, podman_env
from tests.test_dist import build_dist

ROOT = Path(__file__).resolve().parent.parent
LOCK = ROOT / "requirements" / "runtime.txt"


def load_script(name: str) -> ModuleType:
    """scripts/<name> as a module (the scripts' names have dashes)."""
    spec = importlib.util.spec_from_file_location(
        name.replace("-", "_").removesuffix(".py"), ROOT / "scripts" / name
    )
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


EXTRAS = load_script("dist-extras.py")


def build_release() -> Path:
    """dist/ with every artefact, the image archive and the SBOMs, and SHA256SUMS over all of them."""
    image = built_image()
    dist = build_dist()
    env = {**podman_env(), "KUBE_REHASH_IMAGE": image}
    for step in ("image-archive", "sbom"):
        argv = [sys.executable, str(ROOT / "scripts" / "dist-extras.py"), step]
        done = subprocess.run(argv, env=env, capture_output=True, text=True, check=False, timeout=900)
        assert done.returncode == 0, f"dist-extras.py {step}:\n{done.stdout}\n{done.stderr}"
    return dist


def image_archive(dist: Path) -> Path:
    name: str = EXTRAS.image_archive_name(EXTRAS.BUILD_DIST.version())
    return dist / name


def locked_pins() -> dict[str, str]:
    """requirements/runtime.txt as {normalized name: version}."""
    pins = re.findall(r"^([A-Za-z0-9_.-]+)==(\S+)", LOCK.read_text(encoding="utf-8"), re.MULTILINE)
    return {normalize(name): version for name, version in pins}


def frozen_tops(executable: Path) -> set[str]:
    """The top-level names of the modules in a PyInstaller executable's PYZ (tests/image/frozen.py)."""
    return {top_name(name) for name in frozen_modules(executable.read_bytes())}


def top_name(name: str) -> str:
    """`yaml` of yaml.constructor, of yaml/_yaml.cpython-311-x86_64-linux-gnu.so, of yaml."""
    return name.split("/", maxsplit=1)[0].split(".", maxsplit=1)[0]


def owning_distributions(tops: set[str], among: set[str]) -> set[str]:
    """The distributions of `among` (normalized names) that own one of `tops` as installed here (the test set
    installs the runtime lock)."""
    owners = importlib.metadata.packages_distributions()
    return {normalize(d) for top in tops for d in owners.get(top, [])} & among


def normalize(name: str) -> str:
    """A Python distribution name as PEP 503 compares them (PyYAML, pyyaml and py_yaml are one)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def sbom_packages(sbom: Path) -> dict[str, set[str]]:
    """An SPDX JSON SBOM's packages as {normalized name: {versions}} (the document's own root left out)."""
    document: dict[str, Any] = json.loads(sbom.read_text(encoding="utf-8"))
    assert document["spdxVersion"] == "SPDX-2.3", document.get("spdxVersion")
    listed: dict[str, set[str]] = {}
    for package in document.get("packages", []):
        if package["name"] != document["name"]:
            listed.setdefault(normalize(package["name"]), set()).add(package.get("versionInfo", ""))
    return listed


@contextmanager
def private_podman(where: Path) -> Iterator[list[str]]:
    """The argv prefix of a podman whose image store is under `where` (empty at first), emptied on exit."""
    # podman refuses a runroot path longer than 50 characters: a short one under /tmp.
    run = Path(tempfile.mkdtemp(prefix="krh-run-", dir="/tmp"))
    podman = ["podman", "--root", str(where / "root"), "--runroot", str(run)]
    try:
        yield podman
    finally:
        # Not `system reset`: it would also drop the machine's networks. The store's images, then its files.
        subprocess.run(
            [*podman, "rmi", "--all", "--force"], env=podman_env(), capture_output=True, check=False
        )
        shutil.rmtree(run, ignore_errors=True)


def load_archive(podman: list[str], archive: Path) -> str:
    """`podman load -i archive`: the name of the image it loaded."""
    argv = [*podman, "load", "--input", str(archive)]
    done = subprocess.run(argv, env=podman_env(), capture_output=True, text=True, check=False, timeout=600)
    assert done.returncode == 0, done.stderr
    loaded: list[str] = re.findall(r"^Loaded image(?:\(s\))?: (\S+)", done.stdout, re.MULTILINE)
    assert len(loaded) == 1, done.stdout
    return loaded[0]
