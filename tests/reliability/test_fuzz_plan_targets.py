"""Hypothesis fuzzing of `read_target` (arbitrary JSON-shaped objects) and of the decision table.

read_target must never raise and always yield a consistent slim view; decide/apply_budget/build_patch
must never raise on any Target it yields, and only write our own annotation paths.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reconcile.model.annotations import Annotations
from reconcile.model.bookkeeping import SourceRecord, format_records
from reconcile.model.hashing import ABSENT
from reconcile.model.kinds import BUILTIN_KINDS
from reconcile.model.references import DiscoverySettings
from reconcile.model.workload import read_target
from reconcile.policy.audit import CHANGE_CAUSE
from reconcile.policy.decision import WRITING_ACTIONS, Action, Observed
from reconcile.policy.limits import apply_budget
from reconcile.policy.patches import build_patch
from reconcile.policy.table import decide, decide_early

SETTINGS = DiscoverySettings(prefix="kube-rehash.io", compat=frozenset({"reloader", "wave", "pod-reloader"}))
KEYS = Annotations()
NOW = datetime(2025, 1, 1, tzinfo=UTC)

json_scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=12)
json_values = st.recursive(
    json_scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4),
    max_leaves=20,
)
our_keys = st.sampled_from(
    [
        "kube-rehash.io/watch",
        "kube-rehash.io/configmaps",
        "kube-rehash.io/secrets",
        "kube-rehash.io/search",
        "kube-rehash.io/ignore",
        "kube-rehash.io/min-interval",
        "kube-rehash.io/config-hash",
        "kube-rehash.io/sources",
        "kube-rehash.io/last-rollout",
        "kube-rehash.io/run-on-change",
        "reloader.stakater.com/auto",
        "wave.pusher.com/extra-configmaps",
    ]
)
annotation_values = json_values | st.sampled_from(
    ["true", "a,b", ",,", "10m", "v1:abc", "2024-01-01T00:00:00Z"]
)
annotations = st.dictionaries(our_keys | st.text(max_size=8), annotation_values, max_size=6) | json_values
pod_specs = st.fixed_dictionaries(
    {},
    optional={
        "containers": json_values
        | st.lists(
            st.fixed_dictionaries(
                {},
                optional={
                    "envFrom": json_values
                    | st.lists(
                        st.fixed_dictionaries({"configMapRef": st.fixed_dictionaries({"name": json_values})})
                    ),
                    "env": json_values,
                },
            ),
            max_size=3,
        ),
        "volumes": json_values,
    },
)
templates = st.fixed_dictionaries(
    {},
    optional={
        "metadata": json_values | st.fixed_dictionaries({"annotations": annotations}),
        "spec": pod_specs,
    },
)
objects = st.fixed_dictionaries(
    {},
    optional={
        "metadata": json_values
        | st.fixed_dictionaries(
            {},
            optional={
                "name": json_values,
                "namespace": json_values,
                "uid": json_values,
                "resourceVersion": json_values,
                "annotations": annotations,
                "ownerReferences": json_values,
            },
        ),
        "spec": json_values
        | st.fixed_dictionaries(
            {},
            optional={
                "template": json_values | templates,
                "jobTemplate": st.fixed_dictionaries(
                    {"spec": st.fixed_dictionaries({"template": templates})}
                ),
                "suspend": json_values,
                "paused": json_values,
                "updateStrategy": json_values,
            },
        ),
    },
)
kinds = st.sampled_from(BUILTIN_KINDS)
records = st.lists(
    st.builds(
        SourceRecord,
        st.sampled_from(["configmap", "secret"]),
        st.text(min_size=1, max_size=6),
        st.text(max_size=4),
        st.text(max_size=4),
        st.sampled_from(["*", "abc"]),
        st.sampled_from([ABSENT, "00", "ff"]),
    ),
    max_size=4,
    unique_by=lambda r: (r.kind, r.name),
).map(lambda rs: tuple(sorted(rs)))
observed = st.builds(
    Observed,
    st.sampled_from(["v1:aa", "v1:bb", "v1k:cc"]),
    records,
    st.sampled_from(["", "fp1"]),
    st.lists(st.text(min_size=1, max_size=5), max_size=30).map(tuple) | st.just(()),
)

FUZZ = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@FUZZ
@given(obj=objects | json_values.filter(lambda v: isinstance(v, dict)), kind=kinds)
def test_read_target_never_raises_and_yields_a_well_typed_view(obj: Any, kind: Any) -> None:
    target = read_target(obj, kind, SETTINGS)
    assert isinstance(target.namespace, str) and isinstance(target.name, str)
    assert target.template_hash is None or (isinstance(target.template_hash, str) and target.template_hash)
    assert isinstance(target.template_present, bool)
    book = target.bookkeeping
    assert book.config_hash is None or isinstance(book.config_hash, str)
    assert all(isinstance(p, str) for p in target.problems)
    for ref in target.discovery.references:
        assert ref.kind in ("configmap", "secret") and isinstance(ref.name, str) and ref.name


@FUZZ
@given(obj=objects, kind=kinds, seen=observed, first_sight=st.booleans(), age=st.integers(0, 10_000))
def test_decisions_and_patches_never_raise_and_only_touch_our_annotations(
    obj: Any, kind: Any, seen: Observed, first_sight: bool, age: int
) -> None:
    target = read_target(obj, kind, SETTINGS)
    early = decide_early(target)
    decision = early or decide(
        target, seen, now=NOW + timedelta(seconds=age), first_sight_rollout=first_sight
    )
    assert decision.action in set(Action)
    assert isinstance(decision.reason, str) and decision.reason and len(decision.reason) < 4000
    if early is None and seen.missing_required:
        assert decision.action is Action.SKIPPED
    (budgeted,) = apply_budget([(target, decision)], 0)
    if decision.action is Action.ROLLOUT and kind.rolls_pods:
        assert budgeted[1].action is Action.DEFERRED
    if decision.action in WRITING_ACTIONS:
        assert target.template_present  # nothing is written where there is no template to patch
        ops = build_patch(target, decision, seen, now=NOW, keys=KEYS)
        ours = {KEYS.config_hash, KEYS.sources, KEYS.last_rollout, KEYS.rollout, CHANGE_CAUSE}
        for op in ops:
            assert op["op"] in ("test", "add")
            if op["op"] == "add":
                path = op["path"]
                assert path.endswith(tuple(k.replace("/", "~1") for k in ours)) or path.endswith(
                    ("/annotations", "/metadata")
                ), path
                if isinstance(op["value"], dict):
                    flat = op["value"].get("annotations", op["value"])
                    assert set(flat) <= ours
        assert any(op["op"] == "test" for op in ops)  # every write is guarded


@FUZZ
@given(rs=records, fp=st.sampled_from(["", "fp", "0123456789ab"]))
def test_bookkeeping_records_round_trip_through_their_annotation(
    rs: tuple[SourceRecord, ...], fp: str
) -> None:
    obj = {
        "metadata": {
            "name": "w",
            "annotations": {"kube-rehash.io/watch": "true", KEYS.sources: format_records(rs, fp)},
        },
        "spec": {"template": {}},
    }
    book = read_target(obj, BUILTIN_KINDS[0], SETTINGS).bookkeeping
    assert book.records == rs and book.key_fingerprint == fp
