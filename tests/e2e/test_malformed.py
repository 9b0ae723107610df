"""Bad input fails closed, and is said every pass, end to end: a workload with a malformed annotation is
`skipped` with a reason naming the annotation and its value in `run`, `plan` and `explain`, on first sight
and on every later pass, in-sync workloads included; `watch: "yes"` gets such a row, not silence."""

from __future__ import annotations

import json

from tests.e2e.conftest import Backend, configmap, deployment, env_from


def test_malformed_annotations_are_skipped_every_pass_and_explain_says_why(cluster: Backend) -> None:
    pod = env_from("configmap", "app")
    cluster.add(
        configmap("app", {"a": "1"}),
        deployment("web", pod),
        deployment("yes", pod, annotations={"kube-rehash.io/watch": "yes"}),
    )
    first = cluster.run()
    assert first.actions() == {"Deployment/shop/web": "adopt", "Deployment/shop/yes": "skipped"}
    assert first.row("Deployment", "yes")["reason"] == (
        'malformed annotation: kube-rehash.io/watch: "yes" is not "true" or "false"; nothing written'
    )
    assert cluster.run().actions() == {"Deployment/shop/web": "in-sync", "Deployment/shop/yes": "skipped"}

    cluster.edit(
        "deployments",
        "shop",
        "web",
        {"metadata": {"annotations": {"kube-rehash.io/min-interval": "ten minutes"}}},
    )
    cluster.edit(
        "configmaps", "shop", "app", {"data": {"a": "2"}}
    )  # a change: still no rollout, fails closed
    for _ in range(2):
        result = cluster.run()
        assert result.code == 0, result.stderr
        row = result.row("Deployment", "web")
        assert row["action"] == "skipped"
        assert "kube-rehash.io/min-interval: 'ten minutes' is not a duration" in row["reason"]
    planned = cluster.cli("plan", "-o", "json")
    assert planned.row("Deployment", "web")["action"] == "skipped"
    explained = json.loads(cluster.cli("explain", "deployment/web", "-n", "shop", "-o", "json").stdout)
    assert explained["action"] == "skipped"
    assert explained["reason"] == planned.row("Deployment", "web")["reason"]
    text = cluster.cli("explain", "deployment/yes", "-n", "shop")
    assert text.code == 0, text.stderr
    assert 'decision:     skipped: malformed annotation: kube-rehash.io/watch: "yes"' in text.stdout


def test_a_malformed_ignore_on_a_source_skips_its_workloads_every_pass(cluster: Backend) -> None:
    cluster.add(configmap("app", {"a": "1"}), deployment("web", env_from("configmap", "app")))
    assert cluster.run().actions() == {"Deployment/shop/web": "adopt"}
    cluster.edit("configmaps", "shop", "app", {"metadata": {"annotations": {"kube-rehash.io/ignore": "yes"}}})
    for _ in range(2):
        row = cluster.run().row("Deployment", "web")
        assert row["action"] == "skipped"
        assert row["reason"] == (
            'malformed annotation: configmap/app: kube-rehash.io/ignore: "yes" is not "true" or "false"; '
            "nothing written"
        )


def test_a_misspelt_key_under_our_prefix_is_skipped_with_the_nearest_key_and_bookkeeping_alone_is_not(
    cluster: Backend,
) -> None:
    pod = env_from("configmap", "app")
    cluster.add(
        configmap("app", {"a": "1"}),
        deployment("typo", pod, annotations={"kube-rehash.io/wacth": "true"}),
        deployment(
            "knob", pod, annotations={"kube-rehash.io/watch": "true", "kube-rehash.io/min-intervall": "1h"}
        ),
        deployment("plain", pod, annotations={"example.com/wacth": "true"}),
    )
    first = cluster.run()
    assert first.code == 0, first.stderr
    assert first.actions() == {"Deployment/shop/typo": "skipped", "Deployment/shop/knob": "skipped"}
    assert first.row("Deployment", "typo")["reason"] == (
        "malformed annotation: kube-rehash.io/wacth: not an annotation kube-rehash reads "
        "(did you mean kube-rehash.io/watch?); nothing written"
    )
    assert (
        "kube-rehash.io/min-intervall: not an annotation kube-rehash reads (did you mean "
        "kube-rehash.io/min-interval?)" in first.row("Deployment", "knob")["reason"]
    )
    text = cluster.cli("explain", "deployment/typo", "-n", "shop")
    assert text.code == 0, text.stderr
    assert "did you mean kube-rehash.io/watch?" in text.stdout
    assert "no kube-rehash annotation" not in text.stdout

    # Fixed, adopted, then opted out: what kube-rehash recorded is no misspelling.
    cluster.edit("deployments", "shop", "typo", {"metadata": {"annotations": {"kube-rehash.io/wacth": None}}})
    cluster.edit(
        "deployments", "shop", "typo", {"metadata": {"annotations": {"kube-rehash.io/watch": "true"}}}
    )
    assert cluster.run().row("Deployment", "typo")["action"] == "adopt"
    cluster.edit("deployments", "shop", "typo", {"metadata": {"annotations": {"kube-rehash.io/watch": None}}})
    assert "Deployment/shop/typo" not in cluster.run().actions()
