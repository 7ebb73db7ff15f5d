"""Verified migration of stored results: change the library code without recomputing a chapter.

``python -m attnbook migrate <stem> --profile P`` (CONTRIBUTING.md, "Migrating instead of
recomputing"): a first pass lists the stale results the chapter asks for; a sample of them
(:func:`choose_sample`, each with its stacked program: :func:`stacked_programs`) is recomputed
and compared number by number (:func:`compare`) within the ``.yml``'s declared tolerance; if all
agree, the rest is re-stamped with the new fingerprint and a ``migrated`` record. A chapter
stored only partway migrates up to its first result never stored (:func:`ends_where_stored`).
"""

import io
import json
import math
import os
import random
import re
import tempfile
import time
from pathlib import Path

import pandas as pd

from .. import paths
from ..device import default_device, describe_device
from ..errors import AttnbookError
from . import runner
from .profiles import load_spec
from .provenance import git, git_state
from .readers import loads
from .store import ENV_MIGRATE, check_record, record_payload, stored_results, write_record

__all__ = ["SAMPLE", "MACHINE_MEASURES", "compare", "compare_tables", "migrate", "choose_sample",
           "stacked_programs", "completed", "ends_where_stored", "group_of", "migrated_results",
           "stored_threads"]

SAMPLE = 3  # results drawn at random per migration (fewer only where fewer are stale)
# How a result was computed, not what (the machine's speed and memory, how many models shared
# its stacked program): no recomputation repeats them, so they are not compared (both records
# must still have them).
MACHINE_MEASURES = frozenset({"tokens_per_s", "train_s", "peak_mem_bytes", "group_size"})


def group_of(path: Path, profile_dir: Path) -> str:
    """The group of a stored result: its sweep (its folder) or its table's name.

    >>> group_of(Path("r/nb/cpu/lm/ab12.json"), Path("r/nb/cpu"))
    'sweep lm'
    >>> group_of(Path("r/nb/cpu/table1-ab12.json"), Path("r/nb/cpu"))
    'table table1'
    """
    if path.parent != profile_dir:
        return f"sweep {path.parent.relative_to(profile_dir).as_posix()}"
    return f"table {path.stem.rsplit('-', 1)[0]}"


def choose_sample(units: list[dict], seed: int, k: int = SAMPLE) -> list[dict]:
    """``k`` of ``units`` (dicts with ``path``, ``group``, ``wall_s``) at random with ``seed``,
    plus the cheapest and the cheapest of each group the others leave out, in their order.

    >>> us = [{"path": f"u{i}", "group": "a" if i < 4 else "b", "wall_s": 10 - i}
    ...       for i in range(6)]
    >>> [u["path"] for u in choose_sample(us, seed=0, k=1)]
    ['u3', 'u5']
    """
    def cost(u):
        w = u.get("wall_s")
        return float(w) if isinstance(w, (int, float)) and math.isfinite(w) else math.inf

    picked = {u["path"] for u in random.Random(seed).sample(units, min(k, len(units)))}
    picked.add(min(units, key=cost)["path"])
    for g in dict.fromkeys(u["group"] for u in units):
        mine = [u for u in units if u["group"] == g]
        if not any(u["path"] in picked for u in mine):
            picked.add(min(mine, key=cost)["path"])
    return [u for u in units if u["path"] in picked]


def stacked_programs(units: list[dict]) -> list[list[dict]]:
    """``units`` (dicts with ``group`` and ``record``) grouped into the stacked programs they
    were computed in (a stacked model's float32 sums depend on its program's other models, so
    a sampled one is recomputed with all of them). A record names its program
    (``stacked_with``); an older one is placed by its sweep, run, time, wall time and
    ``result.group_size``: those that share them are one program, unless more than
    ``group_size`` do (not told apart: each alone). Every other unit stands alone.

    >>> r = lambda t, n, w=None: {"run_id": "r", "time": t, "wall_s": 5.0,
    ...                           "result": {"group_size": n}, **({"stacked_with": w} if w else {})}
    >>> us = [{"path": i, "group": "sweep m", "record": rec} for i, rec in enumerate(
    ...       [r("a", 2), r("a", 2), r("b", 1), r("c", 2), r("d", 2, ["k1", "k2"]),
    ...        r("d", 2, ["k1", "k2"]), r("e", 3), r("e", 3), r("f", 1), r("f", 1)])]
    >>> [[u["path"] for u in p] for p in stacked_programs(us)]
    [[0, 1], [2], [3], [4, 5], [6, 7], [8], [9]]
    """
    programs: dict = {}
    for u in units:
        rec = u["record"] if isinstance(u["record"], dict) else {}
        size = (rec.get("result") or {}).get("group_size")
        if rec.get("stacked_with"):
            key = ("named", u["group"], tuple(rec["stacked_with"]))
        elif _is_int(size) and size > 1:
            key = ("placed", u["group"], rec.get("run_id"), rec.get("time"), rec.get("wall_s"),
                   size)
        else:
            key = ("alone", id(u))
        programs.setdefault(key, []).append(u)
    out = []
    for key, members in programs.items():
        if key[0] == "placed" and len(members) > key[-1]:
            out += [[u] for u in members]  # not told apart from another program: each alone
        else:
            out.append(members)
    return out


