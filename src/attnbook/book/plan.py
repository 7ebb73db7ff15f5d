"""What a profile costs, per chapter: ``python -m attnbook plan [NOTEBOOK...] --profile full``.

For each chapter (in book order) one line: where the profile is meant to run (``cpu``: here,
``gpu``: one GPU), the number of sweep configurations or models it trains (``units``), the
estimated minutes and floating-point operations, all from the ``cost`` section of the
chapter's ``.yml`` (see :mod:`attnbook.book.profiles`; ``unknown`` where it has none), and how
many results of that profile are already stored and current under ``data/results/`` (a run
computes only the others). A notebook stopped by its time budget in the last budgeted run
(``build/time-budget.json``) shows what it still lacks.
"""

import json

from .. import paths
from .store import stored_counts

__all__ = ["cost_table", "format_table"]

UNKNOWN = "unknown"


def _last_budget(profile: str) -> dict[str, str]:
    """Notebook -> what the last budgeted run of ``profile`` left missing, in words."""
    path = paths.BUILD / "time-budget.json"
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    out = {}
    for row in data.get("notebooks", []) if isinstance(data, dict) else []:
        if not isinstance(row, dict) or row.get("profile") != profile:
            continue
        if row.get("status") == "not started":
            out[row.get("notebook")] = "not started"
        elif row.get("status") == "partly run":
            out[row.get("notebook")] = "partly run: " + ", ".join(
                f"{m.get('sweep')} {m.get('missing')}/{m.get('configurations')} missing"
                for m in row.get("missing") or [] if isinstance(m, dict))
    return out


def cost_table(jobs) -> list[dict]:
    """One dict per job (:func:`attnbook.book.runner.plan`): notebook, profile, where, units,
    minutes, flop, measured, note, stored, last_budget."""
    if not jobs:
        return []
    profile = jobs[0].profile
    stored = {nb: n for (nb, _), n in stored_counts(profile=profile).items()}
    budget = _last_budget(profile)
    rows = []
    for job in jobs:
        cost = job.spec.cost.get(job.profile) or {}
        rows.append({"notebook": job.spec.stem, "profile": job.profile,
                     "where": cost.get("where", UNKNOWN), "units": cost.get("units"),
                     "minutes": cost.get("minutes"), "flop": cost.get("flop"),
                     "measured": bool(cost.get("measured", False)) if cost else None,
                     "note": cost.get("note", ""), "stored": stored.get(job.spec.stem, 0),
                     "last_budget": budget.get(job.spec.stem, "")})
    return rows


def _fmt(value, spec: str = "") -> str:
    return UNKNOWN if value is None else format(value, spec)


def format_table(rows: list[dict], profile: str) -> str:
    """The plan as text: one line per chapter, then the totals per device.

    >>> print(format_table([{"notebook": "a", "where": "gpu", "units": 30, "minutes": 60,
    ...     "flop": 5e17, "measured": False, "note": "", "stored": 3, "last_budget": ""}], "full"))
    ... # doctest: +NORMALIZE_WHITESPACE
    profile full: chapter | where | units | stored results | minutes | flop
      a | gpu | 30 | 3 | 60 (estimated) | 5e+17
    gpu: 1 chapters, 60 minutes known (1 hours); cpu: 0 chapters, 0 minutes known; unknown: 0
    """
    width = max([len(r["notebook"]) for r in rows] + [7])
    lines = [f"profile {profile}: {'chapter'.ljust(width)} | where | units | stored results | "
             f"minutes | flop"]
    for r in rows:
        minutes = _fmt(r["minutes"], "g")
        if r["minutes"] is not None:
            minutes += " (measured)" if r["measured"] else " (estimated)"
        line = (f"  {r['notebook'].ljust(width)} | {r['where']} | {_fmt(r['units'])} | "
                f"{r['stored']} | {minutes} | {_fmt(r['flop'], '.2g')}")
        if r["last_budget"]:
            line += f" | last budgeted run: {r['last_budget']}"
        if r["note"]:
            line += f" | {r['note']}"
        lines.append(line)
    totals = []
    for where in ("gpu", "cpu"):
        sub = [r for r in rows if r["where"] == where]
        known = sum(r["minutes"] for r in sub if r["minutes"] is not None)
        totals.append(f"{where}: {len(sub)} chapters, {known:g} minutes known"
                      + (f" ({known / 60:.3g} hours)" if where == "gpu" else ""))
    unknown = sum(r["where"] == UNKNOWN for r in rows)
    lines.append("; ".join(totals) + f"; unknown: {unknown}")
    return "\n".join(lines)
