"""attnbook.levine2020.depth_transition: matched sizes across depths, transitions between
consecutive depths located where they were put, and the L-D criterion applied to them."""

import math
from functools import partial

import numpy as np
import pandas as pd
import pytest

from attnbook import criteria
from attnbook.book.pilot import at_budgets
from attnbook.engines.depth_sweep import non_embedding_params
from attnbook.errors import ParameterError
from attnbook.levine2020 import depth_transition as dt

DEPTHS = [1, 2, 3, 4]
BASE = [8, 16, 32, 64, 128]


def test_every_depth_covers_the_sizes_of_the_shallowest():
    widths = dt.depth_widths(BASE, DEPTHS, H=2)
    assert widths[1] == BASE and sorted(widths) == DEPTHS
    for L, ws in widths.items():
        assert all(w % 2 == 0 for w in ws) and ws == sorted(ws)
        for w, w0 in zip(ws, BASE, strict=True):
            p, p0 = non_embedding_params(L, w), non_embedding_params(1, w0)
            # the closest multiple of H: within one width step of the base size
            lo, hi = non_embedding_params(L, w - 2), non_embedding_params(L, w + 2)
            assert lo <= p0 <= hi or abs(p - p0) <= min(abs(lo - p0), abs(hi - p0))
            if w0 >= 32:
                assert abs(p / p0 - 1) < 0.1


def test_one_config_per_depth_width_seed():
    cs = dt.depth_configs(depths=[3, 1, 2], base_widths=[16, 32], seeds=[5, 6, 7], V=64,
                          corpus="kjv", N=16, steps=2, batch=2, lr=1e-3, warmup=0)
    assert len(cs) == 3 * 2 * 3
    assert len({(c["L"], c["d_x"], c["seed"]) for c in cs}) == len(cs)
    assert [c["L"] for c in cs[::6]] == [1, 2, 3]  # depths sorted


@pytest.mark.parametrize("depths", [[2], [1, 1, 2], [0, 1], [1.5, 2]])
def test_bad_depths_are_refused(depths):
    with pytest.raises(ParameterError, match="depths"):
        dt.depth_widths([16, 32], depths)


def test_narrow_base_width_is_refused():
    with pytest.raises(ParameterError, match="base_widths"):
        dt.depth_widths([1, 16], [1, 2], H=2)


def _synthetic(T: dict, seeds=(0, 1, 2), noise=1e-3, depths=DEPTHS, base=BASE):
    """Losses with the deeper of each pair (L, L+1) winning exactly from T[L] parameters on:
    loss_L(P) = 4 - 0.2 ln P + 0.05 sum_{j < L} (ln T_j - ln P)."""
    rng = np.random.default_rng(0)
    rows = []
    for L, ws in dt.depth_widths(base, depths, H=2).items():
        for w in ws:
            P = non_embedding_params(L, w)
            mean = 4 - 0.2 * math.log(P) + 0.05 * sum(math.log(T[j]) - math.log(P)
                                                      for j in depths if j < L)
            rows += [{"V": 64, "L": L, "d_x": w, "seed": s, "params_non_embedding": P,
                      "test_loss": mean + noise * rng.standard_normal()} for s in seeds]
    return pd.DataFrame(rows)


LD_COLUMNS = ["L_shallow", "L_deep", "width", "found_fraction", "band"]  # what L-D reads


def test_transitions_are_found_where_they_were_put():
    T = {1: non_embedding_params(1, 20), 2: non_embedding_params(2, 30),
         3: non_embedding_params(3, 45)}
    table = dt.transitions(_synthetic(T), n_boot=200)  # band 0: the plain sign change
    assert list(zip(table["L_shallow"], table["L_deep"], strict=True)) == [(1, 2), (2, 3), (3, 4)]
    assert table["found"].all()
    for row, w in zip(table.itertuples(), [20, 30, 45], strict=True):
        assert row.point == pytest.approx(T[row.L_shallow], rel=0.02)
        assert row.width == pytest.approx(w, rel=0.05)  # the shallower depth's width
        assert row.width_low <= row.width <= row.width_high
    rates = criteria.levine2020.growth_rates(table, min_found=0.8)
    assert rates == pytest.approx([math.log(1.5, 3)] * 2, rel=0.1)
    banded = dt.transitions(_synthetic(T), n_boot=200, band=2)  # as the criterion asks
    assert (banded["width"] >= table["width"]).all()  # a win beyond the noise comes no earlier
    assert (banded["found_fraction"] >= 0.8).all() and (banded["band"] == 2).all()
    meas = banded[LD_COLUMNS].itertuples(index=False)
    assert criteria.decide("L-D", meas) is True  # geometric growth: equal rates


def test_a_transition_that_does_not_grow_is_not_reproduced():
    T = {1: non_embedding_params(1, 40), 2: non_embedding_params(2, 30),
         3: non_embedding_params(3, 60)}
    table = dt.transitions(_synthetic(T), n_boot=200, band=2)
    assert table["found"].all() and table["width"].iloc[1] < table["width"].iloc[0]
    meas = table[LD_COLUMNS].itertuples(index=False)
    assert criteria.decide("L-D", meas) is False