def completed(entry: dict) -> bool:
    """Whether a pass ran to its end: ``ok``, or ``partly run`` only where the chapter stops
    itself by design (:meth:`~attnbook.book.notebook.Run.partly`), not by a time budget.

    >>> completed({"status": "partly run", "missing": [{"stopped": "the pilot above ..."}]})
    True
    >>> completed({"status": "partly run", "missing": [{"sweep": "lm", "missing": 3}]})
    False
    """
    if entry.get("status") == "ok":
        return True
    missing = entry.get("missing") or []
    return entry.get("status") == "partly run" and bool(missing) and \
        all(isinstance(m, dict) and "stopped" in m for m in missing)


def ends_where_stored(entry: dict) -> bool:
    """Whether a migration's pass ended where the chapter's stored results end (at the first
    result never stored, :class:`~attnbook.book.store.NotStored`): what it asked for before
    that can migrate.

    >>> ends_where_stored({"status": "partly run", "missing": [{"sweep": "s", "missing": 40,
    ...                                                         "not_stored": True}]})
    True
    >>> ends_where_stored({"status": "partly run", "missing": [{"sweep": "s", "missing": 3}]})
    False
    """
    missing = entry.get("missing") or []
    return (entry.get("status") == "partly run"
            and any(isinstance(m, dict) and m.get("not_stored") is True for m in missing)
            and all(isinstance(m, dict) and ("stopped" in m or m.get("not_stored") is True)
                    for m in missing))


def _is_int(x) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def compare(old, new, rtol: float, atol: float, where: str = "") -> tuple[list[str], float]:
    """Compare two JSON values: (the differences beyond the tolerance, one line each, and the
    largest float difference). Floats agree within ``atol + rtol * |old|``, all else exactly;
    keys of :data:`MACHINE_MEASURES` are not compared.

    >>> compare({"a": [1, 2.0]}, {"a": [1, 2.0 + 1e-9]}, rtol=1e-6, atol=0)[0]
    []
    >>> compare({"loss": 1.5, "tokens_per_s": 4e4}, {"loss": 1.5, "tokens_per_s": 5e4}, 0, 0)[0]
    []
    >>> compare({"a": 1, "b": 0.5}, {"a": 2, "b": 0.6}, rtol=0.1, atol=0)[0]
    ['a: 1 -> 2', 'b: 0.5 -> 0.6 (difference 0.1 above 0.05)']
    """
    if isinstance(old, dict) and isinstance(new, dict):
        out, worst = [], 0.0
        for key in sorted(set(old) | set(new), key=str):
            if key not in old or key not in new:
                out.append(f"{where}{key}: {'added' if key not in old else 'removed'}")
                continue
            if key in MACHINE_MEASURES:
                continue
            o, w = compare(old[key], new[key], rtol, atol, f"{where}{key}.")
            out, worst = out + o, max(worst, w)
        return [line.replace(".: ", ": ") for line in out], worst
    if isinstance(old, list) and isinstance(new, list):
        if len(old) != len(new):
            return [f"{where.rstrip('.')}: length {len(old)} -> {len(new)}"], 0.0
        out, worst = [], 0.0
        for i, (a, b) in enumerate(zip(old, new, strict=True)):
            o, w = compare(a, b, rtol, atol, f"{where}{i}.")
            out, worst = out + o, max(worst, w)
        return out, worst
    name = where.rstrip(".") or "value"
    if isinstance(old, float) or isinstance(new, float):
        if not isinstance(old, (int, float)) or not isinstance(new, (int, float)) \
                or isinstance(old, bool) or isinstance(new, bool):
            return [f"{name}: {old!r} -> {new!r}"], 0.0
        a, b = float(old), float(new)
        if math.isnan(a) and math.isnan(b):
            return [], 0.0
        diff = abs(a - b)
        if not diff <= atol + rtol * abs(a):
            return [f"{name}: {old!r} -> {new!r} (difference {diff:.3g} above "
                    f"{atol + rtol * abs(a):.3g})"], diff if math.isfinite(diff) else math.inf
        return [], diff
    if old != new or type(old) is not type(new) and not (_is_int(old) and _is_int(new)):
        return [f"{name}: {old!r} -> {new!r}"], 0.0
    return [], 0.0


