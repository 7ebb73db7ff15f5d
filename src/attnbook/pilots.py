"""Reading a pilot: the budgets it trains at, and where its deciding statistic is heading.

A pilot trains one seed of a chapter's configurations at several budgets (optimizer steps or
tokens), each with its own schedule, and measures the statistic that decides a claim at each
(a loss gap between two families, an accuracy gap between two sizes). This module holds what
every chapter's pilot does alike:

* :func:`budgets`: the budgets, checked (distinct integers >= 1) and sorted;
* :func:`trend`: per group of a pilot's table, the statistic's last value, its change per
  doubling of the budget (a least-squares line in log2 of the budget over the last few
  budgets) and the budget at which that line reaches a target (0: where a gap changes sign).
  An extrapolation, not a measurement: the chapter shows it as the budget a run would need,
  never as a result;
* :func:`per_profile`: the same statistic read from each profile that has run (ci, cpu, long,
  full), one table with a ``profile`` column, and :func:`mark_profiles`, which draws it on a
  pilot's figure, one marker per profile (:data:`PROFILE_MARKERS`), named beside it.

Used by: attnbook.attention_ratio, attnbook.depth_sweep, attnbook.depth_transition,
attnbook.memorization.figures, attnbook.memorization.sweeps and attnbook.positional_rank, and
through them by levine2020_depth_transition, mahdavi2024_fig2_heads_context,
mahdavi2024_fig2c_head_size, wies2021_attention_ratio, wies2021_depth_efficiency,
wies2021_rank_bottleneck and wies2021_vocab_rank; directly by bruna2024_furthest_neighbour.
The chapters' pilot sections read their pilots with it.

>>> budgets([2000, 500, 1000])
[500, 1000, 2000]
>>> import pandas as pd
>>> t = pd.DataFrame({"w": [8, 8, 8], "tokens": [1e6, 2e6, 4e6], "gap": [0.3, 0.2, 0.1]})
>>> row = trend(t, by=["w"], x="tokens", y="gap").iloc[0]
>>> f"{row['per_doubling']:.3f} per doubling, reaches 0 at {row['reaches_at']:.0f}"
'-0.100 per doubling, reaches 0 at 8000000'
>>> t["s_per_token"] = 1e-4  # 10,000 tokens a second: 8M tokens take 800 s
>>> f"{trend(t, by=['w'], x='tokens', y='gap', cost='s_per_token')['hours_at'].iloc[0]:.3f}"
'0.222'
"""

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd

from .errors import ParameterError

__all__ = ["budgets", "trend", "readable", "summary", "per_profile", "mark_profiles",
           "PROFILE_MARKERS", "HORIZON", "NO_CROSSING"]

HORIZON = 10  # doublings beyond the largest budget that a trend is extrapolated to (1024 x)
NO_CROSSING = "no value: a single budget so far, or no crossing in sight (the gap does not " \
              f"shrink over the largest budgets, or would reach zero only beyond 2^{HORIZON} " \
              "times the largest budget)"


def budgets(values: Sequence[int], name: str = "budgets") -> list[int]:
    """``values`` sorted, after checking they are distinct integers >= 1 (at least one).

    >>> budgets([4, 4])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    attnbook.errors.ParameterError: parameter budgets = [4, 4] ... distinct step counts >= 1
    """
    values = list(values)
    if not values or len(set(values)) != len(values) or any(
            isinstance(b, bool) or not isinstance(b, int) or b < 1 for b in values):
        raise ParameterError(name, values, "distinct step counts >= 1")
    return sorted(values)


def _line(x: np.ndarray, y: np.ndarray, target: float) -> tuple[float, float]:
    """Slope of y per doubling of x (least squares in log2 x) and the x where the line reaches
    ``target`` (inf when it heads away from it or is flat; y[-1] is not at the target)."""
    if len(x) < 2:
        return math.nan, math.inf
    slope, icept = np.polyfit(np.log2(x), y, 1)
    if slope == 0 or (slope > 0) == (y[-1] > target):
        return float(slope), math.inf
    at = (target - icept) / slope  # log2 of the budget where the line reaches the target
    return float(slope), float(2.0 ** at) if at - np.log2(x[-1]) <= HORIZON else math.inf


def trend(table: pd.DataFrame, *, by: Sequence[str], x: str, y: str, last: int = 3,
          target: float = 0.0, cost: str | None = None) -> pd.DataFrame:
    """Per group of ``table`` (columns ``by``): the budget ``x`` and value ``y`` at the largest
    budget; ``per_doubling``, the change of y per doubling of x (least squares in log2 x over
    the ``last`` largest budgets; NaN for a single budget); ``reaches_at``, the x at which that
    line reaches ``target`` (inf when it heads away from it, is flat, or reaches it only
    beyond :data:`HORIZON` doublings of the largest budget; the last x when y has
    already reached or crossed it within the pilot); ``points``, the budgets the line is fitted
    to. ``cost``: a column of seconds per unit of x; adds ``hours_at``, the hours ``reaches_at``
    takes at the speed measured at the largest budget."""
    if last < 2:
        raise ParameterError("last", last, "an integer >= 2 (a line needs two budgets)")
    missing = [c for c in [*by, x, y, *([cost] if cost else [])] if c not in table.columns]
    if missing:
        raise ParameterError("table", sorted(table.columns), f"columns {missing} as well")
    rows = []
    for key, g in table.groupby(list(by), sort=True):
        g = g.sort_values(x)
        xs, ys = g[x].to_numpy(float), g[y].to_numpy(float)
        slope, at = _line(xs[-last:], ys[-last:], target)
        if (ys[-1] - target < 0) != (ys[0] - target < 0) or ys[-1] == target:
            at = float(xs[-1])  # the sign changed within the pilot: reached
        rows.append({**dict(zip(by, key if isinstance(key, tuple) else (key,), strict=True)),
                     x: xs[-1], y: ys[-1], "per_doubling": slope, "reaches_at": at,
                     "points": min(last, len(xs)),
                     **({"hours_at": at * float(g[cost].iloc[-1]) / 3600} if cost else {})})
    return pd.DataFrame(rows)