def test_deep_never_winning_is_no_transition():
    T = {1: 1e9, 2: 1e9, 3: 1e9}  # far beyond the largest size: the shallower always wins
    table = dt.transitions(_synthetic(T), n_boot=100, band=2)
    assert not table["found"].any() and table["width"].isna().all()
    assert all("never wins" in r for r in table["reason"])
    meas = table[LD_COLUMNS].itertuples(index=False)
    assert criteria.decide("L-D", meas) is False


def test_loss_table_has_the_seed_spread():
    df = _synthetic({1: 1e4, 2: 3e4, 3: 9e4}, noise=0.0)
    df.loc[(df["L"] == 2) & (df["seed"] == 1), "test_loss"] += 0.03
    t = dt.depth_loss_table(df)
    assert len(t) == 4 * 5 and (t["seeds"] == 3).all()
    assert t.loc[t["L"] == 2, "std"].to_numpy() == pytest.approx(0.03 / math.sqrt(3))
    assert (t.loc[t["L"] != 2, "std"] < 1e-12).all()
    assert criteria.decide("L-Tab2", t["std"]) is False
    assert criteria.decide("L-Tab2", t.loc[t["L"] != 2, "std"]) is True


def test_growth_rates_count_factors_of_three_per_layer_between_established_widths():
    def rows(widths, found=(1.0, 1.0, 1.0)):
        return [dict(L_shallow=L, width=w, found_fraction=f)
                for L, w, f in zip((1, 2, 4), widths, found, strict=True)]

    rates = criteria.levine2020.growth_rates
    assert rates(rows([3, 9, 81]), 0.8) == pytest.approx([1.0, 1.0])
    assert rates(rows([3, None, 81]), 0.8) == [None, None]
    assert rates(rows([3, 9, 81], (1.0, 0.79, 1.0)), 0.8) == [None, None]  # not established
    assert rates(rows([3, 9, 81])[::-1], 0.8) == pytest.approx([1.0, 1.0])  # read in depth


@pytest.mark.parametrize("meas, verdict", [
    ([(1, 2, 10.0), (2, 3, 30.0), (3, 4, 90.0)], True),      # x3 per layer: L = log3 d_x + c
    ([(6, 12, 220.0), (12, 18, 290.0), (18, 24, 410.0)], True),  # Table 1's pair widths
    ([(1, 2, 10.0), (2, 3, 30.0)], False),                    # fewer pairs than the criterion's
    ([(1, 2, 10.0), (2, 3, 12.0), (3, 4, 90.0)], False),       # growth far from geometric
    ([(1, 2, 10.0), (2, 3, 10.0), (3, 4, 90.0)], False),       # no growth from 2 to 3
    ([(1, 2, 10.0), (3, 4, 30.0), (4, 5, 90.0)], False),       # pairs not consecutive
    ([(1, 2, 10.0), (2, 3, float("nan")), (3, 4, 90.0)], False),
])
def test_the_ld_criterion(meas, verdict):
    assert criteria.decide("L-D", [(*m, 1.0, 2) for m in meas]) is verdict


def test_pilot_gaps_per_pair_of_consecutive_depths_and_budget():
    cs = at_budgets(partial(dt.depth_configs, depths=[2, 3, 4], base_widths=[16, 64], seeds=[0],
                            V=64, corpus="kjv", N=16, batch=2, lr=1e-3, warmup=1), [10, 40])
    assert [c["steps"] for c in cs] == [40] * 6 + [10] * 6  # the longest first
    assert {c["seed"] for c in cs} == {0}
    # deeper wins by 0.1 per layer at the larger size, loses by 0.1 at the smaller one
    rows = [{**c, "params_non_embedding": non_embedding_params(c["L"], c["d_x"]),
             "test_loss": 3.0 - 0.01 * c["steps"] + 0.1 * (c["L"] - 2)
             * (1 if c["d_x"] <= 16 else -1)} for c in cs]
    gaps = dt.pilot_depth_gaps(pd.DataFrame(rows))
    assert list(gaps.columns[:2]) == ["L_shallow", "L_deep"]
    assert sorted(set(zip(gaps["L_shallow"], gaps["L_deep"], strict=True))) == [(2, 3), (3, 4)]
    # depths 3 and 4 at the smaller size (width 12 each: 5,676 against 7,560 parameters) are
    # not matched within 25% of each other and are left out; the other sizes are
    assert gaps.groupby(["L_shallow", "L_deep"]).size().to_dict() == {(2, 3): 4, (3, 4): 2}
    small = gaps["d_shallow"] <= 16
    assert gaps.loc[small, "gap"].to_numpy() == pytest.approx(0.1)
    assert gaps.loc[~small, "gap"].to_numpy() == pytest.approx(-0.1)


def test_a_sweep_sits_on_the_pilot_axes_per_depth_pair_with_its_seed_mean():
    rows = [dict(V=16, L=L, d_x=w, seed=s, steps=4, batch=2, N=8,
                 test_loss=t + (0.2 if s else -0.2),
                 params_non_embedding=non_embedding_params(L, w))
            for L, w, t in ((1, 16, 3.0), (2, 12, 2.8), (3, 10, 2.9)) for s in (0, 1)]
    got = dt.sweep_depth_gaps(pd.DataFrame(rows))
    assert got[["L_shallow", "L_deep"]].values.tolist() == [[1, 2], [2, 3]]
    assert got["gap"].tolist() == pytest.approx([-0.2, 0.1])
    assert dt.sweep_depth_gaps(pd.DataFrame(rows[:2])).empty  # one depth: no pair
