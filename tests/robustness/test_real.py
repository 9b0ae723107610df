"""Random histories on the real control plane, its controllers running (ReplicaSets, pods on kwok nodes).

The failpoints a real server allows: answers lost after kube-apiserver applied a PATCH (the lossy proxy of
tests/robustness/proxy.py), concurrent writers racing the pass in time, two passes at once, sources deleted
and re-created between passes. `ROBUSTNESS_REAL_HISTORIES` (default 3) histories of
`ROBUSTNESS_REAL_STEPS` (default 6) steps, from `ROBUSTNESS_SEED`; the pinned histories marked for the real
server run in tests/robustness/test_pinned.py.
"""

from __future__ import annotations

import os

from tests.robustness.conftest import Factory
from tests.robustness.test_histories import SEED, run_seeds

HISTORIES = int(os.environ.get("ROBUSTNESS_REAL_HISTORIES", "3"))
STEPS = int(os.environ.get("ROBUSTNESS_REAL_STEPS", "6"))


def test_random_histories_on_the_real_control_plane_keep_every_invariant(real_servers: Factory) -> None:
    run_seeds(real_servers, "real", [SEED + i for i in range(HISTORIES)], STEPS)
