"""The benchmark's steady and change passes against a real kube-apiserver, at a reduced scale.

Why: every other figure of `make bench` comes from our API simulator, i.e. from our own reading of the
API. Here the same generated cluster (scaled down, e.g. 0.25x, so a 2-core machine loads it in a
minute) is loaded into the real control plane of tests/cluster (etcd, kube-apiserver, controllers,
kwok) and kube-rehash, the naive script and the floor run against it. Requests are counted from the
apiserver's audit log, filtered by the user of the measured tool: each tool runs as its own
ServiceAccount bound to cluster-admin, so the harness's own seeding and the controllers' traffic are
not counted. The audit log has no response sizes, so this scenario reports requests and wall time, not
bytes, and cannot tell a metadata-only GET from a full one.

To keep the fake cluster cheap for the controllers, the loaded workloads are the generated ones with
replicas 0 (Deployments, StatefulSets), a nodeSelector no Node matches (DaemonSets) and a schedule that
does not fire during a run (CronJobs, 00:00 on January 1st; not `suspend`, which kube-rehash skips): no pod
is created, while every pod template, reference and annotation is as generated.
"""

from __future__ import annotations

import base64
import contextlib
import copy
import json
import random
import sys
import time
import urllib.parse
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

import requests

from benchmarks.after_change import ROLLOUT_SECONDS, pass_row, until_complete
from benchmarks.floor import floor_argv
from benchmarks.generate import PLURALS, Shape, generate
from benchmarks.harness import Measured, change_sources, measure
from benchmarks.kubeconfig import session_for

KUBE_REHASH = str(Path(sys.executable).parent / "kube-rehash")
TOOLS = ("kube-rehash", "naive", "floor")
BENCH_NS = "kube-rehash-bench"  # where the measured tools' ServiceAccounts live
WORKLOAD_KINDS = frozenset(p for p in PLURALS.values())
METHODS = {"get": "GET", "list": "GET", "watch": "GET", "create": "POST", "update": "PUT", "patch": "PATCH"}
LOAD_THREADS = 8
NEVER = "0 0 1 1 *"  # CronJobs: no Job during a run
NO_NODE = {"kube-rehash.io/bench": "no-such-node"}  # DaemonSets schedule no pod


def scaled(shape: Shape, factor: float) -> Shape:
    """`Shape.scaled` for a fraction: every count times `factor`, rounded, at least 1."""
    return replace(
        shape,
        **{
            name: max(1, round(getattr(shape, name) * factor))
            for name in ("workloads", "opted_in", "namespaces", "configmaps", "secrets", "helm_secrets")
        },
    )


def cheap(obj: dict[str, Any]) -> dict[str, Any]:
    """The generated object with no pod to run (see the module docstring); other objects unchanged."""
    kind = obj["kind"]
    if kind not in ("Deployment", "StatefulSet", "DaemonSet", "CronJob"):
        return obj
    obj = copy.deepcopy(obj)
    spec = obj["spec"]
    if kind in ("Deployment", "StatefulSet"):
        spec["replicas"] = 0
    elif kind == "DaemonSet":
        spec["template"]["spec"]["nodeSelector"] = NO_NODE
    else:
        spec["schedule"] = NEVER
    return obj


def collection(obj: dict[str, Any]) -> str:
    """The API path an object is created at."""
    kind, api = obj["kind"], obj["apiVersion"]
    if kind == "Namespace":
        return "/api/v1/namespaces"
    prefix = "/api/v1" if api == "v1" else f"/apis/{api}"
    plural = PLURALS.get(kind) or kind.lower() + "s"
    return f"{prefix}/namespaces/{obj['metadata']['namespace']}/{plural}"


def write_kubeconfig(path: Path, server: str, ca: Path, token: str, user: str) -> Path:
    """A kubeconfig with the CA embedded (benchmarks/kubeconfig.py, used by the floor, reads it so)."""
    data = base64.b64encode(ca.read_bytes()).decode()
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "real", "cluster": {"server": server, "certificate-authority-data": data}}],
        "users": [{"name": user, "user": {"token": token}}],
        "contexts": [{"name": user, "context": {"cluster": "real", "user": user}}],
        "current-context": user,
    }
    path.write_text(json.dumps(config))
    path.chmod(0o600)
    return path


