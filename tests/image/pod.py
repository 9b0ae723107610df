"""Run the built kube-rehash image the way the kubelet would run one container of a pod spec.

Why: the manifests, the image and the in-cluster credentials only meet in a real pod. The control plane of
the tests (tests/cluster) has fake kwok nodes that never start containers, so this harness plays the
kubelet's part with podman for one container: the pod spec's command, args and env; its volumes
(ConfigMap and Secret contents read from the API, emptyDir as a size-limited tmpfs); the service account
token minted with the TokenRequest API, with `ca.crt` and `namespace`, at the path every client looks for;
KUBERNETES_SERVICE_HOST/PORT pointing at the real API server over the host's loopback; and the container's
securityContext (user, read-only root filesystem, no capabilities, no privilege escalation). Anything of the
spec it cannot play raises `Unsupported` rather than being left out silently. Reused by the Helm chart's
tests: give it the rendered pod spec.

Podman is set up by `make image` (scripts/build-image.sh). Without it (or with KUBE_REHASH_NO_PODMAN=1) the
image tests skip with one line, except under CI=true or KUBE_REHASH_REAL=1, where they fail.
"""

from __future__ import annotations

import base64
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from tests.cluster.controlplane import REPO, ControlPlane
from tests.prerequisites import skip_or_fail

__all__ = ["IMAGE", "PodRun", "Unsupported", "built_image", "podman_env", "run_pod"]

IMAGE = os.environ.get("KUBE_REHASH_IMAGE", "localhost/kube-rehash:dev")
CONTAINERS_CONF = REPO / "tests" / "image" / "containers.conf"
SERVICE_ACCOUNT_DIR = "/var/run/secrets/kubernetes.io/serviceaccount"
TOKEN_SECONDS = 3600


class Unsupported(Exception):
    """A part of the pod spec this harness cannot reproduce: the run would not be the pod's."""


@dataclass(frozen=True)
class PodRun:
    """How the container ended."""

    code: int
    stdout: str
    stderr: str


def podman_env() -> dict[str, str]:
    """The environment podman runs with: this project's containers.conf (runc, no default ulimits)."""
    return {**os.environ, "CONTAINERS_CONF": os.environ.get("CONTAINERS_CONF", str(CONTAINERS_CONF))}


def built_image() -> str:
    """The image of the working tree, built (or found up to date) by scripts/build-image.sh.

    Skips the calling test when podman is unavailable, or fails it under CI=true / KUBE_REHASH_REAL=1."""
    reason = None
    if os.environ.get("KUBE_REHASH_NO_PODMAN") == "1":
        reason = "KUBE_REHASH_NO_PODMAN=1"
    elif shutil.which("podman") is None:
        reason = "podman is not installed (make image installs it)"
    if reason is not None:
        message = f"image tests need podman: {reason}"
        skip_or_fail(message)
    done = subprocess.run(
        ["bash", str(REPO / "scripts" / "build-image.sh")],
        capture_output=True,
        text=True,
        env={**podman_env(), "KUBE_REHASH_IMAGE": IMAGE},
        timeout=1800,
        check=False,
    )
    assert done.returncode == 0, f"scripts/build-image.sh failed:\n{done.stdout}\n{done.stderr}"
    return IMAGE


# -- what the kubelet would put in the container -------------------------------------------------------------


def _mint_token(cp: ControlPlane, namespace: str, account: str) -> str:
    """A bound token for the service account, as the kubelet requests for the projected token volume."""
    request: dict[str, Any] = {
        "apiVersion": "authentication.k8s.io/v1",
        "kind": "TokenRequest",
        "spec": {"expirationSeconds": TOKEN_SECONDS},
    }
    answer = cp.api("POST", f"/api/v1/namespaces/{namespace}/serviceaccounts/{account}/token", request)
    return str(answer["status"]["token"])


