"""Re-stamp ledger entries with the hash of what decides them today, checked against git.

A ledger entry records the hash of its claim's criterion (:func:`attnbook.book.claims.
criterion_sha`: the ledger row's words and numbers and the criterion's code). That hash has
widened twice: the code, once the registered function alone, now includes the package's helpers
it reads (:func:`attnbook.criteria.criterion_code`), and for a claim decided from trained models
or random draws it now includes the stability rule (:func:`attnbook.book.claims.rule_code`), so
that a change to a helper or to the rule makes the verdicts it decided stale. Every entry
recorded before would read stale although nothing that decided it changed. For each entry, this
reads the ledger row, the criteria package and the stability rule at the commit its run
recorded, checks that a hash computed there the older way equals the one the entry holds (the
entry was decided by that code), and only then writes today's hash computed from the same
commit and seals the entry anew. An entry from uncommitted code, from a commit this history
lacks, or whose hash matches neither older way is named and left as it is: it stays stale until
its chapter records it again. An entry whose helpers or rule changed after its run is stale
after this too, as it should be.

    python tools/restamp_criteria.py [--check]

``--check`` lists what would change and exits 1 if anything would.
"""

import argparse
import hashlib
import sys
from pathlib import Path

from attnbook import paths
from attnbook.book.claims import (
    PROFILES,
    SAMPLED,
    check_entry,
    entry_sha,
    rule_code,
    sealed_criterion,
)
from attnbook.book.history import ledger_rows, rule_at, sources_at
from attnbook.book.provenance import git as _git
from attnbook.book.store import atomic_write, dumps
from attnbook.criteria import criterion_code


def _sha(*texts: str) -> str:
    return hashlib.sha256("\n".join(texts).encode()).hexdigest()[:12]


def _at(commit: str, cache: dict, root: Path | None = None) -> tuple | None:
    """(claim id -> ledger row, criteria module texts, the stability rule's module text) at
    ``commit``, or None where this history lacks it."""
    if commit not in cache:
        root = Path(root or paths.ROOT)
        full = (_git("rev-parse", "--verify", "-q", f"{commit}^{{commit}}", root=root)
                or "").strip()
        if not full:
            cache[commit] = None
            return None
        rows = {}
        for name in (_git("ls-tree", "--name-only", full, "data/claims/", root=root)
                     or "").split():
            if name.endswith(".csv"):
                rows.update(ledger_rows(_git("show", f"{full}:{name}", root=root)))
        cache[commit] = (rows, sources_at(root, full), rule_at(root, full))
    return cache[commit]


def restamped(entry: dict, cache: dict, root: Path | None = None) -> tuple[dict | None, str]:
    """(the entry with today's criterion hash, '') or (None, why it is left as it is; '' where
    it holds that hash already), read from the git history in ``root`` (the repository's)."""
    run = entry.get("run") or {}
    commit = str(run.get("commit") or "")
    if run.get("dirty") or commit.endswith("+dirty") or not commit or commit == "unknown":
        return None, "its run was not from a commit"
    state = _at(commit, cache, root)
    if state is None:
        return None, f"commit {commit} is not in this history"
    rows, sources, rule_text = state
    if entry["id"] not in rows:
        return None, f"no ledger row {entry['id']} at {commit}"
    row = rows[entry["id"]]
    words, numbers = row.get("criterion") or "", row.get("thresholds") or ""
    code = criterion_code(entry["id"], sources)
    wide = _sha(*code) if code else None
    today = sealed_criterion(words, numbers, wide, rule_code(rule_text or "")
                             if row.get("evidence") in SAMPLED else None)
    if today == entry.get("criterion"):
        return None, ""  # stamped already
    older = {sealed_criterion(words, numbers, _sha(code[0]) if code else None, None),  # alone
             sealed_criterion(words, numbers, wide, None)}  # with its helpers, without the rule
    if entry.get("criterion") not in older:
        return None, f"its criterion hash is not that of the code at {commit}"
    new = {**entry, "criterion": today}
    new["sha256"] = entry_sha(new)
    return new, ""


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="list, change nothing")
    args = ap.parse_args(argv)
    cache: dict = {}
    changed = left = 0
    for profile in [p for p in PROFILES if p != "ci"]:  # ci entries are never committed
        for path in sorted((Path(paths.CLAIMS) / "results" / profile).glob("*.json")):
            entry, problem = check_entry(path)
            if problem:
                print(f"{path}: {problem}; left as it is", file=sys.stderr)
                left += 1
                continue
            new, why = restamped(entry, cache)
            if why:
                print(f"{path}: {why}; left as it is", file=sys.stderr)
                left += 1
            if new is None:
                continue
            changed += 1
            if args.check:
                print(f"{path}: {entry['criterion']} -> {new['criterion']}")
            else:
                atomic_write(path, dumps(new, indent=1, sort_keys=True))  # as record writes
    print(f"{changed} entries {'would be ' if args.check else ''}re-stamped, {left} left as "
          "they are", file=sys.stderr)
    return 1 if args.check and changed else 0


if __name__ == "__main__":
    sys.exit(main())
