"""Which ConfigMaps and Secrets a workload depends on, read from its annotations and pod spec.

Discovery is pure (no API calls) so every later stage — fetching, hashing, deciding — works from one
merged, sorted list of references, and so the rules can be tested exhaustively without a cluster. Input
comes straight from the API and may be malformed: nothing here raises on bad data; what cannot be used is
left out and described in `Discovery.problems`.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from sys import intern
from typing import Any, Literal

from reconcile.model.choices import OnIneffective, Restart
from reconcile.model.knobs import SpecReference
from reconcile.model.pointer import parse_path, resolve_all
from reconcile.model.selectors import SelectorError, parse_selector
from reconcile.values import value

SourceKind = Literal["configmap", "secret"]
KINDS: frozenset[SourceKind] = frozenset({"configmap", "secret"})
NONE: frozenset[Any] = frozenset()
"""The one empty set every workload and source without flags shares (each `frozenset()` is a new 216 B)."""
MAX_PROBLEMS = 10  # problems reported per workload; the rest are counted
MAX_NAME = 253
_NAME = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
_QUOTE_LIMIT = 64

RELOADER_IGNORE = "reloader.stakater.com/ignore"
WAVE_EXTRA_CONFIGMAPS = "wave.pusher.com/extra-configmaps"
WAVE_EXTRA_SECRETS = "wave.pusher.com/extra-secrets"
_CONFIGMAPS: frozenset[SourceKind] = frozenset({"configmap"})
_SECRETS: frozenset[SourceKind] = frozenset({"secret"})

# Per compat rule, as in each peer: flags (key, kinds then discovered from the pod spec, match annotation
# turned on) and explicit lists (key, kind). Compat lists name exactly their sources: no pod-spec discovery.
_Flag = tuple[str, frozenset[SourceKind], str | None]
_COMPAT_FLAGS: dict[str, tuple[_Flag, ...]] = {
    "reloader": (
        ("reloader.stakater.com/auto", KINDS, None),
        ("configmap.reloader.stakater.com/auto", _CONFIGMAPS, None),
        ("secret.reloader.stakater.com/auto", _SECRETS, None),
        ("reloader.stakater.com/search", frozenset(), "reloader.stakater.com/match"),
    ),
    "wave": (("wave.pusher.com/update-on-config-change", KINDS, None),),
}
_COMPAT_LISTS: dict[str, tuple[tuple[str, SourceKind], ...]] = {
    "reloader": (
        ("configmap.reloader.stakater.com/reload", "configmap"),
        ("secret.reloader.stakater.com/reload", "secret"),
    ),
    "pod-reloader": (
        ("pod-reloader.cs.sap.com/configmaps", "configmap"),
        ("pod-reloader.cs.sap.com/secrets", "secret"),
    ),
}
# Where each peer's annotations live (their key's domain), to name a peer's annotations on workloads a pass
# with that compat rule off ignores.
PEER_DOMAINS: dict[str, tuple[str, ...]] = {
    "reloader": ("reloader.stakater.com", "configmap.reloader.stakater.com", "secret.reloader.stakater.com"),
    "wave": ("wave.pusher.com",),
    "pod-reloader": ("pod-reloader.cs.sap.com",),
}
_PEER_OF_DOMAIN = {domain: peer for peer, domains in PEER_DOMAINS.items() for domain in domains}
# The compat vocabulary (config `compat`, its schema enum): the peers the tables above know, in their order.
COMPAT_NAMES: tuple[str, ...] = tuple(dict.fromkeys((*_COMPAT_FLAGS, *_COMPAT_LISTS)))
COMPAT_RULES = frozenset(COMPAT_NAMES)

_KEY_REFS: tuple[tuple[str, SourceKind], ...] = (("configMapKeyRef", "configmap"), ("secretKeyRef", "secret"))
_ENV_FROM: tuple[tuple[str, SourceKind], ...] = (("configMapRef", "configmap"), ("secretRef", "secret"))
_PROJECTED: tuple[tuple[str, SourceKind], ...] = (("configMap", "configmap"), ("secret", "secret"))
_CONTAINER_FIELDS = ("containers", "initContainers", "ephemeralContainers")
CSI_DRIVER = "secrets-store.csi.k8s.io"
"""The Secrets Store CSI driver: its `csi` volumes name a SecretProviderClass (model/csi.py)."""
MOUNT_KIND = "secretproviderclass"
"""The records' kind of a SecretProviderClass's mounted versions (`secretproviderclass/<name>`)."""


@value(order=True, slots=True)
class Reference:
    """One ConfigMap or Secret a workload uses, merged over all its uses."""

    kind: SourceKind
    name: str
    keys: frozenset[str] | None
    """None: the whole object is used; else only these keys (never empty)."""
    optional: bool
    """True only when every use is optional: a missing source then hashes as absent."""

    def label(self) -> str:
        """The short form used in reports, e.g. "configmap/app"."""
        return f"{self.kind}/{self.name}"


@dataclass(frozen=True)
class DiscoverySettings:
    """The configurable part of discovery."""

    prefix: str = "kube-rehash.io"
    """Prefix of the tool's own annotation keys."""
    compat: frozenset[str] = frozenset()
    """Peer annotation sets honoured in addition to the own ones: a subset of COMPAT_RULES."""
    restart: Restart = Restart.PATCH
    """The config's `restart`: the strategy of a workload without the `restart` annotation (list facts)."""
    on_ineffective: OnIneffective = OnIneffective.REPORT
    """The config's `onIneffective`: of a workload without the `on-ineffective` annotation (list facts)."""

    def __post_init__(self) -> None:
        if not self.prefix or "/" in self.prefix:
            raise ValueError(f"annotation prefix {self.prefix!r} must be non-empty and contain no '/'")
        unknown = set(self.compat) - COMPAT_RULES
        if unknown:
            raise ValueError(f"unknown compat rules {sorted(unknown)}; known: {sorted(COMPAT_RULES)}")


