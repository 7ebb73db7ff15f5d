"""attnbook.wies2021.figures: the figures and tables of wies2021's trained language models
draw what the chapters read, each point where its table puts it."""

import math

import numpy as np
import pandas as pd
import pytest

from attnbook import criteria
from attnbook.book import pilot as ap
from attnbook.book.plotting import overlapping_labels, spread_labels
from attnbook.criteria.wies2021 import f2_description
from attnbook.wies2021 import attention_ratio as ar
from attnbook.wies2021 import figures as wfig
from attnbook.wies2021 import rank_bottleneck as rb

PAPER = {4: 0.75, 16: 0.55}




def _ratio_sweep():
    """A sweep's tables: baselines on loss = 10 - log(size) at every depth (depth 3 the better),
    the ratio-4 nets at the loss of a baseline of half their size, the ratio-16 nets worse
    than every baseline."""
    rows = []
    for rho, sizes in ((1, [1000, 2000, 4000]), (4, [2000, 4000]), (16, [2000, 4000])):
        for size in sizes:
            for L, worse in ((2, 0.05), (3, 0.0)):
                loss = {1: 10 - math.log(size), 4: 10 - math.log(size / 2), 16: 9.0}[rho]
                rows.append({"ratio": rho, "size": size, "L": L, "d_x": 16, "H": 2 * rho,
                             "params_non_embedding": size, "mean": loss + worse,
                             "std": 0.01 * L, "seeds": 2})
    table = pd.DataFrame(rows)
    best = ar.best_depth(table)
    red = ar.redundancy(best)
    return table, best, red, ar.matched_fractions(red)


def test_figure4_puts_each_ratio_at_its_best_depth_and_fraction_beside_the_papers():
    table, best, red, fractions = _ratio_sweep()
    assert fractions[4] == pytest.approx(0.5) and math.isnan(fractions[16])
    fig = wfig.figure4(best, red, fractions, paper=PAPER, tol=0.15)
    ax, bx = fig.axes
    by_label = {line.get_label(): line for line in ax.lines}
    assert sorted(by_label) == ["$H d_a/d_x$ = 1 (baseline)", "$H d_a/d_x$ = 16",
                                "$H d_a/d_x$ = 4"]
    base = by_label["$H d_a/d_x$ = 1 (baseline)"]
    assert list(base.get_xdata()) == [1000, 2000, 4000]  # the baseline's best depth, 3
    assert list(base.get_ydata()) == pytest.approx([10 - math.log(s) for s in (1000, 2000, 4000)])
    assert [t.get_text() for t in ax.get_xticklabels()] == ["1,000", "2,000", "4,000"]
    mean = next(line for line in bx.lines if line.get_label().startswith("here"))
    assert list(mean.get_xdata()) == [1, 4, 16]
    assert mean.get_ydata()[:2] == pytest.approx([1.0, 0.5]) and math.isnan(mean.get_ydata()[2])
    stars = [c for c in bx.containers]  # one errorbar per paper reading, +- tol
    assert len(stars) == 2
    for (rho, f), star in zip(PAPER.items(), stars, strict=True):
        x, y = star.lines[0].get_data()
        assert (x[0], y[0]) == (rho, f)
        low, high = star.lines[1]
        assert low.get_ydata()[0] == pytest.approx(f - 0.15)
        assert high.get_ydata()[0] == pytest.approx(f + 0.15)


def test_figure6_draws_every_depth_and_names_the_best_here_and_in_table_5():
    table, best, _, _ = _ratio_sweep()
    fig = wfig.figure6(table, best, ar.PAPER_TABLE5)
    ax = fig.axes[0]
    assert len(ax.containers) == 3 * 2  # one errorbar series per ratio and depth
    labels = [line.get_label() for line in ax.lines if not line.get_label().startswith("_")]
    assert "ratio 1: best L here 3; paper 18/24" in labels  # the paper's bold depths
    assert "ratio 4: best L here 3; paper 24" in labels
    assert "ratio 16: best L here 3; paper 12" in labels
    assert {"L = 2", "L = 3"} <= set(labels)
    depth2 = [c for c in ax.containers if c.lines[0].get_marker() == "o"]
    assert len(depth2) == 3  # depth 2 is the circle at every ratio
    caps = [c.lines[2][0].get_segments() for c in ax.containers]
    bars = sorted({round(seg[0][1][1] - seg[0][0][1], 6) for seg in caps})
    assert bars == [0.04, 0.06]  # one seed standard deviation each side: 0.01 L


