"""A ValidatingAdmissionPolicy (CEL) that denies every change to workloads labelled `change-freeze: "true"`.

Why: admission is the API server's, not RBAC's: the request is authorised, then refused with the policy's
own message. A frozen workload must be `failed` with that message, every other workload processed, exit 1,
and the denial must not be mistaken for a lost race (a failed JSON-patch `test` is also 422 Invalid): one
attempt per pass, counted in the audit log, never a re-read and re-patch storm.
"""

from __future__ import annotations

import http.client
import json
import ssl
from collections import Counter
from typing import Any

import pytest

from rehash_simulator import Simulator
from tests.chaos_real.harness import Cluster, Figures, configmap, deployment, seed, wait_until

COUNT, SOURCES = 12, 3
FROZEN = ("d00", "d05")
MESSAGE = "change freeze: this workload may not be changed"
POLICY = "change-freeze"


def policy(reason: str | None) -> dict[str, Any]:
    validation: dict[str, Any] = {
        "expression": "!(has(oldObject.metadata.labels) && 'change-freeze' in oldObject.metadata.labels"
        " && oldObject.metadata.labels['change-freeze'] == 'true')",
        "message": MESSAGE,
    }
    if reason:
        validation["reason"] = reason
    return {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingAdmissionPolicy",
        "metadata": {"name": POLICY},
        "spec": {
            "failurePolicy": "Fail",
            "matchConstraints": {
                "resourceRules": [
                    {
                        "apiGroups": ["apps"],
                        "apiVersions": ["v1"],
                        "operations": ["UPDATE"],
                        "resources": ["deployments", "statefulsets", "daemonsets"],
                    }
                ]
            },
            "validations": [validation],
        },
    }


def binding(ns: str) -> dict[str, Any]:
    return {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingAdmissionPolicyBinding",
        "metadata": {"name": POLICY},
        "spec": {
            "policyName": POLICY,
            "validationActions": ["Deny"],
            "matchResources": {
                "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": ns}},
            },
        },
    }


def _install(cluster: Cluster, ns: str, reason: str | None) -> None:
    cluster.kubectl("delete", "validatingadmissionpolicybinding", POLICY, "--ignore-not-found")
    cluster.kubectl("delete", "validatingadmissionpolicy", POLICY, "--ignore-not-found")
    cluster.apply(policy(reason), binding(ns))


def _policy_in_force(cluster: Cluster, ns: str) -> bool:
    """A dry-run label change of a frozen workload is denied (policies are loaded asynchronously)."""
    status, _ = cluster.cp.request(
        "PATCH",
        f"/apis/apps/v1/namespaces/{ns}/deployments/{FROZEN[0]}?dryRun=All",
        {"metadata": {"labels": {"probe": "1"}}},
        content_type="application/merge-patch+json",
    )
    return status in (403, 422)