@functools.lru_cache(maxsize=256)
def shared(value: tuple[str, ...]) -> tuple[str, ...]:
    """One tuple object per distinct value (the cache returns the first one it kept): thousands of
    workloads opted in by the same annotation keys hold one `via` tuple, not one each (the pass keeps every
    listed workload until it ends). Bounded like the other such caches (`parse_facts`, `inputs_digest`)."""
    return value


@value(slots=True)
class Discovery:
    """What a workload's annotations and pod spec say about its dependencies."""

    opted_in: bool
    """Some opt-in annotation (own, or of an enabled compat rule) is present."""
    ignored: bool
    """`<prefix>/ignore: "true"` is set; independent of `opted_in`."""
    references: tuple[Reference, ...]
    """Merged per (kind, name), sorted by (kind, name); empty unless opted in."""
    match_annotations: frozenset[str]
    """Search mode: a source with any of these annotations "true" is a dependency
    (the whole object, only while it exists)."""
    search_kinds: frozenset[SourceKind]
    """The source kinds search mode covers; empty when search mode is off."""
    problems: tuple[str, ...]
    """Human-readable descriptions of input that was left out (at most MAX_PROBLEMS, then a count)."""
    via: tuple[str, ...]
    """The annotation keys that opted the workload in, sorted."""
    selectors: tuple[tuple[SourceKind, str], ...] = ()
    """Label-selected sources (`<prefix>/configmap-selector`, `secret-selector`): (kind, canonical
    selector); every matching source of the namespace is a dependency (the whole object)."""
    provider_classes: tuple[str, ...] = ()
    """SecretProviderClasses mounted through `csi` volumes of the Secrets Store CSI driver (model/csi.py)."""
    searched: tuple[Reference, ...] | None = None
    """Reloader's search mode (`reloader.stakater.com/search` without the tool's own): only these, the
    sources the pod spec references, count, each while its source carries a match annotation; None: every
    matching source of the namespace counts (the tool's own `search`)."""
    selector_errors: tuple[str, ...] = ()
    """Invalid selector annotations, each naming the annotation: the workload fails."""
    inputs: str = ""
    """Digest of the annotations discovery consulted that are present (key and value): equal digests mean
    the annotations would be read the same way, so only the pod spec can change the references. Absent
    ones are left out, so reading one more annotation in a later release keeps today's records trusted."""
    malformed_opt_in: bool = False
    """An opt-in annotation is present but malformed (e.g. `watch: "yes"`): the workload gets a row
    (`skipped`, naming it) rather than being left out in silence."""

    @property
    def wants_row(self) -> bool:
        """Whether a pass reports this workload: opted in, or trying to be with a malformed annotation."""
        return self.opted_in or self.malformed_opt_in


