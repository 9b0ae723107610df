"""Fixtures of the per-stage tests: the fake transport, a client against it, and a real read stage."""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import responses

from reconcile.kube.client import KubeClient
from reconcile.pipeline.fetch import SourceReader
from reconcile.pipeline.read import ReadStage
from tests.stages.http import DISCOVERY, make_client


@pytest.fixture
def mock() -> Iterator[responses.RequestsMock]:
    with responses.RequestsMock(assert_all_requests_are_fired=True) as rsps:
        yield rsps


@pytest.fixture
def client(tmp_path: Path) -> Iterator[KubeClient]:
    with make_client(tmp_path) as kube:
        yield kube


@pytest.fixture
def stage(client: KubeClient) -> Iterator[ReadStage]:
    """A real read stage with one worker, so its requests go out in a fixed order."""
    with ThreadPoolExecutor(max_workers=1) as executor:
        reader = SourceReader(client, executor, mode="auto", settings=DISCOVERY, hash_key=None)
        yield ReadStage(client, executor, reader, DISCOVERY)
