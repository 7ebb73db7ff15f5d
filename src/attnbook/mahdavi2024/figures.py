"""Figures and verdict text of the trained memorization sweeps (mahdavi2024 Figs. 2, 4, 5).

Used by: mahdavi2024_fig2_heads_context, mahdavi2024_fig2c_head_size.
"""

import math

import numpy as np
import pandas as pd
from scipy import stats

__all__ = ["plot_sweep", "describe_by", "plot_pilot", "plot_head_size_pilot"]


def plot_sweep(ax, df: pd.DataFrame, x: str, y: str = "metric", by: str = "T",
               fits: pd.DataFrame | None = None, saturated_at: float = 0.98,
               label: str = "{by} = {key}", **style):
    """Draw ``y`` against ``x``, one line per value of ``by``, with a band of one standard
    deviation when ``df`` holds means over several seeds (:func:`mean_over_seeds`); with
    ``fits`` (from :func:`linearity_by`) also the fitted line through the non-saturated points,
    dashed. ``label``: each line's legend entry (``by`` and ``key`` filled in); ``style``:
    matplotlib's line properties (a control drawn in grey beside the curves it controls)."""
    for key, g in df.sort_values(x).groupby(by):
        line, = ax.plot(g[x], g[y], **{"marker": "o", "ms": 4, **style},
                        label=label.format(by=by, key=key))
        if f"{y}_std" in g and g["seeds"].max() > 1:  # +- one standard deviation over seeds
            ax.fill_between(g[x], g[y] - g[f"{y}_std"], g[y] + g[f"{y}_std"],
                            color=line.get_color(), alpha=0.2, lw=0)
        if fits is not None:
            f = fits[fits[by] == key]
            if len(f) and np.isfinite(f["r2"].iloc[0]):
                part = g[g[y] < saturated_at]
                fit = stats.linregress(part[x].astype(float), part[y].astype(float))
                xs = np.array([part[x].min(), part[x].max()], float)
                ax.plot(xs, fit.intercept + fit.slope * xs, ls="--", lw=1,
                        color=line.get_color())
    ax.set_xlabel(x)
    ax.legend(fontsize=7)
    return ax


def describe_by(df: pd.DataFrame, value: str, by: str = "T", fmt: str = "{:.3f}") -> str:
    """One rounded line for a verdict: ``"T=32: 0.980, T=64: 0.912"``.

    >>> describe_by(pd.DataFrame({"T": [32, 64], "r2": [0.98, 0.9123]}), "r2")
    'T=32: 0.980, T=64: 0.912'
    """
    return ", ".join(f"{by}={k}: " + fmt.format(v) for k, v in zip(df[by], df[value], strict=True))


_PILOT_AXES = (  # statistic -> (title, y label, the criterion's side of the reference line)
    ("r2", "(a) line in H", "R$^2$ of the line (non-saturated part)"),
    ("worst_drop", "(b) drop along n", "largest drop of accuracy"),
    ("r2_n", "(c) line in n", "R$^2$ of the line (non-saturated part)"),
    ("worst_rise", "(d) regression", "largest rise of the MSE"),
)


def plot_pilot(axes, stats_table: pd.DataFrame, references: dict, *, min_points: int,
               profiles: pd.DataFrame | None = None, mark=None):
    """Draw a pilot's statistics (:func:`attnbook.mahdavi2024.sweeps.pilot_statistics`)
    against the training steps, one axis per statistic (``r2``, ``worst_drop``, ``r2_n``,
    ``worst_rise``), one line per panel, with the criterion's value (``references``:
    statistic -> number) as a dotted line. A point where fewer than ``min_points`` models have
    not saturated is drawn hollow: there the criterion has nothing to test. ``profiles``: the
    same statistics of the profiles that have run (each profile's :func:`~attnbook.mahdavi2024.
    sweeps.sweep_statistics`, with a ``profile`` column), each drawn in its panel's colour by
    ``mark`` (:func:`attnbook.book.pilot.mark`'s signature; none drawn without it)."""
    from .sweeps import PANELS

    colour = {panel: f"C{i}" for i, panel in enumerate(PANELS)}
    profiles = profiles if profiles is not None else pd.DataFrame(
        columns=["statistic", "panel", "steps", "value", "unsaturated", "profile"])
    for ax, (stat, title, ylabel) in zip(axes, _PILOT_AXES, strict=True):
        part = stats_table[stats_table["statistic"] == stat]
        for panel, g in part.sort_values("steps").groupby("panel"):
            ax.plot(g["steps"], g["value"], "-", lw=1, label=panel, color=colour[panel])
            free = g["unsaturated"] >= min_points
            ax.plot(g["steps"][free], g["value"][free], "o", ms=5, color=colour[panel])
            ax.plot(g["steps"][~free], g["value"][~free], "o", ms=5, mfc="none",
                    color=colour[panel])
        if mark is not None:
            mark(ax, profiles[profiles["statistic"] == stat], x="steps", y="value",
                 colour=lambda r: colour[r["panel"]],
                 filled=lambda r: r["unsaturated"] >= min_points)
        if stat in references and not math.isnan(references[stat]):
            ax.axhline(references[stat], color="0.3", ls=":", lw=1)
        ax.set(xscale="log", xlabel="optimizer steps per model", ylabel=ylabel, title=title)
        if len(part):
            ax.legend(fontsize=7)
    return axes


def plot_head_size_pilot(ax, gains: pd.DataFrame, *, low: int, n: int, high: int,
                         profiles: pd.DataFrame | None = None, mark=None):
    """Draw Figure 2(c)'s pilot (:func:`attnbook.mahdavi2024.sweeps.head_size_pilot_gains`):
    the accuracy gained from d_h = ``low`` to ``n`` and from ``n`` to ``high`` against the
    training steps, and, ``profiles`` (the same gains of each profile that has run, at its
    first T, with a ``profile`` column), each drawn in its gain's colour by ``mark``
    (:func:`attnbook.book.pilot.mark`'s signature; none drawn without it)."""
    for column, colour, marker, label in (
            ("gain_to_n", "C0", "o-", f"gain from d_h = {low} to n = {n}"),
            ("gain_beyond_n", "C1", "s-", f"gain from n to d_h = {high}")):
        ax.plot(gains["steps"], gains[column], marker, color=colour, label=label)
        if profiles is not None and mark is not None:
            mark(ax, profiles, x="steps", y=column, colour=lambda r, c=colour: c)
    ax.axhline(0, color="0.3", lw=1, ls=":")
    ax.set(xscale="log", xlabel="optimizer steps per model", ylabel="training accuracy gained")
    ax.legend(fontsize=7)
    return ax