@dataclass
class _Use:
    whole: bool = False
    keys: set[str] = field(default_factory=set)
    optional: bool = True


@dataclass
class _Collector:
    """Merges uses per (kind, name) and gathers problems."""

    uses: dict[tuple[SourceKind, str], _Use] = field(default_factory=dict)
    provider_classes: set[str] = field(default_factory=set)
    problems: list[str] = field(default_factory=list)
    consulted: dict[str, Any] = field(default_factory=dict)

    def inputs_digest(self) -> str:
        text = json.dumps(sorted(self.consulted.items()), separators=(",", ":"), default=repr)
        return hashlib.blake2b(text.encode(), digest_size=8).hexdigest()

    def add_named(
        self, kind: SourceKind, name: Any, keys: frozenset[str] | None, optional: bool, where: str
    ) -> None:
        """Merge one use (keys None: whole object), reporting a missing or invalid name instead."""
        if not isinstance(name, str) or not name:
            self.problems.append(f"{where}: missing name")
        elif not is_valid_name(name):
            self.problems.append(f"{where}: {quote_text(name)} is not a valid name")
        else:
            use = self.uses.setdefault((kind, name), _Use())
            use.whole = use.whole or keys is None
            use.keys |= keys or frozenset()
            use.optional = use.optional and optional

    def references(self) -> tuple[Reference, ...]:
        return tuple(
            Reference(kind, name, None if use.whole else frozenset(use.keys), use.optional)
            for (kind, name), use in sorted(self.uses.items(), key=lambda item: item[0])
        )


def is_valid_name(name: str) -> bool:
    """Whether `name` is an RFC 1123 DNS subdomain, the rule for ConfigMap and Secret names."""
    return len(name) <= MAX_NAME and _NAME.fullmatch(name) is not None


def quote_text(text: str) -> str:
    """Quote input for a problem message: escaped and shortened, so odd input cannot flood a report."""
    if len(text) > _QUOTE_LIMIT:
        return json.dumps(text[:_QUOTE_LIMIT]) + "…"
    return json.dumps(text)


