"""The simulator's thread-safe object store: one global resourceVersion, full history, cached JSON.

Objects are keyed by (resource plural, namespace, name); cluster-scoped objects use namespace "".
Every write stores a new immutable entry whose serialized forms (full object, list item, metadata-only
item) are computed once, so a list of 10,000 objects is a join of cached bytes. Paged lists keep a
snapshot of the matching entries, which gives continue tokens the consistent-read semantics of etcd;
dropping the snapshots makes the next `continue` answer 410 Expired, as after an etcd compaction.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from . import objects, patches
from .answers import AnswerSetting, Order
from .entry import Entry, dumps
from .errors import (
    ApiError,
    already_exists,
    api_version_mismatch,
    conflict,
    name_mismatch,
    namespace_mismatch,
    not_found,
)
from .objects import Obj
from .paging import ListPage, Snapshots
from .resources import ResourceType, for_object, resolve
from .selectors import field_predicate, label_predicate

APPLY_NEEDS_MANAGER = "fieldManager: Required value: is required for apply patch"
Key = tuple[str, str]  # (namespace, name)


def storage_order(key: Key) -> str:
    """etcd's key order: `a-b/x` comes before `a/x`, unlike the tuple order."""
    namespace, name = key
    return f"{namespace}/{name}" if namespace else name


def scrambled_order(key: Key) -> str:
    """A fixed order unrelated to the key order (`Store.unsorted_lists`)."""
    return hashlib.sha256(storage_order(key).encode()).hexdigest()


