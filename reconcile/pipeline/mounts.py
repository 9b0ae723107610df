"""Reading a namespace's Secrets Store CSI mounts: which pod belongs to which workload, and what the driver
recorded each pod mounted (model/csi.py says why). Two lists of the namespace, made once per pass and
namespace, and only for a namespace where a workload read in full mounts a SecretProviderClass: a pass
over workloads that use no CSI volume sends none of them.
"""

from __future__ import annotations

import logging
import threading

from reconcile.errors import PassCut, RehashError
from reconcile.kube.client import KubeClient
from reconcile.model.csi import Mounts, pod_owner, read_status
from reconcile.model.kinds import PODS, PROVIDER_CLASS_POD_STATUSES
from reconcile.model.sources import NamespaceSources, SourceKey

log = logging.getLogger(__name__)


class MountReader:
    """The mounts of the namespace being read, kept for its later batches (one namespace at a time)."""

    def __init__(self, client: KubeClient) -> None:
        self.client = client
        self._known: dict[str, Mounts] = {}
        self._lock = threading.Lock()

    def read(self, namespace: str) -> NamespaceSources:
        """The namespace's mounts: its pods' owners (a metadata list) and the driver's status objects."""
        result = NamespaceSources(namespace)
        with self._lock:
            known = self._known.get(namespace)
        if known is not None:
            result.mounts = known
            return result
        try:
            pods = self.client.list_items(PODS.collection_path(namespace), metadata_only=True)
            owners = {
                str(item["metadata"]["name"]): owner
                for item in pods
                if (owner := pod_owner(item)) is not None
            }
            path = PROVIDER_CLASS_POD_STATUSES.collection_path(namespace)
            items = self.client.list_items(path)
            statuses = tuple(s for item in items if (s := read_status(item)) is not None)
        except PassCut:
            result.cut = True
            return result
        except RehashError as exc:
            log.info("reading the Secrets Store CSI mounts of %s failed (%s)", namespace, exc)
            result.broken[SourceKey.mounts()] = exc
            return result
        result.mounts = Mounts(owners, statuses)
        with self._lock:
            self._known = {namespace: result.mounts}
        return result
