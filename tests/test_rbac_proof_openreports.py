"""The RBAC of the OpenReports output is exactly enough: the shipped cluster role plus the `openreports`
component (cronjob/components/openreports, chart value `openreports`) lets a pass with `reports:
openreports` list and write its Reports without a 403, and taking away any of the component's three
permissions makes that pass fail visibly (a server-side apply that creates a Report is authorized as
`create` as well as `patch`). Without the component nothing changes (tests/test_rbac_proof.py).
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
from reconcile.model.choices import Reports
from reconcile.output.report import Report
from reconcile.pipeline.run import run_pass
from reconcile.settings.table import Settings
from rehash_simulator import Simulator
from tests.test_rbac_proof import (
    EXPECTED_ATOMS,
    KUBECTL,
    ROOT,
    SA_TOKEN,
    SA_USER,
    Atom,
    atoms_of,
    change_sources,
    failures,
    rbac_docs,
    seed,
    without,
)

REPORT_ATOMS = {("openreports.io", "reports", verb) for verb in ("list", "create", "patch")}


@pytest.fixture(scope="module")
def rendered(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, Any]]:
    overlay = tmp_path_factory.mktemp("openreports-overlay")
    up = os.path.relpath(ROOT / "cronjob", overlay)
    (overlay / "kustomization.yaml").write_text(
        f"resources: [{up}/cluster]\ncomponents: [{up}/components/openreports]\n"
    )
    out = subprocess.run(
        [KUBECTL, "kustomize", str(overlay)], capture_output=True, text=True, check=True, timeout=60
    )
    return [d for d in yaml.safe_load_all(out.stdout) if d]


def reporting_passes(tmp_path: Path, rbac: list[dict[str, Any]]) -> tuple[list[Report], Simulator]:
    """Adopt, change sources, roll: each pass followed by its Reports, as `kube-rehash run` does."""
    with Simulator().start() as sim:
        sim.add_token(SA_TOKEN, SA_USER)
        sim.load_rbac(rbac)
        seed(sim)
        kubeconfig = sim.write_kubeconfig(tmp_path / "sa-kubeconfig", token=SA_TOKEN)
        client = KubeClient(load_credentials(AuthOptions(str(kubeconfig))))
        settings = Settings.of(kubeconfig=str(kubeconfig), timeout=60.0, reports=Reports.OPENREPORTS)
        reports = []
        try:
            for step in range(2):
                if step:
                    change_sources(sim)
                reports.append(Report(run_pass(settings, client)))  # the pass writes its Reports last
        finally:
            client.close()
        return reports, sim


def test_the_component_adds_exactly_the_three_permissions_and_turns_reports_on(
    rendered: list[dict[str, Any]],
) -> None:
    role = next(d for d in rbac_docs(rendered) if d["kind"] == "ClusterRole")
    assert atoms_of(role["rules"]) == EXPECTED_ATOMS | REPORT_ATOMS
    cronjob = next(d for d in rendered if d["kind"] == "CronJob")
    (container,) = cronjob["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"]
    assert {"name": "KUBE_REHASH_REPORTS", "value": "openreports"} in container["env"]


def test_reports_as_the_service_account_meet_no_403(tmp_path: Path, rendered: list[dict[str, Any]]) -> None:
    reports, sim = reporting_passes(tmp_path, rbac_docs(rendered))
    assert failures(reports) == [] and sim.log.count(status=403) == 0
    assert sorted(r["metadata"]["namespace"] for r in sim.store.list("reports")) == ["few", "many"]


@pytest.mark.parametrize("atom", sorted(REPORT_ATOMS), ids=lambda a: f"{a[2]}-{a[1]}")
def test_without_one_permission_the_reports_fail_visibly(
    atom: Atom, tmp_path: Path, rendered: list[dict[str, Any]]
) -> None:
    reports, sim = reporting_passes(tmp_path, without(rbac_docs(rendered), atom))
    assert failures(reports), f"no pass failed without {atom}"
    assert sim.log.count(status=403) > 0 and sim.store.list("reports") == []
