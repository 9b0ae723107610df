"""Real rollouts: what kube-rehash's patches make the real controllers do, counted in ReplicaSets,
ControllerRevisions and Jobs.

Why: the contract promises exactly one restart per change of a referenced source and none for adoption, steady
passes, bookkeeping refreshes and re-applies. Only the real Deployment, StatefulSet, DaemonSet, Job and
CronJob controllers can show that our pod-template patch has that effect, and that the rolling update then
completes (on kwok's fake nodes).
"""

from __future__ import annotations

import json
from typing import Any

from tests.real.conftest import (
    DEPLOYMENT_STEADY,
    HASH,
    PREFIX,
    Kube,
    configmap,
    cronjob,
    pod_spec,
    secret,
    template_hash,
    wait_until,
    workload,
)


def test_deployment_rolls_exactly_once_per_configmap_change_and_never_otherwise(kube: Kube) -> None:
    manifest = workload("Deployment", "web", pod_spec(configmaps=("web-config",)), replicas=3)
    kube.apply(configmap("web-config", {"mode": "blue"}), manifest)
    kube.wait_settled("Deployment", "web")
    assert len(kube.replicasets("web")) == 1

    # Adoption records the hash on metadata only: no new ReplicaSet.
    first = kube.rehash()
    assert first.code == 0, first.stderr
    assert first.actions() == {"Deployment/web": "adopt"}
    kube.wait_observed("Deployment", "web")
    assert len(kube.replicasets("web")) == 1

    # A steady pass restarts nothing.
    assert kube.rehash().actions()["Deployment/web"] in DEPLOYMENT_STEADY

    # A content change: exactly one new ReplicaSet, carrying the new hash, and the rolling update completes.
    kube.apply(configmap("web-config", {"mode": "green"}))
    rolled = kube.rehash()
    assert rolled.code == 0, rolled.stderr
    row = rolled.row("Deployment", "web")
    assert row["action"] == "rollout"
    kube.wait_settled("Deployment", "web")
    replicasets = kube.replicasets("web")
    assert len(replicasets) == 2
    newest = [rs for rs in replicasets if rs["status"].get("replicas", 0) == 3]
    assert [template_hash(rs["spec"]["template"]) for rs in newest] == [row["hash"]]
    assert all(rs["status"].get("replicas", 0) == 0 for rs in replicasets if rs not in newest)

    # Steady again, then a label-only change of the source: bookkeeping at most, no restart.
    assert kube.rehash().actions()["Deployment/web"] in DEPLOYMENT_STEADY
    kube.apply(configmap("web-config", {"mode": "green"}, labels={"team": "shop"}))
    relabelled = kube.rehash()
    assert relabelled.actions() == {"Deployment/web": "refresh"}
    kube.wait_observed("Deployment", "web")
    assert len(kube.replicasets("web")) == 2


def test_steady_pass_writes_nothing_to_a_deployment(kube: Kube) -> None:
    kube.apply(
        configmap("steady-config", {"k": "v"}), workload("Deployment", "steady", pod_spec(("steady-config",)))
    )
    kube.wait_settled("Deployment", "steady")
    assert kube.rehash().actions() == {"Deployment/steady": "adopt"}
    generation = kube.obj("Deployment", "steady")["metadata"]["generation"]
    second = kube.rehash()
    assert kube.obj("Deployment", "steady")["metadata"]["generation"] == generation, "the pass wrote again"
    assert second.actions() == {"Deployment/steady": "in-sync"}


