"""Give the ledger entries recorded before entries carried a sha256 the hash of their content.

Such an entry counts as stale (:data:`attnbook.book.claims.UNHASHED`) until its chapter runs
again and confirms it. Where its content is known to be what a run wrote (it is committed, or
came back from a device run), this adds the hash of that content as it stands and changes
nothing else. An entry that already carries a hash is left alone: a damaged one (its content
does not match its hash) stays damaged, and one that cannot be read is only listed.

    python tools/hash_ledger.py [--check]

``--check`` lists what would change and exits 1 if anything would.
"""

import argparse
import sys

from attnbook import paths
from attnbook.book.claims import check_entry, entry_sha
from attnbook.book.store import atomic_write, dumps


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--check", action="store_true", help="list, change nothing")
    args = p.parse_args(argv)
    todo = 0
    for f in sorted((paths.CLAIMS / "results").rglob("*.json")):
        entry, problem = check_entry(f)
        if problem:
            print(f"{f.relative_to(paths.ROOT)}: {problem} (left alone)", file=sys.stderr)
            continue
        if "sha256" in entry:
            continue
        todo += 1
        print(f"{f.relative_to(paths.ROOT)}: " + ("no sha256" if args.check else "hashed"))
        if not args.check:
            text = f.read_text()
            entry["sha256"] = entry_sha(entry)
            atomic_write(f, dumps(entry, indent=1, sort_keys=True)
                         + ("\n" if text.endswith("\n") else ""))
    return 1 if args.check and todo else 0


if __name__ == "__main__":
    sys.exit(main())