def _source(
    cp: ControlPlane, namespace: str, kind: str, name: str, optional: bool
) -> dict[str, bytes] | None:
    """The decoded content of a ConfigMap or Secret; None when it is absent and optional."""
    collection = "configmaps" if kind == "configMap" else "secrets"
    status, obj = cp.request("GET", f"/api/v1/namespaces/{namespace}/{collection}/{name}")
    if status == 404 and optional:
        return None
    if status != 200:
        raise Unsupported(f"{kind} {namespace}/{name}: {status} (a required source: the pod would not start)")
    if kind == "configMap":
        content = {k: v.encode() for k, v in obj.get("data", {}).items()}
        content.update({k: base64.b64decode(v) for k, v in obj.get("binaryData", {}).items()})
        return content
    return {k: base64.b64decode(v) for k, v in obj.get("data", {}).items()}


def _write_files(directory: Path, files: dict[str, bytes], mode: int = 0o644) -> Path:
    directory.mkdir(parents=True)
    directory.chmod(0o755)
    for name, data in files.items():
        path = directory / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        path.chmod(mode)
    return directory


def _volume_files(cp: ControlPlane, namespace: str, volume: dict[str, Any]) -> dict[str, bytes]:
    kind = "configMap" if "configMap" in volume else "secret"
    spec = volume[kind]
    name = spec["name"] if kind == "configMap" else spec["secretName"]
    content = _source(cp, namespace, kind, name, bool(spec.get("optional")))
    if content is None:
        return {}
    if "items" not in spec:
        return content
    return {item["path"]: content[item["key"]] for item in spec["items"] if item["key"] in content}


def _mode(volume: dict[str, Any]) -> int:
    spec = volume.get("configMap") or volume.get("secret") or {}
    # The volume's defaultMode; the file is also readable by the pod's fsGroup, which podman does not
    # apply, so the group and other bits of the host file stay readable (the content is a test fixture's).
    return int(spec.get("defaultMode", 0o644)) | 0o444


def _env(cp: ControlPlane, namespace: str, pod_name: str, container: dict[str, Any]) -> dict[str, str]:
    env: dict[str, str] = {}
    for source in container.get("envFrom", []):
        kind = "configMap" if "configMapRef" in source else "secret"
        ref = source[f"{kind}Ref"]
        content = _source(cp, namespace, kind, ref["name"], bool(ref.get("optional"))) or {}
        env.update({source.get("prefix", "") + k: v.decode() for k, v in content.items()})
    for var in container.get("env", []):
        if "value" in var:
            env[var["name"]] = var["value"]
            continue
        value_from = var.get("valueFrom", {})
        if "fieldRef" in value_from:
            field = value_from["fieldRef"]["fieldPath"]
            fields = {"metadata.namespace": namespace, "metadata.name": pod_name}
            if field not in fields:
                raise Unsupported(f"env {var['name']}: fieldRef {field}")
            env[var["name"]] = fields[field]
            continue
        for kind in ("configMap", "secret"):
            ref = value_from.get(f"{kind}KeyRef")
            if ref is None:
                continue
            content = _source(cp, namespace, kind, ref["name"], bool(ref.get("optional"))) or {}
            if ref["key"] in content:
                env[var["name"]] = content[ref["key"]].decode()
            break
        else:
            raise Unsupported(f"env {var['name']}: {sorted(value_from)}")
    return env


def _security(pod: dict[str, Any], container: dict[str, Any]) -> list[str]:
    """podman flags for the effective securityContext (the container's settings over the pod's)."""
    effective = {**pod.get("securityContext", {}), **container.get("securityContext", {})}
    uid, gid = effective.get("runAsUser"), effective.get("runAsGroup")
    if effective.get("runAsNonRoot") and not uid:
        # The kubelet would check the image's USER; the manifests always name the UID, so require it here.
        raise Unsupported("runAsNonRoot without a non-zero runAsUser")
    flags: list[str] = []
    if uid is not None:
        flags += ["--user", f"{uid}:{gid}" if gid is not None else str(uid)]
    if effective.get("readOnlyRootFilesystem"):
        # Only the pod's own volumes are writable: no tmpfs that podman would add for /tmp, /run, /var/tmp.
        flags += ["--read-only", "--read-only-tmpfs=false"]
    if effective.get("allowPrivilegeEscalation") is False:
        flags += ["--security-opt", "no-new-privileges"]
    capabilities = effective.get("capabilities", {})
    flags += [f"--cap-drop={c.lower()}" for c in capabilities.get("drop", [])]
    flags += [f"--cap-add={c.lower()}" for c in capabilities.get("add", [])]
    seccomp = effective.get("seccompProfile", {}).get("type", "RuntimeDefault")
    if seccomp != "RuntimeDefault":  # podman's default profile is the runtime default
        raise Unsupported(f"seccompProfile {seccomp}")
    return flags


