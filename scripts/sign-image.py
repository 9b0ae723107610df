"""Sign the pushed image and attest its SBOM with cosign and a key pair
(`make sign-image IMAGE_REF=<registry>/kube-rehash@sha256:<digest> COSIGN_KEY=cosign.key`; docs/release.md).

Why by digest: a tag can be moved to another image after signing; cosign signs the manifest digest, and a user
verifies that digest. The signature and the attestation (the image's SPDX SBOM from `make dist`,
dist/kube-rehash-image-<version>.oci.tar.spdx.json, as an in-toto predicate of type spdxjson) are pushed
beside the image in its registry, where `cosign verify` and `cosign verify-attestation` find them:

    cosign verify --key cosign.pub --insecure-ignore-tlog <registry>/kube-rehash@sha256:<digest>
    cosign verify-attestation --key cosign.pub --type spdxjson --insecure-ignore-tlog <same reference>

Nothing is uploaded to a transparency log, as for the checksums (scripts/sign-dist.py, whose cosign this is);
keyless signing from the release workflow is the other way docs/release.md describes. `--allow-http` is for a
registry on 127.0.0.1 without TLS (tests/test_image_signing.py). The key's password comes from
$COSIGN_PASSWORD.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parent.parent
NO_TLOG = ["--use-signing-config=false", "--tlog-upload=false"]
"""No transparency log: cosign 3 wants it said twice (as in scripts/sign-dist.py)."""
HTTP = ["--allow-http-registry", "--allow-insecure-registry"]


def load_script(name: str) -> ModuleType:
    """scripts/<name> as a module (the scripts' names have dashes)."""
    spec = importlib.util.spec_from_file_location(
        name.replace("-", "_").removesuffix(".py"), ROOT / "scripts" / name
    )
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def cosign_binary() -> Path:
    """The pinned cosign, from scripts/sign-dist.py (the one place that reads tools/cosign/go.mod)."""
    binary: Path = load_script("sign-dist.py").cosign_binary()
    return binary


def default_sbom() -> Path:
    """dist/kube-rehash-image-<version>.oci.tar.spdx.json, where scripts/dist-extras.py writes it."""
    extras = load_script("dist-extras.py")
    name = extras.image_archive_name(extras.BUILD_DIST.version()) + extras.SBOM_SUFFIX
    sbom: Path = extras.BUILD_DIST.DIST / name
    return sbom


def run_cosign(argv: list[str]) -> None:
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"sign-image: cosign {argv[1]} failed:\n{done.stderr}")


def sign_image(reference: str, key: Path, sbom: Path, allow_http: bool = False) -> None:
    """Sign `reference` (name@sha256:digest) with `key` and attach `sbom` as a signed spdxjson attestation."""
    if "@sha256:" not in reference:
        raise SystemExit(f"sign-image: {reference} is not pinned by digest (name@sha256:…)")
    cosign = cosign_binary()
    if not os.access(cosign, os.X_OK):
        raise SystemExit(f"sign-image: cosign not built ({cosign}): run `make cosign`")
    common = ["--yes", "--key", str(key), *NO_TLOG, *(HTTP if allow_http else [])]
    run_cosign([str(cosign), "sign", *common, reference])
    run_cosign([str(cosign), "attest", *common, "--type", "spdxjson", "--predicate", str(sbom), reference])


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("reference", help="the pushed image, name@sha256:digest")
    parser.add_argument("sbom", type=Path, nargs="?", help="the image's SPDX JSON SBOM (default: dist/'s)")
    parser.add_argument("--allow-http", action="store_true", help="a registry without TLS (127.0.0.1)")
    args = parser.parse_args(argv)
    key = os.environ.get("COSIGN_KEY")
    if not key:
        parser.error("COSIGN_KEY (the private key file) is not set")
    sbom: Path = args.sbom or default_sbom()
    sign_image(args.reference, Path(key), sbom, args.allow_http)
    print(f"signed {args.reference} and attested {sbom.name}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
