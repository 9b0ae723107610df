"""The preset kinds: entries of the kind table for common operators' resources, each with the restart knob
its operator documents and what shows the restart took effect. Off by default, enabled by name (`kinds`).

Each entry cites where its operator documents the knob; docs/sources.md ("Preset kinds") says the same
for users, and tests/test_presets.py pins each entry's patch and verdicts.
"""

from __future__ import annotations

from reconcile.model.kinds import BUILTIN_KINDS, Health, Kind
from reconcile.model.knobs import Evidence, Knob, PodSelection, SpecReference

METADATA = "/metadata/annotations"
IN_PLACE_STRATEGIES = ("InPlaceIfPossible", "InPlaceOnly")

# OpenKruise's CloneSet: a Deployment-like set whose status carries the same replica counts. Under its
# in-place update strategies a change of the template's metadata (our hash) is applied to the running pods
# without recreating them (openkruise.io/docs/user-manuals/cloneset, "In-place update"), so those objects
# are restarted by eviction; a deleted pod is recreated from the current template (same page, "Scale
# features").
CLONESET = Kind(
    "apps.kruise.io",
    "v1alpha1",
    "clonesets",
    kind="CloneSet",
    paused="/spec/updateStrategy/paused",
    health=Health.DEPLOYMENT,
    max_unavailable="/spec/updateStrategy/maxUnavailable",
    in_place=("/spec/updateStrategy/type", IN_PLACE_STRATEGIES),
    pod_selection=PodSelection(selector="spec.selector.matchLabels", owned=True),
)
"""Under `ReCreate` (its default) a template change recreates the pods, so its status rules show the
restart, as a Deployment's do; the in-place objects restart by eviction, which checks every pod itself."""

_ENV = (
    SpecReference("secret", "spec.env[*].valueFrom.secretKeyRef.name", key_field="key"),
    SpecReference("configmap", "spec.env[*].valueFrom.configMapKeyRef.name", key_field="key"),
    SpecReference("secret", "spec.envFrom[*].secretRef.name"),
    SpecReference("configmap", "spec.envFrom[*].configMapRef.name"),
)

# CloudNativePG's Cluster: `kubectl cnpg restart` sets kubectl.kubernetes.io/restartedAt on the Cluster, and
# the operator rolls its instances, replicas first, deleting and re-creating each pod on its PVC
# (cloudnative-pg docs/src/rolling_update.md). Its own pods carry cnpg.io/cluster and are controlled by it.
CNPG_CLUSTER = Kind(
    "postgresql.cnpg.io",
    "v1",
    "clusters",
    kind="Cluster",
    template=None,
    annotations=METADATA,
    health=Health.READY,
    knob=Knob.TIMESTAMP,
    knob_key="kubectl.kubernetes.io/restartedAt",
    spec_references=_ENV,
    pod_selection=PodSelection(labels="cnpg.io/cluster={name}", owned=True),
    evidence=Evidence.PODS,
)

# Elastic ECK (3.4 and later): a new value of eck.k8s.elastic.co/restart-trigger on the Elasticsearch restarts
# its nodes, one StatefulSet pod at a time. Its pods name their cluster in a label.
ECK_ELASTICSEARCH = Kind(
    "elasticsearch.k8s.elastic.co",
    "v1",
    "elasticsearches",
    kind="Elasticsearch",
    template=None,
    annotations=METADATA,
    knob=Knob.TIMESTAMP,
    knob_key="eck.k8s.elastic.co/restart-trigger",
    pod_specs=("spec.nodeSets[*].podTemplate.spec",),
    pod_selection=PodSelection(labels="elasticsearch.k8s.elastic.co/cluster-name={name}"),
)

# Strimzi's StrimziPodSet (Kafka, Connect, MirrorMaker 2): strimzi.io/manual-rolling-update: "true" on it
# rolls its pods; the operator removes the annotation once done. A StrimziPodSet is owned by its Kafka (or
# Connect) resource, whose operator honours the annotation, so the owner is no reason to leave it alone.
STRIMZI_PODSET = Kind(
    "core.strimzi.io",
    "v1beta2",
    "strimzipodsets",
    kind="StrimziPodSet",
    template=None,
    annotations=METADATA,
    knob=Knob.ONE_SHOT,
    knob_key="strimzi.io/manual-rolling-update",
    knob_value="true",
    owner_honours_knob=True,
    pod_specs=("spec.pods[*].spec",),
    pod_selection=PodSelection(selector="spec.selector.matchLabels", owned=True),
)

# Crunchy PGO v5: any change under spec.metadata.annotations of a PostgresCluster reaches every pod template
# it manages and rolls the instances ("Administrative Tasks: Manually Restarting PostgreSQL").
PGO_POSTGRESCLUSTER = Kind(
    "postgres-operator.crunchydata.com",
    "v1beta1",
    "postgresclusters",
    kind="PostgresCluster",
    template=None,
    annotations="/spec/metadata/annotations",
    pod_selection=PodSelection(labels="postgres-operator.crunchydata.com/cluster={name}"),
)


def _tidb_group(kind: str) -> Kind:
    """TiDB operator v2's component groups: pingcap.com/restartedAt in the group's template annotations
    restarts its instances' pods, which carry pingcap.com/group (tidb-operator v2, api/core/v1alpha1)."""
    return Kind(
        "core.pingcap.com",
        "v1alpha1",
        f"{kind.lower()}s",
        kind=kind,
        template=None,
        annotations="/spec/template/metadata/annotations",
        knob=Knob.TIMESTAMP,
        knob_key="pingcap.com/restartedAt",
        pod_selection=PodSelection(labels="pingcap.com/group={name}"),
    )


TIDB_GROUPS = tuple(_tidb_group(kind) for kind in ("PDGroup", "TiKVGroup", "TiDBGroup", "TiFlashGroup"))

# Knative Serving's Service: a change of spec.template makes a new Revision (a patch of the Deployment behind
# one is reverted); its newest Revision's name moves in status.latestCreatedRevisionName.
KNATIVE_SERVICE = Kind(
    "serving.knative.dev",
    "v1",
    "services",
    kind="Service",
    health=Health.READY,
    evidence=Evidence.STATUS_CHANGE,
    evidence_field="status.latestCreatedRevisionName",
)

PRESET_KINDS: tuple[Kind, ...] = (
    CLONESET,
    CNPG_CLUSTER,
    ECK_ELASTICSEARCH,
    STRIMZI_PODSET,
    PGO_POSTGRESCLUSTER,
    *TIDB_GROUPS,
    KNATIVE_SERVICE,
)
"""Entries for common custom resources: off by default, enabled by name in `kinds`."""
KNOWN_KINDS: tuple[Kind, ...] = BUILTIN_KINDS + PRESET_KINDS
