"""The RBAC of restart by eviction is exactly enough: the shipped cluster role plus the `evict` component
(cronjob/components/evict; chart value `evict`, or config `restart: evict`) lets a pass evict an
operator-owned Deployment's old pods without a 403, and taking away either of the component's permissions,
or the ReplicaSet list the owner chain needs, makes that pass fail visibly; eviction keeps its own `list` on
pods when the Secrets Store CSI component is taken out. Without the component nothing changes
(tests/test_rbac_proof.py).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from reconcile.kube.auth import AuthOptions, load_credentials
from reconcile.kube.client import KubeClient
from reconcile.output.report import Report
from reconcile.pipeline.run import run_pass
from reconcile.settings.table import Settings
from rehash_simulator import Simulator
from tests.e2e.conftest import Cluster
from tests.evicting import change, pods, seed
from tests.test_chart import kustomize
from tests.test_rbac_proof import (
    EXPECTED_ATOMS,
    KUBECTL,
    ROOT,
    SA_TOKEN,
    SA_USER,
    Atom,
    atoms_of,
    failures,
    rbac_docs,
    without,
)

EVICT_ATOMS = {("", "pods", "list"), ("", "pods/eviction", "create")}


@pytest.fixture(scope="module")
def evict_rbac(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, Any]]:
    overlay = tmp_path_factory.mktemp("evict-overlay")
    up = os.path.relpath(ROOT / "cronjob", overlay)
    (overlay / "kustomization.yaml").write_text(
        f"resources: [{up}/cluster]\ncomponents: [{up}/components/evict]\n"
    )
    out = subprocess.run(
        [KUBECTL, "kustomize", str(overlay)], capture_output=True, text=True, check=True, timeout=60
    )
    return rbac_docs([d for d in yaml.safe_load_all(out.stdout) if d])


def evicting_passes(tmp_path: Path, rbac: list[dict[str, Any]]) -> tuple[list[Report], Simulator, list[str]]:
    """Adopt, change the ConfigMap, then one pass that must evict; returns the reports and pods left."""
    with Simulator(content_times=True).start() as sim:
        sim.add_token(SA_TOKEN, SA_USER)
        sim.load_rbac(rbac)
        cluster = Cluster(sim, tmp_path)
        seed(cluster, replicas=2, stray=False)
        kubeconfig = sim.write_kubeconfig(tmp_path / "sa-kubeconfig", token=SA_TOKEN)
        client = KubeClient(load_credentials(AuthOptions(str(kubeconfig))))
        settings = Settings.of(kubeconfig=str(kubeconfig), timeout=60.0)
        try:
            first = Report(run_pass(settings, client))
            change(cluster)
            second = Report(run_pass(settings, client))
        finally:
            client.close()
        return [first, second], sim, pods(cluster)


def test_the_evict_component_adds_exactly_the_two_permissions(evict_rbac: list[dict[str, Any]]) -> None:
    role = next(d for d in evict_rbac if d["kind"] == "ClusterRole")
    assert atoms_of(role["rules"]) == EXPECTED_ATOMS | EVICT_ATOMS


def test_eviction_as_the_service_account_meets_no_403(
    tmp_path: Path, evict_rbac: list[dict[str, Any]]
) -> None:
    reports, sim, left = evicting_passes(tmp_path, evict_rbac)
    assert failures(reports) == [] and sim.log.count(status=403) == 0
    assert [r.action for r in reports[1].rows] == ["rollout"] and left == ["web-1-1"]


@pytest.mark.parametrize(
    "atom", sorted(EVICT_ATOMS | {("apps", "replicasets", "list")}), ids=lambda a: f"{a[2]}-{a[1]}"
)
def test_without_one_permission_eviction_fails_visibly(
    atom: Atom, tmp_path: Path, evict_rbac: list[dict[str, Any]]
) -> None:
    reports, sim, left = evicting_passes(tmp_path, without(evict_rbac, atom))
    assert failures(reports), f"no pass failed without {atom}"
    assert sim.log.count(status=403) > 0 and left == ["web-1-0", "web-1-1"]


def test_eviction_lists_pods_by_its_own_rule_with_the_csi_component_taken_out(tmp_path: Path) -> None:
    """The Secrets Store CSI component grants `list` on pods too; withheld, eviction still has its own."""
    rbac = rbac_docs(kustomize(tmp_path, ["cluster", "-secrets-store-csi", "components/evict"]))
    role = next(d for d in rbac if d["kind"] == "ClusterRole")
    csi_only = ("secrets-store.csi.x-k8s.io", "secretproviderclasspodstatuses", "list")
    assert atoms_of(role["rules"]) == (EXPECTED_ATOMS - {csi_only}) | EVICT_ATOMS
    reports, sim, left = evicting_passes(tmp_path, rbac)
    assert failures(reports) == [] and sim.log.count(status=403) == 0
    assert [r.action for r in reports[1].rows] == ["rollout"] and left == ["web-1-1"]
