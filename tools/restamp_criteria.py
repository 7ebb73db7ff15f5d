"""Re-stamp ledger entries with the wider hash of what decided them, checked against git.

A ledger entry records the hash of its claim's criterion (:func:`attnbook.book.claims.
criterion_sha`: the ledger row's words and numbers and the criterion's code). That code used to
be the registered function alone; it now includes the package's helpers it reads
(:func:`attnbook.criteria.criterion_code`), so that a change to a helper (a memorization limit,
a seed guard) makes the verdicts it decided stale. Every entry recorded before then would read
stale although nothing that decided it changed. For each entry, this reads the ledger row and
the criteria package at the commit its run recorded, checks that the narrow hash computed there
equals the one the entry holds (the entry was decided by that code), and only then writes the
wide hash computed from the same commit and seals the entry anew. An entry from uncommitted code,
from a commit this history lacks, or whose narrow hash does not match is named and left as it
is: it stays stale until its chapter records it again. An entry whose helpers changed after its
run is stale after this too, as it should be.

    python tools/restamp_criteria.py [--check]

``--check`` lists what would change and exits 1 if anything would.
"""

import argparse
import csv
import hashlib
import io
import sys
from pathlib import Path

from attnbook import paths
from attnbook.book.claims import PROFILES, check_entry, entry_sha
from attnbook.book.provenance import git as _git
from attnbook.book.store import atomic_write, dumps
from attnbook.criteria import criterion_code


def _sha(*texts: str) -> str:
    return hashlib.sha256("\n".join(texts).encode()).hexdigest()[:12]


def _at(commit: str, cache: dict, root: Path | None = None) -> tuple[dict, dict] | None:
    """(claim id -> (criterion, thresholds), criteria module texts) at ``commit``, or None."""

    def git(*args):
        return _git(*args, root=root)

    if commit not in cache:
        full = (git("rev-parse", "--verify", "-q", f"{commit}^{{commit}}") or "").strip()
        if not full:
            cache[commit] = None
            return None
        rows = {}
        for name in (git("ls-tree", "--name-only", full, "data/claims/") or "").split():
            if name.endswith(".csv"):
                for row in csv.DictReader(io.StringIO(git("show", f"{full}:{name}") or "")):
                    rows[row.get("id")] = (row.get("criterion") or "", row.get("thresholds") or "")
        names = (git("ls-tree", "--name-only", full, "src/attnbook/criteria/") or "").split()
        sources = {Path(n).stem: git("show", f"{full}:{n}") for n in names if n.endswith(".py")}
        cache[commit] = (rows, sources)
    return cache[commit]


def restamped(entry: dict, cache: dict, root: Path | None = None) -> tuple[dict | None, str]:
    """(the entry with its wide criterion hash, '') or (None, why it is left as it is; '' where
    it holds that hash already), read from the git history in ``root`` (the repository's)."""
    run = entry.get("run") or {}
    commit = str(run.get("commit") or "")
    if run.get("dirty") or commit.endswith("+dirty") or not commit or commit == "unknown":
        return None, "its run was not from a commit"
    state = _at(commit, cache, root)
    if state is None:
        return None, f"commit {commit} is not in this history"
    rows, sources = state
    if entry["id"] not in rows:
        return None, f"no ledger row {entry['id']} at {commit}"
    words, numbers = rows[entry["id"]]
    code = criterion_code(entry["id"], sources)
    wide = _sha(words, numbers, _sha(*code) if code else "")
    if wide == entry.get("criterion"):
        return None, ""  # stamped already (or no helper: the two hashes are one)
    if _sha(words, numbers, _sha(code[0]) if code else "") != entry.get("criterion"):
        return None, f"its criterion hash is not that of the code at {commit}"
    new = {**entry, "criterion": wide}
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
