"""A chapter's pilot section (imported as ``ap``): everything about a pilot that knows profiles.

A pilot trains one seed of a chapter's configurations at several budgets to size its ``long``
run; its science (budgets, trend) is :mod:`attnbook.engines.pilots`. Here, what every chapter
shares (CONTRIBUTING.md, "Writing a chapter"): its configs at each budget, its units trained or
read, its statistic across the profiles that have run, the standard figure, and the stop.
"""

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import matplotlib.pyplot as plt
import pandas as pd
from IPython.display import Markdown, display

from .. import paths
from ..errors import ParameterError
from . import claims as _claims
from .display import Table
from .profiles import load_spec
from .shown import completeness

__all__ = ["Pilot", "at_budgets", "units", "pilot_parameters", "across", "MARKERS", "mark", "grows",
           "show", "standing", "count", "reading", "stop", "NOTHING_STORED", "SIZED_LATER"]

NOTHING_STORED = "*The `long` profile's pilot has stored nothing yet.*"
SIZED_LATER = "the long sweep is sized from the pilot above and is not defined yet"
MARKERS = {"ci": "v", "cpu": "s", "long": "D", "full": "*"}  # a profile's points


def at_budgets(build: Callable[..., list], budgets: Iterable[int]) -> list:
    """``build(steps=b)`` for each budget ``b``, the longest first, in one list.

    >>> at_budgets(lambda steps: [("a", steps), ("b", steps)], [4, 8])
    [('a', 8), ('b', 8), ('a', 4), ('b', 4)]
    """
    return [c for steps in sorted(budgets, reverse=True) for c in build(steps=steps)]


@dataclass
class Pilot:
    """A chapter's pilot as this run sees it: its stored units and where they come from."""

    runs: pd.DataFrame
    source: str

    def __len__(self) -> int:
        return len(self.runs)


def units(run, train: bool, compute: Callable, unit: str = "results") -> Pilot:
    """``compute(run.sweep("pilot"))`` when this run trains the pilot (``train``), else what
    the ``long`` profile's pilot has stored so far (``unit`` names what is counted)."""
    if train:
        return Pilot(compute(run.sweep("pilot")), f"this run ({run.profile})")
    runs = run.stored_sweep("pilot", "long")
    return Pilot(runs, f"the long profile's pilot, {len(runs)} {unit} stored so far")


def pilot_parameters(run, train: bool, namespace: dict) -> dict:
    """The parameters the pilot is trained with: this run's (from ``namespace``, the notebook's
    globals) when it trains it, else the ``long`` profile's."""
    if not train:
        return run.profile_parameters("long")
    return {k: namespace.get(k, v) for k, v in run.profile_parameters(run.profile).items()}


def across(run, name: str, read: Callable, columns: Sequence[str] = ()) -> pd.DataFrame:
    """``read(results, params)`` of sweep ``name`` at each profile whose run is complete and
    current (:mod:`attnbook.book.shown`), smallest first, as one table with a ``profile``
    column (empty, with ``columns``, when none has)."""
    path = paths.NOTEBOOKS / f"{run.notebook}.ipynb"
    spec = load_spec(path)
    table = _claims.status_table()
    tables = []
    for profile in _claims.PROFILES:
        if not spec.has_profile(profile) or completeness(run.notebook, path, profile, table, []):
            continue
        results = run.stored_sweep(name, profile)
        read_there = read(results, spec.effective(profile)) if len(results) else None
        if read_there is not None and len(read_there):
            tables.append(read_there.assign(profile=profile))
    return (pd.concat(tables, ignore_index=True) if tables
            else pd.DataFrame(columns=[*columns, "profile"]))


