"""The krew manifest: its template plugins/krew/rehash.yaml, and the release's dist/rehash.yaml that
`make dist` writes from it with the uri and the sha256 of the plugin archive it built.

Why: krew rejects a manifest whose shape is wrong only at install time, and a sha256 that does not match the
archive only at download time; these catch both at commit time.
"""

from __future__ import annotations

import configparser
import hashlib
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from reconcile import __version__

ROOT = Path(__file__).resolve().parent.parent
RELEASES = "https://github.com/kube-rehash/kube-rehash/releases/download/"


def load(path: Path) -> dict[str, Any]:
    manifest: dict[str, Any] = yaml.safe_load(path.read_text(encoding="utf-8"))
    return manifest


def test_krew_manifest_shape_names_the_kubectl_rehash_script_at_the_project_version() -> None:
    manifest = load(ROOT / "plugins" / "krew" / "rehash.yaml")
    assert manifest["apiVersion"] == "krew.googlecontainertools.github.com/v1alpha2"
    assert manifest["kind"] == "Plugin"
    assert manifest["metadata"]["name"] == "rehash"  # `kubectl rehash`
    spec = manifest["spec"]
    assert spec["version"] == f"v{__version__}"
    for field in ("homepage", "shortDescription", "description", "caveats", "platforms"):
        assert spec.get(field), field
    assert len(spec["shortDescription"]) <= 50  # krew's index limit
    cfg = configparser.ConfigParser()
    cfg.read(ROOT / "setup.cfg")
    scripts = cfg["options.entry_points"]["console_scripts"]
    assert re.search(r"^kubectl-rehash = reconcile\.cli\.commands:main$", scripts, re.MULTILINE)
    # linux/amd64 gets the frozen executable; the others a zipapp (the platforms the release must cover).
    assert [platform["selector"]["matchLabels"] for platform in spec["platforms"]] == [
        {"os": "linux", "arch": "amd64"},
        {"os": "linux", "arch": "arm64"},
        {"os": "darwin", "arch": "amd64"},
        {"os": "darwin", "arch": "arm64"},
    ]
    for platform in spec["platforms"]:
        assert platform["bin"] == "kubectl-rehash"
        assert {f["from"] for f in platform["files"]} == {"kubectl-rehash", "LICENSE"}
        # Filled in by `make dist` from the archive it builds, never kept by hand.
        assert "uri" not in platform and "sha256" not in platform


@pytest.mark.helm
def test_the_release_manifest_names_each_built_archive_by_its_sha256_and_release_url(dist: Path) -> None:
    text = (dist / "rehash.yaml").read_text(encoding="utf-8")
    assert "file://" not in text
    manifest = load(dist / "rehash.yaml")
    template = load(ROOT / "plugins" / "krew" / "rehash.yaml")
    tag = f"v{__version__}"
    assert manifest["spec"]["version"] == tag
    for platform, expected in zip(manifest["spec"]["platforms"], template["spec"]["platforms"], strict=True):
        labels = platform["selector"]["matchLabels"]
        archive = dist / f"kubectl-rehash-{tag}-{labels['os']}-{labels['arch']}.tar.gz"
        assert platform["uri"] == f"{RELEASES}{tag}/{archive.name}"
        assert platform["sha256"] == hashlib.sha256(archive.read_bytes()).hexdigest()
        assert {k: v for k, v in platform.items() if k not in ("uri", "sha256")} == expected


@pytest.mark.helm
def test_the_release_manifest_caveats_say_per_platform_whether_python_is_needed(dist: Path) -> None:
    caveats = load(dist / "rehash.yaml")["spec"]["caveats"].splitlines()
    template = load(ROOT / "plugins" / "krew" / "rehash.yaml")["spec"]["caveats"].splitlines()

    assert caveats[:4] == [
        "linux/amd64: a self-contained executable; needs no Python.",
        *(
            f"{platform}: a zipapp; needs CPython 3.11, 3.12 or 3.13 as python3 on PATH (unpacked once into "
            "~/.cache/kube-rehash)."
            for platform in ("linux/arm64", "darwin/amd64", "darwin/arm64")
        ),
    ]
    assert caveats[4:] == template
