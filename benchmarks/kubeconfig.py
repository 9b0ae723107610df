"""Just enough kubeconfig reading for the raw-`requests` floor and the harness (server, CA, token).

The floor must not borrow kube-rehash's client (that would measure the tool against itself), so it
reads the simulator's kubeconfig here: one cluster, one bearer-token user, an embedded CA.
"""

from __future__ import annotations

import atexit
import base64
import os
import tempfile
from pathlib import Path

import requests
import yaml


def session_for(kubeconfig: Path, pool: int = 8) -> tuple[requests.Session, str]:
    """A `requests.Session` trusting the kubeconfig's CA and sending its token, plus the server URL."""
    config = yaml.safe_load(kubeconfig.read_text())
    context = next(c["context"] for c in config["contexts"] if c["name"] == config["current-context"])
    cluster = next(c["cluster"] for c in config["clusters"] if c["name"] == context["cluster"])
    user = next(u["user"] for u in config["users"] if u["name"] == context["user"])
    ca = tempfile.NamedTemporaryFile(prefix="bench-ca-", suffix=".pem", delete=False)  # noqa: SIM115
    ca.write(base64.b64decode(cluster["certificate-authority-data"]))
    ca.close()
    atexit.register(os.unlink, ca.name)
    session = requests.Session()
    session.trust_env = False  # a REQUESTS_CA_BUNDLE or proxy from the environment must not win
    session.verify = ca.name
    session.headers["Authorization"] = f"Bearer {user['token']}"
    adapter = requests.adapters.HTTPAdapter(pool_connections=1, pool_maxsize=pool)
    session.mount("https://", adapter)
    return session, str(cluster["server"])