def mark(ax, table: pd.DataFrame, *, x: str, y: str, colour: Callable, filled=None,
         label=None) -> int:
    """Draw each row of ``table`` at (``x``, ``y``) as its profile's marker in ``colour(row)``,
    hollow where ``filled(row)`` is false, each profile named once per ``x`` by ``label(row)``;
    rows whose ``y`` is not finite are left out. Returns how many were drawn."""
    if not len(table):
        return 0
    rows = [r for r in table.sort_values(y, ascending=False).to_dict("records")
            if math.isfinite(float(r[y]))]
    named = set()
    for row in rows:
        c, at = colour(row), (row[x], float(row[y]))
        ax.plot(*at, MARKERS[row["profile"]], ms=7, color=c,
                mfc=c if filled is None or filled(row) else "none")
        if (row["profile"], row[x]) not in named:
            named.add((row["profile"], row[x]))
            ax.annotate(row["profile"] if label is None else label(row), at, xytext=(4, 3),
                        textcoords="offset points", fontsize=7, color=c)
    return len(rows)


def grows(gaps: pd.DataFrame, profiles: pd.DataFrame, *, line: Sequence[str], colour_by: str,
          label: Callable, panels: Sequence[str] = (), title: Callable = str,
          sides: tuple[str, str] = ("shallow better", "deep better"), ylabel: str = "",
          xlabel: str = "training tokens per model", size=(6.0, 3.8), x: str = "tokens",
          y: str = "gap"):
    """The standard pilot figure, "how the effect grows with training": per panel (``panels``
    columns), one line per group of ``line`` columns of ``gaps`` (``y`` against ``x``, log
    scale, mean and std over seeds) coloured by ``colour_by``, the ``profiles`` that have run
    (:func:`across`) as markers, zero in the middle with its ``sides`` named. Returns it."""
    parts = list(gaps.groupby(list(panels))) if panels else [((), gaps)]
    fig, axes = plt.subplots(1, len(parts), figsize=(size[0] * len(parts), size[1]),
                             squeeze=False, sharey=True)
    top = 1.15 * max(pd.concat([gaps[y], profiles[y]]).abs().max(), 1e-3)
    for ax, (at, part) in zip(axes[0], parts, strict=True):
        shown = profiles
        for c, v in zip(panels, at if isinstance(at, tuple) else (at,), strict=True):
            shown = shown[shown[c] == v]
        colour = {v: f"C{i}" for i, v in enumerate(sorted(set(part[colour_by])))}
        for k, one in part.groupby(list(line)):
            at_x, c = one.groupby(x)[y].agg(["mean", "std", "size"]), colour[one[colour_by].iloc[0]]
            ax.plot(at_x.index, at_x["mean"], "o-", color=c, label=label(k))  # over its seeds
            if at_x["size"].max() > 1:
                ax.errorbar(at_x.index, at_x["mean"], at_x["std"], fmt="none", ecolor=c, capsize=2)
        mark(ax, shown, x=x, y=y, colour=lambda r, c=colour: c.get(r[colour_by], "0.45"))
        ax.axhline(0, color="0.3", lw=1)
        ax.set(xscale="log", ylim=(-top, top), xlabel=xlabel, title=title(at))
        ax.xaxis.set_minor_formatter(plt.NullFormatter())  # decades only: no crowded labels
        for side, mid in zip(sides, (0.75, 0.25), strict=True):  # beside its half of the panel
            ax.text(1.01, mid, side, transform=ax.transAxes, rotation=90, ha="left",
                    va="center", fontsize=8)
        ax.legend(fontsize=7, loc="center right")
    axes[0][0].set_ylabel(ylabel)
    fig.tight_layout()
    return fig


def show(run, pilot: Pilot, draw: Callable, *, caption: str, claims: Sequence[str],
         data, shown=(), name: str | None = None, ready: bool | None = None) -> None:
    """Save the pilot figure ``draw()`` (as ``name``, default ``<chapter>_pilot``) with its
    ``caption``, ``claims`` and ``data``, then display each table of ``shown``; without a
    stored unit (or ``ready`` false), say so instead. Returns nothing, so that a cell ending
    in it shows no value under the figure."""
    if not len(pilot) or ready is False:
        display(Markdown(NOTHING_STORED))
        return
    run.savefig(draw(), name or f"{run.notebook}_pilot", source=f"pilot: {pilot.source}",
                caption=caption, claims=list(claims), data=data() if callable(data) else data)
    for table in shown:
        display(Table(table.round(4)))


