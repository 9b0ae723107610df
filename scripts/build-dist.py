"""Build the release artefacts into dist/ (`make dist`; docs/release.md: what each is, how to verify it).

- the wheel and the sdist of kube-rehash (setuptools, from the working tree);
- the Helm chart, packaged by the pinned helm (`helm package`, .cache/helm);
- a kubectl plugin archive kubectl-rehash-v<version>-<os>-<arch>.tar.gz per platform of the krew template
  (plugins/krew/rehash.yaml), each holding `kubectl-rehash` and LICENSE. On linux/amd64 (FROZEN, built
  here) `kubectl-rehash` is one self-contained executable, the CLI frozen by PyInstaller (scripts/freeze.py,
  `onefile`): no Python needed. On the others it is a zipapp of the CLI (plugins/krew/launcher.py is its
  entry) with the locked runtime dependencies this interpreter has installed, and the compiled ones' modules
  for each of PYTHONS on that platform (from their locked wheels): it needs one of those CPythons;
- the krew manifest rehash.yaml, written from the template with each platform's uri (the release download URL,
  URI_TEMPLATE), the sha256 of its archive and a caveat per platform saying what it needs;
- SHA256SUMS over all of them, in `sha256sum -c` format.

The steps that need the network (or pip's cache): the locked wheels of the compiled dependencies for the
zipapps (`pip download --require-hashes`), and, once, PyInstaller's virtualenv (FREEZE_VENV: the runtime
lock and requirements/freeze.txt, by hash, cached by a stamp of both). The plugin's parts (FROZEN, PYTHONS,
FREEZE_VENV, the zipapp and the freeze) are in scripts/plugin_programs.py.

Why a stamp: the build takes a minute, and tests/test_dist.py runs it in `make test`. dist/.stamp holds a
digest of every input (the tracked files' contents, the helm binary, this interpreter); when it matches, the
script returns at once. Timestamps inside the zipapps and the archives come from SOURCE_DATE_EPOCH (default:
the last commit's time), so their bytes depend on their inputs alone; PyInstaller's output does too, given the
same interpreter, lock and PYTHONHASHSEED (docs/release.md, "Reproducibility").
"""

from __future__ import annotations

import gzip
import hashlib
import io
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import zipfile
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))  # plugin_programs, beside this script
from plugin_programs import (
    FROZEN,
    KREW,
    WHEEL_PLATFORMS,
    add_compiled,
    build_frozen,
    build_zipapp,
    caveats,
    platform_name,
    stage_site,
)

ROOT = Path(__file__).resolve().parent.parent
DIST = Path(os.environ.get("KUBE_REHASH_DIST") or ROOT / "dist")
"""Where the artefacts go: dist/, or $KUBE_REHASH_DIST (tests/test_dist.py builds a second copy there)."""
URI_TEMPLATE = "https://github.com/kube-rehash/kube-rehash/releases/download/{tag}/{archive}"
"""Where the release workflow uploads the plugin archive (docs/release.md): the manifest's uri."""
HELM_ENV_PREFIX = "HELM_"


def version() -> str:
    match = re.search(r'__version__ = "([^"]+)"', (ROOT / "reconcile" / "__init__.py").read_text())
    assert match, "reconcile/__init__.py has no __version__"
    return match.group(1)


def helm_binary() -> Path:
    gomod = (ROOT / "tools" / "helm" / "go.mod").read_text(encoding="utf-8")
    match = re.search(r"^\s*(?:require\s+)?helm\.sh/helm/v4\s+(v\S+)", gomod, re.MULTILINE)
    assert match, "tools/helm/go.mod does not require helm.sh/helm/v4"
    return Path(os.environ.get("HELM_CACHE", ROOT / ".cache" / "helm")) / match.group(1) / "helm"


def tracked_files() -> list[str]:
    argv = ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"]
    out = subprocess.run(argv, cwd=ROOT, capture_output=True, check=True).stdout
    return sorted(name for name in out.decode().split("\0") if name and (ROOT / name).is_file())


