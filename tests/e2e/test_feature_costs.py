"""What namespace selectors and label-selected sources cost a steady pass, from the simulator's request
log: workloads that use none of them (no namespaceSelector, no label-selected sources) send exactly the
requests they sent before those workloads existed elsewhere; a workload with a label selector costs its own
read and one list of its namespace per selector."""

from __future__ import annotations

import pytest

from tests.e2e.conftest import (
    Backend,
    configmap,
    csi_pod_spec,
    csi_status,
    deployment,
    env_from,
    owned_pod,
    secret,
)
from tests.e2e.test_workload_ref import referencing

pytestmark = pytest.mark.sim_only("counts requests in the simulator's request log")


def plain(cluster: Backend) -> None:
    cluster.add(
        configmap("app", {"a": "1"}),
        secret("db", {"pw": "1"}),
        deployment("web", env_from("configmap", "app")),
        deployment("api", env_from("secret", "db")),
    )


def steady_requests(cluster: Backend, namespace: str | None = None) -> list[tuple[str, str, str]]:
    """The requests of one steady pass (after an adopting one), optionally only those under a namespace,
    sorted (sources are read in parallel, in no fixed order)."""
    cluster.run()
    cluster.clear_log()
    result = cluster.run()
    assert set(result.actions().values()) == {"in-sync"}, result.stdout
    requests = [
        (r.method, r.path, "&".join(f"{k}={v}" for k, v in sorted(r.query.items()) if k != "continue"))
        for r in cluster.requests()
    ]
    return sorted(r for r in requests if namespace is None or f"/namespaces/{namespace}/" in r[1])


def test_a_steady_pass_of_workloads_using_no_new_feature_sends_what_it_sent_before(cluster: Backend) -> None:
    plain(cluster)
    before = steady_requests(cluster)
    assert not [r for r in before if r[1].startswith("/api/v1/namespaces") and r[1].count("/") == 3]
    assert not [r for r in before if "labelSelector" in r[2]]
    cluster.add(
        configmap("cpu", {"json": "1"}, ns="dash", labels={"grafana_dashboard": "1"}),
        deployment(
            "grafana", ns="dash", annotations={"kube-rehash.io/configmap-selector": "grafana_dashboard=1"}
        ),
    )
    after = steady_requests(cluster)
    assert [r for r in after if "/namespaces/dash/" not in r[1]] == before
    dash = [r for r in after if "/namespaces/dash/" in r[1]]
    # The selector workload is read in full every pass (like search mode: its sources are found by
    # listing, so no record may stand for them), plus the one list of its selector: no content.
    assert dash == [
        ("GET", "/api/v1/namespaces/dash/configmaps", "labelSelector=grafana_dashboard=1&limit=500"),
        ("GET", "/apis/apps/v1/namespaces/dash/deployments/grafana", ""),
    ]


@pytest.mark.slow
def test_csi_and_workload_ref_workloads_elsewhere_leave_the_others_requests_as_they_were(
    cluster: Backend,
) -> None:
    plain(cluster)
    before = steady_requests(cluster)
    cluster.add(
        deployment("vault", csi_pod_spec(), ns="csi"),
        owned_pod("vault-abc12-aaaaa", "vault", ns="csi"),
        csi_status("vault-abc12-aaaaa", {"pw": "v1"}, ns="csi"),
        configmap("app", {"a": "1"}, ns="argo"),
        deployment("web", env_from("configmap", "app"), ns="argo", annotations={}),
        {
            **referencing("web-rollout", "web"),
            "metadata": {**referencing("web-rollout", "web")["metadata"], "namespace": "argo"},
        },
    )
    after = steady_requests(cluster)
    assert [r for r in after if not any(f"/namespaces/{ns}/" in r[1] for ns in ("csi", "argo"))] == before
    assert [r for r in after if "/namespaces/csi/" in r[1]] == [
        ("GET", "/api/v1/namespaces/csi/pods", "limit=500"),
        ("GET", "/apis/apps/v1/namespaces/csi/deployments/vault", ""),
        (
            "GET",
            "/apis/secrets-store.csi.x-k8s.io/v1/namespaces/csi/secretproviderclasspodstatuses",
            "limit=500",
        ),
    ]
    assert [r for r in after if "/namespaces/argo/" in r[1]] == [
        ("GET", "/api/v1/namespaces/argo/configmaps/app", ""),  # its source's metadata, as for any workload
        ("GET", "/apis/apps/v1/namespaces/argo/deployments/web", ""),
        ("GET", "/apis/argoproj.io/v1alpha1/namespaces/argo/rollouts/web-rollout", ""),
    ]
