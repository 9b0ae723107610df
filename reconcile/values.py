"""Value objects built for every listed object: dataclasses frozen to the type checker, not at run time.

Why this exists: `dataclass(frozen=True)` guards its fields at run time by making `__init__` store each one
through `object.__setattr__`, a call per field. That is several times the cost of a plain store (measured
on this project's machine, Python 3.11: about 1.2-2.0 µs against 0.24-0.44 µs for an object of seven
fields). A steady pass builds about a dozen such objects per workload and one per source: records,
references, source metadata, the listed view, its bookkeeping, the decision and its row. At 10x that is
about 200,000 objects, and the guard alone costs about 9% of the pass's CPU
(docs/engineering/performance-history.md, "Value
objects without the run-time guard").

`@value` keeps what the guard is for: `dataclass_transform(frozen_default=True)` tells `mypy --strict`
(`make lint`) that the fields are read-only, so an assignment to one is refused before the code runs rather
than when it runs. Instances compare, order and hash on their fields as frozen dataclasses do (`unsafe_hash`
gives them the same `__hash__`), and `dataclasses.replace` and `fields` work on them.

Objects built once per pass (the settings, the client's options, the rules, a kind's table) keep
`dataclass(frozen=True)` and its guard, which costs nothing there.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar, dataclass_transform, overload

T = TypeVar("T")


@overload
def value(cls: type[T], /) -> type[T]: ...
@overload
def value(*, order: bool = False, slots: bool = False) -> Callable[[type[T]], type[T]]: ...
@dataclass_transform(frozen_default=True, field_specifiers=(field,))
def value(
    cls: type[T] | None = None, /, *, order: bool = False, slots: bool = False
) -> type[T] | Callable[[type[T]], type[T]]:
    """`@value` or `@value(order=..., slots=...)`: a dataclass, read-only to the type checker, hashed
    on its fields."""

    def make(cls: type[T]) -> type[T]:
        return dataclass(cls, eq=True, unsafe_hash=True, order=order, slots=slots)

    return make if cls is None else make(cls)
