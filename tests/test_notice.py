"""The notify webhook's document (reconcile/output/notice.py), pinned byte for byte: receivers parse it, so
its shape is a contract (docs/notify-webhook.schema.json), and its `text` is what a chat shows."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from reconcile.model.choices import OnChange
from reconcile.model.workload import revise
from reconcile.output.notice import TEXT_LINES, Change, PassIdentity, build_document, encode
from reconcile.policy.decision import Action, Decision
from reconcile.policy.table import decide
from tests.test_plan import NOW, observed, target
from tests.test_plan_notify import CHANGED

ROOT = Path(__file__).resolve().parents[1]
SCHEMA = json.loads((ROOT / "docs/notify-webhook.schema.json").read_text())
STARTED = datetime(2026, 11, 25, 12, 0, 5, 900000, tzinfo=UTC)
IDENTITY = PassIdentity("5f0c6a2e-2d1b-4d7c-9a53-0b1f3c0e7d11", STARTED, "1/4", "prod-eu")
WEB = Change("Deployment", "shop", "web", ("configmap/app", "secret/creds"), "v1:aaa", "v1:bbb")
DB = Change("StatefulSet", "data", "db", ("configmap/db",), None, "v1:ccc")

GOLDEN = (
    '{"version":1,"sender":"kube-rehash 9.9.9","cluster":"prod-eu",'
    '"pass":{"id":"5f0c6a2e-2d1b-4d7c-9a53-0b1f3c0e7d11","started":"2026-11-25T12:00:05Z","shard":"1/4"},'
    '"text":"kube-rehash: config changed for 2 workloads (cluster prod-eu), not restarted:\\n'
    "- StatefulSet data/db: configmap/db changed\\n"
    '- Deployment shop/web: configmap/app, secret/creds changed",'
    '"changes":['
    '{"kind":"StatefulSet","namespace":"data","name":"db","sources":[{"kind":"ConfigMap","name":"db"}],'
    '"previous":null,"hash":"v1:ccc","time":"2026-11-25T12:00:05Z"},'
    '{"kind":"Deployment","namespace":"shop","name":"web",'
    '"sources":[{"kind":"ConfigMap","name":"app"},{"kind":"Secret","name":"creds"}],'
    '"previous":"v1:aaa","hash":"v1:bbb","time":"2026-11-25T12:00:05Z"}]}'
)


def document(*changes: Change, identity: PassIdentity = IDENTITY) -> dict[str, Any]:
    return build_document(changes, identity, sender="kube-rehash 9.9.9")


def test_the_golden_body() -> None:
    assert encode(document(WEB, DB)).decode() == GOLDEN


def test_the_golden_body_validates_against_the_documented_schema() -> None:
    jsonschema.Draft202012Validator.check_schema(SCHEMA)
    jsonschema.validate(json.loads(GOLDEN), SCHEMA)


def test_the_order_of_the_changes_does_not_matter() -> None:
    assert document(DB, WEB) == document(WEB, DB)


def test_without_a_cluster_name_or_shard_they_are_null_and_the_text_says_nothing_of_them() -> None:
    doc = document(WEB, identity=PassIdentity("id", STARTED))
    assert doc["cluster"] is None and doc["pass"]["shard"] is None
    assert doc["text"] == (
        "kube-rehash: config changed for 1 workload, not restarted:\n"
        "- Deployment shop/web: configmap/app, secret/creds changed"
    )
    jsonschema.validate(doc, SCHEMA)


def test_the_text_lists_at_most_twenty_workloads_and_counts_the_rest() -> None:
    many = [replace(WEB, name=f"web-{i:02d}") for i in range(TEXT_LINES + 5)]
    lines = document(*many)["text"].splitlines()
    assert len(lines) == 1 + TEXT_LINES + 1
    assert lines[-2] == f"- Deployment shop/web-{TEXT_LINES - 1:02d}: configmap/app, secret/creds changed"
    assert lines[-1] == "- and 5 more"
    assert len(document(*many)["changes"]) == TEXT_LINES + 5


def test_a_change_is_taken_from_the_notify_decision() -> None:
    workload = revise(CHANGED, on_change=OnChange.NOTIFY)
    decision = decide(workload, observed(), now=NOW)
    assert decision.action is Action.NOTIFY
    change = Change.of(workload, decision)
    assert change == Change(
        workload.kind.kind, workload.namespace, workload.name, ("configmap/app",), "v1:old", "v1:new"
    )


def test_when_the_records_do_not_say_what_changed_every_source_is_named() -> None:
    decision = decide(revise(CHANGED, on_change=OnChange.NOTIFY), observed(), now=NOW)
    unknown = replace(decision, changed=())
    assert Change.of(CHANGED, unknown).sources == decision.configs


def test_a_decision_without_a_hash_is_no_change() -> None:
    with pytest.raises(ValueError, match="without a hash"):
        Change.of(target(), Decision(Action.NOTIFY, "x"))


def test_no_content_only_names_and_hashes() -> None:
    body = encode(document(WEB, DB)).decode()
    assert set(json.loads(body)["changes"][0]) == {
        "kind",
        "namespace",
        "name",
        "sources",
        "previous",
        "hash",
        "time",
    }
