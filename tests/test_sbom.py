"""The release's SBOMs (scripts/dist-extras.py, syft built from Go modules: `make syft`), parsed as SPDX 2.3
JSON and checked against the lock and against the artefacts themselves, by the rule docs/release.md states
per artefact: the wheel and the sdist list every dependency of requirements/runtime.txt at its locked version
(they declare the dependencies, the lock pins them) and every one the wheel declares; the plugin archive lists
each package it carries at its locked version; the chart lists each of its files with its sha256; the image's
lists every package actually installed in its layers (read here from the archive, without syft) and every
locked dependency at its version. Marker `image` (the image archive) and `helm` (dist/'s chart).
"""

from __future__ import annotations

import email
import hashlib
import importlib.metadata
import json
import re
import tarfile
import zipfile
from pathlib import Path
from typing import IO

import pytest
from packaging.requirements import Requirement

from reconcile import __version__
from tests.release import EXTRAS, image_archive, locked_pins, normalize, sbom_packages

pytestmark = [pytest.mark.image, pytest.mark.helm]


def sbom_of(artefact: Path) -> Path:
    return artefact.with_name(artefact.name + EXTRAS.SBOM_SUFFIX)


def missing_pins(listed: dict[str, set[str]], pins: dict[str, str]) -> list[str]:
    """The pins an SBOM does not list at their version (empty: it lists each)."""
    return sorted(
        f"{name}=={version}" for name, version in pins.items() if version not in listed.get(name, ())
    )


def runtime_closure(top: str, left_out: set[str]) -> set[str]:
    """The distributions `top` needs at run time (no extras), transitively, without those of `left_out` and
    what only they need: from the installed packages' metadata (the test set installs the runtime lock)."""
    needed: set[str] = set()
    pending = [top]
    while pending:
        name = pending.pop()
        for line in importlib.metadata.requires(name) or []:
            requirement = Requirement(line)
            if requirement.marker and not requirement.marker.evaluate({"extra": ""}):
                continue
            dependency = normalize(requirement.name)
            if dependency not in needed and dependency not in left_out:
                needed.add(dependency)
                pending.append(dependency)
    return needed


@pytest.mark.parametrize(
    "name", [f"kube_rehash-{__version__}-py3-none-any.whl", f"kube_rehash-{__version__}.tar.gz"]
)
def test_the_wheel_and_sdist_sboms_list_every_locked_dependency_at_its_locked_version(
    release: Path, name: str
) -> None:
    listed = sbom_packages(sbom_of(release / name))
    assert __version__ in listed["kube-rehash"]
    assert missing_pins(listed, locked_pins()) == []


def test_the_wheel_sbom_lists_every_dependency_the_wheel_declares(release: Path) -> None:
    wheel = release / f"kube_rehash-{__version__}-py3-none-any.whl"
    with zipfile.ZipFile(wheel) as archive:
        metadata = email.message_from_bytes(archive.read(f"kube_rehash-{__version__}.dist-info/METADATA"))
    requirements = [Requirement(line) for line in metadata.get_all("Requires-Dist") or []]
    declared = {normalize(r.name) for r in requirements if not r.marker or r.marker.evaluate({"extra": ""})}
    assert "kubernetes" in declared
    assert sorted(declared - set(sbom_packages(sbom_of(wheel)))) == []


def test_each_plugin_archive_sbom_lists_the_packages_it_carries_at_their_locked_versions(
    release: Path,
) -> None:
    archives = sorted(release.glob(f"kubectl-rehash-v{__version__}-*"))
    archives = [a for a in archives if not a.name.endswith(EXTRAS.SBOM_SUFFIX)]
    assert archives
    carried = runtime_closure("kube-rehash", set(map(normalize, EXTRAS.BUILD_DIST.LEFT_OUT)))
    pins = locked_pins()
    assert carried and carried <= set(pins)
    for archive in archives:
        listed = sbom_packages(sbom_of(archive))
        assert __version__ in listed["kube-rehash"], archive.name
        assert missing_pins(listed, {name: pins[name] for name in carried}) == [], archive.name


