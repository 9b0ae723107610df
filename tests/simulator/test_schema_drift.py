"""The simulator's field table (rehash_simulator/k8s_schema.json) is what scripts/gen_schema.py writes today.

Why: the table is generated from k8s.io/api and k8s.io/apimachinery of the simulator's Kubernetes release;
a bump of versions.KUBERNETES_VERSION, or an edit by hand, must not leave it stale. The modules are those
the control-plane build downloads into the Go module cache, hence the `real` marker.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from rehash_simulator.versions import KUBERNETES_VERSION
from tests.prerequisites import skip_or_fail

SCRIPT = Path(__file__).resolve().parents[2] / "simulator" / "scripts" / "gen_schema.py"


@pytest.mark.real
def test_field_table_is_generated_from_the_pinned_release() -> None:
    go = shutil.which("go")
    if go is None:
        skip_or_fail("go is not installed (the Go module cache holds k8s.io/api)")
    cache = Path(
        subprocess.run([go, "env", "GOMODCACHE"], capture_output=True, text=True, check=True).stdout.strip()
    )
    minor = KUBERNETES_VERSION.split(".", 1)[1]
    if not (cache / "k8s.io" / f"api@v0.{minor}").is_dir():
        skip_or_fail(f"k8s.io/api@v0.{minor} is not in {cache} (make control-plane downloads it)")
    result = subprocess.run(
        [sys.executable, str(SCRIPT), "--modules", str(cache), "--check"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, (
        f"k8s_schema.json is stale: run python {SCRIPT.relative_to(SCRIPT.parents[2])}"
    )
