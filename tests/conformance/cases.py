"""The table of differential conformance cases: the requests kube-rehash makes, and the simulator's own
conformance-style checks (tests/simulator/test_http.py), each as a short sequence of HTTP requests.

Why: each case is played, byte for byte the same, against the simulator and the real kube-apiserver
(test_differential.py); the paths, selectors, Accept headers and patch types below are the ones in
reconcile/kube/client.py, reconcile/pipeline/fetch.py, reconcile/pipeline/listing.py and
reconcile/policy/patches.py.
"""

from __future__ import annotations

from typing import Any

from .harness import Case, History, Step

# reconcile/kube/client.py's Accept headers for metadata-only reads.
ACCEPT_METADATA = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json"
ACCEPT_METADATA_LIST = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json"
JSON_PATCH = "application/json-patch+json"
MERGE_PATCH = "application/merge-patch+json"
STRATEGIC = "application/strategic-merge-patch+json"
HELM_RELEASE_FILTER = "type!=helm.sh/release.v1"  # reconcile/model/kinds.py, SECRETS.list_filter
HASH = "kube-rehash.io/config-hash"

DS_TEMPLATE_GENERATION = "/metadata/annotations/deprecated.daemonset.template.generation"
CMS = "/api/v1/namespaces/{ns}/configmaps"
SECRETS = "/api/v1/namespaces/{ns}/secrets"
DEPLOYS = "/apis/apps/v1/namespaces/{ns}/deployments"


def configmap(name: str, data: dict[str, str] | None = None, **meta: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, **meta},
        "data": data or {"k": "v"},
    }


def secret(name: str, type_: str = "Opaque", **meta: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "type": type_,
        "metadata": {"name": name, **meta},
        "stringData": {"key": "not-a-real-secret"},
    }


def deployment(name: str) -> dict[str, Any]:
    """The smallest watched Deployment (its pods run on nothing: no nodes are asked of it)."""
    labels = {"app": name}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "annotations": {"kube-rehash.io/watch": "true"}},
        "spec": {
            "replicas": 0,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {"containers": [{"name": "app", "image": "registry.invalid/app:1"}]},
            },
        },
    }


def workload(kind: str, name: str) -> dict[str, Any]:
    """A watched StatefulSet, DaemonSet or CronJob, with no replicas or schedule that would run anything."""
    labels = {"app": name}
    pod: dict[str, Any] = {"containers": [{"name": "app", "image": "registry.invalid/app:1"}]}
    template = {"metadata": {"labels": labels}, "spec": pod}
    meta = {"name": name, "annotations": {"kube-rehash.io/watch": "true"}}
    if kind == "CronJob":
        pod["restartPolicy"] = "Never"
        spec: dict[str, Any] = {
            "schedule": "0 0 1 1 *",
            "suspend": True,
            "jobTemplate": {"spec": {"template": template}},
        }
        return {"apiVersion": "batch/v1", "kind": kind, "metadata": meta, "spec": spec}
    spec = {"selector": {"matchLabels": labels}, "template": template}
    if kind == "StatefulSet":
        spec |= {"replicas": 0, "serviceName": name}
    return {"apiVersion": "apps/v1", "kind": kind, "metadata": meta, "spec": spec}


def job(name: str) -> dict[str, Any]:
    """A Job as reconcile/policy/patches.py build_job makes it from a CronJob (owner reference left out)."""
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {
            "name": name,
            "labels": {},
            "annotations": {"cronjob.kubernetes.io/instantiate": "manual"},
        },
        "spec": {
            "suspend": True,
            "template": {
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [{"name": "app", "image": "registry.invalid/app:1"}],
                }
            },
        },
    }


def template_patch(pointer: str) -> list[dict[str, Any]]:
    """kube-rehash's rollout JSON patch on a pod template whose metadata has no annotations yet."""
    return [
        {"op": "add", "path": f"{pointer}/metadata/annotations", "value": {HASH: "h1"}},
        {"op": "add", "path": "/metadata/annotations/kube-rehash.io~1config-hash", "value": "h1"},
    ]