def run_pod(
    cp: ControlPlane,
    image: str,
    pod: dict[str, Any],
    *,
    namespace: str,
    workdir: Path,
    service_account: str | None = None,
    container: str | None = None,
    timeout: float = 300.0,
) -> PodRun:
    """Run one container of `pod` (a pod spec, e.g. a CronJob's spec.jobTemplate.spec.template.spec) from
    `image` (in place of the container's own `image`), as the kubelet would in `namespace` under the pod's
    service account (or `service_account`), on the host network with the API server on loopback.

    `workdir` (created if needed) receives the files mounted into the container: the minted token lives
    there for the run only and is never printed. Returns the exit code and the container's stdout/stderr."""
    spec = next(c for c in pod["containers"] if container is None or c["name"] == container)
    account = service_account or pod.get("serviceAccountName", "default")
    run_dir = workdir / f"pod-{os.urandom(4).hex()}"
    run_dir.mkdir(parents=True)
    run_dir.chmod(0o755)
    server = urlsplit(cp.server)
    argv = ["podman", "run", "--rm", "--network", "host", "--pull", "never", "--name", run_dir.name]
    argv += _security(pod, spec)
    env = {"KUBERNETES_SERVICE_HOST": str(server.hostname), "KUBERNETES_SERVICE_PORT": str(server.port)}
    env.update(_env(cp, namespace, run_dir.name, spec))

    volumes = {v["name"]: v for v in pod.get("volumes", [])}
    for index, mount in enumerate(spec.get("volumeMounts", [])):
        volume = volumes[mount["name"]]
        if "subPath" in mount:
            raise Unsupported(f"volumeMount {mount['name']}: subPath")
        target = mount["mountPath"]
        if "emptyDir" in volume:
            size = volume["emptyDir"].get("sizeLimit", "64Mi").replace("Mi", "m").replace("Gi", "g")
            argv += ["--tmpfs", f"{target}:rw,size={size},mode=1777"]
        elif "configMap" in volume or "secret" in volume:
            files = _volume_files(cp, namespace, volume)
            host = _write_files(run_dir / f"volume-{index}", files, _mode(volume))
            argv += ["--volume", f"{host}:{target}:ro"]
        else:
            raise Unsupported(f"volume {mount['name']}: {sorted(set(volume) - {'name'})}")

    automount = pod.get("automountServiceAccountToken")
    if automount is None:
        sa = cp.api("GET", f"/api/v1/namespaces/{namespace}/serviceaccounts/{account}")
        automount = sa.get("automountServiceAccountToken", True)
    if automount:
        token = _mint_token(cp, namespace, account)
        files = {"token": token.encode(), "ca.crt": cp.ca.read_bytes(), "namespace": namespace.encode()}
        host = _write_files(run_dir / "serviceaccount", files)
        argv += ["--volume", f"{host}:{SERVICE_ACCOUNT_DIR}:ro"]

    limit = spec.get("resources", {}).get("limits", {}).get("memory")
    if limit is not None:
        argv += ["--memory", limit.replace("Mi", "m").replace("Gi", "g")]
    for name, value in env.items():
        argv += ["--env", f"{name}={value}"]
    if "command" in spec:
        argv += ["--entrypoint", spec["command"][0]]
    argv += [image, *spec.get("command", [])[1:], *spec.get("args", [])]
    try:
        done = subprocess.run(
            argv, capture_output=True, text=True, env=podman_env(), timeout=timeout, check=False
        )
    finally:
        shutil.rmtree(run_dir, ignore_errors=True)  # the token does not outlive the run
    return PodRun(done.returncode, done.stdout, done.stderr)
