"""One Secret kube-apiserver cannot decrypt, on the real server: the pass names it and decides the rest.

Why: with encryption at rest, a Secret written under a key the server no longer has cannot be decrypted,
and then every list of Secrets whose range holds it fails (a cluster-wide list, and its namespace's),
as does a read of it by name. One such Secret must not take every namespace's decisions with it: the
pass falls back from the cluster-wide list to the namespaces' reads and then to reads by name, reports
the Secret in a `failed` row of its own (the pass exits 1), skips the workloads that use it, and rolls
every other change once.

How: the plane's encryption config first writes Secrets in plain text (identity first) and can read
key1's; a restart with key1 first writes one Secret encrypted with it; a restart with key1 replaced by
key2 leaves that Secret undecryptable and every other one readable, as a key rotation done wrong does.
"""

from __future__ import annotations

import base64
import json
import secrets
from pathlib import Path
from typing import Any

from tests.chaos_real.harness import PREFIX, Cluster, Figures, wait_until

BUDGET = 60.0


def _encryption(path: Path, *providers: dict[str, Any]) -> None:
    """An EncryptionConfiguration for Secrets with these providers, in order (the first writes)."""
    config = {
        "apiVersion": "apiserver.config.k8s.io/v1",
        "kind": "EncryptionConfiguration",
        "resources": [{"resources": ["secrets"], "providers": list(providers)}],
    }
    path.write_text(json.dumps(config))  # JSON is YAML: kube-apiserver reads either


def _aescbc(name: str) -> dict[str, Any]:
    key = base64.b64encode(secrets.token_bytes(32)).decode()
    return {"aescbc": {"keys": [{"name": name, "secret": key}]}}


def _restart(cluster: Cluster, probe: str = "/readyz") -> None:
    cluster.cp.kill_apiserver()
    cluster.cp.start_apiserver(probe=probe)


def _secret(ns: str, name: str, value: str) -> dict[str, Any]:
    data = {"password": base64.b64encode(value.encode()).decode()}
    return {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": name, "namespace": ns}, "data": data}


def _deployment(ns: str, name: str, secret: str) -> dict[str, Any]:
    """A watched Deployment reading Secret `secret` whole (envFrom)."""
    container = {
        "name": "app",
        "image": "registry.invalid/app:1",
        "envFrom": [{"secretRef": {"name": secret}}],
    }
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": ns, "annotations": {f"{PREFIX}/watch": "true"}},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": {"app": name}}, "spec": {"containers": [container]}},
        },
    }


def test_one_undecryptable_secret_fails_its_own_row_skips_its_workload_and_every_other_change_rolls_once(
    planes: Any, tmp_path: Path
) -> None:
    config = tmp_path / "encryption.json"
    key1 = _aescbc("key1")
    _encryption(config, {"identity": {}}, key1)
    cluster: Cluster = planes(f"--encryption-provider-config={config}")
    vault, shop = cluster.namespace("vault"), cluster.namespace("shop")
    cluster.apply(
        _secret(vault, "db", "one"),
        _secret(vault, "other", "one"),
        _secret(shop, "token", "one"),
        _deployment(vault, "web", "db"),
        _deployment(vault, "api", "other"),
        _deployment(shop, "app", "token"),
    )
    cluster.wait_observed(vault)
    cluster.wait_observed(shop)
    figures = Figures("one Secret the server cannot decrypt (encryption key replaced)")
    first = cluster.run(timeout=BUDGET)
    figures.count(first)
    assert first.code == 0, first.stderr
    assert set(first.actions().values()) == {"adopt"}, first.actions()

    # db written under key1, then key1 replaced by key2: db alone cannot be decrypted.
    _encryption(config, key1, {"identity": {}})
    _restart(cluster)
    cluster.apply(_secret(vault, "db", "two"))
    _encryption(config, {"identity": {}}, _aescbc("key2"))
    # Never ready again (/readyz: informer-sync), as its Secrets cannot all be loaded, yet it serves.
    _restart(cluster, probe="/version")
    wait_until(
        "the ServiceAccount's permissions to be served again",
        lambda: cluster.sa_request("GET", f"/api/v1/namespaces/{shop}/configmaps")[0] == 200,
    )
    figures.injected += 1
    status, _, body = cluster.sa_request("GET", f"/api/v1/namespaces/{vault}/secrets/db")
    assert status == 500, body[:500]
    status, _, body = cluster.sa_request("GET", "/api/v1/secrets?limit=500")  # the whole kind's list fails
    assert status == 500 and json.loads(body)["reason"] == "StorageReadError", body[:500]
    cluster.apply(_secret(vault, "other", "two"), _secret(shop, "token", "two"))

    offset = cluster.audit_offset()
    changed = cluster.run(timeout=BUDGET)
    figures.count(changed)
    assert changed.code == 1, changed.stderr
    # Asked once each: a corrupt object's answer does not change, a cache that cannot load is waited once.
    assert changed.wall < BUDGET / 2, changed.wall
    rows = changed.rows()
    assert {key: row["action"] for key, row in rows.items()} == {
        f"Secret/{vault}/db": "failed",
        f"Deployment/{vault}/web": "skipped",
        f"Deployment/{vault}/api": "rollout",
        f"Deployment/{shop}/app": "rollout",
    }
    assert rows[f"Secret/{vault}/db"]["reason"].startswith("cannot be read: ")
    assert rows[f"Deployment/{vault}/web"]["reason"].startswith("secret/db cannot be read (")
    secret_reads = [e for e in cluster.audit_since(offset) if e.resource == "secrets"]
    assert any(e.code == 500 and e.verb == "get" and f"/{vault}/secrets/db" in e.uri for e in secret_reads)
    assert not any(e.code == 500 and f"/{shop}/" in e.uri for e in secret_reads), [
        (e.verb, e.uri, e.code) for e in secret_reads
    ]

    again = cluster.run(timeout=BUDGET)
    figures.count(again)
    assert again.code == 1, again.stderr
    assert again.wall < BUDGET / 2, again.wall
    assert again.actions() == {
        f"Secret/{vault}/db": "failed",
        f"Deployment/{vault}/web": "skipped",
        f"Deployment/{vault}/api": "in-sync",
        f"Deployment/{shop}/app": "in-sync",
    }, (again.rows(), again.stderr[-3000:])

    def counts() -> dict[str, int]:
        return {**cluster.rs_counts(vault), **cluster.rs_counts(shop)}

    # The Deployment controller makes the ReplicaSets of the rollouts in its own time.
    wait_until(
        "a new ReplicaSet of each rolled Deployment", lambda: counts() == {"web": 1, "api": 2, "app": 2}
    )
    cluster.wait_observed(vault)
    cluster.wait_observed(shop)
    assert counts() == {"web": 1, "api": 2, "app": 2}, counts()
    figures.expected = figures.done = 2
    figures.save()
