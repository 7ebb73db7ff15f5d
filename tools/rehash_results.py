"""Convert the stored results to the record hash that covers the whole record (hash_version 2).

A record's ``sha256`` of the earlier format covered its payload alone (a sweep record's config
and result, a table's CSV text), not its fingerprint or provenance: emptying a stale result's
``fingerprint`` made it count as current. The store now reads only records whose ``sha256`` is
:func:`attnbook.book.store.record_hash` (``hash_version`` 2); one of the earlier format is
damaged. This converts every record under ``data/results`` once, from a clean commit:

* a record of the earlier format whose old hash verifies (its payload is what was stored) is
  given ``hash_version`` 2 and the new ``sha256``, nothing else of it changed;
* a record whose old hash does not verify, one without a hash, and one that cannot be read are
  named and left untouched (never blessed): they stay damaged;
* a record already converted is verified and skipped (a second run changes nothing).

Ledger entries (``data/claims/results``) are not touched: their ``sha256``
(:func:`attnbook.book.claims.entry_sha`) already covers the whole entry, its run's fingerprint
and provenance included. Checkpoints are not records.

    python tools/rehash_results.py [--check]

``--check`` changes nothing, lists what would be converted and exits 1 if anything would; the
counts go to stderr, and the exit status is 1 too when any record was refused.
"""

import argparse
import sys
from pathlib import Path

from attnbook import paths
from attnbook.book.readers import loads
from attnbook.book.store import (
    HASH_VERSION,
    atomic_write,
    canonical_sha256,
    check_record,
    dumps,
    record_payload,
    seal,
)


def _records(root: Path):
    """Every stored record under ``root`` (``<notebook>/<profile>/...*.json``), as the store
    walks them: folders and files whose name starts with a dot (checkpoints, scratch) aside."""
    for f in sorted(root.rglob("*.json")):
        if not any(part.startswith(".") for part in f.relative_to(root).parts):
            yield f


def convert(path: Path, check: bool = False) -> tuple[str, str]:
    """Convert one record: ``(outcome, line)``, outcome ``converted`` (or, with ``check``,
    would be), ``current`` (already converted, verified) or ``refused`` (left untouched)."""
    try:
        text = path.read_text()
        record = loads(text)
        if not isinstance(record, dict):
            raise ValueError("not a JSON object")
    except (OSError, ValueError) as e:
        return "refused", f"cannot be read as JSON ({type(e).__name__}); left untouched"
    if record.get("hash_version") == HASH_VERSION:
        _, problem, _ = check_record(path)
        return ("refused", f"{problem}; left untouched") if problem else ("current", "")
    if "hash_version" in record:
        return "refused", f"unknown hash_version {record['hash_version']!r}; left untouched"
    if "sha256" not in record:
        return "refused", "has no sha256: damaged, left untouched"
    try:
        csv_text = None if "result" in record else path.with_suffix(".csv").read_text()
        old_ok = canonical_sha256(record_payload(record, path, csv_text)) == record["sha256"]
    except (OSError, ValueError, TypeError) as e:
        return "refused", f"its payload cannot be read ({type(e).__name__}); left untouched"
    if not old_ok:
        return "refused", ("content does not match its recorded sha256 of the earlier format "
                           "(damaged or edited): left untouched")
    if check:
        return "converted", "would be converted"
    sealed = seal(record, csv_text)
    atomic_write(path, dumps(sealed, indent=1, sort_keys=True)
                 + ("\n" if text.endswith("\n") else ""))
    _, problem, _ = check_record(path, csv_text=csv_text)
    if problem:  # cannot happen: the record was sealed as it was read
        raise RuntimeError(f"{path}: does not verify after conversion: {problem}")
    return "converted", "converted"


def rehash(root: Path | None = None, check: bool = False, out=None, err=None) -> dict:
    """Convert every record under ``root`` (default ``data/results``); the counts of each
    outcome. Refused records are named on ``err``, converted ones on ``out`` (default: stderr
    and stdout)."""
    root = Path(root or paths.COMMITTED_RESULTS)
    out, err = out or sys.stdout, err or sys.stderr
    counts = {"converted": 0, "current": 0, "refused": 0}
    for f in _records(root):
        outcome, line = convert(f, check)
        counts[outcome] += 1
        name = f.relative_to(paths.ROOT) if f.is_relative_to(paths.ROOT) else f
        if outcome == "refused":
            print(f"{name}: {line}", file=err)
        elif outcome == "converted":
            print(f"{name}: {line}", file=out)
    return counts


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="list, change nothing")
    args = ap.parse_args(argv)
    counts = rehash(check=args.check)
    print(f"{counts['converted']} records {'to convert' if args.check else 'converted'}, "
          f"{counts['current']} already converted, {counts['refused']} refused (left "
          "untouched, named above)", file=sys.stderr)
    return 1 if counts["refused"] or (args.check and counts["converted"]) else 0


if __name__ == "__main__":
    sys.exit(main())
