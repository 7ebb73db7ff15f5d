"""When a claim's criterion was fixed, read from git, beside the runs it decides.

:func:`criterion_change` finds the last commit that changed the claim's ledger row (criterion,
thresholds) or the code that decides it (its registered function and the helpers it reads,
and for a claim decided from trained models or random draws the stability rule);
:func:`runs_of` reads when the committed runs behind its ledger entries were trained;
:func:`fixed_sentence` glues both into one phrase for a chapter's prose, or :data:`NO_HISTORY`
without git history.
"""

import csv
import hashlib
import io
from datetime import datetime
from functools import lru_cache
from pathlib import Path

from .. import paths
from ..criteria import criterion_code
from .claims import SAMPLED, rule_code
from .provenance import git
from .readers import loads

__all__ = ["NO_HISTORY", "criterion_change", "criterion_state", "fixed_sentence", "runs_of"]

NO_HISTORY = "the date of its last change is not known here (no git history in this copy)"
_PROFILES = ("cpu", "long", "full")  # profiles whose ledger entries are committed


def ledger_rows(text: str | None) -> dict[str, dict]:
    """A ledger CSV's text as claim id -> its row ({} for none)."""
    return {row.get("id"): row for row in csv.DictReader(io.StringIO(text or ""))}


def _row(text: str | None, claim_id: str) -> dict | None:
    return ledger_rows(text).get(claim_id)


_CRITERIA = "src/attnbook/criteria"  # the package whose code decides the verdicts
_RULE = "src/attnbook/book/claims.py"  # where the stability rule is written (claims.RULE)


def _paths(root: Path, claim_id: str) -> str | None:
    """The ledger CSV of ``claim_id``, relative to ``root``."""
    for path in sorted((root / "data" / "claims").glob("*.csv")):
        if _row(path.read_text(), claim_id) is not None:
            return f"data/claims/{path.name}"
    return None


def _working_sources(root: Path) -> dict[str, str]:
    """The criteria package's module texts in the working copy."""
    return {p.stem: p.read_text() for p in sorted((root / _CRITERIA).glob("*.py"))}


@lru_cache(maxsize=256)
def sources_at(root: Path, commit: str) -> dict[str, str | None]:
    """The criteria package's module texts at ``commit`` (a full sha: a commit never changes)."""
    names = (git("ls-tree", "--name-only", commit, f"{_CRITERIA}/", root=root) or "").split()
    return {Path(n).stem: git("show", f"{commit}:{n}", root=root) for n in names
            if n.endswith(".py")}


@lru_cache(maxsize=256)
def rule_at(root: Path, commit: str) -> str | None:
    """The text of the module holding the stability rule at ``commit`` (a full sha)."""
    return git("show", f"{commit}:{_RULE}", root=root)


CRITERION_PARTS = {"row": "its words and numbers", "code": "its code",
                   "rule": "the stability rule"}


def criterion_state(csv_text: str | None, sources: dict[str, str | None], claim_id: str,
                    rule_text: str | None = None) -> dict | None:
    """A fingerprint per part (:data:`CRITERION_PARTS`) of what decides ``claim_id`` in a
    ledger CSV's text, the criteria package's module texts (:func:`attnbook.criteria.
    criterion_code`: its function and the package's helpers it reads) and, for a claim decided
    from trained models or random draws, the stability rule in ``rule_text``
    (:func:`attnbook.book.claims.rule_code`); None where neither the CSV nor the code has it.

    >>> row = "id,criterion,thresholds\\nX-1,at most a,a=1\\n"
    >>> code = {"w": '@criterion("X-1")\\ndef x(v, *, a):\\n    "Doc."\\n    return v <= a\\n'}
    >>> criterion_state(row, code, "X-1") == criterion_state(
    ...     row, {"w": code["w"].replace('"Doc."', '"Other words."')}, "X-1")  # no change
    True
    >>> criterion_state(row, code, "X-1") == criterion_state(row.replace("a=1", "a=2"), code,
    ...                                                      "X-1")
    False
    """
    row, code = _row(csv_text, claim_id), criterion_code(claim_id, sources)
    if row is None and not code:
        return None
    words = [] if row is None else [row.get("criterion") or "", row.get("thresholds") or ""]
    rule = rule_code(rule_text) if row and row.get("evidence") in SAMPLED and rule_text else []
    return {part: hashlib.sha256("\n".join(texts).encode()).hexdigest()[:12]
            for part, texts in zip(CRITERION_PARTS, (words, code, rule), strict=True)}