# The policy's `reason` decides the status: none (the default, what most policies say) is 422 Invalid,
# the very answer of a failed JSON-patch `test`; Forbidden is 403.
@pytest.mark.parametrize(
    "reason",
    [
        pytest.param(None, id="default-reason-422"),
        pytest.param("Forbidden", id="forbidden-403"),
    ],
)
def test_a_frozen_workload_fails_once_per_pass_with_the_policys_message_and_the_rest_rolls(
    plane: Cluster, reason: str | None
) -> None:
    cluster = plane
    ns = cluster.namespace("vap")
    names = seed(cluster, ns, COUNT, SOURCES, **{n: {"change-freeze": "true"} for n in FROZEN})
    assert set(cluster.run("-n", ns).actions().values()) == {"adopt"}, "adoption precedes the freeze"
    cluster.wait_observed(ns)
    _install(cluster, ns, reason)
    wait_until("the admission policy to be in force", lambda: _policy_in_force(cluster, ns), 30)
    figures = Figures(f"ValidatingAdmissionPolicy denies frozen workloads ({reason or 'default'} reason)")

    _denial_is_the_simulators(cluster, ns, reason)

    cluster.apply(*(configmap(ns, f"cm{j}", {"v": "1"}) for j in range(SOURCES)))
    for _ in range(2):  # the freeze holds: every pass fails the same two, once each
        offset = cluster.audit_offset()
        result = cluster.run("-n", ns)
        figures.count(result)
        figures.injected += len(FROZEN)
        assert result.code == 1, result.stderr
        rows = result.rows()
        for name in names:
            row = rows[f"Deployment/{ns}/{name}"]
            if name in FROZEN:
                assert row["action"] == "failed", row
                assert MESSAGE in row["reason"], row
                assert "kept changing" not in row["reason"], row
            else:
                assert row["action"] in ("rollout", "in-sync"), row
        patches = Counter(
            e.name for e in cluster.audit_since(offset) if e.verb == "patch" and e.resource == "deployments"
        )
        denied = Counter(
            e.name
            for e in cluster.audit_since(offset)
            if e.verb == "patch" and e.resource == "deployments" and e.code in (403, 422)
        )
        assert {n: patches[n] for n in FROZEN} == dict.fromkeys(FROZEN, 1), patches
        assert set(denied) == set(FROZEN), denied

    cluster.wait_observed(ns)
    counts = cluster.rs_counts(ns)
    expected = {n: 1 if n in FROZEN else 2 for n in names}
    figures.expected = COUNT - len(FROZEN)
    figures.done = sum(1 for n in names if n not in FROZEN and counts[n] == 2)
    figures.doubled = sum(max(0, counts[n] - expected[n]) for n in names)
    figures.lost = sum(max(0, expected[n] - counts[n]) for n in names)
    assert counts == expected, counts

    # The freeze lifted (binding deleted): the next pass rolls the two it had to leave, once each.
    cluster.kubectl("delete", "validatingadmissionpolicybinding", POLICY)
    wait_until("the admission policy to be lifted", lambda: not _policy_in_force(cluster, ns), 30)
    lifted = cluster.run("-n", ns)
    figures.count(lifted)
    assert lifted.code == 0, lifted.stderr
    assert {n: lifted.actions()[f"Deployment/{ns}/{n}"] for n in FROZEN} == dict.fromkeys(FROZEN, "rollout")
    cluster.wait_observed(ns)
    assert cluster.rs_counts(ns) == dict.fromkeys(names, 2)
    figures.expected += len(FROZEN)
    figures.done += len(FROZEN)
    figures.save()
    cluster.kubectl("delete", "validatingadmissionpolicy", POLICY)


def _denial_is_the_simulators(cluster: Cluster, ns: str, reason: str | None) -> None:
    """The real denial of kube-rehash's kind of write (a JSON patch) against the simulator's Deny fault."""
    path = f"/apis/apps/v1/namespaces/{ns}/deployments/{FROZEN[0]}"
    patch = [{"op": "add", "path": "/metadata/annotations/probe", "value": "1"}]
    status, real = cluster.cp.request("PATCH", path, patch, content_type="application/json-patch+json")
    with Simulator() as sim:
        sim.store.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
        sim.store.create(deployment(ns, FROZEN[0], "cm0"))
        sim.faults.deny(POLICY, POLICY, MESSAGE, reason, method="PATCH")
        sim_status, simulated = _sim_patch(sim, path, patch)
    assert sim_status == status, (status, sim_status)
    assert simulated == real, (real, simulated)


def _sim_patch(sim: Simulator, path: str, body: Any) -> tuple[int, Any]:
    context = ssl.create_default_context(cadata=sim.ca_pem.decode())
    conn = http.client.HTTPSConnection("127.0.0.1", sim.port, context=context, timeout=10)
    try:
        headers = {
            "Authorization": f"Bearer {sim.admin_token}",
            "Content-Type": "application/json-patch+json",
            "Accept": "application/json",
        }
        conn.request("PATCH", path, body=json.dumps(body), headers=headers)
        response = conn.getresponse()
        return response.status, json.loads(response.read())
    finally:
        conn.close()