def test_reapplying_the_original_manifest_restarts_nothing_more(kube: Kube) -> None:
    manifest = workload("Deployment", "api", pod_spec(configmaps=("api-config",)))
    kube.apply(configmap("api-config", {"level": "info"}), manifest)
    kube.wait_settled("Deployment", "api")
    kube.rehash()
    kube.apply(configmap("api-config", {"level": "debug"}))
    assert kube.rehash().actions() == {"Deployment/api": "rollout"}
    kube.wait_settled("Deployment", "api")
    assert len(kube.replicasets("api")) == 2

    # Client-side `kubectl apply` of the original manifest keeps our template annotation (it never was in the
    # last-applied configuration): nothing changes, the pass is steady.
    kube.apply(manifest)
    kube.wait_observed("Deployment", "api")
    assert template_hash(kube.obj("Deployment", "api")["spec"]["template"]) is not None
    assert kube.rehash().actions()["Deployment/api"] in DEPLOYMENT_STEADY

    # A re-apply that replaces the object (kubectl replace, as some pipelines do) strips the template
    # annotation. That is the pipeline's own restart (back to the first ReplicaSet's template); kube-rehash
    # must not add a second one: content is unchanged, so the pass only rewrites its bookkeeping.
    live = kube.obj("Deployment", "api")
    del live["spec"]["template"]["metadata"]["annotations"][HASH]
    for key in ("resourceVersion", "managedFields", "uid", "creationTimestamp", "generation"):
        live["metadata"].pop(key, None)
    live.pop("status", None)
    kube.kubectl("replace", "-f", "-", stdin=json.dumps(live))
    kube.wait_settled("Deployment", "api")
    replicasets = {rs["metadata"]["name"] for rs in kube.replicasets("api")}
    template = kube.obj("Deployment", "api")["spec"]["template"]
    stripped = kube.rehash()
    assert stripped.code == 0, stripped.stderr
    assert stripped.actions()["Deployment/api"] in ("refresh", "in-sync"), stripped.stdout
    kube.wait_observed("Deployment", "api")
    assert kube.obj("Deployment", "api")["spec"]["template"] == template, "the pass touched the pod template"
    assert {rs["metadata"]["name"] for rs in kube.replicasets("api")} == replicasets
    assert kube.rehash().actions()["Deployment/api"] in DEPLOYMENT_STEADY


def test_secret_change_makes_exactly_one_new_replicaset(kube: Kube) -> None:
    kube.apply(
        secret("db-credentials", {"password": "one"}),
        workload("Deployment", "worker", pod_spec(secrets_=("db-credentials",))),
    )
    kube.wait_settled("Deployment", "worker")
    assert kube.rehash().actions() == {"Deployment/worker": "adopt"}
    kube.apply(secret("db-credentials", {"password": "two"}))
    rolled = kube.rehash()
    assert rolled.actions() == {"Deployment/worker": "rollout"}
    assert "two" not in rolled.stdout + rolled.stderr
    kube.wait_settled("Deployment", "worker")
    assert len(kube.replicasets("worker")) == 2
    assert kube.rehash().actions()["Deployment/worker"] in DEPLOYMENT_STEADY
    kube.wait_observed("Deployment", "worker")
    assert len(kube.replicasets("worker")) == 2


def _volume_spec(name: str) -> dict[str, object]:
    spec = pod_spec()
    spec["containers"][0]["volumeMounts"] = [{"name": "config", "mountPath": "/etc/app"}]
    spec["volumes"] = [{"name": "config", "configMap": {"name": name}}]
    return spec


