"""`make dist` (scripts/build-dist.py): the release artefacts in dist/, checked as a user would check them.

`sha256sum -c SHA256SUMS` over every artefact; the wheel, sdist and packaged chart carry what they should
(the licence, the monitoring files); each kubectl plugin archive holds `kubectl-rehash` and LICENSE. The
linux/amd64 one is a frozen executable that runs `version` and a real `plan` against the embedded API
simulator with no Python on PATH, and the real krew installs it from the manifest and `kubectl rehash version`
runs it on a PATH without Python. The other platforms' zipapps carry each compiled module for each of
PYTHONS on their platform and refuse this one in one line; the same zipapp built for this machine runs
`version` and a real `plan` with each bare CPython of PYTHONS (`-I -S`: no site-packages, no kube-rehash
installed). A second build elsewhere gives the same bytes. The krew manifest's own checks are in
tests/test_krew_manifest.py. The build is cached by a stamp of its inputs, so a warm run costs nothing. Marker
`helm` (it packages the chart with the pinned helm).
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
from collections.abc import Callable
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


PLATFORMS = ("linux-amd64", "linux-arm64", "darwin-amd64", "darwin-arm64")
ZIPAPP_PLATFORMS = PLATFORMS[1:]


def plugin_archive(dist: Path, platform: str = "linux-amd64") -> Path:
    return dist / f"kubectl-rehash-v{version()}-{platform}.tar.gz"


def plugin_program(dist: Path, platform: str) -> bytes:
    """The `kubectl-rehash` of the platform's archive."""
    with tarfile.open(plugin_archive(dist, platform)) as archive:
        member = archive.extractfile("kubectl-rehash")
        assert member is not None
        return member.read()


def test_sha256sum_checks_every_artefact(dist: Path) -> None:
    v = version()
    names = {line.split("  ", 1)[1] for line in (dist / "SHA256SUMS").read_text().splitlines()}
    # With the image archive and the SBOMs once scripts/dist-extras.py has added them (tests/test_sbom.py).
    extras = {p.name for p in dist.iterdir() if p.name.endswith((".oci.tar", ".spdx.json"))}
    assert names == {
        f"kube_rehash-{v}-py3-none-any.whl",
        f"kube_rehash-{v}.tar.gz",
        f"kube-rehash-{v}.tgz",
        *(plugin_archive(dist, platform).name for platform in PLATFORMS),
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


@pytest.mark.parametrize("platform", PLATFORMS)
def test_each_plugin_archive_holds_the_program_and_the_license(dist: Path, platform: str) -> None:
    with tarfile.open(plugin_archive(dist, platform)) as archive:
        members = {m.name: m for m in archive.getmembers()}
        assert set(members) == {"kubectl-rehash", "LICENSE"}
        assert members["kubectl-rehash"].mode == 0o755
        license_member = archive.extractfile("LICENSE")
        assert license_member is not None and license_member.read() == (ROOT / "LICENSE").read_bytes()


def test_the_linux_amd64_plugin_is_a_frozen_executable_that_plans_a_pass_with_no_python_on_path(
    dist: Path, tmp_path: Path
) -> None:
    with tarfile.open(plugin_archive(dist)) as archive:
        archive.extractall(tmp_path / "plugin", filter="data")
    plugin = tmp_path / "plugin" / "kubectl-rehash"
    assert plugin.read_bytes()[:4] == b"\x7fELF"
    env = {"PATH": str(tmp_path / "empty"), "HOME": str(tmp_path / "home"), "TMPDIR": str(tmp_path)}
    assert shutil.which("python3", path=env["PATH"]) is None

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(plugin), *args], capture_output=True, text=True, env=env, timeout=120, check=False
        )

    assert run("version").stdout.strip() == f"kube-rehash {version()}"
    plan_a_pass_and_refuse_a_legacy_auth_provider(run, tmp_path)


def plan_a_pass_and_refuse_a_legacy_auth_provider(
    run: Callable[..., subprocess.CompletedProcess[str]], tmp_path: Path
) -> None:
    """`plan` against the API simulator adopts the one Deployment; a kubeconfig with a legacy auth-provider is
    refused in one line (the plugin leaves out the `kubernetes` package)."""
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
    legacy = yaml.safe_load(kubeconfig.read_text())
    legacy["users"][0]["user"] = {"auth-provider": {"name": "oidc", "config": {"id-token": "x"}}}
    (tmp_path / "legacy").write_text(yaml.safe_dump(legacy))
    refused = run("plan", "--kubeconfig", str(tmp_path / "legacy"))
    assert refused.returncode == 2 and "Traceback" not in refused.stderr
    assert "needs the `kubernetes` Python package" in refused.stderr


