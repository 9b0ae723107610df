"""Reading when a workload's current pod template started: ReplicaSet and ControllerRevision metadata.

Only for the few workloads `decide.change_times` names (the hash changed, the spec moved since our
record, every changed source's change time known), so a steady pass reads nothing here. Metadata only
(PartialObjectMetadata): a Deployment's ReplicaSets and a DaemonSet's ControllerRevisions with one
list by the workload's `matchLabels` in its namespace, a StatefulSet's `updateRevision` with one GET.
When a changed source changed in the very second the template's object was created, one more list of
the same collection, exactly as it was at that source's resourceVersion, tells which came first
(`freshness.tied_versions`). A read that fails for any reason but a 403 leaves the question open, and
the workload rolls as it would without this check; a 403 is an RBAC bug in a CronJob, so it fails the
workload visibly.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from concurrent.futures import Executor
from dataclasses import replace
from typing import Any

from reconcile.errors import Forbidden, NotFound, PassCut, RehashError
from reconcile.kube.client import KubeClient
from reconcile.model.freshness import Change, Origin, names_in, template_origin, tied_versions
from reconcile.model.kinds import CONTROLLERREVISIONS, REPLICASETS, Resource, Revisions
from reconcile.model.workload import Target
from reconcile.pipeline.fetch import gather

log = logging.getLogger(__name__)


def revision_items(client: KubeClient, target: Target) -> list[dict[str, Any]]:
    """The metadata of the ReplicaSets or ControllerRevisions that may be the target's current template."""
    lineage = target.lineage
    assert lineage is not None
    if lineage.kind == Revisions.STATEFULSET:
        assert lineage.revision is not None
        path = CONTROLLERREVISIONS.object_path(target.namespace, lineage.revision)
        return [client.get(path, metadata_only=True)]
    return list(
        client.list_items(
            collection_of(target).collection_path(target.namespace),
            label_selector=lineage.label_selector or None,
            metadata_only=True,
        )
    )


def collection_of(target: Target) -> Resource:
    return REPLICASETS if target.kind.revisions == Revisions.DEPLOYMENT else CONTROLLERREVISIONS


def absent_at(client: KubeClient, target: Target, origin: Origin, versions: Iterable[str]) -> frozenset[str]:
    """The resourceVersions at which the origin did not exist yet (one exact-version list each). A
    version etcd no longer has (410) or any failure but a 403 proves nothing: it is left out."""
    lineage = target.lineage
    assert lineage is not None
    path = collection_of(target).collection_path(target.namespace)
    absent: set[str] = set()
    for version in versions:
        try:
            page = client.list_at(
                path, resource_version=version, label_selector=lineage.label_selector or None
            )
        except (PassCut, Forbidden):
            raise
        except RehashError as exc:
            log.info("listing the %s of %s at version %s failed (%s)", what(target), target.ref, version, exc)
            continue
        if origin.name not in names_in(page):
            absent.add(version)
    return frozenset(absent)


def read_origins(
    client: KubeClient, executor: Executor, wanted: Iterable[tuple[Target, Mapping[str, Change]]]
) -> tuple[dict[str, Origin | None], dict[str, str], bool]:
    """(uid -> the object of its current template of each workload read (None: not known); uid -> why
    reading it was refused (403); whether the budget cut the reads short)."""

    def one(item: tuple[Target, Mapping[str, Change]]) -> Origin | RehashError | None:
        target, changes = item
        lineage = target.lineage
        assert lineage is not None
        try:
            origin = template_origin(lineage, revision_items(client, target))
            ties = tied_versions(changes, origin)
            if origin is not None and ties:
                origin = replace(origin, absent_at=absent_at(client, target, origin, ties))
            return origin
        except PassCut:
            raise
        except NotFound:
            return None
        except RehashError as exc:
            return exc

    done, cut = gather(executor, one, wanted)
    origins: dict[str, Origin | None] = {}
    refused: dict[str, str] = {}
    for (target, _changes), got in done:
        origins[target.uid] = None
        if isinstance(got, Forbidden):
            refused[target.uid] = f"reading the {what(target)} of {target.ref} was refused: {got}"
        elif isinstance(got, RehashError):
            log.warning("reading the %s of %s failed (%s); it rolls as usual", what(target), target.ref, got)
        else:
            origins[target.uid] = got
    return origins, refused, cut


def what(target: Target) -> str:
    return "ReplicaSets" if collection_of(target) is REPLICASETS else "ControllerRevisions"
