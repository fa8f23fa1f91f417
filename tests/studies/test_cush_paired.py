"""The paired comparison of studies/cush_two_step, on samples small enough to work by hand.

The t distribution has closed forms for few degrees of freedom: with 1 it is Cauchy's,
two-sided p = 1 - (2 / pi) atan |t|; with 2, p = 1 - |t| / sqrt(2 + t^2).
"""

from __future__ import annotations

import math

import pytest

from studies.cush_two_step.paired import paired_test, sign_test_p


def test_two_sets_by_hand() -> None:
    # d = (-1, -3): mean -2, sd sqrt(2), se sqrt(2) / sqrt(2) = 1, t = -2 with 1 dof
    test = paired_test([2.0, 1.0], [3.0, 4.0])
    assert (test.n, test.mean, test.std_error) == (2, -2.0, pytest.approx(1.0))
    assert test.t_p == pytest.approx(1.0 - 2.0 / math.pi * math.atan(2.0))  # 0.2952
    assert (test.lower, test.higher, test.equal) == (2, 0, 0)
    assert test.sign_p == 0.5  # 2 * (1/2)^2


def test_three_sets_by_hand() -> None:
    # d = (-1, -2, -3): mean -2, sd 1, se 1 / sqrt(3), t = -2 sqrt(3) with 2 dof
    test = paired_test([1.0, 1.0, 1.0], [2.0, 3.0, 4.0])
    t = 2.0 * math.sqrt(3.0)
    assert test.std_error == pytest.approx(1.0 / math.sqrt(3.0))
    assert test.t_p == pytest.approx(1.0 - t / math.sqrt(2.0 + t * t))  # 0.0742
    assert test.sign_p == 0.25  # 2 * (1/2)^3


def test_ties_count_for_the_t_test_not_the_sign_test() -> None:
    test = paired_test([1.0, 5.0, 2.0, 4.0], [2.0, 5.0, 4.0, 3.0])  # d = (-1, 0, -2, +1)
    assert (test.lower, test.higher, test.equal) == (2, 1, 1)
    assert test.mean == -0.5
    # sign test on the 3 untied sets, 1 on the rarer side: 2 * (1 + 3) / 8 = 1, capped
    assert test.sign_p == 1.0


def test_sign_test_tails() -> None:
    assert sign_test_p(10, 0) == 2.0 / 1024
    assert sign_test_p(5, 1) == sign_test_p(1, 5) == 2.0 * (1 + 6) / 64  # 0.21875
    assert sign_test_p(0, 0) == 1.0


def test_no_spread() -> None:
    assert paired_test([1.0, 1.0], [1.0, 1.0]).t_p == 1.0
    assert paired_test([1.0, 2.0], [2.0, 3.0]).t_p == 0.0
    with pytest.raises(ValueError):
        paired_test([1.0], [2.0])
