"""`python -m tests.robustness replay '<steps JSON>'`: run one history on the simulator and print what its
checks found (the form a failing history prints); `--mutant NAME` runs it under a mutant of
tests/robustness/mutants.py. `python -m tests.robustness stats`: run what one `make test` runs of the suite
on the simulator (the random histories of the default seeds and the pinned ones) and print how many
histories, steps, passes, failpoints and rollouts it covers."""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from tests.robustness.generator import generate
from tests.robustness.history import Step
from tests.robustness.runner import Outcome, run_history
from tests.robustness.servers import SimServer
from tests.robustness.shrink import explain_failure
from tests.robustness.test_histories import HISTORIES, SEED, STEPS
from tests.robustness.test_pinned import PINNED


def run(steps: list[Step], mutant: str | None = None) -> Outcome:
    with tempfile.TemporaryDirectory(prefix="robustness-") as tmp:
        return run_history(lambda c: SimServer(Path(tmp), controllers=c), steps, mutant)


def stats() -> int:
    histories = [generate(random.Random(SEED + i), "sim", STEPS) for i in range(HISTORIES)]
    histories += [entry["steps"] for entry in PINNED if "sim" in entry["servers"]]
    started = time.monotonic()
    totals: Counter[str] = Counter()
    fired: Counter[str] = Counter()
    for steps in histories:
        outcome = run(steps)
        if outcome.failed:
            print(explain_failure(None, steps, outcome, "sim"))
            return 1
        totals.update(histories=1, steps=outcome.steps, passes=outcome.passes, rollouts=outcome.rollouts)
        fired += outcome.failpoints
    print(json.dumps({**totals, "failpoints": fired.total(), "by_kind": dict(sorted(fired.items()))}))
    print(f"{time.monotonic() - started:.0f} s in one process")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.robustness")
    commands = parser.add_subparsers(dest="command", required=True)
    replay = commands.add_parser("replay", help="run one history (a JSON list of steps) on the simulator")
    replay.add_argument("steps")
    replay.add_argument("--mutant", default=None)
    commands.add_parser("stats", help="what one make test covers on the simulator")
    args = parser.parse_args()
    if args.command == "stats":
        return stats()
    steps = json.loads(args.steps)
    outcome = run(steps, args.mutant)
    if outcome.failed:
        print(explain_failure(None, steps, outcome, "sim"))
        return 1
    fired = dict(outcome.failpoints)
    print(f"passed: {outcome.passes} passes, failpoints fired {fired}, {outcome.rollouts} rollouts")
    return 0


if __name__ == "__main__":
    sys.exit(main())
