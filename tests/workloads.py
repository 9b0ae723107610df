"""Full workload views for table tests, built from flat keyword arguments: the list facts go to the
`Listed`, the rest to the `Target` (as `model.workload.revise` splits them)."""

from __future__ import annotations

from typing import Any

from reconcile.model.bookkeeping import Bookkeeping
from reconcile.model.kinds import DEPLOYMENT
from reconcile.model.references import Discovery
from reconcile.model.workload import Listed, Target, revise

DISCOVERY = Discovery(True, False, (), frozenset(), frozenset(), (), ())


def make_target(**fields: Any) -> Target:
    """A Deployment `shop/web` read at resourceVersion 100, changed by `fields`."""
    discovery = fields.pop("discovery", DISCOVERY)
    base = Target(
        listed=Listed(DEPLOYMENT, "shop", "web", "w1", discovery, Bookkeeping()),
        resource_version="100",
        discovery=discovery,
        template_hash=None,
        annotations_map_present=True,
        template_metadata_present=True,
    )
    if "discovery" not in fields:
        fields["discovery"] = discovery
    return revise(base, **fields)
