"""Run a kubeconfig `exec` credential plugin (client.authentication.k8s.io/v1 or v1beta1) like client-go.

It exists so exec plugins (aws, gke-gcloud-auth-plugin, kubelogin, ...) work without the `kubernetes`
package. The plugin runs non-interactively (stdin closed, `spec.interactive` false) with the kubeconfig's
args and env on top of the process environment, plus `KUBERNETES_EXEC_INFO`; its ExecCredential gives a
bearer token or a client certificate and key, cached until `expirationTimestamp` (minus a skew, so a token
is not sent in its last minutes) and then fetched again. Errors name the command, never the credential.
"""

from __future__ import annotations

import base64
import datetime
import json
import logging
import os
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from reconcile.errors import MAX_BODY_EXCERPT, CredentialsError
from reconcile.kube.kubeconfig import Entry, get_string, resolve_path, write_private_file

log = logging.getLogger(__name__)

API_VERSIONS = ("client.authentication.k8s.io/v1", "client.authentication.k8s.io/v1beta1")
# A credential this close to its expirationTimestamp is fetched again (the `kubernetes` client's skew).
EXPIRY_SKEW = datetime.timedelta(minutes=5)
# A plugin that has not answered after this long is given up on (a pass has a time budget).
EXEC_TIMEOUT_SECONDS = 120.0


@dataclass(frozen=True)
class ExecCredential:
    """What one plugin run returned: a token or a client certificate pair (file paths), and its expiry."""

    token: str | None
    cert: tuple[str, str] | None
    expires: datetime.datetime | None

    def is_due(self, now: datetime.datetime) -> bool:
        """Whether the credential is within EXPIRY_SKEW of expiring (never, without an expiry)."""
        return self.expires is not None and now >= self.expires - EXPIRY_SKEW


class ExecPlugin:
    """One kubeconfig user's `exec` section, runnable; `where` prefixes every error message."""

    def __init__(self, user: Entry, cluster: Entry, env: Mapping[str, str], where: str) -> None:
        config = user.fields.get("exec")
        if not isinstance(config, dict):
            raise CredentialsError(f"{where}: exec must be a mapping")
        self.where = where
        fields = Entry(user.name, config, user.base)
        command = get_string(fields, "command", where)
        if command is None:
            raise CredentialsError(f"{where}: exec: command missing")
        # kubectl resolves the command against the kubeconfig only when it contains a path separator.
        self.command = resolve_path(fields, command) if os.sep in command else command
        self.api_version = get_string(fields, "apiVersion", where) or ""
        if self.api_version not in API_VERSIONS:
            supported = ", ".join(API_VERSIONS)
            raise CredentialsError(
                f"{where}: exec {self.command}: apiVersion {self.api_version!r} not supported ({supported})"
            )
        if config.get("interactiveMode") == "Always":
            raise CredentialsError(
                f"{where}: exec {self.command}: interactiveMode Always needs a terminal; kube-rehash never "
                "runs plugins interactively"
            )
        self.args = [str(a) for a in _list_field(config, "args", where)]
        self.env = dict(env)
        for item in _list_field(config, "env", where):
            if not isinstance(item, dict) or "name" not in item:
                raise CredentialsError(f"{where}: exec {self.command}: env entries need a name and value")
            self.env[str(item["name"])] = str(item.get("value", ""))
        info: dict[str, Any] = {"interactive": False}
        if config.get("provideClusterInfo"):
            info["cluster"] = describe_cluster(cluster)
        self.exec_info = json.dumps({"apiVersion": self.api_version, "kind": "ExecCredential", "spec": info})

    def run(self) -> ExecCredential:
        """Run the plugin once and parse its ExecCredential; raise CredentialsError naming the command."""
        prefix = f"{self.where}: credentials plugin failed: {self.command}"
        try:
            done = subprocess.run(
                [self.command, *self.args],
                env={**self.env, "KUBERNETES_EXEC_INFO": self.exec_info},
                stdin=subprocess.DEVNULL,
                capture_output=True,
                timeout=EXEC_TIMEOUT_SECONDS,
                check=False,
            )
        except subprocess.TimeoutExpired:
            raise CredentialsError(f"{prefix}: no answer after {EXEC_TIMEOUT_SECONDS:.0f}s") from None
        except OSError as exc:
            raise CredentialsError(f"{prefix}: cannot run: {exc.strerror or exc}") from None
        if done.returncode != 0:
            stderr = _excerpt(done.stderr.decode(errors="replace"))
            raise CredentialsError(
                f"{prefix}: exited with {done.returncode}" + (f": {stderr}" if stderr else "")
            )
        try:
            document = json.loads(done.stdout)
        except (ValueError, UnicodeDecodeError):
            raise CredentialsError(f"{prefix}: output is not JSON") from None
        return self._parse(document, prefix)

    def _parse(self, document: Any, prefix: str) -> ExecCredential:
        if not isinstance(document, dict) or document.get("kind") != "ExecCredential":
            raise CredentialsError(f"{prefix}: output is not an ExecCredential")
        if document.get("apiVersion") != self.api_version:
            got = document.get("apiVersion")
            raise CredentialsError(f"{prefix}: answered apiVersion {got!r}, asked for {self.api_version}")
        status = document.get("status")
        if not isinstance(status, dict):
            raise CredentialsError(f"{prefix}: ExecCredential has no status")
        expires = _parse_timestamp(status.get("expirationTimestamp"), prefix)
        token = status.get("token")
        if isinstance(token, str) and token.strip():
            return ExecCredential(token.strip(), None, expires)
        cert, key = status.get("clientCertificateData"), status.get("clientKeyData")
        if isinstance(cert, str) and isinstance(key, str) and cert and key:
            pair = (write_private_file(cert.encode()), write_private_file(key.encode()))
            return ExecCredential(None, pair, expires)
        raise CredentialsError(
            f"{prefix}: status has neither token nor clientCertificateData and clientKeyData"
        )


