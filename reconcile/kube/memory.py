"""The pass's memory budget: how many bytes it may hold at once, and each holder's share of them.

A pass holds, besides the program itself: the answer being read (its bytes, then its text), the pages of
the lists it walks in step (one each, kept while walked), the pages read ahead, and the decoded objects of
the page at hand; everything else it keeps is per batch or packed (rows), and small beside them. So the
budget bounds the answers: no answer may pass `answer_cap` (kube/exchange.py drops it unread and the list
asks for smaller pages: kube/lists.py), no page aims past `page_bytes` (kube/page_size.py sizes the next
page by the bytes of the one before), and the pages read ahead hold at most `ahead_bytes` (kube/ahead.py).

The budget is the `memoryBudget` setting, else half the memory limit of the pass's cgroup (a pod's limit:
the shipped 128 Mi gives 64 MiB), else 64 MiB. What the program itself holds when the pass starts (its
resident size then) comes off the top; what is left is shared as above. A budget that leaves the data less
than `LEAST_DATA` cannot read the largest object the API server stores: set so, it is refused at the start;
derived so, the data gets that least and the pass warns that its pod's limit is too small.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from pathlib import Path

from reconcile.errors import ConfigError

log = logging.getLogger(__name__)
MIB = 1024 * 1024
DEFAULT_BUDGET = 64 * MIB
"""The budget where neither the setting nor a cgroup limit says: half the shipped pod limit (128 Mi)."""
MARGIN = 8 * MIB
"""Kept for what the program loads during the pass (the modules its stages import, the metrics and OTLP
exporters) and what its threads' heaps keep."""
LEAST_DATA = 12 * MIB
"""The least the data may have: answers of 2 MiB (the API server stores objects of up to 1.5 MiB of JSON)
with their text and what is decoded and hashed of them."""
PAGE_SHARE = 16
"""A page aims at a sixteenth of the data: seven lists walked in step keep about half of it."""
ANSWER_SHARE = 6
"""One answer may hold a sixth of the data: it exists twice while its bytes become text, and its objects
once more as they are decoded and hashed."""
AHEAD_SHARE = 6
"""The pages read ahead may hold a sixth of the data."""
MOST_PAGE_BYTES = 2 * MIB
MOST_AHEAD_BYTES = 4 * MIB


@dataclass(frozen=True)
class MemoryBudget:
    """The bytes a pass may hold at once besides the program, and each holder's share of them."""

    data: int

    @property
    def answer_cap(self) -> int:
        """Most bytes (decoded) any one answer may hold."""
        return self.data // ANSWER_SHARE

    @property
    def page_bytes(self) -> int:
        """Bytes a list page aims at (the next page is sized by the one before)."""
        return min(MOST_PAGE_BYTES, self.data // PAGE_SHARE)

    @property
    def ahead_bytes(self) -> int:
        """Most bytes the pages read ahead and not yet reached may hold together."""
        return min(MOST_AHEAD_BYTES, self.data // AHEAD_SHARE)

    def describe(self) -> str:
        return (
            f"{self.data // MIB} MiB for data: answers up to {self.answer_cap // MIB} MiB, pages of "
            f"{self.page_bytes // 1024} KiB, {self.ahead_bytes // 1024} KiB read ahead"
        )


def budget_of(total: int, resident: int, *, where: str, strict: bool, limited: bool = True) -> MemoryBudget:
    """The budget of a pass allowed `total` bytes whose program holds `resident` now. One that leaves the
    data less than it must have is a ConfigError where the user set it (`strict`); a derived one is raised
    to that least, with a warning where a memory limit (`limited`: a pod's) is too small for the program,
    which may then be killed."""
    data = total - resident - MARGIN
    if data >= LEAST_DATA:
        return MemoryBudget(data)
    problem = (
        f"{where}: {total // MIB} MiB leave {max(0, data) // MIB} MiB for the pass's data after the "
        f"program's own {resident // MIB} MiB (and {MARGIN // MIB} MiB kept for what it loads later); it "
        f"needs at least {LEAST_DATA // MIB} MiB"
    )
    if strict:
        raise ConfigError(f"{problem}: raise memoryBudget")
    if limited:
        log.warning("%s: using %d MiB; raise the pod's memory limit", problem, LEAST_DATA // MIB)
    return MemoryBudget(LEAST_DATA)


@dataclass(frozen=True)
class Total:
    """The budget in bytes, where it comes from, and whether a memory limit stands behind it."""

    size: int
    source: str
    limited: bool


def total_budget(setting: int | None) -> Total:
    """The budget: the setting, else half the cgroup's memory limit, else `DEFAULT_BUDGET`."""
    if setting is not None:
        return Total(setting, "memoryBudget", True)
    limit = cgroup_memory_limit()
    if limit is not None:
        return Total(limit // 2, f"half the memory limit of the pass's cgroup ({limit // MIB} MiB)", True)
    return Total(DEFAULT_BUDGET, "the default memory budget", False)


def cgroup_memory_limit(root: Path = Path("/sys/fs/cgroup"), proc: Path = Path("/proc/self")) -> int | None:
    """The memory limit of this process's cgroup (v2 `memory.max`, else v1 `memory.limit_in_bytes`), None
    when there is none (`max`, or a v1 limit too large to be one) or it cannot be read."""
    try:
        lines = (proc / "cgroup").read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        hierarchy, _, rest = line.partition(":")
        controllers, _, path = rest.partition(":")
        if hierarchy == "0" and not controllers:  # cgroup v2, unified
            found = read_limit(root / path.lstrip("/") / "memory.max")
            return found if found is not None else read_limit(root / "memory.max")
        if "memory" in controllers.split(","):
            found = read_limit(root / "memory" / path.lstrip("/") / "memory.limit_in_bytes")
            return found if found is not None else read_limit(root / "memory" / "memory.limit_in_bytes")
    return None


def read_limit(path: Path) -> int | None:
    try:
        text = path.read_text().strip()
    except OSError:
        return None
    if not text.isdigit():
        return None  # "max": no limit
    limit = int(text)
    return limit if limit < 1 << 60 else None  # cgroup v1 writes "no limit" as a huge page-aligned number


def resident_bytes(proc: Path = Path("/proc/self")) -> int:
    """This process's resident size now (`VmRSS`); 0 where /proc does not tell."""
    try:
        status = (proc / "status").read_text()
    except OSError:
        return 0
    match = re.search(r"^VmRSS:\s+(\d+)\s+kB", status, re.MULTILINE)
    return int(match.group(1)) * 1024 if match else 0
