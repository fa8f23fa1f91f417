"""A 6-core processor's bandwidth demand (Gaia's usual processor), as the settles sum it, is
the sum in core order, bit for bit (floats compared by ``hex``)."""

from __future__ import annotations

from decision_helpers import churn_keeps_demand_exact, make_platform

from hdeeprm.decision import CorePool
from hdeeprm.platform.hierarchy import P0, P2, P3


def _six_core_pool() -> CorePool:
    """Two nodes of 10 GB, each with one 6-core processor of 0.6 GB/s (cores 0-5, 6-11)."""
    return CorePool(
        make_platform(
            [
                (10.0, [(2.0, 2.0, 0.6, 80.0, 6)]),
                (10.0, [(2.0, 2.0, 0.6, 80.0, 6)]),
            ]
        )
    )


def test_six_core_demand_is_the_sum_in_core_order() -> None:
    pool = _six_core_pool()
    # Cores 5, 4 and 0 taken with 0.3, 0.2 and 0.1 GB/s: taken order (0.3 + 0.2) + 0.1 = 0.6,
    # core order ((((0.0 + 0.1) + 0.0) + 0.0) + 0.0) + 0.2) + 0.3 = 0.6000000000000001.
    pool.take(5, "c", 0.0, 0.3)
    pool.take(4, "b", 0.0, 0.2)
    pool.take(0, "a", 0.0, 0.1)
    pool.settle([5, 4, 0], 1.0)
    assert pool.proc_demand[0].hex() == (0.6000000000000001).hex()
    # Limit 0.6 + 1e-9: not over-subscribed; busy cores P0, free ones P2.
    assert pool.over_subscribed == []
    assert pool.pstate[:6] == [P0, P2, P2, P2, P0, P0]
    pool.release([0, 4, 5], 2.0)
    assert pool.proc_demand[0] == 0.0 and pool.pstate[:6] == [P3] * 6


def test_six_core_demand_matches_the_loop_on_random_takes_and_releases() -> None:
    churn_keeps_demand_exact(_six_core_pool(), seed=5, steps=600, most=6)
