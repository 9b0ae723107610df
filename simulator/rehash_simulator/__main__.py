"""`python -m rehash_simulator`: serve the simulator as its own process until SIGTERM/SIGINT.

Benchmarks run the API server in a separate process so its CPU time does not count against the
client's; `--load` seeds objects in bulk, `--ready-file` tells the parent when to start and
`--log-file` hands it the request log (requests, bytes) as JSON lines. `--answers` chooses how lists are
paged, counted, ordered and framed (answers.py); the file is read again on SIGHUP.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import signal
import sys
import threading
from collections.abc import Sequence
from typing import Any

import yaml

from . import Simulator
from .answers import AnswerSetting


def load_objects(path: pathlib.Path) -> list[dict[str, Any]]:
    """Objects from a JSON file (one object, a list, or a `List`) or a YAML file (multi-document)."""
    text = path.read_text()
    if path.suffix == ".json":
        docs: list[Any] = [json.loads(text)]
    else:
        docs = list(yaml.load_all(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)))
    objects: list[dict[str, Any]] = []
    while docs:
        doc = docs.pop(0)
        if isinstance(doc, list):
            docs[0:0] = doc
        elif isinstance(doc, dict) and "items" in doc and str(doc.get("kind", "")).endswith("List"):
            docs[0:0] = doc["items"]
        elif isinstance(doc, dict):
            objects.append(doc)
    return objects


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m rehash_simulator", description=__doc__)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port")
    parser.add_argument("--kubeconfig-out", type=pathlib.Path, required=True)
    parser.add_argument("--admin-token", default=None)
    parser.add_argument("--load", type=pathlib.Path, action="append", default=[], help="objects to seed")
    parser.add_argument(
        "--ready-file", type=pathlib.Path, default=None, help="written (with the URL) when serving"
    )
    parser.add_argument(
        "--log-file",
        type=pathlib.Path,
        default=None,
        help="append the request log here as JSON lines (no request bodies), flushed per request",
    )
    parser.add_argument(
        "--rollout-seconds",
        type=float,
        default=None,
        help="run a rollout controller that finishes each rollout this long after a template change "
        "(default: rollouts never finish)",
    )
    parser.add_argument(
        "--answers",
        type=pathlib.Path,
        default=None,
        help="a JSON file of answer settings (rehash_simulator/answers.py), read again on SIGHUP",
    )
    args = parser.parse_args(argv)

    sim = Simulator(
        host=args.host, port=args.port, admin_token=args.admin_token, rollout_seconds=args.rollout_seconds
    )
    if args.answers is not None:
        sim.store.answers = AnswerSetting(path=args.answers)
        signal.signal(signal.SIGHUP, lambda *_: sim.store.answers.reload())
    if args.log_file is not None:
        sim.log.write_to(args.log_file.open("a", encoding="utf-8"))
    for path in args.load:
        sim.store.create_many(load_objects(path))
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    with sim.start():
        sim.write_kubeconfig(args.kubeconfig_out)
        if args.ready_file is not None:
            args.ready_file.write_text(sim.url + "\n")
        print(f"serving {sim.url}; kubeconfig {args.kubeconfig_out}", file=sys.stderr, flush=True)
        while not stop.wait(0.5):
            pass
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