def test_statefulset_and_daemonset_change_makes_exactly_one_new_controllerrevision(kube: Kube) -> None:
    kube.apply(
        configmap("shared", {"feature": "off"}),
        workload("StatefulSet", "db", _volume_spec("shared")),
        workload("DaemonSet", "agent", _volume_spec("shared")),
    )
    for kind, name in (("StatefulSet", "db"), ("DaemonSet", "agent")):
        kube.wait_settled(kind, name)
        assert len(kube.revisions(kind, name)) == 1
    assert kube.rehash().actions() == {"StatefulSet/db": "adopt", "DaemonSet/agent": "adopt"}
    assert kube.rehash().actions() == {"StatefulSet/db": "in-sync", "DaemonSet/agent": "in-sync"}
    for kind, name in (("StatefulSet", "db"), ("DaemonSet", "agent")):
        kube.wait_observed(kind, name)
        assert len(kube.revisions(kind, name)) == 1

    kube.apply(configmap("shared", {"feature": "on"}))
    rolled = kube.rehash()
    assert rolled.actions() == {"StatefulSet/db": "rollout", "DaemonSet/agent": "rollout"}
    for kind, name in (("StatefulSet", "db"), ("DaemonSet", "agent")):
        kube.wait_settled(kind, name)
        revisions = kube.revisions(kind, name)
        assert len(revisions) == 2, f"{kind}/{name}"
        newest = max(revisions, key=lambda r: r["revision"])
        assert template_hash(newest["data"]["spec"]["template"]) == rolled.row(kind, name)["hash"]
    assert kube.rehash().actions() == {"StatefulSet/db": "in-sync", "DaemonSet/agent": "in-sync"}


def test_paused_deployment_is_patched_and_rolls_once_on_resume(kube: Kube) -> None:
    kube.apply(configmap("cfg", {"a": "1"}), workload("Deployment", "paused", pod_spec(configmaps=("cfg",))))
    kube.wait_settled("Deployment", "paused")
    kube.rehash()
    kube.kubectl("rollout", "pause", "deployment/paused", "-n", kube.ns)

    kube.apply(configmap("cfg", {"a": "2"}))
    rolled = kube.rehash()
    assert rolled.actions() == {"Deployment/paused": "rollout"}
    kube.wait_observed("Deployment", "paused")
    assert len(kube.replicasets("paused")) == 1, "a paused Deployment must not roll before it is resumed"

    kube.kubectl("rollout", "resume", "deployment/paused", "-n", kube.ns)
    kube.wait_settled("Deployment", "paused")
    replicasets = kube.replicasets("paused")
    assert len(replicasets) == 2
    assert rolled.row("Deployment", "paused")["hash"] in {
        template_hash(rs["spec"]["template"]) for rs in replicasets
    }


def test_cronjob_change_reaches_the_next_job_and_run_on_change_runs_exactly_one(kube: Kube) -> None:
    kube.apply(
        configmap("batch-config", {"limit": "10"}),
        cronjob("report", pod_spec(configmaps=("batch-config",))),
        cronjob("sync", pod_spec(configmaps=("batch-config",)), {f"{PREFIX}/run-on-change": "true"}),
    )
    assert kube.rehash().actions() == {"CronJob/report": "adopt", "CronJob/sync": "adopt"}
    assert kube.jobs() == []

    kube.apply(configmap("batch-config", {"limit": "20"}))
    changed = kube.rehash()
    assert changed.code == 0, changed.stderr
    assert changed.actions() == {"CronJob/report": "rollout", "CronJob/sync": "rollout"}

    # The next Job the CronJob makes (here on demand, as the schedule would) carries the new hash.
    kube.kubectl("create", "job", "report-manual", "--from=cronjob/report", "-n", kube.ns)
    manual = kube.obj("Job", "report-manual")
    assert template_hash(manual["spec"]["template"]) == changed.row("CronJob", "report")["hash"]

    # run-on-change created exactly one Job for `sync`, from the new template, and the Job controller ran it.
    def sync_jobs() -> list[dict[str, Any]]:
        return [j for j in kube.jobs() if j["metadata"]["name"] != "report-manual"]

    jobs = sync_jobs()
    assert len(jobs) == 1, [j["metadata"]["name"] for j in jobs]
    job = jobs[0]
    assert template_hash(job["spec"]["template"]) == changed.row("CronJob", "sync")["hash"]
    name = job["metadata"]["name"]
    wait_until(
        f"Job {name} to complete", lambda: kube.obj("Job", name).get("status", {}).get("succeeded") == 1
    )

    assert kube.rehash().actions() == {"CronJob/report": "in-sync", "CronJob/sync": "in-sync"}
    assert len(sync_jobs()) == 1
