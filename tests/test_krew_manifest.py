"""The krew manifest plugins/krew/rehash.yaml: its shape, and that it names the console script and version.

Why: krew rejects a manifest whose shape is wrong only at install time; this catches it at commit time.
"""

from __future__ import annotations

import configparser
import re
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent


def test_krew_manifest_shape_names_the_kubectl_rehash_script_at_the_project_version() -> None:
    manifest = yaml.safe_load((ROOT / "plugins" / "krew" / "rehash.yaml").read_text(encoding="utf-8"))
    assert manifest["apiVersion"] == "krew.googlecontainertools.github.com/v1alpha2"
    assert manifest["kind"] == "Plugin"
    assert manifest["metadata"]["name"] == "rehash"  # `kubectl rehash`
    spec = manifest["spec"]
    version = re.search(r'__version__ = "([^"]+)"', (ROOT / "reconcile" / "__init__.py").read_text())
    assert version and spec["version"] == f"v{version.group(1)}"
    for field in ("homepage", "shortDescription", "description", "platforms"):
        assert spec.get(field), field
    assert len(spec["shortDescription"]) <= 50  # krew's index limit
    cfg = configparser.ConfigParser()
    cfg.read(ROOT / "setup.cfg")
    scripts = cfg["options.entry_points"]["console_scripts"]
    assert re.search(r"^kubectl-rehash = reconcile\.cli\.commands:main$", scripts, re.MULTILINE)
    for platform in spec["platforms"]:
        assert platform["bin"] == "kubectl-rehash"
        assert platform["uri"].startswith("https://") and platform["uri"].endswith(
            spec["version"] + ".tar.gz"
        )
        assert re.fullmatch(r"[0-9a-f]{64}", platform["sha256"])
        assert platform["selector"]["matchExpressions"][0]["key"] == "os"
        assert any(f["from"] == "kubectl-rehash" for f in platform["files"])