def standing(gaps: pd.DataFrame, what: str = "width") -> str:
    """Where the deeper net stands across the gaps (deeper - shallower) of one budget.

    >>> standing(pd.DataFrame({"gap": [0.02, 0.01]}))
    'behind at every width'
    >>> standing(pd.DataFrame({"gap": [0.02, -0.01]}), "size")
    'behind at some sizes and ahead at others'
    """
    if len(gaps) == 0:
        raise ParameterError("gaps", "no rows", "the gaps of at least one group")
    gap = gaps["gap"]
    held = {"behind": gap > 0, "ahead": gap < 0, "level": gap == 0}
    sides = [side for side, where in held.items() if where.any()]
    if len(sides) == 1:
        return f"{sides[0]} at every {what}"
    return f"{sides[0]} at some {what}s and " + " and ".join(sides[1:]) + " at others"


def count(runs: pd.DataFrame, unit: str = "nets") -> str:
    """How many units a pilot stored, and of how many seeds (each unit is one seed's).

    >>> count(pd.DataFrame({"seed": [0, 0, 0]}))
    '3 nets of one seed'
    >>> count(pd.DataFrame({"seed": [0, 0, 1, 1]}))
    '4 nets, 2 of each of 2 seeds'
    >>> count(pd.DataFrame({"seed": [0, 0, 1]}))
    '3 nets over 2 seeds'
    """
    if "seed" not in runs.columns or runs["seed"].nunique() == 1:
        return f"{len(runs)} {unit} of one seed"
    per = runs["seed"].value_counts()
    n = len(per)
    if per.nunique() == 1:
        return f"{len(runs)} {unit}, {per.iloc[0]} of each of {n} seeds"
    return f"{len(runs)} {unit} over {n} seeds"


def reading(runs: pd.DataFrame, gaps: pd.DataFrame) -> str:
    """A pilot in words: what it stored, how far it trained, where the deeper net stands.

    >>> print(reading(pd.DataFrame({"seed": [0, 0]}),
    ...                pd.DataFrame({"tokens": [10, 20], "gap": [0.1, -0.1]})))
    ... # doctest: +NORMALIZE_WHITESPACE
    2 nets of one seed up to 20 tokens each, the deep net is ahead at every width at the
    largest budget
    """
    top = gaps["tokens"].max()
    return (f"{count(runs)} up to {int(top):,} tokens each, the deep net is "
            f"{standing(gaps[gaps['tokens'] == top])} at the largest budget")


def stop(run, why: str = SIZED_LATER, claims: Sequence[str] = (),
         pilot_of: str | None = None) -> None:
    """End the chapter here (``partly run``, :meth:`Run.partly`). With ``claims`` (the pilot
    puts the effect beyond this profile), each is first recorded ``not run`` with ``why`` and
    the pilot's cost from the .yml of the chapter that ran it (this one, or ``pilot_of``)."""
    if not claims:
        run.partly(why)
    owner = pilot_of or run.notebook
    cost = load_spec(paths.NOTEBOOKS / f"{owner}.ipynb").cost.get(run.profile, {})
    spent = ""
    if cost.get("minutes"):
        how = "measured" if cost.get("measured") else "estimated"
        whose = f" ({owner} at {run.profile})" if pilot_of else ""
        spent = (f" The pilot{whose} took {cost['minutes']:g} minutes on the "
                 f"{cost.get('where', 'cpu')} ({how}).")
    for claim_id in claims:
        run.record(claim_id, None, f"no {run.profile} run: {why}{spent}")
    run.partly("the pilot above puts the effect beyond this profile: no sweep follows "
               "(the ledger says why)")
