"""Resolve API credentials the way kubectl does, without importing the `kubernetes` package.

Order: `--kubeconfig FILE`, else `KUBECONFIG` (a `:`-separated list merged like kubectl: the first file to
define a name or the current-context wins), else `~/.kube/config`, else the in-cluster service account;
`--context` picks a context other than the current one.

It exists because importing `kubernetes` (even `kubernetes.config`) runs its `__init__`, which loads the
whole generated client, ~19 MB of memory in every pass, for what is a YAML read. The kubeconfig is read
with PyYAML (reconcile/kube/kubeconfig.py), exec plugins are run like client-go does
(reconcile/kube/exec_plugin.py), and the in-cluster service account is read directly. Only the legacy
`auth-provider` (gcp, oidc) is delegated to the `kubernetes` package, imported lazily in that branch
(reconcile/kube/auth_provider.py), which is why the package is a dependency.

The client asks for the Authorization header through `authorization()` on every request, which is where
refresh happens (token files re-read, expired exec-plugin credentials fetched again), and builds its
`requests.Session` from the kubeconfig alone (`trust_env` off) so environment variables such as
`REQUESTS_CA_BUNDLE` or `HTTPS_PROXY` can never override what the kubeconfig says. Nothing is written
back to the kubeconfig.
"""

from __future__ import annotations

import base64
import os
import ssl
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import timedelta

import requests

from reconcile.errors import CredentialsError
from reconcile.kube.exec_plugin import ExecPlugin
from reconcile.kube.kubeconfig import Selection, file_or_data, get_string, resolve_path, select_context
from reconcile.kube.tokens import ExecToken, FileToken, HeaderSource, StaticHeader

SERVICE_ACCOUNT_DIR = "/var/run/secrets/kubernetes.io/serviceaccount"
# How long a token file (in-cluster or `tokenFile`) is trusted before it is re-read (tokens rotate).
TOKEN_REREAD_INTERVAL = timedelta(minutes=1)


@dataclass(frozen=True)
class AuthOptions:
    """Where credentials come from: `--kubeconfig` and `--context` (both optional)."""

    kubeconfig: str | None = None
    context: str | None = None


@dataclass(frozen=True)
class _Source:
    """A resolved credentials source, kept so `reload()` re-reads exactly the same thing."""

    paths: tuple[str, ...]  # empty: in-cluster service account
    context: str | None
    env: Mapping[str, str]
    service_account_dir: str


@dataclass(frozen=True)
class _Loaded:
    """Everything one load produced: where to connect, how to verify, and how to authenticate."""

    source: str
    server: str
    server_name: str | None
    verify: bool | str
    cert: tuple[str, str] | None
    proxy: str | None
    header: HeaderSource | None
    trust: str
    """What the server's certificate is checked against, for TLS error messages."""


class Credentials:
    """The API server URL plus what a request needs to authenticate (header, CA, client cert, proxy).

    Thread-safe: `authorization()` and `reload()` may be called from several threads.
    """

    def __init__(self, source: _Source) -> None:
        self._source = source
        self._lock = threading.Lock()
        self._loaded = _load(source)
        self.source = self._loaded.source

    def __repr__(self) -> str:
        return f"Credentials({self.source!r})"

    @property
    def server(self) -> str:
        """The API server URL without a trailing slash."""
        return self._loaded.server

    @property
    def trust(self) -> str:
        """What the server's certificate is checked against (e.g. "certificate-authority /x/ca.crt")."""
        return self._loaded.trust

    @property
    def server_name(self) -> str | None:
        """The kubeconfig's `tls-server-name`: the name the server's certificate is checked against."""
        return self._loaded.server_name

    def new_session(self) -> requests.Session:
        """A session configured from the credentials source only (the environment is ignored)."""
        with self._lock:
            loaded = self._loaded
            cert = loaded.header.client_cert() if loaded.header else None
        session = requests.Session()
        session.trust_env = False
        session.verify = loaded.verify
        if cert or loaded.cert:
            session.cert = cert or loaded.cert
        if loaded.proxy:
            session.proxies = {"http": loaded.proxy, "https": loaded.proxy}
        return session

    def authorization(self) -> str | None:
        """The Authorization header value, refreshed when due; None with certificate auth."""
        with self._lock:
            header = self._loaded.header
            return header.header() if header else None

    def reload(self) -> None:
        """Load again from the same source (new exec-plugin run, re-read token file); used after a 401."""
        loaded = _load(self._source)
        with self._lock:
            self._loaded, self.source = loaded, loaded.source


def load_credentials(
    options: AuthOptions,
    env: Mapping[str, str] | None = None,
    *,
    service_account_dir: str = SERVICE_ACCOUNT_DIR,
) -> Credentials:
    """Resolve credentials from kubeconfig or the in-cluster service account; raise CredentialsError."""
    environ = dict(os.environ if env is None else env)
    return Credentials(_resolve_source(options, environ, service_account_dir))


