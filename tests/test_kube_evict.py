"""The eviction request (`KubeClient.evict`): the exact POST, and a PodDisruptionBudget's 429 raised at once
with the budget its cause names, never retried within the pass (a throttling 429 elsewhere is)."""

from __future__ import annotations

import json

import pytest
import responses

from reconcile.errors import TooManyRequests
from reconcile.kube.client import KubeClient
from tests.test_kube_client import SERVER, FakeClock, client, clock, creds, mock, sent, status

__all__ = ["client", "clock", "creds", "mock"]  # the fixtures these tests use

EVICTION = "/api/v1/namespaces/shop/pods/web-1/eviction"
BODY = {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "web-1", "namespace": "shop"}}


def test_an_eviction_is_one_post_of_a_policy_v1_eviction(
    client: KubeClient, mock: responses.RequestsMock
) -> None:
    mock.add(responses.POST, SERVER + EVICTION, status=201, json={"kind": "Status", "status": "Success"})
    client.evict(EVICTION, BODY, dry_run=True)
    request = sent(mock, 0)
    assert request.url == SERVER + EVICTION + "?fieldManager=kube-rehash&dryRun=All"
    assert request.headers["Content-Type"] == "application/json" and json.loads(request.body or b"") == BODY


def test_a_budget_refusal_is_raised_at_once_naming_the_budget(
    client: KubeClient, mock: responses.RequestsMock, clock: FakeClock
) -> None:
    refusal = status(
        429, "TooManyRequests", "Cannot evict pod as it would violate the pod's disruption budget."
    )
    refusal["details"] = {
        "causes": [
            {
                "reason": "DisruptionBudget",
                "message": "The disruption budget web needs 2 healthy pods and has 2 currently",
            }
        ]
    }
    mock.add(responses.POST, SERVER + EVICTION, status=429, json=refusal, headers={"Retry-After": "10"})
    with pytest.raises(TooManyRequests) as raised:
        client.evict(EVICTION, BODY)
    assert len(mock.calls) == 1 and clock.sleeps == []
    assert raised.value.message == (
        "Cannot evict pod as it would violate the pod's disruption budget. "
        "(The disruption budget web needs 2 healthy pods and has 2 currently)"
    )


def test_a_server_error_on_an_eviction_is_still_retried(
    client: KubeClient, mock: responses.RequestsMock, clock: FakeClock
) -> None:
    mock.add(responses.POST, SERVER + EVICTION, status=503, json=status(503, "ServiceUnavailable", "busy"))
    mock.add(responses.POST, SERVER + EVICTION, status=201, json={"kind": "Status", "status": "Success"})
    client.evict(EVICTION, BODY)
    assert len(mock.calls) == 2 and len(clock.sleeps) == 1