def describe_type(value: Any) -> str:
    """The JSON name of a value's type, for problem messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, dict):
        return "object"
    if isinstance(value, list):
        return "array"
    return "string" if isinstance(value, str) else type(value).__name__


def is_true(value: Any) -> bool:
    """The annotation convention: the string "true", any case, surrounding whitespace ignored."""
    return isinstance(value, str) and value.strip().lower() == "true"


BOOLEANS = ("true", "false")
"""The only values of a boolean annotation on a workload: anything else is malformed, never a default."""
_REGEX = re.compile(r"[*+?^$|()\[\]{}\\]")
RELOADER_RELOAD_LISTS = frozenset(
    {"configmap.reloader.stakater.com/reload", "secret.reloader.stakater.com/reload"}
)


def split_list(value: str) -> list[str]:
    """Split a comma list: items stripped, empty ones skipped, duplicates dropped (first kept)."""
    return list(dict.fromkeys(item.strip() for item in value.split(",") if item.strip()))


def cap_problems(problems: list[str]) -> tuple[str, ...]:
    """Keep the first MAX_PROBLEMS problems and count the rest."""
    if len(problems) <= MAX_PROBLEMS:
        return tuple(problems)
    return (*problems[:MAX_PROBLEMS], f"and {len(problems) - MAX_PROBLEMS} more problems")


def iter_mappings(value: Any) -> Iterator[tuple[int, dict[str, Any]]]:
    """The (index, item) pairs of a list that are mappings; anything else yields nothing."""
    if isinstance(value, list):
        for index, item in enumerate(value):
            if isinstance(item, dict):
                yield index, item


def is_optional(selector: dict[str, Any]) -> bool:
    """Kubernetes' `optional` field: only a literal true makes a use optional."""
    return selector.get("optional") is True


def collect_item_keys(items: Any, where: str, out: _Collector) -> frozenset[str] | None:
    """The keys a volume projects: None (whole object) when `items` is absent or empty, as in Kubernetes."""
    if not isinstance(items, list) or not items:
        return None
    keys: set[str] = set()
    for index, item in enumerate(items):
        key = item.get("key") if isinstance(item, dict) else None
        if isinstance(key, str) and key:
            keys.add(key)
        else:
            out.problems.append(f"{where}.items[{index}]: missing key")
    return frozenset(keys) or None  # nothing usable listed: hash the whole object rather than nothing


def scan_containers(spec: dict[str, Any], kinds: frozenset[SourceKind], out: _Collector) -> None:
    """env keyRefs and envFrom of every container list."""
    for list_name in _CONTAINER_FIELDS:
        for index, container in iter_mappings(spec.get(list_name)):
            where = f"pod spec {list_name}[{index}]"
            for env_index, env in iter_mappings(container.get("env")):
                value_from = env.get("valueFrom")
                if not isinstance(value_from, dict):
                    continue
                for selector_name, kind in _KEY_REFS:
                    selector = value_from.get(selector_name)
                    if kind not in kinds or not isinstance(selector, dict):
                        continue
                    at = f"{where}.env[{env_index}].valueFrom.{selector_name}"
                    key = selector.get("key")
                    if not isinstance(key, str) or not key:
                        out.problems.append(f"{at}: missing key")
                        continue
                    out.add_named(kind, selector.get("name"), frozenset({key}), is_optional(selector), at)
            for from_index, env_from in iter_mappings(container.get("envFrom")):
                for selector_name, kind in _ENV_FROM:
                    selector = env_from.get(selector_name)
                    if kind in kinds and isinstance(selector, dict):
                        at = f"{where}.envFrom[{from_index}].{selector_name}"
                        out.add_named(kind, selector.get("name"), None, is_optional(selector), at)


def scan_volumes(spec: dict[str, Any], kinds: frozenset[SourceKind], out: _Collector) -> None:
    """configMap, secret and projected volumes (not service-account tokens, downwardAPI or others)."""
    for index, volume in iter_mappings(spec.get("volumes")):
        where = f"pod spec volumes[{index}]"
        sources: list[tuple[str, SourceKind, str, Any]] = [
            (f"{where}.configMap", "configmap", "name", volume.get("configMap")),
            (f"{where}.secret", "secret", "secretName", volume.get("secret")),
        ]
        projected = volume.get("projected")
        if isinstance(projected, dict):
            for source_index, source in iter_mappings(projected.get("sources")):
                for field_name, kind in _PROJECTED:
                    at = f"{where}.projected.sources[{source_index}].{field_name}"
                    sources.append((at, kind, "name", source.get(field_name)))
        add_provider_class(volume.get("csi"), f"{where}.csi", out)
        for at, kind, name_field, selector in sources:
            if kind in kinds and isinstance(selector, dict):
                keys = collect_item_keys(selector.get("items"), at, out)
                out.add_named(kind, selector.get(name_field), keys, is_optional(selector), at)


