"""attnbook.mahdavi2024.theory_figures: the construction figure draws each setting where the
table puts it, and the equal-size width is the widest net within the MHA's count."""

import math

import numpy as np
import pandas as pd
import pytest

from attnbook.book.plotting import overlapping_labels
from attnbook.mahdavi2024 import bounds
from attnbook.mahdavi2024 import theory_figures as tf


def _t1(H_values=(1, 2, 4), n_values=(4,), d_h_values=(2, 8), d_out_values=(1, 3)):
    rows = []
    for H in H_values:
        for n in n_values:
            for d_h in d_h_values:
                for d_out in d_out_values:
                    for k, ctx in enumerate(("per_example", "shared")):
                        r = min(n, d_h)
                        rows.append(dict(
                            H=H, n=n, d_h=d_h, d_out=d_out, context=ctx,
                            rank=H * (r - 1) + 1, T=H * n * d_h + d_out,
                            c_per_head=np.arange(1, H + 1) * 10.0 + k,
                            c_alpha_per_head=np.arange(1, H + 1) * 20.0 + k,
                            unsaturation_per_head=np.full(H, 1e-3 * (k + 1)),
                            delta_per_head=np.full(H, 1e-2)))
    return pd.DataFrame(rows)


def test_construction_figure_places_ranks_bounds_and_the_largest_setting():
    t1 = _t1()
    fig = tf.construction_figure(t1, H_values=[1, 2, 4], n_values=[4], d_h_values=[2, 8],
                                 d_out=1)
    top, mid, bottom = fig.axes
    # one bound line per r = min(n, d_h) in {2, 4}: H(r-1)+1
    assert [list(line.get_ydata()) for line in top.lines] == [[2, 3, 5], [4, 7, 13]]
    assert [c.get_label() for c in top.collections] == ["n=4, $d_h$=2", "n=4, $d_h$=8"]
    d_h8 = top.collections[1].get_offsets()
    assert d_h8.tolist() == [[1, 4], [2, 7], [4, 13]]  # on its line: rank = H(4-1)+1
    assert top.get_xscale() == "log" and list(top.get_xticks()) == [1, 2, 4]
    # the largest setting at H = 4 is d_h = 8, d_out = 3; heads 2..4 drawn
    assert mid.get_title() == "finite scale $c$ (H=4, n=4, $d_h$=8)"
    c_per = [line for line in mid.lines if line.get_label() == "$c$, shared"][0]
    assert list(c_per.get_xdata()) == [2, 3, 4]
    assert list(c_per.get_ydata()) == [21.0, 31.0, 41.0]
    overflow = [line for line in mid.lines if line.get_label().startswith("709.8")][0]
    assert overflow.get_ydata()[0] == pytest.approx(math.log(np.finfo(np.float64).max))
    assert [line.get_label() for line in bottom.lines] == [
        "measured, per_example", "$\\delta$ of App. B.2, per_example", "measured, shared",
        "$\\delta$ of App. B.2, shared"]
    assert list(bottom.lines[2].get_ydata()) == pytest.approx([2e-3] * 3)
    assert overlapping_labels(fig) == []


@pytest.mark.parametrize("H, d, n, d_out", [(2, 12, 10, 10), (2, 12, 10, 1), (4, 8, 4, 3)])
def test_equal_size_width_is_the_widest_net_within_the_mha_count(H, d, n, d_out):
    m = tf.equal_size_width(H, d, n, d_out)
    limit = bounds.mha_parameter_count(H, d, n, d_out, d_out)
    assert bounds.relu_fcn_parameter_count((n + 1) * d, m, d_out) <= limit
    assert bounds.relu_fcn_parameter_count((n + 1) * d, m + 1, d_out) > limit
