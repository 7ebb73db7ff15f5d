"""Which profile a chapter of the built book shows: the largest, ``full`` then ``long``, whose
results are complete and current, else ``cpu`` (``--profile largest``: ``make book``).

Complete and current: the chapter records a claim, every claim it records has a verdict at that
profile, none stale, damaged or from uncommitted changes, and no stored result of it there is
damaged or stale. A chapter shown at ``long`` or ``full`` runs with ``--cache-only``.
:func:`attnbook.book.notebook.start` reads the choice from ``ATTNBOOK_SHOWN``.
"""

from pathlib import Path

from .claims import STATUSES, UNRUN, notebook_claims, status_table
from .sites import not_run_text, sites_text
from .store import stored_results

__all__ = ["LARGEST", "CANDIDATES", "FALLBACK", "VERDICTS", "completeness", "choose"]

LARGEST = "largest"  # the run command's profile that picks per chapter
CANDIDATES = ("full", "long")  # tried in this order
FALLBACK = "cpu"
VERDICTS = tuple(s for s in STATUSES if s not in UNRUN)  # a claim that ran


def completeness(stem: str, path: Path, profile: str, table, stored: list[dict]) -> str:
    """Why the chapter's results at ``profile`` are not complete and current ('' when they
    are). ``table``: :func:`attnbook.book.claims.status_table` of every profile; ``stored``:
    :func:`attnbook.book.store.stored_results` of that profile."""
    ids = notebook_claims(path)
    if not ids:
        return "the chapter records no claim"
    rows = table[(table["profile"] == profile) & table["id"].isin(ids)]
    unrun = sorted(set(rows.loc[~rows["status"].isin(VERDICTS), "id"])
                   | {i for i in ids if i not in set(rows["id"])})
    if unrun:
        return f"{len(unrun)} of {len(ids)} claims not run ({', '.join(unrun[:4])}" \
               + (", ..." if len(unrun) > 4 else "") + ")"
    for column, what in (("damaged", "damaged"),
                         ("stale", "stale (code, criterion or profile values changed since)"),
                         ("dirty", "recorded from uncommitted changes")):
        bad = sorted(set(rows.loc[rows[column].astype(bool), "id"]))
        if bad:
            why = ""
            if column == "stale":  # what changed, once per distinct reason
                reasons = dict.fromkeys(rows.loc[rows[column].astype(bool), column])
                why = ": " + "; ".join(list(reasons)[:2]) + ("; ..." if len(reasons) > 2 else "")
            return f"{len(bad)} of {len(ids)} ledger entries {what} ({', '.join(bad[:4])}{why})"
    bad = [r for r in stored if r["notebook"] == stem and (r["problem"] or r["changed"])]
    return f"{len(bad)} stored results damaged or stale" if bad else ""


def choose(specs, excluded: dict | None = None) -> dict[str, dict]:
    """stem -> {"profile": the profile to show, "skipped": {larger profile: why not},
    "where": the machines that computed its recorded results} for each
    :class:`attnbook.book.profiles.NotebookSpec` in ``specs``. A larger profile none of whose
    claims has run says what it would take (:func:`.sites.not_run_text`). ``excluded``: stem ->
    {profile: why}, profiles a run has found incomplete (:func:`attnbook.book.runner.execute`)."""
    table = status_table()
    stored = {p: list(stored_results(profile=p)) for p in CANDIDATES}
    out = {}
    for spec in specs:
        skipped, chosen = {}, FALLBACK
        ids = notebook_claims(spec.path)
        costs = getattr(spec, "cost", None) or {}
        for p in CANDIDATES:
            if p in (excluded or {}).get(spec.stem, {}):
                skipped[p] = excluded[spec.stem][p]
                continue
            if not spec.has_profile(p):
                skipped[p] = "not defined for this chapter"
                continue
            why = completeness(spec.stem, spec.path, p, table, stored[p])
            if not why:
                chosen = p
                break
            ran = _ran(table, ids, p)
            values = spec.profiles.get(p) if isinstance(spec.profiles, dict) else None
            if ids and ran.empty and (values or {}).get("run_main") is False:
                cost = not_run_text(costs.get(p)).removeprefix("not run: ")
                what = "runs only its pilot" if values.get("pilot") else "trains nothing"
                skipped[p] = f"{what} ({cost}), no sweep and no verdict ({why})"
            elif ids and ran.empty:
                skipped[p] = f"{not_run_text(costs.get(p))} ({why})"
            else:
                where = _where(ran)
                skipped[p] = why + (f"; computed on {where}" if where else "")
        out[spec.stem] = {"profile": chosen, "skipped": skipped,
                          "where": _where(_ran(table, ids, chosen))}
    return out


def _ran(table, ids, profile):
    """The rows of the claims ``ids`` with a verdict at ``profile``."""
    return table[(table["profile"] == profile) & table["id"].isin(ids)
                 & table["status"].isin(VERDICTS)]


def _where(rows) -> str:
    """The machines that computed ``rows`` (one recorded device per claim)."""
    return sites_text([d for d in rows["device"] if d]) if "device" in rows else ""
