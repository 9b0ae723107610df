"""kubectl-rehash: the kube-rehash CLI as one file (a zipapp), the kubectl plugin krew installs on the
platforms that get no frozen executable (all but linux/amd64, scripts/build-dist.py).

Why extracted: the archive carries kube-rehash and the locked runtime dependencies it imports, some of them
compiled (xxhash, rpds-py, pyyaml's C loader), and Python cannot import a compiled module from inside a zip.
So the first run unpacks the archive's `site/` once into a cache directory named after the build
($KUBE_REHASH_PLUGIN_CACHE, else $XDG_CACHE_HOME/kube-rehash or ~/.cache/kube-rehash), atomically (a
temporary directory renamed into place), and every run imports from there. The compiled modules are
those of the CPython versions in PYTHONS for one platform (SYSTEM, MACHINES), hence the check below (kept to
syntax old Pythons parse, so that they can say so). scripts/build-dist.py writes this file into the archive as
its __main__.py, with BUILD_ID replaced by the digest of the archive's contents, PYTHONS by the versions it
carries, PLATFORM by krew's name of the platform, SYSTEM by its sys.platform and MACHINES by its
platform.machine() names.
"""

import os
import platform
import shutil
import sys
import tempfile
import zipfile

BUILD_ID = "@BUILD_ID@"
PYTHONS = "@PYTHONS@".split()  # noqa: SIM905 (a placeholder scripts/build-dist.py fills in)
PLATFORM = "@PLATFORM@"
SYSTEM = "@SYSTEM@"
MACHINES = "@MACHINES@".split()  # noqa: SIM905


def cache_dir() -> str:
    base = os.environ.get("KUBE_REHASH_PLUGIN_CACHE")
    if not base:
        xdg = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        base = os.path.join(xdg, "kube-rehash")
    return os.path.join(base, f"plugin-{BUILD_ID}")


def unpack(archive: str, target: str) -> None:
    """The archive's site/ into target, all or nothing (a concurrent first run may win the rename)."""
    parent = os.path.dirname(target)
    os.makedirs(parent, exist_ok=True)
    stage = tempfile.mkdtemp(prefix=".unpack-", dir=parent)
    try:
        with zipfile.ZipFile(archive) as zipped:
            for name in zipped.namelist():
                if name.startswith("site/") and not name.endswith("/"):
                    zipped.extract(name, stage)
        try:
            os.rename(os.path.join(stage, "site"), target)
        except OSError:
            if not os.path.isdir(target):
                raise
    finally:
        shutil.rmtree(stage, ignore_errors=True)


def main() -> int:
    running = f"{sys.version_info[0]}.{sys.version_info[1]}"
    cpython = platform.python_implementation() == "CPython"
    if running not in PYTHONS or not cpython or sys.platform != SYSTEM or platform.machine() not in MACHINES:
        where = f"{sys.platform}/{platform.machine()}"
        found = f"{platform.python_implementation()} {platform.python_version()} on {where}"
        print(
            f"kubectl-rehash: this archive needs CPython {', '.join(PYTHONS)} as python3 on {PLATFORM} "
            f"(found {found}); elsewhere install the package: pip install kube-rehash",
            file=sys.stderr,
        )
        return 1
    archive = os.path.dirname(os.path.abspath(__file__))
    site = cache_dir()
    if not os.path.isdir(site):
        unpack(archive, site)
    sys.path.insert(0, site)
    from reconcile.cli.commands import main as run

    return run()


if __name__ == "__main__":
    sys.exit(main())
