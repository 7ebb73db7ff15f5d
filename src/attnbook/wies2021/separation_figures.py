"""Figures of wies2021's separation rank on the grid (Theorems 1-3, Corollary 1), drawn from
what the chapter measured.

* :func:`separation_rank_figure`: the exact rank against the embedding rank per depth, with
  the bounds of eqs. (9) and (14), and the singular values of the ``d_x = r = 2`` nets;
* :func:`positional_width_figure`: the exact rank against the width per positional rank;
* :func:`corollary1_premises` and :func:`corollary1_figure`: the settings where eq. (14)
  applies, whether its premises hold, and the rank against the bound.

Each draws what the tables of :mod:`attnbook.engines.separation_rank` hold and decides
nothing; each figure function returns the figure and the data its chapter stores beside it.

Used by: wies2021_embedding_rank.
"""

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from ..engines import separation_rank as sr

__all__ = ["separation_rank_figure", "positional_width_figure", "corollary1_premises",
           "corollary1_figure"]


def separation_rank_figure(df0: pd.DataFrame, *, depths, widths, H: int, grid_cap: int,
                           side: int):
    """The exact separation rank against the embedding rank r, one panel per depth at ``H``
    heads and one curve per width d_x, with eq. (9)'s upper bound (dashed), eq. (14)'s lower
    bound where H < r (triangles, values below 1 at 1/2) and ``grid_cap`` (dotted); last
    panel: the relative singular values of the ``d_x = r = 2`` nets per depth, the exact rank
    dashed, the float tolerance of a ``side`` x ``side`` matrix dotted. ``df0``: the rows of
    :func:`attnbook.engines.separation_rank.add_bounds` without a positional embedding.
    Returns the figure and its data (the ranks, the singular values)."""
    fig, axes = plt.subplots(1, len(depths) + 1, figsize=(3.6 * (len(depths) + 1), 3.6))
    rs = np.arange(1, max(widths) + 1)
    for ax, L in zip(axes[:-1], depths, strict=True):
        sub = df0[(df0["L"] == L) & (df0["H"] == H)]
        for d_x, g in sub.groupby("d_x"):
            ax.plot(g["r"], g["rank_exact"], "o-", label=f"$d_x = {d_x}$", ms=3 + 2 * d_x,
                    mfc="none")
        ax.plot(rs, [float(sr.wies2021_upper_bound(L, int(r))) for r in rs], "k--", lw=1,
                label="upper bound, eq. (9)")
        if L >= 2:
            lower = [sr.wies2021_lower_bound(L, int(r), H) for r in rs if r > H]
            ax.plot(rs[rs > H], np.maximum(lower, 0.5), "kv", ms=4,
                    label="lower bound, eq. (14)")
        ax.axhline(grid_cap, color="0.5", ls=":", lw=1, label="grid cap")
        ax.set(yscale="log", xlabel="embedding rank $r$", ylabel="separation rank (exact)",
               title=f"$L = {L}$, $H = {H}$", xticks=rs)
        ax.legend(fontsize=6)
    ax = axes[-1]
    spectra = []
    for L in depths:
        row = df0[(df0["L"] == L) & (df0["d_x"] == 2) & (df0["r"] == 2)
                  & (df0["H"] == H)].iloc[0]
        s = np.asarray(row["sigma_rel"])
        line, = ax.semilogy(np.arange(1, len(s) + 1), np.maximum(s, 1e-300), ".-", ms=3,
                            label=f"$L = {L}$: float {row['rank']}, exact {row['rank_exact']}")
        ax.axvline(row["rank_exact"] + 0.5, color=line.get_color(), ls="--", lw=0.8)
        spectra.append(pd.DataFrame({"L": L, "k": np.arange(1, len(s) + 1), "sigma_rel": s,
                                     "rank_exact": row["rank_exact"], "rank": row["rank"]}))
    ax.axhline(side * np.finfo(float).eps, color="k", ls=":", lw=1,
               label=r"tolerance $\max(m,n)\,\varepsilon$")
    ax.set(xlabel="index $k$", ylabel=r"$\sigma_k / \sigma_1$", ylim=(1e-20, 2),
           title="singular values, $d_x = r = 2$")
    ax.legend(fontsize=6)
    fig.tight_layout()
    return fig, {"ranks": df0[["L", "H", "d_x", "r", "rank_exact", "rank", "grid_cap",
                               "wies_upper", "wies_lower"]],
                 "singular values": pd.concat(spectra, ignore_index=True)}


