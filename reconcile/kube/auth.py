"""Resolve API credentials the way kubectl does, and keep the `kubernetes` package at arm's length.

This is the only module that imports `kubernetes`; it is used as a credentials loader only (kubeconfig
parsing, exec plugins, in-cluster service account), never as an HTTP client. Everything lands in a private
`Configuration` (never the global default, never persisted back to disk). The client asks for the
Authorization header through `Configuration.auth_settings()` on every request so the loader's refresh
hook runs (in-cluster tokens are re-read, expired exec-plugin tokens re-fetched), and builds its
`requests.Session` from the kubeconfig alone so environment variables such as `REQUESTS_CA_BUNDLE` or
`HTTPS_PROXY` can never override what the kubeconfig says.

Order: `--kubeconfig FILE`, else `KUBECONFIG` (a `:`-separated list merged like kubectl: the first file to
define a name or the current-context wins), else `~/.kube/config`, else the in-cluster service account.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import requests
import yaml
from kubernetes.client import Configuration
from kubernetes.config.config_exception import ConfigException
from kubernetes.config.incluster_config import InClusterConfigLoader
from kubernetes.config.kube_config import (
    ENV_KUBECONFIG_PATH_SEPARATOR,
    KubeConfigMerger,
    load_kube_config_from_dict,
)

from reconcile.errors import MAX_BODY_EXCERPT, CredentialsError

log = logging.getLogger(__name__)

SERVICE_ACCOUNT_DIR = "/var/run/secrets/kubernetes.io/serviceaccount"
# How long an in-cluster token is trusted before the refresh hook re-reads the (rotated) file.
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


class Credentials:
    """The API server URL plus what a request needs to authenticate (header, CA, client cert, proxy).

    Thread-safe: `authorization()` and `reload()` may be called from several threads.
    """

    def __init__(self, source: _Source) -> None:
        self._source = source
        self._lock = threading.Lock()
        self._configuration, self.source = _load(source)

    def __repr__(self) -> str:
        return f"Credentials({self.source!r})"

    @property
    def server(self) -> str:
        """The API server URL without a trailing slash."""
        return str(self._configuration.host).rstrip("/")

    @property
    def server_name(self) -> str | None:
        """The kubeconfig's `tls-server-name`: the name the server's certificate is checked against."""
        with self._lock:
            name = getattr(self._configuration, "tls_server_name", None)
        return str(name) if name else None

    def new_session(self) -> requests.Session:
        """A session configured from the credentials source only (the environment is ignored)."""
        with self._lock:
            conf = self._configuration
            session = requests.Session()
            session.trust_env = False
            if not conf.verify_ssl:
                session.verify = False
            elif conf.ssl_ca_cert:
                session.verify = str(conf.ssl_ca_cert)
            else:
                session.verify = True
            if conf.cert_file and conf.key_file:
                session.cert = (str(conf.cert_file), str(conf.key_file))
            if conf.proxy:
                session.proxies = {"http": str(conf.proxy), "https": str(conf.proxy)}
        return session

    def authorization(self) -> str | None:
        """The Authorization header value, refreshed by the loader's hook when due; None with cert auth."""
        with self._lock:
            setting = self._configuration.auth_settings().get("BearerToken")
        value = setting.get("value") if setting else None
        return (value.strip() or None) if isinstance(value, str) else None

    def reload(self) -> None:
        """Load again from the same source (new exec-plugin run, re-read token file); used after a 401."""
        configuration, source = _load(self._source)
        with self._lock:
            self._configuration, self.source = configuration, source


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
        paths = [
            os.path.abspath(os.path.expanduser(p)) for p in listed.split(ENV_KUBECONFIG_PATH_SEPARATOR) if p
        ]
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


def _load(source: _Source) -> tuple[Configuration, str]:
    if not source.paths:
        return _load_in_cluster(source), "in-cluster service account"
    return _load_kubeconfig(source)


def _load_in_cluster(source: _Source) -> Configuration:
    loader = InClusterConfigLoader(  # type: ignore[no-untyped-call]
        token_filename=os.path.join(source.service_account_dir, "token"),
        cert_filename=os.path.join(source.service_account_dir, "ca.crt"),
        try_refresh_token=True,
        environ=source.env,
    )
    # The loader re-reads the token file once this period has passed (projected tokens rotate).
    loader._token_refresh_period = TOKEN_REREAD_INTERVAL
    configuration = _new_configuration()
    try:
        loader.load_and_set(client_configuration=configuration)  # type: ignore[no-untyped-call]
    except (ConfigException, OSError) as exc:
        raise CredentialsError(f"in-cluster service account ({source.service_account_dir}): {exc}") from None
    return configuration