def compare_tables(old_csv: str, new_csv: str, rtol: float, atol: float) -> tuple[list[str],
                                                                                  float]:
    """:func:`compare` for two stored tables (CSV texts).

    >>> compare_tables("k,x\\n1,0.5\\n", "k,x\\n1,0.5000001\\n", rtol=1e-5, atol=0)[0]
    []
    """
    a, b = (pd.read_csv(io.StringIO(t)) for t in (old_csv, new_csv))
    if list(a.columns) != list(b.columns) or a.shape != b.shape:
        return [f"table shape or columns {a.shape} {list(a.columns)} -> {b.shape} "
                f"{list(b.columns)}"], 0.0
    rows = [[{c: (None if isinstance(v, float) and math.isnan(v) else v) for c, v in r.items()}
             for r in t.to_dict("records")] for t in (a, b)]
    return compare(*rows, rtol, atol, "row ")


def _payload(path: Path):
    """What a stored result's numbers are (:func:`~attnbook.book.store.record_payload`)."""
    return record_payload(loads(path.read_text()), path)


# the core and thread counts at the end of a CPU's ``device`` (``describe_device``)
_COUNTS = r"\((\d+) cores?, (\d+) threads?\)$"


def stored_threads(records) -> int | None:
    """The CPU thread count all ``records`` name in their ``device``, else None (sums over
    another count can differ in the last bits, so a migration recomputes with the same).

    >>> stored_threads([{"device": "cpu: AMD EPYC (2 cores, 2 threads)"}] * 2)
    2
    >>> stored_threads([{"device": "cuda: H100"}, {"device": "cpu: X (2 cores, 1 threads)"}])
    """
    found = [re.search(r"^cpu: .*" + _COUNTS, str(r.get("device", ""))) for r in records]
    counts = {int(m.group(2)) if m else None for m in found}
    return counts.pop() if len(counts) == 1 and None not in counts else None


def processor(device: str) -> str:
    """The processor a result's ``device`` names, without the core and thread counts (``_COUNTS``,
    which :func:`stored_threads` reads).

    >>> processor("cpu: AMD EPYC (2 cores, 1 threads)")
    'cpu: AMD EPYC'
    >>> processor("cuda: NVIDIA H200")
    'cuda: NVIDIA H200'
    """
    return re.sub(r"\s*" + _COUNTS, "", str(device))


def other_processors(records, here: str) -> list[str]:
    """The processors ``records`` were computed on other than ``here`` (a ``device`` string):
    float arithmetic rounds differently from one processor to another, so a sample recomputed
    here can differ from them in the last bits, and further where training amplifies it.

    >>> other_processors([{"device": "cpu: AMD EPYC (2 cores, 1 threads)"}],
    ...                  "cpu: Intel Xeon (2 cores, 1 threads)")
    ['cpu: AMD EPYC']
    >>> other_processors([{"device": "cpu: AMD EPYC (2 cores, 2 threads)"}],
    ...                  "cpu: AMD EPYC (2 cores, 1 threads)")
    []
    """
    mine = processor(here)
    return sorted({processor(r.get("device", "")) for r in records} - {mine, ""})


def migrated_results(root: Path | None = None, profile: str | None = None) -> list[dict]:
    """The stored results current by migration, with their ``migrated`` record."""
    return [{**r, "migrated": r["record"]["migrated"]} for r in stored_results(root, profile)
            if not (r["problem"] or r["changed"])
            and isinstance(r["record"].get("migrated"), dict)]


