"""Random histories on the simulator: user edits, passes under random settings and failpoints, every pass
checked against the model (tests/robustness/checker.py), every history closed by clean passes that must
converge and then write nothing.

`ROBUSTNESS_HISTORIES` (default 12) histories of `ROBUSTNESS_STEPS` (default 8) steps are drawn from
`ROBUSTNESS_SEED` (default 20261202) onwards, one seed each, split over four tests for the xdist workers;
a long soak is `ROBUSTNESS_HISTORIES=500 ROBUSTNESS_SEED=<n>`. A failing history is shrunk (at most
`ROBUSTNESS_SHRINK_SECONDS`, default 120) and printed as the line to replay
(`python -m tests.robustness replay '<steps>'`) or to pin in tests/robustness/regressions.json.
"""

from __future__ import annotations

import os
import random

import pytest

from tests.robustness.conftest import Factory
from tests.robustness.generator import generate
from tests.robustness.runner import run_history
from tests.robustness.shrink import explain_failure, shrink

HISTORIES = int(os.environ.get("ROBUSTNESS_HISTORIES", "12"))
STEPS = int(os.environ.get("ROBUSTNESS_STEPS", "8"))
SEED = int(os.environ.get("ROBUSTNESS_SEED", "20261202"))
SHRINK_SECONDS = float(os.environ.get("ROBUSTNESS_SHRINK_SECONDS", "120"))
BATCHES = 4


def run_seeds(servers: Factory, backend: str, seeds: list[int], steps: int) -> None:
    """Run each seed's history; on the first failure, shrink it and fail with its replayable form."""
    for seed in seeds:
        history = generate(random.Random(seed), backend, steps)
        outcome = run_history(servers, history)
        if outcome.failed:
            code = outcome.code
            assert code is not None
            small = shrink(servers, history, code, budget=SHRINK_SECONDS)
            again = run_history(servers, small)
            shown = (small, again) if again.code == code else (history, outcome)
            pytest.fail(explain_failure(seed, shown[0], shown[1], backend), pytrace=False)


@pytest.mark.parametrize("batch", range(BATCHES))
def test_random_histories_on_the_simulator_keep_every_invariant(sim_servers: Factory, batch: int) -> None:
    seeds = [SEED + i for i in range(HISTORIES) if i % BATCHES == batch]
    run_seeds(sim_servers, "sim", seeds, STEPS)
