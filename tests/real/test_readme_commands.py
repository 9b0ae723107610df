"""The README's install, run-now, one-off and uninstall commands, typed as a user would, on a real cluster.

Why: tests/real/test_rbac.py applies the overlays the way a test needs them; a user copies the README's lines.
Those lines are read from README.md itself (its Install section: the `sh` blocks and the inline `kubectl ...`
spans), so the test breaks when the README changes in a way the cluster does not accept, and each one runs
through `bash -c` with `kubectl` on PATH (the venv's) and KUBECONFIG pointing at the control plane.
"""

from __future__ import annotations

import functools
import os
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.cluster.controlplane import REPO, ControlPlane
from tests.real.conftest import BIN, namespace_gone, no_terminating_namespaces, wait_until
from tests.real.test_rbac import TEAMS
from tests.test_chart import helm_binary

README = REPO / "README.md"
NS = "kube-rehash"
RBAC = "/apis/rbac.authorization.k8s.io/v1"


def install_section() -> str:
    text = README.read_text()
    match = re.search(r"^## Install\n(.*?)^## ", text, re.M | re.S)
    assert match, "README.md has no '## Install' section"
    return match[1]


def sh_blocks(section: str) -> list[list[str]]:
    """The command lines of each ```sh block, in order."""
    blocks = re.findall(r"^```sh\n(.*?)^```", section, re.M | re.S)
    return [[line for line in b.splitlines() if line.strip() and not line.startswith("#")] for b in blocks]


def inline_command(section: str, starts: str) -> str:
    """The one inline `kubectl ...` span of the section starting with `starts`."""
    found = [c for c in re.findall(r"`(kubectl [^`]+)`", section) if c.startswith(starts)]
    assert len(found) == 1, f"expected one `{starts}...` in README's Install section, found {found}"
    return found[0]


def install_blocks() -> dict[str, list[str]]:
    """{overlay: its block of commands}, keyed by the `kubectl apply -k cronjob/<overlay>` each ends with."""
    blocks = {}
    for block in sh_blocks(install_section()):
        if block[-1].startswith("helm "):
            continue  # helm_block()
        overlay = re.fullmatch(r"kubectl apply -k cronjob/(\w+)", block[-1])
        assert overlay, f"an Install block that does not end by applying an overlay: {block}"
        blocks[overlay[1]] = block
    return blocks


def helm_block() -> list[str]:
    """The one Install block that ends with `helm install`."""
    found = [b for b in sh_blocks(install_section()) if b[-1].startswith("helm install ")]
    assert len(found) == 1, f"expected one `helm install` block in README's Install section, found {found}"
    return found[0]


def inline_helm(section: str, starts: str) -> str:
    found = [c for c in re.findall(r"`(helm [^`]+)`", section) if c.startswith(starts)]
    assert len(found) == 1, f"expected one `{starts}...` in README's Install section, found {found}"
    return found[0]


