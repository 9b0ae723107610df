"""The answer settings (rehash_simulator/answers.py): each one changes exactly what it says, and the
defaults answer as kube-apiserver does."""

from __future__ import annotations

import gzip
import json
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import requests
from simhelpers import call, configmap

from benchmarks.kubeconfig import session_for
from rehash_simulator import Simulator
from rehash_simulator.answers import Answers, AnswerSetting

LIST = "/api/v1/namespaces/shop/configmaps"


@pytest.fixture
def shop(sim: Simulator) -> Simulator:
    """20 ConfigMaps of about 10 KB each in one namespace: a full list crosses the gzip threshold."""
    for i in range(20):
        sim.store.create(configmap(f"cm-{i:02d}", data={"config": f"line {i}\n" * 1200}))
    return sim


def page(sim: Simulator, query: str) -> dict[str, Any]:
    reply = call(sim, "GET", f"{LIST}?{query}")
    assert reply.status == 200
    body: dict[str, Any] = reply.json()
    return body


def answer(sim: Simulator, **settings: Any) -> None:
    sim.store.answers.set(Answers.from_mapping(settings))


def test_the_defaults_count_what_remains_only_for_a_list_without_a_selector(shop: Simulator) -> None:
    plain = page(shop, "limit=5")
    assert len(plain["items"]) == 5 and plain["metadata"]["remainingItemCount"] == 15
    selected = page(shop, "limit=5&labelSelector=app%3Dweb")
    assert "remainingItemCount" not in selected["metadata"]


@pytest.mark.parametrize(("setting", "plain", "selected"), [("never", None, None), ("always", 15, 15)])
def test_remaining_item_count_can_be_never_or_always_sent(
    shop: Simulator, setting: str, plain: int | None, selected: int | None
) -> None:
    answer(shop, remainingItemCount=setting)
    assert page(shop, "limit=5")["metadata"].get("remainingItemCount") == plain
    assert (
        page(shop, "limit=5&fieldSelector=metadata.namespace%3Dshop")["metadata"].get("remainingItemCount")
        == selected
    )


def test_an_ignored_limit_answers_the_whole_list_in_one_page(shop: Simulator) -> None:
    answer(shop, limit="ignored")
    whole = page(shop, "limit=5")
    assert len(whole["items"]) == 20 and "continue" not in whole["metadata"]


@pytest.mark.parametrize(
    ("settings", "sizes"),
    [({"pageScale": 0.5}, [3, 3, 3]), ({"pageCap": 4}, [4, 4, 4]), ({"pageFloor": 7}, [7, 7, 6])],
)
def test_pages_hold_the_scaled_or_capped_number_of_objects(
    shop: Simulator, settings: dict[str, Any], sizes: list[int]
) -> None:
    answer(shop, **settings)
    first = page(shop, "limit=6")
    second = page(shop, f"limit=6&continue={first['metadata']['continue']}")
    third = page(shop, f"limit=6&continue={second['metadata']['continue']}")
    assert [len(p["items"]) for p in (first, second, third)] == sizes
    names = [i["metadata"]["name"] for p in (first, second, third) for i in p["items"]]
    assert names == [f"cm-{i:02d}" for i in range(sum(sizes))]


def test_a_scrambled_order_lists_every_object_once_but_not_in_key_order(shop: Simulator) -> None:
    answer(shop, order="scrambled")
    names = [i["metadata"]["name"] for i in page(shop, "")["items"]]
    assert sorted(names) == [f"cm-{i:02d}" for i in range(20)] and names != sorted(names)


def test_a_continue_token_expires_after_the_set_lifetime(shop: Simulator) -> None:
    answer(shop, continueTtl=0.2)
    first = page(shop, "limit=5")
    time.sleep(0.4)
    expired = call(shop, "GET", f"{LIST}?limit=5&continue={first['metadata']['continue']}")
    assert expired.status == 410 and expired.json()["reason"] == "Expired"


def test_chunked_gzip_sends_no_content_length_and_the_same_body(shop: Simulator, tmp_path: Path) -> None:
    gzip_ok = {"Accept-Encoding": "gzip"}
    plain = call(shop, "GET", LIST, headers=gzip_ok)
    answer(shop, gzip="chunked", chunkBytes=1000)
    ca = tmp_path / "ca.pem"
    ca.write_bytes(shop.ca_pem)
    auth = {"Authorization": f"Bearer {shop.admin_token}"}
    with requests.get(shop.url + LIST, headers={**gzip_ok, **auth}, verify=str(ca), stream=True) as chunked:
        headers = chunked.headers
        raw = b"".join(chunked.raw.stream(1 << 20, decode_content=False))
    assert headers["Transfer-Encoding"] == "chunked" and "Content-Length" not in headers
    assert headers["Content-Encoding"] == "gzip"
    assert gzip.decompress(raw) == gzip.decompress(plain.body)


def test_gzip_off_sends_every_answer_plain(shop: Simulator) -> None:
    answer(shop, gzip="off")
    reply = call(shop, "GET", LIST, headers={"Accept-Encoding": "gzip"})
    assert "Content-Encoding" not in reply.headers and int(reply.headers["Content-Length"]) == len(reply.body)


def test_an_unknown_setting_or_value_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown answer settings: pageSize"):
        Answers.from_mapping({"pageSize": 5})
    with pytest.raises(ValueError):
        Answers.from_mapping({"gzip": "deflate"})
    with pytest.raises(ValueError, match="pageScale"):
        Answers.from_mapping({"pageScale": 0})


def test_the_setting_file_is_read_again(tmp_path: Path) -> None:
    path = tmp_path / "answers.json"
    path.write_text(json.dumps({"limit": "ignored"}))
    setting = AnswerSetting(path=path)
    assert setting.current == Answers(limit=Answers.from_mapping({"limit": "ignored"}).limit)
    path.write_text("")
    assert setting.reload() == Answers()


def test_the_simulator_process_reads_its_answers_again_on_sighup(tmp_path: Path) -> None:
    path = tmp_path / "answers.json"
    path.write_text(json.dumps({"limit": "ignored"}))
    objects = tmp_path / "objects.json"
    objects.write_text(json.dumps([configmap(f"cm-{i}") for i in range(3)]))
    kubeconfig, ready = tmp_path / "kubeconfig", tmp_path / "ready"
    argv = [
        sys.executable,
        "-m",
        "rehash_simulator",
        "--kubeconfig-out",
        str(kubeconfig),
        "--load",
        str(objects),
    ]
    server = subprocess.Popen(
        [*argv, "--ready-file", str(ready), "--answers", str(path)], stderr=subprocess.DEVNULL
    )
    try:
        deadline = time.monotonic() + 30
        while not ready.exists():
            assert time.monotonic() < deadline and server.poll() is None
            time.sleep(0.1)
        session, url = session_for(kubeconfig)

        def items() -> int:
            return len(session.get(url + LIST, params={"limit": "1"}).json()["items"])

        assert items() == 3
        path.write_text("{}")
        server.send_signal(signal.SIGHUP)
        deadline = time.monotonic() + 10
        while items() != 1:
            assert time.monotonic() < deadline
            time.sleep(0.1)
    finally:
        server.terminate()
        server.wait(30)