def add_provider_class(csi: Any, where: str, out: _Collector) -> None:
    """The SecretProviderClass of a Secrets Store CSI volume (other drivers are not sources)."""
    if not isinstance(csi, dict) or csi.get("driver") != CSI_DRIVER:
        return
    attributes = csi.get("volumeAttributes")
    name = attributes.get("secretProviderClass") if isinstance(attributes, dict) else None
    if isinstance(name, str) and is_valid_name(name):
        out.provider_classes.add(name)
    else:
        out.problems.append(f"{where}.volumeAttributes.secretProviderClass: missing or invalid name")


def scan_pod_spec(pod_spec: Any, kinds: frozenset[SourceKind], out: _Collector) -> None:
    """Add every use of a source of one of `kinds` in a pod spec."""
    if not kinds or pod_spec is None:
        return
    if not isinstance(pod_spec, dict):
        out.problems.append(f"pod spec: expected an object, got {describe_type(pod_spec)}")
        return
    scan_containers(pod_spec, kinds, out)
    scan_volumes(pod_spec, kinds, out)


def references_from_pod_spec(pod_spec: Any) -> tuple[Reference, ...]:
    """The merged references of a pod spec alone, sorted by (kind, name); unusable entries are dropped."""
    out = _Collector()
    scan_pod_spec(pod_spec, KINDS, out)
    return out.references()


def read_annotations(annotations: Any, out: _Collector) -> dict[str, Any]:
    if annotations is None:
        return {}
    if not isinstance(annotations, dict):
        out.problems.append(f"annotations: expected an object, got {describe_type(annotations)}")
        return {}
    return annotations


def read_string(annotations: dict[str, Any], key: str, out: _Collector) -> str | None:
    """An annotation's string value; None when absent, and reported when not a string. Only annotations
    present count in the inputs digest, so a release that reads a new annotation leaves the records of
    workloads without it trusted."""
    if key not in annotations:
        return None
    out.consulted[key] = annotations[key]
    value = annotations[key]
    if not isinstance(value, str):
        out.problems.append(f"{key}: expected a string, got {describe_type(value)}")
        return None
    return value


def read_flag(annotations: dict[str, Any], key: str, out: _Collector) -> bool:
    """A boolean annotation: True for "true"; absent or "false" is False; anything else is reported."""
    value = read_string(annotations, key, out)
    if value is not None and value not in BOOLEANS:
        out.problems.append(f'{key}: {quote_text(value)} is not "true" or "false"')
    return value == "true"


def add_listed(annotations: dict[str, Any], key: str, kind: SourceKind, out: _Collector) -> bool:
    """Add the references an explicit list names; True when the list has any item (opt-in).

    The tool's own lists name required sources (a missing one skips the workload: its pods could not
    start). Reloader's name sources that trigger it: as in Reloader, one that does not exist yet leaves
    the others working, hashed as absent until it appears (the pod spec still makes a source it reads
    required). Reloader accepts regular expressions in its reload lists; they are not supported here, and
    reported (the workload is then skipped) rather than adopted tracking nothing."""
    value = read_string(annotations, key, out)
    items = split_list(value) if value is not None else []
    reloader = key in RELOADER_RELOAD_LISTS
    for item in items:
        if reloader and not is_valid_name(item) and _REGEX.search(item):
            out.problems.append(f"{key}: {quote_text(item)}: regex patterns are not supported; list names")
            continue
        out.add_named(kind, item, None, reloader, key)
    return bool(items)


