"""Signing the image and attesting its SBOM with the real cosign (`make cosign`) and a key pair, then
verifying both as a user would with `cosign verify` and `cosign verify-attestation`. cosign signs an image in
a registry; none outside is reachable here, so the test runs the real CNCF Distribution registry (`make
registry`, tools/registry/go.mod) on 127.0.0.1 over plain HTTP. The release's OCI archive is loaded into an
empty podman store and pushed to it, as the release steps of docs/release.md do, and scripts/sign-image.py
signs it by digest. A generated, password-protected key pair stands in for the release's; the password is
never printed. Marker `image` (the image archive) and `helm` (dist/).
"""

from __future__ import annotations

import base64
import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.image.pod import podman_env
from tests.prerequisites import skip_or_fail
from tests.release import image_archive, load_archive, private_podman, sbom_packages
from tests.test_dist_signing import key_pair

ROOT = Path(__file__).resolve().parent.parent

pytestmark = [pytest.mark.image, pytest.mark.helm]

REGISTRY_CONFIG = """\
version: 0.1
log:
  level: info
storage:
  filesystem:
    rootdirectory: {storage}
http:
  addr: 127.0.0.1:0
"""


def registry_binary() -> Path:
    """The pinned registry: .cache/registry/<its version in tools/registry/go.mod>/registry."""
    gomod = (ROOT / "tools" / "registry" / "go.mod").read_text(encoding="utf-8")
    match = re.search(
        r"^\s*(?:require\s+)?github\.com/distribution/distribution/v3\s+(v\S+)", gomod, re.MULTILINE
    )
    assert match, "tools/registry/go.mod does not require github.com/distribution/distribution/v3"
    return Path(os.environ.get("REGISTRY_CACHE", ROOT / ".cache" / "registry")) / match.group(1) / "registry"


@pytest.fixture
def registry(tmp_path: Path) -> Iterator[str]:
    """host:port of a registry of the test's own on 127.0.0.1 (a free port the registry picks and logs)."""
    binary = registry_binary()
    if not os.access(binary, os.X_OK):
        skip_or_fail(f"registry not built ({binary} missing): run `make registry`")
    config = tmp_path / "registry.yml"
    config.write_text(REGISTRY_CONFIG.format(storage=tmp_path / "registry-data"))
    log = tmp_path / "registry.log"
    with log.open("w") as out:
        server = subprocess.Popen([str(binary), "serve", str(config)], stdout=out, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 30
        while not (found := re.search(r"listening on 127\.0\.0\.1:(\d+)", log.read_text())):
            assert server.poll() is None and time.monotonic() < deadline, log.read_text()
            time.sleep(0.1)
        yield f"127.0.0.1:{found.group(1)}"
    finally:
        server.terminate()
        server.wait(timeout=30)


def push(podman: list[str], image: str, reference: str, where: Path) -> str:
    """`podman push` over HTTP; the digest of the manifest it pushed."""
    digest = where / "digest"
    argv = [*podman, "push", "--quiet", "--tls-verify=false", "--digestfile", str(digest), image, reference]
    subprocess.run(argv, env=podman_env(), capture_output=True, text=True, check=True, timeout=600)
    return digest.read_text().strip()


def cosign_run(cosign: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    argv = [
        str(cosign),
        *args,
        "--insecure-ignore-tlog",
        "--allow-http-registry",
        "--allow-insecure-registry",
    ]
    return subprocess.run(argv, env=env, capture_output=True, text=True, check=False, timeout=120)


def test_the_signed_image_and_its_sbom_attestation_verify_with_the_key_and_nothing_else(
    release: Path, cosign: Path, registry: str, tmp_path: Path
) -> None:
    env = {**os.environ, "COSIGN_PASSWORD": "test-only-password"}
    private, public = key_pair(cosign, tmp_path / "release-key", env)
    archive = image_archive(release)
    sbom = archive.with_name(archive.name + ".spdx.json")
    repository = f"{registry}/kube-rehash"
    with private_podman(tmp_path / "podman") as podman:
        image = load_archive(podman, archive)
        digest = push(podman, image, f"{repository}:release", tmp_path)
        signed = f"{repository}@{digest}"
        sign = [sys.executable, str(ROOT / "scripts" / "sign-image.py"), "--allow-http", signed, str(sbom)]
        signing = {**env, "COSIGN_KEY": str(private)}
        done = subprocess.run(sign, env=signing, capture_output=True, text=True, check=False)
        assert done.returncode == 0, done.stdout + done.stderr
        assert "test-only-password" not in done.stdout + done.stderr

        good = cosign_run(cosign, env, "verify", "--key", str(public), signed)
        assert good.returncode == 0, good.stderr
        claims = json.loads(good.stdout)
        # The signature's claim (and the attestation's, which cosign 3 lists too) name the signed digest.
        assert {c["critical"]["image"]["docker-manifest-digest"] for c in claims} == {digest}
        assert "https://sigstore.dev/cosign/sign/v1" in {c["critical"]["type"] for c in claims}

        attested = cosign_run(
            cosign, env, "verify-attestation", "--key", str(public), "--type", "spdxjson", signed
        )
        assert attested.returncode == 0, attested.stderr
        statement = json.loads(base64.b64decode(json.loads(attested.stdout.splitlines()[0])["payload"]))
        assert statement["subject"][0]["digest"] == {"sha256": digest.removeprefix("sha256:")}
        assert statement["predicate"] == json.loads(sbom.read_text())
        assert "kube-rehash" in sbom_packages(sbom)

        _, other = key_pair(cosign, tmp_path / "other-key", env)
        assert cosign_run(cosign, env, "verify", "--key", str(other), signed).returncode != 0

        # Someone changes the image and pushes it under the released tag: its digest carries no signature.
        context = tmp_path / "tampered"
        context.mkdir()
        (context / "Containerfile").write_text(f"FROM {image}\nLABEL tampered=yes\n")
        build = [*podman, "build", "--quiet", "--tag", "localhost/tampered:1", str(context)]
        subprocess.run(build, env=podman_env(), capture_output=True, text=True, check=True, timeout=300)
        tampered = push(podman, "localhost/tampered:1", f"{repository}:release", tmp_path)
        assert tampered != digest
        refused = cosign_run(cosign, env, "verify", "--key", str(public), f"{repository}:release")
        assert refused.returncode != 0 and "no signatures found" in refused.stderr.lower(), refused.stderr
        assert cosign_run(cosign, env, "verify", "--key", str(public), signed).returncode == 0
