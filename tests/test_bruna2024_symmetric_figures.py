"""attnbook.bruna2024.symmetric_figures: the figures and tables of bruna2024's symmetric functions
draw what the chapter computed, each point where its table puts it."""

import math

import numpy as np
import pandas as pd
import pytest

from attnbook.book.plotting import overlapping_labels
from attnbook.bruna2024 import symmetric as sy
from attnbook.bruna2024 import symmetric_figures as sf


def _labels(ax):
    return [line.get_label() for line in ax.lines if not line.get_label().startswith("_")]


def _counts():
    return pd.concat([sy.generator_counts(dd, NN) for dd in (1, 2) for NN in (1, 2)],
                     ignore_index=True)


def test_generator_summary_sets_the_count_beside_the_enumeration_and_the_binomial():
    summary = sf.generator_summary(_counts())
    assert summary[["d", "N"]].values.tolist() == [[1, 1], [1, 2], [2, 1], [2, 2]]
    row = summary.iloc[3]  # d = 2, N = 2: 2 power sums of degree 1, 3 of degree 2, none after
    assert row["needed by degree"] == "2 3 0"
    assert row["1 + sum"] == row["enumerated |alpha| <= N"] == row["C(d+N, N)"] == 6
    assert (summary["1 + sum"] == summary["C(d+N, N)"]).all()
    assert summary["C(d+N, N)"].tolist() == [math.comb(dd + NN, NN) for dd, NN in
                                             ((1, 1), (1, 2), (2, 1), (2, 2))]


def test_basis_cases_are_what_the_power_sum_part_reads():
    cases = sf.basis_cases(_counts())
    assert len(cases) == 4
    needed, predicted, total, binomial = cases[3]
    assert needed == predicted == [2, 3, 0]
    assert (total, binomial) == (6, 6)


def test_separation_figure_puts_the_tail_bound_and_pairwise_error():
    sep = pd.DataFrame({"H": [0, 1, 2, 3, 4], "eckart_young": [1.0, 0.75, 0.5, 0.25, 0.0],
                        "pairwise_error": [1e-30] * 5})
    sep["zb_bound"] = sy.zb_lower_bound(sep["H"], 4, 4)
    fig = sf.separation_figure(sep, N=4, d=4, D=4)
    ax = fig.axes[0]
    tail, bound, pair = ax.lines
    assert list(tail.get_ydata()) == [1.0, 0.75, 0.5, 0.25, 0.0]
    assert bound.get_ydata() == pytest.approx(np.array([4, 3, 2, 1, 0]) / 4 / 6)
    assert list(pair.get_ydata()) == [1e-30, 1e-30]  # a horizontal line at the largest error
    assert pair.get_label() == "one pairwise feature (error)"
    assert ax.get_title() == "N = 4, d = 4, D = 4"
    assert overlapping_labels(fig) == []


def test_separation_figure_keeps_an_exact_pairwise_error_off_zero():
    sep = pd.DataFrame({"H": [0, 1], "eckart_young": [1.0, 0.0], "pairwise_error": [0.0, 0.0],
                        "zb_bound": [1 / 6, 0.0]})
    pair = sf.separation_figure(sep, N=2, d=2, D=1).axes[0].lines[2]
    assert list(pair.get_ydata()) == [1e-300, 1e-300]


def test_trained_figure_draws_the_models_tail_bound_and_training_curves():
    unary = pd.DataFrame({"H": [1, 2, 4], "test_error": [0.8, 0.6, 0.2]})
    sigma = [1.0, 1.0, 1.0, 1.0]  # the tail 1 - H/4, 0 from H = 4
    stored = {"model": ["unary", "unary", "unary", "pairwise"], "H": [1, 2, 4, 1],
              "curve_step": [0, 10, 20],
              "curve": [[1.0, 1.0, 1.0, 1.0], [0.9, 0.7, 0.4, 0.1], [0.8, 0.6, 0.2, 1e-4]]}
    fig = sf.trained_figure(unary, sigma, stored, pair_err=1e-4, near_zero=1e-2, N=4, d=4, K=4,
                            steps=20, max_H=4)
    left, right = fig.axes
    models, tail, bound, pair, near = left.lines
    assert list(models.get_xdata()) == [1, 2, 4]
    assert list(models.get_ydata()) == [0.8, 0.6, 0.2]
    assert list(tail.get_xdata()) == [0, 1, 2, 3, 4]
    assert tail.get_ydata()[:4] == pytest.approx([1.0, 0.75, 0.5, 0.25])
    assert math.isnan(tail.get_ydata()[4])  # 0 is left off the log axis
    assert bound.get_ydata()[:4] == pytest.approx(np.array([4, 3, 2, 1]) / 4 / 6)
    assert math.isnan(bound.get_ydata()[4])
    assert list(pair.get_ydata()) == [1e-4, 1e-4] and list(near.get_ydata()) == [1e-2, 1e-2]
    assert left.get_ylim() == pytest.approx((5e-5, 2))  # down to half the pairwise error
    assert left.get_title() == "N = 4, d = 4, K = 4, 20 steps"
    assert _labels(right) == ["H = 1", "H = 2", "H = 4", "pairwise, 1 feature"]
    pairwise = right.lines[3]
    assert list(pairwise.get_ydata()) == [1.0, 0.1, 1e-4] and pairwise.get_linewidth() == 2
    assert list(right.lines[1].get_xdata()) == [0, 10, 20]
    assert list(right.lines[1].get_ydata()) == [1.0, 0.7, 0.6]
    assert overlapping_labels(fig) == []
