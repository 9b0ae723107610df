"""Freeze the kube-rehash CLI with PyInstaller: the image's onedir tree and the linux/amd64 kubectl plugin.

Why one script: the image (Dockerfile, `onedir`: nothing is unpacked at start, so it runs on a read-only
root without /tmp) and the plugin (scripts/build-dist.py, `onefile`: one executable krew can install) must
carry the same program, so the PyInstaller options live here once. `rootfs` then lays out the image's whole
root for a `FROM scratch` stage: the frozen tree, the shared libraries its ELF files load (found with ldd,
which PyInstaller leaves to the system: glibc and the loader), /etc/passwd and /etc/group naming UID/GID
65532, an empty /tmp (the mount point for the pod's emptyDir). No shell, no package manager, no Python
outside the frozen tree.

What a scanner (syft, the release's SBOMs: docs/release.md) can read from a frozen program: both carry the
dist-info metadata of every distribution whose modules they bundle (METADATA, added to the spec); the image's
root records, for each system library it copies, the Debian package that library comes from at its version,
as a distroless image does (/var/lib/dpkg/status.d/<package>: the build stage's status paragraph;
<package>.md5sums: the copied files of it only), and the build stage's /etc/os-release.

Run by the interpreter that has kube-rehash and its locked runtime dependencies installed (or on `--paths`)
and requirements/freeze.txt (PyInstaller). Needs objdump and ldd (binutils, libc-bin) on Linux.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ENTRY = "from reconcile.cli.commands import main\n\nraise SystemExit(main())\n"
"""The program, as reconcile/__main__.py and the `kube-rehash` console script run it."""
EXCLUDED = ("rehash_simulator", "cryptography", "pip", "setuptools", "wheel", "PyInstaller", "tkinter")
"""Never frozen: the API simulator and cryptography (the `simulator` extra: demo and simulate then say what to
install), the build tools, and what no kube-rehash code imports."""
SYSTEM_EXTRA = ("libgcc_s.so.1",)
"""Loaded by glibc at run time, not linked (so ldd does not list it): pthread_exit and cancellation unwind
with it."""
PASSWD = "kube-rehash:x:65532:65532:kube-rehash:/nonexistent:/sbin/nologin\n"  # noqa: S105 (no password)
GROUP = "kube-rehash:x:65532:\n"


METADATA = """
# scripts/freeze.py: the dist-info of each distribution whose modules the analysis bundled (and of no other).
import importlib.metadata as _metadata
from PyInstaller.utils.hooks import copy_metadata as _copy_metadata
_owners = _metadata.packages_distributions()
_tops = {_name.split(".")[0] for _name, *_ in a.pure}
_tops |= {_dest.replace("\\\\", "/").split("/")[0].split(".")[0] for _dest, *_ in a.binaries + a.datas}
for _dist in sorted({_d for _top in _tops for _d in _owners.get(_top, [])}):
    for _source, _target in _copy_metadata(_dist):
        a.datas += Tree(_source, prefix=_target)
