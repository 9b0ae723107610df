"""Deliberately broken builds of kube-rehash, for the mutation check (tests/robustness/test_mutants.py).

`python -m tests.robustness.mutants run ...` is the CLI with one defect patched in, named by the
environment variable ROBUSTNESS_MUTANT, which only that test sets: the installed package is not touched,
and nothing in kube-rehash reads the variable. Each defect is one a real change could introduce, and the
checker must catch each on a short pinned history.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import xxhash


def metadata_rolls() -> None:
    """A source's `touched` label leaks into its content token: a metadata-only edit rolls."""
    from reconcile.pipeline import fetch

    original = fetch.source_token

    def token(kind: str, obj: Any, keys: Any, key: Any) -> str:
        sealed = original(kind, obj, keys, key)
        touched = ((obj or {}).get("metadata") or {}).get("labels", {}).get("touched")
        if touched is None:
            return sealed
        return xxhash.xxh3_128(f"{sealed}/{touched}".encode()).hexdigest()

    fetch.source_token = token


def reset_swallowed() -> None:
    """A PATCH whose connection is reset is not retried, and the writer takes the failure for `in-sync`:
    the change is missed for the pass, and the row says nothing happened."""
    from reconcile.errors import UnreachableError
    from reconcile.kube import exchange
    from reconcile.pipeline import write
    from reconcile.policy.decision import Action

    retry = exchange.Exchange._retry_connection_failure

    def no_retry_for_patch(self: Any, exc: Any, *, request: Any, **kw: Any) -> None:
        if request.method == "PATCH":
            raise UnreachableError(f"cannot reach the API server: {request.label}") from exc
        retry(self, exc, request=request, **kw)

    exchange.Exchange._retry_connection_failure = no_retry_for_patch  # type: ignore[method-assign]
    fail = write.Writer.fail

    def quiet(self: Any, item: Any, reason: str) -> Any:
        if "cannot reach" in reason:
            decision = replace(item.decision, action=Action.IN_SYNC, reason="content unchanged")
            return write.Written(item, decision)
        return fail(self, item, reason)

    write.Writer.fail = quiet  # type: ignore[method-assign]


def lost_answer_unfixed() -> None:
    """The defect this suite guards against: after a lost answer, the re-read is never taken as our write."""
    from reconcile.pipeline import writes

    assert callable(writes.shows_write)
    writes.shows_write = lambda *args: False


def deferred_says_rollout() -> None:
    """A row that lies: a rollout held back by --max-rollouts is reported as rolled."""
    from reconcile.policy import outcome
    from reconcile.policy.decision import Action

    of = outcome.Outcome.of.__func__  # type: ignore[attr-defined]

    def lying(cls: Any, target: Any, decision: Any, rollout_status: Any = None) -> Any:
        if decision.action is Action.DEFERRED and "max-rollouts" in decision.reason:
            decision = replace(decision, action=Action.ROLLOUT, deferral=None)
        return of(cls, target, decision, rollout_status)

    outcome.Outcome.of = classmethod(lying)  # type: ignore[method-assign,assignment]


def no_precondition() -> None:
    """The guarded patch loses its guard: two overlapping passes both roll one change."""
    from reconcile.pipeline import write

    build = write.build_patch
    write.build_patch = lambda *a, **kw: [op for op in build(*a, **kw) if op["op"] != "test"]


def steady_rewrite() -> None:
    """Every in-sync workload's last-rollout time is written again: a clean pass is never quiet."""
    from reconcile.kube.client import PatchType
    from reconcile.model.times import format_time
    from reconcile.pipeline import write
    from reconcile.policy.decision import Action

    write_one = write.Writer.write

    def rewrite(self: Any, item: Any) -> Any:
        result = write_one(self, item)
        if result.decision.action is Action.IN_SYNC and not self.client_dry_run:
            listed = item.listed
            op = {
                "op": "add",
                "path": "/metadata/annotations/kube-rehash.io~1last-rollout",
                "value": format_time(self.now),
            }
            self.client.patch(
                listed.kind.object_path(listed.namespace, listed.name), [op], patch_type=PatchType.JSON
            )
        return result

    write.Writer.write = rewrite  # type: ignore[method-assign]


def foreign_annotation() -> None:
    """A rollout also stamps an annotation that is not kube-rehash's."""
    from reconcile.pipeline import write

    build = write.build_patch

    def stamped(*a: Any, **kw: Any) -> Any:
        return [
            *build(*a, **kw),
            {"op": "add", "path": "/metadata/annotations/rehashed-by", "value": "kube-rehash"},
        ]

    write.build_patch = stamped


MUTANTS: dict[str, Callable[[], None]] = {
    "metadata-rolls": metadata_rolls,
    "reset-swallowed": reset_swallowed,
    "lost-answer-unfixed": lost_answer_unfixed,
    "deferred-says-rollout": deferred_says_rollout,
    "no-precondition": no_precondition,
    "steady-rewrite": steady_rewrite,
    "foreign-annotation": foreign_annotation,
}


def main() -> int:
    MUTANTS[os.environ["ROBUSTNESS_MUTANT"]]()  # raises where what it patches no longer exists
    from reconcile.cli.commands import main as cli

    return cli(sys.argv[1:])


if __name__ == "__main__":
    sys.exit(main())
