"""The claims ledger: each paper's claims beside what this book measured, per profile.

The paper side is ``data/claims/<work>.csv``; the measured side one JSON per claim (and part)
and profile under ``data/claims/results/<profile>/``, written by :func:`record` with the run
that produced it and sealed by :func:`entry_sha`. An entry is stale when its code, the
criterion that decided it (:func:`criterion_sha`) or its profile's parameter values
(:func:`~attnbook.book.profiles.changed_parameters`: the values the entry recorded, or for an
older entry those read from git at its run's commit) have changed since, and damaged when it
does not parse or match its hash (reported for its own claim alone). The stability rule
(:func:`stability`, :data:`MIN_SEEDS`, :data:`FRAGILE`) is as CONTRIBUTING.md says.
"""

import csv
import hashlib
import re
from functools import lru_cache
from pathlib import Path

import pandas as pd

from .. import criteria, paths
from ..errors import AttnbookError
from .profiles import PROFILES, changed_parameters
from .provenance import changed_modules, code_fingerprint
from .readers import loads, notebook_cells
from .store import atomic_write, canonical_sha256, dumps, hash_matches, jsonable
from .text import clip

__all__ = ["EVIDENCE", "FRAGILE", "MIN_SEEDS", "PARTLY_REPRODUCED", "PROFILES", "STATUSES",
           "TYPES", "chapter_claims", "check_claim_id", "check_entry", "combined_status",
           "criterion_sha", "damaged_entries", "entry_sha", "load_ledger", "notebook_claims",
           "parts_count", "record", "recorded_ids", "RULE", "rule_code", "SAMPLED",
           "sealed_criterion", "seed_rule", "short_of_seeds", "shown_profiles", "stability",
           "stability_text", "stale_modules", "status_table", "status_word", "UNRUN",
           "verdict_line"]

STATUSES = ("reproduced", "fragile", "not reproduced", "not testable", "partly run",
            "partly reproduced", "not run", "no chapter yet")
UNRUN = ("not run", "no chapter yet")  # statuses of a claim with no verdict
PARTLY_REPRODUCED = "partly reproduced"  # some parts reproduced, others not (or not testable)
NOT_TESTABLE = "not testable"  # a verdict: the measurement does not meet the criterion's premise
FRAGILE = "fragile"  # a "reproduced" that a resample of its evidence overturns
MIN_SEEDS = 3  # a verdict from trained models needs at least this many seeds
LEDGER_COLUMNS = ["id", "kind", "type", "source", "statement", "paper_value", "criterion",
                  "thresholds", "evidence"]
# what a claim is decided from: the stability rule applies to the first two (SAMPLED)
EVIDENCE = ("trained models", "random draws", "computation")
SAMPLED = EVIDENCE[:2]
# the stability rule's definitions in this module: part of what decides a SAMPLED claim
RULE = ("MIN_SEEDS", "FRAGILE", "NOT_TESTABLE", "seed_rule", "stability", "status_word")
CRITERION_CHANGED = "(criterion changed since: its words, numbers, code or stability rule)"
TYPES = ("effect", "consistency")  # the paper's finding (could fail at our scale) | a proven bound


def _stamp(claims_dir: Path) -> tuple:
    """What the cached ledger depends on: each CSV's name, modification time and size."""
    return tuple((p.name, p.stat().st_mtime_ns, p.stat().st_size)
                 for p in sorted(claims_dir.glob("*.csv")))


def _check_csv(path: Path) -> None:
    """Raise one line naming the file and line of a ledger CSV's first malformed record."""

    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise AttnbookError(f"{path}: cannot be read as UTF-8 text ({type(e).__name__})") from None
    reader = csv.reader(text.splitlines(keepends=True), strict=True)
    start, header = 1, None
    try:
        for row in reader:
            if row and header is None:
                header = row
            elif row and len(row) != len(header):
                raise AttnbookError(f"{path}: line {start}: {len(row)} fields where the header "
                                    f"has {len(header)} (a comma outside quotes?)")
            start = reader.line_num + 1
    except csv.Error as e:
        why = ("a quoted field opened here is never closed" if "end of data" in str(e)
               else f"malformed ({e})")
        raise AttnbookError(f"{path}: line {start}: {why}") from None