def add_wave_extras(
    annotations: dict[str, Any], key: str, kind: SourceKind, namespace: str | None, out: _Collector
) -> None:
    """wave's extra lists: `name` or `namespace/name`; only the workload's own namespace can be honoured.

    As in wave, these sources are not required: a missing one hashes as absent.
    """
    value = read_string(annotations, key, out)
    for item in split_list(value) if value is not None else []:
        parts = [part.strip() for part in item.split("/")]
        if len(parts) > 2 or not all(parts):
            out.problems.append(f"{key}: {quote_text(item)} is not a name or namespace/name")
        elif len(parts) == 1 or parts[0] == namespace:
            out.add_named(kind, parts[-1], None, True, key)
        elif namespace is None:
            out.problems.append(f"{key}: {quote_text(item)} names a namespace but the workload's is unknown")
        else:
            out.problems.append(
                f"{key}: {quote_text(item)} is outside the workload's namespace {quote_text(namespace)}"
            )


@functools.cache
def opt_in_rules(
    settings: DiscoverySettings,
) -> tuple[tuple[_Flag, ...], tuple[tuple[str, SourceKind], ...], int]:
    """The opt-in flags, the listing annotations, and how many of the lists are the tool's own (those
    also turn on pod-spec discovery)."""
    prefix = settings.prefix
    flags: list[_Flag] = [(f"{prefix}/watch", KINDS, None), (f"{prefix}/search", KINDS, f"{prefix}/match")]
    lists: list[tuple[str, SourceKind]] = [
        (f"{prefix}/configmaps", "configmap"),
        (f"{prefix}/secrets", "secret"),
    ]
    own_lists = len(lists)
    for rule in sorted(settings.compat):
        flags += _COMPAT_FLAGS.get(rule, ())
        lists += _COMPAT_LISTS.get(rule, ())
    return tuple(flags), tuple(lists), own_lists


@functools.cache
def opt_in_keys(settings: DiscoverySettings) -> frozenset[str]:
    """Annotation keys of which a workload needs at least one to be opted in: a cheap first filter."""
    flags, lists, _ = opt_in_rules(settings)
    keys = frozenset(key for key, *_ in flags) | frozenset(key for key, _ in lists)
    return keys | frozenset(key for key, _ in selector_rules(settings))


def selector_rules(settings: DiscoverySettings) -> tuple[tuple[str, SourceKind], ...]:
    """The label-selector annotations and the kind each selects (they opt in, like the explicit lists)."""
    return (
        (f"{settings.prefix}/configmap-selector", "configmap"),
        (f"{settings.prefix}/secret-selector", "secret"),
    )


def add_selectors(
    annotations: dict[str, Any], settings: DiscoverySettings, out: _Collector
) -> tuple[list[str], list[tuple[SourceKind, str]], list[str]]:
    """The selector annotations present (opt-in keys), the valid selectors as (kind, canonical text), and
    a message per invalid one naming the annotation."""
    via: list[str] = []
    selectors: list[tuple[SourceKind, str]] = []
    errors: list[str] = []
    for key, kind in selector_rules(settings):
        value = read_string(annotations, key, out)
        if value is None:
            continue
        via.append(key)
        try:
            selectors.append((kind, parse_selector(value).text))
        except SelectorError as exc:
            errors.append(f"{key}: invalid label selector: {exc}")
    return via, selectors, errors


