"""`make dist` (scripts/build-dist.py): the release artefacts in dist/, checked as a user would check them.

`sha256sum -c SHA256SUMS` over every artefact; the wheel, sdist and packaged chart carry what they should
(the licence, the monitoring files); the kubectl plugin archive holds the zipapp and LICENSE, and the zipapp
runs `version` and a real `plan` against the embedded API simulator with each bare CPython it carries modules
for (`-I -S`: no site-packages, no kube-rehash installed); the real krew installs it from the manifest and
`kubectl rehash version` runs it; a second build elsewhere gives the same bytes. The krew manifest's own
checks are in tests/test_krew_manifest.py. The build is cached by a stamp of its inputs, so a warm run costs
nothing. Marker `helm` (it packages the chart with the pinned helm).
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path
from types import ModuleType

import pytest
import yaml

from reconcile import __version__
from rehash_simulator import Simulator
from tests.e2e.conftest import configmap, deployment
from tests.prerequisites import skip_or_fail

ROOT = Path(__file__).resolve().parent.parent
DIST = ROOT / "dist"

pytestmark = pytest.mark.helm


def krew_binary() -> Path:
    """The pinned krew: .cache/krew/<its version in tools/krew/go.mod>/krew (or under $KREW_CACHE)."""
    gomod = (ROOT / "tools" / "krew" / "go.mod").read_text(encoding="utf-8")
    match = re.search(r"^\s*(?:require\s+)?sigs\.k8s\.io/krew\s+(v\S+)", gomod, re.MULTILINE)
    assert match, "tools/krew/go.mod does not require sigs.k8s.io/krew"
    return Path(os.environ.get("KREW_CACHE", ROOT / ".cache" / "krew")) / match.group(1) / "krew"


def build_dist() -> Path:
    """dist/, built (or found current) by scripts/build-dist.py."""
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "build-dist.py")], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return DIST


def version() -> str:
    return __version__


def plugin_archive(dist: Path) -> Path:
    return dist / f"kubectl-rehash-v{version()}-linux-amd64.tar.gz"


def test_sha256sum_checks_every_artefact(dist: Path) -> None:
    v = version()
    names = {line.split("  ", 1)[1] for line in (dist / "SHA256SUMS").read_text().splitlines()}
    # With the image archive and the SBOMs once scripts/dist-extras.py has added them (tests/test_sbom.py).
    extras = {p.name for p in dist.iterdir() if p.name.endswith((".oci.tar", ".spdx.json"))}
    assert names == {
        f"kube_rehash-{v}-py3-none-any.whl",
        f"kube_rehash-{v}.tar.gz",
        f"kube-rehash-{v}.tgz",
        plugin_archive(dist).name,
        "rehash.yaml",
        *extras,
    }
    done = subprocess.run(
        ["sha256sum", "-c", "SHA256SUMS"], cwd=dist, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.count(": OK") == len(names)


def test_a_changed_artefact_fails_the_check(dist: Path, tmp_path: Path) -> None:
    for name in ("SHA256SUMS", "rehash.yaml"):
        (tmp_path / name).write_bytes((dist / name).read_bytes())
    with (tmp_path / "rehash.yaml").open("a") as manifest:
        manifest.write("# tampered\n")
    sums = (tmp_path / "SHA256SUMS").read_text().splitlines()
    (tmp_path / "SHA256SUMS").write_text("".join(f"{s}\n" for s in sums if s.endswith("rehash.yaml")))
    done = subprocess.run(
        ["sha256sum", "-c", "SHA256SUMS"], cwd=tmp_path, capture_output=True, text=True, check=False
    )
    assert done.returncode != 0 and "rehash.yaml: FAILED" in done.stdout


def test_the_wheel_and_the_sdist_carry_the_apache_license(dist: Path) -> None:
    v = version()
    license_text = (ROOT / "LICENSE").read_bytes()
    with zipfile.ZipFile(dist / f"kube_rehash-{v}-py3-none-any.whl") as wheel:
        metadata = wheel.read(f"kube_rehash-{v}.dist-info/METADATA").decode()
        licenses = [n for n in wheel.namelist() if n.startswith(f"kube_rehash-{v}.dist-info/licenses/")]
        assert [wheel.read(n) for n in licenses] == [license_text]
    assert "License-Expression: Apache-2.0" in metadata or "License: Apache-2.0" in metadata
    with tarfile.open(dist / f"kube_rehash-{v}.tar.gz") as sdist:
        member = sdist.extractfile(f"kube_rehash-{v}/LICENSE")
        assert member is not None and member.read() == license_text


def test_the_packaged_chart_carries_the_monitoring_files(dist: Path) -> None:
    with tarfile.open(dist / f"kube-rehash-{version()}.tgz") as chart:
        names = set(chart.getnames())
        for name in ("kube-rehash.rules.yaml", "kube-rehash.dashboard.json"):
            member = chart.extractfile(f"kube-rehash/files/{name}")
            assert member is not None
            assert member.read() == (ROOT / "deploy" / "monitoring" / name).read_bytes()
    assert "kube-rehash/templates/prometheusrule.yaml" in names


def test_the_plugin_archive_holds_the_zipapp_and_the_license(dist: Path) -> None:
    with tarfile.open(plugin_archive(dist)) as archive:
        members = {m.name: m for m in archive.getmembers()}
        assert set(members) == {"kubectl-rehash", "LICENSE"}
        assert members["kubectl-rehash"].mode == 0o755
        license_member = archive.extractfile("LICENSE")
        assert license_member is not None and license_member.read() == (ROOT / "LICENSE").read_bytes()


def build_script() -> ModuleType:
    """scripts/build-dist.py as a module (PYTHONS: the CPython versions the plugin has modules for)."""
    spec = importlib.util.spec_from_file_location("build_dist", ROOT / "scripts" / "build-dist.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


PROBE = "import sys, platform; print(sys.executable, platform.python_implementation(), *sys.version_info[:2])"


def cpython(version: str) -> Path:
    """The real executable of CPython `version`: `python<version>` on PATH, else pyenv's (whose shims run
    only the versions selected); missing: a skip locally, a failure under CI=true."""
    pyenv = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv")) / "versions"
    candidates = [shutil.which(f"python{version}"), *sorted(pyenv.glob(f"{version}.*/bin/python{version}"))]
    for candidate in filter(None, candidates):
        done = subprocess.run([str(candidate), "-c", PROBE], capture_output=True, text=True, check=False)
        if done.returncode == 0 and done.stdout.split()[1:] == ["CPython", *version.split(".")]:
            return Path(done.stdout.split()[0])
    skip_or_fail(f"no CPython {version} found (python{version} on PATH or under pyenv)")


@pytest.mark.parametrize("python_version", build_script().PYTHONS)
def test_the_plugin_plans_a_pass_with_a_bare_python_and_no_package_installed(
    dist: Path, tmp_path: Path, python_version: str
) -> None:
    with tarfile.open(plugin_archive(dist)) as archive:
        archive.extractall(tmp_path / "plugin", filter="data")
    plugin = tmp_path / "plugin" / "kubectl-rehash"
    python = cpython(python_version)
    env = {"PATH": f"{python.parent}:/usr/bin:/bin", "HOME": str(tmp_path / "home")}

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        argv = [str(python), "-I", "-S", str(plugin), *args]
        return subprocess.run(argv, capture_output=True, text=True, env=env, timeout=120, check=False)

    assert run("version").stdout.strip() == f"kube-rehash {version()}"
    with Simulator().start() as sim:
        sim.store.create(configmap("settings", {"a": "1"}))
        volume = {"name": "c", "configMap": {"name": "settings"}}
        pod = {"containers": [{"name": "app", "image": "app:1"}], "volumes": [volume]}
        sim.store.create(deployment("web", pod))
        kubeconfig = sim.write_kubeconfig(tmp_path / "kubeconfig")
        done = run("plan", "-o", "json", "--kubeconfig", str(kubeconfig))
    assert done.returncode == 0, done.stderr
    rows = json.loads(done.stdout)["workloads"]
    assert [(r["kind"], r["name"], r["action"]) for r in rows] == [("Deployment", "web", "adopt")]
    # The archive leaves out the `kubernetes` package: a legacy auth-provider says so, without a traceback.
    legacy = yaml.safe_load(kubeconfig.read_text())
    legacy["users"][0]["user"] = {"auth-provider": {"name": "oidc", "config": {"id-token": "x"}}}
    (tmp_path / "legacy").write_text(yaml.safe_dump(legacy))
    refused = run("plan", "--kubeconfig", str(tmp_path / "legacy"))
    assert refused.returncode == 2 and "Traceback" not in refused.stderr
    assert "needs the `kubernetes` Python package" in refused.stderr
    # The first run unpacked the archive once into the cache; the next runs import from there.
    assert len(list((tmp_path / "home" / ".cache" / "kube-rehash").glob("plugin-*"))) == 1
    assert os.access(plugin, os.X_OK)


def test_a_second_build_with_the_same_inputs_does_nothing(dist: Path) -> None:
    before = {p.name: p.stat().st_mtime_ns for p in dist.iterdir()}
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "build-dist.py")], capture_output=True, text=True, check=True
    )
    assert done.stdout.strip() == "dist: up to date"
    assert {p.name: p.stat().st_mtime_ns for p in dist.iterdir()} == before


def krew_env(tmp_path: Path, krew: Path) -> dict[str, str]:
    """A PATH with kubectl, krew as its plugin `kubectl-krew`, krew's bin and a bare CPython 3.11 (no
    kube-rehash: the virtualenv's bin is not on it), and a KREW_ROOT of the test's own."""
    tools = tmp_path / "tools"
    tools.mkdir()
    (tools / "kubectl-krew").symlink_to(krew)
    (tools / "kubectl").symlink_to(Path(sys.executable).parent / "kubectl")
    python = Path(sys.executable).resolve().parent
    root = tmp_path / "krew-root"
    path = f"{tools}:{root / 'bin'}:{python}:/usr/bin:/bin"
    return {"PATH": path, "HOME": str(tmp_path / "home"), "KREW_ROOT": str(root)}


def test_krew_installs_the_archive_by_the_manifest_and_kubectl_runs_the_plugin(
    dist: Path, krew: Path, tmp_path: Path
) -> None:
    env = krew_env(tmp_path, krew)
    manifest, archive = dist / "rehash.yaml", plugin_archive(dist)
    install = ["kubectl", "krew", "install", f"--manifest={manifest}", f"--archive={archive}"]
    done = subprocess.run(install, env=env, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Installed plugin: rehash" in done.stderr + done.stdout
    run = subprocess.run(
        ["kubectl", "rehash", "version"], env=env, capture_output=True, text=True, timeout=120, check=False
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == f"kube-rehash {version()}"


def test_krew_refuses_an_archive_whose_sha256_is_not_the_manifests(
    dist: Path, krew: Path, tmp_path: Path
) -> None:
    env = krew_env(tmp_path, krew)
    manifest = yaml.safe_load((dist / "rehash.yaml").read_text(encoding="utf-8"))
    manifest["spec"]["platforms"][0]["sha256"] = "0" * 64
    forged = tmp_path / "rehash.yaml"
    forged.write_text(yaml.safe_dump(manifest), encoding="utf-8")
    install = ["kubectl", "krew", "install", f"--manifest={forged}", f"--archive={plugin_archive(dist)}"]
    done = subprocess.run(install, env=env, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode != 0
    assert "checksum" in (done.stdout + done.stderr).lower()
    assert not (tmp_path / "krew-root" / "bin" / "kubectl-rehash").exists()


def test_a_build_elsewhere_from_the_same_inputs_gives_the_same_bytes(dist: Path, tmp_path: Path) -> None:
    env = {**os.environ, "KUBE_REHASH_DIST": str(tmp_path)}
    script = ROOT / "scripts" / "build-dist.py"
    subprocess.run([sys.executable, str(script)], env=env, capture_output=True, check=True)
    # Each file build-dist.py wrote (not dist-extras.py's image archive and SBOMs), by the first build's sums.
    check = ["sha256sum", "-c", "--ignore-missing", str(dist / "SHA256SUMS")]
    done = subprocess.run(check, cwd=tmp_path, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    built = [
        p for p in tmp_path.iterdir() if p.is_file() and not p.name.startswith(".") and p.name != "SHA256SUMS"
    ]
    assert done.stdout.count(": OK") == len(built) >= 5
