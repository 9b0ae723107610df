"""What a ConfigMap, a Secret and a Deployment weigh on a real API server after the deploys real tools do.

Why: the benchmark's thin objects carry no managedFields, no last-applied annotation, few labels and no
status, so its bytes are optimistic by a factor that this module measures. `python -m
benchmarks.realistic_objects --out benchmarks/realistic-objects.json` starts the real control plane of
tests/cluster (etcd, kube-apiserver, controllers, kwok), takes one object of each kind from the generator
and deploys a copy of it each way real tools do:

- `kubectl`: `kubectl apply` (client-side: the last-applied annotation, manager
  `kubectl-client-side-apply`);
- `helm`: server-side apply with field manager `helm` and Helm's labels and annotations (Helm 4 applies
  server-side);
- `argocd`: server-side apply with field manager `argocd-controller` and Argo CD's tracking annotation;

then edits each by another manager (`kubectl-edit`, one annotation) and, for the Deployments, waits for
kube-controller-manager's status writes (one replica, run by a kwok node). It reads every object back
whole and in the metadata-only list (`PartialObjectMetadataList`) and records the bytes of each part:
the whole object, its metadata with and without managedFields, the managedFields, the last-applied
annotation, the status, and the same figures for the generator's thin and realistic
(rehash_simulator/dress.py) versions of the same object, so the generator can be checked against the
server, and the metadata bytes of the benchmark's whole 1x cluster per kind, thin and realistic. Sizes are
of compact JSON (what the server sends, before gzip).
"""

from __future__ import annotations

import argparse
import copy
import json
import random
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

import requests

from benchmarks import objects as built
from benchmarks.generate import REALISTIC, THIN, Shape, generate
from rehash_simulator.dress import KUBECTL, LAST_APPLIED, dress
from tests.cluster.controlplane import ControlPlane, control_plane

NS = "realistic"
META_LIST = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"
PATHS = {
    "ConfigMap": "/api/v1/namespaces/{ns}/configmaps",
    "Secret": "/api/v1/namespaces/{ns}/secrets",
    "Deployment": "/apis/apps/v1/namespaces/{ns}/deployments",
}
WAYS = ("kubectl", "helm", "argocd")
MANAGERS = {"kubectl": KUBECTL, "helm": "helm", "argocd": "argocd-controller"}


def size(value: Any) -> int:
    return len(json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode())


def samples(seed: int) -> list[dict[str, Any]]:
    """One ConfigMap (a few KB), one Opaque Secret and one opted-in Deployment, from the generator."""
    rng = random.Random(seed)
    configmap = built.configmap(rng, NS, "config")
    while not 2000 < size(configmap["data"]) < 8000:
        configmap = built.configmap(rng, NS, "config")
    secret = built.secret(rng, NS, "secret")
    while secret["type"] != "Opaque":
        secret = built.secret(rng, NS, "secret")
    refs = [("configmap", "config", sorted(configmap["data"])), ("secret", "secret", sorted(secret["data"]))]
    deployment = built.workload(rng, "Deployment", NS, "app", opted_in=True, refs=refs)
    deployment["spec"]["replicas"] = 1
    deployment["spec"]["template"]["spec"]["serviceAccountName"] = "default"  # no pod without its account
    deployment["metadata"]["annotations"].pop("deployment.kubernetes.io/revision")
    return [configmap, secret, deployment]


def as_deployed(obj: dict[str, Any], way: str) -> dict[str, Any]:
    """A copy named for `way`, with the labels and annotations that deployer adds."""
    new = copy.deepcopy(obj)
    meta = new["metadata"]
    meta["name"] = f"{meta['name']}-{way}"
    labels = meta["labels"] = dict(meta.get("labels") or {})  # not the selector's and template's too
    annotations = meta.setdefault("annotations", {})
    if way == "helm":
        labels.update(
            {
                "app.kubernetes.io/managed-by": "Helm",
                "app.kubernetes.io/instance": "shop",
                "app.kubernetes.io/version": "1.4.2",
                "helm.sh/chart": "shop-0.12.3",
            }
        )
        annotations.update({"meta.helm.sh/release-name": "shop", "meta.helm.sh/release-namespace": NS})
    elif way == "argocd":
        group = new["apiVersion"].rpartition("/")[0]
        annotations["argocd.argoproj.io/tracking-id"] = f"shop:{group}/{new['kind']}:{NS}/{meta['name']}"
    return new


def deploy(cp: ControlPlane, kubeconfig: Path, obj: dict[str, Any], way: str, workdir: Path) -> None:
    path = PATHS[obj["kind"]].format(ns=NS) + "/" + obj["metadata"]["name"]
    if way == "kubectl":
        manifest = workdir / f"{obj['kind']}-{way}.json"
        manifest.write_text(json.dumps(obj))
        subprocess.run(
            ["kubectl", "--kubeconfig", str(kubeconfig), "apply", "-f", str(manifest)],
            check=True,
            capture_output=True,
        )
    else:
        query = f"?fieldManager={MANAGERS[way]}&force=true"
        cp.api("PATCH", path + query, obj, content_type="application/apply-patch+yaml")
    edit = {"metadata": {"annotations": {"example.com/owner-team": "team-7"}}}
    cp.api("PATCH", path + "?fieldManager=kubectl-edit", edit, content_type="application/merge-patch+json")


