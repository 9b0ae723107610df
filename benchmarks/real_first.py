"""A first pass's peak RSS on the real control plane beside the simulator, and what kube-apiserver says.

`python -m benchmarks.real_first --shape independent --scale 0.2 --compact-every 10 --out /tmp/real.json`
starts the control plane of tests/cluster (kube-apiserver, etcd, controllers, kwok), loads the named shape
(benchmarks/shapes.py) scaled by `--scale` as benchmarks/real.py does (workloads that run no pod), and:

1. probes the server's answers on the properties the simulator can vary (rehash_simulator/answers.py): how
   many objects a page holds for its `limit`, with and without a field selector; whether a page says
   `remainingItemCount`; how a gzipped list is framed (Content-Length or chunked); the order of a
   cluster-wide list; and how long a continue token lives (kube-apiserver's `--etcd-compaction-interval`);
2. runs the first pass as a server dry run (`--dry-run server`, `qps: 0`, as benchmarks/answers.py does),
   `--rounds` times, with its peak RSS (`VmHWM`) and the expired continue tokens it logged (`-v`); then the
   real first install (its writes stored, so the watch cache moves on as it does in a real install) at
   `--slow-qps` (0: unlimited), with etcd compacted every `--compact-every` seconds while it runs, as
   kube-apiserver's own compactor does every 5 minutes (0: only that);
3. with `--simulator`, serves the same cluster from the simulator, once per answer variant named there
   (benchmarks/answers.py), runs the same dry-run passes, then the same first install with continue tokens
   that live `--compact-every` seconds.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import asdict
from pathlib import Path
from typing import Any

import requests

from benchmarks.answers import VARIANTS, first_pass
from benchmarks.generate import generate, generate_file
from benchmarks.harness import SimulatorProcess, measure
from benchmarks.kubeconfig import session_for
from benchmarks.memory import rehash_row
from benchmarks.real import BENCH_NS, Loader, cheap, service_account_token, settle, write_kubeconfig
from benchmarks.shapes import named, scaled_down

SECRETS = "/api/v1/secrets"
NOT_HELM = "type!=helm.sh/release.v1"


def page(session: requests.Session, url: str, **params: str) -> dict[str, Any]:
    """One list page as the pass asks for it (gzip accepted), with how it was framed."""
    response = session.get(url, params=params, headers={"Accept-Encoding": "gzip"}, stream=True)
    response.raise_for_status()
    body = response.json()
    meta = body.get("metadata") or {}
    return {
        "params": params,
        "items": len(body.get("items") or []),
        "continue": bool(meta.get("continue")),
        "continue_length": len(meta.get("continue") or ""),
        "remainingItemCount": meta.get("remainingItemCount"),
        "content_length": response.headers.get("Content-Length"),
        "transfer_encoding": response.headers.get("Transfer-Encoding"),
        "content_encoding": response.headers.get("Content-Encoding"),
        "first": [f"{i['metadata'].get('namespace')}/{i['metadata']['name']}" for i in body["items"][:3]],
    }


def probe(session: requests.Session, server: str) -> dict[str, Any]:
    """What the server answers on each property answers.py varies (see the module docstring)."""
    found: dict[str, Any] = {}
    for name, path in (("configmaps", "/api/v1/configmaps"), ("deployments", "/apis/apps/v1/deployments")):
        found[f"{name} limit 500"] = page(session, server + path, limit="500")
    found["secrets limit 500, Helm left out"] = page(
        session, server + SECRETS, limit="500", fieldSelector=NOT_HELM
    )
    found["secrets limit 7, Helm left out"] = page(
        session, server + SECRETS, limit="7", fieldSelector=NOT_HELM
    )
    found["secrets limit 500, only Helm"] = page(
        session, server + SECRETS, limit="500", fieldSelector="type=helm.sh/release.v1"
    )
    first = session.get(server + "/apis/apps/v1/deployments", params={"limit": "50"}).json()
    names = [f"{i['metadata']['namespace']}/{i['metadata']['name']}" for i in first["items"]]
    found["deployments in key order"] = names == sorted(names)
    found["token"] = token_lifetime(session, server)
    return found


def token_lifetime(session: requests.Session, server: str, *, wait: float = 330.0) -> dict[str, Any]:
    """Whether a continue token still serves after `wait` seconds (kube-apiserver compacts every 5
    minutes by default, and a token of a compacted revision answers 410)."""
    url = server + "/api/v1/configmaps"
    token = session.get(url, params={"limit": "10"}).json()["metadata"].get("continue")
    time.sleep(wait)
    later = session.get(url, params={"limit": "10", "continue": token})
    return {"after_s": wait, "status": later.status_code}


def load_real(cp: Any, shape: Any, workdir: Path) -> tuple[str, Loader]:
    """Load `shape` into the control plane; a kubeconfig of a cluster-admin ServiceAccount for the pass."""
    admin = write_kubeconfig(
        workdir / "admin.kubeconfig", cp.server, Path(cp.ca), cp.tokens["admin"], "admin"
    )
    session, server = session_for(admin, pool=8)
    load = Loader(session, server)
    load.send("POST", "/api/v1/namespaces", {"metadata": {"name": BENCH_NS}})
    token = service_account_token(load, "kube-rehash")
    user = f"system:serviceaccount:{BENCH_NS}:kube-rehash"
    kubeconfig = write_kubeconfig(workdir / "rehash.kubeconfig", server, Path(cp.ca), token, user)
    objects = [cheap(o) for o in generate(shape).objects]
    load.create_all([o for o in objects if o["kind"] == "Namespace"])
    load.create_all([o for o in objects if o["kind"] != "Namespace"])
    settle(load, timeout=600)
    return str(kubeconfig), load


class RealServer:
    """What `harness.measure` needs of a server (`mark()`), without a request log: requests come from the
    pass's own report (`api.requests_total`)."""

    def mark(self) -> list[dict[str, Any]]:
        return []


