"""attnbook.wies2021.attention_ratio: the grid of wies2021 section 5.3 and the redundancy it
reads."""

import doctest
import math
from functools import partial

import numpy as np
import pandas as pd
import pytest

from attnbook.book.pilot import at_budgets
from attnbook.engines.lm import LanguageModel, LMConfig, count_parameters
from attnbook.engines.lm_sweep import lm_config
from attnbook.errors import ParameterError
from attnbook.wies2021 import attention_ratio as ar

RATIOS = [1, 2, 4, 8, 16]


def test_doctests():
    assert doctest.testmod(ar).failed == 0


@pytest.fixture(scope="module")
def grid():
    return ar.design(ratios=RATIOS, depths=[2, 3], sizes=[40_000, 80_000],
                     baseline_sizes=[10_000, 20_000, 40_000, 80_000], d_a=8)


def test_every_net_has_the_requested_ratio_with_d_a_fixed(grid):
    assert set(grid["d_a"]) == {8}
    assert (grid["H"] * grid["d_a"] == grid["ratio"] * grid["d_x"]).all()
    for r in grid.itertuples():
        cfg = LMConfig(V=64, N=8, L=int(r.L), d_x=int(r.d_x), H=int(r.H), d_a=int(r.d_a))
        assert cfg.attention_ratio == r.ratio
    # the baseline is the ordinary Transformer: H d_a = d_x
    base = grid[grid["ratio"] == 1]
    assert (base["H"] * base["d_a"] == base["d_x"]).all()


