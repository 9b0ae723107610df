"""The model: what each workload depends on, what users did to it, and what a pass must therefore do.

Why independent of kube-rehash: the checker must judge the tool, so nothing here imports `reconcile`. The
dependencies are the world's fixed shape (tests/robustness/world.py); the hash of the referenced content
is recomputed from docs/hash.md's text (tests/reliability/helpers.py); the user's state of a workload
(opted in or out, a typo, a cooldown, a wave, notify mode, when its pod template last changed) is kept
from the operations the history applied, never read back from the server.

`expect` turns that into what a pass may do with one workload: no row, a `skipped` row with a reason
naming the cause, or a row of an eligible workload with its current content hash, whether a change is due
(the stored hash differs: the contract's decision rule, `stored_hash`), and which deferrals and
non-rollouts the pass's settings allow.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from tests.reliability.helpers import doc_combined, doc_source_token
from tests.robustness.world import BY_NAME, HASH, NAMESPACES, PREFIX, SHAPES, SOURCES, Shape, template_hash

SUPERSEDED = f"{PREFIX}/superseded-template-hash"
LAST_ROLLOUT = f"{PREFIX}/last-rollout"
COOLDOWN = timedelta(hours=1)

# A typo: the annotation it sets, its value, and what it makes of the workload: `skipped` naming the
# annotation (a malformed value of an annotation kube-rehash reads) or `unwatched` (a misspelled key: not
# an opt-in at all).
TYPOS: dict[str, tuple[str, str, str]] = {
    "watch-yes": (f"{PREFIX}/watch", "yes", "skipped"),
    "watch-key": (f"{PREFIX}/wacth", "true", "unwatched"),
    "min-interval": (f"{PREFIX}/min-interval", "soon", "skipped"),
    "window": (f"{PREFIX}/restart-window", "Mon 25:00-26:00", "skipped"),
    "wave": (f"{PREFIX}/wave", "first", "skipped"),
    "configmaps": (f"{PREFIX}/configmaps", "Bad Name", "skipped"),
}


@dataclass
class Workload:
    """The user's state of one workload, as the history's operations left it."""

    namespace: str
    shape: Shape
    exists: bool = True
    opted: str = "in"
    """`in` (watch "true"), `out` (no watch annotation) or `ignore` (ignore "true")."""
    typo: str | None = None
    cooldown: bool = False
    """min-interval 1h."""
    wave: bool = False
    """wave "1"."""
    notify: bool = False
    """on-change: notify."""
    template_step: int = -1
    """The step at which someone other than kube-rehash last changed its pod template."""

    @property
    def key(self) -> tuple[str, str]:
        return (self.namespace, self.shape.name)

    @property
    def opted_in(self) -> bool:
        if self.opted == "ignore":
            return True
        watched = self.opted == "in" and self.typo != "watch-key"
        return watched or bool(self.shape.explicit)


@dataclass
class Model:
    """The whole history's user state."""

    workloads: dict[tuple[str, str], Workload] = field(default_factory=dict)
    content_step: dict[tuple[str, str], int] = field(default_factory=dict)
    """(namespace, source) -> the step at which its data last changed (created, deleted, edited)."""
    live: set[str] = field(default_factory=set)
    """Namespaces that exist."""

    @classmethod
    def initial(cls) -> Model:
        workloads = {(ns, s.name): Workload(ns, s) for ns in NAMESPACES for s in SHAPES}
        return cls(workloads, {(ns, src): -1 for ns in NAMESPACES for src in SOURCES}, set(NAMESPACES))


@dataclass(frozen=True)
class PassSettings:
    """What of a pass's settings the model needs."""

    max_rollouts: int | None = None
    window_closed: bool = False
    notify: bool = False
    scope: tuple[str, ...] = ()
    faulty: bool = False
    """Failpoints or a concurrent writer were active: a `failed` row is allowed."""
    controllers: bool = False
    """Controllers start pods (the real server): a template changed after the content may already run it."""
    at: datetime = field(default_factory=lambda: datetime.now(UTC))