@lru_cache(maxsize=4)
def _load_ledger(claims_dir: Path, stamp: tuple = ()) -> pd.DataFrame:
    frames = []
    for path in sorted(claims_dir.glob("*.csv")):
        _check_csv(path)
        try:
            df = pd.read_csv(path, dtype=str, keep_default_na=False)
        except (ValueError, pd.errors.ParserError) as e:
            raise AttnbookError(f"{path}: cannot be read as CSV "
                                f"({str(e).strip().splitlines()[-1][:120]})") from None
        if list(df.columns) != LEDGER_COLUMNS:
            raise AttnbookError(f"{path}: columns must be {LEDGER_COLUMNS}, got {list(df.columns)}")
        frames.append(df.assign(work=path.stem))
    if not frames:
        raise AttnbookError(f"no ledger files (*.csv) in {claims_dir}")
    ledger = pd.concat(frames, ignore_index=True)
    for column, allowed in (("type", TYPES), ("evidence", EVIDENCE)):
        bad = ledger.loc[~ledger[column].isin(allowed), "id"].tolist()
        if bad:
            raise AttnbookError(f"claims {bad}: column '{column}' must be one of "
                                f"{', '.join(allowed)}")
    dup = ledger["id"][ledger["id"].duplicated()].tolist()
    if dup:
        raise AttnbookError(f"claim ids listed twice in the ledger: {dup}")
    return ledger


def load_ledger(claims_dir: Path | None = None) -> pd.DataFrame:
    """All claims of all works: the :data:`LEDGER_COLUMNS` and ``work``."""
    claims_dir = Path(claims_dir or paths.CLAIMS)
    return _load_ledger(claims_dir, _stamp(claims_dir)).copy()


