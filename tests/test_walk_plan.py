"""How a pass too large to hold its listing walks (policy/tally.py `plan_walk`): on from the listing's own
lists when its sample says the pass is light, else after tallying the rest, with a second listing. Pure."""

from __future__ import annotations

from collections import Counter

import pytest

from reconcile.model.kinds import DEPLOYMENT, STATEFULSET
from reconcile.policy.reads import KIND_IN_FULL_MIN
from reconcile.policy.tally import Tally, WalkPlan, plan_walk


def sample(opted: int, needing: int = 0) -> Tally:
    """A sample of `opted` Deployments, `needing` of them needing their spec."""
    return Tally(
        workloads=Counter({"ns": opted}),
        kinds={"deployments": DEPLOYMENT},
        opted=Counter({"deployments": opted}),
        need_spec=Counter({"deployments": needing}),
        recorded=Counter({"configmap": 2 * (opted - needing), "secret": opted - needing}),
    )


@pytest.mark.parametrize(
    ("tally", "seen", "total", "by_name", "expected"),
    [
        (sample(1000), 3000, 30000, False, (True, "1000 opted in of the first 3000 of 30000 workloads")),
        (sample(100, 25), 300, 3000, False, (True, "25 needing their spec")),
        (sample(100, 26), 300, 3000, False, (False, "26 of the sample's 100")),
        (sample(1000, 600), 3000, 30000, False, (False, "a kind worth listing in full")),
        (sample(1000), 3000, None, False, (False, "did not tell its size")),
        (sample(1000), 3000, 30000, True, (False, "read by name")),
        (sample(1), 3, 30, False, (True, "1 opted in")),
        (sample(1, 1), 3, 30, False, (False, "1 of the sample's 1")),
    ],
    ids=[
        "steady",
        "a quarter less one need their spec",
        "more than a quarter",
        "a kind in full",
        "size unknown",
        "fetch by name",
        "a sample of one, settled",
        "a sample of one, new",
    ],
)
def test_the_walk_goes_on_from_the_listing_only_when_the_sample_says_the_pass_is_light(
    tally: Tally, seen: int, total: int | None, by_name: bool, expected: tuple[bool, str]
) -> None:
    plan = plan_walk(tally, seen=seen, total=total, by_name=by_name, rate_limited=True)
    assert plan.one_listing is expected[0]
    assert expected[1] in plan.why


def test_a_light_plan_scales_the_samples_counts_to_the_cluster() -> None:
    plan = plan_walk(sample(1000), seen=3000, total=30000, by_name=False, rate_limited=False)
    assert plan == WalkPlan(True, plan.why, 10.0)
    assert plan.scaled(sample(1000).recorded) == {"configmap": 20000, "secret": 10000}
    whole = plan_walk(sample(1000), seen=3000, total=2000, by_name=False, rate_limited=False)
    assert whole.scale == 1.0  # never scaled down: the sample is at least itself


def test_the_kind_in_full_rule_is_the_tallys_own_at_the_pass_rate() -> None:
    """A kind is in full once half its workloads need their spec at qps 0, a quarter at a rate limit: the
    whole tally's rule (`choose_kind_in_full`), so a sample never plans what the tally would not. Here 41
    of 100 Deployments: in full at a rate limit only; at qps 0 the sample (41 of 180) is light."""
    tally = Tally(
        workloads=Counter({"ns": 100 + 2 * KIND_IN_FULL_MIN}),
        kinds={"deployments": DEPLOYMENT, "statefulsets": STATEFULSET},
        opted=Counter({"deployments": 100, "statefulsets": 2 * KIND_IN_FULL_MIN}),
        need_spec=Counter({"deployments": KIND_IN_FULL_MIN + 1}),
    )
    limited = plan_walk(tally, seen=100, total=1000, by_name=False, rate_limited=True)
    unlimited = plan_walk(tally, seen=100, total=1000, by_name=False, rate_limited=False)
    assert not limited.one_listing and "worth listing in full" in limited.why
    assert unlimited.one_listing and "41 needing their spec" in unlimited.why