def describe_cluster(cluster: Entry) -> dict[str, Any]:
    """The ExecCredential `spec.cluster` (client-go's field names) for a plugin with provideClusterInfo."""
    fields = cluster.fields
    info: dict[str, Any] = {"server": str(fields.get("server", ""))}
    for key in ("tls-server-name", "insecure-skip-tls-verify", "proxy-url", "disable-compression"):
        if fields.get(key) not in (None, ""):
            info[key] = fields[key]
    if fields.get("certificate-authority-data"):
        info["certificate-authority-data"] = str(fields["certificate-authority-data"])
    elif fields.get("certificate-authority"):
        try:
            with open(resolve_path(cluster, str(fields["certificate-authority"])), "rb") as handle:
                info["certificate-authority-data"] = base64.b64encode(handle.read()).decode()
        except OSError:
            pass  # the CA file is checked (and named) where the session is built
    for extension in fields.get("extensions") or []:
        if isinstance(extension, dict) and extension.get("name") == "client.authentication.k8s.io/exec":
            info["config"] = extension.get("extension")
    return info


def _list_field(config: Mapping[str, Any], key: str, where: str) -> list[Any]:
    value = config.get(key) or []
    if not isinstance(value, list):
        raise CredentialsError(f"{where}: exec: {key} must be a list")
    return value


def _parse_timestamp(value: Any, prefix: str) -> datetime.datetime | None:
    if value in (None, ""):
        return None
    try:
        parsed = datetime.datetime.fromisoformat(str(value))
    except ValueError:
        raise CredentialsError(f"{prefix}: expirationTimestamp {value!r} is not RFC 3339") from None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=datetime.UTC)


def _excerpt(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= MAX_BODY_EXCERPT else flat[: MAX_BODY_EXCERPT - 3] + "..."
