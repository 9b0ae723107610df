"""The order of kube-apiserver's cluster-wide lists, which the streamed walk relies on and checks.

Why: a pass too large to hold its listing walks the cluster namespace by namespace as its lists stream
(pipeline/namespace_stream.py), which costs nothing extra only while lists come in etcd's key order
(`namespace/name`, so `a-b/…` before `a/…`). The walk checks that order and recovers when it does not hold
(tests/e2e/test_streamed.py on a simulator that lists unsorted); this pins that the real server, read from
etcd and from its watch cache (`resourceVersion=0`), pages included, lists in key order today.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterator

import pytest

from reconcile.model.order import namespace_order
from tests.cluster.controlplane import ControlPlane

SUFFIX = secrets.token_hex(3)
# "o-b" sorts before "o" as a key prefix ("o-b/…" < "o/…"), unlike the names.
NAMESPACES = (f"o{SUFFIX}", f"o{SUFFIX}-b", f"o{SUFFIX}b")


@pytest.fixture(scope="module")
def spread(control: ControlPlane) -> Iterator[None]:
    for ns in NAMESPACES:
        control.api("POST", "/api/v1/namespaces", {"metadata": {"name": ns}})
        for name in ("z", "a", "m"):
            body = {"metadata": {"name": f"cm-{name}", "namespace": ns}, "data": {"k": "v"}}
            control.api("POST", f"/api/v1/namespaces/{ns}/configmaps", body)
    yield
    for ns in NAMESPACES:
        control.request("DELETE", f"/api/v1/namespaces/{ns}")


def keys(control: ControlPlane, query: str) -> list[str]:
    """Every ConfigMap's `namespace/name`, cluster-wide, in the order the pages give them."""
    out: list[str] = []
    token = ""
    while True:
        page = control.api("GET", f"/api/v1/configmaps?limit=4{query}{token}")
        out += [f"{i['metadata']['namespace']}/{i['metadata']['name']}" for i in page["items"]]
        cont = page["metadata"].get("continue")
        if not cont:
            return out
        token = f"&continue={cont}"


@pytest.mark.usefixtures("spread")
@pytest.mark.parametrize("query", ["", "&resourceVersion=0"], ids=["etcd", "watch-cache"])
def test_cluster_wide_lists_come_in_key_order(control: ControlPlane, query: str) -> None:
    listed = keys(control, query)
    ours = [k for k in listed if k.split("/")[0] in NAMESPACES]
    assert len(ours) == 9
    namespaces = [k.split("/")[0] + "/" for k in listed]
    assert namespaces == sorted(namespaces), "namespaces interleaved or out of key order"
    assert [k.split("/")[0] for k in ours[::3]] == sorted(NAMESPACES, key=namespace_order)
    assert listed == sorted(listed)
