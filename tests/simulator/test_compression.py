"""Response compression as kube-apiserver does it: gzip (level 1) over 128 KiB, only when accepted."""

from __future__ import annotations

import gzip
import json
from typing import Any

import pytest
from simhelpers import call, configmap

from rehash_simulator import Simulator
from rehash_simulator.answers import GZIP_THRESHOLD
from rehash_simulator.server import accepts_gzip

META_LIST = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"


@pytest.fixture
def big(sim: Simulator) -> Simulator:
    """About 200 KB of ConfigMaps in one namespace: a full list crosses the threshold."""
    for i in range(100):
        sim.store.create(configmap(f"cm-{i:03d}", data={"config": f"line {i}\n" * 250}))
    return sim


def last_entry(sim: Simulator) -> Any:
    return sim.log.entries()[-1]


def test_a_large_response_is_gzipped_when_the_client_accepts_gzip(big: Simulator) -> None:
    plain = call(big, "GET", "/api/v1/namespaces/shop/configmaps")
    assert len(plain.body) > GZIP_THRESHOLD and "Content-Encoding" not in plain.headers

    packed = call(big, "GET", "/api/v1/namespaces/shop/configmaps", headers={"Accept-Encoding": "gzip"})
    assert packed.status == 200
    assert packed.headers["Content-Encoding"] == "gzip"
    assert packed.headers["Vary"] == "Accept-Encoding"
    assert int(packed.headers["Content-Length"]) == len(packed.body) < len(plain.body) // 4
    assert json.loads(gzip.decompress(packed.body))["items"] == plain.json()["items"]
    assert last_entry(big).bytes_out == len(packed.body)  # the log counts bytes on the wire


def test_a_small_response_is_never_compressed(big: Simulator) -> None:
    reply = call(big, "GET", "/api/v1/namespaces/shop/configmaps/cm-001", headers={"Accept-Encoding": "gzip"})
    assert reply.status == 200 and "Content-Encoding" not in reply.headers
    assert reply.json()["metadata"]["name"] == "cm-001"


def test_a_metadata_list_under_the_threshold_stays_plain(big: Simulator) -> None:
    gzip_ok = {"Accept-Encoding": "gzip"}
    reply = call(big, "GET", "/api/v1/namespaces/shop/configmaps", accept=META_LIST, headers=gzip_ok)
    assert len(reply.body) <= GZIP_THRESHOLD and "Content-Encoding" not in reply.headers


def test_gzip_refused_with_q_zero_is_not_used(big: Simulator) -> None:
    reply = call(
        big, "GET", "/api/v1/namespaces/shop/configmaps", headers={"Accept-Encoding": "gzip;q=0, identity"}
    )
    assert "Content-Encoding" not in reply.headers and len(reply.body) > GZIP_THRESHOLD


@pytest.mark.parametrize(
    ("header", "accepted"),
    [
        ("", False),
        ("gzip", True),
        ("gzip, deflate", True),
        ("deflate, GZIP;q=0.5", True),
        ("*", True),
        ("gzip;q=0", False),
        ("gzip;q=0.0", False),
        ("br, identity", False),
        ("gzip;q=oops", False),
    ],
)
def test_accept_encoding_negotiation(header: str, accepted: bool) -> None:
    assert accepts_gzip(header) is accepted


def test_kubectl_reads_a_gzipped_list(big: Simulator, kubectl: Any) -> None:
    listed = json.loads(kubectl("get", "configmaps", "-n", "shop", "-o", "json").stdout)
    assert len(listed["items"]) == 100
    entry = last_entry(big)
    assert entry.path == "/api/v1/namespaces/shop/configmaps" and entry.bytes_out < GZIP_THRESHOLD
