"""The floor: only the requests a steady-state pass cannot avoid, and no reconcile logic.

It lists every workload kind kube-rehash watches (the pod specs are needed to know the references),
then reads the metadata only (PartialObjectMetadata) of each ConfigMap/Secret an opted-in workload
references, once per source, with the same request concurrency as kube-rehash (4). No hashing, no
decisions, no writes: what it costs is the least any stateless steady-state pass can cost.
Run: `python -m benchmarks.floor --kubeconfig FILE` (prints {"sources": n} as JSON).
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from benchmarks.kubeconfig import session_for

WATCH = "kube-rehash.io/watch"
KINDS = (
    ("/apis/apps/v1/deployments", ("spec", "template")),
    ("/apis/apps/v1/statefulsets", ("spec", "template")),
    ("/apis/apps/v1/daemonsets", ("spec", "template")),
    ("/apis/batch/v1/cronjobs", ("spec", "jobTemplate", "spec", "template")),
    ("/apis/argoproj.io/v1alpha1/rollouts", ("spec", "template")),
)
METADATA = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json"


def pod_refs(pod: Mapping[str, Any]) -> Iterator[tuple[str, str]]:
    """(kind, name) of every ConfigMap/Secret a pod spec mentions."""
    for container in [*(pod.get("containers") or []), *(pod.get("initContainers") or [])]:
        for env in container.get("env") or []:
            source = env.get("valueFrom") or {}
            if "configMapKeyRef" in source:
                yield "configmaps", source["configMapKeyRef"]["name"]
            if "secretKeyRef" in source:
                yield "secrets", source["secretKeyRef"]["name"]
        for env_from in container.get("envFrom") or []:
            if "configMapRef" in env_from:
                yield "configmaps", env_from["configMapRef"]["name"]
            if "secretRef" in env_from:
                yield "secrets", env_from["secretRef"]["name"]
    for volume in pod.get("volumes") or []:
        sources = [volume, *((volume.get("projected") or {}).get("sources") or [])]
        for source in sources:
            if "configMap" in source:
                yield "configmaps", source["configMap"]["name"]
            if "secret" in source:
                yield "secrets", source["secret"].get("secretName") or source["secret"].get("name")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.floor", description=__doc__)
    parser.add_argument("--kubeconfig", type=Path, required=True)
    parser.add_argument("--concurrency", type=int, default=4)
    args = parser.parse_args(argv)
    session, server = session_for(args.kubeconfig)
    wanted: set[tuple[str, str, str]] = set()
    for path, template_path in KINDS:
        token = ""
        while True:
            params = {"limit": "500", **({"continue": token} if token else {})}
            response = session.get(server + path, params=params)
            if response.status_code == 404:
                break
            response.raise_for_status()
            page = response.json()
            for item in page.get("items") or []:
                meta = item["metadata"]
                if (meta.get("annotations") or {}).get(WATCH) != "true":
                    continue
                template: Any = item
                for part in template_path:
                    template = template.get(part) or {}
                wanted.update((meta["namespace"], k, n) for k, n in pod_refs(template.get("spec") or {}))
            token = (page.get("metadata") or {}).get("continue") or ""
            if not token:
                break

    def head(key: tuple[str, str, str]) -> int:
        ns, plural, name = key
        response = session.get(
            f"{server}/api/v1/namespaces/{ns}/{plural}/{name}", headers={"Accept": METADATA}
        )
        return response.status_code

    with ThreadPoolExecutor(args.concurrency) as pool:
        codes = list(pool.map(head, sorted(wanted)))
    print(json.dumps({"sources": len(wanted), "found": codes.count(200)}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