@dataclass(frozen=True)
class Expect:
    """What a pass may do with one workload."""

    row: str
    """`none` (no row), `skipped` (a row naming `because`), `none-or-skipped`, or `eligible`."""
    because: str = ""
    current: str | None = None
    stored: str | None = None
    notify: bool = False
    deferrals: tuple[str, ...] = ()
    """Phrases of the `deferred` reasons the settings allow."""
    pods_newer: bool = False
    """A `refresh` because the pods started after the change is allowed (its template changed since)."""

    @property
    def first_sight(self) -> bool:
        return self.row == "eligible" and self.stored is None

    @property
    def due(self) -> bool:
        return self.row == "eligible" and self.stored is not None and self.stored != self.current


def content_hash(shape: Shape, namespace: str, sources: dict[tuple[str, str], Any]) -> str | None:
    """docs/hash.md's value of the content `shape` reads in `namespace` (None: a required source is
    missing)."""
    records = []
    for name, (keys, optional) in shape.dependencies().items():
        obj = sources.get((namespace, name))
        if obj is None and not optional:
            return None
        records.append((SOURCES[name][0], name, doc_source_token(SOURCES[name][0], obj, keys, None)))
    return doc_combined(records, None)


def missing_required(shape: Shape, namespace: str, sources: dict[tuple[str, str], Any]) -> list[str]:
    return [
        f"{SOURCES[name][0]}/{name}"
        for name, (_, optional) in shape.dependencies().items()
        if not optional and sources.get((namespace, name)) is None
    ]


def annotations_of(obj: dict[str, Any] | None) -> dict[str, Any]:
    return ((obj or {}).get("metadata") or {}).get("annotations") or {}


def stored_hash(obj: dict[str, Any], notify: bool) -> str | None:
    """The contract's stored hash: the pod template's, else the metadata's; the metadata's in notify mode
    (it records there only) and while the template's hash is superseded (its pods started after the
    change the metadata's records)."""
    template, meta = template_hash(obj), annotations_of(obj).get(HASH)
    if meta and (notify or (template is not None and template == annotations_of(obj).get(SUPERSEDED))):
        return str(meta)
    return template or (str(meta) if meta else None)


def last_rollout(obj: dict[str, Any]) -> datetime | None:
    text = annotations_of(obj).get(LAST_ROLLOUT)
    try:
        return datetime.strptime(str(text), "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
    except ValueError:
        return None


def expect(
    model: Model,
    w: Workload,
    obj: dict[str, Any],
    sources: dict[tuple[str, str], Any],
    settings: PassSettings,
) -> Expect:
    """What a pass with `settings` may do with workload `w`, stored as `obj`, its sources as `sources`."""
    if not w.opted_in:
        return Expect("none-or-skipped" if w.typo else "none")
    if w.typo is not None and TYPOS[w.typo][2] == "skipped":
        return Expect("skipped", TYPOS[w.typo][0])
    if w.opted == "ignore":
        return Expect("skipped", "ignored")
    missing = missing_required(w.shape, w.namespace, sources)
    if missing:
        return Expect("skipped", missing[0])
    notify = w.notify or settings.notify
    current = content_hash(w.shape, w.namespace, sources)
    deferrals = []
    if settings.max_rollouts is not None and w.shape.rolls_pods and not notify:
        deferrals.append("over --max-rollouts")
    if settings.window_closed and w.shape.rolls_pods and not notify:
        deferrals.append("outside restart window")
    done = last_rollout(obj)
    if w.cooldown and not notify and done is not None and settings.at - done < COOLDOWN:
        deferrals.append("min-interval holds it")
    if w.wave and not notify:
        deferrals.append("wave 1 waits for")
    changed = [
        model.content_step[(w.namespace, name)]
        for name in w.shape.dependencies()
        if model.content_step[(w.namespace, name)] >= 0
    ]
    pods_newer = settings.controllers and bool(changed) and w.template_step >= max(changed)
    return Expect(
        "eligible",
        current=current,
        stored=stored_hash(obj, notify),
        notify=notify,
        deferrals=tuple(deferrals),
        pods_newer=pods_newer,
    )


__all__ = ["BY_NAME", "Expect", "Model", "PassSettings", "Workload", "content_hash", "expect", "stored_hash"]