def test_the_chart_sbom_lists_every_file_of_the_chart_with_its_sha256(release: Path) -> None:
    chart = release / f"kube-rehash-{__version__}.tgz"
    with tarfile.open(chart) as tar:
        files = {
            m.name: hashlib.sha256(tar.extractfile(m).read()).hexdigest()  # type: ignore[union-attr]
            for m in tar.getmembers()
            if m.isfile()
        }
    document = json.loads(sbom_of(chart).read_text(encoding="utf-8"))
    listed = {
        entry["fileName"]: checksum["checksumValue"]
        for entry in document["files"]
        for checksum in entry.get("checksums", [])
        if checksum["algorithm"] == "SHA256"
    }
    assert len(files) > 5
    assert {name: listed.get(name) for name in files} == files
    assert sbom_packages(sbom_of(chart)) == {}


def is_package_record(path: str) -> bool:
    return path.endswith(".dist-info/METADATA") or path.startswith("var/lib/dpkg/status")


def apply_layer(files: dict[str, bytes], layer: tarfile.TarFile) -> None:
    """One image layer over `files` (the package records so far): its whiteouts remove, its records add."""
    for member in layer:
        path = member.name.removeprefix("./")
        folder, _, base = path.rpartition("/")
        if base.startswith(".wh."):
            hidden = folder + "/" if base == ".wh..wh..opq" else f"{folder}/{base[4:]}".lstrip("/")
            for gone in [p for p in files if p == hidden or p.startswith(hidden.rstrip("/") + "/")]:
                del files[gone]
        elif member.isfile() and is_package_record(path):
            files[path] = layer.extractfile(member).read()  # type: ignore[union-attr]


def installed_in_image(archive: Path) -> dict[str, str]:
    """{name: version} of every Python distribution (*.dist-info/METADATA) and Debian package (dpkg status)
    in the image's final filesystem: its layers applied in order, whiteouts removing what they hide."""
    files: dict[str, bytes] = {}
    with tarfile.open(archive) as oci:

        def blob(digest: str) -> IO[bytes]:
            found = oci.extractfile("blobs/sha256/" + digest.removeprefix("sha256:"))
            assert found is not None, digest
            return found

        index = json.load(oci.extractfile("index.json"))  # type: ignore[arg-type]
        manifest = json.load(blob(index["manifests"][0]["digest"]))
        for layer in manifest["layers"]:
            with tarfile.open(fileobj=blob(layer["digest"])) as tar:
                apply_layer(files, tar)
    installed: dict[str, str] = {}
    for path, data in files.items():
        if path.endswith("METADATA"):
            metadata = email.message_from_bytes(data)
            installed[normalize(metadata["Name"])] = metadata["Version"]
            continue
        for paragraph in data.decode().split("\n\n"):
            fields = dict(re.findall(r"^([A-Za-z-]+): (.*)$", paragraph, re.MULTILINE))
            if "Package" in fields and fields.get("Status", "installed").endswith("installed"):
                installed[normalize(fields["Package"])] = fields["Version"]
    return installed


def test_the_image_sbom_lists_every_package_installed_in_the_image(release: Path) -> None:
    archive = image_archive(release)
    installed = installed_in_image(archive)
    assert installed.get("kube-rehash") == __version__
    listed = sbom_packages(sbom_of(archive))
    assert sorted(f"{n}=={v}" for n, v in installed.items() if v not in listed.get(n, ())) == []


def test_the_image_sbom_lists_every_locked_runtime_dependency_at_its_version(release: Path) -> None:
    archive = image_archive(release)
    # The build tools of the lock are uninstalled from the image (Dockerfile): not run-time dependencies.
    pins = {n: v for n, v in locked_pins().items() if n not in {"setuptools", "wheel"}}
    assert missing_pins(sbom_packages(sbom_of(archive)), pins) == []