def settled(cp: ControlPlane, obj: dict[str, Any]) -> None:
    """Wait until the controllers have written a Deployment's status for its one available replica."""
    path = PATHS["Deployment"].format(ns=NS) + "/" + obj["metadata"]["name"]
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        status = cp.api("GET", path).get("status") or {}
        if status.get("availableReplicas") == 1 and status.get("updatedReplicas") == 1:
            return
        time.sleep(1)
    raise TimeoutError(f"{path}: no available replica in 120 s")


def parts(obj: dict[str, Any], meta: dict[str, Any] | None = None) -> dict[str, Any]:
    """The bytes of each part of `obj` (and of `meta`, its metadata as the metadata-only list served it)."""
    metadata = meta if meta is not None else obj["metadata"]
    managed = metadata.get("managedFields") or []
    annotations = metadata.get("annotations") or {}
    without = {k: v for k, v in metadata.items() if k != "managedFields"}
    return {
        "object": size(obj),
        "metadata": size(metadata),
        "metadata_without_managed_fields": size(without),
        "managed_fields": size(managed) if managed else 0,
        "last_applied": len(annotations.get(LAST_APPLIED, "").encode()),
        "status": size(obj["status"]) if obj.get("status") else 0,
        "labels": len(metadata.get("labels") or {}),
        "annotations": len(annotations),
        "managers": [
            f"{m['manager']}/{m['operation']}" + (f"/{m['subresource']}" if m.get("subresource") else "")
            for m in managed
        ],
    }


def measure(seed: int) -> dict[str, Any]:
    result: dict[str, Any] = {"objects": {}}
    with control_plane() as cp, tempfile.TemporaryDirectory(prefix="realistic-objects-") as tmp:
        workdir = Path(tmp)
        result["server"] = cp.version()["gitVersion"]
        cp.api(
            "POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}}
        )
        session = requests.Session()
        session.trust_env = False  # a REQUESTS_CA_BUNDLE from the environment must not win
        session.verify = str(cp.ca)
        session.headers["Authorization"] = f"Bearer {cp.tokens['admin']}"
        deployed: list[dict[str, Any]] = []
        for base in samples(seed):
            for way in WAYS:
                obj = as_deployed(base, way)
                deploy(cp, cp.kubeconfig, obj, way, workdir)
                deployed.append(obj)
        for obj in deployed:
            if obj["kind"] == "Deployment":
                settled(cp, obj)
        for kind, collection in PATHS.items():
            listed = session.get(cp.server + collection.format(ns=NS), headers={"Accept": META_LIST})
            listed.raise_for_status()
            metas = {i["metadata"]["name"]: i for i in listed.json()["items"]}
            for obj in (o for o in deployed if o["kind"] == kind):
                name = obj["metadata"]["name"]
                stored = cp.api("GET", collection.format(ns=NS) + "/" + name)
                row = parts(stored, metas[name]["metadata"])
                row["metadata_list_item"] = size(metas[name])
                result["objects"][f"{kind}/{name}"] = row
                if kind == "Deployment":
                    result.setdefault("deployment_managed_fields", {})[name] = stored["metadata"][
                        "managedFields"
                    ]
    result["generator"] = generated(seed)
    result["cluster_1x"] = cluster_bytes(seed)
    return result


def generated(seed: int) -> dict[str, Any]:
    """The same objects from the generator: thin, and dressed as `Shape(objects="realistic")` does for
    each deployer (the dressing's own kubectl-edit entry and status included where it draws them)."""
    rows: dict[str, Any] = {}
    for base in samples(seed):
        name = f"{base['kind']}/{base['metadata']['name']}"
        rows[f"{name}/thin"] = parts(base)
        for way in WAYS:
            dressed = dress(copy.deepcopy(base), seed, deployer=MANAGERS[way])
            rows[f"{name}-{way}/realistic"] = parts(dressed)
    return rows


def cluster_bytes(seed: int) -> dict[str, Any]:
    """Per kind, over the benchmark's whole 1x cluster, thin and realistic: the bytes of the objects'
    metadata (what a metadata-only list carries, before gzip), of their managedFields and of the
    last-applied annotations."""
    totals: dict[str, Any] = {}
    for objects in (THIN, REALISTIC):
        rows: dict[str, dict[str, int]] = {}
        for obj in generate(Shape(seed=seed, objects=objects)).objects:
            kind = "Helm release" if obj.get("type") == "helm.sh/release.v1" else obj["kind"]
            row = rows.setdefault(
                kind, dict.fromkeys(("objects", "metadata", "managed_fields", "last_applied"), 0)
            )
            part = parts(obj)
            row["objects"] += 1
            for key in ("metadata", "managed_fields", "last_applied"):
                row[key] += part[key]
        totals[objects] = rows
    return totals


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.realistic_objects", description=__doc__)
    parser.add_argument("--out", type=Path, default=Path("benchmarks/realistic-objects.json"))
    parser.add_argument("--seed", type=int, default=5)
    args = parser.parse_args(argv)
    result = {"command": "python -m benchmarks.realistic_objects", "seed": args.seed, **measure(args.seed)}
    args.out.write_text(json.dumps(result, indent=1, sort_keys=True) + "\n")
    for key, row in {**result["objects"], **result["generator"]}.items():
        print(
            f"{key:36} object {row['object']:6} metadata {row['metadata']:6} "
            f"(without managedFields {row['metadata_without_managed_fields']:5}) managedFields "
            f"{row['managed_fields']:5} last-applied {row['last_applied']:5} status {row['status']:4} "
            f"{','.join(row['managers'])}"
        )
    for objects, rows in result["cluster_1x"].items():
        for kind, row in rows.items():
            print(f"1x {objects:9} {kind:12} {row}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