def _pilot():
    fr = pd.DataFrame({"steps": [4, 8, 4, 8], "tokens": [64, 128, 64, 128],
                       "ratio": [4, 4, 16, 16], "fraction": [0.5, 0.6, np.nan, np.nan],
                       "outside": ["", "", "below", "below"], "bound": [np.nan, np.nan, 0.3, 0.3]})
    sp = pd.DataFrame({"steps": [4, 8], "tokens": [64, 128], "size": [3000, 3000],
                       "across_ratios": [0.2, 0.3], "across_depths_max": [0.05, 0.2]})
    return fr, sp


def test_the_ratio_pilot_draws_the_fractions_bounds_and_profiles():
    fr, sp = _pilot()
    prof_fr = pd.DataFrame({"tokens": [100, 100], "ratio": [4, 8], "fraction": [0.7, np.nan],
                            "profile": ["cpu", "cpu"]})
    prof_sp = pd.DataFrame({"tokens": [100], "across_ratios": [0.25],
                            "across_depths_max": [0.1], "profile": ["cpu"]})
    fig = wfig.ratio_pilot_figure(fr, sp, prof_fr, prof_sp, paper=PAPER, tol=0.15, factor=2,
                                  depths=[1, 2], mark=ap.mark)
    ax, bx = fig.axes
    open_bound = [line for line in ax.lines if line.get_marker() == "v"
                  and len(line.get_xdata())]
    assert len(open_bound) == 1 and list(open_bound[0].get_ydata()) == [0.3, 0.3]
    assert open_bound[0].get_markerfacecolor() == "none"
    paper_lines = {line.get_label(): line.get_ydata()[0] for line in ax.lines
                   if line.get_label().startswith("paper")}
    assert paper_lines == {"paper: 0.75 at ratio 4": 0.75, "paper: 0.55 at ratio 16": 0.55}
    assert [t.get_text() for t in ax.texts] == ["cpu"]  # the NaN fraction is not drawn
    doubled = next(line for line in bx.lines if line.get_label().startswith("2 x"))
    assert list(doubled.get_ydata()) == pytest.approx([0.1, 0.4])
    assert [t.get_text() for t in bx.texts] == ["cpu", "cpu"]
    assert fig._suptitle.get_text() == "Pilot: depths 1, 2, one seed"
    # no profile has run: the pilot alone
    empty = pd.DataFrame(columns=["steps", "tokens", "profile"])
    fig = wfig.ratio_pilot_figure(fr, sp, empty, empty, paper=PAPER, tol=0.15, factor=2,
                                  depths=[1])
    assert not fig.axes[0].texts and not fig.axes[1].texts


def test_the_ratio_pilot_table_has_one_row_per_budget():
    fr, sp = _pilot()
    t = wfig.ratio_pilot_table(fr, sp)
    assert t[["steps", "tokens"]].values.tolist() == [[4, 64], [8, 128]]
    assert t["matched fraction, ratio 4"].tolist() == [0.5, 0.6]
    assert t["matched fraction, ratio 16"].isna().all()  # no match: no value
    assert t["largest across depths (size 3,000)"].tolist() == [0.05, 0.2]


def test_the_remarks_name_the_unmatched_and_the_rising_ratios_and_the_noisiest_net():
    table, best, red, _ = _ratio_sweep()
    table.loc[(table["ratio"] == 4) & (table["L"] == 2) & (table["size"] == 4000), "std"] = 0.3
    r = wfig.ratio_remarks(red, best, table)
    assert r["no_match"] == "16 (below)" and r["grows"] == "none"
    above = red.assign(outside=np.where(red["ratio"] == 16, "above", red["outside"]))
    assert wfig.ratio_remarks(above, best, table)["no_match"] == "16 (above)"  # W-F4 fails it too
    assert r["smallest_baseline"] == "1,000"
    assert (r["worst_std"], r["worst_net"]) == ("0.300", "ratio 4, L = 2, d_x = 16, 8 heads")
    rising = best.assign(mean=np.where(best["ratio"] == 16, best["size"] / 1000.0, best["mean"]))
    assert wfig.ratio_remarks(red.iloc[:0], rising, table)["no_match"] == "none"
    assert wfig.ratio_remarks(red, rising, table)["grows"] == "16"