class AuditPhase:
    """What `harness.measure` needs of a server (`mark()`, `server`, `session`), from the audit log.

    `mark()` returns the completed requests of one user since the previous mark, shaped like the
    simulator's request log (no Accept header and no response size in an audit event: `accept` is ""
    and `bytes_out` 0); the raw audit entries of the last phase stay in `last`.
    """

    def __init__(self, cp: Any, user: str, session: requests.Session) -> None:
        self.cp = cp
        self.user = user
        self.server: str = cp.server
        self.session = session  # the admin's: harness.change_sources writes with it
        self.last: list[Any] = []
        self._offset = 0
        self.mark()

    def mark(self) -> list[dict[str, Any]]:
        from tests.cluster.controlplane import parse_audit

        self.cp.sync_audit()
        with Path(self.cp.audit_log).open("rb") as log:
            log.seek(self._offset)
            data = log.read()
        data = data[: data.rfind(b"\n") + 1]  # only whole lines; the rest is read next time
        self._offset += len(data)
        self.last = [e for e in parse_audit(data.decode().splitlines()) if e.user == self.user]
        return [
            {
                "method": METHODS.get(e.verb, e.verb.upper()),
                "path": urllib.parse.urlsplit(e.uri).path,
                "query": dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(e.uri).query)),
                "status": e.code,
                "accept": "",
                "bytes_out": 0,
            }
            for e in self.last
        ]


def row(run: Measured, phase: AuditPhase) -> dict[str, Any]:
    """The harness's row without what the audit log cannot know (bytes, metadata vs content reads)."""
    out = run.row()
    for key in ("bytes", "metadata_gets", "metadata_lists", "content_gets"):
        out.pop(key)
    out["source_gets"] = run.traffic.content_gets  # every ConfigMap/Secret GET, metadata-only or not
    out["by_verb"] = dict(sorted(Counter(e.verb for e in phase.last).items()))
    # A guarded patch that lost to a controller's write (409, or 422 from a JSON-patch `test`), retried.
    out["conflicts"] = sum(1 for e in phase.last if e.verb == "patch" and e.code in (409, 422))
    out["list_uris"] = [e.uri for e in phase.last if e.verb == "list"]  # a few per pass
    out["patched"] = sorted(
        f"{e.resource}/{e.namespace}/{e.name}"
        for e in phase.last
        if e.verb == "patch" and e.resource in WORKLOAD_KINDS
    )
    if run.name == "kube-rehash":
        try:
            doc = json.loads(run.stdout)
        except ValueError:
            raise RuntimeError(f"kube-rehash exit {run.code}: {run.stderr[-2000:]}") from None
        out["summary"] = doc["summary"]
        out["budget_exhausted"] = doc.get("budget_exhausted")
    elif run.code != 0:
        raise RuntimeError(f"{run.name} exit {run.code}: {run.stderr[-2000:]}")
    return out


class Loader:
    """Creates objects as the admin, concurrently, over one keep-alive session."""

    def __init__(self, session: requests.Session, server: str) -> None:
        self.session = session
        self.server = server

    def send(self, method: str, path: str, body: Any = None) -> requests.Response:
        response = self.session.request(method, self.server + path, json=body, timeout=60)
        if response.status_code >= 400:
            raise RuntimeError(f"{method} {path}: {response.status_code} {response.text[:500]}")
        return response

    def create_all(self, objects: list[dict[str, Any]]) -> None:
        with ThreadPoolExecutor(LOAD_THREADS) as pool:
            list(pool.map(lambda o: self.send("POST", collection(o), o), objects))

    def replace_all(self, objects: list[dict[str, Any]]) -> None:
        """PUT each object back as generated: our annotations and the naive script's are gone."""
        with ThreadPoolExecutor(LOAD_THREADS) as pool:
            list(pool.map(lambda o: self.send("PUT", f"{collection(o)}/{o['metadata']['name']}", o), objects))


def settle(load: Loader, timeout: float = 120.0) -> float:
    """Wait until the controllers observed every Deployment, StatefulSet and DaemonSet spec (seconds waited).

    Measured passes start on a quiet cluster, as a first install on a running one would: a controller
    still writing the status of workloads just created or replaced makes a pass's patches conflict (409).
    """
    started = time.monotonic()
    while True:
        behind = 0
        for plural in ("deployments", "statefulsets", "daemonsets"):
            for item in load.send("GET", f"/apis/apps/v1/{plural}").json()["items"]:
                observed = (item.get("status") or {}).get("observedGeneration", 0)
                behind += observed < item["metadata"]["generation"]
        if not behind:
            return round(time.monotonic() - started, 1)
        if time.monotonic() - started > timeout:
            raise RuntimeError(f"{behind} workloads not observed by their controllers after {timeout:.0f} s")
        time.sleep(1.0)


