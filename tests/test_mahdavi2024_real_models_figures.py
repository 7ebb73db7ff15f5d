"""attnbook.mahdavi2024.real_models_figures: the Figure 1 panels draw each stage and estimate
where the tables put them, and M-F1's counts and the verdict phrases say what the tables hold."""


import pandas as pd
import pytest

from attnbook import criteria
from attnbook.book.plotting import overlapping_labels
from attnbook.mahdavi2024 import real_models_figures as rf


def _curves():
    return pd.DataFrame({
        "stage": ["Embedding"] * 3 + ["Random attention"] * 3,
        "k": [10, 20, 30, 10, 20, 30], "n": [10] * 6, "d": [40] * 6,
        "fraction": [1.0, 1.0, 0.9, 0.95, 0.5, 0.0],
        "exact_zero": [False] * 5 + [True]})


def test_kruskal_rank_figure_draws_each_stage_and_the_histogram_of_estimates():
    kruskal = pd.DataFrame({"stage": ["Random attention"] * 4 + ["Embedding"],
                            "estimate": [11, 12, 12, 14, 39]})
    fig = rf.kruskal_rank_figure(_curves(), kruskal, n=10, d=40)
    left, right = fig.axes
    stages = [line for line in left.lines if not line.get_label().startswith("_")]
    assert [line.get_label() for line in stages] == [
        "Embedding (n 10, d 40)", "Random attention (n 10, d 40)"]
    assert list(stages[1].get_xdata()) == [10, 20, 30]
    assert list(stages[1].get_ydata()) == [0.95, 0.5, 0.0]
    marks = [line for line in left.lines if line.get_label().startswith("_")]
    assert [(line.get_xdata()[0], line.get_linestyle()) for line in marks] == [
        (10, "--"), (40, ":")]
    heights = [p.get_height() for p in right.patches]
    assert len(heights) == 20 and sum(heights) == 4  # only the random attention estimates
    assert right.patches[0].get_x() == pytest.approx(11)
    assert [line.get_label() for line in right.lines] == ["n = 10", "d = 40"]
    assert right.get_xlim() == pytest.approx((0, 42))
    assert overlapping_labels(fig) == []


def test_kruskal_ks_lie_above_n_and_below_the_fraction_of_d():
    ks = rf.kruskal_ks(197, 768, 0.5, 8)
    assert ks == sorted(set(ks)) and 197 not in ks
    assert all(197 < k < 384 for k in ks) and len(ks) == 7
    assert rf.kruskal_ks(10, 40, 0.5, 5) == [12, 14, 16, 18]  # 10, 12, .., 18 without n


def test_counts_from_tables_read_the_assumption_cell_and_the_curve():
    table = pd.DataFrame({"stage": ["Embedding", "Random attention"],
                          "assumption1_fraction": [1.0, 0.97]})
    counts = rf.counts_from_tables(table, _curves(), "Random attention", n=10, draws=200,
                                   curve_draws=20)
    assert counts.to_dict("list") == {"k": [10, 20, 30], "successes": [194, 10, 0],
                                      "draws": [200, 20, 0], "exact": [False, False, True]}
    rows = list(counts.itertuples(index=False, name=None))
    read = criteria.mahdavi2024.kruskal_reading((194, 200), rows, 40, confidence=0.95,
                                                crossing=0.5, max_d_fraction=0.5)
    assert read["shares"] == pytest.approx([0.97, 0.5, 0.0])  # 0 where the curve knew it


def test_cell_draws_are_none_where_the_share_is_no_sample():
    full = pd.Series({"rank_all_queries": 40, "d": 40})
    short = pd.Series({"rank_all_queries": 30, "d": 40})
    kw = dict(draws=200, gp_draws=20)
    assert rf.cell_draws(full, "Assumption 1", **kw) == 200
    assert rf.cell_draws(full, "General Position", **kw) == 20
    assert rf.cell_draws(short, "General Position", **kw) is None
    assert rf.cell_draws(full, "Assumption 2", **kw) is None


def test_stability_sentence_names_the_least_stable_cell():
    assert rf.stability_sentence({}) == "no cell was decided from draws"
    assert rf.stability_sentence({"a": (10, 10), "b": (10, 10)}) == (
        "every one of the 2 cells decided from draws held in all 10")
    assert rf.stability_sentence({"a": (10, 10), "b / GP": (7, 10)}) == (
        "the least stable of the 2 cells decided from draws, b / GP, held in 7 of 10")


def test_stage_notes_and_skips_name_the_stand_ins():
    assert rf.STAGE_NOTES["Trained ViT"].endswith(", n 257, d 384")
    assert set(rf.STAGE_NOTES) <= set(rf.STAGE_SKIPPED)
