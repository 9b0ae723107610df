"""The kubectl plugin's programs for scripts/build-dist.py: the frozen linux/amd64 executable and the zipapps.

Why a module of its own: build-dist.py assembles every release artefact; what goes into the plugin (which
distributions, which compiled modules for which Python and platform, the PyInstaller virtualenv, what each
platform needs) is its own subject, and tests/test_dist.py builds the zipapp for this machine from it.
docs/release.md describes both programs.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import re
import shutil
import subprocess
import sys
import time
import zipfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
KREW = ROOT / "plugins" / "krew"
FROZEN = "linux-amd64"
"""The platform whose plugin is the frozen executable: this machine's (PyInstaller freezes for its own)."""
PYTHONS = ("3.11", "3.12", "3.13")
"""The CPython versions the zipapps run on: for each, the compiled modules of the locked versions,
downloaded by pip (hash-checked against the lock) for each zipapp platform."""
WHEEL_PLATFORMS = {
    "linux-amd64": (
        "linux",
        ("x86_64",),
        ["manylinux_2_17_x86_64", "manylinux2014_x86_64", "manylinux_2_28_x86_64"],
    ),
    "linux-arm64": (
        "linux",
        ("aarch64",),
        ["manylinux_2_17_aarch64", "manylinux2014_aarch64", "manylinux_2_28_aarch64"],
    ),
    "darwin-amd64": ("darwin", ("x86_64",), ["macosx_14_0_x86_64"]),
    "darwin-arm64": ("darwin", ("arm64",), ["macosx_14_0_arm64"]),
}
"""Per zipapp platform: sys.platform, platform.machine() there, and the wheel platform tags pip downloads for
(macOS tags take the older macOS versions and universal2 too). linux-amd64 ships FROZEN; its zipapp is built
by tests/test_dist.py only, to run the zipapp's code under each of PYTHONS on this machine."""
FREEZE_VENV = ROOT / ".cache" / "pyinstaller"
"""The virtualenv PyInstaller freezes the plugin in: the runtime lock and requirements/freeze.txt, by hash."""
LEFT_OUT = {"kubernetes"}
"""Runtime requirements the plugin leaves out: the `kubernetes` package serves only the legacy kubeconfig
auth-provider (reconcile/kube/auth_provider.py) and is three quarters of the installed size."""


def runtime_distributions() -> list[importlib.metadata.Distribution]:
    """kube-rehash's runtime requirements but LEFT_OUT, with theirs, as installed here (the locked set)."""
    from packaging.requirements import Requirement

    seen: dict[str, importlib.metadata.Distribution] = {}
    todo = [Requirement(r) for r in importlib.metadata.requires("kube-rehash") or []]
    while todo:
        req = todo.pop()
        name = req.name.lower().replace("_", "-")
        if name in LEFT_OUT or name in seen or (req.marker and not req.marker.evaluate({"extra": ""})):
            continue
        dist = importlib.metadata.distribution(name)
        seen[name] = dist
        todo.extend(Requirement(r) for r in dist.requires or [])
    return [seen[name] for name in sorted(seen)]


def stage_site(site: Path, wheel: Path) -> list[str]:
    """The wheel's files and the runtime distributions' installed pure files (no bytecode, scripts or compiled
    modules: those are per platform); returns the names of the distributions that have compiled modules."""
    with zipfile.ZipFile(wheel) as zipped:
        zipped.extractall(site)
    compiled = []
    for dist in runtime_distributions():
        base = Path(str(dist.locate_file("")))
        for file in dist.files or []:
            rel = Path(str(file))
            if rel.parts[0] == ".." or "__pycache__" in rel.parts or rel.suffix in (".pyc", ".so"):
                continue
            target = site / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(base / rel, target)
        if any(str(f).endswith(".so") for f in dist.files or []):
            compiled.append(dist.metadata["Name"])
    return compiled


def add_compiled(site: Path, compiled: list[str], platform: str, downloads: Path) -> None:
    """The compiled modules of `compiled` for each of PYTHONS on `platform` (Python picks the file whose ABI
    tag is its own), from their locked wheels."""
    for python in PYTHONS:
        for wheel_file in download_compiled(compiled, python, platform, downloads):
            with zipfile.ZipFile(wheel_file) as zipped:
                for name in zipped.namelist():
                    if name.endswith(".so"):
                        zipped.extract(name, site)


def locked_pins(names: list[str]) -> str:
    """The lines of requirements/runtime.txt that pin `names`, with every hash (a requirements file)."""
    wanted = {n.lower().replace("_", "-") for n in names}
    out, keep = [], False
    for line in (ROOT / "requirements" / "runtime.txt").read_text(encoding="utf-8").splitlines():
        if re.match(r"[A-Za-z0-9]", line):
            keep = line.split("==")[0].lower() in wanted
        elif not line.startswith(" "):
            keep = False
        if keep:
            out.append(line)
    return "\n".join(out) + "\n"


