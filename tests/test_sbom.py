"""The release's SBOMs (scripts/dist-extras.py, syft built from Go modules: `make syft`), parsed as SPDX 2.3
JSON and checked against the lock and against the artefacts themselves, by the rule docs/release.md states
per artefact: the wheel and the sdist list every dependency of requirements/runtime.txt at its locked version
(they declare the dependencies, the lock pins them) and every one the wheel declares; each plugin archive
(frozen or zipapp) lists exactly the distributions it carries, at their locked versions; the chart lists each
of its files with its sha256; the image's lists every distribution frozen into it and every Debian package its
system libraries come from, read here from the archive without syft, and those records are checked against the
image's files themselves (the frozen set is the runtime closure; each library's md5 is the one recorded, and
no library goes unrecorded). Marker `image` (the image archive) and `helm` (dist/'s chart).
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
from tests.release import (
    EXTRAS,
    frozen_tops,
    image_archive,
    locked_pins,
    normalize,
    owning_distributions,
    sbom_packages,
    top_name,
)

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


def python_packages(sbom: Path) -> dict[str, set[str]]:
    """The SBOM's Python packages (purl pkg:pypi/...), as sbom_packages gives them."""
    document = json.loads(sbom.read_text(encoding="utf-8"))
    names = {
        normalize(package["name"])
        for package in document.get("packages", [])
        for ref in package.get("externalRefs", [])
        if ref.get("referenceType") == "purl" and ref["referenceLocator"].startswith("pkg:pypi/")
    }
    return {name: versions for name, versions in sbom_packages(sbom).items() if name in names}


def test_each_plugin_archive_sbom_lists_exactly_the_distributions_it_carries_at_their_locked_versions(
    release: Path, tmp_path: Path
) -> None:
    archives = sorted(release.glob(f"kubectl-rehash-v{__version__}-*"))
    archives = [a for a in archives if not a.name.endswith(EXTRAS.SBOM_SUFFIX)]
    # The frozen linux/amd64 executable and the three zipapps.
    assert len(archives) == 4
    carried = runtime_closure("kube-rehash", set(map(normalize, EXTRAS.PLUGIN.LEFT_OUT))) | {"kube-rehash"}
    pins = {**locked_pins(), "kube-rehash": __version__}
    assert carried <= set(pins)
    for archive in archives:
        listed = python_packages(sbom_of(archive))
        assert listed == {name: {pins[name]} for name in carried}, archive.name
    # The frozen one: those are the distributions whose modules are in the executable, no fewer, no more.
    frozen = next(a for a in archives if a.name.endswith(f"-{EXTRAS.PLUGIN.FROZEN}.tar.gz"))
    with tarfile.open(frozen) as tar:
        tar.extract("kubectl-rehash", tmp_path, filter="data")
    assert owning_distributions(frozen_tops(tmp_path / "kubectl-rehash"), carried) == carried


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


def apply_layer(files: dict[str, bytes], layer: tarfile.TarFile) -> None:
    """One image layer over `files` (the files so far): its whiteouts remove, its files add."""
    for member in layer:
        path = member.name.removeprefix("./")
        folder, _, base = path.rpartition("/")
        if base.startswith(".wh."):
            hidden = folder + "/" if base == ".wh..wh..opq" else f"{folder}/{base[4:]}".lstrip("/")
            for gone in [p for p in files if p == hidden or p.startswith(hidden.rstrip("/") + "/")]:
                del files[gone]
        elif member.isfile():
            files[path] = layer.extractfile(member).read()  # type: ignore[union-attr]


def image_files(archive: Path) -> dict[str, bytes]:
    """The image's final filesystem (regular files; 42 MB): its layers applied in order, whiteouts removing
    what they hide."""
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
    return files


def frozen_distributions(files: dict[str, bytes]) -> dict[str, str]:
    """{name: version} of every *.dist-info/METADATA in the image."""
    found = {}
    for path, data in files.items():
        if path.endswith(".dist-info/METADATA"):
            metadata = email.message_from_bytes(data)
            found[normalize(metadata["Name"])] = metadata["Version"]
    return found


DPKG = "var/lib/dpkg/status.d/"


def debian_packages(files: dict[str, bytes]) -> dict[str, str]:
    """{name: version} of every Debian package recorded in the image (status.d, as distroless images do)."""
    found = {}
    for path, data in files.items():
        if path.startswith(DPKG) and not path.endswith(".md5sums"):
            fields = dict(re.findall(r"^([A-Za-z-]+): (.*)$", data.decode(), re.MULTILINE))
            assert fields["Package"] == path.removeprefix(DPKG) and fields["Status"].endswith(" installed")
            found[fields["Package"]] = fields["Version"]
    return found


def test_the_image_sbom_lists_every_distribution_and_debian_package_recorded_in_the_image(
    release: Path,
) -> None:
    archive = image_archive(release)
    files = image_files(archive)
    recorded = {**frozen_distributions(files), **{normalize(n): v for n, v in debian_packages(files).items()}}
    assert recorded.get("kube-rehash") == __version__
    assert {"libc6", "zlib1g", "libgcc-s1"} <= set(recorded)
    listed = sbom_packages(sbom_of(archive))
    assert sorted(f"{n}=={v}" for n, v in recorded.items() if v not in listed.get(n, ())) == []


FROZEN_TREE = "opt/kube-rehash/"


def test_the_image_records_exactly_the_distributions_whose_modules_it_carries_at_locked_versions(
    release: Path, tmp_path: Path
) -> None:
    files = image_files(image_archive(release))
    frozen = frozen_distributions(files)
    pins = {**locked_pins(), "kube-rehash": __version__}
    # Of the runtime closure (the `simulator` extra is not installed); no build tool.
    closure = runtime_closure("kube-rehash", set()) | {"kube-rehash"}
    assert {"kubernetes", "requests", "xxhash"} <= set(frozen) <= closure
    assert frozen == {name: pins[name] for name in frozen}
    # What the program holds: the PYZ's modules and the executable's archive, and the files beside it.
    executable = tmp_path / "kube-rehash"
    executable.write_bytes(files[FROZEN_TREE + "kube-rehash"])
    tops = frozen_tops(executable)
    tops |= {top_name(p.removeprefix(FROZEN_TREE + "_internal/")) for p in files if p.startswith(FROZEN_TREE)}
    assert owning_distributions(tops, closure) == set(frozen)
    assert missing_pins(python_packages(sbom_of(image_archive(release))), frozen) == []


def test_every_system_library_in_the_image_is_one_its_debian_records_name_with_its_md5(release: Path) -> None:
    files = image_files(image_archive(release))
    recorded: dict[str, str] = {}
    for package in debian_packages(files):
        for line in files[f"{DPKG}{package}.md5sums"].decode().splitlines():
            md5, path = line.split("  ", 1)
            recorded[path] = md5
    libraries = {p for p, data in files.items() if data[:4] == b"\x7fELF" and not p.startswith(FROZEN_TREE)}
    assert any("libc.so" in p for p in libraries)
    assert libraries == set(recorded)
    assert {p: hashlib.md5(files[p]).hexdigest() for p in libraries} == recorded  # noqa: S324 (dpkg's sums)