def discover(
    annotations: Any, pod_spec: Any, settings: DiscoverySettings, *, namespace: str | None = None
) -> Discovery:
    """Read a workload's opt-in annotations and, where they ask for it, its pod spec."""
    out = _Collector()
    ann = read_annotations(annotations, out)
    prefix, compat = settings.prefix, settings.compat
    via: list[str] = []
    scan_kinds: set[SourceKind] = set()
    match: set[str] = set()

    def flag(key: str) -> bool:
        return read_flag(ann, key, out)

    flags, lists, own_lists = opt_in_rules(settings)
    namespace_search = False
    for key, kinds, match_key in flags:
        if flag(key):
            via.append(key)
            scan_kinds |= kinds
            if match_key is not None:
                match.add(match_key)
                namespace_search = namespace_search or bool(kinds)
    for index, (key, kind) in enumerate(lists):
        if add_listed(ann, key, kind, out):
            via.append(key)
            if index < own_lists:
                scan_kinds |= KINDS
    malformed_opt_in = bool(out.problems)  # so far, only the opt-in annotations were read
    selector_via, selectors, selector_errors = add_selectors(ann, settings, out)
    if selector_via:
        via += selector_via
        scan_kinds |= KINDS
    if "wave" in compat and via:
        add_wave_extras(ann, WAVE_EXTRA_CONFIGMAPS, "configmap", namespace, out)
        add_wave_extras(ann, WAVE_EXTRA_SECRETS, "secret", namespace, out)
    ignored = flag(f"{prefix}/ignore")
    scan_pod_spec(pod_spec, frozenset(scan_kinds), out)
    searched = None if namespace_search or not match else referenced_sources(pod_spec, out)
    return Discovery(
        opted_in=bool(via),
        ignored=ignored,
        references=out.references(),
        match_annotations=frozenset(match) if match else NONE,
        search_kinds=KINDS if match else NONE,
        problems=cap_problems(out.problems),
        via=shared(tuple(sorted(intern(key) for key in via))),
        selectors=tuple(sorted(selectors)),
        selector_errors=tuple(selector_errors),
        searched=searched,
        provider_classes=tuple(sorted(out.provider_classes)),
        inputs=intern(out.inputs_digest()),
        malformed_opt_in=malformed_opt_in,
    )


@functools.cache
def consulted_keys(settings: DiscoverySettings) -> tuple[str, ...]:
    """Every annotation `discover` may read when it has no pod spec to scan."""
    flags, lists, _ = opt_in_rules(settings)
    keys = [key for key, *_ in flags] + [key for key, _ in lists]
    keys += [key for key, _ in selector_rules(settings)] + [f"{settings.prefix}/ignore"]
    if "wave" in settings.compat:
        keys += [WAVE_EXTRA_CONFIGMAPS, WAVE_EXTRA_SECRETS]
    return tuple(keys)


def discover_listed(annotations: Any, settings: DiscoverySettings, *, namespace: str) -> Discovery:
    """`discover(annotations, None, settings, namespace=namespace)`, shared by the workloads whose consulted
    annotations are the same (most opt in alike, e.g. `watch: "true"`): a listed workload's discovery
    depends on nothing else, and a `Discovery` is immutable. Odd values are discovered uncached."""
    if not isinstance(annotations, dict):
        return discover(annotations, None, settings, namespace=namespace)
    present = tuple((key, annotations[key]) for key in consulted_keys(settings) if key in annotations)
    if not all(isinstance(value, str) for _, value in present):
        return discover(annotations, None, settings, namespace=namespace)
    # Only wave's extra lists read the namespace; leaving it out otherwise lets namespaces share entries.
    return _discover_consulted(present, settings, namespace if "wave" in settings.compat else None)


@functools.lru_cache(maxsize=1024)
def _discover_consulted(
    present: tuple[tuple[str, str], ...], settings: DiscoverySettings, namespace: str | None
) -> Discovery:
    return discover(dict(present), None, settings, namespace=namespace)


def peer_of(key: str) -> str | None:
    """The peer (compat rule name) whose annotation `key` is, if any."""
    return _PEER_OF_DOMAIN.get(key.partition("/")[0]) if "/" in key else None


def foreign_peers(keys: Iterable[str], compat: frozenset[str]) -> set[str]:
    """The peers (compat rule names) whose annotations are among these keys while their rule is off. Every
    listed workload's annotation keys pass here, and nearly all are no peer's (`kube-rehash.io/...`,
    `deployment.kubernetes.io/revision`): a key once found to be none is remembered (`_NO_PEER`), and
    only the others are looked at."""
    unseen = set(keys) - _NO_PEER
    if not unseen:
        return set()
    peers = set()
    for key in unseen:
        peer = peer_of(key)
        if peer is None:
            if len(_NO_PEER) < _NO_PEER_MAX:
                _NO_PEER.add(key)
        elif peer not in compat:
            peers.add(peer)
    return peers


