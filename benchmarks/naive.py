"""The naive baseline: what a hand-written "restart on config change" CronJob script does.

Official `kubernetes` client, typed API: list every Deployment, StatefulSet, DaemonSet and CronJob in
all namespaces, and for each opted-in one read every ConfigMap/Secret its pod spec references in full
(no metadata-first check, no cache between workloads), hash the data with hashlib, compare with an
annotation on the pod template and patch the template when it differs. It is correct enough for the
benchmark's cluster (whole-object hashing, no key selection) and makes no attempt to be gentle.
Run: `python -m benchmarks.naive --kubeconfig FILE` (prints {"patched": n, "read": n} as JSON).
"""

from __future__ import annotations

import argparse
import hashlib
import json
from collections.abc import Callable, Iterator
from typing import Any

from kubernetes import client, config

WATCH = "kube-rehash.io/watch"
HASH = "naive.example.com/config-hash"


def references(pod: Any) -> Iterator[tuple[str, str]]:
    """(kind, name) of the ConfigMaps/Secrets a typed V1PodSpec references."""
    for container in [*(pod.containers or []), *(pod.init_containers or [])]:
        for env in container.env or []:
            source = env.value_from
            if source is not None and source.config_map_key_ref is not None:
                yield "configmap", source.config_map_key_ref.name
            if source is not None and source.secret_key_ref is not None:
                yield "secret", source.secret_key_ref.name
        for env_from in container.env_from or []:
            if env_from.config_map_ref is not None:
                yield "configmap", env_from.config_map_ref.name
            if env_from.secret_ref is not None:
                yield "secret", env_from.secret_ref.name
    for volume in pod.volumes or []:
        if volume.config_map is not None:
            yield "configmap", volume.config_map.name
        if volume.secret is not None:
            yield "secret", volume.secret.secret_name
        if volume.projected is not None:
            for source in volume.projected.sources or []:
                if source.config_map is not None:
                    yield "configmap", source.config_map.name
                if source.secret is not None:
                    yield "secret", source.secret.name


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.naive", description=__doc__)
    parser.add_argument("--kubeconfig", required=True)
    args = parser.parse_args(argv)
    config.load_kube_config(config_file=args.kubeconfig)
    apps, batch, core = client.AppsV1Api(), client.BatchV1Api(), client.CoreV1Api()
    kinds: list[tuple[Callable[..., Any], Callable[..., Any], Callable[[Any], Any]]] = [
        (
            apps.list_deployment_for_all_namespaces,
            apps.patch_namespaced_deployment,
            lambda o: o.spec.template,
        ),
        (
            apps.list_stateful_set_for_all_namespaces,
            apps.patch_namespaced_stateful_set,
            lambda o: o.spec.template,
        ),
        (
            apps.list_daemon_set_for_all_namespaces,
            apps.patch_namespaced_daemon_set,
            lambda o: o.spec.template,
        ),
        (
            batch.list_cron_job_for_all_namespaces,
            batch.patch_namespaced_cron_job,
            lambda o: o.spec.job_template.spec.template,
        ),
    ]
    patched = read = 0
    for list_all, patch, template_of in kinds:
        for obj in list_all().items:
            if (obj.metadata.annotations or {}).get(WATCH) != "true":
                continue
            ns, template = obj.metadata.namespace, template_of(obj)
            digest = hashlib.sha256()
            for kind, name in sorted(set(references(template.spec))):
                if kind == "configmap":
                    data = core.read_namespaced_config_map(name, ns).data or {}
                else:
                    data = core.read_namespaced_secret(name, ns).data or {}
                read += 1
                digest.update(f"{kind}/{name}\0".encode())
                for key in sorted(data):
                    digest.update(f"{key}\0{data[key]}\0".encode())
            value = digest.hexdigest()
            if (template.metadata.annotations or {}).get(HASH) == value:
                continue
            body = {"spec": {"template": {"metadata": {"annotations": {HASH: value}}}}}
            if obj.kind == "CronJob" or template is not getattr(obj.spec, "template", None):
                body = {"spec": {"jobTemplate": body}}
            patch(obj.metadata.name, ns, body)
            patched += 1
    print(json.dumps({"patched": patched, "read": read}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
