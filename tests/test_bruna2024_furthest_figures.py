"""attnbook.bruna2024.furthest_figures: the furthest-neighbour figures draw what the lines
trained, each point where its table puts it, and the pilot's reading says what its trend says."""


import numpy as np
import pandas as pd
import pytest

from attnbook.book.plotting import overlapping_labels
from attnbook.bruna2024 import furthest_figures as ff

NN = {"rank_div": 2, "full_max": 0.1, "low_min": 0.5}




def _labels(ax):
    return [line.get_label() for line in ax.lines if not line.get_label().startswith("_")]


def _pilot(loss):
    """A pilot at d = 4, line rH = 4: ranks 1, 2, 4 at 100, 200, 400 steps, loss(r, steps)."""
    runs = pd.DataFrame([{"steps": s, "d": 4, "rank_heads": 4, "r": [1, 2, 4], "H": [4, 2, 1],
                          "min_loss": [loss(r, s) for r in (1, 2, 4)]} for s in (100, 200, 400)])
    return ff.nn_every_rank(runs)


def test_every_rank_gives_one_row_per_rank_with_integer_columns():
    pt = _pilot(lambda r, s: 1.0 / r)
    assert len(pt) == 9
    assert pt.dtypes[["r", "H", "steps"]].tolist() == [np.dtype(int)] * 3
    assert pt[pt["steps"] == 200]["min_loss"].tolist() == [1.0, 0.5, 0.25]


def test_pilot_figure_draws_each_rank_the_criterion_lines_and_the_marks():
    pt = _pilot(lambda r, s: 0.9 / r - s / 1e4)
    marked = []
    fig = ff.nn_pilot_figure(pt, d0=4, P0=4, thresholds=NN,
                             mark=lambda ax, colour: marked.append(dict(colour)))
    (ax,) = fig.axes
    assert _labels(ax) == ["r = 1, H = 4", "r = 2, H = 2", "r = 4, H = 1"]
    r2 = ax.lines[1]
    assert list(r2.get_xdata()) == [100, 200, 400]
    assert r2.get_ydata() == pytest.approx([0.44, 0.43, 0.41])
    assert r2.get_marker() == "o" and ax.lines[2].get_marker() == "s"  # r <= d/2 against full
    assert marked == [{1: "C0", 2: "C1", 4: "C2"}]
    assert [line.get_ydata()[0] for line in ax.lines[3:]] == [0.1, 0.5]
    assert ax.get_xscale() == "log" and ax.get_ylim() == (0, 1.1)
    assert ax.get_title() == "d = 4, line rH = 4, one seed"
    assert overlapping_labels(fig) == []


def test_pilot_reading_of_a_falling_half_rank_says_it_fails():
    # r = 2 = d/2 falls by 0.1 per doubling from 0.45: below low_min and still falling
    pt = _pilot(lambda r, s: {1: 0.9, 2: 0.45 - 0.1 * np.log2(s / 100), 4: 0.05}[r])
    reading, text = ff.nn_pilot_reading(pt, d0=4, thresholds=NN)
    assert sorted(reading["r"]) == [1, 2, 4]
    half = reading.set_index("r").loc[2]
    assert half["per_doubling"] == pytest.approx(-0.1)
    assert text.startswith("Reading the pilot: after 400 steps at d = 4, the full-rank model's "
                           "loss is 0.050")
    assert "that of r = d/2 is 0.250, -0.100 per doubling" in text
    assert "below the criterion's minimum and fell over the pilot's budgets: at no budget" in text
    assert "still falling" not in text and "further from" not in text  # no forecast from one seed
    assert text.endswith("so the long profile trains no further lines.")


def test_pilot_reading_of_a_steady_half_rank_leaves_it_open():
    pt = _pilot(lambda r, s: {1: 0.9, 2: 0.8, 4: 0.05}[r])
    _, text = ff.nn_pilot_reading(pt, d0=4, thresholds=NN)
    assert text.endswith("Its side of the criterion can still change with longer training.")


def test_lines_figure_draws_each_line_against_rank_and_the_first_lines_curves():
    lines_frame = pd.DataFrame([
        {"kind": "attention", "rank_heads": 4, "r": [1, 2, 4], "H": [4, 2, 1],
         "min_loss": [0.9, 0.8, 0.05], "curve": [[1.0, 0.95, 0.97], [0.9, 0.85, 0.8],
                                                 [0.5, 0.1, 0.05]]},
        {"kind": "encoder", "rank_heads": 4, "r": [4], "H": [1], "min_loss": [0.3],
         "curve": [[0.4], [0.3], [0.35]]}])
    table = lines_frame.explode(["r", "H", "min_loss"]).astype(
        {"r": int, "H": int, "min_loss": float})
    fig = ff.nn_lines_figure(table, lines_frame, d=4, N=8, eval_every=50)
    left, right = fig.axes
    assert _labels(left) == ["attention, no MLP, rH = 4", "TransformerEncoderLayer, rH = 4",
                             "zero output"]
    assert list(left.lines[0].get_xdata()) == [1, 2, 4]
    assert left.lines[0].get_ydata().tolist() == [0.9, 0.8, 0.05]
    assert left.lines[1].get_linestyle() == "--"
    assert left.get_title() == "furthest neighbour, d = 4, N = 8"
    assert _labels(right) == ["r = 1, H = 4", "r = 2, H = 2", "r = 4, H = 1"]
    assert list(right.lines[2].get_xdata()) == [50, 100, 150]
    assert list(right.lines[2].get_ydata()) == [0.97, 0.8, 0.05]  # model 3 of each evaluation
    assert right.get_title() == "training, attention line rH = 4"
    assert overlapping_labels(fig) == []


def test_lines_figure_draws_the_mean_over_seeds_with_their_spread():
    lines_frame = pd.DataFrame([
        {"kind": "attention", "rank_heads": 4, "seed": s, "r": [1, 4], "H": [4, 1],
         "min_loss": [0.9 + 0.1 * s, 0.05], "curve": [[1.0, 0.5], [0.95, 0.05]]}
        for s in (0, 1)])
    table = lines_frame.explode(["r", "H", "min_loss"]).astype(
        {"r": int, "H": int, "min_loss": float})
    fig = ff.nn_lines_figure(table, lines_frame, d=4, N=8, eval_every=50)
    left = fig.axes[0]
    assert left.lines[0].get_ydata().tolist() == pytest.approx([0.95, 0.05])  # one line
    assert len(left.collections) == 1  # the seeds' standard deviation as bars


def test_levels_read_the_worst_full_rank_and_the_low_rank_range():
    table = pd.DataFrame({"r": [1, 2, 4, 4, 2], "min_loss": [0.91, 0.72, 0.04, 0.3, 0.8]})
    assert ff.nn_levels(table, d=4, rank_div=2) == ("0.30", "0.72 to 0.91")