def _slug(part: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", part).strip("_")


def status_word(reproduced, stable: dict | None = None) -> str:
    """The ledger's word for a criterion's answer, :data:`FRAGILE` for a True that
    ``stable`` does not back on every resample.

    >>> status_word(True), status_word(None), status_word(True, {"agree": 2, "of": 3})
    ('reproduced', 'not run', 'fragile')
    """
    if isinstance(reproduced, str) and reproduced == NOT_TESTABLE:
        return NOT_TESTABLE
    if reproduced is True and stable and stable["agree"] < stable["of"]:
        return FRAGILE
    return {True: "reproduced", False: "not reproduced", None: "not run"}[reproduced]


def combined_status(statuses: list[str]) -> str:
    """The verdict of a claim from those of its parts.

    >>> combined_status(["reproduced", "not reproduced"])
    'partly reproduced'
    >>> combined_status(["not reproduced", "fragile"]), combined_status(["not testable"])
    ('not reproduced', 'not testable')
    >>> combined_status(["reproduced", "not run"]), combined_status(["reproduced", "fragile"])
    ('partly run', 'fragile')
    """
    ran = [s for s in statuses if s != "not run"]
    if not ran:
        return "not run"
    if "reproduced" in ran and ("not reproduced" in ran or NOT_TESTABLE in ran):
        return PARTLY_REPRODUCED
    for decisive in ("not reproduced", NOT_TESTABLE, FRAGILE):
        if decisive in ran:
            return decisive
    return "partly run" if len(ran) < len(statuses) else "reproduced"


def parts_count(statuses: list[str]) -> str:
    """What the parts of a claim came to, each count named by its verdict.

    >>> parts_count(["reproduced", "not reproduced", "not run", "not run", "reproduced"])
    '2 of 5 parts reproduced, 1 not reproduced, 2 not run'
    """
    k = sum(s == "reproduced" for s in statuses)
    out = f"{k} of {len(statuses)} part{'' if len(statuses) == 1 else 's'} reproduced"
    for status in STATUSES:
        n = sum(s == status for s in statuses)
        if status != "reproduced" and n:
            out += f", {n} {status}"
    return out


def seed_rule(seeds) -> str | None:
    """Why a verdict from trained models on these seeds is not testable, or None.

    >>> seed_rule([0, 1])
    '2 seeds at this profile, at least 3 needed for a verdict from trained models'
    >>> seed_rule([0, 1, 2]) is None
    True
    """
    n = len(set(seeds))
    if n >= MIN_SEEDS:
        return None
    return (f"{n} seed{'' if n == 1 else 's'} at this profile, at least {MIN_SEEDS} needed for "
            f"a verdict from trained models")


_SHORT_OF_SEEDS = re.compile(r"\d+ seeds? at this profile, at least \d+ needed for a verdict "
                             r"from trained models")


def short_of_seeds(measured: str) -> bool:
    """Whether a ``measured`` line is one that :func:`seed_rule` made not testable (it opens
    with the rule's sentence), rather than one whose criterion's premise does not hold.

    >>> short_of_seeds(seed_rule([0, 1]) + " (on these the criterion says reproduced): x")
    True
    >>> short_of_seeds("premise not met: no crossing at V = 32")
    False
    """
    return bool(_SHORT_OF_SEEDS.match(str(measured)))


def stability(reproduced, resamples: dict, kind: str) -> dict:
    """How many verdicts on resamples of the evidence (``resamples``: label -> verdict) agree
    with ``reproduced``: ``{"kind", "agree", "of", "share", "overturned_by"}``.

    >>> s = stability(True, {"without seed 0": True, "without seed 1": False}, "leave one out")
    >>> s["agree"], s["of"], s["share"], s["overturned_by"]
    (1, 2, 0.5, ['without seed 1'])
    """
    if not resamples:
        raise AttnbookError("stability needs at least one resample")
    word = status_word(reproduced)
    off = [label for label, v in resamples.items() if status_word(v) != word]
    return {"kind": str(kind), "agree": len(resamples) - len(off), "of": len(resamples),
            "share": round((len(resamples) - len(off)) / len(resamples), 4),
            "overturned_by": [str(x) for x in off]}


def stability_text(stable: dict | None) -> str:
    """``stable`` in words, as the verdict line ends ('' for none).

    >>> stability_text({"kind": "leave one seed out", "agree": 2, "of": 3, "share": 0.667,
    ...                 "overturned_by": ["without seed 1"]})
    'stability 2/3 (leave one seed out; overturned without seed 1)'
    """
    if not stable:
        return ""
    off = stable.get("overturned_by") or []
    shown = ", ".join(x.removeprefix("without ") for x in off[:3]) + (", ..." if len(off) > 3
                                                                       else "")
    return (f"stability {stable['agree']}/{stable['of']} ({stable['kind']}"
            + (f"; overturned without {shown}" if off and all(x.startswith("without ")
                                                              for x in off)
               else f"; overturned by {len(off)}" if off else "") + ")")


def verdict_line(claim_id: str, profile: str, reproduced: bool | None, measured: str,
                 part: str | None = None, stable: dict | None = None) -> str:
    """The one rounded line a claim check prints (and nbval compares).

    >>> verdict_line("L-Lem1", "ci", True, "degree 3^L at 12/12 settings")
    'L-Lem1 [ci] reproduced: degree 3^L at 12/12 settings'
    """
    name = f"{claim_id} / {part}" if part else claim_id
    tail = f" [{stability_text(stable)}]" if stable else ""
    return f"{name} [{profile}] {status_word(reproduced, stable)}: {measured}{tail}"


def criterion_sha(claim_id: str, claims_dir: Path | None = None) -> str:
    """sha256[:12] of what decides ``claim_id``: its row's criterion and thresholds, the
    code of its function in :mod:`attnbook.criteria` with the helpers it reads
    (:func:`attnbook.criteria.code_sha`; if any) and, for a claim decided from trained models
    or random draws, the stability rule (:func:`rule_code`)."""
    ledger = load_ledger(claims_dir)
    row = ledger.loc[ledger["id"] == claim_id].iloc[0]
    return sealed_criterion(row["criterion"], row["thresholds"], criteria.code_sha(claim_id),
                            rule_code() if row["evidence"] in SAMPLED else None)


def rule_code(text: str | None = None) -> list[str]:
    """The stability rule as it decides: :data:`RULE`'s definitions in this module (or in
    ``text``, an older copy of it), each without its docstring."""
    return criteria.named_code(Path(__file__).read_text() if text is None else text, RULE)


def sealed_criterion(words: str, numbers: str, code_sha: str | None,
                     rule: list[str] | None) -> str:
    """sha256[:12] of a criterion's words, numbers and code hash, and of the stability rule's
    code (``rule``; None for a claim decided from computation, whose hash it leaves as it was).
    """
    parts = [words, numbers, code_sha or ""]
    if rule is not None:
        parts.append(hashlib.sha256("\n".join(rule).encode()).hexdigest()[:12])
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:12]


