"""Paired comparison of two schedulers over the same job sets.

The job sets differ far more from one another than two schedulers differ on one set, so the
comparison is per set: ``d_k = a_k - b_k``. Reported: the mean difference and its standard
error, how many sets ``a`` is lower / higher / equal on, the two-sided paired t-test p-value
(assumes the mean of the ``d_k`` is near normal, fine for 100 sets) and the exact two-sided
sign test p-value (assumes nothing about the sizes, only counts wins; ties are left out).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from scipy import stats


@dataclass(frozen=True, slots=True)
class PairedTest:
    """``a - b`` over paired samples."""

    n: int
    mean: float
    std_error: float
    lower: int  # sets where a < b
    higher: int  # sets where a > b
    equal: int
    t_p: float  # two-sided paired t-test
    sign_p: float  # exact two-sided sign test

    def line(self, name: str) -> str:
        """One printed line: ``name`` says what ``a - b`` is."""
        return (
            f"{name}: mean difference {self.mean:+.3f} (std error {self.std_error:.3f}), "
            f"lower on {self.lower}, higher on {self.higher}, equal on {self.equal} of "
            f"{self.n} sets; paired t-test p = {self.t_p:.2g}, sign test p = {self.sign_p:.2g}"
        )


def sign_test_p(lower: int, higher: int) -> float:
    """Exact two-sided sign test: twice the binomial(n, 1/2) tail of the rarer side, at most
    1 (1 when there is no non-tied pair)."""
    n = lower + higher
    if n == 0:
        return 1.0
    tail = math.fsum(math.comb(n, k) for k in range(min(lower, higher) + 1)) / 2.0**n
    return min(1.0, 2.0 * tail)


def paired_test(a: Sequence[float], b: Sequence[float]) -> PairedTest:
    """The paired comparison of ``a`` against ``b`` (same length, at least 2)."""
    if len(a) != len(b) or len(a) < 2:
        raise ValueError(f"need two paired samples of at least 2, got {len(a)} and {len(b)}")
    diff = [x - y for x, y in zip(a, b)]
    n = len(diff)
    mean = math.fsum(diff) / n
    sd = math.sqrt(math.fsum((d - mean) ** 2 for d in diff) / (n - 1))
    se = sd / math.sqrt(n)
    if se > 0.0:
        t_p = float(2.0 * stats.t.sf(abs(mean) / se, n - 1))
    else:  # every difference the same: no spread to test against
        t_p = 1.0 if mean == 0.0 else 0.0
    lower = sum(d < 0 for d in diff)
    higher = sum(d > 0 for d in diff)
    return PairedTest(
        n, mean, se, lower, higher, n - lower - higher, t_p, sign_test_p(lower, higher)
    )
