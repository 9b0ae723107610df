"""Why the command tunes glibc's malloc before any thread starts: so a pass's peak memory does not grow
with how long it runs, and its heaps are not faulted in again page after page.

A pass reads through a pool of worker threads (`concurrency`). glibc gives a thread that finds the arenas
busy an arena of its own (up to eight per core), maps large blocks on their own below a threshold that rises
each time such a block is freed, and keeps much of what was freed resident for reuse. None of that is the
pass holding more, but a longer pass gives it more chances to peak: on the benchmark's 10x cluster (10,000
opted-in workloads) an untuned first pass peaks at 47.7-48.7 MiB against 44.6-46.2 at 1x, while Python's own
objects never exceed the imports' by more than 0.6 MB. With two arenas and the threshold fixed at glibc's
initial 128 KiB, the 10x first pass peaks at 45.3-45.9 MiB and the 1x one at 44.6-44.7
(docs/engineering/memory-profile-details.md, "The allocator").

A fixed threshold also keeps glibc's trimming at its initial 128 KiB: a heap gives back to the kernel any
free top beyond it, and every page the pass decodes grows it again, touching those pages afresh. An untuned
10x steady pass faults 96,000 pages in (380 MB) where the list floor faults 10,000. Keeping 2 MiB of padding
at the top of each heap (M_TOP_PAD) halves that and takes about a third off the pass's system CPU, for
1.2-2.7 MiB more peak at either scale (docs/engineering/performance-history.md, "Memory faulted in again").

`MALLOC_ARENA_MAX`, `MALLOC_MMAP_THRESHOLD_` and `MALLOC_TOP_PAD_` in the environment win: glibc read them
when the process started, and they are left as set. Off glibc (musl, macOS) there is nothing to tune.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping

log = logging.getLogger(__name__)

# mallopt(3) parameters (glibc's malloc.h).
M_TOP_PAD = -2
M_MMAP_THRESHOLD = -3
M_ARENA_MAX = -8
ARENAS = 2
MMAP_THRESHOLD = 128 * 1024
TOP_PAD = 2 * 1024 * 1024
TUNED = {
    "MALLOC_ARENA_MAX": (M_ARENA_MAX, ARENAS),
    "MALLOC_MMAP_THRESHOLD_": (M_MMAP_THRESHOLD, MMAP_THRESHOLD),
    "MALLOC_TOP_PAD_": (M_TOP_PAD, TOP_PAD),
}


def tune_allocator(environ: Mapping[str, str] = os.environ) -> dict[str, int]:
    """Set what `TUNED` names with mallopt(3), except what the environment sets; returns what was set."""
    if not glibc():
        return {}
    import ctypes  # only here: a pass off glibc never pays for it

    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):  # not expected on glibc: then there is nothing to tune
        return {}
    done: dict[str, int] = {}
    for variable, (parameter, value) in TUNED.items():
        if variable in environ:
            continue
        if mallopt(ctypes.c_int(parameter), ctypes.c_int(value)) == 1:
            done[variable] = value
        else:
            log.debug("mallopt(%d, %d) was refused", parameter, value)
    return done


def glibc() -> bool:
    try:
        return os.confstr("CS_GNU_LIBC_VERSION") is not None
    except (ValueError, OSError):  # not a name this platform knows
        return False
