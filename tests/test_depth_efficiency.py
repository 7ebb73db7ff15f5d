"""The depth-efficiency point on synthetic loss curves with known crossings."""

import math

import numpy as np
import pandas as pd
import pytest

from attnbook.engines.depth_efficiency import Crossing, crossing_from_frame, depth_efficiency_point
from attnbook.errors import ParameterError

SIZES = np.geomspace(1e5, 1e8, 7)


def curves(sizes, crossing, seeds=3, noise=0.0, slope=0.1, rng=0):
    """Shallow and deep losses (sizes x seeds) whose mean gap is slope * log(crossing / x)."""
    x = np.log(np.asarray(sizes, dtype=float))
    shallow = 5.0 - 0.2 * x
    deep = shallow + slope * (math.log(crossing) - x)
    r = np.random.default_rng(rng)
    add = lambda m: m[:, None] + noise * r.standard_normal((len(x), seeds))
    return add(shallow), add(deep)


def test_known_crossing_is_recovered_and_in_the_interval():
    s, d = curves(SIZES, 3e6)
    c = depth_efficiency_point(SIZES, s, SIZES, d, seed=0)
    assert c.found and c.direction == "shallow->deep" and c.sign_changes == 1
    assert c.point == pytest.approx(3e6, rel=1e-9)  # the gap is linear in log size: exact
    assert c.low <= 3e6 * (1 + 1e-9) and c.high >= 3e6 * (1 - 1e-9)
    assert c.high / c.low == pytest.approx(1.0, abs=1e-9)  # noiseless: no seed spread
    assert c.found_fraction == 1.0 and not c.low_open and not c.high_open
    assert c.n_seeds == (3, 3) and c.sizes == tuple(SIZES) and len(c.gap) == 7
    assert "3e+06" in str(c)


def test_families_at_different_sizes_compare_in_log_size_inside_the_common_range():
    deep_sizes = np.geomspace(2e5, 3e8, 5)  # other sizes, range partly outside the shallow's
    s, _ = curves(SIZES, 3e6)
    _, d = curves(deep_sizes, 3e6)
    c = depth_efficiency_point(SIZES, s, deep_sizes, d, seed=0)
    assert c.point == pytest.approx(3e6, rel=1e-9)
    assert c.sizes[0] == deep_sizes[0] and c.sizes[-1] == SIZES[-1]  # the overlap only
    assert set(c.sizes) == {x for x in (*SIZES, *deep_sizes) if 2e5 <= x <= SIZES[-1]}


def test_deep_always_worse_gives_no_crossing():
    s, d = curves(SIZES, 1e12)
    c = depth_efficiency_point(SIZES, s, SIZES, d, seed=0)
    assert not c.found and c.point is None and c.low is None and c.high is None
    assert c.reason.startswith("deep never wins in range")
    assert c.direction == "shallow->shallow" and c.found_fraction == 0.0


def test_deep_always_better_is_below_the_range_never_a_point():
    s, d = curves(SIZES, 1e2)
    c = depth_efficiency_point(SIZES, s, SIZES, d, seed=0)
    assert not c.found and c.point is None and c.low is None and c.high is None
    assert "deep wins at every size in range" in c.reason
    assert "crossing below the smallest size" in c.reason
    assert c.direction == "deep->deep"


@pytest.mark.parametrize("crossing, words", [(1e9, "deep never wins"),  # above the range
                                             (2e4, "below the smallest size")])  # below it
def test_crossing_outside_the_range_is_not_extrapolated(crossing, words):
    s, d = curves(SIZES, crossing, seeds=4, noise=0.01, rng=1)
    c = depth_efficiency_point(SIZES, s, SIZES, d, seed=0)
    assert not c.found and c.point is None and words in c.reason
    assert c.low is None and c.high is None


