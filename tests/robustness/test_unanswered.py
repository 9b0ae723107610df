"""The client marks an error answered after an earlier attempt of the same request went unanswered
(`ApiError.unanswered_before`): the writer's cue that the failed precondition may be its own write's."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from reconcile.errors import Invalid
from reconcile.kube.client import PatchType
from rehash_simulator import Simulator
from tests.reliability.helpers import client_for

PATH = "/api/v1/namespaces/shop/configmaps/c"
GUARDED = [
    {"op": "test", "path": "/data/k", "value": "old"},
    {"op": "add", "path": "/data/k", "value": "new"},
]


@pytest.fixture
def sim() -> Iterator[Simulator]:
    with Simulator().start() as running:
        running.store.create(
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": "c", "namespace": "shop"},
                "data": {"k": "old"},
            }
        )
        yield running


def test_a_precondition_failing_after_a_lost_answer_says_an_attempt_went_unanswered(
    sim: Simulator, tmp_path: Path
) -> None:
    sim.faults.lose_answer(method="PATCH", max_count=1)
    with (
        client_for(sim.write_kubeconfig(tmp_path / "kubeconfig")) as client,
        pytest.raises(Invalid) as raised,
    ):
        client.patch(PATH, GUARDED, patch_type=PatchType.JSON)
    assert raised.value.unanswered_before is True
    assert [(e.method, e.status, e.bytes_out > 0) for e in sim.log.entries(method="PATCH")] == [
        ("PATCH", 200, False),
        ("PATCH", 422, True),
    ]
    assert sim.store.get("configmaps", "shop", "c")["data"] == {"k": "new"}


def test_a_precondition_failing_at_the_first_attempt_says_nothing_went_unanswered(
    sim: Simulator, tmp_path: Path
) -> None:
    sim.store.patch_merge("configmaps", "shop", "c", {"data": {"k": "theirs"}})
    with (
        client_for(sim.write_kubeconfig(tmp_path / "kubeconfig")) as client,
        pytest.raises(Invalid) as raised,
    ):
        client.patch(PATH, GUARDED, patch_type=PatchType.JSON)
    assert raised.value.unanswered_before is False
    assert len(sim.log.entries(method="PATCH")) == 1


def test_a_reset_before_the_request_was_served_also_counts_as_unanswered(
    sim: Simulator, tmp_path: Path
) -> None:
    """The client cannot tell a reset before serving from one after: both may have been served."""
    sim.faults.reset_connection(method="PATCH", max_count=1)
    sim.faults.mutate(
        lambda store: store.patch_merge("configmaps", "shop", "c", {"data": {"k": "theirs"}}),
        method="PATCH",
        nth=2,
    )
    with (
        client_for(sim.write_kubeconfig(tmp_path / "kubeconfig")) as client,
        pytest.raises(Invalid) as raised,
    ):
        client.patch(PATH, GUARDED, patch_type=PatchType.JSON)
    assert raised.value.unanswered_before is True
