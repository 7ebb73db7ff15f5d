"""What a profile costs, per chapter: ``python -m attnbook plan [NOTEBOOK...] --profile full``,
from each ``.yml``'s ``cost`` section; and :func:`check_costs`, which refuses a ``-p`` run whose
``estimate`` exceeds the machine (CONTRIBUTING.md, *Running notebooks*). The estimates are
orders of magnitude, not measurements.
"""

import math
import os
import sys

from .. import paths
from .checkpoints import in_flight
from .profiles import ExpressionError, evaluate_expression
from .readers import loads
from .sites import counted, minutes_text
from .store import stored_counts

__all__ = ["cost_table", "format_table", "estimate", "check_costs", "machine_memory_gb",
           "MINUTES_PROFILES", "MAX_MINUTES"]

MINUTES_PROFILES = ("ci", "cpu")  # profiles meant to take seconds or minutes
MAX_MINUTES = 60.0  # what such a profile may be stretched to with -p before it is refused

UNKNOWN = "unknown"


def _last_budget(profile: str) -> dict[str, str]:
    """Notebook -> what the last budgeted run of ``profile`` left missing, in words."""
    path = paths.BUILD / "time-budget.json"
    try:
        data = loads(path.read_bytes())
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as e:
        print(f"attnbook: warning: {path}: left out, cannot be read as JSON "
              f"({type(e).__name__}: {str(e).splitlines()[0][:120] if str(e) else ''})",
              file=sys.stderr)
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
    minutes, flop, measured, note, stored, last_budget, in_flight (the units stopped mid-way,
    :func:`attnbook.book.checkpoints.in_flight`)."""
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
                     "last_budget": budget.get(job.spec.stem, ""),
                     "in_flight": in_flight(job.spec.stem, job.profile)})
    return rows


def _fmt(value, spec: str = "") -> str:
    return UNKNOWN if value is None else format(value, spec)


def _flight(unit: dict) -> str:
    """One unit in flight in words.

    >>> _flight({"sweep": "s", "unit": "e287c0feaa8d5f77", "step": 2492,
    ...          "saved": "2026-12-04T13:08:52Z", "sittings": 1, "s": 2706.4})
    's/e287c0fe at step 2,492 (saved 2026-12-04T13:08:52Z, 45 minutes in 1 sitting)'
    >>> _flight({"sweep": "s", "unit": "e287c0feaa8d5f77", "step": 29000,
    ...          "saved": "2026-12-09T10:00:00Z", "sittings": 9, "s": 432000}).split(", ")[-1]
    '120 hours in 9 sittings)'
    >>> _flight({"sweep": "s", "unit": "e287c0feaa8d5f77", "error": "EOFError"})
    's/e287c0fe unreadable (EOFError)'
    """
    name = f"{unit['sweep']}/{unit['unit'][:8]}"
    if "error" in unit:
        return f"{name} unreadable ({unit['error']})"
    return (f"{name} at step {unit['step']:,} (saved {unit['saved']}, "
            f"{minutes_text(unit['s'] / 60)} in {counted(unit['sittings'], 'sitting')})")


def format_table(rows: list[dict], profile: str) -> str:
    """The plan as text: one line per chapter, then the totals per device.

    >>> print(format_table([{"notebook": "a", "where": "gpu", "units": 30, "minutes": 60,
    ...     "flop": 5e17, "measured": False, "note": "", "stored": 3, "last_budget": ""}], "full"))
    ... # doctest: +NORMALIZE_WHITESPACE
    profile full: chapter | where | units | stored results | minutes | flop
      a | gpu | 30 | 3 | 60 (estimated) | 5e+17
    gpu: 1 chapter, 60 minutes known (1 hour); cpu: 0 chapters, 0 minutes known; unknown: 0
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
        if r.get("in_flight"):
            line += " | in flight: " + "; ".join(_flight(u) for u in r["in_flight"])
        if r["note"]:
            line += f" | {r['note']}"
        lines.append(line)
    totals = []
    for where in ("gpu", "cpu"):
        sub = [r for r in rows if r["where"] == where]
        known = sum(r["minutes"] for r in sub if r["minutes"] is not None)
        hours = counted(float(f"{known / 60:.3g}"), "hour")
        totals.append(f"{where}: {counted(len(sub), 'chapter')}, {known:g} minutes known"
                      + (f" ({hours})" if where == "gpu" else ""))
    unknown = sum(r["where"] == UNKNOWN for r in rows)
    lines.append("; ".join(totals) + f"; unknown: {unknown}")
    return "\n".join(lines)


