"""Signing the release's checksums with the real cosign (`make cosign`, tools/cosign/go.mod) and a key pair,
and verifying them as a user would: scripts/sign-dist.py signs SHA256SUMS into a Sigstore bundle, and
`cosign verify-blob` accepts it with the public key, refuses it for a changed SHA256SUMS or another key.
A generated, password-protected key pair stands in for the release's. Marker `helm` (it signs the output of
`make dist`).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.release import load_script

ROOT = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.helm


def cosign_binary() -> Path:
    """The pinned cosign, where scripts/sign-dist.py takes it from (.cache/cosign/<version>/cosign)."""
    binary: Path = load_script("sign-dist.py").cosign_binary()
    return binary


def key_pair(cosign: Path, where: Path, env: dict[str, str]) -> tuple[Path, Path]:
    where.mkdir()
    argv = [str(cosign), "generate-key-pair"]
    subprocess.run(argv, cwd=where, env=env, capture_output=True, text=True, check=True, timeout=60)
    return where / "cosign.key", where / "cosign.pub"


def verify(cosign: Path, public: Path, signed: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    bundle = signed.parent / "SHA256SUMS.sigstore.json"
    argv = [str(cosign), "verify-blob", "--key", str(public), "--bundle", str(bundle)]
    argv += ["--insecure-ignore-tlog", str(signed)]
    return subprocess.run(argv, env=env, capture_output=True, text=True, check=False, timeout=60)


def test_signed_checksums_verify_with_the_public_key_and_nothing_else(
    dist: Path, cosign: Path, tmp_path: Path
) -> None:
    env = {**os.environ, "COSIGN_PASSWORD": "test-only-password"}
    private, public = key_pair(cosign, tmp_path / "release-key", env)
    release = tmp_path / "release"
    release.mkdir()
    shutil.copy(dist / "SHA256SUMS", release / "SHA256SUMS")
    sign = [sys.executable, str(ROOT / "scripts" / "sign-dist.py"), str(release)]
    signing = {**env, "COSIGN_KEY": str(private)}
    done = subprocess.run(sign, env=signing, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr

    good = verify(cosign, public, release / "SHA256SUMS", env)
    assert good.returncode == 0 and "Verified OK" in good.stdout + good.stderr, good.stderr

    _, other = key_pair(cosign, tmp_path / "other-key", env)
    assert verify(cosign, other, release / "SHA256SUMS", env).returncode != 0

    with (release / "SHA256SUMS").open("a") as sums:
        sums.write(f"{'0' * 64}  planted.tar.gz\n")
    assert verify(cosign, public, release / "SHA256SUMS", env).returncode != 0