def readable(reading: pd.DataFrame, x: str = "tokens", y: str = "gap") -> pd.DataFrame:
    """:func:`trend`'s table as a chapter shows it: named columns, and no value (NaN, shown
    with :data:`NO_CROSSING`) where the line never reaches its target."""
    return reading.replace(math.inf, np.nan).rename(columns={
        x: f"largest budget ({x})", y: f"{y} there", "per_doubling": "per doubling",
        "reaches_at": f"{y} 0 at ({x})", "hours_at": "hours there", "points": "budgets fitted"})


def summary(reading: pd.DataFrame, name, *, x: str = "tokens", unit: str = "tokens") -> str:
    """One sentence on :func:`trend`'s table: which groups crossed within the pilot, which head
    to their target and at what budget (and hours, where measured), which show no crossing.
    ``name(row)`` names a group.

    >>> r = pd.DataFrame({"w": [8, 128, 32], "tokens": [8e6] * 3, "gap": [0.1, 0.03, -0.01],
    ...                   "reaches_at": [math.inf, 1.4e7, 8e6], "hours_at": [math.inf, 1.1, 0.6]})
    >>> summary(r, lambda row: f"width {row['w']}")
    'Crossed within the pilot: width 32. Heading for a crossing: width 128 at 1.4e+07 tokens \
(1.1 hours). No crossing in sight: width 8.'
    """
    crossed, ahead, never = [], [], []
    for row in reading.to_dict("records"):  # each column keeps its type (iterrows: floats)
        at = row["reaches_at"]
        if math.isinf(at) or math.isnan(at):
            never.append(name(row))
        elif at <= row[x]:
            crossed.append(name(row))
        else:
            hours = row.get("hours_at", math.nan)
            ahead.append(f"{name(row)} at {at:.2g} {unit}"
                         + (f" ({hours:.2g} hours)" if np.isfinite(hours) else ""))
    parts = [(f"Crossed within the pilot: {', '.join(crossed)}." if crossed else ""),
             (f"Heading for a crossing: {'; '.join(ahead)}." if ahead else ""),
             (f"No crossing in sight: {', '.join(never)}." if never else "")]
    return " ".join(p for p in parts if p)


PROFILE_MARKERS = {"ci": "v", "cpu": "s", "long": "D", "full": "*"}  # a profile's points


def per_profile(across: dict, read, columns: Sequence[str]) -> pd.DataFrame:
    """``read(results, params)`` of each profile in ``across`` (profile -> (its stored
    results, its parameters), as ``run.across_profiles`` gives them), read the way the pilot
    is read, in one table with a ``profile`` column. A profile whose reading is empty (a
    configuration the statistic needs is missing) is left out; with none left, the table is
    empty with ``columns`` and ``profile``, so that a figure can still select from it.

    >>> across = {"cpu": (pd.DataFrame({"w": [8, 8], "gap": [0.2, 0.4]}), {"w": 8}),
    ...           "long": (pd.DataFrame({"w": [16], "gap": [0.1]}), {"w": 8})}
    >>> def read(results, params):  # the mean gap at the parameters' width
    ...     part = results[results["w"] == params["w"]]
    ...     return part.groupby("w", as_index=False)["gap"].mean()
    >>> per_profile(across, read, columns=["w", "gap"]).round(3)
       w  gap profile
    0  8  0.3     cpu
    >>> list(per_profile({}, read, columns=["w", "gap"]).columns)
    ['w', 'gap', 'profile']
    """
    tables = []
    for profile, (results, params) in across.items():
        table = read(results, params) if results is not None and len(results) else None
        if table is not None and len(table):
            tables.append(table.assign(profile=profile))
    return (pd.concat(tables, ignore_index=True) if tables
            else pd.DataFrame(columns=[*columns, "profile"]))


def mark_profiles(ax, table: pd.DataFrame, *, x: str, y: str, colour, filled=None,
                  label=None) -> int:
    """Draw each row of ``table`` (with a ``profile`` column) at (``x``, ``y``) as its
    profile's marker (:data:`PROFILE_MARKERS`) in ``colour(row)``, hollow where
    ``filled(row)`` is false; each profile is named once at each ``x``, beside its highest
    point there, by ``label(row)`` (default: the profile), so that points stacked at one
    budget do not print over each other. Rows whose ``y`` is not finite are left out. Returns
    how many were drawn."""
    drawn, named = 0, set()
    for _, row in table.sort_values(y, ascending=False).iterrows():
        value = float(row[y])
        if not math.isfinite(value):
            continue
        c = colour(row)
        ax.plot(row[x], value, PROFILE_MARKERS[row["profile"]], ms=7, color=c,
                mfc=c if filled is None or filled(row) else "none")
        if (row["profile"], row[x]) not in named:
            named.add((row["profile"], row[x]))
            ax.annotate(row["profile"] if label is None else label(row), (row[x], value),
                        xytext=(4, 3), textcoords="offset points", fontsize=7, color=c)
        drawn += 1
    return drawn
