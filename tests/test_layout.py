"""Every module of the package has its place: in its sub-package's import contract (.importlinter) and in
CONTRIBUTING.md's layout, so a newcomer finds each one where the architecture says it belongs."""

from __future__ import annotations

import configparser
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "reconcile"
SUBPACKAGES = ("cli", "pipeline", "output", "config", "policy", "settings", "model", "kube")
CONTRACTS = {
    "cli": "cli",
    "pipeline": "pipeline",
    "policy": "policy",
    "settings": "settings",
    "model": "model",
}
"""Sub-packages with a layers contract of their own (the others hold few modules)."""


def modules(package: str) -> list[str]:
    return sorted(p.stem for p in (PACKAGE / package).glob("*.py") if p.stem != "__init__")


def layout() -> dict[str, str]:
    """CONTRIBUTING.md's layout block, by sub-package: the text of its entry."""
    text = (ROOT / "CONTRIBUTING.md").read_text()
    block = text.split("### Layout", 1)[1].split("```", 2)[1]
    entries: dict[str, str] = {}
    current = ""
    for line in block.splitlines():
        match = re.match(r"^  (\w+)/\s+(.*)$", line)
        if match:
            current = match.group(1)
            entries[current] = match.group(2)
        elif current and line.startswith("      "):
            entries[current] += " " + line.strip()
    return entries


@pytest.mark.parametrize("package", SUBPACKAGES)
def test_every_module_is_in_the_contributing_layout(package: str) -> None:
    entry = layout().get(package, "")
    named = set(re.findall(r"\b\w+\b", entry))
    assert [m for m in modules(package) if m not in named] == []


@pytest.mark.parametrize("package", CONTRACTS)
def test_every_module_is_in_its_import_contract(package: str) -> None:
    config = configparser.ConfigParser()
    config.read(ROOT / ".importlinter")
    layers = config[f"importlinter:contract:{package}"]["layers"]
    named = {name.strip() for line in layers.splitlines() for name in line.split("|") if name.strip()}
    assert [m for m in modules(package) if m not in named] == []


def test_the_top_level_contract_names_every_sub_package_and_module() -> None:
    config = configparser.ConfigParser()
    config.read(ROOT / ".importlinter")
    layers = config["importlinter:contract:layers"]["layers"]
    named = {name.strip() for line in layers.splitlines() for name in line.split("|") if name.strip()}
    top = {p.stem for p in PACKAGE.glob("*.py") if p.stem != "__init__"} | set(SUBPACKAGES)
    assert sorted(top - named) == []