def check_claim_id(claim_id: str, claims_dir: Path | None = None) -> None:
    """Raise unless ``claim_id`` is a row of the ledger."""
    ledger = load_ledger(claims_dir)
    if claim_id not in set(ledger["id"]):
        raise AttnbookError(
            f"unknown claim id {claim_id!r}: ids are those of data/claims/*.csv "
            f"({', '.join(ledger['id'])})")


def record(claim_id: str, reproduced: bool | None, measured: str, *, profile: str,
           notebook: str, run: dict, part: str | None = None, details: dict | None = None,
           stable: dict | None = None, claims_dir: Path | None = None) -> dict:
    """Store the measured side of one claim (or part): ``reproduced`` None means the check
    could not run here (why: ``measured``); a True ``stable`` does not back is :data:`FRAGILE`.
    """
    claims_dir = Path(claims_dir or paths.CLAIMS)
    check_claim_id(claim_id, claims_dir)
    if profile not in PROFILES:
        raise AttnbookError(f"unknown profile {profile!r}: allowed {', '.join(PROFILES)}")
    if reproduced not in (True, False, None, NOT_TESTABLE):
        raise AttnbookError(f"reproduced must be True, False, None or {NOT_TESTABLE!r}, got "
                            f"{reproduced!r}")
    run = dict(run)
    run.setdefault("fingerprint", code_fingerprint())
    entry = {
        "id": claim_id, "part": part, "profile": profile, "status": status_word(reproduced, stable),
        "measured": str(measured), "notebook": notebook, "details": jsonable(details or {}),
        "run": jsonable(run), "criterion": criterion_sha(claim_id, claims_dir),
    }
    if stable:
        entry["stability"] = jsonable(stable)
    name = claim_id + (f"__{_slug(part)}" if part else "")
    path = claims_dir / "results" / profile / f"{name}.json"
    if path.exists():  # a re-draw with the same verdict keeps the run that established it
        # ... unless that run's code has changed since, or the file is damaged
        old, problem = check_entry(path)
        if old is not None and not problem and \
                all(old.get(k) == entry.get(k) for k in ("status", "measured", "details",
                                                         "notebook", "stability")) \
                and not stale_modules(old, claims_dir):
            return old
    entry = jsonable(entry, finite=True)
    entry["sha256"] = entry_sha(entry)
    atomic_write(path, dumps(entry, indent=1, sort_keys=True))
    return entry


def entry_sha(entry: dict) -> str:
    """sha256 of a ledger entry's content: its canonical JSON without the ``sha256`` key."""
    return canonical_sha256(jsonable({k: v for k, v in entry.items() if k != "sha256"},
                                     finite=True))


def check_entry(path: Path, text: str | bytes | None = None) -> tuple[dict | None, str | None]:
    """Read and check one ledger entry (from ``text`` if given): ``(entry, problem)``,
    ``problem`` one line saying why it cannot be used (or None)."""
    try:
        entry = loads(path.read_bytes() if text is None else text)
        if not isinstance(entry, dict) or not isinstance(entry.get("id"), str) \
                or entry.get("status") not in STATUSES or not isinstance(entry.get("run"), dict) \
                or not isinstance(entry.get("measured"), str):
            raise ValueError("not a ledger entry")
    except (OSError, ValueError) as e:  # UnicodeDecodeError is a ValueError
        first = (str(e).splitlines() or [""])[0]
        return None, f"cannot be read as a ledger entry ({type(e).__name__}: {clip(first, 80)})"
    if "sha256" not in entry:
        return None, "has no sha256 (damaged or edited: an entry without its hash is never used)"
    if not hash_matches(lambda: entry_sha(entry), entry["sha256"]):
        return None, "content does not match its recorded sha256 (damaged or edited)"
    return entry, None


