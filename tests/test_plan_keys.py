"""Keys never restart anything: the decision table when the stored hash was made under another hash key
(unkeyed vs keyed, or key A vs key B) than the pass's. Built with the real hashing, so the stored and
current values differ exactly as they do on a cluster."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

from reconcile.model.bookkeeping import Bookkeeping, SourceRecord
from reconcile.model.choices import OnChange
from reconcile.model.hashing import digest_entries, key_fingerprint, seal
from reconcile.model.workload import Target
from reconcile.policy.decision import Action, Observed, observed_from
from reconcile.policy.table import decide
from tests.workloads import make_target

NOW = datetime(2026, 11, 26, 12, 0, tzinfo=UTC)
KEY_A = b"a" * 32
KEY_B = b"b" * 32
CONTENT = digest_entries({"x": b"1"}, None)
CHANGED = digest_entries({"x": b"2"}, None)


def record(key: bytes | None, version: str = "10", digest: bytes = CONTENT) -> SourceRecord:
    return SourceRecord("configmap", "app", "u1", version, "*", seal(digest, key))


def recorded_under(key: bytes | None, *, template: bool = True) -> Target:
    """`shop/web` as adopted (template False) or rolled (template True) by a pass holding `key`."""
    observed = observed_from([record(key)], key)
    book = Bookkeeping(observed.config_hash, observed.records, observed.key_fingerprint)
    return make_target(template_hash=observed.config_hash if template else None, bookkeeping=book)


def now_under(key: bytes | None, version: str = "10", digest: bytes = CONTENT) -> Observed:
    return observed_from([record(key, version, digest)], key)


def test_a_keyed_pass_over_an_unkeyed_hash_re_records_it_without_a_rollout() -> None:
    decision = decide(recorded_under(None), now_under(KEY_A), now=NOW)
    assert decision.action is Action.REFRESH
    assert decision.reason == (
        f"hash key changed (unkeyed → fingerprint {key_fingerprint(KEY_A)}); sources unchanged: re-recorded"
    )


def test_a_pass_under_another_key_re_records_naming_both_fingerprints() -> None:
    decision = decide(recorded_under(KEY_A), now_under(KEY_B), now=NOW)
    assert decision.action is Action.REFRESH
    assert f"fingerprint {key_fingerprint(KEY_A)} → fingerprint {key_fingerprint(KEY_B)}" in decision.reason


def test_a_pass_without_a_key_leaves_a_keyed_hash_and_says_to_run_with_the_clusters_key() -> None:
    decision = decide(recorded_under(KEY_A), now_under(None), now=NOW)
    assert decision.action is Action.SKIPPED
    assert (
        "this pass has none: run with the cluster's key (--hash-key-secret NAMESPACE/NAME" in decision.reason
    )
    assert key_fingerprint(KEY_A) in decision.reason


def test_a_pass_without_a_key_leaves_a_keyed_hash_without_records_too() -> None:
    target = recorded_under(KEY_A)
    bare = make_target(template_hash=target.template_hash, bookkeeping=Bookkeeping(target.template_hash))
    decision = decide(bare, now_under(None), now=NOW)
    assert decision.action is Action.SKIPPED
    assert "an unrecorded key" in decision.reason


def test_a_source_changed_under_another_key_rolls_once_naming_it() -> None:
    decision = decide(recorded_under(KEY_A), now_under(KEY_B, "11", CHANGED), now=NOW)
    assert decision.action is Action.ROLLOUT
    assert decision.changed == ("configmap/app",)
    assert decision.reason.startswith("configmap/app changed (hash key changed too:")


def test_an_unkeyed_hash_without_records_cannot_be_proven_unchanged_so_it_rolls() -> None:
    target = recorded_under(None)
    bare = make_target(template_hash=target.template_hash, bookkeeping=Bookkeeping(target.template_hash))
    decision = decide(bare, now_under(KEY_A), now=NOW)
    assert decision.action is Action.ROLLOUT
    assert "hash key changed too: unkeyed →" in decision.reason


def test_after_the_re_record_the_new_key_is_in_sync_and_a_real_change_rolls_once() -> None:
    """The refresh records the new hash on metadata and marks the template's old-key value superseded
    (policy/patches.py), so the template stands for the new hash until content really changes."""
    before = recorded_under(KEY_A)
    now = now_under(KEY_B)
    assert decide(before, now, now=NOW).action is Action.REFRESH
    after = replace(
        before,
        listed=replace(
            before.listed,
            bookkeeping=Bookkeeping(
                now.config_hash, now.records, now.key_fingerprint, superseded=before.template_hash
            ),
        ),
    )
    assert decide(after, now, now=NOW).action is Action.IN_SYNC
    changed = decide(after, now_under(KEY_B, "11", CHANGED), now=NOW)
    assert changed.action is Action.ROLLOUT
    assert changed.reason == "configmap/app changed"


def test_a_workload_in_notify_mode_is_re_recorded_too_not_notified() -> None:
    target = replace(recorded_under(KEY_A, template=False))
    target = replace(target, listed=replace(target.listed, on_change=OnChange.NOTIFY))
    assert decide(target, now_under(KEY_B), now=NOW).action is Action.REFRESH
