"""Figures and tables of bruna2024's lower bound for rank-r heads, drawn from what the chapter
computed:

* :func:`sign_coefficients_figure`: the Gegenbauer coefficients of sign against the degree,
  and the lower bound on the squared error against the number of heads (B-LB);
* :func:`heads_needed_fits` and :func:`heads_needed_figure`: the power of d/r that the heads
  needed follow, fitted and local, as B-LB reads it, and the curves it is read from (B-LB);
* :func:`majority_vote_figure`: the simulated and exact majority of rank-one heads (B-MV;
  how fast the exact error falls with d is B-MV's reading,
  :func:`attnbook.criteria.bruna2024.log_error_drops`).

Each draws or arranges what the chapter measured (the tables of
:mod:`attnbook.bruna2024.harmonics` and :mod:`attnbook.bruna2024.furthest_neighbour`) and
decides nothing; the figures of bruna2024_symmetric are in
:mod:`attnbook.bruna2024.symmetric_figures`.

Used by: bruna2024_lower_bound.

>>> slopes = {(1, 0.5): (2.0, np.array([2.0, 2.0]))}  # (r, eps) -> (fit, local slopes)
>>> heads_needed_fits(slopes)[["exponent", "local_min", "local_max"]].values.tolist()
[[2.0, 2.0, 2.0]]
"""

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

__all__ = ["sign_coefficients_figure", "heads_needed_fits", "heads_needed_figure",
           "majority_vote_figure"]


def sign_coefficients_figure(coef: pd.DataFrame, bounds: pd.DataFrame, *, d: int, l_from: int,
                             l_max: int):
    """Top: ``|<sign, P_l>|`` against the odd degree l for each d of ``coef``
    (:func:`attnbook.bruna2024.harmonics.coefficient_table`), with a dashed ``l^-1`` from
    ``l_from`` to ``l_max`` through the coefficient of degree ``l_from + 1`` at ``d``. Bottom:
    the lower bound of ``bounds`` (:func:`~attnbook.bruna2024.harmonics.lower_bound_table`)
    against the heads H, one line per rank r. Returns the figure."""
    fig, axes = plt.subplots(2, 1, figsize=(6.4, 6.8))  # stacked: legible on a phone
    for dd in sorted(set(coef["d"])):
        sub = coef[coef["d"] == dd]
        axes[0].loglog(sub["l"], np.abs(sub["coefficient"]), label=f"d = {dd}")
    ls = np.array([l_from, l_max])
    ref = coef[(coef["d"] == d) & (coef["l"] == l_from + 1)]["coefficient"].abs().item()
    axes[0].loglog(ls, ref * (ls / ls[0]) ** -1.0, "k--", lw=1, label=r"$\propto \ell^{-1}$")
    axes[0].set(
        xlabel=r"degree $\ell$ (odd)",
        ylabel=r"$|\langle \mathrm{sign}, P_{\ell,d}\rangle_{u_d}|$",
        title="Gegenbauer coefficients of sign",
    )
    axes[0].legend(fontsize=8)
    for r in pd.unique(bounds["r"]):
        sub = bounds[bounds["r"] == r]
        axes[1].semilogx(sub["H"], sub["bound"], label=f"r = {r}")
    axes[1].set(
        xlabel="heads H",
        ylabel="lower bound on squared error",
        title=f"rank-r heads approximating sign(z.y), d = {d}",
    )
    axes[1].legend(fontsize=8)
    fig.tight_layout()
    return fig


def heads_needed_fits(slopes: dict) -> pd.DataFrame:
    """The table of ``slopes`` ((r, eps) -> (fitted exponent, local slopes between consecutive
    d), as :func:`attnbook.criteria.bruna2024.heads_needed_slopes` reads the heads needed): per
    (r, eps) the exponent k of ``H_needed ~ (d/r)^k``, ``1/eps``, and the least and largest
    local slope."""
    return pd.DataFrame([{"r": r, "eps": e, "exponent": fit, "1/eps": 1 / e,
                          "local_min": np.min(local), "local_max": np.max(local)}
                         for (r, e), (fit, local) in slopes.items()])


def heads_needed_figure(needed: pd.DataFrame):
    """The heads needed against d/r (log-log), one line per (r, eps): circles for r = 1,
    squares dashed otherwise; per eps, the talk's shape (d/r)^(1/eps) dotted in the colour of
    its r = 1 line, through that line's first point. Returns the figure."""
    fig, ax = plt.subplots(figsize=(5.5, 3.8))
    for (r, e), sub in needed.groupby(["r", "eps"]):
        (line,) = ax.loglog(sub["d"] / r, sub["H_needed"], "o-" if r == 1 else "s--", ms=3,
                            label=f"r = {r}, eps = {e}")
        if r == 1:
            x = (sub["d"] / r).to_numpy(dtype=float)
            y0 = float(sub["H_needed"].iloc[0])
            ax.loglog(x, y0 * (x / x[0]) ** (1 / e), ":", color=line.get_color(), lw=1,
                      label=f"talk: (d/r)^(1/eps) = (d/r)^{1 / e:.3g}")
    ax.set(xlabel="d / r", ylabel="heads needed for error < eps")
    ax.legend(fontsize=7)
    fig.tight_layout()
    return fig


def majority_vote_figure(mv: pd.DataFrame, exact: pd.DataFrame):
    """Top and middle: the simulated majority accuracy of ``mv``
    (:func:`attnbook.bruna2024.furthest_neighbour.majority_vote_table`) against ``H/d^2``, on
    all inputs and at margin, one line per d with its 95% band shaded and its Hoeffding bound
    dotted. Bottom: the exact majority error of ``exact`` against d, on all inputs and at
    margin, beside ``exp(-2 d / pi^2)``. Returns the figure."""
    fig, axes = plt.subplots(3, 1, figsize=(6.4, 9.6))  # stacked: legible on a phone
    for dd, sub in mv.groupby("d"):
        for ax, col, lo, hi, hoef in (
            (axes[0], "accuracy", "lo", "hi", "hoeffding"),
            (axes[1], "accuracy_typical", "lo_typical", "hi_typical", "hoeffding_typical"),
        ):
            (line,) = ax.semilogx(sub["H_over_d2"], sub[col], "o-", ms=3, label=f"d = {dd}")
            ax.fill_between(sub["H_over_d2"], sub[lo], sub[hi], color=line.get_color(),
                            alpha=0.2)
            ax.semilogx(sub["H_over_d2"], sub[hoef], ":", color=line.get_color())
    axes[0].set(xlabel=r"$H / d^2$", ylabel="majority accuracy",
                title="all inputs (dotted: Hoeffding)")
    axes[1].set(xlabel=r"$H / d^2$", title=r"inputs with margin $|z^\top y| \geq d^{-1/2}$")
    axes[1].sharey(axes[0])
    axes[0].legend(fontsize=8)
    dd = exact["d"].to_numpy(dtype=float)
    axes[2].semilogy(dd, exact["error_all"], "o-", ms=3, label="all inputs")
    axes[2].semilogy(dd, exact["error_margin"], "s-", ms=3, label=r"margin $\geq d^{-1/2}$")
    axes[2].semilogy(
        dd, np.exp(-2 * dd / np.pi**2), "k:", label=r"$e^{-2d/\pi^2}$ (Hoeffding at the margin)"
    )
    axes[2].set(xlabel="d", ylabel=r"exact majority error at $H = d^2$",
                title="error against d")
    axes[2].legend(fontsize=7)
    fig.tight_layout()
    return fig
