"""The image as a release artefact: `make dist` saves it as an OCI archive in dist/ (scripts/dist-extras.py,
`podman save --format oci-archive`), named with the version and covered by SHA256SUMS with the SBOMs; a user
loads it with `podman load` into a store that has never seen the image and runs it. Marker `image` (it builds
the image with podman), and `helm` (dist/'s chart).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from reconcile import __version__
from tests.image.pod import podman_env
from tests.release import EXTRAS, image_archive, load_archive, private_podman

pytestmark = [pytest.mark.image, pytest.mark.helm]


def test_sha256sums_covers_the_image_archive_and_every_sbom(release: Path) -> None:
    names = {line.split("  ", 1)[1] for line in (release / "SHA256SUMS").read_text().splitlines()}
    archive = image_archive(release)
    assert archive.name == f"kube-rehash-image-{__version__}.oci.tar"
    assert archive.name in names
    packaged = {p.name for p in EXTRAS.artefacts(release)}
    assert {"kube_rehash-" + __version__ + ".tar.gz", archive.name} <= packaged
    assert {name + EXTRAS.SBOM_SUFFIX for name in packaged} <= names
    done = subprocess.run(
        ["sha256sum", "-c", "SHA256SUMS"], cwd=release, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.count(": OK") == len(names)


def test_the_archive_loads_into_an_empty_podman_store_and_runs_version_as_65532(
    release: Path, tmp_path: Path
) -> None:
    with private_podman(tmp_path) as podman:
        image = load_archive(podman, image_archive(release))
        confined = ["--read-only", "--cap-drop=all", "--network=none", "--security-opt", "no-new-privileges"]
        run = [*podman, "run", "--rm", *confined, image, "version"]
        done = subprocess.run(run, env=podman_env(), capture_output=True, text=True, check=False, timeout=120)
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip() == f"kube-rehash {__version__}"
        inspect = [*podman, "image", "inspect", "--format", "{{.Config.User}}", image]
        user = subprocess.run(inspect, env=podman_env(), capture_output=True, text=True, check=True)
        assert user.stdout.strip() == "65532:65532"
