"""The command's malloc tuning (reconcile/cli/allocator.py): what it sets, what it leaves to the environment,
that glibc then keeps large blocks out of its heaps, and that a heap keeps its padding when it shrinks. Each
case runs in a fresh interpreter, whose allocator nothing else has touched."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from reconcile.cli.allocator import ARENAS, MMAP_THRESHOLD, TOP_PAD, glibc
from tests.prerequisites import skip_or_fail


@pytest.fixture(autouse=True)
def need_glibc() -> None:
    """mallopt tuning is glibc's: on another C library these skip locally and fail under CI=true (CI's
    machine is Debian, whose C library is glibc)."""
    if not glibc():
        skip_or_fail("mallopt tuning is glibc's (this is not a glibc system)")


# Allocates, frees and allocates again a block of 256 KiB, counting glibc's mmapped blocks (mallinfo2's
# hblks) while each is held. glibc's own rule raises its mmap threshold when an mmapped block is freed, so
# untuned the second block comes from the heap, where it stays after it is freed.
PROBE = """
import ctypes, json, sys
from reconcile.cli.allocator import tune_allocator

class MallInfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in (
        "arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks", "fordblks",
        "keepcost")]

libc = ctypes.CDLL(None)
libc.malloc.restype = ctypes.c_void_p
libc.free.argtypes = [ctypes.c_void_p]
libc.mallinfo2.restype = MallInfo2
done = tune_allocator(json.loads(sys.argv[2])) if sys.argv[1] == "tuned" else {}
mapped = []
for _ in range(2):
    block = libc.malloc(256 * 1024)
    mapped.append(libc.mallinfo2().hblks)
    libc.free(block)
# Grow the main heap by 8 MiB in blocks below the mmap threshold, then free them all: what the heap's top
# keeps after glibc trims it is the padding.
blocks = [libc.malloc(64 * 1024) for _ in range(128)]
for block in reversed(blocks):
    libc.free(block)
print(json.dumps({"done": done, "mapped": mapped, "kept": libc.mallinfo2().keepcost}))
"""


def probe(mode: str, environ: dict[str, str] | None = None) -> dict[str, object]:
    out = subprocess.run(
        [sys.executable, "-c", PROBE, mode, json.dumps(environ or {})],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    result: dict[str, object] = json.loads(out)
    return result


def test_untuned_glibc_serves_a_large_block_freed_before_from_its_heap() -> None:
    mapped = probe("untuned")["mapped"]
    assert isinstance(mapped, list) and mapped[0] >= 1 and mapped[1] == mapped[0] - 1


def test_tuned_every_large_block_is_mapped_and_so_returned_when_freed() -> None:
    result = probe("tuned")
    assert result["done"] == {
        "MALLOC_ARENA_MAX": ARENAS,
        "MALLOC_MMAP_THRESHOLD_": MMAP_THRESHOLD,
        "MALLOC_TOP_PAD_": TOP_PAD,
    }
    mapped = result["mapped"]
    assert isinstance(mapped, list) and mapped[0] >= 1 and mapped[1] == mapped[0]


def test_untuned_a_shrinking_heap_keeps_little_of_its_free_top() -> None:
    kept = probe("untuned")["kept"]
    assert isinstance(kept, int) and kept < TOP_PAD // 4


def test_tuned_a_shrinking_heap_keeps_its_padding_so_the_next_page_does_not_fault_it_in_again() -> None:
    kept = probe("tuned")["kept"]
    assert isinstance(kept, int) and TOP_PAD <= kept < 2 * TOP_PAD


def test_what_the_environment_sets_is_left_to_glibc() -> None:
    result = probe("tuned", {"MALLOC_MMAP_THRESHOLD_": "1048576"})
    assert result["done"] == {"MALLOC_ARENA_MAX": ARENAS, "MALLOC_TOP_PAD_": TOP_PAD}
    environ = {"MALLOC_ARENA_MAX": "8", "MALLOC_MMAP_THRESHOLD_": "0", "MALLOC_TOP_PAD_": "0"}
    assert probe("tuned", environ)["done"] == {}