def _estimate(spec, key: str, params: dict) -> float | None:
    """The .yml's estimate ``key`` at ``params`` (None: it has none) as a finite number, else
    :class:`ExpressionError`: an estimate that cannot be read never switches the check off."""
    expr = spec.estimate.get(key)
    if not expr:
        return None
    where = f"{spec.path.with_suffix('.yml')}: estimate {key}"
    value = evaluate_expression(expr, {**spec.defaults, **params}, where)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        try:
            number = float(value)
        except OverflowError:  # an int beyond a float
            number = math.inf
        if math.isfinite(number):
            return number
    raise ExpressionError(f"{where} {expr!r}"[:300]
                          + f" gives {str(value)[:40]!r}: allowed a finite number")


def _work(spec, params: dict) -> float | None:
    work = _estimate(spec, "work", params)
    return work if work and work > 0 else None


def estimate(job, where: str = "cpu") -> dict:
    """What ``job`` is estimated to cost on a ``where`` (``cpu`` or ``gpu``) machine:
    ``{"minutes", "memory_gb", "basis"}``, each None where the .yml cannot tell."""
    spec = job.spec
    out = {"minutes": None, "memory_gb": _estimate(spec, "memory_gb", job.parameters),
           "basis": ""}
    work = _work(spec, job.parameters)
    for ref in dict.fromkeys([job.profile, "cpu", "long", "full", "ci"]):
        cost = spec.cost.get(ref) or {}
        if cost.get("where") != where or not cost.get("minutes") or work is None:
            continue
        ref_work = _work(spec, spec.parameters(ref))
        if ref_work:
            out["minutes"] = cost["minutes"] * work / ref_work
            out["basis"] = f"profile {ref}'s {cost['minutes']:g} minutes"
            break
    return out


def machine_memory_gb(device: str = "cpu") -> float | None:
    """The memory a run may use: the GPU's on ``cuda``, else the RAM (None if unknown)."""
    if device == "cuda":
        import torch

        return torch.cuda.get_device_properties(0).total_memory / 1e9
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 1e9
    except (ValueError, OSError, AttributeError):
        return None


def check_costs(jobs, *, device: str = "cpu", budgeted: bool = False,
                memory_gb: float | None = None) -> None:
    """Refuse (:class:`~attnbook.book.runner.UsageError`, one line) the first job with changed
    parameters whose estimate exceeds the machine's memory, or an hour at a profile meant to
    take minutes (unless ``budgeted``: a time budget stops it in time)."""
    from .runner import UsageError  # the runner loads torch: only where a job is refused

    memory_gb = machine_memory_gb(device) if memory_gb is None else memory_gb
    where = "gpu" if device == "cuda" else "cpu"
    for job in jobs:
        if not job.overrides:  # a profile as defined: its cost is the .yml's own promise
            continue
        est = estimate(job, where)
        changed = ", ".join(f"{k} {v!r}"[:40] for k, v in sorted(job.overrides.items()))
        if est["memory_gb"] is not None and memory_gb and est["memory_gb"] > memory_gb:
            raise UsageError(
                f"{job.spec.stem}: at {changed} the run needs about {est['memory_gb']:.3g} GB "
                f"(estimated from {job.spec.stem}.yml), more than this machine's "
                f"{memory_gb:.3g} GB: choose smaller values, or add --no-cost-check to run it "
                "anyway")
        if not budgeted and job.profile in MINUTES_PROFILES and est["minutes"] is not None \
                and est["minutes"] > MAX_MINUTES:
            raise UsageError(
                f"{job.spec.stem}: at {changed} the run takes about {minutes_text(est['minutes'])} "
                f"on this {where} (estimated from {est['basis']} and {job.spec.stem}.yml), "
                f"and profile {job.profile} is meant to take minutes: choose smaller values, "
                "give a --time-budget, or add --no-cost-check to run it anyway")