def post(path: str, body: Any, **kw: Any) -> Step:
    return Step("POST", path, body=body, **kw)


def continue_of(step: int, limit: int = 2) -> Any:
    """The query of a next page: the continue token of step `step`'s list."""

    def query(history: History) -> dict[str, str]:
        token = (history[step].body.get("metadata") or {}).get("continue", "")
        return {"limit": str(limit), "continue": token}

    return query


def stale_put(step: int, path: str) -> Any:
    """A PUT body: step `step`'s object as it was then (its resourceVersion is stale by now)."""

    def body(history: History) -> Any:
        obj = dict(history[step].body)
        obj["data"] = {"k": "stale"}
        return obj

    return body


def event(name: str, *, involved_namespace: bool = True) -> dict[str, Any]:
    """A core/v1 Event as reconcile/policy/patches.py build_event makes it."""
    stamp = "2026-01-01T00:00:00Z"
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": name},
        "involvedObject": {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "name": "web",
            "uid": "u-1",
            **({"namespace": "{ns}"} if involved_namespace else {}),
        },
        "reason": "RolledOut",
        "message": "config changed: cm/app",
        "type": "Normal",
        "source": {"component": "kube-rehash"},
        "reportingComponent": "kube-rehash",
        "reportingInstance": "kube-rehash",
        "firstTimestamp": stamp,
        "lastTimestamp": stamp,
        "count": 1,
    }


def event_v1(name: str, *, action: bool = True) -> dict[str, Any]:
    """An events.k8s.io/v1 Event as reconcile/policy/audit.py build_event makes it."""
    event: dict[str, Any] = {
        "apiVersion": "events.k8s.io/v1",
        "kind": "Event",
        "metadata": {"name": name},
        "eventTime": "2026-01-01T00:00:00.000000Z",
        "reportingController": "kube-rehash",
        "reportingInstance": "kube-rehash",
        "reason": "ConfigChanged",
        "regarding": {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "name": "web",
            "uid": "u-1",
            "namespace": "{ns}",
        },
        "related": {"apiVersion": "v1", "kind": "Secret", "name": "db", "namespace": "{ns}"},
        "note": "kube-rehash rolled out: secret/db changed",
        "type": "Normal",
    }
    if action:
        event["action"] = "Restart"
    return event


V1_VALUES = ("/apiVersion", "/reason", "/note", "/action", "/reportingController", "/type")
CORE_VALUES = ("/apiVersion", "/reason", "/message", "/action", "/reportingComponent", "/type")


PODS = "/api/v1/namespaces/{ns}/pods"
PDBS = "/apis/policy/v1/namespaces/{ns}/poddisruptionbudgets"


def pending_pod(name: str) -> dict[str, Any]:
    """A pod no node can take (it stays Pending): eviction ignores budgets for it, as kube-rehash meets it."""
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "labels": {"app": "web"}},
        "spec": {
            "nodeSelector": {"kube-rehash.io/no-such-node": "true"},
            "containers": [{"name": "app", "image": "registry.invalid/app:1"}],
        },
    }