def real_passes(
    shape: Any, workdir: Path, *, rounds: int, slow_qps: float, compact_every: float, log: Any = print
) -> dict[str, Any]:
    """`rounds` first passes as server dry runs at `qps: 0`, then one real first install (its writes are
    stored, as a first install's are: the watch cache sees them) at `slow_qps` (0: unlimited), with etcd
    compacted every `compact_every` seconds while it runs (0: only by kube-apiserver's own compactor, every
    5 minutes); then the probe."""
    from tests.cluster.controlplane import control_plane

    result: dict[str, Any] = {"runs": []}
    config = workdir / "qps0.yaml"
    config.write_text("qps: 0\ntimeout: 1800\n")
    with control_plane() as cp:
        result["server"] = cp.version().get("gitVersion")
        started = time.monotonic()
        kubeconfig, load = load_real(cp, shape, workdir)
        result["load_s"] = round(time.monotonic() - started, 1)
        log(f"[real] {result['server']}: loaded in {result['load_s']:.0f}s")
        argv = [sys.executable, "-m", "reconcile", "run", "-o", "json", "-v", "--kubeconfig", kubeconfig]
        for round_ in range(rounds):
            command = [*argv, "--config", str(config), "--dry-run", "server"]
            result["runs"].append(real_row(measure("kube-rehash", command, RealServer())))  # type: ignore[arg-type]
            log(f"  real round {round_ + 1}: {result['runs'][-1]}")
        slow = workdir / "slow.yaml"
        slow.write_text(f"qps: {slow_qps}\ntimeout: 1800\n")
        with compacting(cp, compact_every) as compactions:
            install = measure("kube-rehash", [*argv, "--config", str(slow)], RealServer())  # type: ignore[arg-type]
        result["install"] = {**real_row(install), "qps": slow_qps, "compactions": len(compactions)}
        log(f"  real first install at qps {slow_qps}, {len(compactions)} compactions: {result['install']}")
        result["probe"] = probe(load.session, load.server)
        log(f"  probe: {json.dumps(result['probe'], indent=1)}")
    return result


