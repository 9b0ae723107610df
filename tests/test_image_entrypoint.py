"""The container image, without Docker: build the wheel and install it into a fresh venv exactly as the
Dockerfile's build stage does before it freezes them (tests/image checks the frozen image itself), without the
build tools the frozen tree leaves out, then run the image's ENTRYPOINT + CMD (and the CronJob's args) against
the simulator. Catches a wheel that misses package data, an undeclared dependency, or a lock that
does not install with --require-hashes; and shows that neither the wheel nor the image carries the API
simulator or cryptography (the `kube-rehash[simulator]` extra), whose commands then say what to install.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import venv
import zipfile
from collections.abc import Iterator
from email.parser import Parser
from pathlib import Path
from typing import Any

import pytest
import yaml

from rehash_simulator import Simulator
from tests.e2e.conftest import configmap, deployment, env_from

ROOT = Path(__file__).resolve().parent.parent
TIMEOUT = 600
# Building the wheel and installing the locked runtime set into a fresh venv takes a minute or more:
# make check leaves this module to make quick and make test.
pytestmark = pytest.mark.slow


def dockerfile_json(instruction: str) -> list[str]:
    line = next(
        ln for ln in (ROOT / "Dockerfile").read_text().splitlines() if ln.startswith(instruction + " ")
    )
    return json.loads(line[len(instruction) + 1 :])  # type: ignore[no-any-return]


def run(argv: list[str], **kw: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, capture_output=True, text=True, timeout=TIMEOUT, check=True, **kw)


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The kube-rehash wheel, built as the Dockerfile's first stage builds it."""
    tmp = tmp_path_factory.mktemp("wheel")
    src = tmp / "src"  # stage 1 copies only these into the build context
    src.mkdir()
    for name in ("setup.cfg", "pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, src / name)
    shutil.copytree(ROOT / "reconcile", src / "reconcile", ignore=shutil.ignore_patterns("__pycache__"))
    wheels = tmp / "wheels"
    run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "--wheel-dir",
            str(wheels),
            str(src),
        ]
    )
    (built,) = wheels.glob("kube_rehash-*.whl")
    return built