def _resolve_source(options: AuthOptions, env: dict[str, str], service_account_dir: str) -> _Source:
    if options.kubeconfig:
        path = os.path.abspath(os.path.expanduser(options.kubeconfig))
        if not os.path.isfile(path):
            raise CredentialsError(f"kubeconfig {path}: file not found")
        return _Source((path,), options.context, env, service_account_dir)
    listed = env.get("KUBECONFIG", "")
    if listed:
        paths = [os.path.abspath(os.path.expanduser(p)) for p in listed.split(os.pathsep) if p]
        existing = tuple(dict.fromkeys(p for p in paths if os.path.isfile(p)))
        if existing:
            return _Source(existing, options.context, env, service_account_dir)
    else:
        home = env.get("HOME") or os.path.expanduser("~")
        default = os.path.join(home, ".kube", "config")
        if os.path.isfile(default):
            return _Source((default,), options.context, env, service_account_dir)
    if env.get("KUBERNETES_SERVICE_HOST") and env.get("KUBERNETES_SERVICE_PORT"):
        if options.context:
            raise CredentialsError(f"context {options.context!r} given but no kubeconfig was found")
        return _Source((), None, env, service_account_dir)
    where = f"KUBECONFIG={listed}" if listed else "~/.kube/config"
    raise CredentialsError(
        f"no kubeconfig found ({where} does not exist) and not running in a cluster "
        "(KUBERNETES_SERVICE_HOST/KUBERNETES_SERVICE_PORT unset)"
    )


def _load(source: _Source) -> _Loaded:
    if not source.paths:
        return _load_in_cluster(source)
    return _load_kubeconfig(select_context(source.paths, source.context), source.env)


def _load_in_cluster(source: _Source) -> _Loaded:
    where = f"in-cluster service account ({source.service_account_dir})"
    host, port = source.env.get("KUBERNETES_SERVICE_HOST", ""), source.env.get("KUBERNETES_SERVICE_PORT", "")
    if ":" in host and not host.startswith("["):
        host = f"[{host}]"  # an IPv6 address
    ca = os.path.join(source.service_account_dir, "ca.crt")
    if not os.path.isfile(ca):
        raise CredentialsError(f"{where}: {ca} does not exist")
    check_ca(ca, f"{where}: {ca}")
    token_file = os.path.join(source.service_account_dir, "token")
    header = FileToken(token_file, TOKEN_REREAD_INTERVAL, "bearer", where)
    return _Loaded("in-cluster service account", f"https://{host}:{port}", None, ca, None, None, header, ca)


def _load_kubeconfig(selection: Selection, env: Mapping[str, str]) -> _Loaded:
    where, cluster = selection.where, selection.cluster
    server = (get_string(cluster, "server", where) or "").rstrip("/")
    if not server:
        raise CredentialsError(f"{where}: the cluster has no server URL")
    insecure = cluster.fields.get("insecure-skip-tls-verify") is True
    ca = None if insecure else file_or_data(cluster, "certificate-authority", where)
    trust = "the system's CA certificates"
    if ca is not None:
        inline = get_string(cluster, "certificate-authority-data", where) is not None
        trust = "certificate-authority-data" if inline else f"certificate-authority {ca}"
        check_ca(ca, f"{where}: {trust}")
    verify: bool | str = False if insecure else (ca or True)
    cert_file = file_or_data(selection.user, "client-certificate", where)
    key_file = file_or_data(selection.user, "client-key", where)
    if bool(cert_file) != bool(key_file):
        raise CredentialsError(f"{where}: client-certificate and client-key must be given together")
    cert = (cert_file, key_file) if cert_file and key_file else None
    header = _load_header(selection, env)
    if header is None and cert is None:
        raise CredentialsError(
            f"{where}: no usable credentials (no token, client certificate or exec plugin)"
        )
    return _Loaded(
        where,
        server,
        get_string(cluster, "tls-server-name", where),
        verify,
        cert,
        get_string(cluster, "proxy-url", where),
        header,
        f"{trust} ({selection.where})",
    )


def check_ca(path: str, where: str) -> None:
    """Raise CredentialsError naming `where` unless the file holds at least one PEM certificate (an empty
    or unreadable CA file would otherwise surface as an anonymous SSL error on the first request)."""
    try:
        ssl.create_default_context(cafile=path)
    except ssl.SSLError as exc:
        problem = "no certificates found" if "NO_CERTIFICATE" in str(exc) else f"not a CA certificate ({exc})"
        raise CredentialsError(f"{where}: {problem}") from None
    except OSError as exc:
        raise CredentialsError(f"{where}: cannot read it ({exc.strerror or exc})") from None


def _load_header(selection: Selection, env: Mapping[str, str]) -> HeaderSource | None:
    """The user's token source, in the `kubernetes` client's order: auth-provider, token/tokenFile, exec,
    basic."""
    user, where = selection.user, selection.where
    if user.fields.get("auth-provider"):
        from reconcile.kube.auth_provider import ProviderToken  # imports the kubernetes package

        return ProviderToken(selection)
    token = (get_string(user, "token", where) or "").strip()
    if token:
        return StaticHeader(f"Bearer {token}")
    token_file = get_string(user, "tokenFile", where)
    if token_file is not None:
        return FileToken(resolve_path(user, token_file), TOKEN_REREAD_INTERVAL, "Bearer", where)
    if user.fields.get("exec"):
        return ExecToken(ExecPlugin(user, selection.cluster, env, where))
    username, password = get_string(user, "username", where), get_string(user, "password", where)
    if username is not None and password is not None:
        return StaticHeader("Basic " + base64.b64encode(f"{username}:{password}".encode()).decode())
    return None
