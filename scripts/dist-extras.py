"""The release artefacts scripts/build-dist.py does not make: the image as an OCI archive and an SBOM per
artefact, added to dist/ and to its SHA256SUMS (`make dist`; docs/release.md says what each is).

    dist-extras.py image-archive   dist/kube-rehash-image-<version>.oci.tar (podman save --format oci-archive)
    dist-extras.py sbom            dist/<artefact>.spdx.json for every artefact, written by the pinned syft

Why a second script: build-dist.py builds what comes from the Python tree and helm in seconds, with no
container tool; the image archive needs podman and the image (`make image`), the SBOMs the pinned syft
(`make syft`, tools/syft/go.mod). Each step rewrites SHA256SUMS over every artefact in dist/ (SBOMs included,
the signature bundle not), so one signature of it (scripts/sign-dist.py) still covers them all. Both are
cached:
the archive by the image's ID, each SBOM by the sha256 of its artefact, the lock and syft (dist/.extras.json).

What an SBOM lists, per artefact (the rule tests/test_sbom.py checks):
- the wheel and the sdist *declare* the runtime dependencies (Requires-Dist, version ranges) but carry none.
  Their SBOM is syft's scan of the unpacked artefact beside the lock the release is tested with,
  requirements/runtime.txt (scanned as `/requirements.txt`): kube-rehash itself, and every locked dependency
  at its locked version, located in that file;
- each plugin archive carries its dependencies: syft scans the unpacked archive and, inside it, the unpacked
  zipapp (linux/arm64, darwin/*) or the dist-info directories read out of the frozen executable's archive
  (linux/amd64: PyInstaller's CArchive, read with the PyInstaller of the freeze virtualenv); its SBOM lists
  each distribution the plugin carries (the runtime set but `kubernetes`'s, plugin_programs.LEFT_OUT) at its
  version;
- the chart carries no package: its SBOM lists its files with their sha256;
- the image archive: syft's scan of the OCI image: the dist-info of every distribution frozen into it
  (scripts/freeze.py copies them) and, for the system libraries copied from the build stage, the Debian
  package each comes from at its version (/var/lib/dpkg/status.d/, distroless style, written by freeze.py).
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parent.parent
LOCK = ROOT / "requirements" / "runtime.txt"
IMAGE = os.environ.get("KUBE_REHASH_IMAGE", "localhost/kube-rehash:dev")
"""The image `make image` builds (tests/image/pod.py's default)."""
SBOM_SUFFIX = ".spdx.json"
PACKAGED = (".whl", ".tar.gz", ".tgz", ".zip", ".oci.tar")
"""The artefacts that get an SBOM: every package of the release (not the krew manifest, a text file)."""
SIGNATURE_SUFFIX = ".sigstore.json"
LOCKED_AS = "requirements.txt"
"""The lock's name beside an unpacked wheel or sdist: a name syft's requirements cataloger reads."""
CACHE = ".extras.json"
"""dist/.extras.json: what the archive and each SBOM were made from (the cache's key), not an artefact."""


def load_build_dist() -> ModuleType:
    """scripts/build-dist.py as a module: its DIST, version() and sha256_of() are the one source of each."""
    spec = importlib.util.spec_from_file_location("build_dist", ROOT / "scripts" / "build-dist.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


BUILD_DIST = load_build_dist()
PLUGIN: ModuleType = sys.modules["plugin_programs"]
"""scripts/plugin_programs.py, as build-dist.py imported it: LEFT_OUT, freeze_python()."""


def image_archive_name(version: str) -> str:
    return f"kube-rehash-image-{version}.oci.tar"


def syft_binary() -> Path:
    """The pinned syft: .cache/syft/<its version in tools/syft/go.mod>/syft (or under $SYFT_CACHE)."""
    gomod = (ROOT / "tools" / "syft" / "go.mod").read_text(encoding="utf-8")
    match = re.search(r"^\s*(?:require\s+)?github\.com/anchore/syft\s+(v\S+)", gomod, re.MULTILINE)
    assert match, "tools/syft/go.mod does not require github.com/anchore/syft"
    return Path(os.environ.get("SYFT_CACHE", ROOT / ".cache" / "syft")) / match.group(1) / "syft"


def podman_env() -> dict[str, str]:
    """podman with the project's containers.conf (runc, cgroupfs), as `make image` and tests/image run it."""
    conf = os.environ.get("CONTAINERS_CONF", str(ROOT / "tests" / "image" / "containers.conf"))
    return {**os.environ, "CONTAINERS_CONF": conf}


def artefacts(dist: Path) -> list[Path]:
    """The packages in dist/ (PACKAGED): what gets an SBOM."""
    return [p for p in sorted(dist.iterdir()) if p.is_file() and p.name.endswith(PACKAGED)]


def rewrite_sums(dist: Path) -> None:
    """SHA256SUMS over every artefact and SBOM in dist/, in build-dist.py's `sha256sum -c` format."""
    covered = [p for p in sorted(dist.iterdir()) if p.is_file() and not p.name.startswith(".")]
    covered = [p for p in covered if p.name != "SHA256SUMS" and not p.name.endswith(SIGNATURE_SUFFIX)]
    sums = "".join(f"{BUILD_DIST.sha256_of(p)}  {p.name}\n" for p in covered)
    (dist / "SHA256SUMS").write_text(sums, encoding="utf-8")


def read_cache(dist: Path) -> dict[str, str]:
    path = dist / CACHE
    cached: dict[str, str] = json.loads(path.read_text()) if path.is_file() else {}
    return cached


def write_cache(dist: Path, cache: dict[str, str]) -> None:
    (dist / CACHE).write_text(json.dumps(cache, indent=1, sort_keys=True) + "\n")


def save_image(dist: Path, image: str) -> Path:
    """dist/kube-rehash-image-<version>.oci.tar: `image` saved as an OCI archive (unless already, by ID)."""
    env = podman_env()
    inspect = ["podman", "image", "inspect", "--format", "{{.Id}}", image]
    found = subprocess.run(inspect, env=env, capture_output=True, text=True, check=False)
    if found.returncode != 0:
        raise SystemExit(f"dist-extras: no image {image}: run `make image`\n{found.stderr}")
    image_id = found.stdout.strip()
    archive = dist / image_archive_name(BUILD_DIST.version())
    cache = read_cache(dist)
    if archive.is_file() and cache.get(archive.name) == image_id:
        print(f"dist: {archive.name} up to date (image {image_id[:12]})")
        return archive
    partial = archive.with_name(archive.name + ".partial")
    partial.unlink(missing_ok=True)
    save = ["podman", "save", "--quiet", "--format", "oci-archive", "-o", str(partial), image]
    subprocess.run(save, env=env, check=True)
    partial.rename(archive)
    cache[archive.name] = image_id
    write_cache(dist, cache)
    print(f"dist: {archive.name} ({archive.stat().st_size / 1e6:.1f} MB, image {image_id[:12]})")
    return archive


FROZEN_METADATA = """
import sys
from pathlib import Path
from PyInstaller.archive.readers import CArchiveReader

reader = CArchiveReader(sys.argv[1])
for name in reader.toc:
    if ".dist-info/" in name:
        target = Path(sys.argv[2], name)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(reader.extract(name))
"""
"""Run by the freeze virtualenv's python: a frozen executable's dist-info files, into a folder."""


def is_frozen(path: Path) -> bool:
    """A PyInstaller onefile executable (ELF, with its archive's cookie)."""
    data = path.read_bytes()
    return data[:4] == b"\x7fELF" and b"MEI\014\013\012\013\016" in data


def unpack(artefact: Path, into: Path) -> None:
    """The artefact's files under `into`, and those of every zip among them (the plugin's zipapp), or a frozen
    executable's dist-info directories, beside it under `<name>.unpacked/` (syft reads installed packages'
    metadata from directories, not from archives)."""
    if artefact.suffix in (".whl", ".zip"):
        with zipfile.ZipFile(artefact) as archive:
            archive.extractall(into)  # noqa: S202 (zipfile drops absolute and `..` parts)
    else:
        with tarfile.open(artefact) as tar:
            tar.extractall(into, filter="data")
    for inner in [p for p in into.rglob("*") if p.is_file() and not p.is_symlink()]:
        unpacked = inner.with_name(inner.name + ".unpacked")
        if zipfile.is_zipfile(inner):
            with zipfile.ZipFile(inner) as app:
                app.extractall(unpacked)  # noqa: S202 (as above)
        elif is_frozen(inner):
            python = str(PLUGIN.freeze_python())
            subprocess.run([python, "-c", FROZEN_METADATA, str(inner), str(unpacked)], check=True)


def scan(syft: Path, artefact: Path, out: Path, version: str) -> None:
    """syft's SPDX 2.3 JSON of `artefact` into `out` (the rules in this module's docstring)."""
    env = {**os.environ, "SYFT_CHECK_FOR_APP_UPDATE": "false"}
    argv = [str(syft), "scan", "--quiet", "--source-name", artefact.name, "--source-version", version]
    argv += ["--output", f"spdx-json={out}"]
    if artefact.name.endswith(".oci.tar"):
        subprocess.run([*argv, f"oci-archive:{artefact}"], env=env, check=True)
        return
    with tempfile.TemporaryDirectory(prefix="kube-rehash-sbom-") as tmp:
        tree = Path(tmp) / "content"
        unpack(artefact, tree)
        if artefact.name.startswith("kube_rehash-"):  # the wheel and the sdist: with the lock
            shutil.copy(LOCK, tree / LOCKED_AS)
        elif artefact.suffix == ".tgz":  # the chart: no packages, its files and their digests
            env["SYFT_FILE_METADATA_SELECTION"] = "all"
            env["SYFT_FILE_METADATA_DIGESTS"] = "sha256"
        subprocess.run([*argv, f"dir:{tree}"], env=env, check=True)


def sbom_inputs(syft: Path, artefact: Path) -> str:
    digest = hashlib.sha256(syft.read_bytes() + LOCK.read_bytes() + Path(__file__).read_bytes())
    return f"{BUILD_DIST.sha256_of(artefact)} {digest.hexdigest()}"


def write_sboms(dist: Path) -> list[Path]:
    """dist/<artefact>.spdx.json for each artefact whose inputs changed since the last run."""
    syft = syft_binary()
    if not os.access(syft, os.X_OK):
        raise SystemExit(f"dist-extras: syft not built ({syft}): run `make syft`")
    cache, written = read_cache(dist), []
    for artefact in artefacts(dist):
        out = dist / (artefact.name + SBOM_SUFFIX)
        key, inputs = out.name, sbom_inputs(syft, artefact)
        if out.is_file() and cache.get(key) == inputs:
            continue
        scan(syft, artefact, out, BUILD_DIST.version())
        cache[key] = inputs
        written.append(out)
    write_cache(dist, cache)
    print(f"dist: {len(written)} SBOMs written, {len(artefacts(dist)) - len(written)} up to date")
    return written


def main(argv: list[str]) -> int:
    if len(argv) != 1 or argv[0] not in ("image-archive", "sbom"):
        print("usage: dist-extras.py image-archive|sbom", file=sys.stderr)
        return 2
    dist: Path = BUILD_DIST.DIST
    if not (dist / "SHA256SUMS").is_file():
        raise SystemExit(f"dist-extras: {dist} has no SHA256SUMS: run `make dist` first")
    if argv[0] == "image-archive":
        save_image(dist, IMAGE)
    else:
        write_sboms(dist)
    rewrite_sums(dist)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
