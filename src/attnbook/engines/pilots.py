"""Reading a pilot: the budgets it trains at, and where its deciding statistic is heading.

A pilot trains one seed of a chapter's configurations at several budgets (optimizer steps or
tokens), each with its own schedule, and measures the statistic that decides a claim at each
(a loss gap between two families, an accuracy gap between two sizes). This module holds what
every chapter's pilot does alike:

* :func:`budgets`: the budgets, checked (distinct integers >= 1) and sorted;
* :func:`trend`: per group of a pilot's table, what it measured and no more: the statistic at
  the largest budget (the mean over the seeds), its change per doubling of the budget (each
  seed's least-squares line in log2 of the budget over its last few budgets, averaged, with a
  standard error over the seeds), and, only where the pilot has at least two seeds and that
  change is resolved, the budget at which it reaches a target (0: where a gap changes sign) if
  that is within 4 times the largest budget measured (:data:`HORIZON`); beyond, a reading says
  only "not reached by X; changes by a +- b per doubling" (:func:`summary`). A pilot of one
  seed gets no standard error and no crossing. :func:`grid_cost` counts what the criterion
  needs (every net of the grid at its seeds) for the hours quoted.

What knows about profiles (the other profiles' stored units, their markers on a pilot's
figure) is the book's: :mod:`attnbook.book.pilot`.

Used by: attnbook.wies2021.attention_ratio, attnbook.engines.depth_sweep,
attnbook.levine2020.depth_transition, attnbook.mahdavi2024.sweeps and
attnbook.wies2021.positional_rank, and through them by
levine2020_depth_transition, mahdavi2024_fig2_heads_context, mahdavi2024_fig2c_head_size,
mahdavi2024_fig3_saturation (which uses no pilot of it), wies2021_attention_ratio,
wies2021_depth_efficiency, wies2021_rank_bottleneck and wies2021_vocab_rank; directly by
bruna2024_furthest_neighbour. The chapters' pilot sections read their pilots with it.

>>> budgets([2000, 500, 1000])
[500, 1000, 2000]
>>> import pandas as pd
>>> t = pd.DataFrame({"w": 8, "tokens": [1e6, 2e6, 4e6] * 2, "seed": [0, 0, 0, 1, 1, 1],
...                   "gap": [0.3, 0.2, 0.1, 0.34, 0.22, 0.1]})
>>> row = trend(t, by=["w"], x="tokens", y="gap").iloc[0]
>>> f"{row['per_doubling']:.2f} +- {row['per_doubling_se']:.2f}, 0 at {row['reaches_at']:.3g}"
'-0.11 +- 0.01, 0 at 7.51e+06'
"""

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd

from ..errors import ParameterError

__all__ = ["budgets", "trend", "grid_cost", "readable", "summary", "reading_rule", "HORIZON",
           "MIN_FIT_SEEDS", "RESOLVED_SE", "FIT_LAST", "NO_CROSSING"]

HORIZON = 2  # doublings beyond the largest budget measured that a reading may reach (4 x)
MIN_FIT_SEEDS = 2  # seeds a slope needs for a standard error, and a crossing to be read
RESOLVED_SE = 2  # a slope within this many standard errors of zero heads nowhere
FIT_LAST = 3  # the largest budgets each seed's line is fitted to
NO_CROSSING = ("no value: one seed (no standard error, no crossing read), or no crossing "
               f"within {2 ** HORIZON} times the largest budget measured (the statistic does "
               f"not head for its target, its slope is within {RESOLVED_SE} standard errors "
               "of zero, or its line reaches the target only beyond)")


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