@contextlib.contextmanager
def compacting(cp: Any, every: float) -> Iterator[list[int]]:
    """etcd compacted to its current revision every `every` seconds (0: never) while the block runs; the
    revisions compacted to."""
    done, revisions = threading.Event(), []

    def run() -> None:
        while every and not done.wait(every):
            revisions.append(cp.compact_etcd())

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    try:
        yield revisions
    finally:
        done.set()
        thread.join()


def real_row(run: Any) -> dict[str, Any]:
    """The pass's row, with the requests it counted itself and the expired tokens it logged."""
    row = rehash_row(run)
    row["api"] = json.loads(run.stdout).get("api")
    row["expired_tokens"] = run.stderr.count("list continue token expired")
    return {k: v for k, v in row.items() if k not in ("bytes_by_resource", "by_method")}


def simulated_passes(
    shape: Any, workdir: Path, variants: list[str], *, rounds: int, slow_qps: float, ttl: float
) -> dict[str, Any]:
    """The same first passes on the simulator serving the same cluster, per answer variant, in rounds; then
    the first install at `slow_qps` with continue tokens that live `ttl` seconds (0: the simulator's own,
    300 s), as on the real server."""
    runs: dict[str, Any] = {}
    written = generate_file(shape, workdir / "cluster.json")
    config = workdir / "qps0.yaml"
    with SimulatorProcess(written.path, workdir) as sim:
        for round_ in range(rounds):
            for name in variants:
                sim.set_answers(VARIANTS[name])
                row = first_pass(sim, config, extra=[], env={})
                runs.setdefault(name, []).append(row)
                print(f"  simulator {name} round {round_ + 1}: {row['rss_mb']} MiB, {row['wall_s']:.1f}s")
        sim.set_answers({"continueTtl": ttl} if ttl else {})
        slow = workdir / "slow.yaml"
        slow.write_text(f"qps: {slow_qps}\ntimeout: 1800\n")
        argv = [sys.executable, "-m", "reconcile", "run", "-o", "json", "-v"]
        command = [*argv, "--kubeconfig", str(sim.kubeconfig), "--config", str(slow)]
        runs["install"] = {**real_row(measure("kube-rehash", command, sim)), "qps": slow_qps, "ttl": ttl}
        print(f"  simulator first install at qps {slow_qps}: {runs['install']}")
    return runs


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.real_first", description=__doc__)
    parser.add_argument("--shape", default="independent")
    parser.add_argument("--scale", type=float, default=0.3)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument(
        "--simulator", default="simulator", help="answer variants for the simulator (or none)"
    )
    parser.add_argument("--slow-qps", type=float, default=0, help="the real first install's rate (0: none)")
    parser.add_argument(
        "--compact-every", type=float, default=0, help="compact etcd this often during the install (s)"
    )
    parser.add_argument("--out", type=Path, default=Path("/tmp/kube-rehash-real-first.json"))
    parser.add_argument("--workdir", type=Path, default=None)
    args = parser.parse_args(argv)
    shape = scaled_down(named(args.shape), args.scale)
    result: dict[str, Any] = {"shape": asdict(shape), "scale": args.scale, "simulator": {}}
    with tempfile.TemporaryDirectory(prefix="kube-rehash-real-first-", dir=args.workdir) as tmp:
        workdir = Path(tmp)
        result["real"] = real_passes(
            shape, workdir, rounds=args.rounds, slow_qps=args.slow_qps, compact_every=args.compact_every
        )
        args.out.write_text(json.dumps(result, indent=1) + "\n")
        variants = [v for v in args.simulator.split(",") if v and v != "none"]
        if variants:
            result["simulator"] = simulated_passes(
                shape, workdir, variants, rounds=args.rounds, slow_qps=args.slow_qps, ttl=args.compact_every
            )
            args.out.write_text(json.dumps(result, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
