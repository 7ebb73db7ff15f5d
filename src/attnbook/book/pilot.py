"""A chapter's pilot section, written once: everything about a pilot that knows profiles.

A pilot trains one seed of a chapter's configurations at several budgets (optimizer steps),
each with its own schedule, to size the chapter's ``long`` run. What a pilot measures and
where its statistic heads is the chapter's science (:mod:`attnbook.engines.pilots`: its
budgets, its trend); what is the same in every chapter is here:

* :func:`at_budgets`: a chapter's config builder applied at each budget, the longest first
  (two workers then finish together);
* :func:`units`: the pilot's stored units as a :class:`Pilot`: trained by this run (the
  chapter's ``pilot`` parameter, true at ``long``) or, at any other profile, what the ``long``
  profile's pilot has stored so far (committed results, nothing computed), with a phrase
  saying which; :func:`parameters`, the chapter's parameters they were trained with;
* :func:`across`: a chapter's own statistic read from each profile that has run (complete
  and current), one table with a ``profile`` column, so that those profiles sit on the
  pilot's axes; :func:`mark` draws them, one marker per profile (:data:`MARKERS`);
* :func:`grows`: the standard figure, "how the effect grows with training": one line per
  group of the pilot against the tokens it trained on, a gap whose sign decides the claim,
  zero in the middle, the profiles that have run as markers; :func:`show` saves a chapter's
  pilot figure with its plotted data, or says the pilot has stored nothing yet;
* :func:`standing`, :func:`count` and :func:`describe`: where the gaps of one budget stand,
  what a pilot stored and how far it trained, in words;
* :func:`stop`: the one way a chapter ends after its pilot: its claims recorded ``not run``
  with what the pilot measured and what it cost (when the pilot puts the effect out of
  reach), or only that the long sweep is still to be sized; nothing after it runs.
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

__all__ = ["Pilot", "at_budgets", "units", "parameters", "across", "MARKERS", "mark", "grows",
           "show", "standing", "count", "reading", "stop", "NOTHING_STORED", "SIZED_LATER"]

NOTHING_STORED = "*The `long` profile's pilot has stored nothing yet.*"
SIZED_LATER = "the long sweep is sized from the pilot above and is not defined yet"
MARKERS = {"ci": "v", "cpu": "s", "long": "D", "full": "*"}  # a profile's points


def at_budgets(build: Callable[..., list], budgets: Iterable[int]) -> list:
    """``build(steps=b)`` for each budget ``b``, the longest first, in one list: a chapter's
    config builder (its sweep's, with the pilot's sizes and one seed bound) at each budget,
    each with its own schedule, as a run of that length would be.

    >>> at_budgets(lambda steps: [("a", steps), ("b", steps)], [4, 8])
    [('a', 8), ('b', 8), ('a', 4), ('b', 4)]
    """
    return [c for steps in sorted(budgets, reverse=True) for c in build(steps=steps)]


@dataclass
class Pilot:
    """A chapter's pilot as this run sees it: ``runs``, its stored units (one row each), and
    ``source``, where they come from, in words."""

    runs: pd.DataFrame
    source: str

    def __len__(self) -> int:
        return len(self.runs)


def units(run, train: bool, compute: Callable, unit: str = "results") -> Pilot:
    """The chapter's pilot: ``compute(sweep)`` (it trains the pilot's configurations in
    ``sweep``, the run's sweep ``pilot``, and returns their table) when this run trains it
    (``train``: the chapter's ``pilot`` parameter), else what the ``long`` profile's pilot has
    stored so far (``unit`` names what is counted: nets, models, budgets)."""
    if train:
        return Pilot(compute(run.sweep("pilot")), f"this run ({run.profile})")
    runs = run.stored_sweep("pilot", "long")
    return Pilot(runs, f"the long profile's pilot, {len(runs)} {unit} stored so far")


def parameters(run, train: bool, namespace: dict) -> dict:
    """The chapter's parameters its pilot is trained with: this run's (read from
    ``namespace``, the notebook's globals, by the names of its parameters cell) when it trains
    the pilot, else the ``long`` profile's, to rebuild the grid of the pilot it stored."""
    if not train:
        return run.profile_parameters("long")
    return {k: namespace.get(k, v) for k, v in run.profile_parameters(run.profile).items()}


def across(run, name: str, read: Callable, columns: Sequence[str] = ()) -> pd.DataFrame:
    """``read(results, params)`` of what sweep ``name`` has stored at each profile of the
    chapter, smallest first, whose run is complete and current (every claim has a current
    verdict there, as :mod:`attnbook.book.shown` asks; committed results, nothing computed),
    with that profile's parameters: one table with a ``profile`` column. A profile still
    running, stopped after its pilot, or whose reading is empty is left out; with none left
    the table is empty with ``columns`` and ``profile``."""
    path = paths.NOTEBOOKS / f"{run.notebook}.ipynb"
    spec = load_spec(path)
    table = _claims.status_table()
    tables = []
    for profile in _claims.PROFILES:
        if not spec.has_profile(profile) or completeness(run.notebook, path, profile, table, []):
            continue
        results = run.stored_sweep(name, profile)
        read_there = read(results, {**spec.defaults, **spec.parameters(profile)}) \
            if len(results) else None
        if read_there is not None and len(read_there):
            tables.append(read_there.assign(profile=profile))
    return (pd.concat(tables, ignore_index=True) if tables
            else pd.DataFrame(columns=[*columns, "profile"]))


def mark(ax, table: pd.DataFrame, *, x: str, y: str, colour: Callable, filled=None,
         label=None) -> int:
    """Draw each row of ``table`` (with a ``profile`` column) at (``x``, ``y``) as its
    profile's marker (:data:`MARKERS`) in ``colour(row)``, hollow where ``filled(row)`` is
    false; each profile is named once at each ``x``, beside its highest point there, by
    ``label(row)`` (default: the profile), so that points stacked at one budget do not print
    over each other. Rows whose ``y`` is not finite are left out. Returns how many were
    drawn."""
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
          y: str = "gap", colour_key: Callable | None = None):
    """The standard pilot figure: per panel (a group of ``panels`` columns; one panel without
    them), one line per group of ``line`` columns of ``gaps`` (the pilot's gap ``y`` against
    budget ``x``, log scale; the mean over its seeds, bars of one seed standard deviation
    where there are several) labelled ``label(key)``, coloured by its ``colour_by`` value (one
    colour per value), and ``profiles`` (:func:`across`, the same gap at the profiles that
    have run) drawn by :func:`mark` in the colour of ``colour_key(row)`` (default: the row's
    ``colour_by``; grey where the pilot has no such line). Zero sits in the middle: the gap's
    sign is what a claim reads, each side labelled by ``sides`` beside the panel, clear of the
    points and their profiles' names. ``size``: one panel's, in inches. Returns the
    figure."""
    parts = list(gaps.groupby(list(panels))) if panels else [((), gaps)]
    fig, axes = plt.subplots(1, len(parts), figsize=(size[0] * len(parts), size[1]),
                             squeeze=False, sharey=True)
    top = 1.15 * max(pd.concat([gaps[y], profiles[y]]).abs().max(), 1e-3)
    key = colour_key or (lambda r: r[colour_by])
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
        mark(ax, shown, x=x, y=y, colour=lambda r, c=colour: c.get(key(r), "0.45"))
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
         data, shown=(), name: str | None = None, ready: bool | None = None) -> bool:
    """A chapter's pilot figure: ``draw()`` returns it, saved as ``name`` (default:
    ``<chapter>_pilot``) with its
    ``caption`` (where the pilot comes from is said after "How the effect grows with
    training"), the ``claims`` it sizes and its plotted ``data`` (a table, or a dict of tables
    one per panel, each with a ``profile`` column); then each table of ``shown`` (the
    profiles that have run) is displayed. Without any stored unit (or, with ``ready`` false,
    without what the figure draws: a budget whose every net is stored), says that the
    ``long`` profile's pilot has stored nothing yet. Returns whether the figure was drawn."""
    if not len(pilot) or ready is False:
        display(Markdown(NOTHING_STORED))
        return False
    run.savefig(draw(), name or f"{run.notebook}_pilot", source=f"pilot: {pilot.source}",
                caption=caption, claims=list(claims), data=data() if callable(data) else data)
    for table in shown:
        display(Table(table.round(4)))
    return True