@pytest.fixture(scope="module")
def image(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A venv laid out like the image: runtime lock by hash, then the wheel alone, build tools removed."""
    runtime = tmp_path_factory.mktemp("image") / "runtime"
    venv.EnvBuilder(with_pip=True).create(runtime)
    py = str(runtime / "bin" / "python")
    run(
        [
            py,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--require-hashes",
            "--no-deps",
            "-r",
            str(ROOT / "requirements/runtime.txt"),
        ]
    )
    run([py, "-m", "pip", "install", "--quiet", "--no-deps", str(wheel)])
    run([py, "-m", "pip", "uninstall", "--quiet", "--yes", "setuptools", "wheel"])
    yield runtime


def image_command(runtime: Path, args: list[str]) -> list[str]:
    entrypoint = dockerfile_json("ENTRYPOINT")
    return [str(runtime / "bin" / entrypoint[0]), *entrypoint[1:], *args]


def clean_env(**extra: str) -> dict[str, str]:
    env = {
        k: v for k, v in os.environ.items() if not k.startswith(("KUBE_REHASH_", "KUBECONFIG", "PYTHONPATH"))
    }
    return {**env, **extra}


def test_entrypoint_and_cmd_run_a_pass_from_the_installed_wheel(image: Path, tmp_path: Path) -> None:
    with Simulator().start() as sim:
        sim.store.create_many([configmap("app", {"a": "1"}), deployment("web", env_from("configmap", "app"))])
        kubeconfig = sim.write_kubeconfig(tmp_path / "kubeconfig")
        argv = image_command(image, dockerfile_json("CMD"))
        done = subprocess.run(
            argv,
            capture_output=True,
            text=True,
            timeout=120,
            cwd=tmp_path,
            env=clean_env(KUBECONFIG=str(kubeconfig)),
            check=False,
        )
    assert done.returncode == 0, done.stderr
    assert "1 workload: 1 adopt" in done.stdout
    find = subprocess.run(
        [str(image / "bin" / "python"), "-c", "import setuptools"],
        capture_output=True,
        check=False,
        cwd=tmp_path,
    )
    assert find.returncode != 0, "build tools must not be left in the image"


def test_the_cronjob_args_run_with_the_shipped_config(image: Path, tmp_path: Path) -> None:
    rendered = subprocess.run(
        [str(Path(sys.executable).parent / "kubectl"), "kustomize", str(ROOT / "cronjob/cluster")],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    cronjob = next(d for d in yaml.safe_load_all(rendered.stdout) if d and d["kind"] == "CronJob")
    container = cronjob["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"][0]
    config = yaml.safe_load((ROOT / "cronjob/base/config.yaml").read_text())
    key = tmp_path / "key"
    key.write_text("k" * 32)
    config["hashKeyFile"] = str(key)
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(config))
    args = [
        str(tmp_path / "config.yaml") if a == "/etc/kube-rehash/config.yaml" else a for a in container["args"]
    ]
    with Simulator().start() as sim:
        sim.store.create_many([configmap("app", {"a": "1"}), deployment("web", env_from("configmap", "app"))])
        kubeconfig = sim.write_kubeconfig(tmp_path / "kubeconfig")
        done = subprocess.run(
            image_command(image, [*args, "-o", "json"]),
            capture_output=True,
            text=True,
            timeout=120,
            cwd=tmp_path,
            env=clean_env(KUBECONFIG=str(kubeconfig)),
            check=False,
        )
        stored = sim.store.get("deployments", "shop", "web")["metadata"]["annotations"][
            "kube-rehash.io/config-hash"
        ]
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["summary"]["adopt"] == 1
    assert stored.startswith("v1k:"), "the shipped config hashes with the key"
    for line in done.stderr.splitlines():
        json.loads(line)  # --log-format json: every log line is a JSON document


def test_the_wheel_carries_only_reconcile_and_requires_the_simulator_only_through_its_extra(
    wheel: Path,
) -> None:
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        (metadata_name,) = [n for n in names if n.endswith(".dist-info/METADATA")]
        metadata = Parser().parsestr(archive.read(metadata_name).decode())
    packaged = {n.split("/")[0] for n in names if not n.startswith("kube_rehash-")}
    requires = metadata.get_all("Requires-Dist") or []
    unconditional = {re.split(r"[ ;<>=!~\[]", r, maxsplit=1)[0].lower() for r in requires if ";" not in r}

    assert packaged == {"reconcile"}
    assert not [n for n in names if "simulator" in n]
    assert "reconcile/data/schema.json" in names and "reconcile/data/default.yaml" in names
    assert "cryptography" not in unconditional
    assert "kube-rehash-simulator" not in unconditional
    assert "tzdata" in unconditional
    assert "simulator" in (metadata.get_all("Provides-Extra") or [])
    assert any(r.startswith("kube-rehash-simulator==") and 'extra == "simulator"' in r for r in requires)


def test_the_image_has_neither_the_simulator_nor_cryptography_but_has_the_iana_time_zones(
    image: Path, tmp_path: Path
) -> None:
    python = str(image / "bin" / "python")
    for module in ("rehash_simulator", "cryptography"):
        found = subprocess.run(
            [python, "-c", f"import {module}"],
            capture_output=True,
            check=False,
            cwd=tmp_path,
            env=clean_env(),
        )
        assert found.returncode != 0, f"{module} must not be in the image"
    # An empty PYTHONTZPATH leaves zoneinfo only the tzdata package (slim images lack /usr/share/zoneinfo).
    zone = subprocess.run(
        [python, "-c", "import zoneinfo; print(zoneinfo.ZoneInfo('Europe/Berlin'))"],
        capture_output=True,
        text=True,
        check=False,
        cwd=tmp_path,
        env=clean_env(PYTHONTZPATH=""),
    )
    assert zone.returncode == 0, zone.stderr
    assert zone.stdout.strip() == "Europe/Berlin"


@pytest.mark.parametrize("command", ["demo", "simulate"])
def test_demo_and_simulate_without_the_extra_exit_2_saying_what_to_install(
    image: Path, tmp_path: Path, command: str
) -> None:
    done = subprocess.run(
        image_command(image, [command]),
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        env=clean_env(),
        check=False,
    )

    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr == (
        f"kube-rehash: {command} needs the API simulator: pip install 'kube-rehash[simulator]'\n"
    )
    assert not list(tmp_path.iterdir()), "nothing written (no kubeconfig)"