"""
"""Added to the spec between the analysis and the archive: what syft lists in the image's and the plugin's
SBOMs is exactly what they carry (a runtime requirement never imported, kubernetes's aiohttp, is not)."""


def freeze(mode: str, name: str, out: Path, paths: list[str], exclude: list[str]) -> Path:
    """PyInstaller `mode` (onedir or onefile) of the CLI as `name` into `out`; returns the executable."""
    with tempfile.TemporaryDirectory(prefix="kube-rehash-freeze-") as tmp:
        entry = Path(tmp) / f"{name}.py"
        entry.write_text(ENTRY, encoding="utf-8")
        spec = Path(tmp) / f"{name}.spec"
        argv = [sys.executable, "-m", "PyInstaller.utils.cliutils.makespec", f"--{mode}", "--name", name]
        argv += ["--strip", "--noupx", "--specpath", tmp]
        # Unbuffered stdout and stderr (what PYTHONUNBUFFERED=1 does): a killed pass loses no line.
        argv += ["--python-option", "u"]
        # Package data read through importlib.resources (the config schema, defaults), the IANA zones zoneinfo
        # finds in the tzdata package (no /usr/share/zoneinfo in the image), and every CLI module.
        argv += ["--collect-data", "reconcile", "--collect-submodules", "reconcile"]
        argv += ["--hidden-import", "tzdata", "--collect-data", "tzdata"]
        argv += [arg for path in paths for arg in ("--paths", path)]
        argv += [arg for module in (*EXCLUDED, *exclude) for arg in ("--exclude-module", module)]
        # PYTHONHASHSEED: the same bytecode and archive order on every build. PYTHONPATH as well as --paths:
        # the spec's --collect-data runs before the analysis --paths feeds, so it must find the package too.
        # PYINSTALLER_CONFIG_DIR: a cache of this build's own (the shared ~/.cache/pyinstaller breaks builds
        # running at once, e.g. two worktrees' `make dist`), empty, so nothing stale is reused.
        env = {**os.environ, "PYTHONHASHSEED": "0", "PYINSTALLER_CONFIG_DIR": str(Path(tmp) / "config")}
        env |= {"PYTHONPATH": os.pathsep.join(paths)} if paths else {}
        # cwd: the temporary directory, not the caller's (`python -m` puts it on sys.path, and a source tree
        # there, as the Dockerfile's /src, offers its build's egg-info as kube-rehash's metadata).
        subprocess.run([*argv, str(entry)], check=True, env=env, cwd=tmp, stdout=subprocess.DEVNULL)
        text = spec.read_text(encoding="utf-8")
        assert "\npyz = PYZ(" in text, f"{spec}: no PYZ step to add the metadata before"
        spec.write_text(text.replace("\npyz = PYZ(", METADATA + "\npyz = PYZ(", 1), encoding="utf-8")
        build = [sys.executable, "-m", "PyInstaller", "--noconfirm", "--log-level", "WARN"]
        build += ["--distpath", str(out), "--workpath", str(Path(tmp) / "work"), str(spec)]
        subprocess.run(build, check=True, env=env, cwd=tmp)
    return out / name / name if mode == "onedir" else out / name


def is_elf(path: Path) -> bool:
    with path.open("rb") as handle:
        return handle.read(4) == b"\x7fELF"


def system_libraries(tree: Path) -> set[Path]:
    """The shared libraries outside `tree` that its ELF files load (ldd), and SYSTEM_EXTRA. One that `tree`
    bundles under the same name (libssl, ...) is left out, but for the executable's own (the bootloader runs
    before the bundled ones are on the loader's path)."""
    bundled = {p.name for p in tree.rglob("*")}
    executable = tree / tree.name
    found: set[Path] = set()
    for path in sorted(p for p in tree.rglob("*") if p.is_file() and not p.is_symlink() and is_elf(p)):
        done = subprocess.run(["ldd", str(path)], capture_output=True, text=True, check=False)
        for line in done.stdout.splitlines():
            parts = line.split()
            # "libc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x...)" or "/lib64/ld-linux-x86-64.so.2 (0x...)"
            target = parts[2] if len(parts) >= 3 and parts[1] == "=>" else parts[0]
            if target.startswith("/") and (path == executable or Path(target).name not in bundled):
                found.add(Path(target))
    for name in SYSTEM_EXTRA:
        done = subprocess.run(["ldconfig", "-p"], capture_output=True, text=True, check=True)
        found |= {Path(ln.split(" => ")[1]) for ln in done.stdout.splitlines() if ln.strip().startswith(name)}
    return found


def copy_library(library: Path, root: Path) -> Path:
    """`library` at its path under `root`, and each symlink on the way to the file (the loader's names);
    returns the file's path."""
    path = library
    while True:
        target = root / path.relative_to("/")
        target.parent.mkdir(parents=True, exist_ok=True)
        if path.is_symlink():
            link = os.readlink(path)
            if not target.is_symlink():
                target.symlink_to(link)
            path = (path.parent / link) if not os.path.isabs(link) else Path(link)
            continue
        shutil.copy2(path, target)
        return path


def debian_package(path: Path) -> str:
    """The Debian package that installed `path` (dpkg-query -S), tried at its path, its real path and its
    /usr-merged alias (bookworm's packages name /lib/..., ldd may say /usr/lib/... or the reverse)."""
    text = str(path)
    aliases = [text, os.path.realpath(text)]
    aliases += [text.removeprefix("/usr")] if text.startswith("/usr/lib") else ["/usr" + text]
    for alias in aliases:
        done = subprocess.run(["dpkg-query", "-S", alias], capture_output=True, text=True, check=False)
        if done.returncode == 0:
            return done.stdout.split(":", 1)[0].split(",")[0].strip()
    raise SystemExit(f"freeze: no Debian package owns {path}: cannot record where it comes from")


def record_debian_packages(files: list[Path], root: Path) -> None:
    """For each Debian package some of `files` (copied into `root` at their own paths) come from: its status
    paragraph in root/var/lib/dpkg/status.d/<package> and the md5sums of those files only beside it."""
    owned: dict[str, list[Path]] = {}
    for path in files:
        owned.setdefault(debian_package(path), []).append(path)
    status = root / "var" / "lib" / "dpkg" / "status.d"
    status.mkdir(parents=True, exist_ok=True)
    for package, paths in sorted(owned.items()):
        query = ["dpkg-query", "--status", package]
        paragraph = subprocess.run(query, capture_output=True, text=True, check=True).stdout
        (status / package).write_text(paragraph.strip() + "\n", encoding="utf-8")
        sums = "".join(
            f"{hashlib.md5((root / p.relative_to('/')).read_bytes()).hexdigest()}  {str(p).lstrip('/')}\n"  # noqa: S324 (dpkg's format)
            for p in sorted(paths)
        )
        (status / f"{package}.md5sums").write_text(sums, encoding="utf-8")


def rootfs(tree: Path, root: Path, prefix: str, bindir: str) -> None:
    """The image's root: `tree` at `prefix`, a symlink to its executable in `bindir`, the system libraries,
    the 65532 user and group, an empty /tmp; the libraries' Debian packages and the OS (module docstring)."""
    shutil.copytree(tree, root / prefix.lstrip("/"), symlinks=True)
    copied = [copy_library(library, root) for library in sorted(system_libraries(tree))]
    record_debian_packages(sorted(set(copied)), root)
    executable = f"{prefix}/{tree.name}"
    (root / bindir.lstrip("/")).mkdir(parents=True, exist_ok=True)
    (root / bindir.lstrip("/") / tree.name).symlink_to(executable)
    (root / "etc").mkdir(exist_ok=True)
    (root / "etc" / "passwd").write_text(PASSWD, encoding="utf-8")
    (root / "etc" / "group").write_text(GROUP, encoding="utf-8")
    shutil.copyfile(os.path.realpath("/etc/os-release"), root / "etc" / "os-release")
    (root / "tmp").mkdir(mode=0o1777)
    (root / "tmp").chmod(0o1777)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("mode", choices=["onedir", "onefile"])
    parser.add_argument("--name", default="kube-rehash")
    parser.add_argument("--out", type=Path, required=True, help="PyInstaller's dist directory")
    parser.add_argument("--paths", action="append", default=[], help="extra import path (the wheel's files)")
    parser.add_argument("--exclude", action="append", default=[], help="a further module left out")
    parser.add_argument("--rootfs", type=Path, help="onedir only: lay out the image's root here")
    args = parser.parse_args()
    executable = freeze(args.mode, args.name, args.out, args.paths, args.exclude)
    if args.rootfs is not None:
        rootfs(executable.parent, args.rootfs, prefix=f"/opt/{args.name}", bindir="/usr/local/bin")
    return 0


if __name__ == "__main__":
    sys.exit(main())
