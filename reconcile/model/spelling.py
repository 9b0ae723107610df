"""Annotations under kube-rehash's prefix that it does not read: a misspelt key (`kube-rehash.io/wacth`,
`kube-rehash.io/min-intervall`) would otherwise be ignored without a word, and the workload would never
restart, or restart where its owner meant to hold it. Such a workload fails closed: `skipped`, with the key
named and the nearest key kube-rehash reads offered.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Iterator
from difflib import get_close_matches

from reconcile.model.annotations import Annotations, annotation_keys
from reconcile.model.references import DiscoverySettings, consulted_keys, opt_in_keys

_WRITTEN = tuple(
    name for name, attribute in vars(Annotations).items() if isinstance(attribute, functools.cached_property)
)
"""The names of the keys `Annotations` spells (those kube-rehash writes, and the per-workload settings)."""


@functools.cache
def workload_keys(settings: DiscoverySettings) -> frozenset[str]:
    """Every annotation key under the prefix that kube-rehash reads or writes on a workload."""
    keys = annotation_keys(settings.prefix)
    return opt_in_keys(settings) | frozenset(consulted_keys(settings)) | {getattr(keys, n) for n in _WRITTEN}


def _unknown(keys: Iterable[str], settings: DiscoverySettings) -> Iterator[str]:
    own = f"{settings.prefix}/"
    known = workload_keys(settings)
    return (key for key in keys if key.startswith(own) and key not in known)


def misspelt(keys: Iterable[str], settings: DiscoverySettings) -> bool:
    """Whether a key under the prefix that kube-rehash does not read is among these (the listing's cheap
    test of a workload without an opt-in annotation)."""
    return any(_unknown(keys, settings))


def unknown_annotations(keys: Iterable[str], settings: DiscoverySettings) -> tuple[str, ...]:
    """A problem for each key under the prefix that kube-rehash does not read, with the nearest it does."""
    problems = []
    for key in _unknown(keys, settings):
        near = get_close_matches(key, sorted(workload_keys(settings)), n=1, cutoff=0.75)
        hint = f" (did you mean {near[0]}?)" if near else ""
        problems.append(f"{key}: not an annotation kube-rehash reads{hint}")
    return tuple(problems)