def _slope(x: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """Slope of y per doubling of x and intercept (least squares in log2 x); NaN for one x."""
    if len(x) < 2:
        return math.nan, math.nan
    slope, icept = np.polyfit(np.log2(x), y, 1)
    return float(slope), float(icept)


def _group(g: pd.DataFrame, x: str, y: str, seed: str | None, last: int, target: float):
    """One group's reading: its largest budget, the seed mean there, the mean of the seeds'
    slopes over their ``last`` largest budgets with its standard error, how many seeds, and
    where the mean line reaches ``target`` (inf: not within :data:`HORIZON` doublings, or
    not read)."""
    per_seed = [part.sort_values(x) for _, part in
                (g.groupby(seed, sort=True) if seed else [(0, g)])]
    fits = [_slope(p[x].to_numpy(float)[-last:], p[y].to_numpy(float)[-last:])
            for p in per_seed]
    n = len(per_seed)
    x_last = max(float(p[x].iloc[-1]) for p in per_seed)
    at_last = g[g[x] == x_last][y].astype(float)
    y_last = float(at_last.mean())
    first = g[g[x] == g[x].min()][y].astype(float).mean()
    slopes = np.array([f[0] for f in fits])
    slope = float(slopes.mean()) if np.isfinite(slopes).all() else math.nan
    se = float(slopes.std(ddof=1) / math.sqrt(n)) if n >= MIN_FIT_SEEDS and \
        np.isfinite(slope) else math.nan
    at = math.inf
    if (y_last - target < 0) != (first - target < 0) or y_last == target:
        at = x_last  # the seed mean changed sign within the pilot: reached (measured)
    elif n >= MIN_FIT_SEEDS and np.isfinite(slope) and slope != 0 \
            and (slope > 0) != (y_last > target) and abs(slope) >= RESOLVED_SE * se:
        doublings = (target - y_last) / slope  # from the largest budget, along the mean slope
        if doublings <= HORIZON:
            at = x_last * 2.0 ** doublings
    return x_last, y_last, slope, se, n, at, min(last, min(len(p) for p in per_seed))


def trend(table: pd.DataFrame, *, by: Sequence[str], x: str, y: str, seed: str = "seed",
          last: int = FIT_LAST, target: float = 0.0, cost: str | float | None = None,
          seeds_needed: int = 3) -> pd.DataFrame:
    """Per group of ``table`` (columns ``by``), what its pilot measured of statistic ``y``
    against budget ``x``, and no more.

    Columns: ``x``, the largest budget; ``y``, the mean over the seeds there; ``seeds``, how
    many (the rows of column ``seed``; a table without it counts as one); ``per_doubling``, the
    change of y per doubling of x (the mean over seeds of each seed's least-squares line in
    log2 x over its ``last`` largest budgets; NaN for a single budget) and ``per_doubling_se``,
    its standard error over the seeds (NaN for one seed); ``horizon``, :data:`HORIZON`
    doublings beyond the largest budget (4 times it), as far as a reading goes;
    ``reaches_at``: the largest budget where the seed mean has already crossed ``target``
    within the pilot (a measurement); else, with at least :data:`MIN_FIT_SEEDS` seeds and a
    slope that heads for the target by at least :data:`RESOLVED_SE` standard errors, the x at
    which the line from the largest budget's mean reaches it, if that is within the horizon;
    inf otherwise (one seed reads no crossing). ``points``: the budgets each line is fitted to.

    ``cost``: the seconds per unit of x of everything the criterion needs (a number), or a
    column of the seconds per unit of x of a group's own nets, one seed, summed over every
    group and multiplied by ``seeds_needed``; adds ``hours_at``, the hours to train all of it
    to ``reaches_at`` (NaN where no crossing is read).

    >>> t = pd.DataFrame({"w": 8, "tokens": [1e6, 2e6, 4e6] * 2, "seed": [0] * 3 + [1] * 3,
    ...                   "gap": [0.30, 0.20, 0.10, 0.32, 0.22, 0.12]})
    >>> row = trend(t, by=["w"], x="tokens", y="gap").to_dict("records")[0]
    >>> f"{row['per_doubling']:.3f} +- {row['per_doubling_se']:.3f}, {row['seeds']} seeds"
    '-0.100 +- 0.000, 2 seeds'
    >>> f"{row['gap']:.2f} at {row['tokens']:.0f}: 0 at {row['reaches_at']:.3g}"
    '0.11 at 4000000: 0 at 8.57e+06'
    >>> one = trend(t[t["seed"] == 0], by=["w"], x="tokens", y="gap").to_dict("records")[0]
    >>> one["seeds"], math.isnan(one["per_doubling_se"]), math.isinf(one["reaches_at"])
    (1, True, True)
    """
    if last < 2:
        raise ParameterError("last", last, "an integer >= 2 (a line needs two budgets)")
    missing = [c for c in [*by, x, y, *([cost] if isinstance(cost, str) else [])]
               if c not in table.columns]
    if missing:
        raise ParameterError("table", sorted(table.columns), f"columns {missing} as well")
    seed = seed if seed in table.columns else None
    rows = []
    for key, g in table.groupby(list(by), sort=True):
        x_last, y_last, slope, se, n, at, points = _group(g, x, y, seed, last, target)
        rows.append({**dict(zip(by, key if isinstance(key, tuple) else (key,), strict=True)),
                     x: x_last, y: y_last, "seeds": n, "per_doubling": slope,
                     "per_doubling_se": se, "reaches_at": at,
                     "horizon": x_last * 2.0 ** HORIZON, "points": points})
    out = pd.DataFrame(rows)
    if len(out):
        out["seeds"] = out["seeds"].astype(int)
    if cost is not None and len(out):
        if isinstance(cost, str):
            top = table[table.groupby(list(by))[x].transform("max") == table[x]]
            per_unit = float(top.groupby(list(by))[cost].mean().sum()) * seeds_needed
        else:
            per_unit = float(cost)
        out["hours_at"] = [at * per_unit / 3600 if math.isfinite(at) else math.nan
                           for at in out["reaches_at"]]
    return out


def grid_cost(runs: pd.DataFrame, *, seeds: int, budget: str = "steps",
              speed: str = "tokens_per_s") -> float:
    """The seconds per training token (of each net) that training every net of a pilot's grid
    at ``seeds`` seeds takes, at the speeds the pilot measured at its largest budget (one seed
    of each net, 1 / ``speed`` summed over them): the ``cost`` of :func:`trend` for a criterion
    that needs the pilot's widths at that many seeds.

    >>> runs = pd.DataFrame({"steps": [10, 20, 20], "seed": 0, "tokens_per_s": [5.0, 4.0, 1.0]})
    >>> grid_cost(runs, seeds=3)  # (1/4 + 1/1) x 3
    3.75
    """
    at = runs[runs[budget] == runs[budget].max()]
    if "seed" in at.columns:
        at = at[at["seed"] == at["seed"].min()]
    return float((1 / at[speed].astype(float)).sum()) * seeds


def readable(reading: pd.DataFrame, x: str = "tokens", y: str = "gap") -> pd.DataFrame:
    """:func:`trend`'s table as a chapter shows it: named columns, and no value (NaN, shown
    with :data:`NO_CROSSING`) where no crossing is read."""
    return reading.replace(math.inf, np.nan).rename(columns={
        x: f"largest budget ({x})", y: f"{y} there", "per_doubling": "per doubling",
        "per_doubling_se": "its standard error", "reaches_at": f"{y} 0 at ({x})",
        "horizon": f"read up to ({x})", "hours_at": "hours there (every net and seed)",
        "points": "budgets fitted"})


def summary(reading: pd.DataFrame, name, *, x: str = "tokens", unit: str = "tokens",
            y: str = "gap", what: str = "the gap") -> str:
    """What :func:`trend`'s table measured, in sentences: the groups that crossed within the
    pilot; those whose line reaches the target within :data:`HORIZON` doublings (at what
    budget, and the hours for everything the criterion needs where measured); for the others,
    that the target is not reached by the horizon and how much ``what`` changes per doubling
    (with its standard error where the pilot has several seeds). ``name(row)`` names a group.

    >>> r = pd.DataFrame({"w": [8, 128, 32], "tokens": [8e6] * 3, "gap": [0.1, 0.03, -0.01],
    ...                   "seeds": [3, 3, 3], "per_doubling": [0.01, -0.02, -0.01],
    ...                   "per_doubling_se": [0.004, 0.005, 0.01], "horizon": [3.2e7] * 3,
    ...                   "reaches_at": [math.inf, 2.2e7, 8e6], "hours_at": [math.nan, 9, 3]})
    >>> print(summary(r, lambda row: f"width {row['w']}"))  # doctest: +NORMALIZE_WHITESPACE
    Crossed within the pilot: width 32. Reaches zero within 4 times the largest budget (3
    seeds): width 128 at 2.2e+07 tokens (9 hours for every net and seed the criterion needs).
    Not reached by 3.2e+07 tokens (4 times the largest budget): width 8 (the gap +0.1 there,
    changing by +0.010 +- 0.004 per doubling).
    >>> one = r.assign(seeds=1, per_doubling_se=math.nan, reaches_at=math.inf).iloc[:1]
    >>> print(summary(one, lambda row: f"width {row['w']}"))  # doctest: +NORMALIZE_WHITESPACE
    One seed: no standard error and no crossing is read. Not reached by 3.2e+07 tokens (4
    times the largest budget): width 8 (the gap +0.1 there, changing by +0.010 per doubling).
    """
    crossed, ahead, never = [], [], []
    times = 2 ** HORIZON
    for row in reading.to_dict("records"):  # each column keeps its type (iterrows: floats)
        at = row["reaches_at"]
        if math.isinf(at) or math.isnan(at):
            se = row.get("per_doubling_se", math.nan)
            change = ("no change measured (a single budget)" if not np.isfinite(
                row["per_doubling"]) else f"changing by {row['per_doubling']:+.3f}"
                + (f" +- {se:.3f}" if np.isfinite(se) else "") + " per doubling")
            never.append((row["horizon"], f"{name(row)} ({what} {row[y]:+.3g} there, {change})"))
        elif at <= row[x]:
            crossed.append(name(row))
        else:
            hours = row.get("hours_at", math.nan)
            ahead.append(f"{name(row)} at {at:.2g} {unit}"
                         + (f" ({hours:.2g} hours for every net and seed the criterion needs)"
                            if np.isfinite(hours) else ""))
    seeds = sorted({int(s) for s in reading.get("seeds", pd.Series([1] * len(reading)))})
    parts = [("One seed: no standard error and no crossing is read." if seeds == [1] else
              "One seed in some groups: for those no standard error and no crossing is read."
              if 1 in seeds else ""),
             (f"Crossed within the pilot: {', '.join(crossed)}." if crossed else ""),
             (f"Reaches zero within {times} times the largest budget ({seeds[0]} seeds): "
              f"{'; '.join(ahead)}." if ahead else "")]
    for horizon in sorted({h for h, _ in never}):
        parts.append(f"Not reached by {horizon:.2g} {unit} ({times} times the largest budget): "
                     + "; ".join(t for h, t in never if h == horizon) + ".")
    return " ".join(p for p in parts if p)


def reading_rule(statistic: str = "the gap", target: str = "zero", *,
                 verdict_seeds: int | None = None) -> str:
    """How :func:`trend` reads a pilot, in words made from its own numbers (:data:`FIT_LAST`,
    :data:`MIN_FIT_SEEDS`, :data:`RESOLVED_SE`, :data:`HORIZON`), for a chapter's paragraph
    on reading its pilot: the change per doubling, and when a budget at which ``statistic``
    reaches ``target`` is read. ``verdict_seeds``: add what the hours of such a reading count
    (the pilot's grid at the seeds a verdict needs).

    >>> print(reading_rule())  # doctest: +NORMALIZE_WHITESPACE
    Its change per doubling of the budget is each seed's least-squares line in the logarithm
    of the budget over its 3 largest budgets, averaged, with its standard error over the
    seeds. A budget at which the gap reaches zero is read only where the pilot has at least
    2 seeds, the change heads for zero by at least 2 standard errors, and the line reaches
    zero within 4 times the largest budget measured. A pilot of one seed reads none, and
    beyond 4 times its largest budget the reading says only how much the gap changes per
    doubling.
    >>> "measured; there the hours count every net of the grid at the 3 seeds" in reading_rule(
    ...     verdict_seeds=3)
    True
    """
    horizon = f"{2 ** HORIZON} times"
    cost = (f"; there the hours count every net of the grid at the {verdict_seeds} seeds a "
            "verdict needs, at the speeds measured" if verdict_seeds else "")
    return (f"Its change per doubling of the budget is each seed's least-squares line in the "
            f"logarithm of the budget over its {FIT_LAST} largest budgets, averaged, with its "
            f"standard error over the seeds. A budget at which {statistic} reaches {target} is "
            f"read only where the pilot has at least {MIN_FIT_SEEDS} seeds, the change heads for "
            f"{target} by at least {RESOLVED_SE:g} standard errors, and the line reaches "
            f"{target} within {horizon} the largest budget measured{cost}. A pilot of one seed "
            f"reads none, and beyond {horizon} its largest budget the reading says only how "
            f"much {statistic} changes per doubling.")
