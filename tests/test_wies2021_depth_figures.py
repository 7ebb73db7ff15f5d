"""attnbook.wies2021.depth_figures: the depth-efficiency tables and figure arrange and draw what
the sweep trained, each point where its table puts it."""

from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from attnbook.book.plotting import overlapping_labels
from attnbook.engines import depth_sweep as ds
from attnbook.wies2021 import depth_figures as dfig


def _labels(ax):
    return [line.get_label() for line in ax.lines if not line.get_label().startswith("_")]


def test_settings_put_the_paper_beside_the_profile():
    t = dfig.depth_settings(profile="ci", vocabs=[32, 64], L_shallow=1, L_deep=2,
                            width_factors=[0.5, 1.0], H=2, N=64, tokens_per_model=983040,
                            n_seeds=3)
    assert list(t.columns) == ["paper (appendix C.2)", "here (ci)"]
    assert t.loc["vocabulary V", "here (ci)"] == "32, 64"
    assert t.loc["depths L"].tolist() == ["24 vs 48", "1 vs 2"]
    assert t.loc["shallow widths", "here (ci)"] == "0.5 V, 1 V"
    assert t.loc["training tokens per model"].tolist() == ["6.6e+10", "9.8e+05"]


def test_corpus_sizes_count_each_vocabularys_tokens():
    arrays = [SimpleNamespace(V=V, train=np.zeros(10 * V), test=np.zeros(V),
                              info={"train_documents": 7}) for V in (32, 64)]
    t = dfig.corpus_sizes(arrays)
    assert t.index.name == "V" and t.index.tolist() == [32, 64]
    assert t["train tokens"].tolist() == [320, 640]
    assert t["test tokens"].tolist() == [32, 64]


def test_family_depths_list_widths_and_the_largest_deviation():
    table = pd.DataFrame({"V": 32, "family": ["shallow", "shallow", "deep"], "L": [1, 1, 2],
                          "d_x": [16, 32, 12], "std": [0.01, 0.03, 0.02], "seeds": [3, 2, 3]})
    t = dfig.family_depths(table)
    assert t["family"].tolist() == ["shallow", "deep"]  # the table's order
    assert t["widths"].tolist() == ["16, 32", "12"]
    assert t["largest_seed_std"].tolist() == [0.03, 0.02]
    assert t["seeds"].tolist() == [2, 3]


def test_parameter_summary_pairs_widths_within_each_vocabulary():
    results = pd.DataFrame({  # two seeds of each net
        "V": [8] * 8, "L": [1, 1, 2, 2] * 2, "d_x": [8, 16, 6, 11] * 2,
        "params_non_embedding": [100, 400, 101, 404] * 2,
        "params_total": [200, 500, 202, 510] * 2})
    counts = dfig.parameter_shares(results)
    assert len(counts) == 4
    assert counts[["L", "d_x"]].values.tolist() == [[1, 8], [1, 16], [2, 6], [2, 11]]
    s = dfig.parameter_summary(counts, L_shallow=1, L_deep=2)
    assert s["emb_share_max"] == "50% (V = 8, L = 1, width 8)"
    assert s["emb_share_min"] == "20% (V = 8, L = 1, width 16)"
    assert s["total_ratio"] == "1.01 to 1.02"
    assert s["non_emb_ratio"] == "1.010 to 1.010"


def _cross(V, found):
    return {"V": V, "found": found, "predicted_params": ds.non_embedding_params(1, V),
            "point": ds.non_embedding_params(1, V) * 1.5 if found else None,
            "width": V * 1.2 if found else None,
            "low": ds.non_embedding_params(1, V) if found else None,
            "high": ds.non_embedding_params(1, 2 * V) if found else None}


def test_figure_draws_each_vocabulary_its_window_prediction_and_crossing():
    rows = []
    for V in (32, 64):
        for fam, L, widths in (("shallow", 1, [16, 32, 64]), ("deep", 2, [11, 22, 45])):
            rows += [{"V": V, "family": fam, "L": L, "d_x": w,
                      "params_non_embedding": ds.non_embedding_params(L, w),
                      "mean": 3.0 - 0.01 * w, "std": 0.02} for w in widths]
    table = pd.DataFrame(rows)
    cross = pd.DataFrame([_cross(32, True), _cross(64, False)])
    fig = dfig.depth_efficiency_figure(table, cross, L_shallow=1, L_deep=2, factor=2)
    first, second = fig.axes
    assert _labels(first) == ["L = 1 (shallow)", "L = 2 (deep)",
                              "paper: transition at shallow width ~ V",
                              "crossing: shallow width 38"]
    assert list(first.lines[0].get_xdata()) == [ds.non_embedding_params(1, w)
                                                for w in (16, 32, 64)]
    assert first.lines[1].get_ydata().tolist() == pytest.approx([2.89, 2.78, 2.55])
    assert first.lines[2].get_xdata()[0] == ds.non_embedding_params(1, 32)
    _, names = first.get_legend_handles_labels()
    assert "shallow width in [V/2, 2 V]" in names
    assert first.get_title() == "V = 32" and first.get_xscale() == "log"
    assert _labels(second)[-1] == "paper: transition at shallow width ~ V"  # no crossing
    assert [t.get_text() for t in second.texts] == ["no crossing in range"]
    assert len(first.texts) == 0
    assert overlapping_labels(fig) == []
