"""attnbook.wies2021.vocab_figures: Figures 3 and 5 draw each family, crossing and window
where the sweep's tables put them."""


import numpy as np
import pandas as pd
import pytest

from attnbook.book.plotting import overlapping_labels
from attnbook.engines import depth_sweep as ds
from attnbook.wies2021 import vocab_figures as rfig


def _results(gap_of_width, V, r=None, base=None):
    """Two seeds of a shallow (L = 1) and a deep (L = 2) family; deep = shallow + gap."""
    shallow, deep = ds.family_widths(base or r or V, [0.25, 0.5, 1, 2, 4], L_shallow=1, L_deep=2)
    rows = []
    for ws, wd in zip(shallow, deep, strict=True):
        level = 3.0 - 0.2 * np.log(ws)
        for s, noise in ((0, -0.001), (1, 0.001)):
            rows.append(dict(V=V, r=r, L=1, d_x=ws, seed=s, test_loss=level + noise,
                             params_non_embedding=ds.non_embedding_params(1, ws)))
            rows.append(dict(V=V, r=r, L=2, d_x=wd, seed=s, test_loss=level + gap_of_width(ws)
                             + noise, params_non_embedding=ds.non_embedding_params(2, wd)))
    return pd.DataFrame(rows)


def _sweep(big_gap=lambda w: 0.1 * np.log(128 / w)):
    """V = 256 at rank 32 (crossing at width 32) and full rank (at 128), V = 1024 full rank."""
    res = pd.concat([_results(lambda w: 0.1 * np.log(32 / w), V=256, r=32),
                     _results(lambda w: 0.1 * np.log(128 / w), V=256, base=32),
                     _results(big_gap, V=1024, base=32)], ignore_index=True)
    return (ds.loss_table(res, L_shallow=1, L_deep=2),
            ds.crossings(res, L_shallow=1, L_deep=2, n_boot=0))


def _span(patch, axis):
    """The data extent of an axvspan ("x") or axhspan ("y"), a Rectangle or a Polygon."""
    if hasattr(patch, "get_width"):
        lo, size = ((patch.get_x(), patch.get_width()) if axis == "x"
                    else (patch.get_y(), patch.get_height()))
        return pytest.approx(lo), pytest.approx(lo + size)
    xy = patch.get_xy()[:, 0 if axis == "x" else 1]
    return pytest.approx(xy.min()), pytest.approx(xy.max())


def _lines(ax):
    return {line.get_label(): line for line in ax.lines}


def test_figure3_draws_the_rank_limited_sweep_beside_its_control_with_the_window():
    table, cross = _sweep()
    fig, data = rfig.vocab_figure3(table, cross, V=256, r=32, factor=1.5, L_shallow=1,
                                   L_deep=2)
    left, right = fig.axes
    lines = _lines(left)
    shallow = table[(table["r"] == 32) & (table["family"] == "shallow")]
    assert list(lines["L = 1 (shallow)"].get_xdata()) == shallow["params_non_embedding"].tolist()
    assert list(lines["L = 1 (shallow)"].get_ydata()) == pytest.approx(shallow["mean"].tolist())
    low = cross[cross["r"].notna()].iloc[0]
    crossing = next(k for k in lines if k.startswith("crossing here"))
    assert crossing == f"crossing here: shallow width {low['width']:.0f}"
    assert lines[crossing].get_xdata()[0] == pytest.approx(low["point"])
    assert lines["theory: shallow width r"].get_xdata()[0] == ds.non_embedding_params(1, 32)
    paper = lines["paper: 1.008 r (504 at r = 500)"]
    assert paper.get_xdata()[0] == ds.non_embedding_params(1, round(1.008 * 32))
    window = next(p for p in left.patches if p.get_label() == "shallow width in [r/1.5, 1.5 r]")
    assert _span(window, "x") == (ds.non_embedding_params(1, 21), ds.non_embedding_params(1, 48))
    control = cross[(cross["V"] == 256) & cross["r"].isna()].iloc[0]
    assert _lines(right)[f"crossing here: shallow width {control['width']:.0f}"].get_xdata()[0] \
        == pytest.approx(control["point"])
    assert left.get_title() == "V = 256, embedding rank r = 32"
    assert set(data) == {"rank limited", "full rank", "crossings"}
    assert (data["rank limited"]["r"] == 32).all() and data["full rank"]["r"].isna().all()
    assert (data["crossings"]["V"] == 256).all() and "crossing" not in data["crossings"]
    assert not overlapping_labels(fig)


def test_figure5_places_each_vocabularys_crossing_as_a_width_in_the_band():
    table, cross = _sweep()
    fig, data = rfig.vocab_figure5(table, cross, r=32, largest_width=128, max_ratio=1.5,
                                   L_shallow=1, L_deep=2)
    first, second, widths = fig.axes
    assert first.get_title() == "V = 256, full rank" and second.get_title() == "V = 1024, full rank"
    full = cross[cross["r"].isna()].sort_values("V")
    points = [c.lines[0].get_xydata()[0].tolist() for c in widths.containers]
    assert points == [[i, pytest.approx(w)] for i, w in enumerate(full["width"])]
    ref = full["width"].iloc[0]
    assert _span(widths.patches[0], "y") == (ref / 1.5, ref * 1.5)
    assert _lines(widths)["largest shallow width"].get_ydata()[0] == 128
    assert [t.get_text() for t in widths.get_xticklabels()] == ["V = 256", "V = 1024"]
    assert set(data) == {"V = 256", "V = 1024", "crossings"}
    assert data["crossings"]["V"].tolist() == [256, 1024]
    assert not overlapping_labels(fig)


def test_a_vocabulary_without_crossing_is_said_so_in_both_places():
    table, cross = _sweep(big_gap=lambda w: 0.1)  # the deep family never wins at V = 1024
    fig, _ = rfig.vocab_figure5(table, cross, r=32, largest_width=128, max_ratio=1.5,
                                L_shallow=1, L_deep=2)
    assert [t.get_text() for t in fig.axes[1].texts] == ["no crossing in range"]
    note, = fig.axes[2].texts
    assert note.get_text() == "no\ncrossing" and note.get_position() == (1, 32)
    assert len(fig.axes[2].containers) == 1  # only V = 256's crossing is drawn
