"""Figures of wies2021's vocabulary-bottleneck experiments in trained nets (section 5.2.2,
Figures 3 and 5), drawn from what the chapter measured.

* :func:`transition_panel`: the shallow and deep families of one (V, r) setting with their
  crossing;
* :func:`vocab_figure3`: the rank-limited vocabulary beside its full-rank control (W-F3);
* :func:`vocab_figure5`: the two full-rank vocabularies and their crossings as widths (W-F5).

Each draws what the tables of :mod:`attnbook.engines.depth_sweep` hold and decides nothing;
each figure function returns the figure and the data its chapter stores beside it.

Used by: wies2021_vocab_rank.

>>> round(PAPER_F3, 3)  # section 5.2.2: the transition at d_x = 504 with r = 500
1.008
"""

import matplotlib.pyplot as plt
import pandas as pd

from ..engines import depth_sweep as ds

__all__ = ["PAPER_F3", "transition_panel", "vocab_figure3", "vocab_figure5"]

PAPER_F3 = 504 / 500  # wies2021 section 5.2.2: transition at d_x = 504 with r = 500


def transition_panel(ax, table: pd.DataFrame, row, *, L_shallow: int, L_deep: int,
                     title: str) -> pd.DataFrame:
    """Seed-mean curves of the (V, r) of ``row`` (a row of
    :func:`attnbook.engines.depth_sweep.crossings`) from ``table``
    (:func:`~attnbook.engines.depth_sweep.loss_table`): shallow blue, deep red, bands of one
    seed standard deviation, the crossing (black) with its bootstrap interval, or a note where
    there is none. Returns the rows plotted."""
    part = table[(table["V"] == row["V"]) & (table["r"].fillna(0) == (row["r"] or 0))]
    for fam, color in (("shallow", "tab:blue"), ("deep", "tab:red")):
        f = part[part["family"] == fam]
        ax.plot(f["params_non_embedding"], f["mean"], "o-", color=color,
                label=f"L = {L_shallow if fam == 'shallow' else L_deep} ({fam})")
        ax.fill_between(f["params_non_embedding"], f["mean"] - f["std"], f["mean"] + f["std"],
                        color=color, alpha=0.2, lw=0)
    if row["found"]:
        ax.axvline(row["point"], color="k", lw=1.5,
                   label=f"crossing here: shallow width {row['width']:.0f}")
        if pd.notna(row["low"]):
            ax.axvspan(row["low"], row["high"], color="k", alpha=0.12, lw=0)
    else:
        ax.text(0.97, 0.96, "no crossing in range", transform=ax.transAxes, fontsize=8,
                ha="right", va="top")
    ax.set(xscale="log", title=title, xlabel="non-embedding parameters",
           ylabel="test loss (nats per token)")
    ax.xaxis.set_minor_formatter(plt.NullFormatter())
    return part


def vocab_figure3(table: pd.DataFrame, cross: pd.DataFrame, *, V: int, r: int, factor: float,
                  L_shallow: int, L_deep: int):
    """wies2021 Figure 3 redrawn. Left: vocabulary ``V`` with its embedding at rank ``r``, the
    W-F3 window of shallow widths [r/factor, factor r] (grey), the theory's width r (dashed)
    and the paper's transition scaled to r (dotted, :data:`PAPER_F3`); right: the same ``V``
    at full rank, the control. Widths are placed as the shallow family's non-embedding
    parameters. Returns the figure and its data (the rows of each panel, the crossings of
    ``V``)."""
    def params_at(width):
        return ds.non_embedding_params(L_shallow, max(1, round(width)))

    low_rank = cross[cross["r"].notna()].iloc[0]
    control = cross[(cross["V"] == V) & cross["r"].isna()].iloc[0]
    fig, axes = plt.subplots(1, 2, figsize=(9.4, 3.9), sharey=True)
    kw = dict(L_shallow=L_shallow, L_deep=L_deep)
    plotted = {"rank limited": transition_panel(axes[0], table, low_rank, **kw,
                                                title=f"V = {V}, embedding rank r = {r}"),
               "full rank": transition_panel(axes[1], table, control, **kw,
                                             title=f"V = {V}, full rank (control)")}
    axes[0].axvspan(params_at(r / factor), params_at(r * factor), color="0.85", zorder=0,
                    label=f"shallow width in [r/{factor:g}, {factor:g} r]")
    axes[0].axvline(params_at(r), color="0.3", ls="--", lw=1, label="theory: shallow width r")
    axes[0].axvline(params_at(PAPER_F3 * r), color="tab:green", ls=":", lw=1.5,
                    label=f"paper: {PAPER_F3:.3f} r (504 at r = 500)")
    axes[1].axvline(params_at(r), color="0.3", ls="--", lw=1,
                    label=f"shallow width {r} (the left panel's r)")
    for ax in axes:
        ax.legend(fontsize=7)
    fig.tight_layout()
    return fig, {**plotted, "crossings": cross.drop(columns="crossing")[lambda c: c["V"] == V]}


def vocab_figure5(table: pd.DataFrame, cross: pd.DataFrame, *, r: int, largest_width: float,
                  max_ratio: float, L_shallow: int, L_deep: int):
    """wies2021 Figure 5 redrawn. Left and middle: the full-rank vocabularies of ``cross``
    (smallest first, :func:`transition_panel`); right: each one's crossing as a shallow width
    with its bootstrap interval ("no crossing" at height ``r`` where none), the W-F5 band
    within a factor ``max_ratio`` of the smallest vocabulary's crossing (grey) and the
    ``largest_width`` (dashed). Returns the figure and its data (the rows of each panel, the
    full-rank crossings)."""
    full = cross[cross["r"].isna()].sort_values("V")
    fig, axes = plt.subplots(1, 3, figsize=(13.2, 3.9), gridspec_kw={"width_ratios": [1, 1, 0.8]})
    plotted = {}
    for ax, (_, row) in zip(axes[:2], full.iterrows(), strict=True):
        plotted[f"V = {row['V']}"] = transition_panel(
            ax, table, row, L_shallow=L_shallow, L_deep=L_deep, title=f"V = {row['V']}, full rank")
        ax.legend(fontsize=7)
    ax = axes[2]
    for i, (_, row) in enumerate(full.iterrows()):
        if row["found"]:
            has = pd.notna(row["width_low"])
            lo = row["width"] - row["width_low"] if has else 0.0
            hi = row["width_high"] - row["width"] if has else 0.0
            ax.errorbar([i], [row["width"]], yerr=[[lo], [hi]], fmt="o", color="k", capsize=4)
        else:
            ax.text(i, r, "no\ncrossing", ha="center", va="center", fontsize=8)
    ref = full.iloc[0]
    if ref["found"]:
        ax.axhspan(ref["width"] / max_ratio, ref["width"] * max_ratio, color="0.85", zorder=0,
                   label=f"within a factor {max_ratio:g} of V = {ref['V']}'s crossing")
    ax.axhline(largest_width, color="0.3", ls="--", lw=1, label="largest shallow width")
    ax.set(xticks=range(len(full)), xticklabels=[f"V = {v}" for v in full["V"]],
           xlim=(-0.6, len(full) - 0.4), ylim=(0, 1.25 * largest_width),
           ylabel="shallow width at the crossing",
           title="paper: barely moves\n(V = 50257 vs 2000, widths <= 1064)")
    ax.legend(fontsize=7)
    fig.tight_layout()
    return fig, {**plotted, "crossings": full.drop(columns="crossing")}
