"""Fixtures of the per-stage tests: the fake transport, a client against it, and a real read stage (one
whose budget is already spent, too)."""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import responses

from reconcile.kube.client import KubeClient
from reconcile.pipeline.budget import Budget
from reconcile.pipeline.read import ReadStage
from tests.stages.http import make_client, read_stage


@pytest.fixture
def mock() -> Iterator[responses.RequestsMock]:
    with responses.RequestsMock(assert_all_requests_are_fired=True) as rsps:
        yield rsps


@pytest.fixture
def page_size() -> int:
    """Objects per list page of `client` (a module that checks paging overrides it)."""
    return 500


@pytest.fixture
def client(tmp_path: Path, page_size: int) -> Iterator[KubeClient]:
    with make_client(tmp_path, page_size=page_size) as kube:
        yield kube


@pytest.fixture
def stage(client: KubeClient) -> Iterator[ReadStage]:
    """A real read stage with one worker, so its requests go out in a fixed order."""
    with ThreadPoolExecutor(max_workers=1) as executor:
        yield read_stage(client, executor)


@pytest.fixture
def spent_stage(tmp_path: Path) -> Iterator[ReadStage]:
    """A read stage whose pass budget is already spent: every request is refused before it is sent."""
    with make_client(tmp_path, gate=Budget(0.0).admit) as kube, ThreadPoolExecutor(max_workers=1) as executor:
        yield read_stage(kube, executor)
