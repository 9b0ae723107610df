"""Foreign annotations: which peer an annotation key belongs to, which peers a pass with some compat rules
off ignores, the one warning naming them, and Reloader's pod-template annotations with its rule on."""

from __future__ import annotations

import logging
from collections import Counter

import pytest

from reconcile.model.kinds import DEPLOYMENT
from reconcile.model.references import DiscoverySettings, foreign_peers, peer_of
from reconcile.model.workload import honoured_annotations
from reconcile.pipeline.listing import say_foreign


@pytest.mark.parametrize(
    ("key", "peer"),
    [
        ("reloader.stakater.com/auto", "reloader"),
        ("configmap.reloader.stakater.com/reload", "reloader"),
        ("secret.reloader.stakater.com/auto", "reloader"),
        ("reloader.stakater.com/last-reloaded-from", "reloader"),
        ("wave.pusher.com/update-on-config-change", "wave"),
        ("pod-reloader.cs.sap.com/configmaps", "pod-reloader"),
        ("kube-rehash.io/watch", None),
        ("example.reloader.stakater.com/auto", None),
        ("no-slash", None),
    ],
)
def test_an_annotation_key_names_its_peer_by_its_domain(key: str, peer: str | None) -> None:
    assert peer_of(key) == peer


def test_only_peers_whose_rule_is_off_are_foreign() -> None:
    keys = ["reloader.stakater.com/auto", "wave.pusher.com/update-on-config-change", "kube-rehash.io/watch"]
    assert foreign_peers(keys, frozenset()) == {"reloader", "wave"}
    assert foreign_peers(keys, frozenset({"reloader"})) == {"wave"}


def test_one_warning_names_the_counts_and_the_setting(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING):
        say_foreign(Counter({"reloader": 3, "wave": 1}))
        say_foreign(Counter())
    (record,) = caplog.records
    assert record.levelno == logging.WARNING
    assert (
        "3 carry reloader.stakater.com" in record.message
        and "1 carry wave.pusher.com (wave)" in record.message
    )
    assert "set compat: [reloader, wave]" in record.message


def test_reloaders_pod_template_annotations_count_with_its_rule_on_and_the_workloads_own_value_wins() -> None:
    obj = {
        "metadata": {"annotations": {"reloader.stakater.com/auto": "false"}},
        "spec": {
            "template": {
                "metadata": {
                    "annotations": {
                        "reloader.stakater.com/auto": "true",
                        "secret.reloader.stakater.com/reload": "db",
                        "wave.pusher.com/update-on-config-change": "true",
                    }
                }
            }
        },
    }
    own = obj["metadata"]["annotations"]
    on = DiscoverySettings(compat=frozenset({"reloader", "wave"}))
    assert honoured_annotations(obj, DEPLOYMENT, on, own) == {
        "reloader.stakater.com/auto": "false",
        "secret.reloader.stakater.com/reload": "db",
    }
    assert honoured_annotations(obj, DEPLOYMENT, DiscoverySettings(), own) is own


def test_keys_remembered_as_no_peers_leave_the_answer_unchanged_and_the_memo_stays_bounded(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from reconcile.model import references

    monkeypatch.setattr(references, "_NO_PEER", set())
    keys = ["kube-rehash.io/watch", "team", "wave.pusher.com/update-on-config-change"]
    first = foreign_peers(keys, frozenset())
    again = foreign_peers(keys, frozenset())  # the two keys of no peer are now remembered
    assert first == again == {"wave"}
    assert {"kube-rehash.io/watch", "team"} == references._NO_PEER
    assert foreign_peers(keys, frozenset({"wave"})) == set()
    for index in range(references._NO_PEER_MAX + 100):
        foreign_peers([f"example.com/key-{index}"], frozenset())
    assert len(references._NO_PEER) == references._NO_PEER_MAX
    assert foreign_peers(["example.com/key-never-kept", "reloader.stakater.com/auto"], frozenset()) == {
        "reloader"
    }
