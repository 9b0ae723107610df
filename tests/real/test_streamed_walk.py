"""The streamed walk of a whole-cluster pass, on a real kube-apiserver.

Why: a whole-cluster pass holding more than `streamAbove` opted-in workloads stops its listing at that
sample and walks the rest of the cluster namespace by namespace from lists it keeps open (one listing of
the workloads when the sample is light: pipeline/workload_lists.py, policy.tally.plan_walk). It leans on
what only the real server answers: every kind's cluster-wide list in etcd's key order, the sizes a first
page tells (`remainingItemCount`), continue tokens held open while other lists are read. tests/e2e
proves the walk on the simulator (test_streamed.py, `sim_only`: a cluster-wide pass there owns the
cluster); here it runs on the session's shared control plane, as dry runs (other tests' workloads are
read, never written), with a small `streamAbove` over namespaces named to sort before every other one,
so the sample is this test's own workloads.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from tests.cluster.controlplane import ControlPlane
from tests.real.conftest import Kube, Result, configmap, pod_spec, wait_until, workload

SUFFIX = secrets.token_hex(3)
# "0…" sorts before every namespace the other tests make ("t-…", "<prefix>-…") and before "default".
NAMESPACES = tuple(f"0stream{SUFFIX}-{part}" for part in ("a", "b", "c"))
APPS = ("api", "worker")
WORKLOAD_LISTS = (
    "/apis/apps/v1/deployments",
    "/apis/apps/v1/statefulsets",
    "/apis/apps/v1/daemonsets",
    "/apis/batch/v1/cronjobs",
)


@pytest.fixture(scope="module")
def spaces(control: ControlPlane, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Kube]]:
    """Three namespaces, each with a ConfigMap and two opted-in Deployments reading it."""
    made = {}
    for ns in NAMESPACES:
        control.api("POST", "/api/v1/namespaces", {"metadata": {"name": ns}})
        made[ns] = Kube(control, ns, tmp_path_factory.mktemp(ns))
    for kube in made.values():
        wait_until(
            "the default ServiceAccount of the namespace",
            lambda kube=kube: (
                kube.cp.request("GET", f"/api/v1/namespaces/{kube.ns}/serviceaccounts/default")[0] == 200
            ),
            30,
        )
        kube.apply(
            configmap("settings", {"level": "info"}),
            *(workload("Deployment", app, pod_spec(configmaps=("settings",)), replicas=1) for app in APPS),
        )
    yield made
    for ns in NAMESPACES:
        control.request("DELETE", f"/api/v1/namespaces/{ns}")


def config(tmp: Path, **fields: Any) -> str:
    path = tmp / f"kube-rehash-{len(list(tmp.iterdir()))}.yaml"
    path.write_text(json.dumps({"qps": 0, **fields}))
    return str(path)


def ours(result: Result) -> dict[tuple[str, str], tuple[str, str, str]]:
    """This test's rows: (namespace, name) → (action, hash, reason)."""
    return {
        (w["namespace"], w["name"]): (w["action"], w["hash"], w["reason"])
        for w in result.report["workloads"]
        if w["namespace"] in NAMESPACES
    }


def first_pages(kube: Kube, mark: int) -> dict[str, int]:
    """How many times kube-rehash (user admin) began each cluster-wide workload list since `mark`."""
    begun = dict.fromkeys(WORKLOAD_LISTS, 0)
    for entry in kube.cp.audit(since=mark, user="admin"):
        uri = urlsplit(entry.uri)
        query = parse_qs(uri.query)
        if (
            entry.verb == "list"
            and uri.path in begun
            and "continue" not in query
            and query.get("limit") != ["1"]
        ):
            begun[uri.path] += 1
    return begun


def test_a_streamed_whole_cluster_pass_decides_what_a_scoped_pass_decides_and_lists_once_when_light(
    spaces: dict[str, Kube],
) -> None:
    first = spaces[NAMESPACES[0]]
    scoped = [arg for ns in NAMESPACES for arg in ("-n", ns)]
    streamed = ["--config", config(first.tmp, streamAbove=3), "--dry-run", "-v"]

    # First sight: every workload of the sample needs its spec, so the pass is heavy and lists twice (the
    # sample, then the walk from the start).
    mark = first.cp.audit_mark()
    unseen = first.rehash(*streamed, scoped=False)
    assert unseen.code == 0, unseen.stderr
    assert "one listing of the workloads: no" in unseen.stderr, unseen.stderr
    assert first_pages(first, mark) == dict.fromkeys(WORKLOAD_LISTS, 2)
    assert {a for a, _, _ in ours(unseen).values()} == {"adopt"}, ours(unseen)
    assert ours(unseen) == ours(
        first.rehash("--config", config(first.tmp), "--dry-run", *scoped, scoped=False)
    )

    adopted = first.rehash("--config", config(first.tmp), *scoped, scoped=False)
    assert adopted.code == 0, adopted.stderr
    assert {a for a, _, _ in ours(adopted).values()} == {"adopt"}, ours(adopted)

    # Steady: the sample (this test's first two namespaces, four workloads) is in sync, so the pass is
    # light and goes on from the lists it sampled: each workload kind listed once, cluster-wide.
    mark = first.cp.audit_mark()
    steady = first.rehash(*streamed, scoped=False)
    assert steady.code == 0, steady.stderr
    assert "walks the cluster namespace by namespace" in steady.stderr
    assert "one listing of the workloads: yes" in steady.stderr, steady.stderr
    assert first_pages(first, mark) == dict.fromkeys(WORKLOAD_LISTS, 1)
    rows = ours(steady)
    assert len(rows) == len(NAMESPACES) * len(APPS)
    assert {a for a, _, _ in rows.values()} == {"in-sync"}, rows
    assert rows == ours(first.rehash("--config", config(first.tmp), "--dry-run", *scoped, scoped=False))

    # A change in the last namespace, which only the walk after the sample reaches.
    last = spaces[NAMESPACES[-1]]
    last.patch("ConfigMap", "settings", {"data": {"level": "debug"}})
    changed = first.rehash(*streamed, scoped=False)
    assert changed.code == 0, changed.stderr
    rows = ours(changed)
    assert {k: a for k, (a, _, _) in rows.items() if a != "in-sync"} == {
        (last.ns, app): "rollout" for app in APPS
    }, rows
    assert rows == ours(first.rehash("--config", config(first.tmp), "--dry-run", *scoped, scoped=False))