class User:
    """A shell with the venv's kubectl first on PATH and KUBECONFIG set, in the repository's root."""

    def __init__(self, cp: ControlPlane) -> None:
        self.cp = cp
        self.env = {
            **os.environ,
            # The venv's kubectl (and kubectl-rehash), and the pinned helm (make helm).
            "PATH": os.pathsep.join((str(BIN), str(helm_binary().parent), os.environ.get("PATH", ""))),
            "KUBECONFIG": str(cp.kubeconfig),
        }

    def types(self, command: str) -> str:
        done = subprocess.run(
            ["bash", "-c", command],
            cwd=REPO,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        # The command is the README's text (the hash key is made by the shell inside it); stdout is not shown.
        assert done.returncode == 0, f"`{command}` failed: {done.stderr}"
        return done.stdout

    def exists(self, path: str) -> bool:
        return self.cp.request("GET", path)[0] == 200


@pytest.fixture
def user(control: ControlPlane) -> Iterator[User]:
    wait_until("other tests' namespaces to be deleted", lambda: no_terminating_namespaces(control), 180)
    yield User(control)
    # Whatever a failed test left behind.
    for path in (f"{RBAC}/clusterroles/kube-rehash", f"{RBAC}/clusterrolebindings/kube-rehash"):
        control.request("DELETE", path)
    for ns in (NS, *TEAMS):
        control.request("DELETE", f"/api/v1/namespaces/{ns}")
    for ns in (NS, *TEAMS):
        wait_until(f"namespace {ns} to be deleted", functools.partial(namespace_gone, control, ns), 120)


def test_the_readme_install_section_has_both_installs_and_the_operating_commands() -> None:
    assert set(install_blocks()) == {"cluster", "namespaced"}
    section = install_section()
    assert inline_command(section, "kubectl -n kube-rehash create job --from=cronjob/kube-rehash")
    assert inline_command(section, "kubectl apply -k cronjob/job")
    assert inline_command(section, "kubectl delete -k")
    assert inline_command(section, "kubectl delete namespace")


def test_cluster_install_run_now_one_off_and_uninstall_as_the_readme_says(user: User) -> None:
    cp, section = user.cp, install_section()
    for command in install_blocks()["cluster"]:
        user.types(command)
    cronjob = cp.api("GET", f"/apis/batch/v1/namespaces/{NS}/cronjobs/kube-rehash")
    assert user.exists(f"/api/v1/namespaces/{NS}/secrets/kube-rehash-hash-key")
    key = cp.api("GET", f"/api/v1/namespaces/{NS}/secrets/kube-rehash-hash-key")["data"]["key"]
    assert len(key) >= 40, "the key is the base64 of 32 random bytes"  # its value is never shown
    assert user.exists(f"{RBAC}/clusterroles/kube-rehash")
    assert user.exists(f"{RBAC}/clusterrolebindings/kube-rehash")

    # "Run a pass now": a Job with the CronJob's pod template. kwok's pod-complete stage runs no container:
    # it marks the pod Succeeded, so the Job completes without kube-rehash having run.
    run_now = inline_command(section, "kubectl -n kube-rehash create job --from=cronjob/kube-rehash")
    user.types(run_now)
    job_name = run_now.split()[-1]
    job = cp.api("GET", f"/apis/batch/v1/namespaces/{NS}/jobs/{job_name}")
    wanted = cronjob["spec"]["jobTemplate"]["spec"]["template"]["spec"]
    assert job["spec"]["template"]["spec"]["containers"] == wanted["containers"]
    assert job["spec"]["template"]["spec"]["serviceAccountName"] == "kube-rehash"
    assert job["metadata"]["ownerReferences"][0]["name"] == "kube-rehash"

    def complete(name: str) -> bool:
        status = cp.api("GET", f"/apis/batch/v1/namespaces/{NS}/jobs/{name}").get("status", {})
        return any(c["type"] == "Complete" and c["status"] == "True" for c in status.get("conditions", []))

    wait_until(f"Job {job_name} to complete (kwok's pod-complete stage)", lambda: complete(job_name), 60)

    # The one-off Job, next to the installed CronJob: the same pod spec, and the CronJob stays.
    user.types(inline_command(section, "kubectl apply -k cronjob/job"))
    once = cp.api("GET", f"/apis/batch/v1/namespaces/{NS}/jobs/kube-rehash-once")
    assert once["spec"]["template"]["spec"]["containers"] == wanted["containers"]
    assert (
        once["spec"]["activeDeadlineSeconds"]
        == cronjob["spec"]["jobTemplate"]["spec"]["activeDeadlineSeconds"]
    )
    assert user.exists(f"/apis/batch/v1/namespaces/{NS}/cronjobs/kube-rehash")

    # Uninstall: nothing cluster-scoped and no namespace left.
    user.types(inline_command(section, "kubectl delete -k"))
    user.types(inline_command(section, "kubectl delete namespace"))
    assert not user.exists(f"{RBAC}/clusterroles/kube-rehash")
    assert not user.exists(f"{RBAC}/clusterrolebindings/kube-rehash")
    wait_until("namespace kube-rehash to be deleted", lambda: namespace_gone(cp, NS), 120)


def test_namespaced_install_and_its_uninstall_as_the_readme_says(user: User) -> None:
    cp, section = user.cp, install_section()
    for team in TEAMS:  # "edit the namespaces in cronjob/namespaced/ first": they must exist
        user.types(f"kubectl create namespace {team}")
    for command in install_blocks()["namespaced"]:
        user.types(command)
    args = cp.api("GET", f"/apis/batch/v1/namespaces/{NS}/cronjobs/kube-rehash")["spec"]["jobTemplate"]
    argv = args["spec"]["template"]["spec"]["containers"][0]["args"]
    assert [argv[i + 1] for i, a in enumerate(argv) if a == "-n"] == list(TEAMS)
    for team in TEAMS:
        assert user.exists(f"{RBAC}/namespaces/{team}/roles/kube-rehash")
    assert not user.exists(f"{RBAC}/clusterroles/kube-rehash"), "no cluster-scoped permission at all"

    # "kubectl delete -k cronjob/cluster (or the overlay you applied)".
    uninstall = inline_command(section, "kubectl delete -k").replace("cronjob/cluster", "cronjob/namespaced")
    user.types(uninstall)
    user.types(inline_command(section, "kubectl delete namespace"))
    for team in TEAMS:
        assert not user.exists(f"{RBAC}/namespaces/{team}/roles/kube-rehash")
    wait_until("namespace kube-rehash to be deleted", lambda: namespace_gone(cp, NS), 120)


def test_helm_install_and_uninstall_as_the_readme_says(user: User, helm: Path) -> None:
    cp, section = user.cp, install_section()
    for command in helm_block():
        user.types(command)
    cronjob = cp.api("GET", f"/apis/batch/v1/namespaces/{NS}/cronjobs/kube-rehash")
    assert cronjob["spec"]["schedule"] == "*/10 * * * *"
    assert user.exists(f"/api/v1/namespaces/{NS}/secrets/kube-rehash-hash-key")  # generated; never shown
    assert user.exists(f"{RBAC}/clusterroles/kube-rehash")
    assert user.exists(f"{RBAC}/clusterrolebindings/kube-rehash")

    user.types(inline_helm(section, "helm uninstall"))
    assert not user.exists(f"{RBAC}/clusterroles/kube-rehash")
    assert not user.exists(f"/apis/batch/v1/namespaces/{NS}/cronjobs/kube-rehash")
    user.types(inline_command(section, "kubectl delete namespace"))
    wait_until("namespace kube-rehash to be deleted", lambda: namespace_gone(cp, NS), 120)


def test_the_kubectl_plugin_commands_as_the_readme_says(user: User) -> None:
    section = install_section()
    assert user.types(inline_command(section, "kubectl rehash version")).startswith("kube-rehash ")
    ns = "default"
    user.types(inline_command(section, "kubectl rehash plan -n").replace("NS", ns))
