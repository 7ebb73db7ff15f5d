"""attnbook.bruna2024.figures: the figures and tables of bruna2024's lower bound draw what the
chapter computed, each point where its table puts it."""

import math

import numpy as np
import pandas as pd
import pytest

from attnbook import criteria
from attnbook.book.plotting import overlapping_labels
from attnbook.bruna2024 import figures as bf


def _labels(ax):
    return [line.get_label() for line in ax.lines if not line.get_label().startswith("_")]


def test_sign_coefficients_draws_each_d_the_reference_slope_and_each_rank():
    ls = np.arange(1, 200, 2)
    coef = pd.concat([pd.DataFrame({"d": dd, "l": ls, "coefficient": (-1.0) ** ls / (dd * ls)})
                      for dd in (3, 16)], ignore_index=True)
    H = np.array([1.0, 10.0, 100.0])
    bounds = pd.concat([pd.DataFrame({"r": r, "H": H, "bound": 1 / (r * H)}) for r in (4, 1)],
                       ignore_index=True)
    fig = bf.sign_coefficients_figure(coef, bounds, d=16, l_from=20, l_max=200)
    top, bottom = fig.axes
    assert _labels(top) == ["d = 3", "d = 16", r"$\propto \ell^{-1}$"]
    d16 = top.lines[1]
    assert list(d16.get_xdata()) == list(ls)
    assert d16.get_ydata() == pytest.approx(1 / (16 * ls))  # |coefficient|
    ref = top.lines[2]  # through |coef| at l = 21, d = 16, falling like 1/l from 20 to 200
    assert list(ref.get_xdata()) == [20, 200]
    assert ref.get_ydata() == pytest.approx([1 / (16 * 21), 1 / (16 * 21) / 10])
    assert ref.get_linestyle() == "--"
    assert _labels(bottom) == ["r = 4", "r = 1"]  # in the table's order
    assert bottom.lines[1].get_ydata() == pytest.approx(1 / H)
    assert bottom.get_xscale() == "log" and top.get_yscale() == "log"
    assert bottom.get_title() == "rank-r heads approximating sign(z.y), d = 16"
    assert overlapping_labels(fig) == []


def _needed():
    """H_needed = (d/r)^k exactly, k = 2 at eps 0.5 and 3 at eps 0.25, for r = 1 and 4; one
    kink at r = 4, eps = 0.25."""
    rows = []
    for r in (1, 4):
        for eps, k in ((0.5, 2), (0.25, 3)):
            for dd in (16, 64, 256):
                H = (dd / r) ** k * (2.0 if (r, eps, dd) == (4, 0.25, 256) else 1.0)
                rows.append({"r": r, "eps": eps, "d": dd, "H_needed": H})
    return pd.DataFrame(rows)


def test_heads_needed_fits_read_the_power_of_d_over_r_and_its_local_spread():
    fits = bf.heads_needed_fits(criteria.bruna2024.heads_needed_slopes(_needed()))
    fits = fits.set_index(["r", "eps"])
    assert list(fits.columns) == ["exponent", "1/eps", "local_min", "local_max"]
    assert fits.loc[(1, 0.5), "exponent"] == pytest.approx(2.0)
    assert fits.loc[(1, 0.25), "exponent"] == pytest.approx(3.0)
    assert fits.loc[(1, 0.25), "1/eps"] == pytest.approx(4.0)
    assert fits.loc[(1, 0.25), ["local_min", "local_max"]].tolist() == pytest.approx([3.0, 3.0])
    kinked = fits.loc[(4, 0.25)]  # the last step is steeper by log 2 / log 4 = 0.5
    assert kinked[["local_min", "local_max"]].tolist() == pytest.approx([3.0, 3.5])
    assert 3.0 < kinked["exponent"] < 3.5