def test_noisy_crossing_interval_contains_truth_and_is_wider():
    s0, d0 = curves(SIZES, 3e6, seeds=8)
    clean = depth_efficiency_point(SIZES, s0, SIZES, d0, seed=0)
    s, d = curves(SIZES, 3e6, seeds=8, noise=0.05, rng=3)
    c = depth_efficiency_point(SIZES, s, SIZES, d, seed=0)
    assert c.found and c.low <= 3e6 <= c.high
    assert c.low <= c.point <= c.high
    assert c.high / c.low > 1.2 > clean.high / clean.low
    assert 0.9 <= c.found_fraction <= 1.0
    assert SIZES[0] * (1 - 1e-9) <= c.low and c.high <= SIZES[-1] * (1 + 1e-9)


def test_bootstrap_replicates_without_crossing_open_the_interval_at_the_edge():
    # crossing just inside the top of the range, noise large enough that some replicates
    # see deep losing at the largest size: the upper end runs out of the range
    s, d = curves(SIZES, 9e7, seeds=5, noise=0.05, rng=1)
    c = depth_efficiency_point(SIZES, s, SIZES, d, seed=0)
    assert c.found and 0.5 < c.found_fraction < 1.0
    assert c.high_open and c.high == SIZES[-1] and not c.low_open and c.low < c.point
    assert ">=" in str(c)


def _with_gap(gaps, sizes=None):
    sizes = np.geomspace(10, 10 ** len(gaps), len(gaps)) if sizes is None else sizes
    shallow = np.full(len(gaps), 3.0)
    return sizes, shallow, shallow + np.asarray(gaps, dtype=float)


def test_multiple_sign_changes_take_the_last_change_after_which_deep_keeps_winning():
    x, s, d = _with_gap([0.3, -0.1, 0.2, -0.2, -0.4])
    c = depth_efficiency_point(x, s, x, d)
    assert c.found and c.sign_changes == 3
    assert c.point == pytest.approx(math.sqrt(x[2] * x[3]))  # halfway between sizes 3 and 4


def test_deep_winning_only_inside_the_range_is_no_crossing():
    x, s, d = _with_gap([0.3, -0.1, -0.2, 0.1])
    c = depth_efficiency_point(x, s, x, d)
    assert not c.found and c.point is None and c.sign_changes == 2
    assert c.reason.startswith("deep does not win at the largest size")
    assert c.direction == "shallow->shallow"


def test_a_tie_counts_as_shallow_wins():
    x, s, d = _with_gap([0.2, 0.0, -0.2])
    assert depth_efficiency_point(x, s, x, d).point == pytest.approx(x[1])
    x, s, d = _with_gap([0.2, -0.1, 0.0])
    assert not depth_efficiency_point(x, s, x, d).found


def test_unsorted_sizes_are_sorted_with_their_rows():
    s, d = curves(SIZES, 3e6)
    order = np.array([3, 0, 6, 1, 5, 2, 4])
    c = depth_efficiency_point(SIZES[order], s[order], SIZES, d, seed=0)
    assert c.point == pytest.approx(3e6, rel=1e-9)


def test_deterministic_for_a_fixed_seed():
    s, d = curves(SIZES, 3e6, seeds=6, noise=0.05, rng=5)
    a = depth_efficiency_point(SIZES, s, SIZES, d, seed=7)
    assert a == depth_efficiency_point(SIZES, s, SIZES, d, seed=7)
    b = depth_efficiency_point(SIZES, s, SIZES, d, seed=8)
    assert b.point == a.point and (b.low, b.high) != (a.low, a.high)


def test_one_seed_has_no_interval():
    s, d = curves(SIZES, 3e6, seeds=1)
    c = depth_efficiency_point(SIZES, s[:, 0], SIZES, d, seed=0)  # 1-D losses: one seed
    assert c.found and c.point == pytest.approx(3e6, rel=1e-9)
    assert c.low is None and c.high is None and c.found_fraction is None
    assert "interval unavailable" in c.reason and c.n_seeds == (1, 1)
    assert not c.contains(3e6)
    s5, _ = curves(SIZES, 3e6, seeds=5)
    assert depth_efficiency_point(SIZES, s5, SIZES, d, seed=0).low is None  # deep: one seed
    assert depth_efficiency_point(SIZES, s5, SIZES, d, n_boot=0).low is None


