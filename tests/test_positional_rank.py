"""wies2021 Figure 7's pilot (attnbook.wies2021.positional_rank): the nets W-F7 compares, per
budget, and its deciding statistics, which must read as the criterion does."""

from functools import partial

import numpy as np
import pandas as pd
import pytest
import torch

from attnbook import ParameterError, criteria
from attnbook.book.pilot import at_budgets
from attnbook.engines.lm import LanguageModel, LMConfig
from attnbook.engines.lm_sweep import seed_groups
from attnbook.wies2021 import positional_rank as P

F7 = {k: criteria.thresholds("W-F7")[k] for k in ("pos_divisor", "low_divisor", "high_divisor")}
COMMON = dict(corpus="kjv", V=64, L=1, H=2, batch=2, lr=1e-3, warmup=1)


def _configs(N=128, d_x=64, budgets=(4, 8, 16)):
    return at_budgets(partial(P.f7_configs, seed=3, N=N, d_x=d_x, **F7, **COMMON), budgets)


def test_every_budget_trains_the_five_nets_of_w_f7_longest_first():
    cs = _configs()
    assert [c["steps"] for c in cs] == [16] * 5 + [8] * 5 + [4] * 5
    for steps in (4, 8, 16):
        nets = {(c["r"], c["r_e"]) for c in cs if c["steps"] == steps}
        # N/32 = 4 differs from rank 1 at N = 128; d_x/4 = 16 and d_x/8 = 8
        assert nets == {(None, None), (None, 1), (None, 4), (16, None), (8, None)}
    # one seed, and nothing but the ranks and the budget differs between the nets
    assert {c["seed"] for c in cs} == {3}
    rest = {tuple(sorted((k, v) for k, v in c.items() if k not in ("r", "r_e", "steps")))
            for c in cs}
    assert len(rest) == 1
    # no two configurations alike: each is its own unit of the sweep
    assert len(seed_groups(cs)) == len(cs)


def test_the_nets_have_the_ranks_w_f7_reads():
    for c in _configs(budgets=[4])[:5]:
        cfg = LMConfig(V=c["V"], N=c["N"], L=c["L"], d_x=c["d_x"], H=c["H"], r=c["r"],
                       r_e=c["r_e"])
        torch.manual_seed(0)
        model = LanguageModel(cfg)
        pos_rank = int(torch.linalg.matrix_rank(model.positional_matrix()))
        assert pos_rank == (c["r_e"] or min(c["N"], c["d_x"]))
        assert cfg.embedding_rank == (c["r"] or min(c["V"], c["d_x"]))


def test_a_short_context_has_one_positional_net():
    # N/32 rounds down to 0, at least 1: positional rank 1 is both of W-F7's positional points
    cs = _configs(N=16, d_x=16, budgets=[4])
    assert [(c["r"], c["r_e"]) for c in cs] == [(None, None), (None, 1), (4, None), (2, None)]


def test_bad_pilots_are_refused():
    with pytest.raises(ParameterError, match="common"):
        P.f7_configs(steps=4, seed=0, N=128, d_x=64, r=4, **F7, **COMMON)
    with pytest.raises(ParameterError, match="d_x"):
        _configs(d_x=4)  # d_x / 8 < 1
    with pytest.raises(ParameterError, match="N"):
        P.f7_configs(steps=4, seed=0, N=2, d_x=64, pos_divisor=1, low_divisor=8,
                     high_divisor=4, **COMMON)
    with pytest.raises(ParameterError, match="high_divisor"):
        P.f7_ranks(N=128, d_x=64, pos_divisor=32, low_divisor=4, high_divisor=8)


def _results(cs, losses, speed=None):
    """One stored result per configuration, as run.stored_sweep gives them back: ranks of
    full-rank nets as NaN; ``losses``: (r, r_e) -> a loss or a function of the steps."""
    def loss(c):
        at = losses[(c["r"], c["r_e"])]
        return at(c["steps"]) if callable(at) else float(at)

    rows = [dict(c, test_loss=loss(c), **({"tokens_per_s": speed} if speed else {}))
            for c in cs]
    return pd.DataFrame(rows).astype({"r": float, "r_e": float})