def test_heads_needed_figure_puts_each_r_and_eps_at_d_over_r():
    fig = bf.heads_needed_figure(_needed())
    ax = fig.axes[0]
    lines = {line.get_label(): line for line in ax.lines}
    assert sorted(lines) == ["r = 1, eps = 0.25", "r = 1, eps = 0.5", "r = 4, eps = 0.25",
                             "r = 4, eps = 0.5", "talk: (d/r)^(1/eps) = (d/r)^2",
                             "talk: (d/r)^(1/eps) = (d/r)^4"]
    talk, r1 = lines["talk: (d/r)^(1/eps) = (d/r)^4"], lines["r = 1, eps = 0.25"]
    y = talk.get_ydata()  # slope 1/eps = 4 through the r = 1 line's first point
    assert y[0] == r1.get_ydata()[0] and y[1] / y[0] == pytest.approx(
        (r1.get_xdata()[1] / r1.get_xdata()[0]) ** 4)
    r4 = lines["r = 4, eps = 0.5"]
    assert list(r4.get_xdata()) == [4, 16, 64]
    assert list(r4.get_ydata()) == [16, 256, 4096]
    assert r4.get_marker() == "s" and lines["r = 1, eps = 0.5"].get_marker() == "o"
    assert ax.get_xscale() == ax.get_yscale() == "log"
    assert overlapping_labels(fig) == []


def _exact():
    return pd.DataFrame({"d": [8, 16, 32], "error_margin": np.exp(-0.5 * np.array([8, 16, 32])),
                         "error_all": [0.2, 0.1, 0.05]})


def test_the_log_error_drops_are_per_unit_d_in_order_of_d():
    exact = _exact()
    pairs = list(zip(exact["d"], exact["error_margin"], strict=True))
    d, err, drops = criteria.bruna2024.log_error_drops(pairs[::-1])  # read in order of d
    assert d.tolist() == [8, 16, 32] and drops.tolist() == pytest.approx([0.5, 0.5])
    _, _, everywhere = criteria.bruna2024.log_error_drops(
        zip(exact["d"], exact["error_all"], strict=True))
    assert everywhere.tolist() == pytest.approx([math.log(2) / 8, math.log(2) / 16])


def test_majority_vote_figure_draws_both_accuracies_bands_and_the_exact_error():
    x = [0.5, 1.0, 2.0]
    mv = pd.concat([pd.DataFrame({
        "d": dd, "H_over_d2": x, "accuracy": [0.6, 0.7, 0.8], "lo": [0.55, 0.65, 0.75],
        "hi": [0.65, 0.75, 0.85], "hoeffding": [0.5, 0.55, 0.6],
        "accuracy_typical": [0.9, 0.95, 0.99], "lo_typical": [0.85, 0.9, 0.97],
        "hi_typical": [0.95, 0.99, 1.0], "hoeffding_typical": [0.7, 0.8, 0.9]}) for dd in (8, 16)],
        ignore_index=True)
    exact = _exact()
    fig = bf.majority_vote_figure(mv, exact)
    top, middle, bottom = fig.axes
    assert _labels(top) == ["d = 8", "d = 16"]
    assert list(top.lines[0].get_ydata()) == [0.6, 0.7, 0.8]
    assert list(top.lines[1].get_ydata()) == [0.5, 0.55, 0.6]  # Hoeffding, dotted, same colour
    assert top.lines[1].get_linestyle() == ":"
    assert top.lines[1].get_color() == top.lines[0].get_color()
    assert list(middle.lines[0].get_ydata()) == [0.9, 0.95, 0.99]
    assert len(top.collections) == len(middle.collections) == 2  # one band per d
    band = top.collections[0].get_paths()[0].vertices[:, 1]
    assert band.min() == pytest.approx(0.55) and band.max() == pytest.approx(0.85)
    assert _labels(bottom) == ["all inputs", r"margin $\geq d^{-1/2}$",
                               r"$e^{-2d/\pi^2}$ (Hoeffding at the margin)"]
    assert list(bottom.lines[0].get_xdata()) == [8, 16, 32]
    assert list(bottom.lines[0].get_ydata()) == [0.2, 0.1, 0.05]
    assert bottom.lines[2].get_ydata() == pytest.approx(np.exp(-2 * np.array([8, 16, 32])
                                                               / np.pi**2))
    assert bottom.get_yscale() == "log"
    assert overlapping_labels(fig) == []
