"""Sign dist/SHA256SUMS with cosign and a key pair (`make sign-dist COSIGN_KEY=cosign.key`; docs/release.md).

Why the checksums and not each file: SHA256SUMS names the sha256 of every artefact, so one signature over it
covers them all (`sha256sum -c` then checks each file). The signature and the signer's material travel in one
Sigstore bundle, dist/SHA256SUMS.sigstore.json; a user verifies it with the release's public key:
`cosign verify-blob --key cosign.pub --bundle SHA256SUMS.sigstore.json --insecure-ignore-tlog SHA256SUMS`.
Nothing is uploaded to a transparency log (the flag says so on both sides); keyless signing from the release
workflow, with Rekor, is the other way docs/release.md describes.

cosign is the pinned one (`make cosign`, tools/cosign/go.mod). It reads the key's password from
$COSIGN_PASSWORD.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BUNDLE = "SHA256SUMS.sigstore.json"


def cosign_binary() -> Path:
    gomod = (ROOT / "tools" / "cosign" / "go.mod").read_text(encoding="utf-8")
    match = re.search(r"^\s*(?:require\s+)?github\.com/sigstore/cosign/v3\s+(v\S+)", gomod, re.MULTILINE)
    assert match, "tools/cosign/go.mod does not require github.com/sigstore/cosign/v3"
    return Path(os.environ.get("COSIGN_CACHE", ROOT / ".cache" / "cosign")) / match.group(1) / "cosign"


def sign(dist: Path, key: Path) -> Path:
    """dist/SHA256SUMS.sigstore.json: the bundle of a signature of dist/SHA256SUMS by `key`."""
    cosign = cosign_binary()
    if not os.access(cosign, os.X_OK):
        raise SystemExit(f"sign-dist: cosign not built ({cosign}): run `make cosign`")
    bundle = dist / BUNDLE
    # No transparency log: cosign 3 wants that said twice (no signing config, no upload); it warns that
    # --tlog-upload is deprecated in favour of a signing-config file without a log service.
    argv = [
        str(cosign),
        "sign-blob",
        "--yes",
        "--key",
        str(key),
        "--use-signing-config=false",
        "--tlog-upload=false",
    ]
    argv += ["--bundle", str(bundle), str(dist / "SHA256SUMS")]
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"sign-dist: cosign sign-blob failed:\n{done.stderr}")
    return bundle


def main(argv: list[str]) -> int:
    key = os.environ.get("COSIGN_KEY")
    if not key or len(argv) > 1:
        print("usage: COSIGN_KEY=cosign.key [COSIGN_PASSWORD=...] sign-dist.py [DIST]", file=sys.stderr)
        return 2
    dist = Path(argv[0]) if argv else Path(os.environ.get("KUBE_REHASH_DIST") or ROOT / "dist")
    print(f"signed: {sign(dist, Path(key))}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