def _load_kubeconfig(source: _Source) -> tuple[Configuration, str]:
    where = "kubeconfig " + ENV_KUBECONFIG_PATH_SEPARATOR.join(source.paths)
    merger = KubeConfigMerger("")  # type: ignore[no-untyped-call]
    current: str | None = None
    for path in source.paths:
        document = _read_kubeconfig_file(path)
        current = current or document.get("current-context") or None
        try:
            merger.load_config(path)  # type: ignore[no-untyped-call]
        except (ConfigException, OSError, yaml.YAMLError, AttributeError, TypeError, KeyError) as exc:
            raise CredentialsError(f"kubeconfig {path}: invalid: {_excerpt(exc)}") from None
    merged: Any = merger.config
    # The package lets the last file's current-context win; kubectl lets the first one win.
    merged.value["current-context"] = current or ""
    context = source.context or current
    if not context:
        raise CredentialsError(f"{where}: no current-context set and no --context given")
    names = [str(_node_value(c).get("name")) for c in merged.value.get("contexts", [])]
    if context not in names:
        listed = ", ".join(names) or "none"
        raise CredentialsError(f"{where}: context {context!r} not found (contexts: {listed})")
    where = f"{where} context {context}"
    configuration = _new_configuration()
    with _captured_loader_errors() as loader_errors:
        try:
            load_kube_config_from_dict(  # type: ignore[no-untyped-call]
                config_dict=merged,
                context=context,
                client_configuration=configuration,
                persist_config=False,
            )
        except (ConfigException, OSError, ValueError, TypeError, KeyError) as exc:
            raise CredentialsError(f"{where}: {_excerpt(exc)}") from None
    if not configuration.host:
        raise CredentialsError(f"{where}: the cluster has no server URL")
    has_token = bool(configuration.api_key.get("BearerToken") or configuration.api_key.get("authorization"))
    has_cert = bool(configuration.cert_file and configuration.key_file)
    if not (has_token or has_cert):
        cause = "; ".join(loader_errors)
        problem = (
            f"credentials plugin failed: {cause}" if cause else "no token, client certificate or exec plugin"
        )
        raise CredentialsError(f"{where}: no usable credentials ({_excerpt(problem)})")
    return configuration, where


def _new_configuration() -> Configuration:
    """A private Configuration: no default host; `proxy=""` so HTTPS_PROXY in the environment is ignored."""
    return Configuration(host="", proxy="", no_proxy="")


def _read_kubeconfig_file(path: str) -> dict[str, Any]:
    try:
        with open(path, encoding="utf-8") as handle:
            document = yaml.safe_load(handle)
    except OSError as exc:
        raise CredentialsError(f"kubeconfig {path}: cannot read: {exc.strerror or exc}") from None
    except yaml.YAMLError:
        raise CredentialsError(f"kubeconfig {path}: not valid YAML") from None
    if not isinstance(document, dict):
        raise CredentialsError(f"kubeconfig {path}: empty or not a mapping")
    for key in ("clusters", "contexts", "users"):
        entries = document.get(key) or []
        if not isinstance(entries, list) or not all(isinstance(e, dict) and "name" in e for e in entries):
            raise CredentialsError(f"kubeconfig {path}: {key} must be a list of named entries")
    return document


def _node_value(node: Any) -> dict[str, Any]:
    value = getattr(node, "value", node)
    return value if isinstance(value, dict) else {}


def _excerpt(exc: object) -> str:
    text = " ".join(str(exc).split())
    return text if len(text) <= MAX_BODY_EXCERPT else text[: MAX_BODY_EXCERPT - 3] + "..."


class _LoaderErrors(logging.Filter):
    """Collects (and silences) what the kubernetes loader logs instead of raising, e.g. exec failures."""

    def __init__(self) -> None:
        super().__init__()
        self.messages: list[str] = []

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno >= logging.ERROR and f"kubernetes{os.sep}config" in record.pathname:
            self.messages.append(record.getMessage())
            return False
        return True


@contextmanager
def _captured_loader_errors() -> Iterator[list[str]]:
    capture = _LoaderErrors()
    root = logging.getLogger()
    root.addFilter(capture)
    try:
        yield capture.messages
    finally:
        root.removeFilter(capture)
