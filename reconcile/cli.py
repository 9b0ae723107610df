"""Command-line entry point (skeleton; the full command set lands with the reconcile pass)."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from reconcile import __version__


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="kube-rehash")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("version", help="print the version")
    args = parser.parse_args(argv)
    if args.command == "version":
        print(f"kube-rehash {__version__}")
    return 0
