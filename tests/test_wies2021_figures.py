"""attnbook.wies2021.figures: the figures and tables of wies2021's trained language models
draw what the chapters read, each point where its table puts it."""

import doctest
import math

import matplotlib
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest

from attnbook.wies2021 import attention_ratio as ar
from attnbook.wies2021 import figures as wfig

matplotlib.use("Agg")
PAPER = {4: 0.75, 16: 0.55}


def test_doctests():
    assert doctest.testmod(wfig).failed == 0


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


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
                                  depths=[1, 2])
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
    assert r["no_match"] == "16" and r["grows"] == "none"
    assert r["smallest_baseline"] == "1,000"
    assert (r["worst_std"], r["worst_net"]) == ("0.300", "ratio 4, L = 2, d_x = 16, 8 heads")
    rising = best.assign(mean=np.where(best["ratio"] == 16, best["size"] / 1000.0, best["mean"]))
    assert wfig.ratio_remarks(red.iloc[:0], rising, table)["no_match"] == "none"
    assert wfig.ratio_remarks(red, rising, table)["grows"] == "16"

