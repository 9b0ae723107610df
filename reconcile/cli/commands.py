"""The `kube-rehash` command: parses flags, builds settings once, runs a command, maps failures to exit codes.

Exit codes are the contract's: 0 done, 1 something failed (or, with --fail-on-stalled, a rollout we
started is stalled), 2 usage/configuration, 3 `plan --detailed-exitcode` with pending rollouts, 4 API
unreachable or credentials rejected.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import signal
import sys
import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from types import FrameType
from typing import Any, TextIO

from reconcile import __version__
from reconcile.cli.allocator import tune_allocator
from reconcile.cli.collector import tune_collector
from reconcile.cli.connect import connect, read_hash_key
from reconcile.config.settings import CONFIG_ENV, check_pass_scope, load_settings
from reconcile.errors import (
    EXIT_FAILED,
    EXIT_OK,
    EXIT_PENDING,
    EXIT_USAGE,
    ConfigError,
    NoContact,
    NotFound,
    RehashError,
)
from reconcile.model.choices import DryRun, Format
from reconcile.output.logs import setup_logging
from reconcile.output.report import Report
from reconcile.pipeline.budget import Budget
from reconcile.settings.rows import Commands
from reconcile.settings.table import FLAGS, Settings

log = logging.getLogger("kube-rehash")


class Parser(argparse.ArgumentParser):
    """argparse that exits 2 with a one-line message, as the contract says for usage errors."""

    def error(self, message: str) -> Any:
        command = "kubectl rehash" if self.prog.startswith("kubectl rehash") else "kube-rehash"
        self.exit(EXIT_USAGE, f"{command}: error: {message} (see --help)\n")


def _add_setting_flags(
    p: argparse.ArgumentParser, commands: Commands, helps: Mapping[str, str] | None = None
) -> None:
    """The settings table's flags (reconcile/settings/) that these commands take, in --help order; `helps`:
    a command's own words for a setting's flag."""
    for row in FLAGS:
        flag = row.flag
        if flag is None or flag.commands != commands:
            continue
        text = (helps or {}).get(row.name, flag.help)
        options: dict[str, Any] = {"dest": row.name, "default": argparse.SUPPRESS, "help": text}
        if row.choices is not None and flag.action is None:
            options["choices"] = row.choices
        extra = {"metavar": flag.metavar, "type": flag.type, "action": flag.action, "nargs": flag.nargs}
        options.update({k: value for k, value in extra.items() if value is not None})
        if flag.const is not None:
            options["const"] = flag.const
        p.add_argument(*flag.names, **options)


def add_common(p: argparse.ArgumentParser, helps: Mapping[str, str] | None = None) -> None:
    """`--config` (the file itself, not a setting) and the settings' flags of run, plan and explain."""
    p.add_argument(
        "--config",
        metavar="FILE",
        default=argparse.SUPPRESS,
        help=f"YAML configuration file (env {CONFIG_ENV})",
    )
    _add_setting_flags(p, "common", helps)


def add_pass_flags(p: argparse.ArgumentParser) -> None:
    """The settings' flags of run and plan."""
    _add_setting_flags(p, "pass")


def program_name(argv0: str) -> str:
    """`kubectl rehash` when run as the kubectl plugin (kubectl finds `kubectl-rehash` on PATH and passes it
    the arguments after `rehash`), else `kube-rehash`: the usage and errors name the command people typed."""
    return "kubectl rehash" if Path(argv0).name == "kubectl-rehash" else "kube-rehash"