ABI_SUFFIX = {"linux-arm64": "aarch64-linux-gnu.so", "darwin-amd64": "darwin.so", "darwin-arm64": "darwin.so"}
COMPILED = ("xxhash/_xxhash", "orjson/orjson", "rpds/rpds", "yaml/_yaml")
"""Compiled modules without which the CLI does not import (yaml's is its C loader)."""


@pytest.mark.parametrize("platform", ZIPAPP_PLATFORMS)
def test_the_other_platforms_get_a_zipapp_with_their_compiled_modules_for_each_python(
    dist: Path, tmp_path: Path, platform: str
) -> None:
    program = plugin_program(dist, platform)
    assert program.startswith(b"#!/usr/bin/env python3\n")
    (tmp_path / "kubectl-rehash").write_bytes(program)
    with zipfile.ZipFile(tmp_path / "kubectl-rehash") as zipped:
        names = set(zipped.namelist())
    for module in COMPILED:
        for python in build_script().PYTHONS:
            assert f"site/{module}.cpython-{python.replace('.', '')}-{ABI_SUFFIX[platform]}" in names
    assert not [n for n in names if n.endswith("x86_64-linux-gnu.so")], "no module of another platform"
    python = cpython(build_script().PYTHONS[0])
    done = subprocess.run(
        [str(python), "-I", "-S", str(tmp_path / "kubectl-rehash"), "version"],
        capture_output=True,
        text=True,
        env={"HOME": str(tmp_path / "home")},
        timeout=120,
        check=False,
    )
    wanted = platform.replace("-", "/")
    assert done.returncode == 1 and f"as python3 on {wanted} (found CPython" in done.stderr
    assert not (tmp_path / "home").exists(), "nothing unpacked on a platform it is not for"


def build_script() -> ModuleType:
    """scripts/plugin_programs.py, which build-dist.py builds the plugin with, as a module (PYTHONS: the
    CPython versions the zipapps have modules for)."""
    spec = importlib.util.spec_from_file_location("plugin_programs", ROOT / "scripts" / "plugin_programs.py")
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


@pytest.fixture(scope="module")
def zipapp_here(dist: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The zipapp as build-dist builds it for the other platforms, built for this one (linux/amd64)."""
    script, tmp = build_script(), tmp_path_factory.mktemp("zipapp")
    compiled = script.stage_site(tmp / "site", next(dist.glob("kube_rehash-*.whl")))
    script.add_compiled(tmp / "site", compiled, "linux-amd64", tmp / "downloads")
    script.build_zipapp(tmp / "kubectl-rehash", tmp / "site", "linux-amd64", 315532800)
    return tmp / "kubectl-rehash"


@pytest.mark.parametrize("python_version", build_script().PYTHONS)
def test_the_zipapp_plans_a_pass_with_a_bare_python_and_no_package_installed(
    zipapp_here: Path, tmp_path: Path, python_version: str
) -> None:
    plugin = zipapp_here
    python = cpython(python_version)
    env = {"PATH": f"{python.parent}:/usr/bin:/bin", "HOME": str(tmp_path / "home")}

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        argv = [str(python), "-I", "-S", str(plugin), *args]
        return subprocess.run(argv, capture_output=True, text=True, env=env, timeout=120, check=False)

    assert run("version").stdout.strip() == f"kube-rehash {version()}"
    plan_a_pass_and_refuse_a_legacy_auth_provider(run, tmp_path)
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
    """A PATH of symlinks to kubectl and krew (as its plugin `kubectl-krew`) and krew's bin, and nothing else:
    no Python, no shell; a KREW_ROOT of the test's own."""
    tools = tmp_path / "tools"
    tools.mkdir()
    (tools / "kubectl-krew").symlink_to(krew)
    (tools / "kubectl").symlink_to(Path(sys.executable).parent / "kubectl")
    root = tmp_path / "krew-root"
    path = f"{tools}:{root / 'bin'}"
    return {"PATH": path, "HOME": str(tmp_path / "home"), "KREW_ROOT": str(root), "TMPDIR": str(tmp_path)}


def test_krew_installs_the_archive_by_the_manifest_and_kubectl_runs_the_plugin(
    dist: Path, krew: Path, tmp_path: Path
) -> None:
    env = krew_env(tmp_path, krew)
    manifest, archive = dist / "rehash.yaml", plugin_archive(dist)
    install = ["kubectl", "krew", "install", f"--manifest={manifest}", f"--archive={archive}"]
    done = subprocess.run(install, env=env, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Installed plugin: rehash" in done.stderr + done.stdout
    assert [shutil.which(name, path=env["PATH"]) for name in ("python3", "python", "sh")] == [None] * 3
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
