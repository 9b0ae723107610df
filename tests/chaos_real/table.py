"""Render the figures of a tests/chaos_real run as docs/reliability.md's table (Markdown, on stdout).

.venv/bin/python -m pytest -q -m chaos_real tests/chaos_real   # writes .cache/chaos-real/figures.json
.venv/bin/python -m tests.chaos_real.table [FILE]
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from tests.chaos_real.harness import FIGURES

COLUMNS = (
    "Fault (real)",
    "Injected",
    "Passes",
    "Rollouts expected",
    "Done",
    "Doubled",
    "Lost",
    "Exit codes",
    "Longest pass / budget",
)


def row(figures: dict[str, Any]) -> str:
    cells = [
        figures["fault"],
        str(figures["injected"]),
        str(figures["passes"]),
        str(figures["expected"]),
        str(figures["done"]),
        str(figures["doubled"]),
        str(figures["lost"]),
        ", ".join(str(code) for code in figures["exits"]),
        f"{figures['longest_s']:.1f} s / {figures['budget_s']:.0f} s",
    ]
    return "| " + " | ".join(cells) + " |"


def main(argv: list[str]) -> int:
    path = Path(argv[1]) if len(argv) > 1 else FIGURES
    rows = json.loads(path.read_text())
    print("| " + " | ".join(COLUMNS) + " |")
    print("|" + "---|" * len(COLUMNS))
    for figures in rows.values():
        print(row(figures))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
