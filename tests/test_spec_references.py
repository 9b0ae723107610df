"""A custom resource names its sources in its own spec: field paths with `*` for every item of a list
(model/pointer.py), read into references with the key each uses (model/references.py
`with_resource_references`), so a Secret a CR names is a source like one its pod template names."""

from __future__ import annotations

from typing import Any

import pytest

from reconcile.model.kinds import Kind
from reconcile.model.knobs import Knob, PodSelection, SpecReference
from reconcile.model.pointer import parse_path, path_pointer, resolve_all
from reconcile.model.references import DiscoverySettings, Reference
from reconcile.model.workload import read_target, target_inputs

SETTINGS = DiscoverySettings()
STORE = Kind(
    "example.kube-rehash.io",
    "v1",
    "stores",
    kind="Store",
    template=None,
    annotations="/metadata/annotations",
    knob=Knob.TIMESTAMP,
    knob_key="kubectl.kubernetes.io/restartedAt",
    spec_references=(
        SpecReference("secret", "spec.s3.credentialsSecret", key="accesskey"),
        SpecReference("secret", "spec.valuesFrom[*].secretKeyRef.name", key_field="key"),
        SpecReference("configmap", "/spec/valuesFrom/*/configMapRef/name"),
    ),
    pod_specs=("spec.workers[*].pod.spec",),
    pod_selection=PodSelection(labels="app.kubernetes.io/instance={name}"),
)


def store(spec: dict[str, Any], annotations: dict[str, str] | None = None) -> dict[str, Any]:
    meta = {"kube-rehash.io/watch": "true"} if annotations is None else annotations
    return {
        "apiVersion": "example.kube-rehash.io/v1",
        "kind": "Store",
        "metadata": {"name": "s", "namespace": "ns", "uid": "u-1", "generation": 1, "annotations": meta},
        "spec": spec,
    }


@pytest.mark.parametrize(
    ("path", "tokens"),
    [
        ("spec.valuesFrom[*].secretKeyRef.name", ("spec", "valuesFrom", "*", "secretKeyRef", "name")),
        ("/spec/valuesFrom/*/secretKeyRef/name", ("spec", "valuesFrom", "*", "secretKeyRef", "name")),
        (
            'spec.template.metadata.annotations["pingcap.com/restartedAt"]',
            ("spec", "template", "metadata", "annotations", "pingcap.com/restartedAt"),
        ),
        ("spec.items[0].name", ("spec", "items", "0", "name")),
        ("/metadata/annotations/a~1b", ("metadata", "annotations", "a/b")),
    ],
)
def test_a_field_path_is_read_dotted_or_as_a_pointer(path: str, tokens: tuple[str, ...]) -> None:
    assert parse_path(path) == tokens


@pytest.mark.parametrize("path", ["", ".spec", "spec..a", "spec[x]", "spec[*", "spec.a]"])
def test_a_malformed_field_path_is_an_error_naming_it(path: str) -> None:
    with pytest.raises(ValueError, match="field path"):
        parse_path(path)


def test_star_takes_every_item_of_a_list_and_a_missing_step_reaches_nothing() -> None:
    doc = {"spec": {"v": [{"s": {"name": "a"}}, {"x": 1}, {"s": {"name": "b"}}], "m": {"*": {"name": "c"}}}}
    assert resolve_all(doc, parse_path("spec.v[*].s.name")) == [
        ("/spec/v/0/s/name", "a"),
        ("/spec/v/2/s/name", "b"),
    ]
    for path in ("spec.m[*].name", "/spec/m/*/name"):  # on a mapping, `*` is the key "*"
        assert resolve_all(doc, parse_path(path)) == [("/spec/m/*/name", "c")]
    assert resolve_all(doc, parse_path("spec.v[1].s.name")) == []
    assert resolve_all(doc, parse_path("spec.nothing[*].name")) == []


def test_a_place_to_write_is_one_field() -> None:
    assert path_pointer('metadata.annotations["kubectl.kubernetes.io/restartedAt"]') == (
        "/metadata/annotations/kubectl.kubernetes.io~1restartedAt"
    )
    with pytest.raises(ValueError, match="every item"):
        path_pointer("spec.items[*].name")


def test_the_secrets_and_configmaps_a_resource_names_in_its_spec_are_its_sources_with_their_keys() -> None:
    spec = {
        "s3": {"credentialsSecret": "s3-creds", "bucket": "b"},
        "valuesFrom": [
            {"secretKeyRef": {"name": "db", "key": "password"}},
            {"secretKeyRef": {"name": "db", "key": "user"}},
            {"configMapRef": {"name": "tuning"}},
            {"secretKeyRef": {"name": "optional-one", "key": "k", "optional": True}},
        ],
        "workers": [
            {"pod": {"spec": {"containers": [{"name": "w", "envFrom": [{"secretRef": {"name": "env"}}]}]}}}
        ],
    }
    target = read_target(store(spec), STORE, SETTINGS)
    assert target.discovery.references == (
        Reference("configmap", "tuning", None, False),
        Reference("secret", "db", frozenset({"password", "user"}), False),
        Reference("secret", "env", None, False),
        Reference("secret", "optional-one", frozenset({"k"}), True),
        Reference("secret", "s3-creds", frozenset({"accesskey"}), False),
    )
    assert target.problems == ()
    assert target.template_hash is None  # the knob writes a time, never the hash, into the map
    assert target.pod_selector == "app.kubernetes.io/instance=s"


def test_a_reference_without_its_key_field_or_with_a_bad_name_is_a_problem_not_a_guess() -> None:
    spec = {"valuesFrom": [{"secretKeyRef": {"name": "db"}}, {"configMapRef": {"name": "Not_A_Name"}}]}
    target = read_target(store(spec), STORE, SETTINGS)
    assert target.discovery.references == ()
    assert target.problems == (
        "spec.valuesFrom[*].secretKeyRef.name (/spec/valuesFrom/0/secretKeyRef): missing key",
        "/spec/valuesFrom/*/configMapRef/name (/spec/valuesFrom/1/configMapRef): "
        '"Not_A_Name" is not a valid name',
    )


def test_a_resource_not_opted_in_has_no_sources_and_its_spec_is_not_read() -> None:
    target = read_target(store({"s3": {"credentialsSecret": "s3-creds"}}, annotations={}), STORE, SETTINGS)
    assert target.discovery.references == () and not target.discovery.opted_in


def test_where_a_kind_names_its_sources_is_an_input_of_the_records_so_a_new_entry_rereads_them() -> None:
    target = read_target(store({}), STORE, SETTINGS)
    fewer = Kind(**{**STORE.__dict__, "spec_references": STORE.spec_references[:1]})
    assert target_inputs(target.discovery, STORE) != target_inputs(target.discovery, fewer)
