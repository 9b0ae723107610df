"""The order of a cluster-wide list, which the API server returns in etcd's key order (`namespace/name`).

Why it matters: each namespace's objects come together, and lists of different resources meet the
namespaces in the same order, so a pass can walk them in step (pipeline/namespace_stream.py) and plan from
counts kept in that order (policy/tally.py). The full key of one object is `kube.lists.storage_key`.
"""

from __future__ import annotations


def namespace_order(namespace: str) -> str:
    """Where a namespace's objects sit: every key of a namespace sorts before every key of the namespaces
    after this one (a name holds no `/`, so `a-b/` sorts before `a/`, as its keys do)."""
    return namespace + "/"