# "0m…" sorts before "0s…": this test's namespaces are the cluster's first, whatever the other test made.
MIDWAY = tuple(f"0midway{SUFFIX}-{part}" for part in "abcdefgh")
MIDWAY_ADOPTED = MIDWAY[:2]  # the sample of a pass with `streamAbove: 3`: two namespaces of two workloads
MIDWAY_UNSEEN = 9  # Deployments in each later namespace: past 40 needing their spec in the fifth of them


@pytest.fixture(scope="module")
def midway(control: ControlPlane, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Kube]]:
    """Eight namespaces: the first two with two opted-in Deployments each, the others with nine, each
    reading the namespace's ConfigMap; no replicas (the walk reads objects, the pods do not matter)."""
    made = {}
    for ns in MIDWAY:
        control.api("POST", "/api/v1/namespaces", {"metadata": {"name": ns}})
        kube = made[ns] = Kube(control, ns, tmp_path_factory.mktemp(ns))
        count = len(APPS) if ns in MIDWAY_ADOPTED else MIDWAY_UNSEEN
        spec = pod_spec(configmaps=("settings",))
        kube.apply(
            configmap("settings", {"level": "info"}),
            *(workload("Deployment", f"app-{i}", spec, replicas=0) for i in range(count)),
        )
    yield made
    for ns in MIDWAY:
        control.request("DELETE", f"/api/v1/namespaces/{ns}")


def namespaced_deployment_reads(kube: Kube, mark: int) -> set[str]:
    """The namespaces whose Deployments kube-rehash read with a request of their own since `mark`."""
    read = set()
    for entry in kube.cp.audit(since=mark, user="admin"):
        parts = urlsplit(entry.uri).path.split("/")  # /apis/apps/v1/namespaces/NS/deployments[/NAME]
        if (
            entry.verb in ("get", "list")
            and parts[1:5] == ["apis", "apps", "v1", "namespaces"]
            and parts[6:7] == ["deployments"]
        ):
            read.add(parts[5])
    return read


def test_a_light_walk_past_an_in_sync_sample_lists_the_unseen_kind_whole_and_decides_as_a_scoped_pass(
    midway: dict[str, Kube],
) -> None:
    """A first install cut by its budget leaves the first namespaces in key order adopted and the rest
    unseen: the next pass's sample is in sync, so it walks on from its listing, and once the namespaces
    past the sample show that reading each one's Deployments costs more than their cluster-wide list,
    it opens that list (of whole objects) and takes the rest from it (pipeline/midway.py)."""
    first = midway[MIDWAY[0]]
    scoped = [arg for ns in MIDWAY for arg in ("-n", ns)]
    adopted = first.rehash(
        "--config", config(first.tmp), *(a for ns in MIDWAY_ADOPTED for a in ("-n", ns)), scoped=False
    )
    assert adopted.code == 0, adopted.stderr
    assert {a for a, _, _ in mine(adopted).values()} == {"adopt"}

    mark = first.cp.audit_mark()
    streamed = first.rehash("--config", config(first.tmp, streamAbove=3), "--dry-run", "-v", scoped=False)
    assert streamed.code == 0, streamed.stderr
    assert "one listing of the workloads: yes" in streamed.stderr, streamed.stderr
    assert "deployments listed whole from here on" in streamed.stderr, streamed.stderr
    assert first_pages(first, mark)["/apis/apps/v1/deployments"] == 2  # the listing's, then the whole list
    # Other tests' namespaces may be read on their own for other reasons (a Rollout's workloadRef Deployment).
    read = namespaced_deployment_reads(first, mark) & set(MIDWAY)
    assert read and read < set(MIDWAY[2:]) and MIDWAY[-1] not in read, read
    rows = mine(streamed)
    assert {ns: a for (ns, _), (a, _, _) in rows.items()} == {
        ns: "in-sync" if ns in MIDWAY_ADOPTED else "adopt" for ns in MIDWAY
    }
    assert rows == mine(first.rehash("--config", config(first.tmp), "--dry-run", *scoped, scoped=False))


def mine(result: Result) -> dict[tuple[str, str], tuple[str, str, str]]:
    """This test's rows: (namespace, name) → (action, hash, reason)."""
    return {
        (w["namespace"], w["name"]): (w["action"], w["hash"], w["reason"])
        for w in result.report["workloads"]
        if w["namespace"] in MIDWAY
    }