def _device(run: dict) -> str:
    """Where the numbers were computed: the cached results' devices, else the run's own."""
    devices = sorted({s["device"] for s in run.get("computed_by") or [] if s.get("device")})
    return "; ".join(devices) or run.get("device", "")


def stale_modules(entry: dict, claims_dir: Path | None = None) -> list[str]:
    """The modules changed since the entry and the results behind it were computed, and
    :data:`CRITERION_CHANGED` when its criterion has changed since ([] when current)."""
    run = entry.get("run") or {}
    changed = set(changed_modules(run.get("fingerprint")))
    for src in run.get("computed_by") or []:  # a cached result from before fingerprints: stale
        changed.update(changed_modules(src.get("fingerprint")))
    try:
        if entry.get("criterion") != criterion_sha(entry["id"], claims_dir):
            changed.add(CRITERION_CHANGED)
    except (KeyError, IndexError):  # an id no longer in the ledger
        changed.add(CRITERION_CHANGED)
    moved = changed_parameters(entry.get("notebook") or "", entry.get("profile") or "",
                               run.get("commit") or "", run.get("parameters"))
    if moved:  # decided under values its profile no longer has
        changed.add(f"(the {entry.get('profile')} profile's values: "
                    + "; ".join(moved) + ")")
    return sorted(changed)


def _dirty(run: dict) -> str:
    """'' for a run from committed code, else 'dirty (diff <hash>)'."""
    if run.get("dirty") or str(run.get("commit", "")).endswith("+dirty"):
        return "dirty" + (f" (diff {run['diff_sha256']})" if run.get("diff_sha256") else "")
    return ""


def _results(claims_dir: Path, profiles) -> tuple[list[dict], list[dict]]:
    """The intact entries of ``profiles``, and the damaged ones (:func:`damaged_entries`)."""
    out, damaged = [], []
    for profile in profiles:
        for f in sorted((claims_dir / "results" / profile).glob("*.json")):
            claim = f.stem.split("__")[0]
            entry, problem = check_entry(f)
            if not problem and (entry.get("id") != claim or entry.get("profile") != profile):
                problem = (f"holds the entry of {entry.get('id')!r} at "
                           f"{entry.get('profile')!r} (moved or renamed)")
            if problem:
                damaged.append({"id": claim, "profile": profile, "path": f, "problem": problem})
            else:
                out.append(entry)
    return out, damaged


def damaged_entries(profile: str | None = None, claims_dir: Path | None = None) -> list[dict]:
    """The ledger entries that cannot be used: {id, profile, path, problem}, one per file."""
    claims_dir = Path(claims_dir or paths.CLAIMS)
    return _results(claims_dir, [profile] if profile else list(PROFILES))[1]


_CLAIM_ID = re.compile(r"""["']([A-Z]-[\w-]+)["']""")


def recorded_ids(code: str) -> list[str]:
    """The claim ids a code cell records, in order: the quoted ids of a cell that calls
    ``run.record``.

    >>> recorded_ids('for c, t in (("M-T1tab", a), ("M-T3tab", b)): run.record(c, t, "")')
    ['M-T1tab', 'M-T3tab']
    >>> recorded_ids('run.ledger("W-F1")')
    []
    """
    if ".record(" not in code:
        return []
    return list(dict.fromkeys(_CLAIM_ID.findall(code)))


def chapter_claims(notebooks_dir: Path | None = None) -> set[str]:
    """The claim ids some chapter records (``run.record("ID", ...)`` in a notebook's code).

    >>> "L-Lem1" in chapter_claims()
    True
    """
    found = set()
    for nb in Path(notebooks_dir or paths.NOTEBOOKS).glob("*.ipynb"):
        found.update(notebook_claims(nb))
    return found


