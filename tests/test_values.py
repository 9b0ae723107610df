"""`@value` (reconcile/values.py): dataclasses read-only to the type checker, equal, ordered and hashed on
their fields like frozen dataclasses, without the run-time guard that made each one costly to build."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from mypy import api as mypy_api

from reconcile.model.bookkeeping import SourceRecord
from reconcile.model.references import Reference
from reconcile.policy.outcome import Outcome
from reconcile.values import value

ROOT = Path(__file__).resolve().parent.parent


@value
class Plain:
    name: str
    keys: tuple[str, ...] = ()


@value(order=True, slots=True)
class Ordered:
    kind: str
    name: str


def test_a_value_is_equal_and_hashed_on_its_fields() -> None:
    assert Plain("a", ("x",)) == Plain("a", ("x",))
    assert Plain("a") != Plain("b")
    assert hash(Plain("a", ("x",))) == hash(Plain("a", ("x",)))
    assert len({Plain("a"), Plain("a"), Plain("b")}) == 2


def test_a_value_orders_on_its_fields_when_asked_and_only_then() -> None:
    assert sorted([Ordered("secret", "a"), Ordered("configmap", "b")]) == [
        Ordered("configmap", "b"),
        Ordered("secret", "a"),
    ]
    with pytest.raises(TypeError):
        Plain("a") < Plain("b")  # type: ignore[operator]  # noqa: B015


def test_a_value_keeps_slots_when_asked() -> None:
    assert not hasattr(Ordered("configmap", "a"), "__dict__")
    assert hasattr(Plain("a"), "__dict__")


def test_replace_and_fields_work_on_a_value() -> None:
    assert dataclasses.replace(Plain("a"), keys=("k",)) == Plain("a", ("k",))
    assert [f.name for f in dataclasses.fields(Ordered)] == ["kind", "name"]


def test_the_per_object_values_hash_as_before() -> None:
    """References and records go into sets and dict keys on every pass."""
    ref = Reference("configmap", "app", frozenset({"k"}), False)
    assert {ref: 1}[Reference("configmap", "app", frozenset({"k"}), False)] == 1
    record = SourceRecord("configmap", "app", "u1", "7", "whole", "t")
    assert record in {SourceRecord("configmap", "app", "u1", "7", "whole", "t")}
    assert Outcome("Deployment", "ns", "a", "in-sync", "") == Outcome("Deployment", "ns", "a", "in-sync", "")


def test_mypy_refuses_an_assignment_to_a_field_of_a_value(tmp_path: Path) -> None:
    """What the run-time guard did, `mypy --strict` (make lint) does before the code runs."""
    program = tmp_path / "assigns.py"
    program.write_text(
        "from reconcile.model.references import Reference\n"
        "from reconcile.values import value\n\n\n"
        "@value\n"
        "class Mine:\n"
        "    name: str\n\n\n"
        "Mine('a').name = 'b'\n"
        "Reference('configmap', 'app', None, False).optional = True\n"
        "Mine(1)\n"
    )
    out, _err, status = mypy_api.run(
        ["--strict", "--no-incremental", "--cache-dir", str(tmp_path / "cache"), str(program)]
    )
    assert status == 1, out
    assert f'{program}:10: error: Property "name" defined in "Mine" is read-only' in out
    assert f'{program}:11: error: Property "optional" defined in "Reference" is read-only' in out
    assert f'{program}:12: error: Argument 1 to "Mine" has incompatible type "int"' in out
    assert "Found 3 errors in 1 file" in out
