"""`kube-rehash demo` and `kube-rehash simulate`: the tool on the embedded API simulator, no cluster needed.

The demo seeds a small realistic app, runs real passes over HTTPS with a kubeconfig (the same code
path as in a cluster), changes configuration between passes and says in plain words what happened.
The simulator is its own distribution (the `kube-rehash[simulator]` extra), imported only here and only
when one of these commands runs, so that `reconcile` imports without it.
"""

from __future__ import annotations

import base64
import signal
import tempfile
import textwrap
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from reconcile.errors import EXIT_FAILED, EXIT_OK, ConfigError
from reconcile.settings.table import Settings

if TYPE_CHECKING:
    from rehash_simulator import Simulator

NS = "shop"
SIMULATOR_EXTRA = "kube-rehash[simulator]"
# What is true of every rollout started on the simulator as `demo` and `simulate` run it: no controller
# moves a workload's status after its template changes (the simulator's rollout controller is off there) and
# no pods or ReplicaSets exist, so a rollout kube-rehash starts reads `progressing` until the process ends.
PROGRESSING_NOTE = (
    "On the simulator a rollout stays `progressing`: nothing runs pods there and no controller updates\n"
    "a workload's status after its template changes; on a cluster it completes as the new pods start."
)


def simulator_class(command: str) -> type[Simulator]:
    """The API simulator class; without the extra, a usage error (exit 2) that says what to install."""
    try:
        from rehash_simulator import Simulator
    except ModuleNotFoundError as exc:
        missing = "" if exc.name == "rehash_simulator" else f" (no module named {exc.name!r})"
        raise ConfigError(
            f"{command} needs the API simulator: pip install '{SIMULATOR_EXTRA}'{missing}"
        ) from exc
    return Simulator


def container(name: str, **extra: Any) -> dict[str, Any]:
    return {"name": name, "image": f"example.com/{name}:1.0", **extra}


def workload(kind: str, name: str, annotations: dict[str, str], pod_spec: dict[str, Any]) -> dict[str, Any]:
    labels = {"app": name}
    template = {"metadata": {"labels": labels}, "spec": pod_spec}
    api = "batch/v1" if kind == "CronJob" else "apps/v1"
    if kind == "CronJob":
        spec: dict[str, Any] = {"schedule": "0 * * * *", "jobTemplate": {"spec": {"template": template}}}
        pod_spec.setdefault("restartPolicy", "OnFailure")
    else:
        spec = {"replicas": 2, "selector": {"matchLabels": labels}, "template": template}
    if kind == "StatefulSet":
        spec["serviceName"] = name
    meta = {"name": name, "namespace": NS, "annotations": annotations}
    return {"apiVersion": api, "kind": kind, "metadata": meta, "spec": spec}


def demo_objects() -> list[dict[str, Any]]:
    """A web Deployment (env key, envFrom, mounted file), a database StatefulSet (Secret), a CronJob."""
    return [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}},
        *demo_sources(),
        *demo_workloads(),
    ]


def demo_sources() -> list[dict[str, Any]]:
    """The ConfigMaps and the Secret the demo's workloads read (the password is a made-up demo value)."""
    secret_value = base64.b64encode(b"demo-password-not-real").decode()
    return [
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "app-config", "namespace": NS},
            "data": {"LOG_LEVEL": "info", "FEATURE_SEARCH": "off", "REPORT_FORMAT": "pdf"},
        },
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "nginx", "namespace": NS},
            "data": {"nginx.conf": "server { listen 8080; }\n"},
        },
        {
            "apiVersion": "v1",
            "kind": "Secret",
            "type": "Opaque",
            "metadata": {"name": "db-credentials", "namespace": NS},
            "data": {"password": secret_value},
        },
    ]


def demo_workloads() -> list[dict[str, Any]]:
    """Three opted-in workloads, one per way of reading a source, and one that did not opt in."""
    watch = {"kube-rehash.io/watch": "true"}
    return [
        workload(
            "Deployment",
            "web",
            watch,
            {
                "containers": [
                    container(
                        "web",
                        env=[
                            {
                                "name": "LOG_LEVEL",
                                "valueFrom": {"configMapKeyRef": {"name": "app-config", "key": "LOG_LEVEL"}},
                            },
                            {
                                "name": "FEATURE_SEARCH",
                                "valueFrom": {
                                    "configMapKeyRef": {"name": "app-config", "key": "FEATURE_SEARCH"}
                                },
                            },
                        ],
                        volumeMounts=[{"name": "nginx", "mountPath": "/etc/nginx"}],
                    )
                ],
                "volumes": [{"name": "nginx", "configMap": {"name": "nginx"}}],
            },
        ),
        workload(
            "StatefulSet",
            "db",
            watch,
            {
                "containers": [
                    container(
                        "db",
                        env=[
                            {
                                "name": "PASSWORD",
                                "valueFrom": {"secretKeyRef": {"name": "db-credentials", "key": "password"}},
                            }
                        ],
                    )
                ]
            },
        ),
        workload(
            "CronJob",
            "nightly-report",
            watch,
            {"containers": [container("report", envFrom=[{"configMapRef": {"name": "app-config"}}])]},
        ),
        workload("Deployment", "legacy", {}, {"containers": [container("legacy")]}),
    ]


