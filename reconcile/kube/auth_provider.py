"""The legacy kubeconfig `auth-provider` (gcp, oidc), delegated to the `kubernetes` package.

It exists because these providers (deprecated by kubectl in favour of exec plugins) carry their own
refresh protocols; re-implementing them is not worth it. The `kubernetes` package is imported here, inside
the function, only when a context's user has an `auth-provider`, so every other pass keeps it out of
memory (its `__init__` loads the whole generated client). It stays a dependency for this path only.
"""

from __future__ import annotations

import logging
from typing import Any

from reconcile.errors import MAX_BODY_EXCERPT, CredentialsError
from reconcile.kube.kubeconfig import Selection

log = logging.getLogger(__name__)


class ProviderToken:
    """The provider's bearer token, refreshed by the package's hook on each call when it has expired."""

    def __init__(self, selection: Selection) -> None:
        try:
            from kubernetes.client import Configuration
            from kubernetes.config.config_exception import ConfigException
            from kubernetes.config.kube_config import KubeConfigLoader
        except ImportError:  # the kubectl plugin's archive leaves the package out (docs/release.md)
            raise CredentialsError(
                f"{selection.where}: a kubeconfig auth-provider needs the `kubernetes` Python package, which "
                "this kube-rehash lacks: install it with pip (pip install kube-rehash), or use an exec plugin"
            ) from None

        self._where = selection.where
        provider = selection.user.fields.get("auth-provider")
        name = provider.get("name") if isinstance(provider, dict) else None
        document = {
            "current-context": "c",
            "clusters": [
                {"name": "c", "cluster": {"server": str(selection.cluster.fields.get("server", ""))}}
            ],
            "users": [{"name": "u", "user": {"auth-provider": provider}}],
            "contexts": [{"name": "c", "context": {"cluster": "c", "user": "u"}}],
        }
        # host="" and proxy="": the configuration is used for its token only, never for a connection.
        self._configuration: Any = Configuration(host="", proxy="", no_proxy="")
        try:
            loader = KubeConfigLoader(  # type: ignore[no-untyped-call]
                config_dict=document, active_context="c", config_base_path=selection.user.base
            )
            loader.load_and_set(self._configuration)  # type: ignore[no-untyped-call]
        except (ConfigException, OSError, ValueError, TypeError, KeyError, ImportError) as exc:
            raise CredentialsError(f"{self._where}: auth-provider {name}: {_excerpt(exc)}") from None
        if self.header() is None:
            raise CredentialsError(f"{self._where}: auth-provider {name!r} is not supported or gave no token")

    def header(self) -> str | None:
        """The Authorization header value from the package's configuration (its refresh hook runs first)."""
        try:
            setting = self._configuration.auth_settings().get("BearerToken")
        except Exception as exc:  # the package's refresh code raises anything from its HTTP clients
            raise CredentialsError(f"{self._where}: auth-provider refresh failed: {_excerpt(exc)}") from None
        value = setting.get("value") if setting else None
        return (value.strip() or None) if isinstance(value, str) else None

    def client_cert(self) -> tuple[str, str] | None:
        """Never a certificate."""
        return None


def _excerpt(exc: object) -> str:
    text = " ".join(str(exc).split())
    return text if len(text) <= MAX_BODY_EXCERPT else text[: MAX_BODY_EXCERPT - 3] + "..."