@pytest.mark.parametrize("ratio", RATIOS)
@pytest.mark.parametrize("L,d_x", [(1, 8), (2, 16), (3, 24)])
def test_parameter_count_is_the_models(ratio, L, d_x):
    cfg = LMConfig(V=40, N=8, L=L, d_x=d_x, H=ratio * d_x // 8, d_a=8)
    assert ar.ratio_non_embedding_params(L, d_x, ratio) == \
        count_parameters(LanguageModel(cfg))["non_embedding"]


def test_width_is_the_closest_allowed_one():
    for ratio in RATIOS:
        step = ar.width_step(ratio, 8)
        assert all((ratio * w) % 8 == 0 for w in range(step, 200, step))
        for size in (5_000, 33_333, 90_000):
            w = ar.ratio_width(ratio, 2, size, d_a=8)
            brute = min(range(step, 400, step),
                        key=lambda x: (abs(ar.ratio_non_embedding_params(2, x, ratio) - size), x))
            assert w == brute


def test_nets_of_one_size_match_across_ratios_and_depths(grid):
    # at the cpu design, every net lies within 15% of its target size
    rel = grid["params_non_embedding"] / grid["size"]
    big = grid[grid["size"] >= 40_000]
    assert (abs(big["params_non_embedding"] / big["size"] - 1) < 0.15).all(), rel


def test_a_larger_ratio_means_a_narrower_net_at_the_same_size(grid):
    for _, part in grid[grid["size"] == 80_000].groupby("L"):
        widths = part.sort_values("ratio")["d_x"].to_numpy()
        assert (np.diff(widths) < 0).all()


def test_design_refuses_a_grid_without_baseline_or_with_colliding_sizes():
    with pytest.raises(ParameterError, match="ratios"):
        ar.design(ratios=[2, 4], depths=[2], sizes=[1e4], baseline_sizes=[1e4], d_a=8)
    with pytest.raises(ParameterError, match="distinct widths"):
        ar.design(ratios=[1], depths=[2], sizes=[1e4], baseline_sizes=[10_000, 10_100], d_a=8)


def test_ratio_configs_carry_heads_and_head_dim(grid):
    cs = ar.ratio_configs(grid, seeds=[3, 4], corpus="kjv", V=64, N=8, steps=2, batch=2,
                          lr=1e-3, warmup=0)
    assert len(cs) == 2 * len(grid)
    assert cs[0] == lm_config(corpus="kjv", V=64, N=8, L=int(grid["L"][0]),
                              d_x=int(grid["d_x"][0]), H=int(grid["H"][0]), d_a=8, steps=2,
                              batch=2, lr=1e-3, warmup=0, seed=3)


def _results(grid, loss_of):
    """Fake sweep results: two seeds per grid row, loss given by ``loss_of(row)`` +- 0.01."""
    rows = []
    for r in grid.itertuples():
        for seed, eps in ((0, -0.01), (1, 0.01)):
            rows.append({"L": r.L, "d_x": r.d_x, "H": r.H, "d_a": r.d_a, "seed": seed,
                         "params_non_embedding": r.params_non_embedding,
                         "test_loss": loss_of(r) + eps})
    return pd.DataFrame(rows)


def test_redundancy_recovers_a_known_fraction(grid):
    # loss = 5 - 0.3 log(size * g(ratio)) with g = 1 at ratio 1: a net of ratio rho behaves as a
    # baseline of size g(rho) times its own, so its matched fraction is exactly g(rho)
    g = {1: 1.0, 2: 0.9, 4: 0.75, 8: 0.65, 16: 0.55}
    table = ar.ratio_loss_table(_results(grid, lambda r: 5 - 0.3 * math.log(
        r.params_non_embedding * g[r.ratio])), grid)
    assert (table["seeds"] == 2).all()
    np.testing.assert_allclose(table["std"], math.sqrt(2) * 0.01)
    red = ar.redundancy(ar.best_depth(table))
    assert set(red["outside"]) == {""}
    np.testing.assert_allclose(red["fraction"], [g[r] for r in red["ratio"]], rtol=1e-6)
    f = ar.matched_fractions(red)
    assert f.keys() == {2, 4, 8, 16}
    np.testing.assert_allclose([f[r] for r in (2, 4, 8, 16)], [0.9, 0.75, 0.65, 0.55])


def test_claim_reads_of_some_seeds_read_only_their_nets(grid):
    """W-F4 and W-F6's reads without a seed are those of the sweep that never trained it."""
    g = {1: 1.0, 2: 0.9, 4: 0.75, 8: 0.65, 16: 0.55}
    results = _results(grid, lambda r: 5 - 0.3 * math.log(r.params_non_embedding * g[r.ratio]))
    results.loc[results["seed"] == 1, "test_loss"] += 0.5  # seed 1 off by far
    sizes = sorted(set(grid.loc[grid["ratio"] > 1, "size"]))
    every = ar.claim_reads(results, grid, sizes)
    alone = ar.claim_reads(results, grid, sizes, seeds=[0])
    assert all(len(x) == 2 for x in every["seed_losses"])
    assert all(len(x) == 1 for x in alone["seed_losses"]) and alone["nets"] == every["nets"]
    table = ar.ratio_loss_table(results[results["seed"] == 0], grid)
    assert alone["fractions"] == ar.matched_fractions(ar.redundancy(ar.best_depth(table)))
    pd.testing.assert_frame_equal(alone["spreads"], ar.spreads(table, sizes))


def test_best_depth_picks_the_lower_loss(grid):
    # depth 3 better by 0.05 at every ratio: the best-depth curve is all depth 3
    table = ar.ratio_loss_table(_results(grid, lambda r: 3 - 0.05 * (r.L == 3)), grid)
    assert set(ar.best_depth(table)["L"]) == {3}


def test_a_loss_outside_the_baseline_range_has_no_match(grid):
    worse = {1: 0.0, 2: 0.0, 4: 0.0, 8: 0.0, 16: 10.0}  # ratio 16 worse than every baseline
    better = {1: 0.0, 2: -10.0, 4: 0.0, 8: 0.0, 16: 0.0}  # ratio 2 better than every one
    for shift, ratio, where in ((worse, 16, "below"), (better, 2, "above")):
        table = ar.ratio_loss_table(_results(grid, lambda r, s=shift: 5 - 0.3 * math.log(
            r.params_non_embedding) + s[r.ratio]), grid)
        red = ar.redundancy(ar.best_depth(table))
        hit = red[red["ratio"] == ratio]
        assert (hit["outside"] == where).all() and hit["fraction"].isna().all()
        assert math.isnan(ar.matched_fractions(red)[ratio])


def test_spreads_separate_ratio_from_depth(grid):
    # loss = 3 + 0.1 log2(rho) + 0.02 (L == 3): across ratios 0.4, across depths 0.02
    table = ar.ratio_loss_table(_results(grid, lambda r: 3 + 0.1 * math.log2(r.ratio)
                                   + 0.02 * (r.L == 3)), grid)
    s = ar.spreads(table, [40_000, 80_000])
    np.testing.assert_allclose(s["across_ratios"], 0.4)
    np.testing.assert_allclose(s["across_depths_max"], 0.02)
    np.testing.assert_allclose(s["across_depths_mean"], 0.02)
    assert (s["ratios"] == 5).all()


def test_results_off_the_grid_are_refused(grid):
    res = _results(grid, lambda r: 3.0)
    res.loc[0, "d_x"] = 999
    with pytest.raises(ParameterError, match="grid"):
        ar.with_design(res, grid)


PILOT = dict(ratios=[1, 4, 16], depths=[2, 3, 4], sizes=[64_000],
             baseline_sizes=[4_000, 8_000, 16_000, 32_000, 64_000], d_a=4)
COMMON = dict(corpus="kjv", V=128, N=32, batch=32, lr=2e-3, warmup=20, eval_tokens=0)


@pytest.fixture(scope="module")
def pilot_grid():
    return ar.design(**PILOT)


def _pilot(grid, budgets, seed=0):
    """The pilot's nets: one seed of every net of ``grid`` at each budget, the longest first."""
    return at_budgets(partial(ar.ratio_configs, grid, seeds=[seed], **COMMON), budgets)


def test_the_pilot_grid_keeps_its_baselines_distinct(pilot_grid):
    # baselines down to 1/16 of the size stay distinct nets at every depth (d_a = 4)
    assert pilot_grid[pilot_grid["ratio"] == 1].groupby("L")["d_x"].nunique().eq(5).all()


def test_pilot_is_one_seed_of_every_net_per_budget_longest_first(pilot_grid):
    cs = _pilot(pilot_grid, [1000, 250, 4000], seed=7)
    assert len(cs) == 3 * len(pilot_grid) == 3 * 21
    assert {c["seed"] for c in cs} == {7}
    assert [c["steps"] for c in cs] == [4000] * 21 + [1000] * 21 + [250] * 21
    for steps in (250, 1000, 4000):
        part = [c for c in cs if c["steps"] == steps]
        assert part == ar.ratio_configs(pilot_grid, seeds=[7], steps=steps, **COMMON)


def _pilot_results(grid, cs, frac_of, depth_shift=0.0):
    """Fake pilot results: a ratio-rho net at a budget of ``steps`` behaves as a baseline of
    frac_of(rho, steps) times its size on loss = 10 - log(size), depth 3 better by
    ``depth_shift``; each net trained at 1000 tokens per second."""
    rows = []
    for c in cs:
        rho = c["H"] * c["d_a"] // c["d_x"]
        own = ar.ratio_non_embedding_params(c["L"], c["d_x"], rho)
        rows.append({**c, "params_non_embedding": own, "tokens_per_s": 1000.0,
                     "test_loss": 10 - math.log(own * frac_of(rho, c["steps"]))
                     - depth_shift * (c["L"] == 3)})
    return pd.DataFrame(rows)


def test_pilot_fractions_are_matched_fractions_of_each_budget_alone(pilot_grid):
    cs = _pilot(pilot_grid, [250, 1000, 4000])
    f = {(4, 250): 0.3, (4, 1000): 0.5, (4, 4000): 0.7,
         (16, 250): 0.1, (16, 1000): 0.2, (16, 4000): 0.4}
    res = _pilot_results(pilot_grid, cs, lambda rho, s: 1.0 if rho == 1 else f[rho, s])
    fr = ar.pilot_fractions(res, pilot_grid)
    assert sorted(zip(fr["ratio"], fr["steps"], strict=True)) == sorted(f)
    assert (fr["tokens"] == fr["steps"] * 32 * 32).all()
    for (steps, rho), row in fr.set_index(["steps", "ratio"]).iterrows():
        part = res[res["steps"] == steps]
        alone = ar.matched_fractions(ar.redundancy(ar.best_depth(ar.ratio_loss_table(part,
                                                                              pilot_grid))))
        assert row["fraction"] == pytest.approx(alone[rho])
        # the loss is linear in log size, as the matching interpolates: the fraction it was made at
        assert row["fraction"] == pytest.approx(f[rho, steps], rel=1e-9)
    # every net of the budget at 1000 tokens/s: 21 nets take 21 ms per token together
    np.testing.assert_allclose(fr["s_per_token"], 21 / 1000)


def test_pilot_fractions_bound_a_ratio_outside_the_baseline_range(pilot_grid):
    cs = _pilot(pilot_grid, [250, 1000])
    # ratio 16 worse than a baseline of 1/20 of its size at 250 steps (below the 1/16 reach)
    res = _pilot_results(pilot_grid, cs, lambda rho, s: {1: 1.0, 4: 0.6, 16: 0.05 if s == 250
                                                          else 0.5}[rho])
    fr = ar.pilot_fractions(res, pilot_grid).set_index(["steps", "ratio"])
    low = fr.loc[(250, 16)]
    assert math.isnan(low["fraction"]) and low["outside"] == "below"
    nets = ar.with_design(res[res["steps"] == 250], pilot_grid)
    smallest = nets[(nets["ratio"] == 1) & (nets["size"] == 4_000)]
    own = nets[nets["ratio"] == 16]
    # the smallest baseline's best depth over the ratio-16 net's best depth, in counts
    assert low["bound"] == pytest.approx(
        smallest.loc[smallest["test_loss"].idxmin(), "params_non_embedding"]
        / own.loc[own["test_loss"].idxmin(), "params_non_embedding"])
    assert fr.loc[(1000, 16), "outside"] == "" and math.isnan(fr.loc[(1000, 16), "bound"])
    assert fr.loc[(1000, 16), "fraction"] == pytest.approx(0.5, rel=1e-9)


def test_a_budget_still_training_is_left_out(pilot_grid):
    cs = _pilot(pilot_grid, [250, 1000])
    res = _pilot_results(pilot_grid, cs, lambda rho, s: 1.0 if rho == 1 else 0.5)
    unfinished = res.drop(index=res[res["steps"] == 250].index[-1])
    assert set(ar.pilot_fractions(unfinished, pilot_grid)["steps"]) == {1000}
    assert set(ar.pilot_spreads(unfinished, pilot_grid)["steps"]) == {1000}
    assert ar.pilot_fractions(res.iloc[:0], pilot_grid).empty
    assert ar.pilot_spreads(res.iloc[:0], pilot_grid).empty


def test_pilot_spreads_are_spreads_of_each_budget_alone(pilot_grid):
    cs = _pilot(pilot_grid, [250, 4000])
    res = _pilot_results(pilot_grid, cs, lambda rho, s: {1: 1.0, 4: 0.8, 16: 0.4}[rho],
                         depth_shift=0.01)
    sp = ar.pilot_spreads(res, pilot_grid)
    assert list(sp["steps"]) == [250, 4000] and set(sp["size"]) == {64_000}
    for row in sp.itertuples():
        part = res[res["steps"] == row.steps]
        alone = ar.spreads(ar.ratio_loss_table(part, pilot_grid), [64_000]).iloc[0]
        assert row.across_ratios == pytest.approx(alone["across_ratios"])
        assert row.across_depths_max == pytest.approx(alone["across_depths_max"])
        assert row.ratios == 3
    # the ratio-16 net behaves as 0.4 of the baseline: about log(1 / 0.4) apart from it
    assert sp["across_ratios"].iloc[0] == pytest.approx(math.log(1 / 0.4), rel=0.2)
    with pytest.raises(ParameterError, match="every ratio"):
        ar.pilot_spreads(res, pilot_grid, sizes=[32_000])  # a baseline size only


def test_a_sweep_sits_on_the_pilot_axes_read_on_its_own_grid_with_its_seed_mean():
    """A sweep of several seeds read as the pilot is read, on its own grid, each net's loss the
    mean over its seeds (seeds either side of the made fraction's loss); a sweep with a net
    missing reads nothing."""
    params = {**PILOT, "ratios": [1, 4], "sizes": [64_000]}
    grid = ar.design(**params)
    cs = ar.ratio_configs(grid, seeds=[0, 1], steps=500, **COMMON)
    res = _pilot_results(grid, cs, lambda rho, s: 1.0 if rho == 1 else 0.6)
    res["test_loss"] += np.where(res["seed"] == 0, 0.05, -0.05)
    last = res.iloc[-1]
    gone = res[~((res["L"] == last["L"]) & (res["d_x"] == last["d_x"]) & (res["H"] == last["H"]))]
    fr, sp = ar.pilot_fractions(res, grid), ar.pilot_spreads(res, grid)
    assert fr[["ratio", "steps"]].values.tolist() == [[4, 500]]
    assert fr["fraction"].iloc[0] == pytest.approx(0.6, rel=1e-9)
    assert len(sp) == 1 and sp["tokens"].iloc[0] == 500 * 32 * 32
    assert ar.pilot_fractions(gone, grid).empty and ar.pilot_spreads(gone, grid).empty
