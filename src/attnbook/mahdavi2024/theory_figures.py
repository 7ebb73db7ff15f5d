"""The figure of mahdavi2024's theory chapter, drawn from what it computed:

* :func:`construction_figure`: the rank Proposition 1's construction reaches against the heads,
  and the scale and saturation of each head at the largest setting (M-T1);
* :func:`equal_size_width`: the widest ReLU network no larger than an MHA (M-P3).

Each draws or sizes from what the tables of :mod:`attnbook.mahdavi2024.checks` hold and decides
nothing; the claims' sentences are built beside their criteria (:mod:`attnbook.criteria`).

Used by: mahdavi2024_theory.

>>> equal_size_width(2, 12, 10, 10)
7
"""

import math

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.ticker import ScalarFormatter

from . import bounds

__all__ = ["construction_figure", "equal_size_width"]


def construction_figure(t1: pd.DataFrame, *, H_values: list, n_values: list, d_h_values: list,
                        d_out: int):
    """Three stacked panels from ``t1`` (:func:`attnbook.mahdavi2024.checks.theorem1_check`,
    one row per setting). Top: rank(Z) against H for per-example contexts with label dimension
    ``d_out``, one marker per (n, d_h) coloured by r = min(n, d_h), over the lines
    ``H (r - 1) + 1``. Middle and bottom, for the largest setting at the largest H: the finite
    scale c of each head after the first (with ``c max|alpha_+|`` and the float64 overflow of
    exp), and its distance from saturation beside the delta of App. B.2, both contexts.
    Returns the figure."""
    fig, axes = plt.subplots(3, 1, figsize=(6.4, 9.6))  # stacked: legible on a phone
    per = t1[(t1["context"] == "per_example") & (t1["d_out"] == d_out)]
    rs = sorted({min(n, d_h) for n in n_values for d_h in d_h_values})
    for r in rs:  # one line per r = min(n, d_h): the bound H(r-1)+1
        axes[0].plot(H_values, [H * (r - 1) + 1 for H in H_values], lw=1, alpha=0.5,
                     color=f"C{rs.index(r)}")
    for (n, d_h), sub in per.groupby(["n", "d_h"]):
        axes[0].scatter(sub["H"], sub["rank"], color=f"C{rs.index(min(n, d_h))}",
                        marker="ox+^"[n_values.index(n) % 4], s=30, label=f"n={n}, $d_h$={d_h}")
    axes[0].set_xscale("log", base=2)
    axes[0].set_yscale("log", base=2)
    for axis in (axes[0].xaxis, axes[0].yaxis):
        axis.set_major_formatter(ScalarFormatter())
    axes[0].set(xlabel="heads $H$", ylabel="rank($Z$) achieved", xticks=H_values,
                title="rank vs $H$ (lines: $H(\\min(n,d_h)-1)+1$)")
    axes[0].legend(fontsize=7, ncol=2)
    big = t1[t1["H"] == max(H_values)].sort_values("T").iloc[-1]  # the largest setting
    heads = np.arange(1, len(big["c_per_head"]) + 1)
    for ctx, color in (("per_example", "C0"), ("shared", "C1")):
        same = (t1["H"] == big["H"]) & (t1["n"] == big["n"]) & (t1["d_h"] == big["d_h"])
        row = t1[same & (t1["d_out"] == big["d_out"]) & (t1["context"] == ctx)].iloc[0]
        axes[1].plot(heads[1:], row["c_per_head"][1:], "o-", color=color, label=f"$c$, {ctx}")
        axes[1].plot(heads[1:], row["c_alpha_per_head"][1:], "x--", color=color,
                     label=f"$c\\,\\max|\\alpha_+|$, {ctx}")
        axes[2].plot(heads[1:], row["unsaturation_per_head"][1:], "o-", color=color,
                     label=f"measured, {ctx}")
        axes[2].plot(heads[1:], row["delta_per_head"][1:], ":", color=color,
                     label=f"$\\delta$ of App. B.2, {ctx}")
    axes[1].axhline(math.log(np.finfo(np.float64).max), color="r", lw=1,
                    label="709.8: exp overflows")
    axes[1].set(yscale="log", xlabel="head $h$", xticks=heads[1:],
                title=f"finite scale $c$ (H={big['H']}, n={big['n']}, $d_h$={big['d_h']})")
    axes[2].set(yscale="log", xlabel="head $h$", xticks=heads[1:],
                title="$\\max_{t\\ old}\\|\\theta_h^{(t)}-\\theta_+^{(t)}\\|_1$")
    axes[1].legend(fontsize=7)
    axes[2].legend(fontsize=7)
    fig.tight_layout()
    return fig


def equal_size_width(H: int, d: int, n: int, d_out: int) -> int:
    """The widest hidden layer m of a ReLU network on the flattened (n + 1) x d input with
    ``d_out`` outputs that has no more parameters than an MHA of ``H`` heads (d_h = n,
    d_v = d_out): Proposition 3's comparison at equal size."""
    params = bounds.mha_parameter_count(H, d, n, d_out, d_out)
    return max(m for m in range(1, 10_000)
               if bounds.relu_fcn_parameter_count((n + 1) * d, m, d_out) <= params)