_NO_PEER: set[str] = set()
"""Annotation keys seen that belong to no peer: a memo of `peer_of`, bounded by `_NO_PEER_MAX`."""
_NO_PEER_MAX = 4096


def reads_template_annotations(settings: DiscoverySettings) -> bool:
    """Whether discovery also reads the pod template's annotations: Reloader honours its annotations there
    too, so with its compat rule on, workloads are listed whole (not metadata-only)."""
    return "reloader" in settings.compat


def ignore_annotations(settings: DiscoverySettings) -> tuple[str, ...]:
    """The annotation keys by which a ConfigMap/Secret asks never to trigger rollouts."""
    return (f"{settings.prefix}/ignore", *([RELOADER_IGNORE] if "reloader" in settings.compat else []))


def referenced_sources(pod_spec: Any, out: _Collector) -> tuple[Reference, ...]:
    """Every ConfigMap/Secret the pod spec references, for Reloader's search mode; the spec's problems join
    `out`'s, once each."""
    search = _Collector()
    scan_pod_spec(pod_spec, KINDS, search)
    out.problems += [problem for problem in search.problems if problem not in out.problems]
    return search.references()


def source_ignored(annotations: Any, settings: DiscoverySettings) -> bool:
    """Whether a ConfigMap/Secret asks never to trigger rollouts."""
    if not isinstance(annotations, dict):
        return False
    return any(is_true(annotations.get(key)) for key in ignore_annotations(settings))


def source_matches(annotations: Any, discovery: Discovery) -> bool:
    """Search mode: whether a ConfigMap/Secret carries one of the workload's match annotations as "true"."""
    if not isinstance(annotations, dict):
        return False
    return any(is_true(annotations.get(key)) for key in discovery.match_annotations)


def with_resource_references(
    discovery: Discovery, obj: Any, named: Iterable[SpecReference], pod_specs: Iterable[str]
) -> Discovery:
    """`discovery` plus the ConfigMaps and Secrets a resource names in its own spec (`named`: field paths
    with `*` for every item of a list, a fixed key or the field beside the name holding it) and those of
    its further pod specs (`pod_specs`), merged per source as the pod template's are. A workload not opted
    in, or a kind with neither, is returned as it is."""
    named, pod_specs = tuple(named), tuple(pod_specs)
    if not discovery.opted_in or not (named or pod_specs):
        return discovery
    out = _Collector()
    for ref in discovery.references:
        use = out.uses.setdefault((ref.kind, ref.name), _Use(whole=ref.keys is None, optional=ref.optional))
        use.keys |= ref.keys or frozenset()
    for spec in named:
        tokens = parse_path(spec.name)
        kind: SourceKind = "secret" if spec.kind == "secret" else "configmap"
        for where, parent in resolve_all(obj, tokens[:-1]):
            if not isinstance(parent, dict) or tokens[-1] not in parent:
                continue
            at = f"{spec.name} ({where or '/'})"
            keys: frozenset[str] | None = frozenset({spec.key}) if spec.key else None
            if spec.key_field is not None:
                key = parent.get(spec.key_field)
                if not isinstance(key, str) or not key:
                    out.problems.append(f"{at}: missing {spec.key_field}")
                    continue
                keys = frozenset({key})
            out.add_named(kind, parent[tokens[-1]], keys, spec.optional or is_optional(parent), at)
    for path in pod_specs:
        for _where, pod_spec in resolve_all(obj, parse_path(path)):
            scan_pod_spec(pod_spec, KINDS, out)
    problems = cap_problems([*discovery.problems, *out.problems])
    return replace(discovery, references=out.references(), problems=problems)