def _tolerance(spec) -> dict:
    tol = dict(spec.migrate or {})
    return {"rtol": float(tol.get("rtol", 0.0)), "atol": float(tol.get("atol", 0.0)),
            "why": str(tol.get("why", "exact: no tolerance declared"))}


def _clean_or_refuse(stem: str) -> dict:
    """The git state, refusing uncommitted changes to src/ and notebooks/, or no git."""
    state = git_state()
    changed = git("status", "--porcelain", "--", "src", "notebooks")
    if changed is None or state.get("commit") in (None, "unknown"):
        raise AttnbookError("migrate needs a git checkout: the re-stamped results name the "
                            "commit they were checked at")
    if changed:
        yml = f"notebooks/{stem}.yml"
        first = changed.splitlines()[0]
        why = (f"its tolerance ({yml}) has uncommitted changes: commit it before the migration"
               if yml in changed else f"uncommitted changes ({first.strip()}...)")
        raise AttnbookError(f"migrate {stem}: {why}")
    return state


def migrate(stem: str, profile: str, *, seed: int | None = None, log=print) -> int:
    """Migrate the stale stored results of ``stem`` at ``profile``: 0 when migrated or nothing
    is stale, 1 when the sample disagrees or a run fails."""
    available = runner.available_notebooks()
    stem = runner.resolve_notebook(stem, available)
    spec = load_spec(available[stem])
    tol = _tolerance(spec)
    state = _clean_or_refuse(stem)
    profile_dir = paths.COMMITTED_RESULTS / stem / profile
    mine = [r for r in stored_results(profile=profile) if r["notebook"] == stem]
    damaged = [r for r in mine if r["problem"]]
    if damaged:
        raise AttnbookError(f"migrate {stem}: damaged stored result {damaged[0]['problem']}: "
                            "restore it (git checkout) first")
    stale = {r["path"].resolve(): r for r in mine if r["changed"]}
    if not stale:
        log(f"{stem} · {profile}: no stale stored result; nothing to migrate")
        return 0
    seed = int(time.time()) % 100_000 if seed is None else int(seed)
    (job,) = runner.plan([stem], profile, [])
    with tempfile.TemporaryDirectory() as tmp:
        asked_log = Path(tmp) / "asked.txt"
        asked_log.touch()

        def one_pass(sample) -> dict:
            os.environ[ENV_MIGRATE] = json.dumps({"sample": [str(p) for p in sample],
                                                  "log": str(asked_log)})
            try:
                (entry,) = runner.execute([job], log=log)
            finally:
                os.environ.pop(ENV_MIGRATE, None)
            return entry

        log(f"{stem} · {profile}: {len(stale)} stale stored results; first pass: which the "
            "chapter asks for")
        entry = one_pass([])
        partial = ends_where_stored(entry)
        if not (completed(entry) or partial):
            log(f"migrate: the first pass failed ({entry.get('error')}); nothing re-stamped")
            return 1
        if partial:
            log(f"      the chapter's stored results end partway ({entry.get('error')}): the "
                "stale results it asks for before that migrate; any after stay stale")
        asked = {Path(line) for line in asked_log.read_text().split()}
        unused = sorted(p for p in stale if p not in asked)
        for p in unused:
            log(f"      not asked for by the chapter (left as it is): {p.relative_to(paths.ROOT)}")
        units = []
        for p in sorted(p for p in stale if p in asked):
            record = stale[p]["record"]
            units.append({"path": p, "group": group_of(p, profile_dir.resolve()),
                          "wall_s": record.get("wall_s"), "record": record})
        if not units:
            log("migrate: the chapter asks for none of its stale results; nothing re-stamped")
            return 0
        drawn = {u["path"] for u in choose_sample(units, seed)}
        programs = [p for p in stacked_programs(units) if any(u["path"] in drawn for u in p)]
        sample = [u for p in programs for u in p]  # a drawn model with its program's others
        old = {u["path"]: _payload(u["path"]) for u in sample}
        here = describe_device(default_device())
        elsewhere = other_processors([u["record"] for u in sample], here)
        if elsewhere:
            log(f"      note: the sample was stored on {' and '.join(elsewhere)} and is "
                f"recomputed here on {processor(here)}; floats round differently across "
                "processors" + (", and this chapter's tolerance is exact"
                                if tol["rtol"] == tol["atol"] == 0 else ""))
        log(f"      sample (seed {seed}): {len(drawn)} of {len(units)}"
            + (f", {len(sample)} with the models stacked with them" if len(sample) > len(drawn)
               else "") + ": "
            + ", ".join(str(u["path"].relative_to(profile_dir.resolve())) for u in sample))
        passes: list = []  # each stacked program alone, with the thread count it was stored with
        loose: dict = {}
        for prog in programs:
            threads = stored_threads([u["record"] for u in prog])
            if len(prog) > 1:
                passes.append((threads, [u["path"] for u in prog]))
            else:
                loose.setdefault(threads, []).append(prog[0]["path"])
        passes += list(loose.items())
        t0, before = time.perf_counter(), os.environ.get("ATTNBOOK_THREADS")
        try:
            for threads, group in passes:
                if threads:
                    os.environ["ATTNBOOK_THREADS"] = str(threads)
                    log(f"      recomputing {len(group)} with {threads} CPU thread(s), as stored")
                entry = one_pass(group)
                if not (completed(entry) or ends_where_stored(entry)):
                    log(f"migrate: a recomputing pass failed ({entry.get('error')}); nothing "
                        "re-stamped")
                    return 1
        finally:
            if before is None:
                os.environ.pop("ATTNBOOK_THREADS", None)
            else:
                os.environ["ATTNBOOK_THREADS"] = before
        wall = time.perf_counter() - t0
    problems, worst, new_fp = [], 0.0, {}
    for u in sample:
        record, problem, changed = check_record(u["path"])
        if problem or changed or record.get("fingerprint") == u["record"].get("fingerprint"):
            problems.append(f"{u['path'].relative_to(paths.ROOT)}: not recomputed by the "
                            "second pass")
            continue
        new_payload, old_payload = _payload(u["path"]), old[u["path"]]
        diffs, w = (compare_tables if isinstance(old_payload, str) else compare)(
            old_payload, new_payload, tol["rtol"], tol["atol"])
        worst = max(worst, w)
        problems += [f"{u['path'].relative_to(paths.ROOT)}: {d}" for d in diffs[:5]]
        new_fp[u["group"]] = record["fingerprint"]
    if problems:
        log(f"migrate {stem} · {profile}: the sample disagrees (tolerance rtol {tol['rtol']:g}, "
            f"atol {tol['atol']:g}); nothing re-stamped, recompute the chapter"
            + (f" (or migrate on {' and '.join(elsewhere)}, where the stored results were "
               "computed; the recomputed sample is kept as computed here)" if elsewhere else "")
            + ":")
        for line in problems:
            log(f"      {line}")
        return 1
    sampled = [str(u["path"].relative_to(profile_dir.resolve())) for u in sample]
    rest = [u for u in units if u not in sample]
    for u in rest:  # re-stamping seals a record anew: each must still be the intact one read
        csv = u["path"].with_suffix(".csv")
        u["csv"] = None if "result" in u["record"] or not csv.is_file() else csv.read_text()
        record, problem, _ = check_record(u["path"], csv_text=u["csv"])
        if problem or record != u["record"]:
            why = problem or f"{u['path'].relative_to(paths.ROOT)}: changed during the migration"
            log(f"migrate {stem} · {profile}: {why}; nothing re-stamped")
            return 1
    for u in rest:
        record = u["record"]
        record["migrated"] = {"from_fingerprint": record.get("fingerprint"),
                              "from_commit": record.get("commit"),
                              "checked_at": state["commit"], "seed": seed, "sampled": sampled,
                              "largest_difference": worst, "tolerance": tol,
                              "sample_seconds": round(wall, 1)}
        record["fingerprint"] = new_fp[u["group"]]
        write_record(u["path"], record, u["csv"])  # a table's: with the CSV checked above
    agreed = (f"migrate {stem} · {profile}: {len(sample)} sampled results agree (largest "
              f"difference {worst:.3g}); {len(rest)} re-stamped; ")
    if partial:
        log(agreed + "not re-drawn: its stored results stop before its verdicts, and the next "
            "run resumes from them")
        return 0
    log(agreed + "re-drawing the chapter from the cache")
    (entry,) = runner.execute([job], cache_only=True, log=log)
    return 0 if completed(entry) else 1
