"""`make cluster` (`python -m tests.cluster`): run the real test control plane for people until Ctrl-C.

Why: to try kube-rehash and kubectl against a real kube-apiserver with controllers and fake nodes, the same
one tests/real uses, without Docker or a kind/minikube install.
"""

from __future__ import annotations

import argparse
import shutil
import signal
import sys
import threading
from pathlib import Path
from types import FrameType

from tests.cluster.controlplane import REPO, ControlPlaneError, binary_dir, control_plane, missing_binaries

KWOK_NOTE = (
    "The nodes are kwok's: they run no containers. Pods are scheduled and reported Running (a Job's pods\n"
    "Succeeded), but no process starts: a Job made from a CronJob (kube-rehash's own included) shows\n"
    "Complete within seconds and nothing ran. Run kube-rehash from this host instead, as above (plan, run,\n"
    "explain with --kubeconfig); its rollouts show as new ReplicaSets (kubectl get rs)."
)
"""kwok nodes run no containers (checked with kwok v0.8.0): said at start-up so a Complete Job is not read as
a pass that ran."""


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.cluster", description=__doc__.splitlines()[0])
    parser.add_argument(
        "--kubeconfig-out",
        type=Path,
        default=REPO / ".cache" / "cluster" / "kubeconfig",
        help="where to write the admin kubeconfig (default: .cache/cluster/kubeconfig)",
    )
    parser.add_argument("--nodes", type=int, default=3, help="fake (kwok) nodes to create (default 3)")
    args = parser.parse_args()
    if missing := missing_binaries():
        print(
            f"missing in {binary_dir()}: {', '.join(missing)}; run `make control-plane` first",
            file=sys.stderr,
        )
        return 2

    stop = threading.Event()

    def on_signal(signum: int, frame: FrameType | None) -> None:
        stop.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    try:
        with control_plane(nodes=args.nodes) as cp:
            args.kubeconfig_out.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(cp.kubeconfig, args.kubeconfig_out)
            args.kubeconfig_out.chmod(0o600)
            kc = args.kubeconfig_out
            rel = kc.relative_to(REPO) if kc.is_relative_to(REPO) else kc
            version = cp.version()["gitVersion"]
            print(
                f"Kubernetes {version} at {cp.server}, kwok nodes: {', '.join(cp.nodes)}.\n"
                f"Admin kubeconfig: {rel}\n"
                f"Component logs and the audit log: {cp.workdir}\n\n"
                f"  export KUBECONFIG={kc}\n"
                f"  .venv/bin/kubectl get nodes\n"
                f"  .venv/bin/kubectl create configmap app --from-literal=color=blue\n"
                f"  .venv/bin/kubectl create deployment web --image=nginx && "
                f".venv/bin/kubectl set env deployment/web --from=configmap/app && "
                f".venv/bin/kubectl annotate deployment web kube-rehash.io/watch=true\n"
                f"  .venv/bin/kube-rehash run --kubeconfig {rel}\n\n"
                f"{KWOK_NOTE}\n\n"
                "Ctrl-C stops the cluster and deletes its data.",
                flush=True,
            )
            while not stop.wait(1.0):
                for component in cp.components:
                    component.check()
    except ControlPlaneError as exc:
        print(f"control plane failed: {exc}", file=sys.stderr)
        return 1
    finally:
        args.kubeconfig_out.unlink(missing_ok=True)
    print("control plane stopped", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
