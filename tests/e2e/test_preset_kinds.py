"""A kind is one entry: OpenKruise's CloneSet, a preset of model/kinds.py enabled by name in `kinds`, is
adopted, rolled on a change of its ConfigMap and watched to completion from its status, with no code
outside its entry."""

from __future__ import annotations

import pytest

from tests.e2e.conftest import Backend, configmap, deployment, env_from, template_hash

pytestmark = pytest.mark.sim_only("the real control plane has no OpenKruise CRDs")


def test_a_cloneset_enabled_by_name_rolls_on_a_change_and_its_status_is_watched(cluster: Backend) -> None:
    config = cluster.config("kinds: [Deployment, CloneSet]\n")
    cluster.add(configmap("app", {"v": "1"}))
    body = deployment("clones", env_from("configmap", "app"), kind="Deployment", replicas=2)
    cluster.add({**body, "apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet"})
    assert cluster.run("--config", str(config)).actions() == {"CloneSet/shop/clones": "adopt"}
    assert cluster.run().actions() == {}  # not enabled by default

    cluster.edit("configmaps", "shop", "app", {"data": {"v": "2"}})
    rolled = cluster.run("--config", str(config))
    assert rolled.actions() == {"CloneSet/shop/clones": "rollout"}
    stored = cluster.get("clonesets", "shop", "clones")
    assert template_hash(stored) == rolled.row("CloneSet", "clones")["hash"]
    progressing = cluster.run("--config", str(config)).row("CloneSet", "clones")
    assert progressing.get("rollout_status") == "progressing"
    counts = dict.fromkeys(("replicas", "updatedReplicas", "readyReplicas", "availableReplicas"), 2)
    stored["status"] = {"observedGeneration": stored["metadata"]["generation"], **counts}
    cluster.sim.store.update(stored, keep_status=True)
    watched = cluster.run("--config", str(config)).row("CloneSet", "clones")
    assert (watched["action"], watched.get("rollout_status")) == ("in-sync", "complete")
