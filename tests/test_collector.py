"""The command's cycle-collector tuning (reconcile/cli/collector.py): what exists at tuning time is never
scanned again, a young collection waits for `YOUNG` containers, and a cycle made after it is still
collected once that many more exist. Each case runs in a fresh interpreter, whose collector nothing else
has touched."""

from __future__ import annotations

import json
import subprocess
import sys

from reconcile.cli.collector import YOUNG

PROBE = """
import gc, json, weakref
from reconcile.cli.collector import YOUNG, tune_collector

before = gc.get_threshold()
thresholds = tune_collector()
frozen = gc.get_freeze_count()

class Node:
    pass

def cycle():
    node = Node()
    node.me = node
    return weakref.ref(node)

early = cycle()
few = [{} for _ in range(YOUNG // 2)]  # too few: no young collection yet
alive_after_few = early() is not None
more = [{} for _ in range(YOUNG)]
print(json.dumps({
    "before": before, "thresholds": thresholds, "frozen": frozen,
    "alive_after_few": alive_after_few, "alive_after_more": early() is not None,
}))
"""


def probe() -> dict[str, object]:
    done = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, check=True)
    result: dict[str, object] = json.loads(done.stdout)
    return result


def test_the_young_threshold_is_raised_and_the_older_generations_keep_theirs() -> None:
    result = probe()
    before = result["before"]
    assert isinstance(before, list)
    assert result["thresholds"] == [YOUNG, before[1], before[2]]
    assert before[0] < YOUNG


def test_what_the_imports_built_is_frozen_out_of_every_collection() -> None:
    frozen = probe()["frozen"]
    assert isinstance(frozen, int) and frozen > 1000


def test_a_cycle_made_after_tuning_is_collected_once_young_more_containers_exist() -> None:
    result = probe()
    assert result["alive_after_few"] is True
    assert result["alive_after_more"] is False


def test_the_command_tunes_the_collector_before_it_dispatches() -> None:
    code = (
        "import gc, sys\n"
        "from reconcile.cli import commands\n"
        "seen = []\n"
        "commands.dispatch = lambda args: seen.append(gc.get_threshold()[0]) or 0\n"
        "commands.main(['version'])\n"
        "print(seen[0])\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert int(done.stdout.strip()) == YOUNG