def criterion_change(claim_id: str, root: Path | None = None) -> dict | None:
    """The last commit that changed what decides ``claim_id``: ``{"commit", "time", "date",
    "subject", "what"}`` (``what``: the :data:`CRITERION_PARTS` it changed, in words), with
    ``"uncommitted": True`` where the working copy differs; None without git history."""
    root = Path(root or paths.ROOT)
    csv_path = _paths(root, claim_id)
    if csv_path is None:
        return None
    log = git("log", "--no-merges", "--format=%H%x09%P%x09%cI%x09%s", "--", csv_path,
              _CRITERIA, _RULE, root=root)
    if log is None:
        return None
    cache: dict[str, dict | None] = {}

    def state(commit: str) -> dict | None:
        if commit not in cache:
            cache[commit] = criterion_state(git("show", f"{commit}:{csv_path}", root=root),
                                            sources_at(root, commit), claim_id,
                                            rule_at(root, commit))
        return cache[commit]

    found = None
    for line in log.splitlines():
        commit, parents, time, subject = (line.split("\t", 3) + ["", "", ""])[:4]
        mine = state(commit)
        if mine is None:
            continue
        before = state(parents.split()[0]) if parents.split() else None
        if before != mine:
            what = [words for part, words in CRITERION_PARTS.items()
                    if before is None or before[part] != mine[part]]
            found = {"commit": commit[:7], "time": time, "date": time[:10], "subject": subject,
                     "what": ", ".join(what)}
            break
    if found is None:
        return None
    here = criterion_state(_read(root / csv_path), _working_sources(root), claim_id,
                           _read(root / _RULE))
    head = (git("rev-parse", "HEAD", root=root) or "").strip()
    if head and here != state(head):
        found["uncommitted"] = True
    return found


def _read(path: Path) -> str | None:
    return path.read_text() if path.exists() else None


def _time(text) -> datetime | None:
    try:
        return datetime.fromisoformat(str(text))
    except (TypeError, ValueError):
        return None


def runs_of(claim_id: str, root: Path | None = None) -> list[dict]:
    """Per profile with committed ledger entries of ``claim_id``: ``{"profile", "status",
    "first", "last"}``, when the models behind them were trained (``computed_by``, else the
    entry's run); ``status`` is ``not run`` where every part is."""
    root = Path(root or paths.ROOT)
    out = []
    for profile in _PROFILES:
        times, statuses = [], []
        for f in sorted((root / "data" / "claims" / "results" / profile).glob(f"{claim_id}*.json")):
            if f.stem != claim_id and not f.stem.startswith(f"{claim_id}__"):
                continue
            try:
                entry = loads(f.read_bytes())
            except (OSError, ValueError):
                continue
            if not isinstance(entry, dict):
                continue
            run = entry.get("run") or {}
            sources = run.get("computed_by") or [run]
            times += [t for t in (_time(s.get("time")) for s in sources) if t is not None]
            statuses.append(entry.get("status", ""))
        if times:
            out.append({"profile": profile, "first": min(times), "last": max(times),
                        "status": "not run" if all(s == "not run" for s in statuses)
                        else "run"})
    return out


def _when(run: dict) -> str:
    first, last = run["first"].date().isoformat(), run["last"].date().isoformat()
    span = first if first == last else f"{first} to {last}"
    return f"pilot only, {span}" if run["status"] == "not run" else span


def fixed_sentence(claim_id: str, root: Path | None = None) -> str:
    """When ``claim_id``'s criterion was last changed, among the runs it decides."""
    change = criterion_change(claim_id, root)
    if change is None:
        return NO_HISTORY
    text = f"last changed on {change['date']} (commit {change['commit']}: {change['what']})"
    if change.get("uncommitted"):
        text += ", and changed since in this working copy (not committed)"
    runs = runs_of(claim_id, root)
    if not runs:
        return text + "; no committed run decides it yet"
    at = _time(change["time"])
    if at is None:
        return text
    sides = {"after": [r for r in runs if r["last"] < at],  # the change came after these
             "before": [r for r in runs if r["first"] >= at],
             "during": [r for r in runs if r["first"] < at <= r["last"]]}

    def named(rs):
        return " and ".join(f"the {r['profile']} run ({_when(r)})" for r in rs)

    return f"{text}, " + " and ".join(f"{side} {named(rs)}" for side, rs in sides.items() if rs)
