"""The pass's memory budget (reconcile/kube/memory.py): where it comes from (the setting, a cgroup's limit,
the default), each holder's share, and how the client keeps every answer and page within it: an answer
past its cap is dropped unread and the page asked again smaller; one object too large fails, naming it."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import responses
import yaml

from reconcile.config.settings import load_settings
from reconcile.errors import AnswerTooLarge, ConfigError
from reconcile.kube.auth import AuthOptions, Credentials, load_credentials
from reconcile.kube.client import ClientOptions, KubeClient
from reconcile.kube.memory import (
    LEAST_DATA,
    MARGIN,
    MIB,
    MemoryBudget,
    budget_of,
    cgroup_memory_limit,
    resident_bytes,
)
from reconcile.kube.page_size import PageLimits

SERVER = "https://127.0.0.1:6443"
DEPLOYS = "/apis/apps/v1/deployments"


def write_cgroup(root: Path, proc: Path, lines: str, files: dict[str, str]) -> None:
    proc.mkdir(parents=True)
    (proc / "cgroup").write_text(lines)
    for relative, text in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


@pytest.mark.parametrize(
    ("lines", "files", "limit"),
    [
        ("0::/kubepods/pod1/c1\n", {"kubepods/pod1/c1/memory.max": "134217728\n"}, 128 * MIB),
        ("0::/kubepods/pod1/c1\n", {"kubepods/pod1/c1/memory.max": "max\n"}, None),
        ("0::/\n", {"memory.max": "268435456\n"}, 256 * MIB),
        (
            "12:memory:/docker/abc\n3:cpu:/\n",
            {"memory/docker/abc/memory.limit_in_bytes": "67108864\n"},
            64 * MIB,
        ),
        ("12:memory:/\n", {"memory/memory.limit_in_bytes": "9223372036854771712\n"}, None),  # v1: no limit
        ("0::/gone\n", {}, None),  # unreadable
    ],
    ids=["v2-pod", "v2-max", "v2-root", "v1-limit", "v1-unlimited", "unreadable"],
)
def test_the_cgroup_memory_limit_is_read_from_v2_or_v1(
    tmp_path: Path, lines: str, files: dict[str, str], limit: int | None
) -> None:
    root, proc = tmp_path / "cgroup", tmp_path / "proc"
    write_cgroup(root, proc, lines, files)
    assert cgroup_memory_limit(root, proc) == limit


def test_without_a_proc_file_there_is_no_limit_and_no_resident_size(tmp_path: Path) -> None:
    assert cgroup_memory_limit(tmp_path, tmp_path / "none") is None
    assert resident_bytes(tmp_path / "none") == 0
    (tmp_path / "status").write_text("Name:\tx\nVmRSS:\t   40960 kB\n")
    assert resident_bytes(tmp_path) == 40 * MIB


def test_each_holder_gets_its_share_of_what_the_program_leaves() -> None:
    budget = budget_of(64 * MIB, 40 * MIB, where="memoryBudget", strict=True)
    assert budget.data == 64 * MIB - 40 * MIB - MARGIN
    assert budget.answer_cap == budget.data // 6
    assert budget.page_bytes == budget.data // 16
    assert budget.ahead_bytes == budget.data // 6
    roomy = MemoryBudget(1024 * MIB)
    assert (roomy.page_bytes, roomy.ahead_bytes) == (2 * MIB, 4 * MIB)  # pages stay pages however roomy


def test_a_set_budget_too_small_for_the_largest_object_is_refused_naming_its_numbers() -> None:
    with pytest.raises(
        ConfigError, match=r"memoryBudget: 48 MiB leave 0 MiB .* own 40 MiB .* at least 12 MiB"
    ):
        budget_of(48 * MIB, 40 * MIB, where="memoryBudget", strict=True)


def test_a_pod_limit_too_small_warns_and_a_missing_limit_stays_silent(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.WARNING):
        assert budget_of(48 * MIB, 40 * MIB, where="half the limit", strict=False).data == LEAST_DATA
        assert [r.getMessage() for r in caplog.records][-1].endswith("raise the pod's memory limit")
        caplog.clear()
        budget_of(48 * MIB, 40 * MIB, where="the default", strict=False, limited=False)
    assert caplog.records == []


@pytest.mark.parametrize(
    ("text", "size"), [("64Mi", 64 * MIB), ("1Gi", 1024 * MIB), ("100M", 100_000_000), ("67108864", 64 * MIB)]
)
def test_the_memory_budget_setting_takes_bytes_or_a_quantity(text: str, size: int) -> None:
    settings = load_settings(config_file=None, env={"KUBE_REHASH_MEMORY_BUDGET": text}, flags={})
    assert settings.limits.memory_budget == size


@pytest.mark.parametrize("text", ["64MB", "lots", "512Ki"])
def test_a_memory_budget_that_is_no_size_is_a_named_config_error(text: str) -> None:
    with pytest.raises(ConfigError, match="KUBE_REHASH_MEMORY_BUDGET"):
        load_settings(config_file=None, env={"KUBE_REHASH_MEMORY_BUDGET": text}, flags={})


def test_a_page_is_sized_so_that_its_answer_stays_within_the_page_bytes() -> None:
    limits = PageLimits(100, page_bytes=64 * 1024)
    limits.note(100, 256 * 1024)  # 2.5 KiB an object: 100 of them are four pages' worth
    assert limits.limit == 25
    limits.note(25, 25 * 1024)  # smaller objects later: the list does not grow back past the bound
    assert limits.limit == 25
    assert limits.shrink() and limits.limit == 12
    one = PageLimits(1)
    assert not one.shrink()


@pytest.fixture
def creds(tmp_path: Path) -> Credentials:
    document = {
        "current-context": "ctx",
        "clusters": [{"name": "c", "cluster": {"server": SERVER}}],
        "users": [{"name": "u", "user": {"token": "t0ken"}}],
        "contexts": [{"name": "ctx", "context": {"cluster": "c", "user": "u"}}],
    }
    (tmp_path / "config").write_text(yaml.safe_dump(document))
    return load_credentials(AuthOptions(kubeconfig=str(tmp_path / "config")), env={})


@pytest.fixture
def mock() -> Iterator[responses.RequestsMock]:
    with responses.RequestsMock(assert_all_requests_are_fired=True) as rsps:
        yield rsps


def items(count: int, size: int, token: str | None = None) -> dict[str, Any]:
    """A list page of `count` Deployments of about `size` bytes each."""
    listed = [
        {"metadata": {"name": f"w{i:03}", "namespace": "shop", "labels": {"pad": "x" * size}}}
        for i in range(count)
    ]
    return {"kind": "List", "metadata": {"continue": token} if token else {}, "items": listed}


def test_a_page_too_large_for_its_cap_is_asked_again_with_half_the_objects(
    creds: Credentials, mock: responses.RequestsMock
) -> None:
    budget = MemoryBudget(96 * 1024)  # answers of at most 16 KiB
    mock.add(responses.GET, SERVER + DEPLOYS, json=items(8, 4096, "t1"))  # ~32 KiB: dropped unread
    mock.add(responses.GET, SERVER + DEPLOYS, json=items(4, 100, "t1"))
    mock.add(responses.GET, SERVER + DEPLOYS, json=items(2, 100))
    with KubeClient(creds, ClientOptions(page_size=8, memory=budget)) as client:
        names = [i["metadata"]["name"] for i in client.list_items(DEPLOYS)]
        stats = client.stats.snapshot()
    assert names == [f"w{i:03}" for i in range(4)] + ["w000", "w001"]
    queries = [str(call.request.url).partition("?")[2] for call in mock.calls]
    assert queries == ["limit=8", "limit=4", "limit=4&continue=t1"]
    assert stats["requests"]["list"] == {"200": 2, "too-large": 1}


def test_an_object_too_large_for_the_budget_fails_naming_it(
    creds: Credentials, mock: responses.RequestsMock
) -> None:
    mock.add(responses.GET, SERVER + DEPLOYS + "/huge", json=items(1, 64 * 1024))
    with KubeClient(creds, ClientOptions(memory=MemoryBudget(96 * 1024))) as client:
        with pytest.raises(AnswerTooLarge, match=f"GET {DEPLOYS}/huge: the answer passed 16 KiB"):
            client.get(DEPLOYS + "/huge")
        assert client.get_or_error(DEPLOYS + "/huge") is not None


def test_a_server_that_ignores_limit_fails_the_list_instead_of_filling_memory(
    creds: Credentials, mock: responses.RequestsMock
) -> None:
    whole = items(64, 1024)  # every page request answered with the whole collection, ~70 KiB
    for _ in range(4):  # limit 8, 4, 2, 1
        mock.add(responses.GET, SERVER + DEPLOYS, json=whole)
    options = ClientOptions(page_size=8, memory=MemoryBudget(96 * 1024))
    with KubeClient(creds, options) as client, pytest.raises(AnswerTooLarge, match="one object"):
        list(client.list_items(DEPLOYS))
    queries = [str(call.request.url).partition("?")[2] for call in mock.calls]
    assert queries == ["limit=8", "limit=4", "limit=2", "limit=1"]


def test_a_server_that_sends_more_than_a_page_asked_for_is_asked_for_fewer() -> None:
    """Four times the objects asked for: the next page asks for a quarter of what would fit."""
    growing = PageLimits(500, 1000)
    growing.note(2000, 1_200_000, 600_000)  # 600 bytes an object, half kept: 1,747 fit, a quarter asked
    assert growing.limit == 436
    bounded = PageLimits(100, page_bytes=64 * 1024)
    bounded.note(400, 400 * 1024)  # 1 KiB an object, four times as many as asked: 64 fit, 16 asked
    assert bounded.limit == 16
