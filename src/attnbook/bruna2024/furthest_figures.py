"""Figures and readings of bruna2024's furthest-neighbour experiment, drawn from what the chapter
trained:

* :func:`nn_every_rank`: one row per rank of each trained line, its lowest held-out loss;
* :func:`nn_pilot_figure`: the pilot's lowest loss of every rank against the steps it trained;
* :func:`nn_pilot_reading`: each rank's trend against its criterion line, and the sentence
  that reads it (B-NN);
* :func:`nn_lines_figure`: the lowest loss on each line of constant rH against the per-head
  rank, and the first line's training curves (B-NN);
* :func:`nn_levels`: the full-rank loss and the range of the low-rank losses.

Each draws or reads what :mod:`attnbook.bruna2024.furthest_neighbour` trained against the
thresholds of the ledger's criterion, passed in, and decides nothing.

Used by: bruna2024_furthest_neighbour.

>>> runs = pd.DataFrame({"steps": [10], "r": [[1, 2]], "H": [[2, 1]], "min_loss": [[0.8, 0.1]]})
>>> nn_every_rank(runs)[["r", "H", "min_loss"]].values.tolist()
[[1.0, 2.0, 0.8], [2.0, 1.0, 0.1]]
>>> nn_levels(pd.DataFrame({"r": [1, 2, 4], "min_loss": [0.9, 0.7, 0.05]}), d=4, rank_div=2)
('0.05', '0.70 to 0.90')
"""

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from attnbook.engines import pilots

__all__ = ["nn_every_rank", "nn_pilot_figure", "nn_pilot_reading", "nn_lines_figure",
           "nn_levels"]

LINE_NAMES = {"attention": "attention, no MLP", "encoder": "TransformerEncoderLayer"}


def nn_every_rank(runs: pd.DataFrame) -> pd.DataFrame:
    """One row per rank of each line of ``runs`` (columns ``r``, ``H``, ``min_loss`` holding
    one list per line): its lowest held-out loss, with integer ``r``, ``H`` and ``steps``."""
    return runs.explode(["r", "H", "min_loss"]).astype(
        {"r": int, "H": int, "min_loss": float, "steps": int})


def nn_pilot_figure(pt: pd.DataFrame, *, d0: int, P0: int, thresholds: dict,
                    mark=None):
    """The lowest held-out loss of every rank r of the pilot ``pt`` (:func:`nn_every_rank`)
    against its steps: circles for the low ranks (``r <= d0 / rank_div``), squares for the
    full-rank side (``r * rank_div > d0``), one colour per r; dotted lines at the criterion's
    ``full_max`` and ``low_min``. ``mark(ax, colour)``, if given, draws the profiles' points
    before the legend, ``colour`` mapping a rank to its colour. Returns the figure."""
    colour = {r: f"C{i}" for i, r in enumerate(sorted(set(pt["r"])))}
    fig, ax = plt.subplots(figsize=(6.0, 3.8))
    for r, part in pt.sort_values("steps").groupby("r"):
        ax.plot(part["steps"], part["min_loss"], "o-" if r * thresholds["rank_div"] <= d0 else "s-",
                color=colour[r], label=f"r = {r}, H = {int(part['H'].iloc[0])}")
    if mark is not None:
        mark(ax, colour)
    ax.axhline(thresholds["full_max"], color="0.3", ls=":", lw=1)
    ax.axhline(thresholds["low_min"], color="0.3", ls=":", lw=1)
    ax.set(xscale="log", ylim=(0, 1.1), xlabel="optimizer steps per model",
           ylabel="min held-out MSE x d", title=f"d = {d0}, line rH = {P0}, one seed")
    ax.xaxis.set_minor_formatter(plt.NullFormatter())  # decades only: no crowded labels
    ax.legend(fontsize=7)
    fig.tight_layout()
    return fig


