"""Chaos: many passes with random faults on a share of requests and random config edits in between.

Afterwards one clean pass must leave every opted-in workload's stored hash equal to the hash of its
current sources (recomputed from docs/hash.md, not by reconcile.model.hashing); every rollout must correspond
to a real content change (each pod-template value appears once and in the order the content took);
and no workload field other than our annotations may ever have changed.
"""

from __future__ import annotations

import itertools
import random
from dataclasses import dataclass
from typing import Any

import pytest

from reconcile.model.choices import Fetch
from reconcile.settings.table import Settings
from tests.e2e.conftest import Cluster, configmap, deployment
from tests.reliability.helpers import (
    expected_hash,
    foreign_changes,
    in_process_pass,
    template_hash_of,
)

NAMESPACES = ("alpha", "beta")
SOURCES = (("configmap", "app"), ("configmap", "flags"), ("secret", "db"), ("configmap", "opt"))


@dataclass(frozen=True)
class Workload:
    namespace: str
    name: str
    refs: tuple[tuple[str, str, tuple[str, ...] | None], ...]  # (kind, name, keys or None)

    def pod(self) -> dict[str, Any]:
        env: list[dict[str, Any]] = []
        env_from: list[dict[str, Any]] = []
        for kind, name, keys in self.refs:
            optional = name == "opt"
            if keys is None:
                ref = "configMapRef" if kind == "configmap" else "secretRef"
                env_from.append({ref: {"name": name, "optional": optional}})
            else:
                ref = "configMapKeyRef" if kind == "configmap" else "secretKeyRef"
                for key in keys:
                    env.append(
                        {
                            "name": key.upper(),
                            "valueFrom": {ref: {"name": name, "key": key, "optional": optional}},
                        }
                    )
        return {"containers": [{"name": "app", "image": "app:1", "env": env, "envFrom": env_from}]}


def workloads() -> list[Workload]:
    shapes: list[tuple[tuple[str, str, tuple[str, ...] | None], ...]] = [
        (("configmap", "app", None),),
        (("configmap", "app", ("a",)),),
        (("configmap", "app", None), ("secret", "db", None)),
        (("secret", "db", ("pw",)), ("configmap", "flags", None)),
        (("configmap", "opt", None), ("configmap", "flags", ("f",))),
    ]
    return [Workload(ns, f"w{i}", shape) for ns in NAMESPACES for i, shape in enumerate(shapes)]


def seed(c: Cluster) -> list[Workload]:
    for ns in NAMESPACES:
        c.add(
            configmap("app", {"a": "0", "b": "0"}, ns=ns),
            configmap("flags", {"f": "0", "g": "0"}, ns=ns),
            {
                "apiVersion": "v1",
                "kind": "Secret",
                "metadata": {"name": "db", "namespace": ns},
                "stringData": {"pw": "0", "user": "0"},
            },
        )
    ws = workloads()
    c.add(*(deployment(w.name, w.pod(), ns=w.namespace) for w in ws))
    return ws


def random_edit(c: Cluster, rng: random.Random, counter: itertools.count[int]) -> None:
    ns = rng.choice(NAMESPACES)
    kind, name = rng.choice(SOURCES)
    plural = "configmaps" if kind == "configmap" else "secrets"
    value = f"v{next(counter)}"  # never repeats: only deleting `opt` may return to an earlier state
    if name == "opt":
        if c.sim.store.exists(plural, ns, name):
            c.sim.store.delete(plural, ns, name)
        else:
            c.add(configmap("opt", {"o": value}, ns=ns))
        return
    what = rng.choice(["read-key", "other-key", "label-only"])
    keys = {"app": ("a", "b"), "flags": ("f", "g"), "db": ("pw", "user")}[name]
    if what == "label-only":
        c.edit(plural, ns, name, {"metadata": {"labels": {"touched": value}}})
        return
    key = keys[0] if what == "read-key" else keys[1]
    field = "stringData" if kind == "secret" else "data"
    c.edit(plural, ns, name, {field: {key: value}})


def add_random_faults(c: Cluster, rng: random.Random, share: float) -> None:
    faults = c.sim.faults
    faults.clear()
    faults.seed(rng.randrange(1 << 30))
    faults.respond(503, probability=share / 3)
    faults.throttle(retry_after=0, probability=share / 4)
    faults.reset_connection(probability=share / 6)
    faults.delay(0.05, probability=share / 4)
    faults.expire_continue(probability=0.5)


def current(c: Cluster, w: Workload) -> str:
    return expected_hash(c.sim, w.namespace, [(k, n, keys) for k, n, keys in w.refs])


def run_chaos(c: Cluster, *, passes: int, seed_value: int, share: float) -> None:
    rng = random.Random(seed_value)
    counter = itertools.count(1)
    ws = seed(c)
    settings = Settings.of(qps=0.0, page_size=3, fetch=rng.choice(list(Fetch)))
    timeline: dict[Workload, list[str]] = {w: [current(c, w)] for w in ws}  # content hash per epoch
    for _ in range(passes):
        for _ in range(rng.randrange(0, 4)):
            random_edit(c, rng, counter)
        for w in ws:
            if timeline[w][-1] != (h := current(c, w)):
                timeline[w].append(h)
        add_random_faults(c, rng, share)
        in_process_pass(c.sim, c.kubeconfig, settings, max_rollouts=rng.choice([None, None, 3]))
    c.sim.faults.clear()
    in_process_pass(c.sim, c.kubeconfig, settings)
    final = in_process_pass(c.sim, c.kubeconfig, settings)
    assert not final.failed and not final.interrupted
    assert {r.action for r in final.rows} == {"in-sync"}, [r for r in final.rows if r.action != "in-sync"]
    total_rollouts = 0
    for w in ws:
        obj = c.get("deployments", w.namespace, w.name)
        assert template_hash_of(obj) == timeline[w][-1] == current(c, w), w
        assert obj["metadata"]["annotations"]["kube-rehash.io/config-hash"] == current(c, w)
        history = c.sim.store.history("deployments", w.namespace, w.name)
        rolled = [v for v, _ in itertools.groupby(template_hash_of(o) for o in history) if v is not None]
        # Each rollout took a content state that really existed, after the previous rollout's state: the
        # rolled values are a subsequence of the content timeline (an optional source deleted again may
        # bring back an earlier state, which rolls again, legitimately), never two for one state.
        total_rollouts += len(rolled)
        assert is_subsequence(rolled, timeline[w]), (w, rolled, timeline[w])
        assert foreign_changes(c.sim, "deployments", w.namespace, w.name) == [], w
    assert total_rollouts >= len(ws) // 2  # the run really rolled things


def is_subsequence(values: list[str], timeline: list[str]) -> bool:
    epochs = iter(timeline)
    return all(any(v == e for e in epochs) for v in values)


def test_chaos_many_faulty_passes_with_edits_converge_with_one_rollout_per_change(sim: Cluster) -> None:
    run_chaos(sim, passes=14, seed_value=20250101, share=0.2)


@pytest.mark.chaos
@pytest.mark.parametrize("seed_value", [1, 2, 3, 4, 5])
def test_chaos_long_run(sim: Cluster, seed_value: int) -> None:
    run_chaos(sim, passes=60, seed_value=seed_value, share=0.3)
