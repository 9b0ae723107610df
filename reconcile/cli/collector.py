"""Why the command runs Python's cycle collector less often than the interpreter's default: so a pass does
not spend a tenth of its CPU looking for cycles that its objects do not form.

A pass decodes every list page into short-lived dicts and lists (a 10x steady pass: 354 pages, about 175,000
objects) while it holds the views of the workloads it walks. At the default threshold (a collection each
time 700 more containers exist than were freed) a page's decoding alone crosses it many times over, so that
pass runs about 750 young, 68 middle and 6 full collections, 0.15-0.22 s of its 1.8-2.0 s of CPU; the full
ones walk every view the pass holds. Nearly all of that memory is freed by reference counting the moment a
page or view is dropped: the collector only ever finds what forms a cycle (an exception and its traceback,
a few objects of the HTTP stack).

So once the command's modules are imported, what they built is frozen (never scanned again: it lives as long
as the process) and a young collection waits for `YOUNG` more containers, the same as 18 young and at most
one middle collection in that pass, 0.01-0.02 s (docs/engineering/performance-history.md, "Since the previous
run of record"). A cycle is still collected, a few thousand allocations later than it would have been; peak
RSS is unchanged.
"""

from __future__ import annotations

import gc

YOUNG = 5000
"""Containers allocated (net of those freed) before a young collection: the default is 700."""


def tune_collector() -> tuple[int, int, int]:
    """Freeze what exists now and raise the young generation's threshold (the older ones keep theirs);
    returns the thresholds set."""
    gc.freeze()
    _, middle, old = gc.get_threshold()
    gc.set_threshold(YOUNG, middle, old)
    return gc.get_threshold()