LOSSES = {(None, None): lambda s: 2.0 - 0.1 * np.log2(s), (None, 4): lambda s: 2.01 - 0.1 *
          np.log2(s), (None, 1): lambda s: 2.15 - 0.1 * np.log2(s), (16, None): lambda s: 2.1
          - 0.1 * np.log2(s), (8, None): lambda s: 2.3 - 0.1 * np.log2(s)}


def test_statistics_per_budget():
    s = P.f7_pilot_statistics(_results(_configs(), LOSSES, speed=1000.0), **F7)
    assert list(s["steps"]) == [4, 8, 16]
    assert list(s["tokens"]) == [4 * 2 * 128, 8 * 2 * 128, 16 * 2 * 128]
    assert s["pos_gap"].to_numpy() == pytest.approx([0.01] * 3)
    assert s["rank1_gap"].to_numpy() == pytest.approx([0.15] * 3)
    assert s["rank1_between"].to_numpy() == pytest.approx([0.25] * 3)  # 2.15 in [2.1, 2.3]
    assert s["s_per_token"].to_numpy() == pytest.approx([5e-3] * 3)  # five nets at 1000 tok/s
    gaps = P.f7_pilot_gaps(s)
    assert len(gaps) == 9 and set(gaps["needs"]) == {"near 0 (within the seed noise)", "at least 0"}
    by = gaps.set_index(["statistic", "steps"])["gap"]
    assert by[("r_e = 1 minus r = 16", 8)] == pytest.approx(0.05)
    assert by[("r = 8 minus r_e = 1", 8)] == pytest.approx(0.15)


def test_a_budget_still_training_is_left_out_and_a_second_seed_is_an_error():
    cs = _configs()
    partial = [c for c in cs if not (c["steps"] == 4 and c["r"] == 8)]
    s = P.f7_pilot_statistics(_results(partial, LOSSES), **F7)
    assert list(s["steps"]) == [8, 16]
    twice = cs + [dict(cs[0], seed=4)]
    with pytest.raises(ParameterError, match="one seed"):
        P.f7_pilot_statistics(_results(twice, LOSSES), **F7)
    with pytest.raises(ParameterError, match="columns"):
        P.f7_pilot_statistics(_results(cs, LOSSES).drop(columns="r_e"), **F7)


def test_one_positional_net_counts_once_in_the_speed():
    cs = _configs(N=16, d_x=16, budgets=[4])
    losses = {(None, None): 2.0, (None, 1): 2.05, (4, None): 2.1, (2, None): 2.2}
    s = P.f7_pilot_statistics(_results(cs, losses, speed=100.0), **F7).iloc[0]
    assert s["r_pos"] == 1 and s["pos_gap"] == pytest.approx(s["rank1_gap"])
    assert s["s_per_token"] == pytest.approx(4 / 100)  # four nets, not five


@pytest.mark.parametrize("seed", range(6))
def test_the_statistics_decide_as_the_criterion_does(seed):
    """W-F7 holds exactly where its statistics are on the sides the pilot says: |pos_gap|
    within n_std seed std, both bracket gaps >= 0 (and rank1_between in [0, 1] while the
    lower vocabulary rank has the higher loss)."""
    rng = np.random.default_rng(seed)
    n_std = criteria.thresholds("W-F7")["n_std"]
    cs = _configs(budgets=[4])
    for _ in range(50):
        values = dict(zip(LOSSES, 2 + 0.1 * rng.standard_normal(5), strict=True))
        std = float(rng.uniform(0.001, 0.05))
        s = P.f7_pilot_statistics(_results(cs, values), **F7).iloc[0]
        g = P.f7_pilot_gaps(pd.DataFrame([s]))["gap"].to_numpy()
        pos = {1: values[(None, 1)], 4: values[(None, 4)]}
        vocab = {16: values[(16, None)], 8: values[(8, None)]}
        holds = criteria.decide("W-F7", pos, vocab, values[(None, None)], std, 64, 128)
        assert holds == (abs(s["pos_gap"]) <= n_std * std and g[1] >= 0 and g[2] >= 0)
        if vocab[8] > vocab[16]:
            assert holds == (abs(s["pos_gap"]) <= n_std * std
                             and 0 <= s["rank1_between"] <= 1)
        else:  # no bracket: no position, and the criterion's second side fails
            assert np.isnan(s["rank1_between"]) and not holds


