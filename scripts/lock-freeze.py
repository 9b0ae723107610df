"""Write requirements/freeze.txt (PyInstaller's hash-pinned lock) from requirements/freeze.in with pip alone.

Why not `uv pip compile` as for the other locks (`make lock`): the lock is installed together with
requirements/runtime.txt (`pip install --require-hashes --no-deps -r runtime.txt -r freeze.txt`, Dockerfile
and scripts/build-dist.py), so it must hold only what runtime.txt lacks, at versions that agree with it; and
it needs the wheels of the platforms the image is built on (linux x86_64 and aarch64, CPython 3.11) only.
pip downloads what freeze.in resolves to for each platform, constrained by runtime.txt; every wheel's sha256
(what `pip hash` prints) is written as its hash.
"""

from __future__ import annotations

import hashlib
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
REQUIREMENTS = ROOT / "requirements"
PLATFORMS = {"x86_64": "manylinux2014_x86_64", "aarch64": "manylinux2014_aarch64"}
HEADER = """\
# PyInstaller and its dependencies that requirements/runtime.txt lacks (packaging and setuptools are pinned
# there; pip installs both files together with --require-hashes --no-deps). Wheels for linux x86_64 and
# aarch64, CPython 3.11. Written by `make lock` (scripts/lock-freeze.py: pip download + pip hash).
"""


def normalized(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def runtime_constraints(directory: Path) -> Path:
    """runtime.txt's pins without hashes: pip's constraints for the resolution."""
    pins = [
        ln.split()[0] for ln in (REQUIREMENTS / "runtime.txt").read_text().splitlines() if re.match(r"\w", ln)
    ]
    constraints = directory / "constraints.txt"
    constraints.write_text("\n".join(pins) + "\n", encoding="utf-8")
    return constraints


def main() -> int:
    runtime = {
        normalized(ln.split("==")[0])
        for ln in (REQUIREMENTS / "runtime.txt").read_text().splitlines()
        if "==" in ln
    }
    hashes: dict[tuple[str, str], set[str]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        constraints = runtime_constraints(Path(tmp))
        for arch, tag in PLATFORMS.items():
            target = Path(tmp) / arch
            argv = [sys.executable, "-m", "pip", "download", "--quiet", "--disable-pip-version-check"]
            argv += [
                "--only-binary=:all:",
                "--python-version",
                "3.11",
                "--implementation",
                "cp",
                "--abi",
                "cp311",
            ]
            argv += [
                "--platform",
                tag,
                "-c",
                str(constraints),
                "-r",
                str(REQUIREMENTS / "freeze.in"),
                "-d",
                str(target),
            ]
            subprocess.run(argv, check=True)
            for wheel in target.glob("*.whl"):
                name, version = wheel.name.split("-")[:2]
                if normalized(name) not in runtime:
                    digest = hashlib.sha256(wheel.read_bytes()).hexdigest()
                    hashes.setdefault((normalized(name), version), set()).add(digest)
    lines = [HEADER.rstrip("\n")]
    for (name, version), digests in sorted(hashes.items()):
        lines.append(f"{name}=={version} \\")
        ordered = sorted(digests)
        lines += [
            f"    --hash=sha256:{d}" + (" \\" if i < len(ordered) - 1 else "") for i, d in enumerate(ordered)
        ]
    (REQUIREMENTS / "freeze.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