def input_stamp(helm: Path) -> str:
    digest = hashlib.sha256()
    for name in [
        *tracked_files(),
        "scripts/build-dist.py",
        "scripts/freeze.py",
        "scripts/plugin_programs.py",
        "plugins/krew/launcher.py",
    ]:
        digest.update(name.encode() + b"\0" + (ROOT / name).read_bytes())
    digest.update(helm.read_bytes() if helm.exists() else b"no helm")
    # The time stamped into the archives too: it moves with every commit (source_date_epoch).
    digest.update(f"{sys.version} {source_date_epoch()}".encode())
    return digest.hexdigest()


def source_date_epoch() -> int:
    if "SOURCE_DATE_EPOCH" in os.environ:
        return int(os.environ["SOURCE_DATE_EPOCH"])
    out = subprocess.run(
        ["git", "log", "-1", "--format=%ct"], cwd=ROOT, capture_output=True, text=True, check=False
    )
    return int(out.stdout.strip()) if out.returncode == 0 and out.stdout.strip() else 315532800


def build_python(epoch: int) -> None:
    """Wheel and sdist through setuptools' PEP 517 backend, without isolation (the locked setuptools), from
    a copy of the tracked files: an `*.egg-info` left in the working tree (an editable install's) would make
    setuptools merge its old SOURCES.txt into the sdist, so two builds of one commit would differ."""
    # The backend rewrites sys.argv: the directory is read once, first.
    code = "import setuptools.build_meta as b, sys; d = sys.argv[1]; b.build_sdist(d); b.build_wheel(d)"
    env = {**os.environ, "SOURCE_DATE_EPOCH": str(epoch)}
    with tempfile.TemporaryDirectory(prefix="kube-rehash-dist-") as tmp:
        source = Path(tmp) / "src"
        for name in tracked_files():  # the files git tracks or would (not ignored ones)
            if not (ROOT / name).is_symlink():
                (source / name).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(ROOT / name, source / name)
        subprocess.run(
            [sys.executable, "-c", code, str(DIST)], cwd=source, env=env, check=True, capture_output=True
        )


def normalize_sdist(sdist: Path, epoch: int) -> None:
    """Rewrite the sdist with fixed times and owners, entries in name order (setuptools keeps the files'
    modification times and the gzip header's time, so two builds of the same tree would differ)."""
    raw = io.BytesIO()
    with tarfile.open(sdist) as source, tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for info in sorted(source.getmembers(), key=lambda m: m.name):
            data = source.extractfile(info) if info.isfile() else None
            info.mtime, info.uid, info.gid, info.uname, info.gname = epoch, 0, 0, "", ""
            info.pax_headers = {}
            tar.addfile(info, data)
    with sdist.open("wb") as handle, gzip.GzipFile(filename="", mode="wb", fileobj=handle, mtime=0) as gz:
        gz.write(raw.getvalue())


def build_chart(helm: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(HELM_ENV_PREFIX) and k != "KUBECONFIG"}
    home = ROOT / ".cache" / "helm" / "home"
    env.update(
        HELM_CONFIG_HOME=str(home / "config"),
        HELM_CACHE_HOME=str(home / "cache"),
        HELM_DATA_HOME=str(home / "data"),
    )
    chart = ROOT / "charts" / "kube-rehash"
    subprocess.run(
        [str(helm), "package", str(chart), "--destination", str(DIST)],
        env=env,
        check=True,
        capture_output=True,
    )


def build_plugins(wheel: Path, tag: str, epoch: int, tmp: Path) -> dict[str, Path]:
    """One archive per platform of the krew template: {"<os>-<arch>": archive}."""
    template = yaml.safe_load((KREW / "rehash.yaml").read_text(encoding="utf-8"))
    platforms = [platform_name(p) for p in template["spec"]["platforms"]]
    missing = set(platforms) - {FROZEN, *WHEEL_PLATFORMS}
    assert not missing, f"plugins/krew/rehash.yaml names platforms build-dist cannot build: {sorted(missing)}"
    with zipfile.ZipFile(wheel) as zipped:
        zipped.extractall(tmp / "wheel")  # noqa: S202 (the wheel this script has just built)
    compiled = stage_site(tmp / "site", wheel)
    archives = {}
    for platform in platforms:
        if platform == FROZEN:
            program = build_frozen(tmp / "frozen", tmp / "wheel")
        else:
            site = tmp / f"site-{platform}"
            shutil.copytree(tmp / "site", site)
            add_compiled(site, compiled, platform, tmp / "downloads")
            program = tmp / f"kubectl-rehash-{platform}"
            build_zipapp(program, site, platform, epoch)
        archives[platform] = DIST / f"kubectl-rehash-{tag}-{platform}.tar.gz"
        members = {"kubectl-rehash": (program, 0o755), "LICENSE": (ROOT / "LICENSE", 0o644)}
        build_archive(archives[platform], members, epoch)
    return archives


