"""`customKinds` in the config file (reconcile/config/settings.py `_custom_kind`, the schema in
reconcile/settings/values.py): references inside the resource, a restart knob, its pods and its evidence
become one entry of the kind table; a bad entry is a one-line error naming the file and key."""

from __future__ import annotations

from pathlib import Path

import pytest

from reconcile.config.settings import load_settings
from reconcile.errors import ConfigError
from reconcile.model.kinds import Health
from reconcile.model.knobs import Evidence, Knob, PodSelection, SpecReference

STORE = """
customKinds:
  - kind: ObjectStore
    group: example.com
    version: v1
    resource: objectstores
    annotations: /metadata/annotations
    health: Ready
    references:
      - secret: spec.s3.secretRef.name
        keyField: key
      - configMap: spec.tuning
        key: limits
        optional: true
    podSpecs: ["spec.workers[*].pod.spec"]
    restart: {mode: one-shot, key: example.com/roll, value: "now", ownerHonoursIt: true}
    pods: {selector: spec.selector.matchLabels, owned: true}
    verify: {evidence: status-time, field: status.restartedAt}
"""


def load(tmp_path: Path, text: str) -> object:
    path = tmp_path / "config.yaml"
    path.write_text(text)
    return load_settings(config_file=str(path), env={}, flags={})


def test_a_custom_kind_names_its_references_knob_pods_and_evidence(tmp_path: Path) -> None:
    settings = load(tmp_path, STORE)
    kind = settings.scope.kinds[-1]  # type: ignore[attr-defined]
    assert (kind.kind, kind.plural, kind.health) == ("ObjectStore", "objectstores", Health.READY)
    assert kind.spec_references == (
        SpecReference("secret", "spec.s3.secretRef.name", key_field="key"),
        SpecReference("configmap", "spec.tuning", key="limits", optional=True),
    )
    assert kind.pod_specs == ("spec.workers[*].pod.spec",)
    assert (kind.knob, kind.knob_key, kind.knob_value, kind.owner_honours_knob) == (
        Knob.ONE_SHOT,
        "example.com/roll",
        "now",
        True,
    )
    assert kind.pod_selection == PodSelection(selector="spec.selector.matchLabels", owned=True)
    assert (kind.verified_by, kind.evidence_field, kind.watched) == (
        Evidence.STATUS_TIME,
        "status.restartedAt",
        True,
    )


@pytest.mark.parametrize(
    ("entry", "problem"),
    [
        (
            "references: [{secret: spec.a, configMap: spec.b}]",
            "customKinds[0].references[0]: name exactly one of secret or configMap",
        ),
        (
            "restart: {mode: timestamp}",
            "customKinds[0]: kind Store: restart timestamp needs an annotation key",
        ),
        ("restart: {mode: evict}", "customKinds[0]: kind Store: restart evict needs a pod selection"),
        ("restart: {mode: field, field: 'spec.items[*].at'}", "names every item of a list"),
        ("restart: {mode: sometimes}", "customKinds[0].restart.mode"),
        ("references: [{secret: 'spec..name'}]", "field path 'spec..name'"),
        ("pods: {owned: false}", "pods: give a selector field, a labels selector, or owned: true"),
        (
            "pods: {selector: spec.s, labels: a=b}",
            "pods: give a selector field or a labels selector, not both",
        ),
        ("verify: {evidence: status-change}", "the status-change evidence needs a status field"),
    ],
)
def test_a_bad_entry_is_one_line_naming_the_file_and_the_problem(
    tmp_path: Path, entry: str, problem: str
) -> None:
    text = (
        "customKinds:\n  - kind: Store\n    group: example.com\n    version: v1\n    resource: stores\n"
        f"    annotations: /metadata/annotations\n    {entry}\n"
    )
    with pytest.raises(ConfigError) as raised:
        load(tmp_path, text)
    message = str(raised.value)
    assert message.startswith(str(tmp_path / "config.yaml")) and problem in message, message
    assert "\n" not in message