def service_account_token(load: Loader, name: str) -> str:
    """A ServiceAccount in BENCH_NS bound to cluster-admin, and a 1-hour token for it."""
    load.send("POST", f"/api/v1/namespaces/{BENCH_NS}/serviceaccounts", {"metadata": {"name": name}})
    binding = {
        "metadata": {"name": f"{BENCH_NS}-{name}"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "cluster-admin"},
        "subjects": [{"kind": "ServiceAccount", "name": name, "namespace": BENCH_NS}],
    }
    load.send("POST", "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", binding)
    request = {
        "apiVersion": "authentication.k8s.io/v1",
        "kind": "TokenRequest",
        "spec": {"expirationSeconds": 3600},
    }
    answer = load.send("POST", f"/api/v1/namespaces/{BENCH_NS}/serviceaccounts/{name}/token", request)
    return str(answer.json()["status"]["token"])


def real_scenario(
    factor: float,
    workdir: Path,
    *,
    base: Shape | None = None,
    change_fraction: float = 0.05,
    repeat: int = 3,
    defaults: bool = True,
    cp: Any = None,
    log: Any = print,
) -> dict[str, Any]:
    """Load the cluster at `factor` into a real control plane (a new one unless `cp` is given) and measure.

    Returns {"shape", "objects", "first": {tool: row}, "steady": {tool: row}, "change": {tool: row},
    "expected_patched", "defaults": {"first", "steady"}, ...}. With a given `cp` everything this created
    (namespaces, ServiceAccounts, bindings) is deleted again at the end.
    """
    if cp is None:
        from tests.cluster.controlplane import control_plane

        with control_plane() as started:
            return real_scenario(
                factor,
                workdir,
                base=base,
                change_fraction=change_fraction,
                repeat=repeat,
                defaults=defaults,
                cp=started,
                log=log,
            )
    started_at = time.monotonic()
    shape = scaled(base or Shape(), factor)
    cluster = generate(shape)
    objects = [cheap(o) for o in cluster.objects]
    namespaces = [o for o in objects if o["kind"] == "Namespace"]
    workloads = [o for o in objects if o["kind"] in ("Deployment", "StatefulSet", "DaemonSet", "CronJob")]
    result: dict[str, Any] = {
        "factor": factor,
        "shape": asdict(shape),
        "objects": len(objects),
        "referenced_sources": len(cluster.referenced),
        "server": cp.version().get("gitVersion"),
        "replicas": "0 (Deployments, StatefulSets); DaemonSets match no Node; CronJobs run on January 1st",
    }
    admin = write_kubeconfig(
        workdir / "admin.kubeconfig", cp.server, Path(cp.ca), cp.tokens["admin"], "admin"
    )
    session, server = session_for(admin, pool=LOAD_THREADS)
    load = Loader(session, server)
    try:
        load.send("POST", "/api/v1/namespaces", {"metadata": {"name": BENCH_NS}})
        kubeconfigs: dict[str, str] = {}
        phases: dict[str, AuditPhase] = {}
        for tool in TOOLS:
            token = service_account_token(load, tool)
            user = f"system:serviceaccount:{BENCH_NS}:{tool}"
            kubeconfigs[tool] = str(
                write_kubeconfig(workdir / f"{tool}.kubeconfig", server, Path(cp.ca), token, user)
            )
            phases[tool] = AuditPhase(cp, user, session)
        loading = time.monotonic()
        load.create_all(namespaces)
        load.create_all([o for o in objects if o["kind"] != "Namespace"])
        result["load_s"] = round(time.monotonic() - loading, 1)
        result["settle_s"] = settle(load)
        log(f"[real {factor}x] loaded {len(objects)} objects in {result['load_s']:.0f}s ({shape.label()})")
        references = workdir / "references.json"
        references.write_text(json.dumps(cluster.referenced))
        config = workdir / "qps0.yaml"
        config.write_text("qps: 0\n")
        argv = {
            "kube-rehash": [KUBE_REHASH, "run", "-o", "json", "--kubeconfig", kubeconfigs["kube-rehash"]],
            "naive": [sys.executable, "-m", "benchmarks.naive", "--kubeconfig", kubeconfigs["naive"]],
            "floor": floor_argv(kubeconfigs["floor"], references),
        }
        qps0 = [*argv["kube-rehash"], "--config", str(config)]

        def run(tool: str, command: list[str] | None = None) -> dict[str, Any]:
            phase = phases[tool]
            return row(measure(tool, command or argv[tool], phase), phase)  # type: ignore[arg-type]

        # As on the simulator: the naive script's first pass before ours, so our steady pass is not
        # catching up with its template patches.
        # Its patches start rollouts (of no pod); the controllers' status writes would make ours conflict.
        result["first"] = {"naive": run("naive")}
        result["first_settle_s"] = settle(load)
        result["first"]["kube-rehash"] = run("kube-rehash", qps0)
        for tool, r in result["first"].items():
            log(f"  real first {tool}: {r['wall_s']:.1f}s, {r['requests']} requests, {r['writes']} writes")
        runs: dict[str, list[dict[str, Any]]] = {tool: [] for tool in TOOLS}
        for _ in range(repeat):  # in rounds, so a busy moment of the shared machine hits all alike
            for tool in TOOLS:
                runs[tool].append(run(tool, qps0 if tool == "kube-rehash" else None))
        result["steady"] = {}
        for tool, rows in runs.items():
            median = sorted(rows, key=lambda r: r["wall_s"])[len(rows) // 2]
            result["steady"][tool] = {**median, "wall_runs": [r["wall_s"] for r in rows]}
            log(f"  real steady {tool}: {median['wall_s']:.2f}s, {median['requests']} requests")
        rng = random.Random(shape.seed + 1)
        changed = sorted(
            rng.sample(cluster.referenced, max(1, round(change_fraction * len(cluster.referenced))))
        )
        change_sources(phases["floor"], changed, f"real-{time.time_ns()}")  # type: ignore[arg-type]
        touched = set(changed)
        result["changed_sources"] = len(changed)
        result["expected_patched"] = sorted(
            f"{PLURALS[kind]}/{ns}/{name}"
            for (kind, ns, name), refs in cluster.references.items()
            if touched.intersection(refs)
        )
        result["change"] = {}
        for tool in TOOLS:
            result["change"][tool] = run(tool, qps0 if tool == "kube-rehash" else None)
            if tool == "kube-rehash":  # before the other tools roll the same workloads again
                result["after_change"] = passes_after_change(
                    lambda: measure("kube-rehash", qps0, phases["kube-rehash"]),  # type: ignore[arg-type]
                    phases["kube-rehash"],
                    log=log,
                )
        for tool, r in result["change"].items():
            log(f"  real change {tool}: {r['wall_s']:.2f}s, {r['requests']} requests, {r['writes']} writes")
        if defaults:
            # A first install at the shipped defaults (no config file) needs workloads nobody adopted yet:
            # put them back as generated, then one first pass and one steady pass.
            load.replace_all(workloads)
            result["defaults_settle_s"] = settle(load)
            result["defaults"] = {"first": run("kube-rehash")}
            result["defaults"]["steady"] = run("kube-rehash")
            # A second change (another 5% of the sources) at the shipped defaults, and the passes after it.
            again = sorted(
                rng.sample(cluster.referenced, max(1, round(change_fraction * len(cluster.referenced))))
            )
            change_sources(phases["floor"], again, f"real-defaults-{time.time_ns()}")  # type: ignore[arg-type]
            result["defaults"]["change"] = run("kube-rehash")
            result["defaults_after_change"] = passes_after_change(
                lambda: measure("kube-rehash", argv["kube-rehash"], phases["kube-rehash"]),  # type: ignore[arg-type]
                phases["kube-rehash"],
                log=log,
                label=" (defaults)",
            )
            result["defaults_after_change"]["changed_sources"] = len(again)
            for label in ("first", "steady", "change"):
                r = result["defaults"][label]
                log(f"  real defaults {label}: {r['wall_s']:.1f}s, {r['requests']} requests")
    finally:
        cleanup(load, [o["metadata"]["name"] for o in namespaces])
        session.close()
    result["seconds"] = round(time.monotonic() - started_at, 1)
    return result


def passes_after_change(
    measure_pass: Any, phase: AuditPhase, *, log: Any = print, label: str = ""
) -> dict[str, Any]:
    """The passes after a change until every rollout it started is complete (benchmarks/after_change.py),
    counted from the audit log. The workloads have no replicas: the controllers finish a rollout within
    about a second, so a pass every `ROLLOUT_SECONDS` + 0.5 s."""

    def one() -> dict[str, Any]:
        measured = measure_pass()
        return pass_row(measured, row(measured, phase))

    return until_complete(one, pause=ROLLOUT_SECONDS + 0.5, log=log, label=f" (real{label})")


def cleanup(load: Loader, namespaces: list[str]) -> None:
    """Delete what the scenario created (the namespace controller empties the namespaces)."""
    for name in [*namespaces, BENCH_NS]:
        with contextlib.suppress(RuntimeError):
            load.send("DELETE", f"/api/v1/namespaces/{name}")
    for tool in TOOLS:
        with contextlib.suppress(RuntimeError):
            load.send("DELETE", f"/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/{BENCH_NS}-{tool}")