def nn_pilot_reading(pt: pd.DataFrame, *, d0: int, thresholds: dict):
    """Each rank's trend (:func:`attnbook.engines.pilots.trend`) in the pilot ``pt`` towards
    its criterion line (full rank: ``full_max``; ``r <= d0 / rank_div``: ``low_min``), and the
    sentence that reads it: where r = d0 / rank_div stands and whether it falls below the
    criterion's minimum. Returns ``(reading, text)``."""
    NN = thresholds
    low = pt["r"] * NN["rank_div"] <= d0
    reading = pd.concat([
        pilots.trend(pt[~low], by=["r"], x="steps", y="min_loss", target=NN["full_max"]),
        pilots.trend(pt[low], by=["r"], x="steps", y="min_loss", target=NN["low_min"])],
        ignore_index=True)
    half = reading.set_index("r").loc[d0 // NN["rank_div"]]
    full = reading.set_index("r").loc[d0] if (~low).any() else None
    text = (f"Reading the pilot: after {int(half['steps'])} steps at d = {d0}, "
            + (f"the full-rank model's loss is {full['min_loss']:.3f} (the criterion asks at "
               f"most {NN['full_max']}) and " if full is not None else "")
            + f"that of r = d/2 is {half['min_loss']:.3f}, {half['per_doubling']:+.3f} per "
            f"doubling of the steps (the criterion asks at least {NN['low_min']} for every "
            f"r <= d/2). ")
    if half["min_loss"] < NN["low_min"] and half["per_doubling"] < 0:
        text += ("It is below the criterion's minimum and fell over the pilot's budgets: at no "
                 "budget measured does it reach the talk's reading.")
        below = reading[reading["r"] * NN["rank_div"] <= d0]
        if np.isfinite(below["reaches_at"]).all():
            text += (f" By the same trend every r <= d/2 is below {NN['low_min']} within about "
                     f"{below['reaches_at'].max():.2g} steps.")
        text += (" The low-rank side of the talk's levels fails at this d at every budget the "
                 "pilot trained, so the long profile trains no further lines.")
    else:
        text += "Its side of the criterion can still change with longer training."
    return reading, text


def nn_lines_figure(table: pd.DataFrame, lines_frame: pd.DataFrame, *, d: int, N: int,
                    eval_every: int):
    """Left: the lowest held-out loss of ``table`` (one row per rank of each line and seed)
    against the per-head rank r, one line per (kind, rH), the mean over its seeds with bars of
    one seed standard deviation where there are several, and the zero output dotted at 1.
    Right: the held-out loss of each model of the first line of ``lines_frame`` during
    training, one evaluation every ``eval_every`` steps. Returns the figure."""
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.6))
    for (kind, P), sub in table.groupby(["kind", "rank_heads"]):
        at = sub.groupby("r")["min_loss"].agg(["mean", "std", "size"])
        style = "o-" if kind == "attention" else "s--"
        (drawn,) = axes[0].semilogx(at.index, at["mean"], style, base=2,
                                    label=f"{LINE_NAMES[kind]}, rH = {P}")
        if at["size"].max() > 1:
            axes[0].errorbar(at.index, at["mean"], at["std"], fmt="none", capsize=2,
                             ecolor=drawn.get_color())
    axes[0].axhline(1.0, color="k", lw=0.8, ls=":", label="zero output")
    axes[0].set(xlabel="per-head rank r  (H = rH / r)", ylabel="min held-out MSE x d",
                title=f"furthest neighbour, d = {d}, N = {N}", ylim=(0, 1.1))
    axes[0].legend(fontsize=7)
    first = lines_frame.iloc[0]
    curve = np.array(first["curve"])  # (evaluations, models)
    for m, r in enumerate(first["r"]):
        axes[1].plot(np.arange(1, len(curve) + 1) * eval_every, curve[:, m],
                     label=f"r = {r}, H = {first['H'][m]}")
    axes[1].set(xlabel="step", ylabel="held-out MSE x d",
                title=f"training, attention line rH = {first['rank_heads']}", ylim=(0, 1.1))
    axes[1].legend(fontsize=7)
    fig.tight_layout()
    return fig


def nn_levels(table: pd.DataFrame, *, d: int, rank_div: float) -> tuple[str, str]:
    """The highest lowest-loss at full rank r = d, and the range of those of
    ``r <= d / rank_div``, as the chapter prints them."""
    low = table[table["r"] * rank_div <= d]["min_loss"]
    return (f"{table[table['r'] == d]['min_loss'].max():.2f}",
            f"{low.min():.2f} to {low.max():.2f}")