def test_a_sweep_reads_only_its_own_nets_at_its_width_and_budget_seed_averaged():
    """The baselines (other widths), the GPT-2 references and the longer convergence runs of
    a sweep are not read; the seeds of one net are averaged."""
    cs = P.f7_configs(steps=10, seed=0, N=128, d_x=64, pos_divisor=32, low_divisor=8,
                      high_divisor=4, corpus="kjv", V=64, L=2, batch=2, lr=1e-3, warmup=1)
    losses = [2.0, 2.3, 2.02, 2.2, 2.4]
    rows = [dict(c, seed=s, model="ours", test_loss=t + (0.1 if s else -0.1))
            for c, t in zip(cs, losses, strict=True) for s in (0, 1)]
    full = cs[0]
    rows += [dict(full, d_x=32, seed=0, model="ours", test_loss=9.0),  # a baseline
             dict(full, seed=0, model="gpt2", test_loss=9.0),  # a reference
             dict(full, steps=40, seed=0, model="ours", test_loss=0.1)]  # a longer run
    got = P.f7_sweep_statistics(pd.DataFrame(rows), d_x=64, steps=10, **F7)
    assert len(got) == 1
    row = got.iloc[0]
    assert (row["loss_full"], row["loss_rank1"]) == pytest.approx((2.0, 2.3))
    assert row["rank1_between"] == pytest.approx(0.5)
    assert P.f7_sweep_statistics(pd.DataFrame(rows[2:]), d_x=64, steps=10, **F7).empty  # no full


def test_the_pilot_reading_says_which_gaps_head_away_from_what_w_f7_asks():
    """A gap W-F7 needs >= 0 that is negative and falling: with one seed the reading says only
    what was measured (no standard error, no forecast); with seeds, heading away only where the
    fall exceeds 2 standard errors; every needed sign held: said so. The long profile's budget
    is called the pilot's largest only where it is."""
    def reading(gap, slope, seeds=1, se=float("nan")):
        return pd.DataFrame({"statistic": ["r_e = 4 minus full rank", "r = 8 minus r_e = 1"],
                             "needs": ["near 0 (within the seed noise)", "at least 0"],
                             "tokens": [1000, 1000], "gap": [-0.5, gap],
                             "per_doubling": [-0.1, slope], "seeds": [seeds, seeds],
                             "per_doubling_se": [se, se]})

    one = P.pilot_reading(reading(-0.2, -0.05), top_steps=10, long_steps=10)
    assert "r = 8 minus r_e = 1 is below the zero W-F7 asks at the largest budget" in one
    assert "one seed" in one and "no budget" not in one and "expected" not in one
    assert "the pilot's largest budget" in one
    away = P.pilot_reading(reading(-0.2, -0.05, seeds=3, se=0.01), top_steps=10, long_steps=10)
    assert "falling by more than 2 standard errors" in away
    noisy = P.pilot_reading(reading(-0.2, -0.05, seeds=3, se=0.03), top_steps=10, long_steps=20)
    assert "below zero, not falling beyond the noise" in noisy
    assert "the pilot's largest budget" not in noisy
    held = P.pilot_reading(reading(+0.2, -0.05), top_steps=10, long_steps=10)
    assert "Every gap that must be at least zero is." in held  # the near-0 gap is not judged
