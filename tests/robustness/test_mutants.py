"""The checker has teeth: each deliberately broken build (tests/robustness/mutants.py) is caught.

Each mutant runs the CLI with one defect patched in (`python -m tests.robustness.mutants`, selected by
ROBUSTNESS_MUTANT) on the pinned history that names it in tests/robustness/regressions.json; the checker
must report the violation the entry names. The same histories pass on the real build
(tests/robustness/test_pinned.py), so what is caught is the defect.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.robustness.conftest import Factory
from tests.robustness.mutants import MUTANTS
from tests.robustness.runner import run_history
from tests.robustness.test_pinned import PINNED

ROOT = Path(__file__).resolve().parents[2]
ENTRIES = {entry["mutant"]: entry for entry in PINNED if "mutant" in entry}


def test_every_mutant_has_a_pinned_history() -> None:
    assert set(ENTRIES) == set(MUTANTS)


@pytest.mark.parametrize("mutant", sorted(MUTANTS))
def test_each_mutant_patches_code_that_exists(mutant: str) -> None:
    """A mutant whose target was renamed would crash the CLI, and a crash is no proof of the checker."""
    code = f"from tests.robustness.mutants import MUTANTS; MUTANTS[{mutant!r}]()"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=False)
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("mutant", sorted(MUTANTS))
def test_the_checker_catches_the_mutant(sim_servers: Factory, mutant: str) -> None:
    entry = ENTRIES[mutant]
    outcome = run_history(sim_servers, entry["steps"], mutant)
    codes = {v.code for v in outcome.violations}
    assert entry["caught_as"] in codes, (mutant, [str(v) for v in outcome.violations])
