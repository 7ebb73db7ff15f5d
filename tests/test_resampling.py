"""The bootstrap of binomial counts behind the stability of verdicts from random draws."""

import numpy as np
import pytest

from attnbook.errors import AttnbookError
from attnbook.resampling import RESAMPLES, binomial_resamples, resample_verdicts


def test_the_same_seed_gives_the_same_resamples_and_another_seed_others():
    a = binomial_resamples([90, 5], [100, 10], 50, seed=3)
    assert (a == binomial_resamples([90, 5], [100, 10], 50, seed=3)).all()
    assert not (a == binomial_resamples([90, 5], [100, 10], 50, seed=4)).all()


def test_each_count_is_resampled_around_its_share():
    r = binomial_resamples([900, 50], [1000, 100], 4000, seed=0)
    assert r.shape == (4000, 2)
    assert abs(r[:, 0].mean() - 900) < 2 and abs(r[:, 1].mean() - 50) < 1
    assert abs(r[:, 0].std() - np.sqrt(1000 * 0.9 * 0.1)) < 0.5  # binomial spread
    assert r.min() >= 0 and (r <= [1000, 100]).all()


def test_all_or_none_resample_to_themselves():
    r = binomial_resamples([20, 0, 0], [20, 20, 0], 100, seed=1)
    assert (r == [20, 0, 0]).all()


def test_verdicts_are_decided_per_resample_with_labels():
    v = resample_verdicts(lambda c: c[0] + c[1] >= 10, [8, 4], [10, 10], seed=2)
    assert len(v) == RESAMPLES and set(v) == {f"resample {i}" for i in range(RESAMPLES)}
    assert 0 < sum(v.values()) < RESAMPLES  # 12 of 20 on average: both sides occur


def test_a_count_far_from_the_threshold_is_stable_and_one_on_it_is_not():
    def holds(c):
        return c[0] / 5000 >= 0.99
    assert all(resample_verdicts(holds, [4990], [5000], seed=0).values())
    share = np.mean(list(resample_verdicts(holds, [4951], [5000], seed=0).values()))
    assert 0.3 < share < 0.7


@pytest.mark.parametrize("successes, draws", [([3], [2]), ([-1], [5]), ([1, 2], [5])])
def test_impossible_counts_are_refused(successes, draws):
    with pytest.raises(AttnbookError):
        binomial_resamples(successes, draws, 10, seed=0)
