"""Property tests: discovery never raises on API-shaped garbage, and its output keeps its invariants."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reconcile.model.references import (
    KINDS,
    MAX_PROBLEMS,
    Discovery,
    DiscoverySettings,
    discover,
    is_valid_name,
    references_from_pod_spec,
    source_ignored,
    source_matches,
)

FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=20)
json_values = st.recursive(
    scalars,
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=10), children, max_size=4)
    ),
    max_leaves=20,
)

NAMES = ["app", "db", "a.b", "x-1", "", "Bad_Name", "-x", "a..b", "ns/app", "a" * 254, " app ", "app,db"]
valid_names = st.sampled_from(["app", "db", "a.b", "x-1", "cfg"])
string_names = valid_names | st.sampled_from(NAMES) | st.text(max_size=12)
names = st.integers(0, 9).flatmap(
    lambda roll: valid_names if roll < 7 else string_names if roll < 9 else json_values
)
truthy = st.sampled_from(["true", " TRUE ", "True\n", "false", "", "yes"])
anything = truthy | names | json_values


def maybe(strategy: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """Mostly well-formed (9 in 10), sometimes garbage."""
    return st.integers(0, 9).flatmap(lambda roll: json_values if roll == 0 else strategy)


def fixed(
    required: dict[str, st.SearchStrategy[Any]] | None = None, **fields: st.SearchStrategy[Any]
) -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries(required or {}, optional=fields)


optional_flag = st.booleans() | st.sampled_from(["true", None])
items = st.lists(maybe(fixed({"key": names}, path=st.just("p"))), max_size=3)
selector = maybe(fixed({"name": names, "key": names}, optional=optional_flag))
keyed = maybe(fixed({"name": names}, secretName=names, items=maybe(items), optional=optional_flag))
secret_volume = maybe(fixed({"secretName": names}, items=maybe(items), optional=optional_flag))
value_from = maybe(fixed(configMapKeyRef=selector, secretKeyRef=selector))
env = maybe(fixed({"name": st.just("V"), "valueFrom": value_from}))
env_from = maybe(fixed(configMapRef=selector, secretRef=selector, prefix=st.just("P_")))
container = maybe(
    fixed({"env": maybe(st.lists(env, max_size=4)), "envFrom": maybe(st.lists(env_from, max_size=3))})
)
containers = maybe(st.lists(container, max_size=3))
projection = maybe(
    fixed(
        configMap=keyed,
        secret=keyed,
        serviceAccountToken=maybe(fixed(path=st.just("t"))),
        downwardAPI=json_values,
    )
)
volume = maybe(
    fixed(
        configMap=keyed,
        secret=secret_volume,
        projected=maybe(fixed({"sources": maybe(st.lists(projection, max_size=3))})),
    )
)
pod_specs = maybe(
    fixed(
        {"containers": containers, "volumes": maybe(st.lists(volume, max_size=4))},
        initContainers=containers,
        ephemeralContainers=containers,
        imagePullSecrets=maybe(st.lists(fixed({"name": names}), max_size=2)),
    )
)

ANNOTATION_KEYS = [
    f"{prefix}/{suffix}"
    for prefix in ("kube-rehash.io", "example.com")
    for suffix in ("watch", "search", "ignore", "configmaps", "secrets", "match")
] + [
    "reloader.stakater.com/auto",
    "configmap.reloader.stakater.com/auto",
    "secret.reloader.stakater.com/auto",
    "configmap.reloader.stakater.com/reload",
    "secret.reloader.stakater.com/reload",
    "reloader.stakater.com/search",
    "reloader.stakater.com/match",
    "reloader.stakater.com/ignore",
    "wave.pusher.com/update-on-config-change",
    "wave.pusher.com/extra-configmaps",
    "wave.pusher.com/extra-secrets",
    "pod-reloader.cs.sap.com/configmaps",
    "pod-reloader.cs.sap.com/secrets",
]
list_values = st.lists(string_names, max_size=6).map(",".join)
annotation_values = st.one_of(truthy, list_values, anything)
annotation_maps = maybe(
    st.dictionaries(st.sampled_from(ANNOTATION_KEYS) | st.text(max_size=10), annotation_values, max_size=8)
)
discovery_settings = st.builds(
    DiscoverySettings,
    prefix=st.sampled_from(["kube-rehash.io", "example.com"]),
    compat=st.frozensets(st.sampled_from(["reloader", "wave", "pod-reloader"])),
)
namespaces = st.none() | st.sampled_from(["prod", "ns", "default"])


def check_invariants(found: Discovery, annotations: Any) -> None:
    keys = [(r.kind, r.name) for r in found.references]
    assert keys == sorted(keys)
    assert len(set(keys)) == len(keys)
    for reference in found.references:
        assert reference.kind in KINDS
        assert isinstance(reference.name, str)
        assert is_valid_name(reference.name)
        assert reference.keys is None or (
            len(reference.keys) > 0 and all(isinstance(k, str) and k for k in reference.keys)
        )
        assert isinstance(reference.optional, bool)
        assert reference.label() == f"{reference.kind}/{reference.name}"
    assert found.opted_in == bool(found.via)
    assert list(found.via) == sorted(set(found.via))
    if found.via:
        assert isinstance(annotations, dict)
        assert set(found.via) <= set(annotations)
    if not found.opted_in:
        assert found.references == ()
    assert (found.search_kinds == KINDS) == bool(found.match_annotations)
    assert found.search_kinds <= KINDS
    assert len(found.problems) <= MAX_PROBLEMS + 1
    assert all(isinstance(p, str) and p for p in found.problems)
    assert isinstance(found.ignored, bool)


@FUZZ
@given(annotations=json_values, pod_spec=json_values, config=discovery_settings, namespace=namespaces)
def test_discover_arbitrary_json(
    annotations: Any, pod_spec: Any, config: DiscoverySettings, namespace: Any
) -> None:
    found = discover(annotations, pod_spec, config, namespace=namespace)
    check_invariants(found, annotations)
    assert isinstance(source_ignored(annotations, config), bool)
    assert isinstance(source_matches(annotations, found), bool)


@pytest.mark.slow
@FUZZ
@given(annotations=annotation_maps, pod_spec=pod_specs, config=discovery_settings, namespace=namespaces)
def test_discover_shaped_input(
    annotations: Any, pod_spec: Any, config: DiscoverySettings, namespace: Any
) -> None:
    found = discover(annotations, pod_spec, config, namespace=namespace)
    check_invariants(found, annotations)
    assert found == discover(annotations, pod_spec, config, namespace=namespace)
    assert isinstance(source_ignored(annotations, config), bool)
    assert isinstance(source_matches(annotations, found), bool)


@pytest.mark.slow
@FUZZ
@given(pod_spec=pod_specs)
def test_watch_equals_pod_spec_references(pod_spec: Any) -> None:
    found = discover({"kube-rehash.io/watch": "true"}, pod_spec, DiscoverySettings())
    check_invariants(found, {"kube-rehash.io/watch": "true"})
    assert found.references == references_from_pod_spec(pod_spec)


@FUZZ
@given(pod_spec=pod_specs)
@pytest.mark.slow
def test_container_and_volume_order_does_not_matter(pod_spec: Any) -> None:
    if not isinstance(pod_spec, dict):
        return
    flipped = {k: list(reversed(v)) if isinstance(v, list) else v for k, v in pod_spec.items()}
    assert references_from_pod_spec(flipped) == references_from_pod_spec(pod_spec)


@FUZZ
@given(annotations=annotation_maps, pod_spec=pod_specs, config=discovery_settings)
@pytest.mark.slow
def test_adding_watch_only_adds_references(
    annotations: Any, pod_spec: Any, config: DiscoverySettings
) -> None:
    before = discover(annotations, pod_spec, config, namespace="prod")
    watched = {**(annotations if isinstance(annotations, dict) else {}), f"{config.prefix}/watch": "true"}
    after = discover(watched, pod_spec, config, namespace="prod")
    assert after.opted_in
    assert {r.label() for r in before.references} <= {r.label() for r in after.references}


@FUZZ
@given(listed=st.lists(string_names, max_size=8), pod_spec=pod_specs)
def test_explicit_list_names_are_required(listed: list[str], pod_spec: Any) -> None:
    found = discover({"kube-rehash.io/secrets": ",".join(listed)}, pod_spec, DiscoverySettings())
    by_name = {r.name: r for r in found.references if r.kind == "secret"}
    for item in (part.strip() for name in listed for part in name.split(",")):
        if item and is_valid_name(item):
            assert by_name[item].optional is False
            assert by_name[item].keys is None


@FUZZ
@given(annotations=json_values, config=discovery_settings)
def test_source_predicates_on_arbitrary_json(annotations: Any, config: DiscoverySettings) -> None:
    assert isinstance(source_ignored(annotations, config), bool)
    searching = discover({f"{config.prefix}/search": "true"}, None, config)
    assert isinstance(source_matches(annotations, searching), bool)
    if isinstance(annotations, dict):
        assert source_matches({**annotations, f"{config.prefix}/match": " true"}, searching)
        assert source_ignored({**annotations, f"{config.prefix}/ignore": "TRUE"}, config)
