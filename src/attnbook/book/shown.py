"""Which profile a chapter of the built book shows: the largest whose results are complete.

``python -m attnbook run --profile largest`` (what ``make book`` runs) executes each chapter at
the largest profile, ``full`` then ``long``, whose results for that chapter are **complete and
current**, and at ``cpu`` where none is:

* the chapter defines the profile, and records at least one claim;
* every claim the chapter records has a ledger entry at that profile with a verdict
  (reproduced, partly reproduced, not reproduced, not testable, or partly run: parts that
  cannot run offline),
  none of them stale (code or criterion changed since), damaged, or recorded from a tree with
  uncommitted changes;
* no stored result of the chapter at that profile is damaged or stale.

A chapter shown at ``long`` or ``full`` runs with ``--cache-only`` whatever the command says:
its results are drawn, never computed (hours on a CPU). At ``cpu`` it runs as the command
says. The chapter's first output names the profile shown, where its recorded results were
computed (the ledger entries' devices) and, for each larger profile, why it is not shown; a
profile none of whose claims has run says what it would take, from its ``cost`` entry
(:mod:`attnbook.book.sites`). :func:`attnbook.book.notebook.start` reads it from
``ATTNBOOK_SHOWN``.
"""

from pathlib import Path

from .claims import notebook_claims, status_table
from .sites import not_run_text, sites_text
from .store import stored_results

__all__ = ["LARGEST", "CANDIDATES", "FALLBACK", "VERDICTS", "completeness", "choose"]

LARGEST = "largest"  # the run command's profile that picks per chapter
CANDIDATES = ("full", "long")  # tried in this order
FALLBACK = "cpu"
VERDICTS = ("reproduced", "fragile", "not reproduced", "not testable", "partly run",
            "partly reproduced")


def completeness(stem: str, path: Path, profile: str, table, stored: list[dict]) -> str:
    """Why the chapter's results at ``profile`` are not complete and current ('' when they
    are). ``table``: :func:`attnbook.book.claims.status_table` of every profile; ``stored``:
    :func:`attnbook.book.store.stored_results` of that profile."""
    ids = notebook_claims(path)
    if not ids:
        return "the chapter records no claim"
    rows = table[(table["profile"] == profile) & table["id"].isin(ids)]
    missing = [i for i in ids if i not in set(rows["id"])]
    unrun = sorted(set(rows.loc[~rows["status"].isin(VERDICTS), "id"]) | set(missing))
    if unrun:
        return f"{len(unrun)} of {len(ids)} claims not run ({', '.join(unrun[:4])}" \
               + (", ..." if len(unrun) > 4 else "") + ")"
    for column, what in (("damaged", "damaged"), ("stale", "stale (code or criterion changed "
                                                           "since)"),
                         ("dirty", "recorded from uncommitted changes")):
        bad = sorted(set(rows.loc[rows[column].astype(bool), "id"]))
        if bad:
            return f"{len(bad)} of {len(ids)} ledger entries {what} ({', '.join(bad[:4])})"
    bad = [r for r in stored if r["notebook"] == stem and (r["problem"] or r["changed"])]
    if bad:
        return f"{len(bad)} stored results damaged or stale"
    return ""


def _devices(table, ids, profile) -> list[str]:
    """The recorded devices of the chapter's claims (``ids``) that have a verdict at
    ``profile``, one per claim."""
    if "device" not in table:
        return []
    rows = table[(table["profile"] == profile) & table["id"].isin(ids)
                 & table["status"].isin(VERDICTS)]
    return [d for d in rows["device"] if d]


def choose(specs) -> dict[str, dict]:
    """stem -> {"profile": the profile to show, "skipped": {larger profile: why not},
    "where": the machines that computed its recorded results} for each
    :class:`attnbook.book.profiles.NotebookSpec` in ``specs``. A larger profile none of whose
    claims has run says what it would take (its ``cost`` entry: :func:`.sites.not_run_text`)."""
    specs = list(specs)
    table = status_table()
    stored = {p: list(stored_results(profile=p)) for p in CANDIDATES}
    out = {}
    for spec in specs:
        skipped = {}
        chosen = FALLBACK
        ids = notebook_claims(spec.path)
        costs = getattr(spec, "cost", None) or {}
        for p in CANDIDATES:
            if not spec.has_profile(p):
                skipped[p] = "not defined for this chapter"
                continue
            why = completeness(spec.stem, spec.path, p, table, stored[p])
            if not why:
                chosen = p
                break
            ran = table[(table["profile"] == p) & table["id"].isin(ids)
                        & table["status"].isin(VERDICTS)]
            values = getattr(spec, "profiles", None)
            values = (values.get(p) if isinstance(values, dict) else None) or {}
            pilot = values.get("run_main") is False
            if ids and ran.empty and pilot:
                cost = not_run_text(costs.get(p)).removeprefix("not run: ")
                skipped[p] = f"runs only its pilot ({cost}), no sweep and no verdict ({why})"
            elif ids and ran.empty:
                skipped[p] = f"{not_run_text(costs.get(p))} ({why})"
            else:
                where = sites_text(_devices(table, ids, p))
                skipped[p] = why + (f"; computed on {where}" if where else "")
        out[spec.stem] = {"profile": chosen, "skipped": skipped,
                          "where": sites_text(_devices(table, ids, chosen))}
    return out
