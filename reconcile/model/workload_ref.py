"""A workload that runs another object's pod template: Argo Rollouts' `spec.workloadRef` to a Deployment.

Such a Rollout has no template of its own: its references are those of the referenced Deployment's
template, read by the read stage, and its restart is the Rollout's `spec.restartAt` (the Argo controller
restarts the pods started before that time), never a change to the Deployment, which other tools own.
Its records are never trusted from its metadata alone: a change to the Deployment's template does not move
the Rollout's generation.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from reconcile.model.pointer import resolve
from reconcile.model.references import DiscoverySettings, discover
from reconcile.model.workload import Target

TEMPLATE_SPEC = "/spec/template/spec"


def with_referenced_template(
    target: Target, deployment: Mapping[str, Any], settings: DiscoverySettings
) -> Target:
    """The view of a workload whose referenced Deployment was read: its references are the template's."""
    ref = target.workload_ref
    if ref is None:
        return target
    pod_spec = resolve(deployment, TEMPLATE_SPEC)
    discovery = discover(ref.annotations, pod_spec, settings, namespace=target.namespace)
    return replace(
        target,
        discovery=discovery,
        problems=tuple(dict.fromkeys(discovery.problems + target.listed.problems)),
        template_present=isinstance(pod_spec, Mapping),
        workload_ref=replace(ref, resolved=True),
    )


def referenced_path(target: Target) -> str | None:
    """The API path of the Deployment a workload still needs to read, if any."""
    ref = target.workload_ref
    if ref is None or ref.resolved:
        return None
    return f"/apis/apps/v1/namespaces/{target.namespace}/deployments/{ref.name}"
