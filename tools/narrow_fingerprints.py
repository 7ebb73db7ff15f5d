"""Narrow the code fingerprints of stored sweep units to the code their unit function can run.

Since a sweep unit computed by a library function is fingerprinted by that function's module
and what it imports (:func:`attnbook.book.provenance.function_modules`), a record stored
before then still lists every module its kernel had loaded, so a change to a chapter's
analysis (a crossing estimator, a table) would make its trainings stale although they never
ran that code. For the sweeps below, whose unit function is known from the chapter, this
keeps in each record's fingerprint only the modules of that function's closure
(:func:`attnbook.book.provenance.module_closure`), with their recorded hashes unchanged: a
record that was stale stays stale, and nothing else of it changes. Its sha256 covers the
fingerprint too, so each record is checked first (a damaged one is named and left as it is)
and sealed anew (:func:`attnbook.book.store.write_record`).

    python tools/narrow_fingerprints.py [--check]

``--check`` lists what would change and exits 1 if anything would.
"""

import argparse
import importlib.util
import sys
from pathlib import Path

from attnbook import paths
from attnbook.book.provenance import module_closure
from attnbook.book.store import check_record, write_record

# (chapter, sweep) -> the module of the function that computes its units, as the chapter calls it
UNIT_MODULES = {
    ("levine2020_depth_transition", "lm"): "attnbook.engines.lm_sweep",  # partial(train_stacked)
    ("wies2021_attention_ratio", "lm"): "attnbook.engines.lm_sweep",  # partial(train_stacked)
    ("wies2021_depth_efficiency", "lm"): "attnbook.engines.lm_sweep",  # partial(train_stacked)
    ("wies2021_depth_efficiency", "pilot"): "attnbook.engines.lm_sweep",  # partial(train_stacked)
    ("wies2021_rank_bottleneck", "lm"): "attnbook.engines.lm_sweep",  # partial(train_config)
    ("wies2021_vocab_rank", "lm"): "attnbook.engines.lm_sweep",  # partial(train_stacked)
    ("mahdavi2024_fig2_heads_context", "models"): "attnbook.mahdavi2024.trained",  # train_sweep
    ("mahdavi2024_fig2c_head_size", "models"): "attnbook.mahdavi2024.trained",  # train_sweep
}


def _exists(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:  # its package has moved
        return False


def narrowed(record: dict, keep: set[str]) -> dict | None:
    """The record with its fingerprint cut to ``keep``, or None when nothing would change."""
    fp = record.get("fingerprint")
    if not isinstance(fp, dict):
        return None  # from before fingerprints: stale as it is
    if not all(_exists(m) for m in fp):
        return None  # names a module that has moved since: stale, and `migrate` re-stamps it
    cut = {m: h for m, h in fp.items() if m in keep}
    return None if cut == fp else {**record, "fingerprint": cut}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="list, change nothing")
    args = ap.parse_args(argv)
    changed = 0
    for (chapter, sweep), module in UNIT_MODULES.items():
        keep = set(module_closure(module))
        for path in sorted(Path(paths.COMMITTED_RESULTS).glob(f"{chapter}/*/{sweep}/*.json")):
            record, problem, _ = check_record(path)
            if problem:
                print(f"{problem}; left as it is", file=sys.stderr)
                continue
            new = narrowed(record, keep)
            if new is None:
                continue
            changed += 1
            if args.check:
                print(f"{path}: drops {', '.join(sorted(set(record['fingerprint']) - keep))}")
            else:
                write_record(path, new)  # as the store writes
    print(f"{changed} records {'would change' if args.check else 'narrowed'}", file=sys.stderr)
    return 1 if args.check and changed else 0


if __name__ == "__main__":
    sys.exit(main())