def notebook_claims(path: Path) -> list[str]:
    """The claim ids the notebook at ``path`` records, in order."""
    cells = notebook_cells(path)
    return recorded_ids("\n".join("".join(c.get("source", "")) for c in cells
                                  if c.get("cell_type", "code") == "code"))


def status_table(profile: str | None = None, *, parts: bool = False,
                 claims_dir: Path | None = None,
                 notebooks_dir: Path | None = None) -> pd.DataFrame:
    """One row per claim id and profile (with ``parts=True``, and per part): paper value,
    status (:func:`combined_status` of its parts), measured value, provenance, staleness."""
    claims_dir = Path(claims_dir or paths.CLAIMS)
    if profile is not None and profile not in PROFILES:
        raise AttnbookError(f"unknown profile {profile!r}: allowed {', '.join(PROFILES)}")
    profiles = [profile] if profile else list(PROFILES)
    ledger = load_ledger(claims_dir)
    results, damaged = _results(claims_dir, profiles)
    checked = chapter_claims(notebooks_dir)
    rows = []
    for _, c in ledger.iterrows():
        for p in profiles:
            mine = [r for r in results if r["id"] == c["id"] and r["profile"] == p]
            broken = [d for d in damaged if d["id"] == c["id"] and d["profile"] == p]
            bad = "; ".join(f"{d['path'].name}: {d['problem']}" for d in broken)
            base = {**{k: c[k] for k in ("id", "work", "kind", "type", "source")}, "profile": p,
                    "paper_value": c["paper_value"], "criterion": c["criterion"], "damaged": bad}
            if not mine:
                rows.append({**base, "part": None,
                             "status": "not run" if c["id"] in checked else "no chapter yet",
                             "measured": "damaged ledger entry" if bad else "",
                             **dict.fromkeys(_ENTRY_COLUMNS, "")})
                continue
            n_bad = len(broken)
            statuses = [r["status"] for r in mine] + ["not run"] * n_bad  # damaged: unknown
            status = combined_status(statuses)
            whole = [r for r in mine if r["part"] is None]
            if whole:
                measured = whole[0]["measured"]
            else:
                measured = parts_count(statuses)
                if n_bad:
                    measured += f" ({n_bad} damaged)"
            last = max(mine, key=lambda r: r["run"].get("time", ""))
            stale = sorted({m for r in mine for m in stale_modules(r, claims_dir)})
            dirty = next((_dirty(r["run"]) for r in mine if _dirty(r["run"])), "")
            rows.append({**base, "part": None, "status": status, "measured": measured,
                         **_entry_columns(mine, last, stale, dirty)})
            rows += [{**base, "part": r["part"], "status": r["status"], "measured": r["measured"],
                      **_entry_columns([r], r, stale_modules(r, claims_dir), _dirty(r["run"])),
                      "damaged": ""} for r in mine if parts and r["part"] is not None]
    return pd.DataFrame(rows)


_ENTRY_COLUMNS = ("stability", "notebook", "commit", "device", "time", "stale", "dirty")


def _entry_columns(entries, last, stale, dirty) -> dict:
    """A status row's columns from its ``entries`` (``last``: the latest)."""
    run = last["run"]
    return {"stability": _least_stable(entries), "notebook": last["notebook"],
            "commit": run.get("commit", ""), "device": _device(run), "time": run.get("time", ""),
            "stale": ", ".join(stale), "dirty": dirty}


def _least_stable(entries) -> str:
    """The lowest stability of ``entries`` as ``agree/of kind`` ('' where none carries one)."""
    shares = [e["stability"] for e in entries if isinstance(e.get("stability"), dict)]
    if not shares:
        return ""
    low = min(shares, key=lambda s: (s.get("share", 1.0), -s.get("of", 0)))
    return f"{low.get('agree')}/{low.get('of')} {low.get('kind', '')}".strip()


def shown_profiles(table) -> list[str]:
    """The profiles a page shows: ``ci`` only where some claim has a ``ci`` result."""
    ran = table[~table["status"].isin(UNRUN)]
    return [p for p in PROFILES if p != "ci" or (ran["profile"] == "ci").any()]