def positional_width_figure(df: pd.DataFrame, *, L: int, H: int, r_es, widths):
    """The exact separation rank against the width d_x at depth ``L`` and ``H`` heads, one
    panel per positional rank in ``r_es`` and one curve per embedding rank r, a cross at
    d_x = r + r_e, the grid cap dotted. Returns the figure and its data (the rows drawn)."""
    fig, axes = plt.subplots(1, len(r_es), figsize=(3.6 * len(r_es), 3.4), sharey=True)
    for ax, r_e in zip(axes, r_es, strict=True):
        sub = df[(df["L"] == L) & (df["H"] == H) & (df["r_e"] == r_e)]
        for r, g in sub.groupby("r"):
            g = g.sort_values("d_x")
            ax.plot(g["d_x"], g["rank_exact"], "o-", label=f"$r = {r}$")
            if r + r_e in set(g["d_x"]):
                ax.plot([r + r_e], g[g["d_x"] == r + r_e]["rank_exact"], "k+", ms=12)
        ax.axhline(sub["grid_cap"].iloc[0], color="0.5", ls=":", lw=1, label="grid cap")
        ax.set(yscale="log", xlabel="width $d_x$", xticks=widths,
               title=f"$r_e = {r_e}$ ($L = {L}$, $H = {H}$)")
        ax.legend(fontsize=6, loc="lower right")
    axes[0].set_ylabel("separation rank (exact)")
    fig.tight_layout()
    return fig, df[(df["L"] == L) & (df["H"] == H)][["L", "H", "d_x", "r", "r_e", "rank_exact",
                                                    "grid_cap"]]


def corollary1_premises(both: pd.DataFrame) -> pd.DataFrame:
    """The rows of ``both`` where eq. (14) applies (``wies_lower`` set), each with Corollary 1's
    premises: ``premise_V`` (V >= 2 bound + 1), ``premise_L`` (3^L > d_x) and ``holds`` (both).

    >>> t = pd.DataFrame({"L": [1, 2, 2, 3], "d_x": [4, 4, 12, 12], "V": [7, 7, 7, 441],
    ...                   "wies_lower": [None, 3, 4, 9]})
    >>> corollary1_premises(t)[["premise_V", "premise_L", "holds"]].values.tolist()
    [[True, True, True], [False, False, False], [True, True, True]]
    """
    applicable = both[both["wies_lower"].notna()].copy()
    applicable["premise_V"] = [int(v) >= 2 * int(b) + 1 for v, b in
                               zip(applicable["V"], applicable["wies_lower"], strict=True)]
    applicable["premise_L"] = [3 ** int(L) > int(d_x)
                               for L, d_x in zip(applicable["L"], applicable["d_x"], strict=True)]
    applicable["holds"] = applicable["premise_V"] & applicable["premise_L"]
    return applicable


def corollary1_figure(applicable: pd.DataFrame):
    """The exact separation rank against eq. (14)'s bound for the rows of ``applicable``
    (:func:`corollary1_premises`) with a bound of at least 1, one colour per depth: circles
    where the premises hold, crosses where one fails; dashed: rank = bound. Returns the figure
    and its data (``applicable``'s settings, ranks, bounds and premises)."""
    fig, ax = plt.subplots(figsize=(5.2, 4))
    for k, (L, g) in enumerate(applicable[applicable["wies_lower"].map(int) >= 1].groupby("L")):
        for holds, marker in ((True, "o"), (False, "x")):
            s = g[g["holds"] == holds]
            if len(s):
                ax.scatter(s["wies_lower"].map(int), s["rank_exact"], marker=marker, s=22,
                           color=f"C{k}", label=f"$L = {L}$" + ("" if holds else ", premise fails"))
    top = max(applicable["wies_lower"].map(int).max(), applicable["rank_exact"].max()) * 1.5
    ax.plot([1, top], [1, top], "k--", lw=1, label="rank = bound")
    ax.set(xscale="log", yscale="log", xlabel="lower bound, eq. (14)",
           ylabel="separation rank (exact)", title="Corollary 1")
    ax.legend(fontsize=6)
    fig.tight_layout()
    return fig, applicable[["sweep", "L", "H", "d_x", "r", "V", "N", "rank_exact", "wies_lower",
                            "premise_V", "premise_L", "holds"]]
