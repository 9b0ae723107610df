"""A mass change under a tight budget, walked by the streamed pass, on the real control plane with its
controllers (`python -m benchmarks.real_budget --out FILE`).

Why: the simulator's budget tests run streamed passes (tests/e2e/test_budget.py), and the real server's run
held ones (tests/e2e/test_progress.py: the shared real server scopes every pass with `-n`, and a pass given
namespaces always holds its listing). Here the control plane is this script's alone, so its passes cover the
whole cluster and, with `KUBE_REHASH_STREAM_ABOVE=0`, stream; the deployment controller rolls what they
patch and writes the status they read. Each namespace's Deployments share one Secret, which is rotated in
every namespace at once; then passes at the shipped rate with `--timeout` far too short for the change run
back to back until nothing is pending. Checked, as tests/e2e/test_progress.py checks held passes: every pass
exits 0 and, while rollouts are pending, rolls at least one Deployment; each Deployment rolls exactly once
and gets exactly one new ReplicaSet; no patch is refused (409 or 422). Exit 1 names the checks that failed.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from benchmarks.kubeconfig import session_for
from benchmarks.real import Loader, settle, write_kubeconfig
from tests.cluster.controlplane import ControlPlane, control_plane

MAX_PASSES = 40
# `python -m reconcile`, not the venv's console script: the tree on PYTHONPATH is the one measured.
KUBE_REHASH = [sys.executable, "-m", "reconcile"]


def seed(cp: ControlPlane, namespaces: int, per_namespace: int) -> list[tuple[str, str]]:
    """Namespaces of Deployments (no replicas) that each read their own ConfigMap and a shared Secret."""
    deployments = []
    for n in range(namespaces):
        ns = f"mass-{n}"
        cp.api("POST", "/api/v1/namespaces", {"metadata": {"name": ns}})
        secret = {"metadata": {"name": "shared"}, "stringData": {"p": "x"}}
        cp.api("POST", f"/api/v1/namespaces/{ns}/secrets", secret)
        for i in range(per_namespace):
            config = {"metadata": {"name": f"cfg-{i}"}, "data": {"v": "1"}}
            cp.api("POST", f"/api/v1/namespaces/{ns}/configmaps", config)
            env_from = [{"configMapRef": {"name": f"cfg-{i}"}}, {"secretRef": {"name": "shared"}}]
            labels = {"app": f"app-{i}"}
            cp.api(
                "POST",
                f"/apis/apps/v1/namespaces/{ns}/deployments",
                {
                    "metadata": {"name": f"app-{i}", "annotations": {"kube-rehash.io/watch": "true"}},
                    "spec": {
                        "replicas": 0,
                        "selector": {"matchLabels": labels},
                        "template": {
                            "metadata": {"labels": labels},
                            "spec": {"containers": [{"name": "app", "image": "app:1", "envFrom": env_from}]},
                        },
                    },
                },
            )
            deployments.append((ns, f"app-{i}"))
    return deployments


def run_pass(cp: ControlPlane, timeout: str) -> dict[str, Any]:
    """One whole-cluster pass, streamed, at the shipped defaults but for `--timeout`."""
    env = {**os.environ, "KUBE_REHASH_STREAM_ABOVE": "0"}
    argv = [*KUBE_REHASH, "run", "-o", "json", "--kubeconfig", str(cp.kubeconfig), "--timeout", timeout]
    started = time.monotonic()
    done = subprocess.run(argv, capture_output=True, text=True, env=env, check=False, timeout=300)
    wall = round(time.monotonic() - started, 2)
    report = json.loads(done.stdout) if done.stdout.strip() else {}
    patches = report.get("api", {}).get("requests", {}).get("PATCH", {})
    return {
        "exit": done.returncode,
        "wall_s": wall,
        "summary": report.get("summary", {}),
        "budget_exhausted": report.get("budget_exhausted"),
        "requests": report.get("api", {}).get("requests_total"),
        "refused": sum(n for status, n in patches.items() if status in ("409", "422")),
        "rolled": [
            f"{w['namespace']}/{w['name']}" for w in report.get("workloads", []) if w["action"] == "rollout"
        ],
        "stderr_tail": done.stderr.strip().splitlines()[-1:] if done.returncode else [],
    }


def converge(cp: ControlPlane, timeout: str, log: Any) -> list[dict[str, Any]]:
    """Passes back to back until one leaves nothing pending."""
    passes = []
    for _ in range(MAX_PASSES):
        result = run_pass(cp, timeout)
        passes.append(result)
        summary = result["summary"]
        log(
            f"  pass {len(passes)}: exit {result['exit']}, {result['wall_s']} s, "
            f"{result['requests']} requests, {summary}"
        )
        if result["exit"] != 0 or not (
            summary.get("deferred") or summary.get("adopt") or summary.get("rollout")
        ):
            break
    return passes


def replica_sets(cp: ControlPlane, namespaces: int) -> Counter[str]:
    """ReplicaSets per Deployment ("ns/name"), by owner."""
    owned: Counter[str] = Counter()
    for n in range(namespaces):
        items = cp.api("GET", f"/apis/apps/v1/namespaces/mass-{n}/replicasets")["items"]
        for item in items:
            for owner in item["metadata"].get("ownerReferences", []):
                owned[f"mass-{n}/{owner['name']}"] += 1
    return owned


def loader_for(cp: ControlPlane, workdir: Path) -> Loader:
    """The real-server benchmark's admin loader, so its `settle` (every workload's spec observed by its
    controller) is the one this script waits with."""
    token = cp.tokens["admin"]
    admin = write_kubeconfig(workdir / "admin.kubeconfig", cp.server, Path(cp.ca), token, "admin")
    session, server = session_for(admin)
    return Loader(session, server)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--namespaces", type=int, default=4)
    parser.add_argument("--per-namespace", type=int, default=40)
    parser.add_argument("--timeout", default="5", help="each pass's --timeout (seconds)")
    parser.add_argument(
        "--out", type=Path, default=Path(tempfile.gettempdir()) / "kube-rehash-real-budget.json"
    )
    args = parser.parse_args(argv)
    log = lambda line: print(line, flush=True)  # noqa: E731
    with control_plane() as cp, tempfile.TemporaryDirectory(prefix="kube-rehash-real-budget-") as tmp:
        started = time.monotonic()
        load = loader_for(cp, Path(tmp))
        deployments = seed(cp, args.namespaces, args.per_namespace)
        total = len(deployments)
        log(
            f"[real budget] {cp.version().get('gitVersion')}: {total} Deployments "
            f"in {args.namespaces} namespaces"
        )
        adopting = converge(cp, args.timeout, log)
        settle(load, timeout=180.0)
        before = replica_sets(cp, args.namespaces)
        for n in range(args.namespaces):
            cp.api(
                "PATCH",
                f"/api/v1/namespaces/mass-{n}/secrets/shared",
                {"stringData": {"p": "rotated"}},
                content_type="application/merge-patch+json",
            )
        log("[real budget] the shared Secret rotated in every namespace")
        passes = converge(cp, args.timeout, log)
        settle(load, timeout=180.0)
        after = replica_sets(cp, args.namespaces)
    counts = [len(p["rolled"]) for p in passes]
    each = Counter(name for p in passes for name in p["rolled"])
    pending = [i for i in range(len(counts)) if sum(counts[:i]) < total]
    new_sets = {f"{ns}/{name}": after[f"{ns}/{name}"] - before[f"{ns}/{name}"] for ns, name in deployments}
    checks = {
        "every pass exited 0": all(p["exit"] == 0 for p in adopting + passes),
        "the first install converged": not (
            adopting[-1]["summary"].get("adopt") or adopting[-1]["summary"].get("deferred")
        ),
        "every Deployment rolled": sum(counts) == total and len(each) == total,
        "a pass with rollouts pending rolled at least one": all(counts[i] > 0 for i in pending),
        "each Deployment rolled exactly once": set(each.values()) <= {1},
        "exactly one new ReplicaSet each": set(new_sets.values()) == {1},
        "no patch refused (409/422)": sum(p["refused"] for p in adopting + passes) == 0,
    }
    result = {
        "command": "python -m benchmarks.real_budget " + " ".join(sys.argv[1:] if argv is None else argv),
        "deployments": total,
        "timeout": args.timeout,
        "adopting_passes": [{k: v for k, v in p.items() if k != "rolled"} for p in adopting],
        "passes": [
            {**{k: v for k, v in p.items() if k != "rolled"}, "rolled": len(p["rolled"])} for p in passes
        ],
        "rolled_per_pass": counts,
        "checks": checks,
        "seconds": round(time.monotonic() - started, 1),
    }
    args.out.write_text(json.dumps(result, indent=1) + "\n")
    for name, ok in checks.items():
        log(f"  {'ok' if ok else 'FAILED'}: {name}")
    log(f"rolled per pass: {counts}; written: {args.out}")
    return 0 if all(checks.values()) else 1


if __name__ == "__main__":
    raise SystemExit(main())