def build_archive(out: Path, members: dict[str, tuple[Path, int]], epoch: int) -> None:
    """A tar.gz with fixed owners, modes and times (gzip header without name or time)."""
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for name, (path, mode) in sorted(members.items()):
            info = tarfile.TarInfo(name)
            data = path.read_bytes()
            info.size, info.mode, info.mtime = len(data), mode, epoch
            tar.addfile(info, io.BytesIO(data))
    with out.open("wb") as handle, gzip.GzipFile(filename="", mode="wb", fileobj=handle, mtime=0) as gz:
        gz.write(raw.getvalue())


def sha256_of(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


class BlockDumper(yaml.SafeDumper):
    """Multi-line strings as literal blocks (`|`), as in the template."""


BlockDumper.add_representer(
    str,
    lambda dumper, text: dumper.represent_scalar(
        "tag:yaml.org,2002:str", text, style="|" if "\n" in text else None
    ),
)


def write_manifest(archives: dict[str, Path], tag: str) -> Path:
    """plugins/krew/rehash.yaml with each platform's uri, its archive's sha256 and a caveat per platform."""
    manifest = yaml.safe_load((KREW / "rehash.yaml").read_text(encoding="utf-8"))
    manifest["spec"]["version"] = tag
    manifest["spec"]["caveats"] = caveats(list(archives)) + manifest["spec"]["caveats"]
    for platform in manifest["spec"]["platforms"]:
        archive = archives[platform_name(platform)]
        platform["uri"] = URI_TEMPLATE.format(tag=tag, archive=archive.name)
        platform["sha256"] = sha256_of(archive)
    out = DIST / "rehash.yaml"
    header = f"# krew manifest of kube-rehash {tag}, written by scripts/build-dist.py (make dist).\n"
    text = yaml.dump(manifest, Dumper=BlockDumper, sort_keys=False, width=200)
    out.write_text(header + text, encoding="utf-8")
    return out


def build() -> None:
    helm = helm_binary()
    if not helm.exists():
        raise SystemExit(f"build-dist: helm not built ({helm}): run `make helm`")
    stamp = input_stamp(helm)
    if (DIST / ".stamp").is_file() and (DIST / ".stamp").read_text() == stamp:
        print("dist: up to date")
        return
    epoch, tag = source_date_epoch(), f"v{version()}"
    shutil.rmtree(DIST, ignore_errors=True)
    DIST.mkdir()
    start = time.monotonic()
    build_python(epoch)
    build_chart(helm)
    normalize_sdist(next(DIST.glob("kube_rehash-*.tar.gz")), epoch)
    wheel = next(DIST.glob("kube_rehash-*.whl"))
    with tempfile.TemporaryDirectory() as tmp:
        archives = build_plugins(wheel, tag, epoch, Path(tmp))
    write_manifest(archives, tag)
    artefacts = sorted(p for p in DIST.iterdir() if p.is_file() and not p.name.startswith("."))
    sums = "".join(f"{sha256_of(p)}  {p.name}\n" for p in artefacts)
    (DIST / "SHA256SUMS").write_text(sums, encoding="utf-8")
    (DIST / ".stamp").write_text(stamp)
    print(f"dist: {len(artefacts)} artefacts and SHA256SUMS in {time.monotonic() - start:.1f} s")
    for path in artefacts:
        print(f"  {path.name} ({path.stat().st_size / 1e6:.1f} MB)")


if __name__ == "__main__":
    build()
