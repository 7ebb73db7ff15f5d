"""attnbook.wies2021.separation_figures: the rank figures draw each width, bound, spectrum
and premise where the rank table puts it."""


import numpy as np
import pandas as pd
import pytest

from attnbook.book.plotting import overlapping_labels
from attnbook.engines import separation_rank as sr
from attnbook.wies2021 import separation_figures as sfig


def _lines(ax):
    return {line.get_label(): line for line in ax.lines}


def _ranks(depths=(1, 2), widths=(2, 3), H=1, r_es=(0,)):
    """A rank table whose exact rank 2 L + min(d_x, r + r_e) + r depends on the width only up
    to r + r_e, with singular values a decade apart up to it and 1e-18 beyond."""
    rows = []
    for r_e in r_es:
        for L in depths:
            for d_x in widths:
                for r in range(1, d_x + 1):
                    k = 2 * L + min(d_x, r + r_e) + r
                    sigma = [10.0 ** -i for i in range(k)] + [1e-18] * 3
                    rows.append(dict(L=L, H=H, d_x=d_x, r=r, r_e=r_e, rank_exact=k, rank=k,
                                     grid_cap=1000, sigma_rel=sigma,
                                     wies_upper=sr.wies2021_upper_bound(L, r),
                                     wies_lower=(sr.wies2021_lower_bound(L, r, H)
                                                 if L >= 2 and H < r else None)))
    return pd.DataFrame(rows)


def test_the_rank_figure_draws_each_width_each_bound_and_the_spectra():
    df0 = _ranks()
    fig, data = sfig.separation_rank_figure(df0, depths=[1, 2], widths=[2, 3], H=1,
                                            grid_cap=1000, side=343)
    one, two, spectra = fig.axes
    lines = _lines(two)
    assert list(lines["$d_x = 3$"].get_xdata()) == [1, 2, 3]
    assert list(lines["$d_x = 3$"].get_ydata()) == [6, 8, 10]
    assert list(lines["upper bound, eq. (9)"].get_ydata()) == \
        [float(sr.wies2021_upper_bound(2, r)) for r in (1, 2, 3)]
    triangles = lines["lower bound, eq. (14)"]
    assert list(triangles.get_xdata()) == [2, 3]  # H < r only
    assert list(triangles.get_ydata()) == [max(sr.wies2021_lower_bound(2, r, 1), 0.5)
                                           for r in (2, 3)]
    assert "lower bound, eq. (14)" not in _lines(one)  # L = 1: no lower bound
    assert lines["grid cap"].get_ydata()[0] == 1000
    assert two.get_title() == "$L = 2$, $H = 1$"
    at_2 = df0[(df0["d_x"] == 2) & (df0["r"] == 2)].set_index("L")["rank_exact"]
    spectrum = _lines(spectra)[f"$L = 1$: float {at_2[1]}, exact {at_2[1]}"]
    assert len(spectrum.get_xdata()) == at_2[1] + 3
    cuts = sorted(line.get_xdata()[0] for line in spectra.lines if line.get_linestyle() == "--")
    assert cuts == [at_2[1] + 0.5, at_2[2] + 0.5]
    tolerance = _lines(spectra)[r"tolerance $\max(m,n)\,\varepsilon$"]
    assert tolerance.get_ydata()[0] == pytest.approx(343 * np.finfo(float).eps)
    assert len(data["ranks"]) == len(df0) and "sigma_rel" not in data["ranks"]
    assert data["singular values"].groupby("L").size().tolist() == [at_2[1] + 3, at_2[2] + 3]
    assert not overlapping_labels(fig)


def test_the_positional_figure_marks_each_rank_at_r_plus_r_e():
    df = _ranks(depths=(1, 2), widths=(1, 2, 3), r_es=(0, 1))
    fig, data = sfig.positional_width_figure(df, L=2, H=1, r_es=[0, 1], widths=[1, 2, 3])
    flat, rising = fig.axes
    assert flat.get_title() == "$r_e = 0$ ($L = 2$, $H = 1$)"
    curve = _lines(rising)["$r = 1$"]
    assert list(curve.get_xdata()) == [1, 2, 3]
    assert list(curve.get_ydata()) == [4 + 1 + 1, 4 + 2 + 1, 4 + 2 + 1]  # flat from d_x = 2
    marks = [line.get_xydata()[0].tolist() for line in rising.lines if line.get_marker() == "+"]
    assert marks == [[2, 7], [3, 9]]  # r = 1, 2 at d_x = r + 1; r = 3 has no d_x = 4
    assert set(data["L"]) == {2} and len(data) == len(df[df["L"] == 2])
    assert not overlapping_labels(fig)


def test_corollary1_draws_held_premises_as_circles_and_failed_as_crosses():
    both = pd.DataFrame({"sweep": "main", "L": [2, 2, 3, 3, 1], "H": 1, "d_x": [4, 12, 4, 4, 4],
                         "r": [4, 4, 4, 4, 4], "V": [7, 7, 7, 3, 7], "N": 2,
                         "rank_exact": [5, 6, 30, 2, 9], "wies_lower": [1, 1, 3, 3, None],
                         "grid_cap": 49})
    applicable = sfig.corollary1_premises(both)
    assert applicable["holds"].tolist() == [True, False, True, False]  # 3^2 < 12; 3 < 7
    assert applicable["premise_V"].tolist() == [True, True, True, False]
    fig, data = sfig.corollary1_figure(applicable)
    ax = fig.axes[0]
    drawn = {c.get_label(): c.get_offsets().tolist() for c in ax.collections}
    assert drawn == {"$L = 2$": [[1, 5]], "$L = 2$, premise fails": [[1, 6]],
                     "$L = 3$": [[3, 30]], "$L = 3$, premise fails": [[3, 2]]}
    assert list(_lines(ax)["rank = bound"].get_xdata()) == [1, 45]
    assert list(data.columns)[-3:] == ["premise_V", "premise_L", "holds"] and len(data) == 4
    assert not overlapping_labels(fig)