def download_compiled(names: list[str], python: str, platform: str, downloads: Path) -> list[Path]:
    """The `platform` CPython `python` wheels of `names`, at their locked versions and hashes (pip)."""
    target = downloads / platform / python
    target.mkdir(parents=True, exist_ok=True)
    pins = downloads / "compiled.txt"
    pins.write_text(locked_pins(names), encoding="utf-8")
    abi = "cp" + python.replace(".", "")
    argv = [sys.executable, "-m", "pip", "download", "--quiet", "--disable-pip-version-check", "--no-deps"]
    argv += ["--only-binary=:all:", "--require-hashes", "--python-version", python, "--implementation", "cp"]
    argv += [
        "--abi",
        abi,
        *(f"--platform={tag}" for tag in WHEEL_PLATFORMS[platform][2]),
        "-r",
        str(pins),
        "-d",
        str(target),
    ]
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(
            f"build-dist: pip download of {', '.join(names)} for CPython {python} on {platform} failed:\n"
            + done.stderr
        )
    wheels = sorted(target.glob("*.whl"))
    assert len(wheels) == len(names), f"CPython {python} {platform}: {[w.name for w in wheels]} for {names}"
    return wheels


def zip_entry(name: str, epoch: int, mode: int) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(name, date_time=time.gmtime(max(epoch, 315532800))[:6])
    info.compress_type = zipfile.ZIP_DEFLATED
    info.external_attr = (0o100000 | mode) << 16
    return info


def build_zipapp(out: Path, site: Path, platform: str, epoch: int) -> None:
    """`#!/usr/bin/env python3` + a zip of __main__.py (the launcher, for `platform`) and site/, entries in
    name order."""
    files = sorted(p for p in site.rglob("*") if p.is_file())
    digest = hashlib.sha256()
    for path in files:
        digest.update(str(path.relative_to(site)).encode() + b"\0" + path.read_bytes())
    launcher = (KREW / "launcher.py").read_text(encoding="utf-8")
    system, machines, _ = WHEEL_PLATFORMS[platform]
    fill = {
        "BUILD_ID": digest.hexdigest()[:16],
        "PYTHONS": " ".join(PYTHONS),
        "PLATFORM": platform.replace("-", "/"),
    }
    fill |= {"SYSTEM": system, "MACHINES": " ".join(machines)}
    for key, value in fill.items():
        launcher = launcher.replace(f"@{key}@", value)
    with out.open("wb") as handle:
        handle.write(b"#!/usr/bin/env python3\n")
        with zipfile.ZipFile(handle, "w") as zipped:
            zipped.writestr(zip_entry("__main__.py", epoch, 0o644), launcher)
            for path in files:
                zipped.writestr(zip_entry(f"site/{path.relative_to(site)}", epoch, 0o644), path.read_bytes())
    out.chmod(0o755)


def freeze_python() -> Path:
    """The python of FREEZE_VENV, created (the runtime and freeze locks, by hash) unless complete. Created at
    its final path, not renamed there: the console scripts' `#!` lines name it, and PyInstaller copies one
    package's RECORD, which holds their hashes (docs/release.md, "Reproducibility")."""
    locks = [ROOT / "requirements" / name for name in ("runtime.txt", "freeze.txt")]
    stamp = hashlib.sha256(b"".join(lock.read_bytes() for lock in locks) + sys.version.encode()).hexdigest()
    venv = FREEZE_VENV / stamp[:16]
    if not (venv / ".complete").exists():
        shutil.rmtree(venv, ignore_errors=True)
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        install = [
            str(venv / "bin" / "python"),
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
        ]
        install += ["--require-hashes", "--no-deps"]
        subprocess.run([*install, *(arg for lock in locks for arg in ("-r", str(lock)))], check=True)
        (venv / ".complete").touch()
    return venv / "bin" / "python"


def build_frozen(out: Path, wheel_files: Path) -> Path:
    """`kubectl-rehash`: the CLI and its runtime dependencies but LEFT_OUT, frozen into one executable."""
    argv = [str(freeze_python()), str(ROOT / "scripts" / "freeze.py"), "onefile", "--name", "kubectl-rehash"]
    argv += ["--out", str(out), "--paths", str(wheel_files)]
    argv += [f"--exclude={name}" for name in sorted(LEFT_OUT)]
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"build-dist: PyInstaller failed:\n{done.stdout[-3000:]}{done.stderr[-3000:]}")
    return out / "kubectl-rehash"


def platform_name(platform: dict[str, Any]) -> str:
    """`<os>-<arch>` of a krew platform entry (its selector's labels)."""
    labels = platform["selector"]["matchLabels"]
    return f"{labels['os']}-{labels['arch']}"


def caveats(platforms: list[str]) -> str:
    """What the plugin needs on each platform, one line each (the manifest's caveats begin with these)."""
    versions = ", ".join(PYTHONS[:-1]) + f" or {PYTHONS[-1]}"
    lines = []
    for platform in platforms:
        name = platform.replace("-", "/")
        if platform == FROZEN:
            lines.append(f"{name}: a self-contained executable; needs no Python.")
        else:
            lines.append(
                f"{name}: a zipapp; needs CPython {versions} as python3 on PATH (unpacked once into "
                "~/.cache/kube-rehash)."
            )
    return "\n".join(lines) + "\n"
