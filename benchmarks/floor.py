"""The floor: only the requests a steady-state pass cannot avoid, and no reconcile logic.

A steady-state pass must see every workload (a new, changed or removed one must be noticed), but it
needs only their metadata: a workload's `metadata.generation` says whether its pod spec changed since
the last pass, so unchanged pod specs need not be downloaded again. And it must learn whether any
referenced ConfigMap/Secret changed, which costs one metadata-only GET per source. So the floor lists
the five workload kinds kube-rehash watches as PartialObjectMetadataList (paged, limit=500; a kind that
answers 404 is skipped) and reads the PartialObjectMetadata of each referenced source, with kube-rehash's
request concurrency (4). A metadata list has no pod specs, so the referenced set comes from a file the
harness writes from the generator (`--references FILE`: JSON list of [kind, namespace, name], kind
"configmap" or "secret"). No hashing, no decisions, no writes, no kube-rehash code: what it costs is
the least any stateless steady-state pass can cost.
`--sources list` is the other floor: ConfigMaps and Secrets listed cluster-wide instead, metadata-only and
paged like the workloads (Helm releases filtered out by the server, as kube-rehash's lists do), all seven
lists on the 4 threads; a list page needs nothing but `json` (docs/engineering/performance-history.md,
"Steady-pass CPU"). Run: `python -m benchmarks.floor --kubeconfig FILE --references FILE` (prints JSON
counts).
"""

from __future__ import annotations

import argparse
import json
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import requests

from benchmarks.kubeconfig import session_for

KINDS = (
    "/apis/apps/v1/deployments",
    "/apis/apps/v1/statefulsets",
    "/apis/apps/v1/daemonsets",
    "/apis/batch/v1/cronjobs",
    "/apis/argoproj.io/v1alpha1/rollouts",
)
METADATA = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json"
METADATA_LIST = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json"


SOURCE_LISTS = (("/api/v1/configmaps", None), ("/api/v1/secrets", "type!=helm.sh/release.v1"))


LIST_FLOOR = "floor-list"
"""The benchmarks' name for the list floor (`--sources list`): the steady-pass targets compare against it."""


def floor_argv(kubeconfig: Path | str, references: Path | str, *, sources: str = "get") -> list[str]:
    """The floor's command line, as the benchmarks run it beside kube-rehash."""
    argv = [sys.executable, "-m", "benchmarks.floor", "--kubeconfig", str(kubeconfig)]
    return [*argv, "--references", str(references), *(["--sources", sources] if sources != "get" else [])]


def list_metadata(session: requests.Session, server: str, path: str, selector: str | None = None) -> int:
    """Page through one collection metadata-only; the number of items (0 if the kind is absent)."""
    items, token = 0, ""
    while True:
        params = {"limit": "500", **({"fieldSelector": selector} if selector else {})}
        params.update({"continue": token} if token else {})
        response = session.get(server + path, params=params, headers={"Accept": METADATA_LIST})
        if response.status_code == 404:  # e.g. no Argo Rollouts CRD in this cluster
            return items
        response.raise_for_status()
        page = response.json()
        items += len(page.get("items") or [])
        token = (page.get("metadata") or {}).get("continue") or ""
        if not token:
            return items


def read_references(path: Path) -> list[tuple[str, str, str]]:
    """(kind, namespace, name) of each referenced source, deduplicated and sorted."""
    entries = json.loads(path.read_text())
    return sorted({(str(kind), str(ns), str(name)) for kind, ns, name in entries})


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.floor", description=__doc__)
    parser.add_argument("--kubeconfig", type=Path, required=True)
    parser.add_argument("--references", type=Path, required=True, help="JSON [[kind, ns, name], ...]")
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument(
        "--sources", choices=("get", "list"), default="get", help="list: the sources listed cluster-wide"
    )
    args = parser.parse_args(argv)
    sources = read_references(args.references)
    session, server = session_for(args.kubeconfig, pool=max(args.concurrency, 1))
    if args.sources == "list":
        lists = [(path, None) for path in KINDS] + list(SOURCE_LISTS)
        with ThreadPoolExecutor(args.concurrency) as pool:
            counts = list(pool.map(lambda job: list_metadata(session, server, *job), lists))
        print(
            json.dumps({"workloads": sum(counts[: len(KINDS)]), "sources_listed": sum(counts[len(KINDS) :])})
        )
        return 0
    workloads = sum(list_metadata(session, server, path) for path in KINDS)

    def head(source: tuple[str, str, str]) -> int:
        kind, ns, name = source
        url = f"{server}/api/v1/namespaces/{ns}/{kind}s/{name}"
        return session.get(url, headers={"Accept": METADATA}).status_code

    with ThreadPoolExecutor(args.concurrency) as pool:
        codes = list(pool.map(head, sources))
    print(json.dumps({"workloads": workloads, "sources": len(sources), "found": codes.count(200)}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