class Store:
    """Objects of every simulated resource; all public methods are thread-safe."""

    def __init__(
        self, *, snapshot_ttl: float = 300.0, max_snapshots: int = 512, content_times: bool = False
    ) -> None:
        self.content_times = content_times
        """Record when a ConfigMap's or Secret's content last changed, as a managedFields entry owning
        `data` (objects.content_owner); off by default, as the simulator keeps no managedFields."""
        self._lock = threading.RLock()
        self._rv = 1000
        self._objects: dict[str, dict[Key, Entry]] = {}
        self._sorted: dict[str, list[Key]] = {}
        self._history: dict[tuple[str, str, str], list[Entry]] = {}
        self._observers: list[Callable[[ResourceType, Obj | None, Obj], None]] = []
        self.snapshots = Snapshots(ttl=snapshot_ttl, capacity=max_snapshots)
        self.answers = AnswerSetting()
        """How lists are paged, counted and ordered where the API leaves room (answers.py)."""
        self.unsorted_lists = False
        """List in a fixed order that is not etcd's key order (namespaces interleaved), as an older watch
        cache or an aggregated API may: a client must not rely on the order of a list."""

    def observe(self, observer: Callable[[ResourceType, Obj | None, Obj], None]) -> None:
        """Call `observer(rtype, old, new)` after every stored write, under the store's lock (a controller
        notes what to do and acts later, as a real one acts on a watch event)."""
        self._observers.append(observer)

    # -- helpers -------------------------------------------------------------------------------------

    @property
    def resource_version(self) -> str:
        """The newest resourceVersion handed out."""
        with self._lock:
            return str(self._rv)

    @staticmethod
    def _rtype(resource: str | ResourceType) -> ResourceType:
        return resource if isinstance(resource, ResourceType) else resolve(resource)

    @staticmethod
    def _key(rtype: ResourceType, namespace: str | None, name: str) -> Key:
        return ((namespace or "") if rtype.namespaced else "", name)

    def _typed(self, obj: Obj, resource: str | ResourceType | None) -> ResourceType:
        """The object's resource; with `resource` given (a URL), missing apiVersion/kind default from it."""
        if resource is None:
            return for_object(obj)
        rtype = self._rtype(resource)
        obj.setdefault("apiVersion", rtype.api_version)
        obj.setdefault("kind", rtype.kind)
        if (obj["apiVersion"], obj["kind"]) != (rtype.api_version, rtype.kind):
            raise api_version_mismatch(obj.get("apiVersion"), rtype.api_version)
        return rtype

    def _next_rv(self) -> int:
        self._rv += 1
        return self._rv

    def _entry(self, rtype: ResourceType, namespace: str | None, name: str) -> Entry:
        entry = self._objects.get(rtype.plural, {}).get(self._key(rtype, namespace, name))
        if entry is None:
            raise not_found(rtype.plural, rtype.group, name)
        return entry

    def _put(self, rtype: ResourceType, obj: Obj) -> Entry:
        meta = obj["metadata"]
        key = self._key(rtype, meta.get("namespace"), meta["name"])
        bucket = self._objects.setdefault(rtype.plural, {})
        old = bucket.get(key)
        if old is None:
            self._sorted.pop(rtype.plural, None)
        if self.content_times and rtype.plural in ("configmaps", "secrets"):
            objects.content_owner(obj, old.obj if old is not None else None)
        entry = Entry(rtype, obj)
        bucket[key] = entry
        self._history.setdefault((rtype.plural, *key), []).append(entry)
        for observer in self._observers:
            observer(rtype, old.obj if old is not None else None, obj)
        return entry

    def _resolve_names(self, rtype: ResourceType, obj: Obj, namespace: str | None) -> None:
        meta = obj.get("metadata")
        if not isinstance(meta, dict):
            raise ApiError(400, "Object 'metadata' is missing or not an object")
        if rtype.namespaced:
            ns = meta.get("namespace") or namespace or "default"
            if namespace and ns != namespace:
                raise namespace_mismatch()
            meta["namespace"] = ns
        else:
            meta.pop("namespace", None)
        if not meta.get("name") and meta.get("generateName"):
            meta["name"] = f"{meta['generateName']}{objects.generate_suffix()}"

    # -- create --------------------------------------------------------------------------------------

    def create(
        self,
        obj: Mapping[str, Any],
        *,
        namespace: str | None = None,
        dry_run: bool = False,
        ensure_namespace: bool = True,
        keep_status: bool = True,
        resource: str | ResourceType | None = None,
    ) -> Obj:
        """Store a new object and return it as stored.

        The Python seeding default creates a missing namespace and keeps `status`; the HTTP layer passes
        `ensure_namespace=False, keep_status=False` (404 for a missing namespace, status dropped).
        """
        new: Obj = json.loads(dumps(obj))
        rtype = self._typed(new, resource)
        self._resolve_names(rtype, new, namespace)
        objects.validate(rtype, new)
        with self._lock:
            return self._create_locked(rtype, new, dry_run, ensure_namespace, keep_status).copy()

    def _create_locked(
        self, rtype: ResourceType, new: Obj, dry_run: bool, ensure_namespace: bool, keep_status: bool
    ) -> Entry:
        meta = new["metadata"]
        ns = meta.get("namespace", "")
        if rtype.namespaced and ("", ns) not in self._objects.get("namespaces", {}):
            if not ensure_namespace:
                raise not_found("namespaces", "", ns)
            if not dry_run:
                self._create_locked(
                    resolve("namespaces"),
                    {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}},
                    False,
                    False,
                    False,
                )
        if self._key(rtype, ns, meta["name"]) in self._objects.get(rtype.plural, {}):
            raise already_exists(rtype.plural, rtype.group, meta["name"])
        rv = self._rv + 1 if dry_run else self._next_rv()
        objects.prepare_create(rtype, new, rv, keep_status=keep_status)
        if dry_run:
            meta.pop("resourceVersion")
            return Entry(rtype, new)
        return self._put(rtype, new)

    def create_many(self, objs: Iterable[Mapping[str, Any]]) -> int:
        """Bulk seeding: create every object under one lock (namespaces auto-created, status kept)."""
        count = 0
        prepared: list[tuple[ResourceType, Obj]] = []
        for obj in objs:
            new: Obj = json.loads(dumps(obj))
            rtype = for_object(new)
            self._resolve_names(rtype, new, None)
            objects.validate(rtype, new)
            prepared.append((rtype, new))
        with self._lock:
            for rtype, new in prepared:
                self._create_locked(rtype, new, False, True, True)
                count += 1
        return count

    # -- read ----------------------------------------------------------------------------------------

    def get(self, resource: str | ResourceType, namespace: str | None, name: str) -> Obj:
        """A copy of the stored object; ApiError 404 when missing."""
        rtype = self._rtype(resource)
        with self._lock:
            return self._entry(rtype, namespace, name).copy()

    def get_entry(self, resource: str | ResourceType, namespace: str | None, name: str) -> Entry:
        rtype = self._rtype(resource)
        with self._lock:
            return self._entry(rtype, namespace, name)

    def exists(self, resource: str | ResourceType, namespace: str | None, name: str) -> bool:
        rtype = self._rtype(resource)
        with self._lock:
            return self._key(rtype, namespace, name) in self._objects.get(rtype.plural, {})

    def history(self, resource: str | ResourceType, namespace: str | None, name: str) -> list[Obj]:
        """Every stored version of the object, oldest first (survives deletion)."""
        rtype = self._rtype(resource)
        with self._lock:
            entries = list(self._history.get((rtype.plural, *self._key(rtype, namespace, name)), []))
        return [e.copy() for e in entries]

    def count(self, resource: str | ResourceType) -> int:
        rtype = self._rtype(resource)
        with self._lock:
            return len(self._objects.get(rtype.plural, {}))

    def list(
        self,
        resource: str | ResourceType,
        namespace: str | None = None,
        *,
        label_selector: str = "",
        field_selector: str = "",
    ) -> list[Obj]:
        """Copies of the matching objects in storage-key order (`namespace/name`, as etcd orders them on a
        real server); namespace None = all namespaces."""
        page = self.list_page(
            resource, namespace, label_selector=label_selector, field_selector=field_selector
        )
        return [e.copy() for e in page.entries]

    def list_page(
        self,
        resource: str | ResourceType,
        namespace: str | None = None,
        *,
        label_selector: str = "",
        field_selector: str = "",
        limit: int = 0,
        continue_token: str = "",
    ) -> ListPage:
        """One page of a list, paged over a snapshot taken by the first request of the list."""
        rtype = self._rtype(resource)
        answers = self.answers.current
        counted = answers.counted(bool(label_selector or field_selector))
        limit = answers.page_objects(limit)
        if answers.continue_ttl is not None:
            self.snapshots.ttl = answers.continue_ttl
        if continue_token:
            return self.snapshots.resume(continue_token, limit, counted=counted)
        labels = label_predicate(label_selector)
        fields = field_predicate(field_selector, rtype.plural)
        with self._lock:
            bucket = self._objects.get(rtype.plural, {})
            keys = self._sorted.get(rtype.plural)
            if keys is None:
                keys = sorted(bucket, key=storage_order)
                self._sorted[rtype.plural] = keys
            if self.unsorted_lists or answers.order is Order.SCRAMBLED:
                keys = sorted(keys, key=scrambled_order)
            if namespace and rtype.namespaced:
                entries = [bucket[k] for k in keys if k[0] == namespace]
            else:
                entries = [bucket[k] for k in keys]
            rv = self._rv
        if label_selector:
            entries = [e for e in entries if labels(e.obj)]
        if field_selector:
            entries = [e for e in entries if fields(e.obj)]
        return self.snapshots.first_page(entries, rv, limit, counted=counted)

    def expire_continue_tokens(self) -> None:
        """Forget every list snapshot: the next request with any continue token gets 410 Expired."""
        self.snapshots.clear()

    # -- update, patch, delete -----------------------------------------------------------------------

    def update(
        self,
        obj: Mapping[str, Any],
        *,
        namespace: str | None = None,
        name: str | None = None,
        dry_run: bool = False,
        keep_status: bool = False,
        resource: str | ResourceType | None = None,
    ) -> Obj:
        """PUT semantics: replace the object; a stale metadata.resourceVersion is 409 Conflict."""
        new: Obj = json.loads(dumps(obj))
        rtype = self._typed(new, resource)
        self._resolve_names(rtype, new, namespace)
        meta = new["metadata"]
        if name is not None and meta.get("name") != name:
            raise name_mismatch(meta.get("name"), name)
        objects.validate(rtype, new)
        with self._lock:
            old = self._entry(rtype, meta.get("namespace"), meta["name"])
            wanted = meta.get("resourceVersion")
            if wanted and wanted != old.obj["metadata"]["resourceVersion"]:
                raise conflict(rtype.plural, rtype.group, meta["name"])
            return self._replace_locked(rtype, old, new, dry_run, keep_status).copy()

    def _replace_locked(
        self,
        rtype: ResourceType,
        old: Entry,
        new: Obj,
        dry_run: bool,
        keep_status: bool,
        *,
        subresource: bool = False,
    ) -> Entry:
        rv = self._rv + 1 if dry_run else self._next_rv()
        objects.prepare_update(rtype, old.obj, new, rv, keep_status=keep_status, subresource=subresource)
        if dry_run:
            new["metadata"]["resourceVersion"] = old.obj["metadata"]["resourceVersion"]
            return Entry(rtype, new)
        return self._put(rtype, new)

    def patch(
        self,
        resource: str | ResourceType,
        namespace: str | None,
        name: str,
        body: bytes | Any,
        content_type: str = patches.MERGE,
        *,
        dry_run: bool = False,
        field_manager: str | None = None,
        inspect: Callable[[Obj, Obj | None], None] | None = None,
    ) -> Obj:
        """PATCH semantics for every supported content type (`body` bytes, or a decoded dict/list).

        `inspect(new, old)` sees the patched object (and the stored one, None when an apply creates it) before
        it is stored and may refuse it (server-side field validation of the result).

        A patched metadata.resourceVersion that differs from the stored one is 409 Conflict.
        Apply patches (`application/apply-patch+yaml`) need `field_manager` and create missing objects.
        """
        rtype = self._rtype(resource)
        if isinstance(body, bytes | str):
            kind, value = patches.decode(body.encode() if isinstance(body, str) else body, content_type)
        else:
            kind, value = patches.media_type(content_type), body
            if kind not in patches.SUPPORTED:
                patches.decode(b"{}", content_type)
        if kind == patches.APPLY and not field_manager:
            raise ApiError(400, 'PatchOptions.meta.k8s.io "" is invalid: ' + APPLY_NEEDS_MANAGER)
        with self._lock:
            key = self._key(rtype, namespace, name)
            old = self._objects.get(rtype.plural, {}).get(key)
            if old is None:
                if kind != patches.APPLY:
                    raise not_found(rtype.plural, rtype.group, name)
                created = objects.apply_target(rtype, namespace, name, value)
                objects.validate(rtype, created)
                if inspect is not None:
                    inspect(created, None)
                return self._create_locked(rtype, created, dry_run, False, False).copy()
            new = patches.apply(old.copy(), kind, value)
            objects.check_patched(rtype, old.obj, new, name)
            objects.validate(rtype, new)
            if inspect is not None:
                inspect(new, old.obj)
            return self._replace_locked(rtype, old, new, dry_run, False).copy()

    def patch_merge(
        self, resource: str | ResourceType, namespace: str | None, name: str, patch: Mapping[str, Any]
    ) -> Obj:
        """Seeding helper: apply an RFC 7386 merge patch (e.g. change a ConfigMap's data)."""
        return self.patch(resource, namespace, name, dict(patch), patches.MERGE)

    def mutate(
        self,
        resource: str | ResourceType,
        namespace: str | None,
        name: str,
        fn: Callable[[Obj], object],
        *,
        subresource: bool = False,
    ) -> Obj:
        """Seeding helper: `fn` edits a copy in place; the result is stored like a PUT (status kept), or
        like a controller's write through the status subresource (`subresource`: the generation stays)."""
        rtype = self._rtype(resource)
        with self._lock:
            old = self._entry(rtype, namespace, name)
            new = old.copy()
            fn(new)
            objects.validate(rtype, new)
            return self._replace_locked(rtype, old, new, False, True, subresource=subresource).copy()

    def set_status(
        self, resource: str | ResourceType, namespace: str | None, name: str, status: Mapping[str, Any]
    ) -> Obj:
        """What a controller does through the status subresource: replace `status` (bumps resourceVersion)."""
        return self.mutate(
            resource, namespace, name, lambda obj: obj.__setitem__("status", json.loads(dumps(status)))
        )

    def delete(
        self, resource: str | ResourceType, namespace: str | None, name: str, *, dry_run: bool = False
    ) -> Obj:
        """Remove the object (a Namespace takes its objects with it); returns the last stored version."""
        rtype = self._rtype(resource)
        with self._lock:
            entry = self._entry(rtype, namespace, name)
            if dry_run:
                return entry.copy()
            del self._objects[rtype.plural][self._key(rtype, namespace, name)]
            self._sorted.pop(rtype.plural, None)
            self._next_rv()
            if rtype.plural == "namespaces":
                for plural, bucket in self._objects.items():
                    doomed = [k for k in bucket if k[0] == name]
                    for k in doomed:
                        del bucket[k]
                    if doomed:
                        self._sorted.pop(plural, None)
            return entry.copy()