def _lm_results():
    """A rank-bottleneck sweep of two seeds: the unfactored net, ranks 2 and 4 and the control
    48 at width 32, baselines of width 8 and 16, positional ranks 1 and 4, GPT-2, the longer
    run."""
    rows = []
    nets = [("full", "ours", 32, None, None, 2.0, 3000), ("rank", "ours", 32, 2, None, 2.3, 2000),
            ("rank", "ours", 32, 4, None, 2.2, 2100), ("rank", "ours", 32, 48, None, 2.02, 3500),
            ("baseline", "ours", 8, None, None, 2.5, 800),
            ("baseline", "ours", 16, None, None, 2.25, 1500),
            ("positional", "ours", 32, None, 1, 2.1, 2900),
            ("positional", "ours", 32, None, 4, 2.05, 2950),
            ("gpt2", "gpt2", 32, None, None, 2.01, 3000),
            ("long", "ours", 32, None, None, 1.9, 3000)]
    for seed in (0, 1):
        for group, model, d_x, r, r_e, loss, params in nets:
            rows.append({"group": group, "model": model, "d_x": d_x, "r": r, "r_e": r_e,
                         "seed": seed, "params_total": params,
                         "test_loss": loss + (0.01 if seed else -0.01)})
    return pd.DataFrame(rows).astype({"r": float, "r_e": float})


def test_figure2_places_each_net_and_names_the_control():
    res = _lm_results()
    nets = rb.net_table(res)
    base = nets[nets["group"].isin(["baseline", "full"])].sort_values("params_total")
    low = rb.bottleneck_table(res, 32)
    fig = wfig.figure2(base, low, 32)
    ax = fig.axes[0]
    full_rank, factored = ax.lines[:2]
    assert list(full_rank.get_xdata()) == [800, 1500, 3000]
    assert list(full_rank.get_ydata()) == pytest.approx([2.5, 2.25, 2.0])
    assert list(factored.get_xdata()) == [2000, 2100, 3500]  # by rank: 2, 4, 48
    drawn = wfig.figure2_labels(base, low)
    named = dict(zip(drawn["labels"], drawn["points"], strict=True))
    assert named["r=48 (control)"] == (3500, pytest.approx(2.02))
    assert {"r=2", "r=4", "$d_x$=8", "$d_x$=16", "$d_x$=32"} <= set(named)
    assert drawn["colors"].count("tab:green") == len(base)
    spread_labels(ax, **drawn, column=True)  # as the chapter does
    assert not overlapping_labels(fig)
    # the paper's reading where W-F2's part "size" judges it: a share of the control's size
    ax = wfig.figure2(base, low, 32, anchor=2, size_ratio=0.75, size_tolerance=0.15).axes[0]
    ctrl = float(low.loc[low["control"], "matched_params"].iloc[0])
    (span,) = ax.patches
    assert span.get_x() == pytest.approx(0.6 * ctrl)
    assert span.get_x() + span.get_width() == pytest.approx(0.9 * ctrl)
    cross = [line for line in ax.lines if line.get_marker() == "x"]
    assert cross[0].get_xdata()[0] == float(low.loc[low["r"] == 2, "matched_params"].iloc[0])


def test_a_net_better_than_every_full_rank_net_matches_no_size():
    """The matched size of a loss below every full-rank net's is not the largest net's size
    (an extrapolation): it is NaN, so W-F2's part "size" is not testable there, and its
    sentence says which net has no match."""
    res = _lm_results()
    better = res.assign(test_loss=res["test_loss"].where(~(res["r"] == 48), 1.95))
    low = rb.bottleneck_table(better, 32).set_index("r")
    assert np.isnan(low.loc[48, "matched_params"]) and low.loc[2, "matched_params"] > 0
    assert rb.bottleneck_table(res, 32).set_index("r").loc[48, "matched_params"] > 0
    nets = rb.f2_nets(rb.bottleneck_table(better, 32))
    assert criteria.decide("W-F2", "size", nets, 32) == criteria.NOT_TESTABLE
    assert "not measured (the control's loss below every full-rank net's)" in \
        f2_description("size", nets, 32)


