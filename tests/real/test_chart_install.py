"""The Helm chart on the real control plane: its objects pass strict server-side validation for every values
set of tests/test_chart.py, and a `helm install` runs the CronJob's pod for real (the built image).

Why: tests/test_chart.py proves the chart renders what the Kustomize overlays render; here the API server
(kube-apiserver 1.37, `kubectl apply --dry-run=server --validate=strict`) judges the rendered objects, and the
installed release does the job: the pod (tests/image/pod.py's run_pod, in-cluster credentials of the chart's
ServiceAccount) adopts a workload, rolls it once after a ConfigMap change, then reports it in sync, with no
403 in the audit log, reading Secrets by name only when secretsGetOnly is set.
"""

from __future__ import annotations

import functools
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.cluster.controlplane import ControlPlane
from tests.image.pod import built_image
from tests.real.conftest import (
    KUBECTL,
    Kube,
    namespace_gone,
    no_terminating_namespaces,
    wait_until,
)
from tests.real.test_cronjob_pod import Installed, adopt_roll_once_then_in_sync
from tests.real.test_rbac import TEAMS
from tests.test_chart import CHART, EXTRA_VALUES, IMAGE, MATRIX, run_helm

pytestmark = pytest.mark.helm

SA_USER = "system:serviceaccount:kube-rehash:kube-rehash"


@pytest.mark.parametrize("name", [*MATRIX, *EXTRA_VALUES])
def test_rendered_chart_passes_strict_server_side_validation(
    control: ControlPlane, helm: Path, tmp_path: Path, name: str
) -> None:
    flags = MATRIX[name][1] if name in MATRIX else EXTRA_VALUES[name]
    rendered = run_helm(
        helm, "template", "kube-rehash", str(CHART), "--namespace", "kube-rehash", *flags
    ).stdout
    manifest = tmp_path / "rendered.yaml"
    manifest.write_text(rendered, encoding="utf-8")
    # Server-side dry run needs the namespaces to exist; they are created for real and removed afterwards.
    namespaces = ["kube-rehash", *(TEAMS if "namespaced" in name else ())]
    for ns in namespaces:
        control.request(
            "POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}
        )
    try:
        argv = [
            str(KUBECTL),
            "--kubeconfig",
            str(control.kubeconfig),
            "apply",
            "--dry-run=server",
            "--validate=strict",
            "-f",
            str(manifest),
        ]
        done = subprocess.run(argv, capture_output=True, text=True, timeout=120, check=False)
        assert done.returncode == 0, f"{name}: {done.stderr}"
        assert "(server dry run)" in done.stdout
        assert "Warning" not in done.stderr, (
            done.stderr
        )  # strict: unknown or duplicate fields would warn/fail
    finally:
        for ns in namespaces:
            control.request("DELETE", f"/api/v1/namespaces/{ns}")
        for ns in namespaces:
            wait_until(f"namespace {ns} to be deleted", functools.partial(namespace_gone, control, ns), 180)


@pytest.fixture
def helm_installed(kube: Kube, helm: Path, tmp_path: Path) -> Iterator[Installed]:
    """`helm install` of the chart, namespaced to team-a/team-b with secretsGetOnly, as the README shows."""
    cp = kube.cp
    wait_until("other tests' namespaces to be deleted", lambda: no_terminating_namespaces(cp), 180)
    for ns in TEAMS:
        cp.api(
            "POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}
        )
    kubeconfig = ["--kubeconfig", str(cp.kubeconfig)]
    run_helm(
        helm,
        "install",
        "kube-rehash",
        str(CHART),
        "-n",
        "kube-rehash",
        "--create-namespace",
        *IMAGE,
        "--set",
        "scope.namespaces={team-a,team-b}",
        "--set",
        "secretsGetOnly=true",
        *kubeconfig,
    )
    # Pods are started on demand here; the schedule must not start any meanwhile.
    kube.kubectl("patch", "cronjob/kube-rehash", "-n", "kube-rehash", "-p", '{"spec":{"suspend":true}}')
    try:
        yield Installed("helm:namespaced+secrets-get-only", kube, CHART)
    finally:
        run_helm(
            helm, "uninstall", "kube-rehash", "-n", "kube-rehash", "--wait=false", *kubeconfig, check=False
        )
        for ns in ("kube-rehash", *TEAMS):
            cp.request("DELETE", f"/api/v1/namespaces/{ns}")
        for ns in ("kube-rehash", *TEAMS):
            wait_until(f"namespace {ns} to be deleted", functools.partial(namespace_gone, cp, ns), 180)