def seed_demo(sim: Simulator) -> None:
    """The demo app, dressed as a real cluster holds it (managedFields of several managers, kubectl's
    last-applied annotation, Helm's labels, workload status: rehash_simulator/dress.py)."""
    from rehash_simulator.dress import dress

    sim.store.create_many(dress(obj, seed=1) for obj in demo_objects())


def say(text: str) -> None:
    print(f"\n== {text}")


def run_demo(*, quiet: bool = False) -> int:
    """Four passes with narration; exit 0 when each pass did what the narration promised."""
    from reconcile.cli.connect import connect
    from reconcile.output.report import Report
    from reconcile.pipeline.run import run_pass

    simulator = simulator_class("demo")
    with tempfile.TemporaryDirectory(prefix="kube-rehash-demo-") as tmp, simulator().start() as sim:
        kubeconfig = sim.write_kubeconfig(Path(tmp) / "kubeconfig")
        seed_demo(sim)
        settings = Settings.of(kubeconfig=str(kubeconfig), timeout=60.0)
        say(f"Started the embedded API simulator at {sim.url} with a small app in namespace '{NS}':")
        print("   Deployment web (two keys of ConfigMap app-config as env vars, ConfigMap nginx as a file),")
        print("   StatefulSet db (key 'password' of Secret db-credentials), CronJob nightly-report")
        print("   (all of ConfigMap app-config via envFrom), and Deployment legacy, which did not opt in.")

        def one_pass(expect: dict[str, str]) -> bool:
            sim.log.clear()
            client = connect(settings)
            try:
                report = Report(run_pass(settings, client))
            finally:
                client.close()
            if not quiet:
                print(report.render_text())
            writes = [e for e in sim.log.writes() if e.method == "PATCH"]
            print(f"   ({len(writes)} workload patch(es) sent)")
            got = {r.name: r.action for r in report.rows}
            ok = all(got.get(name) == action for name, action in expect.items())
            if not ok:
                print(f"   UNEXPECTED: wanted {expect}, got {got}")
            return ok

        say("Pass 1: first sight. kube-rehash records each workload's config hash and restarts nothing.")
        ok = one_pass({"web": "adopt", "db": "adopt", "nightly-report": "adopt"})

        say("Someone changes LOG_LEVEL in ConfigMap app-config (debug instead of info).")
        sim.store.patch_merge("configmaps", NS, "app-config", {"data": {"LOG_LEVEL": "debug"}})
        say("Pass 2: web reads that key, so it rolls; the CronJob's job template records the new hash")
        print(
            "   (its next Job picks it up; nothing restarts); db does not use app-config and stays in sync."
        )
        ok &= one_pass({"web": "rollout", "db": "in-sync", "nightly-report": "rollout"})
        print(textwrap.indent(f"({PROGRESSING_NOTE})", "   "))

        say("Someone changes REPORT_FORMAT, a key only the CronJob reads (web reads two other keys).")
        sim.store.patch_merge("configmaps", NS, "app-config", {"data": {"REPORT_FORMAT": "html"}})
        say("Pass 3: per-key hashing keeps web running (its two keys are unchanged: only its bookkeeping")
        print("   of the ConfigMap's version is refreshed, no restart); the CronJob's template is updated.")
        ok &= one_pass({"web": "refresh", "db": "in-sync", "nightly-report": "rollout"})

        say("Pass 4: nothing changed. A steady-state pass reads only metadata and writes nothing.")
        ok &= one_pass({"web": "in-sync", "db": "in-sync", "nightly-report": "in-sync"})

        web = sim.store.get("deployments", NS, "web")
        template_hash = web["spec"]["template"]["metadata"]["annotations"]["kube-rehash.io/config-hash"]
        say(f"web's pod template now carries kube-rehash.io/config-hash={template_hash}.")
        print("   Try it yourself: `kube-rehash simulate --seed-demo`, then use kubectl and kube-rehash")
        print("   with the kubeconfig it writes.")
    return EXIT_OK if ok else EXIT_FAILED


def serve_simulator(
    kubeconfig_out: Path, *, port: int = 0, seed_demo_app: bool = False, unsorted_lists: bool = False
) -> int:
    """Serve the simulator until SIGINT/SIGTERM, with a kubeconfig (CA data and a token) written for it."""
    simulator = simulator_class("simulate")
    stopped = threading.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: stopped.set())
    try:
        sim = simulator(port=port).start()
    except OSError as exc:
        raise ConfigError(f"simulate: cannot listen on 127.0.0.1:{port}: {exc.strerror or exc}") from None
    with sim:
        sim.store.unsorted_lists = unsorted_lists
        if seed_demo_app:
            seed_demo(sim)
        path = sim.write_kubeconfig(kubeconfig_out)
        print(f"API simulator serving at {sim.url}")
        print(f"kubeconfig written to {path}; for example:")
        print(f"  kubectl --kubeconfig {path} get deploy -A")
        print(f"  kube-rehash plan --kubeconfig {path}")
        print("kubectl create, apply, patch, annotate, set env and delete work against it.")
        print(PROGRESSING_NOTE)
        print("Ctrl-C stops it.", flush=True)
        stopped.wait()
    return EXIT_OK
