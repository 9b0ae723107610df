"""A kubeconfig's `tls-server-name`: the server is reached by one name (here its IP) and its certificate
is checked against another, as kubectl does."""

from __future__ import annotations

from pathlib import Path

import yaml

from rehash_simulator import Simulator
from tests.e2e.conftest import Cluster, configmap, deployment, env_from

NAME = "api.cluster.internal"  # the only name the serving certificate holds: not 127.0.0.1


def test_tls_server_name_is_the_name_the_certificate_is_checked_against(tmp_path: Path) -> None:
    with Simulator(cert_hosts=(NAME,)).start() as sim:
        cluster = Cluster(sim, tmp_path)
        cluster.add(configmap("app", {"a": "1"}), deployment("web", env_from("configmap", "app")))

        refused = cluster.cli("run", "-o", "json")
        assert refused.code == 4 and "TLS failure" in refused.stderr, refused.stderr
        assert sim.log.entries() == []

        config = yaml.safe_load(cluster.kubeconfig.read_text())
        config["clusters"][0]["cluster"]["tls-server-name"] = NAME
        cluster.kubeconfig.write_text(yaml.safe_dump(config))
        assert cluster.run().actions() == {"Deployment/shop/web": "adopt"}


def test_a_tls_server_name_the_certificate_does_not_hold_is_refused(tmp_path: Path) -> None:
    with Simulator(cert_hosts=(NAME,)).start() as sim:
        cluster = Cluster(sim, tmp_path)
        config = yaml.safe_load(cluster.kubeconfig.read_text())
        config["clusters"][0]["cluster"]["tls-server-name"] = "other.cluster.internal"
        cluster.kubeconfig.write_text(yaml.safe_dump(config))
        result = cluster.cli("run", "-o", "json")
        assert result.code == 4 and "TLS failure" in result.stderr, result.stderr