def test_figure7_ends_both_curves_at_the_full_rank_net():
    res = _lm_results()
    vocab, positional = wfig.figure7_curves(rb.net_table(res), 32, 16)
    assert vocab["r"].tolist() == [2, 4, 32]  # the control (48 > d_x) is no vocabulary rank
    assert positional["r_e"].tolist() == [1, 4, 16]
    assert vocab["test_loss"].iloc[-1] == positional["test_loss"].iloc[-1] == pytest.approx(2.0)
    fig = wfig.figure7(vocab, positional)
    orange, blue = fig.axes[0].containers
    assert list(orange.lines[0].get_xdata()) == [2, 4, 32]
    assert list(blue.lines[0].get_ydata()) == pytest.approx([2.1, 2.05, 2.0])
    # with W-F7's measurement, the paper's readings as the criterion places them
    t = {"n_std": 2, "pos_divisor": 32, "low_divisor": 16, "high_divisor": 8}
    f7 = rb.f7_measurement(res, 32)  # vocabulary ranks 2 (d_x/16) and 4 (d_x/8)
    bands = wfig.figure7(vocab, positional, f7, d_x=32, thresholds=t).axes[0].patches
    spans = sorted((round(p.get_y(), 6), round(p.get_y() + p.get_height(), 6)) for p in bands)
    std = f7["full_std"]
    assert spans == sorted([(round(2.0 - 2 * std, 6), round(2.0 + 2 * std, 6)),
                            (round(f7["vocab"][4], 6), round(f7["vocab"][2], 6))])


def test_the_positional_pilot_draws_each_cost_against_the_full_rank_net():
    stats = pd.DataFrame({"steps": [10, 20], "tokens": [2560, 5120], "r_pos": 4, "r_high": 16,
                          "r_low": 8, "loss_full": [2.0, 1.9], "loss_pos": [2.02, 1.91],
                          "loss_rank1": [2.3, 2.1], "loss_high": [2.2, 2.0],
                          "loss_low": [2.4, 1.95], "rank1_between": [0.5, np.nan]})
    runs = pd.DataFrame({"N": [128], "d_x": [64], "L": [4]})
    profiles = stats.assign(profile="cpu").iloc[:1]
    fig = wfig.positional_pilot_figure(stats, profiles, runs, pos_divisor=32, low_divisor=8,
                                       high_divisor=4, mark=ap.mark)
    ax, bx = fig.axes
    lines = {line.get_label(): line.get_ydata() for line in ax.lines}
    assert lines["positional rank 4 (N/32)"] == pytest.approx([0.02, 0.01])
    assert lines["vocabulary rank 8 (d_x/8)"] == pytest.approx([0.4, 0.05])
    assert [t.get_text() for t in ax.texts] == ["cpu"] * 4  # one marker per net, named
    assert any(t.get_text().startswith("no point: vocabulary rank 8's loss not above rank 16's")
               for t in bx.texts)  # the second budget has no bracket
    assert fig._suptitle.get_text() == "N = 128, d_x = 64, L = 4, one seed"
    empty = pd.DataFrame(columns=[*stats.columns, "profile"])
    assert not wfig.positional_pilot_figure(stats, empty, runs, pos_divisor=32, low_divisor=8,
                                            high_divisor=4).axes[0].texts


def test_the_seed_table_is_the_repeated_points_seed_statistics():
    res = _lm_results()
    t = wfig.seed_table(rb.repeat_losses(res, 4), d_x=32, tab2_rank=4, longer=4)
    assert list(t.index) == ["GPT2LMHeadModel", "ours, 4 x the steps", "ours, r = 4",
                             "ours, r = d_x = 32"]
    row = t.loc["ours, r = 4"]
    assert (row["mean"], row["count"]) == (pytest.approx(2.2), 2)
    assert row["std"] == pytest.approx(np.std([2.19, 2.21], ddof=1))
    assert t["ppl"].tolist() == pytest.approx(np.exp(t["mean"]).tolist())