def build_parser(prog: str = "kube-rehash") -> argparse.ArgumentParser:
    parser = Parser(prog=prog, description="Roll workloads whose ConfigMaps or Secrets changed, in one pass.")
    parser.add_argument("--version", action="version", version=f"kube-rehash {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=Parser)
    run = sub.add_parser("run", help="one reconcile pass (what the CronJob runs)")
    add_common(run)
    add_pass_flags(run)
    _add_setting_flags(run, "run")
    plan = sub.add_parser("plan", help="what a pass would do (run --dry-run)")
    add_common(plan)
    add_pass_flags(plan)
    plan.add_argument("--detailed-exitcode", action="store_true", help="exit 3 when rollouts are pending")
    explain = sub.add_parser("explain", help="references, sources, hashes and the decision for one workload")
    add_common(explain, {"namespaces": "the workload's namespace (default: default)"})
    explain.add_argument("target", metavar="KIND/NAME", help="e.g. deployment/web (or: deployment web)")
    explain.add_argument("name", nargs="?", metavar="NAME", help=argparse.SUPPRESS)
    demo = sub.add_parser("demo", help="walk through a few passes on the embedded API simulator")
    demo.add_argument("--quiet", action="store_true", help="only the narration, no reports")
    simulate = sub.add_parser(
        "simulate", help="serve the embedded API simulator and write a kubeconfig for it"
    )
    simulate.add_argument("--kubeconfig-out", metavar="FILE", default="kube-rehash-sim.kubeconfig")
    simulate.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (default: any free port)")
    simulate.add_argument("--seed-demo", action="store_true", help="load the demo's small app")
    simulate.add_argument(
        "--unsorted-lists",
        action="store_true",
        help="list objects out of key order, as some servers do (a client must not rely on it)",
    )
    sub.add_parser("version", help="print the version")
    return parser


def flags_of(args: argparse.Namespace) -> dict[str, object]:
    """The settings fields the user actually gave as flags."""
    given = vars(args)
    return {row.name: given[row.name] for row in FLAGS if row.name in given}


def load(args: argparse.Namespace, **forced: object) -> Settings:
    flags = {**flags_of(args), **forced}
    return load_settings(config_file=getattr(args, "config", None), env=os.environ, flags=flags)


def main(argv: Sequence[str] | None = None) -> int:
    tune_allocator()  # before any thread starts (reconcile/cli/allocator.py)
    args = build_parser(program_name(sys.argv[0])).parse_args(argv)
    setup_logging(Format(getattr(args, "log_format", "text")), getattr(args, "verbosity", 0))
    tune_collector()  # once the modules are imported (reconcile/cli/collector.py)
    try:
        return dispatch(args)
    except NoContact as exc:
        print(f"kube-rehash: {exc.cause}", file=sys.stderr)
        return exc.cause.exit_code
    except RehashError as exc:
        print(f"kube-rehash: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("kube-rehash: interrupted", file=sys.stderr)
        return EXIT_FAILED


def dispatch(args: argparse.Namespace) -> int:
    command: str = args.command
    if command == "version":
        print(f"kube-rehash {__version__}")
        return EXIT_OK
    if command == "demo":
        from reconcile.cli.demo import run_demo

        return run_demo(quiet=args.quiet)
    if command == "simulate":
        from reconcile.cli.demo import serve_simulator

        return serve_simulator(
            Path(args.kubeconfig_out),
            port=args.port,
            seed_demo_app=args.seed_demo,
            unsorted_lists=args.unsorted_lists,
        )
    if command == "explain":
        return cmd_explain(args)
    forced: dict[str, object] = {"dry_run": DryRun.CLIENT} if command == "plan" else {}
    settings = load(args, **forced)
    check_pass_scope(settings)
    setup_logging(settings.output.log_format, settings.output.verbosity)
    return cmd_run(settings, detailed=getattr(args, "detailed_exitcode", False))


def install_stop_handler(stop: threading.Event) -> threading.Event:
    """SIGTERM (a CronJob deadline, a node drain) stops new requests; the report is still printed."""

    def handle(signum: int, _frame: FrameType | None) -> None:
        log.warning("received signal %d: finishing in-flight writes, starting no new ones", signum)
        stop.set()

    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, handle)
    return stop


def progress_printer(settings: Settings) -> Callable[[int, int], None] | None:
    """A progress line on an interactive stderr for big passes; never in a CronJob."""
    if not sys.stderr.isatty() or (settings.output.output is Format.JSON and not sys.stdout.isatty()):
        return None

    def show(done: int, total: int) -> None:
        if total >= 50 and (done % 25 == 0 or done == total):
            end = "\n" if done == total else ""
            print(f"\r  {done}/{total} workloads", end=end, file=sys.stderr, flush=True)

    return show


def cmd_run(settings: Settings, *, detailed: bool = False) -> int:
    from reconcile.pipeline.run import run_pass

    hash_key = read_hash_key(settings)
    budget = Budget(settings.limits.timeout)
    client = connect(settings, budget)
    install_stop_handler(budget.stop)
    try:
        hash_key = read_hash_key(settings, client) if settings.reading.hash_key_secret else hash_key
        report = Report(
            run_pass(settings, client, budget=budget, hash_key=hash_key, progress=progress_printer(settings))
        )
    finally:
        client.close()
    if settings.output.output is Format.JSON:

        def write_report(out: TextIO) -> None:
            report.write_json(out)
            out.write("\n")

        write_stdout(write_report)
    else:
        write_stdout(lambda out: out.write(report.render_text() + "\n"))
    if settings.output.pushgateway or settings.output.otlp_endpoint:
        push(settings, report)
    if report.budget_exhausted and not report.interrupted and report.decided == 0:
        log.error(
            "the time budget (timeout %gs) ran out before any workload was decided: raise timeout or qps, "
            "or split the work with --shard",
            settings.limits.timeout,
        )
        return EXIT_FAILED
    if report.failed or report.interrupted:
        return EXIT_FAILED
    if settings.policy.fail_on_stalled and report.stalled:
        log.error("a rollout kube-rehash started is stalled (--fail-on-stalled)")
        return EXIT_FAILED
    if detailed and report.pending_rollouts:
        return EXIT_PENDING
    return EXIT_OK


def write_stdout(write: Callable[[TextIO], object]) -> None:
    """Write a command's output and flush it; a reader that went away (`| head`) ends it quietly.

    The rest of the output is dropped: stdout is pointed at /dev/null, so neither this write nor the
    interpreter's last flush raises BrokenPipeError, and the command exits as its pass did."""
    try:
        write(sys.stdout)
        sys.stdout.flush()
    except BrokenPipeError:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
        log.debug("stdout was closed by its reader; the rest of the output is dropped")


def requests_by_code(api: dict[str, Any]) -> dict[tuple[str, int], int]:
    """(verb, status code) counts from the client's stats snapshot; connection errors count as code 0."""
    out: dict[tuple[str, int], int] = {}
    for verb, codes in (api.get("requests") or {}).items():
        for code, count in codes.items():
            out[(verb, int(code) if str(code).isdigit() else 0)] = int(count)
    return out


def push(settings: Settings, report: Report) -> None:
    """The pass's metrics to the Pushgateway and/or the OTLP endpoint; a failed push is a warning."""
    from reconcile.output.metrics import build_registry, push_metrics
    from reconcile.output.otlp import push_otlp

    output = settings.output
    shard = f"{settings.scope.shard.index}" if settings.scope.shard else "all"
    values: dict[str, Any] = {
        "summary": report.summary(),
        "api_requests": requests_by_code(report.api),
        "configs_fetched": report.contents_fetched,
        "duration_seconds": report.duration,
        "success": not report.failed and not report.interrupted,
        "deferred": report.deferred_by_reason(),
        "skipped": report.skipped_by_reason(),
        "notifications_undelivered": count_undelivered(report),
        "rolled": rolled_workloads(report) if output.metrics_per_workload else None,
    }
    if output.pushgateway:
        try:
            push_metrics(output.pushgateway, job="kube-rehash", grouping={"shard": shard}, **values)
        except RehashError as exc:
            log.warning("pushing metrics failed: %s", exc)
    if output.otlp_endpoint:
        try:
            push_otlp(
                output.otlp_endpoint, build_registry(**values), shard=shard, cluster_name=output.cluster_name
            )
        except RehashError as exc:
            log.warning("pushing metrics over OTLP failed: %s", exc)


def rolled_workloads(report: Report) -> list[tuple[str, str, str]]:
    """(namespace, kind, name) of each workload the pass rolled (the opt-in per-workload metric)."""
    from reconcile.policy.decision import Action

    return [(r.namespace, r.kind, r.name) for r in report.rows if r.action == Action.ROLLOUT.value]


def count_undelivered(report: Report) -> int:
    """The notifications a failed webhook delivery left unrecorded: while a webhook is configured every
    `notify` row of the pass was held for it, so when its delivery failed (a `failed` row of kind Webhook)
    they all wait for the next pass."""
    from reconcile.pipeline.notifier import WEBHOOK_ROW_KIND
    from reconcile.policy.decision import Action

    rows = report.rows
    if not any(r.kind == WEBHOOK_ROW_KIND and r.action == Action.FAILED.value for r in rows):
        return 0
    return sum(1 for r in rows if r.action == Action.NOTIFY.value)


def cmd_explain(args: argparse.Namespace) -> int:
    from reconcile.cli.explain import explain_workload
    from reconcile.model.kinds import find_kind

    kind_name, _, name = args.target.partition("/")
    if args.name is not None and not name:
        name = args.name  # kubectl's other spelling: `explain deployment web`
    elif args.name is not None:
        raise ConfigError(f"explain: give one workload: {args.target} or {kind_name}/{args.name}")
    if not name:
        raise ConfigError(f"explain: {args.target!r} is not KIND/NAME (e.g. deployment/web)")
    settings = load(args, dry_run=DryRun.CLIENT)
    namespaces = settings.scope.namespaces or ("default",)
    if len(namespaces) != 1:
        raise ConfigError("explain: give exactly one -n NAMESPACE")
    try:
        kind = find_kind(kind_name, settings.scope.kinds)
    except KeyError as exc:
        raise ConfigError(f"explain: {exc.args[0]}") from None
    client = connect(settings)
    try:
        explanation = explain_workload(
            settings, client, kind, namespaces[0], name, hash_key=read_hash_key(settings, client)
        )
    except NotFound as exc:
        if exc.path != kind.object_path(namespaces[0], name):
            raise
        raise RehashError(
            f"explain: {kind.kind} {namespaces[0]}/{name} not found (another namespace: -n NS)"
        ) from None
    finally:
        client.close()
    if settings.output.output is Format.JSON:
        write_stdout(lambda out: out.write(json.dumps(explanation.to_json(), indent=2) + "\n"))
    else:
        write_stdout(lambda out: out.write(explanation.render_text() + "\n"))
    return EXIT_FAILED if explanation.decision.action.value == "failed" else EXIT_OK