def test_frame_api_matches_the_array_api():
    s, d = curves(SIZES, 3e6, seeds=4, noise=0.03, rng=4)
    rows = [dict(size=x, family=f, seed=k, loss=m[i, k])
            for f, m in (("shallow", s), ("deep", d)) for i, x in enumerate(SIZES)
            for k in range(4)]
    df = pd.DataFrame(rows).sample(frac=1.0, random_state=0)  # any row order
    assert crossing_from_frame(df, seed=3) == depth_efficiency_point(SIZES, s, SIZES, d, seed=3)
    renamed = df.rename(columns={"family": "L"}).replace({"shallow": 2, "deep": 6})
    assert crossing_from_frame(renamed, family="L", shallow=2, deep=6, seed=3).point \
        == pytest.approx(crossing_from_frame(df, seed=3).point)
    with pytest.raises(ParameterError, match="missing seeds in family"):
        crossing_from_frame(df.iloc[1:])
    with pytest.raises(ParameterError, match="repeated rows"):
        crossing_from_frame(pd.concat([df, df.iloc[:1]]))
    with pytest.raises(ParameterError, match="lacks a family"):
        crossing_from_frame(df, deep="deeper")
    with pytest.raises(ParameterError, match="missing: loss"):
        crossing_from_frame(df.drop(columns="loss"))


def test_crossing_helpers_compare_with_a_prediction():
    c = Crossing(True, 8.0, 6.0, 12.0, "shallow->deep", "r")
    assert c.ratio(4.0) == (2.0, 1.5, 3.0) and c.contains(6.0) and not c.contains(13.0)
    assert Crossing(False, None, None, None, "shallow->shallow", "r").ratio(2.0) == \
        (None, None, None)
    with pytest.raises(ParameterError, match="prediction"):
        c.ratio(0.0)


S2 = np.ones((7, 2))


@pytest.mark.parametrize("kwargs, name", [
    (dict(shallow_losses=np.ones((6, 2))), "shallow_losses"),  # rows != sizes
    (dict(deep_losses=np.ones((7, 2, 1))), "deep_losses"),
    (dict(deep_losses=np.where(np.eye(7, 2) > 0, np.nan, 1.0)), "deep_losses"),
    (dict(shallow_losses=np.full((7, 2), np.inf)), "shallow_losses"),
    (dict(shallow_sizes=[1e5]), "shallow_sizes"),
    (dict(deep_sizes=np.r_[SIZES[:-1], np.inf]), "deep_sizes"),
    (dict(deep_sizes=np.r_[0.0, SIZES[1:]]), "deep_sizes"),
    (dict(shallow_sizes=np.r_[-1.0, SIZES[1:]]), "shallow_sizes"),
    (dict(shallow_sizes=np.r_[SIZES[:-1], SIZES[0]]), "shallow_sizes"),
    (dict(shallow_sizes=[[1, 2]]), "shallow_sizes"),
    (dict(deep_sizes=SIZES * 1e6), "deep_sizes"),  # ranges do not overlap
    (dict(shallow_losses="abc"), "shallow_losses"),
    (dict(n_boot=-1), "n_boot"),
    (dict(n_boot=2.5), "n_boot"),
    (dict(level=1.0), "level"),
    (dict(seed=None), "seed"),
])
def test_bad_input_is_one_line_naming_the_parameter(kwargs, name):
    args = dict(shallow_sizes=SIZES, shallow_losses=S2, deep_sizes=SIZES, deep_losses=S2)
    args.update(kwargs)
    with pytest.raises(ParameterError) as e:
        depth_efficiency_point(args.pop("shallow_sizes"), args.pop("shallow_losses"),
                               args.pop("deep_sizes"), args.pop("deep_losses"), **args)
    assert e.value.name == name and "\n" not in str(e.value)
    assert str(e.value).startswith(f"parameter {name} = ")