def standing(gaps: pd.DataFrame, what: str = "width") -> str:
    """Where the deeper net stands across the gaps (deeper - shallower) of one budget: "behind
    at every width" (every gap above 0), "ahead at every width" (every gap below 0), else
    which sides occur (a gap of exactly 0 is level); ``what`` names a group.

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
    """How many units a pilot stored, and of how many seeds.

    >>> count(pd.DataFrame({"seed": [0, 0, 0]}))
    '3 nets of one seed'
    """
    n = runs["seed"].nunique() if "seed" in runs.columns else 1
    return f"{len(runs)} {unit} of {'one seed' if n == 1 else f'{n} seeds'}"


def reading(runs: pd.DataFrame, gaps: pd.DataFrame) -> str:
    """A pilot of gaps deeper - shallower in words: what it stored (:func:`count`), how far it
    trained, and where the deeper net stands (:func:`standing`) at its largest budget.

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
    """End the chapter here at this profile, recorded as ``partly run``: what ran is stored,
    nothing after this call runs and no verdict is recorded.

    Without ``claims``, ``why`` says what is still to come (by default: the long sweep, sized
    from the pilot). With ``claims``, the pilot puts the effect beyond this profile: each is
    recorded ``not run`` here, its measured text ``why`` (what the pilot measured and what a
    run would need) and the pilot's cost from the .yml of the chapter that ran it (this one,
    or ``pilot_of``: another chapter's pilot at this profile, which this chapter reads), so
    that the ledger and the status page say why this profile has no verdict."""
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