@pytest.mark.image
def test_helm_installed_cronjob_pod_adopts_rolls_once_then_is_in_sync(
    helm_installed: Installed, tmp_path: Path
) -> None:
    image = built_image()
    # The generated hash key is in place (its value is never read here).
    status, _ = helm_installed.cp.request(
        "GET", "/api/v1/namespaces/kube-rehash/secrets/kube-rehash-hash-key"
    )
    assert status == 200
    adopt_roll_once_then_in_sync(helm_installed, image, tmp_path)


def test_helm_upgrade_keeps_the_generated_hash_key(kube: Kube, helm: Path) -> None:
    """`lookup` keeps the key across upgrades (a new key would re-record every workload's hash once)."""
    cp = kube.cp
    kubeconfig = ["--kubeconfig", str(cp.kubeconfig)]
    path = "/api/v1/namespaces/kube-rehash/secrets/kube-rehash-hash-key"
    run_helm(
        helm,
        "install",
        "kube-rehash",
        str(CHART),
        "-n",
        "kube-rehash",
        "--create-namespace",
        *IMAGE,
        *kubeconfig,
    )
    try:
        before = cp.api("GET", path)["data"]["key"]  # compared, never printed
        run_helm(
            helm,
            "upgrade",
            "kube-rehash",
            str(CHART),
            "-n",
            "kube-rehash",
            *IMAGE,
            "--set",
            "config.qps=10",
            *kubeconfig,
        )
        assert cp.api("GET", path)["data"]["key"] == before, "helm upgrade replaced the hash key"
    finally:
        run_helm(
            helm, "uninstall", "kube-rehash", "-n", "kube-rehash", "--wait=false", *kubeconfig, check=False
        )
        cp.request("DELETE", "/api/v1/namespaces/kube-rehash")
        wait_until(
            "namespace kube-rehash to be deleted", functools.partial(namespace_gone, cp, "kube-rehash"), 180
        )


def test_helm_uninstall_keeps_the_generated_hash_key_and_a_reinstall_adopts_it(
    kube: Kube, helm: Path
) -> None:
    """`helm.sh/resource-policy: keep`: the key outlives `helm uninstall`, so a reinstall hashes with the same
    key (charts/kube-rehash/README.md says how to delete it for good)."""
    cp = kube.cp
    kubeconfig = ["--kubeconfig", str(cp.kubeconfig)]
    path = "/api/v1/namespaces/kube-rehash/secrets/kube-rehash-hash-key"
    install = (
        "install",
        "kube-rehash",
        str(CHART),
        "-n",
        "kube-rehash",
        "--create-namespace",
        *IMAGE,
        *kubeconfig,
    )
    run_helm(helm, *install)
    try:
        before = cp.api("GET", path)["data"]["key"]  # compared, never printed
        run_helm(helm, "uninstall", "kube-rehash", "-n", "kube-rehash", "--wait", *kubeconfig)
        assert cp.request("GET", path)[0] == 200, "helm uninstall deleted the hash key"
        assert cp.request("GET", "/apis/batch/v1/namespaces/kube-rehash/cronjobs/kube-rehash")[0] == 404
        run_helm(helm, *install)
        assert cp.api("GET", path)["data"]["key"] == before, "the reinstall replaced the kept hash key"
    finally:
        run_helm(
            helm, "uninstall", "kube-rehash", "-n", "kube-rehash", "--wait=false", *kubeconfig, check=False
        )
        cp.request("DELETE", "/api/v1/namespaces/kube-rehash")
        wait_until(
            "namespace kube-rehash to be deleted", functools.partial(namespace_gone, cp, "kube-rehash"), 180
        )