def eviction(name: str) -> dict[str, Any]:
    return {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": name}}


CASES: tuple[Case, ...] = (
    Case("discovery-core", (Step("GET", "/api"),), "GET /api: APIVersions"),
    Case("discovery-groups", (Step("GET", "/apis"),), "GET /apis: APIGroupList"),
    Case(
        "discovery-apps",
        (Step("GET", "/apis/apps/v1"),),
        "GET /apis/apps/v1: APIResourceList, deployments with their verbs",
    ),
    Case(
        "metadata-list",
        (
            post(CMS, configmap("a", labels={"app": "x"}, annotations={HASH: "h"})),
            post(CMS, configmap("b")),
            Step("GET", CMS, query={"limit": "500"}, accept=ACCEPT_METADATA_LIST),
        ),
        "a PartialObjectMetadataList: kind, apiVersion, items with metadata only",
    ),
    Case(
        "metadata-get",
        (
            post(CMS, configmap("a", annotations={HASH: "h"})),
            Step("GET", CMS + "/a", accept=ACCEPT_METADATA),
        ),
        "a PartialObjectMetadata of one object",
    ),
    Case(
        "paged-list",
        (
            post(CMS, configmap("a")),
            post(CMS, configmap("b")),
            post(CMS, configmap("c")),
            Step("GET", CMS, query={"limit": "2"}, values=("/metadata/remainingItemCount",)),
            Step("GET", CMS, query=continue_of(3), values=("/metadata/remainingItemCount",)),
        ),
        "limit + continue: two pages, a continue token on the first only",
    ),
    Case(
        "paged-metadata-list",
        (
            post(CMS, configmap("a")),
            post(CMS, configmap("b")),
            post(CMS, configmap("c")),
            Step("GET", CMS, query={"limit": "2"}, accept=ACCEPT_METADATA_LIST),
            Step("GET", CMS, query=continue_of(3), accept=ACCEPT_METADATA_LIST),
        ),
        "limit + continue on metadata-only lists (kube-rehash's listing)",
    ),
    Case(
        "paged-list-growing-limit",
        (
            *(post(CMS, configmap(name)) for name in "abcdef"),
            Step("GET", CMS, query={"limit": "2"}, accept=ACCEPT_METADATA_LIST),
            Step("GET", CMS, query=continue_of(6, limit=3), accept=ACCEPT_METADATA_LIST),
            Step("GET", CMS, query=continue_of(7, limit=3), accept=ACCEPT_METADATA_LIST),
        ),
        "a continue request asks for more objects than the page before (kube/page_size.py): the next ones, "
        "from where the token says",
    ),
    Case(
        "object-count",
        (
            post(CMS, configmap("a")),
            post(CMS, configmap("b")),
            Step(
                "GET",
                CMS,
                query={"limit": "1"},
                accept=ACCEPT_METADATA_LIST,
                values=("/metadata/remainingItemCount",),
            ),
            Step(
                "GET",
                CMS,
                query={"limit": "1", "fieldSelector": HELM_RELEASE_FILTER},
                accept=ACCEPT_METADATA_LIST,
                values=("/metadata/remainingItemCount",),
            ),
            Step(
                "GET",
                CMS,
                query={"limit": "1", "labelSelector": "app!=x"},
                accept=ACCEPT_METADATA_LIST,
                values=("/metadata/remainingItemCount",),
            ),
        ),
        "limit=1 and remainingItemCount, how fetch.py sizes a collection (absent under a selector)",
    ),
    Case(
        "invalid-continue",
        (Step("GET", CMS, query={"limit": "2", "continue": "not-a-token"}),),
        "a continue token that does not decode",
    ),
    Case(
        "label-selector",
        (
            post(CMS, configmap("a", labels={"app": "x"})),
            post(CMS, configmap("b", labels={"app": "y"})),
            Step(
                "GET",
                CMS,
                query={"labelSelector": "app=x"},
            ),
        ),
        "labelSelector on a list",
    ),
    Case(
        "helm-field-selector",
        (
            post(SECRETS, secret("plain")),
            post(SECRETS, secret("sh.helm.release.v1.r.v1", "helm.sh/release.v1")),
            Step(
                "GET",
                SECRETS,
                query={"fieldSelector": HELM_RELEASE_FILTER, "limit": "500"},
                accept=ACCEPT_METADATA_LIST,
            ),
        ),
        "Secrets without Helm releases (fieldSelector type!=helm.sh/release.v1), metadata only",
    ),
    Case(
        "name-field-selector",
        (
            post(CMS, configmap("a")),
            post(CMS, configmap("b")),
            Step("GET", CMS, query={"fieldSelector": "metadata.name=b"}, accept=ACCEPT_METADATA_LIST),
        ),
        "fieldSelector metadata.name=",
    ),
    Case(
        "namespace-field-selector",
        (
            post(CMS, configmap("a")),
            Step(
                "GET",
                "/api/v1/configmaps",
                query={"fieldSelector": "metadata.namespace={ns}", "limit": "1"},
                accept=ACCEPT_METADATA_LIST,
            ),
        ),
        "a cluster-wide list narrowed by metadata.namespace (listing.py's exclusions use !=)",
    ),
    Case(
        "unsupported-field-selector",
        (Step("GET", CMS, query={"fieldSelector": "data.k=v"}),),
        "a field selector on a field the resource does not index",
    ),
    Case("get-missing", (Step("GET", CMS + "/nope"),), "404 NotFound with details"),
    Case(
        "eviction-missing-pod",
        (Step("POST", PODS + "/nope/eviction", body=eviction("nope")),),
        "evicting a pod that does not exist: 404 NotFound (kube-rehash counts it as gone)",
    ),
    Case(
        "eviction-pending-pod",
        (
            post(PODS, pending_pod("web-0"), accept=ACCEPT_METADATA),  # defaulting: a known limit
            post(
                PDBS,
                {
                    "apiVersion": "policy/v1",
                    "kind": "PodDisruptionBudget",
                    "metadata": {"name": "web"},
                    "spec": {"minAvailable": 5, "selector": {"matchLabels": {"app": "web"}}},
                },
                accept=ACCEPT_METADATA,
            ),
            Step("POST", PODS + "/web-0/eviction", body=eviction("web-0"), values=("/status", "/code")),
            Step("GET", PODS + "/web-0"),
        ),
        "a Pending pod is evicted whatever its budget says: 201 Success, then the pod is gone",
    ),
    Case(
        "unknown-resource", (Step("GET", "/api/v1/namespaces/{ns}/gadgets"),), "404 for an unserved resource"
    ),
    Case(
        "forbidden",
        (Step("GET", CMS, user="nobody"), Step("GET", DEPLOYS + "/web", user="nobody")),
        "403 Forbidden for a user without RBAC grants",
    ),
    Case("unauthorized", (Step("GET", CMS, user="bogus"),), "401 for an unknown bearer token"),
    Case(
        "already-exists",
        (post(CMS, configmap("a")), post(CMS, configmap("a"))),
        "409 AlreadyExists on a second create",
    ),
    Case(
        "invalid-name",
        (post(CMS, configmap("Not_Valid")),),
        "422 Invalid with a cause on metadata.name",
    ),
    Case(
        "json-patch-test-fails",
        (
            post(CMS, configmap("a", annotations={HASH: "old"})),
            Step(
                "PATCH",
                CMS + "/a",
                body=[
                    {
                        "op": "test",
                        "path": "/metadata/annotations/kube-rehash.io~1config-hash",
                        "value": "other",
                    },
                    {
                        "op": "add",
                        "path": "/metadata/annotations/kube-rehash.io~1config-hash",
                        "value": "new",
                    },
                ],
                content_type=JSON_PATCH,
            ),
            Step("GET", CMS + "/a", values=("/metadata/annotations",)),
        ),
        "a JSON patch whose test op fails (kube-rehash's precondition) changes nothing",
    ),
    Case(
        "json-patch-missing-path",
        (
            post(CMS, configmap("a")),
            Step(
                "PATCH",
                CMS + "/a",
                body=[{"op": "test", "path": "/metadata/annotations/x", "value": "y"}],
                content_type=JSON_PATCH,
            ),
        ),
        "a JSON patch testing a path that does not exist",
    ),
    Case(
        "json-patch-resource-version",
        (
            post(CMS, configmap("a")),
            Step(
                "PATCH",
                CMS + "/a",
                body=[{"op": "test", "path": "/metadata/resourceVersion", "value": "1"}],
                content_type=JSON_PATCH,
            ),
        ),
        "a JSON patch test op pinning a stale resourceVersion (patches.py preconditions)",
    ),
    Case(
        "deployment-json-patch",
        (
            post(DEPLOYS, deployment("web")),
            Step(
                "PATCH",
                DEPLOYS + "/web",
                body=[
                    {
                        "op": "add",
                        "path": "/spec/template/metadata/annotations",
                        "value": {HASH: "h1"},
                    },
                    {"op": "add", "path": "/metadata/annotations/kube-rehash.io~1config-hash", "value": "h1"},
                ],
                content_type=JSON_PATCH,
                values=(
                    "/metadata/generation",
                    f"/metadata/annotations/{HASH.replace('/', '~1')}",
                    "/spec/template/metadata",
                ),
            ),
        ),
        "kube-rehash's rollout patch: the template annotation and the bookkeeping, one JSON patch",
    ),
    Case(
        "defaulting",
        (
            post(DEPLOYS, deployment("web")),
            post("/apis/apps/v1/namespaces/{ns}/statefulsets", workload("StatefulSet", "db")),
            post("/apis/apps/v1/namespaces/{ns}/daemonsets", workload("DaemonSet", "agent")),
            post("/apis/batch/v1/namespaces/{ns}/cronjobs", workload("CronJob", "nightly")),
            post("/apis/batch/v1/namespaces/{ns}/jobs", job("nightly-rehash-0123abcd")),
        ),
        "kube-apiserver fills in defaults (strategies, history limits, pod template fields, a Job's "
        "selector and labels); the simulator stores objects as sent",
        defaults=True,
    ),
    Case(
        "statefulset-rollout-patch",
        (
            post("/apis/apps/v1/namespaces/{ns}/statefulsets", workload("StatefulSet", "db")),
            Step(
                "PATCH",
                "/apis/apps/v1/namespaces/{ns}/statefulsets/db",
                body=template_patch("/spec/template"),
                content_type=JSON_PATCH,
                values=("/metadata/generation", "/spec/template/metadata"),
            ),
        ),
        "kube-rehash's rollout patch on a StatefulSet",
    ),
    Case(
        "daemonset-rollout-patch",
        (
            post(
                "/apis/apps/v1/namespaces/{ns}/daemonsets",
                workload("DaemonSet", "agent"),
                values=("/metadata/generation", DS_TEMPLATE_GENERATION),
            ),
            Step(
                "PATCH",
                "/apis/apps/v1/namespaces/{ns}/daemonsets/agent",
                body=template_patch("/spec/template"),
                content_type=JSON_PATCH,
                values=("/metadata/generation", "/spec/template/metadata", DS_TEMPLATE_GENERATION),
            ),
            Step(
                "PATCH",
                "/apis/apps/v1/namespaces/{ns}/daemonsets/agent",
                body={"metadata": {"annotations": {"kube-rehash.io/rollout": "x"}}},
                content_type=MERGE_PATCH,
                values=("/metadata/generation", DS_TEMPLATE_GENERATION),
            ),
        ),
        "kube-rehash's rollout patch on a DaemonSet",
    ),
    Case(
        "cronjob-rollout-patch",
        (
            post("/apis/batch/v1/namespaces/{ns}/cronjobs", workload("CronJob", "nightly")),
            Step(
                "PATCH",
                "/apis/batch/v1/namespaces/{ns}/cronjobs/nightly",
                body=template_patch("/spec/jobTemplate/spec/template"),
                content_type=JSON_PATCH,
                values=("/metadata/generation", "/spec/jobTemplate/spec/template/metadata"),
            ),
        ),
        "kube-rehash's rollout patch on a CronJob's job template",
    ),
    Case(
        "job-create",
        (post("/apis/batch/v1/namespaces/{ns}/jobs", job("nightly-rehash-0123abcd")),),
        "the Job kube-rehash creates from a CronJob (suspended here, so nothing runs)",
    ),
    Case(
        "json-patch-dry-run",
        (
            post(DEPLOYS, deployment("web")),
            Step(
                "PATCH",
                DEPLOYS + "/web",
                query={"dryRun": "All", "fieldManager": "kube-rehash"},
                body=template_patch("/spec/template"),
                content_type=JSON_PATCH,
                values=("/metadata/generation", "/spec/template/metadata"),
            ),
            Step("GET", DEPLOYS + "/web", accept=ACCEPT_METADATA, values=("/metadata/generation",)),
        ),
        "kube-rehash --dry-run: the patched object comes back, nothing is stored",
    ),
    Case(
        "generate-name",
        (post(CMS, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"generateName": "gen-"}}),),
        "create with generateName",
    ),
    Case(
        "missing-namespace",
        (post("/api/v1/namespaces/{ns}-gone/configmaps", configmap("a")),),
        "create in a namespace that does not exist: 404 NotFound for the namespace",
    ),
    Case(
        "patch-missing",
        (Step("PATCH", CMS + "/nope", body={"data": {"k": "v"}}, content_type=MERGE_PATCH),),
        "a patch of an object that does not exist",
    ),
    Case(
        "metadata-get-missing",
        (Step("GET", CMS + "/nope", accept=ACCEPT_METADATA),),
        "a metadata-only GET of an object that does not exist",
    ),
    Case(
        "put-without-resource-version",
        (post(CMS, configmap("a")), Step("PUT", CMS + "/a", body=configmap("a", {"k": "w"}))),
        "a PUT without metadata.resourceVersion (an unconditional update of a ConfigMap)",
    ),
    Case(
        "patch-renames",
        (
            post(CMS, configmap("a")),
            Step("PATCH", CMS + "/a", body={"metadata": {"name": "b"}}, content_type=MERGE_PATCH),
        ),
        "a patch may not change the name",
    ),
    Case(
        "watch",
        (Step("GET", CMS, query={"watch": "true", "timeoutSeconds": "1"}),),
        "a watch (kube-rehash never watches): kube-apiserver streams events, the simulator refuses",
    ),
    Case(
        "method-not-allowed",
        (
            post(CMS, configmap("a")),
            post(CMS + "/a", configmap("a")),
            Step("PUT", CMS, body=configmap("a")),
        ),
        "a create on an object path and an update on a collection (tests/simulator/test_http.py)",
    ),
    Case(
        "body-namespace-mismatch",
        (post(CMS, configmap("a", namespace="elsewhere")),),
        "a create whose body names another namespace than the URL",
    ),
    Case(
        "put-name-mismatch",
        (post(CMS, configmap("a")), Step("PUT", CMS + "/a", body=configmap("b"))),
        "an update whose body names another object than the URL",
    ),
    Case(
        "bad-data-type",
        (post(CMS, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}, "data": {"k": 1}}),),
        "a ConfigMap whose data value is not a string does not decode",
    ),
    Case(
        "wrong-kind-in-body",
        (post(CMS, {**configmap("a"), "kind": "Secret"}),),
        "a create whose body is of another kind than the collection",
    ),
    Case(
        "table",
        (
            post(CMS, configmap("a")),
            Step("GET", CMS, accept="application/json;as=Table;v=v1;g=meta.k8s.io,application/json"),
        ),
        "kubectl get: a Table",
    ),
    Case(
        "deployment-merge-patch",
        (
            post(DEPLOYS, deployment("web")),
            Step(
                "PATCH",
                DEPLOYS + "/web",
                body={"spec": {"template": {"metadata": {"annotations": {HASH: "h2"}}}}},
                content_type=MERGE_PATCH,
                values=("/metadata/generation", "/spec/template/metadata"),
            ),
        ),
        "a merge patch of the pod template",
    ),
    Case(
        "deployment-strategic-patch",
        (
            post(DEPLOYS, deployment("web")),
            Step(
                "PATCH",
                DEPLOYS + "/web",
                body={
                    "spec": {
                        "template": {
                            "spec": {"containers": [{"name": "app", "image": "registry.invalid/app:2"}]}
                        }
                    }
                },
                content_type=STRATEGIC,
                values=("/metadata/generation", "/spec/template/spec/containers/0/image"),
            ),
        ),
        "a strategic merge patch merges the containers list by name",
    ),
    Case(
        "deployment-generation-on-annotation",
        (
            post(DEPLOYS, deployment("web"), values=("/metadata/generation",)),
            Step(
                "PATCH",
                DEPLOYS + "/web",
                body={"metadata": {"annotations": {"kube-rehash.io/rollout": "x"}}},
                content_type=MERGE_PATCH,
                values=("/metadata/generation",),
            ),
            Step("GET", DEPLOYS + "/web", accept=ACCEPT_METADATA, values=("/metadata/generation",)),
        ),
        "a Deployment's generation follows its annotations (kube-rehash's bookkeeping predicts it)",
    ),
    Case(
        "configmap-generation",
        (
            post(CMS, configmap("a")),
            Step(
                "PATCH",
                CMS + "/a",
                body={"metadata": {"annotations": {"x": "y"}}},
                content_type=MERGE_PATCH,
                values=("/metadata/generation",),
            ),
        ),
        "objects without spec have no generation",
    ),
    Case(
        "unsupported-patch-type",
        (post(CMS, configmap("a")), Step("PATCH", CMS + "/a", body={"data": {}}, content_type="text/plain")),
        "415 for a patch content type the server does not know",
    ),
    Case(
        "put-conflict",
        (
            post(CMS, configmap("a")),
            Step("PATCH", CMS + "/a", body={"data": {"k": "w"}}, content_type=MERGE_PATCH),
            Step("PUT", CMS + "/a", body=stale_put(0, CMS + "/a")),
        ),
        "409 Conflict for a PUT with a stale resourceVersion",
    ),
    Case(
        "dry-run",
        (
            post(CMS, configmap("a"), query={"dryRun": "All", "fieldManager": "kube-rehash"}),
            Step("GET", CMS + "/a"),
            post(CMS, configmap("b")),
            Step(
                "PATCH",
                CMS + "/b",
                query={"dryRun": "All"},
                body={"data": {"k": "dry"}},
                content_type=MERGE_PATCH,
                values=("/data",),
            ),
            Step("GET", CMS + "/b", values=("/data",)),
        ),
        "dryRun=All answers as if written and stores nothing",
    ),
    Case(
        "event-create",
        (post("/api/v1/namespaces/{ns}/events", event("web.0123456789")),),
        "a core/v1 Event as kube-rehash posts it",
    ),
    Case(
        "event-v1-both-apis",
        (
            post("/apis/events.k8s.io/v1/namespaces/{ns}/events", event_v1("web.2"), values=V1_VALUES),
            Step("GET", "/api/v1/namespaces/{ns}/events/web.2", values=CORE_VALUES),
            Step("GET", "/apis/events.k8s.io/v1/namespaces/{ns}/events/web.2", values=V1_VALUES),
            Step("GET", "/apis/events.k8s.io/v1/namespaces/{ns}/events", values=("/kind", "/apiVersion")),
        ),
        "an events.k8s.io/v1 Event as kube-rehash posts it, read through both APIs in their shapes",
    ),
    Case(
        "event-v1-required-fields",
        (post("/apis/events.k8s.io/v1/namespaces/{ns}/events", event_v1("web.3", action=False)),),
        "an events.k8s.io/v1 Event without its action is invalid",
    ),
    Case(
        "event-namespace-mismatch",
        (post("/api/v1/namespaces/{ns}/events", event("web.1", involved_namespace=False)),),
        "an Event whose involvedObject.namespace is not its own namespace is invalid",
    ),
    Case(
        "secret-string-data",
        (
            post(SECRETS, secret("s"), values=("/data", "/type")),
            Step("GET", SECRETS + "/s", values=("/data", "/type")),
        ),
        "stringData is folded into base64 data and never returned",
    ),
    Case(
        "gzip-large-list",
        (
            *(post(CMS, configmap(f"big-{i}", {"blob": "x" * 60_000})) for i in range(3)),
            Step("GET", CMS, headers={"Accept-Encoding": "gzip"}),
        ),
        "a list over 128 KiB is gzipped for a client accepting gzip",
    ),
    Case(
        "gzip-small",
        (Step("GET", CMS, headers={"Accept-Encoding": "gzip"}),),
        "a small response is not compressed",
    ),
    Case(
        "delete",
        (post(CMS, configmap("a")), Step("DELETE", CMS + "/a"), Step("DELETE", CMS + "/a")),
        "delete answers, then 404 for the second delete",
    ),
)
