"""`python -m tests.robustness replay '<steps JSON>'`: run one history on the simulator and print what its
checks found (the form a failing history prints); `--mutant NAME` runs it under a mutant of
tests/robustness/mutants.py."""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

from tests.robustness.runner import run_history
from tests.robustness.servers import SimServer
from tests.robustness.shrink import explain_failure


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.robustness")
    commands = parser.add_subparsers(dest="command", required=True)
    replay = commands.add_parser("replay", help="run one history (a JSON list of steps) on the simulator")
    replay.add_argument("steps")
    replay.add_argument("--mutant", default=None)
    args = parser.parse_args()
    steps = json.loads(args.steps)
    with tempfile.TemporaryDirectory(prefix="robustness-") as tmp:
        outcome = run_history(lambda c: SimServer(Path(tmp), controllers=c), steps, args.mutant)
    if outcome.failed:
        print(explain_failure(None, steps, outcome, "sim"))
        return 1
    print(
        f"passed: {outcome.passes} passes, {outcome.failpoints} failpoints fired, {outcome.rollouts} rollouts"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
