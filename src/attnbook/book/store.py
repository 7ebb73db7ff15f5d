"""Cached results under ``data/results/<notebook>/<profile>/``: one CSV per table and
parameter set (:meth:`ResultStore.cached`), one JSON per finished sweep configuration
(:meth:`ResultStore.put`), written atomically, keyed by a hash of the parameters.

Each record carries its code ``fingerprint``, provenance and ``sha256`` (:func:`record_hash`, over
the whole record and its payload), checked on every read; damaged, stale, ``recompute``,
``readonly``, ``cache_only`` and migration (``ATTNBOOK_MIGRATE``) behave as CONTRIBUTING.md's
"The result cache" says.
"""

import hashlib
import io
import json
import math
import os
import time
import warnings
from collections.abc import Callable, Iterable
from pathlib import Path

import numpy as np
import pandas as pd

from .. import paths
from ..errors import AttnbookError
from .provenance import changed_modules, code_fingerprint
from .readers import loads

ENV_MIGRATE = "ATTNBOOK_MIGRATE"  # JSON {"sample": [paths], "log": path}: see the docstring

__all__ = ["ResultStore", "CacheMiss", "NotStored", "StaleResultWarning", "config_key", "jsonable",
           "dumps", "DamagedResultWarning", "check_record",
           "stored_results", "atomic_write", "why_not_current", "HASH_VERSION", "record_hash",
           "record_payload", "seal", "write_record"]

HASH_VERSION = 2  # a record's ``hash_version``: its sha256 covers the whole record (record_hash)


class DamagedResultWarning(UserWarning):
    """A stored result failed its hash or did not parse: it is recomputed, never used."""


def jsonable(x, finite: bool = False):
    """Plain JSON types for numpy/torch scalars and arrays, recursively; ``finite``: NaN and
    infinities as None (strict JSON has no NaN).

    >>> jsonable({"a": np.int64(3), "b": np.arange(2)}), jsonable([np.nan, 1.0], finite=True)
    ({'a': 3, 'b': [0, 1]}, [None, 1.0])
    """
    if isinstance(x, dict):
        return {str(k): jsonable(v, finite) for k, v in x.items()}
    if hasattr(x, "detach"):  # torch tensor
        x = x.detach().cpu().numpy()
    if isinstance(x, np.ndarray):
        x = x.tolist()
    if isinstance(x, (list, tuple)):
        return [jsonable(v, finite) for v in x]
    if isinstance(x, np.generic):
        x = x.item()
    return None if finite and isinstance(x, float) and not math.isfinite(x) else x


def dumps(x, **kwargs) -> str:
    """Strict JSON (no NaN tokens): measured NaN and infinities are written as null."""
    return json.dumps(jsonable(x, finite=True), allow_nan=False, **kwargs)


def config_key(config: dict) -> str:
    """A short stable hash of a configuration (order of keys does not matter).

    >>> config_key({"H": 2, "n": 8}) == config_key({"n": 8, "H": 2})
    True
    """
    blob = json.dumps(jsonable(config), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def canonical_sha256(value) -> str:
    """sha256 of ``value`` as canonical strict JSON (a string: of its text)."""
    if not isinstance(value, str):
        value = json.dumps(value, sort_keys=True, separators=(",", ":"), allow_nan=False)
    return hashlib.sha256(value.encode()).hexdigest()


def hash_matches(compute, expected) -> bool:
    """Whether ``compute()`` equals ``expected`` (a record it cannot hash does not)."""
    try:
        return compute() == expected
    except (TypeError, ValueError):
        return False


def record_hash(record: dict, payload) -> str:
    """sha256 of the canonical JSON of ``{"payload": canonical_sha256(payload), "record": <the
    record without its sha256>}``: an edit to the numbers or to anything said of them fails it.

    >>> r = seal({"config": {"n": 1}, "result": {"y": 2.0}, "fingerprint": {"m": "ab"}})
    >>> r["hash_version"], record_hash(r, record_payload(r, None)) == r["sha256"]
    (2, True)
    >>> record_hash({**r, "fingerprint": {}}, record_payload(r, None)) == r["sha256"]
    False
    """
    body = jsonable({k: v for k, v in record.items() if k != "sha256"}, finite=True)
    return canonical_sha256({"payload": canonical_sha256(payload), "record": body})


def record_payload(record: dict, path: Path | None, csv_text: str | None = None):
    """A sweep record's ``config`` and ``result``, else (a table) ``csv_text`` or the text of
    the ``.csv`` beside ``path``."""
    if "result" in record:  # one sweep configuration
        return {"config": record.get("config"), "result": record.get("result")}
    if csv_text is None:
        csv_text = Path(path).with_suffix(".csv").read_text()
    return csv_text


def seal(record: dict, csv_text: str | None = None) -> dict:
    """``record`` as stored: strict JSON, ``hash_version`` and ``sha256``. It blesses what it
    is given: a writer that re-stamps a stored record checks it (:func:`check_record`) first."""
    body = jsonable({k: v for k, v in record.items() if k != "sha256"}, finite=True)
    body["hash_version"] = HASH_VERSION
    return {**body, "sha256": record_hash(body, record_payload(body, None, csv_text))}


def write_record(path: Path, record: dict, csv_text: str | None = None) -> dict:
    """Seal ``record`` (a table's with ``csv_text``, else the ``.csv`` beside ``path``) and
    write it atomically; the sealed record."""
    if "result" not in record and csv_text is None:
        csv_text = Path(path).with_suffix(".csv").read_text()
    sealed = seal(record, csv_text)
    atomic_write(Path(path), dumps(sealed, indent=1, sort_keys=True))
    return sealed


def total_wall(wall_s: float | None, earlier: list | None) -> float | None:
    """A unit's seconds: this sitting's ``wall_s`` plus its ``earlier`` sittings' ``s``.

    >>> total_wall(5.0, [{"device": "cpu", "s": 20.0, "step": 100}]), total_wall(5.0, [])
    (25.0, 5.0)
    """
    if wall_s is None or not earlier:
        return wall_s
    return round(wall_s + sum(float(s["s"]) for s in earlier), 3)


def _timing(wall_s: float | None, earlier: list | None) -> dict:
    """A record's ``wall_s`` (the whole unit) and, for a resumed unit, ``earlier_sittings``."""
    if not earlier:
        return {"wall_s": wall_s}
    return {"wall_s": total_wall(wall_s, earlier), "earlier_sittings": list(earlier)}


def atomic_write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


def check_record(path: Path, text: str | bytes | None = None, csv_text: str | None = None):
    """Read and check one stored record: ``(record, problem, changed)``, ``problem`` one line
    naming the file and why it is damaged (or None), ``changed`` the modules changed since it
    was computed. A table's CSV is read beside ``path`` unless ``csv_text`` is given."""
    try:
        record = loads(path.read_bytes() if text is None else text)
        if not isinstance(record, dict):
            raise ValueError("not a JSON object")
    except (OSError, ValueError) as e:
        return None, f"{path}: cannot be read as JSON ({type(e).__name__}: {e})", []
    try:
        payload = record_payload(record, path, csv_text)
    except (OSError, ValueError) as e:  # not UTF-8: a UnicodeDecodeError
        return None, f"{path.with_suffix('.csv')}: missing or unreadable ({type(e).__name__})", []
    if "sha256" not in record:
        return None, (f"{path}: has no sha256 (damaged or edited: a result without its hash is "
                      "never used)"), []
    if record.get("hash_version") != HASH_VERSION:
        return None, (f"{path}: its sha256 is of an earlier format that does not cover its "
                      f"fingerprint and provenance (hash_version {record.get('hash_version')!r},"
                      f" not {HASH_VERSION}): damaged unless converted by "
                      "tools/rehash_results.py"), []
    if not hash_matches(lambda: record_hash(record, payload), record["sha256"]):
        if "result" in record:
            return None, (f"{path}: content does not match its recorded sha256 (damaged or "
                          "edited)"), []
        return None, (f"{path.with_suffix('.csv')}: content does not match its recorded sha256 "
                      f"(the table or its record {path.name} damaged or edited)"), []
    return record, None, changed_modules(record.get("fingerprint"))


def why_not_current(problem: str | None, changed) -> str:
    """Why a stored result or ledger entry is not used ('' when it is current)."""
    if problem:
        return problem
    return f"stale (changed: {', '.join(changed)})" if changed else ""


def stored_results(root: Path | None = None, profile: str | None = None):
    """Every stored result under ``root`` (default ``data/results``), checked: dicts with
    notebook, profile, path, record (None where damaged), problem and changed. Files and
    folders whose name starts with a dot (checkpoints, scratch) are not results."""
    root = Path(root or paths.COMMITTED_RESULTS)
    for nb_dir in sorted(p for p in root.glob("*") if p.is_dir() and
                         not p.name.startswith(".")):
        for prof_dir in sorted(p for p in nb_dir.glob("*") if p.is_dir()):
            if profile is not None and prof_dir.name != profile:
                continue
            for f in sorted(prof_dir.rglob("*.json")):
                if any(part.startswith(".") for part in f.relative_to(prof_dir).parts):
                    continue
                record, problem, changed = check_record(f)
                yield {"notebook": nb_dir.name, "profile": prof_dir.name, "path": f,
                       "record": record, "problem": problem, "changed": changed}


def stored_counts(root: Path | None = None, profile: str | None = None) -> dict:
    """(notebook, profile) -> the number of current (intact, not stale) stored results."""
    counts: dict = {}
    for r in stored_results(root, profile):
        if not (r["problem"] or r["changed"]):
            key = (r["notebook"], r["profile"])
            counts[key] = counts.get(key, 0) + 1
    return counts


def _migration() -> tuple[bool, set, str | None]:
    """(migrating, the sample's paths, the file asked paths go to) from ``ATTNBOOK_MIGRATE``."""
    text = os.environ.get(ENV_MIGRATE, "")
    if not text:
        return False, set(), None
    try:
        plan = loads(text)
        return True, {Path(p).resolve() for p in plan["sample"]}, str(plan["log"])
    except (ValueError, KeyError, TypeError) as e:
        raise AttnbookError(f"environment variable {ENV_MIGRATE} is not a migration plan "
                            f"({type(e).__name__})") from None


class StaleResultWarning(UserWarning):
    """A result computed by code that has changed since is served as it is (``cache_only``)."""


class CacheMiss(AttnbookError):
    """A result is not stored and the store may not compute it (``cache_only``)."""


class NotStored(CacheMiss):
    """A migration asked for a result never stored: the chapter's pass ends there."""


class ResultStore:
    """Finished results of one notebook at one profile."""

    def __init__(self, notebook: str, profile: str, *, recompute: bool = False,
                 readonly: bool = False, provenance: dict | None = None,
                 root: Path | None = None, cache_only: bool = False):
        self.dir = Path(root or paths.RESULTS) / notebook / profile
        self.recompute, self.readonly, self.cache_only = recompute, readonly, cache_only
        self.provenance = provenance or {}
        self._fresh: set[Path] = set()  # written during this session (valid even if recompute)
        self._memory: dict[Path, str] = {}  # readonly mode: this session's results
        self._checked: dict[Path, dict | None] = {}  # path -> usable record (None: not usable)
        self.sources: list[dict] = []  # provenance of every result served (computed or cached)
        self.stale: dict[str, list[str]] = {}  # path -> changed modules, of results recomputed
        self.served_stale: dict[str, list[str]] = {}  # the same, of stale results served as
        # they are (cache_only: nothing is recomputed)
        self.migrating, self._sample, self._asked_log = _migration()
        self.budget_stop: str | None = None  # why a time budget stopped the run (notebook.py)

    def refuse_to_compute(self, what: str) -> None:
        """Raise :class:`CacheMiss` if this store may not compute ``what`` (``cache_only``)."""
        if self.cache_only:
            raise CacheMiss(f"{what} is not stored under {self.dir} and this run draws from "
                            "the cache only (--cache-only): compute it where that is possible "
                            "and commit it, or run without --cache-only")

    def _note(self, record: dict) -> None:
        src = {k: record.get(k) for k in ("commit", "dirty", "diff_sha256", "device", "time",
                                          "run_id", "fingerprint")
               if record.get(k) is not None or k in ("commit", "device", "time", "run_id")}
        if src not in self.sources:
            self.sources.append(src)

    def _stamp(self, modules=None) -> dict:
        """The run's provenance and the fingerprint of ``modules`` (None: every one loaded)."""
        return {**self.provenance, "fingerprint": code_fingerprint(modules)}

    def _write(self, path: Path, text: str) -> None:
        if self.readonly:
            self._memory[path] = text
        else:
            atomic_write(path, text)
        self._fresh.add(path)
        self._checked.pop(path, None)

    def _read(self, path: Path) -> str:
        return self._memory[path] if path in self._memory else path.read_text()

    def _usable(self, path: Path) -> dict | None:
        """The record at ``path`` if it may be served: present, intact and current."""
        if path in self._memory:
            return loads(self._memory[path])
        if self.recompute and path not in self._fresh:
            return None
        if path in self._checked:
            return self._checked[path]
        if self.migrating:
            with open(self._asked_log, "a") as f:
                f.write(str(path.resolve()) + "\n")
            if not path.exists():
                raise NotStored(f"{path} is not stored: a migration recomputes only its sample "
                                "of stored results; the rest comes from a run")
        record = None
        if path.exists():
            csv = path.with_suffix(".csv")
            record, problem, changed = check_record(
                path, csv_text=self._memory.get(csv))
            if problem:
                if self.cache_only or self.migrating:  # nothing may be recomputed: say which
                    raise CacheMiss(f"stored result {problem}; it cannot be recomputed under "
                                    "--cache-only: restore the file (git checkout), or run "
                                    "without --cache-only to recompute it")
                if self.readonly:
                    raise AttnbookError(f"stored result {problem}")
                warnings.warn(f"{problem}; recomputing it", DamagedResultWarning, stacklevel=4)
                record = None
            elif changed and path not in self._fresh:
                if self.migrating and path.resolve() not in self._sample:
                    self.served_stale[str(path)] = changed  # re-stamped if the sample agrees
                elif self.migrating:
                    self.stale[str(path)] = changed  # recomputed, then compared
                    record = None
                elif self.cache_only:  # never recomputed here: served, and said so once
                    if not self.served_stale:
                        warnings.warn(f"serving results under {self.dir} computed by code that "
                                      f"has changed since: {', '.join(changed)}; --cache-only "
                                      "does not recompute them (python -m attnbook stale lists "
                                      "them)", StaleResultWarning, stacklevel=4)
                    self.served_stale[str(path)] = changed
                else:
                    self.stale[str(path)] = changed
                    record = None
        self._checked[path] = record
        return record

    # -- one JSON file per finished configuration -------------------------------------
    def _path(self, name: str, config: dict) -> Path:
        return self.dir / name / f"{config_key(config)}.json"

    def get(self, name: str, config: dict) -> dict | None:
        """The usable stored result of ``config`` in sweep ``name``, or None."""
        record = self._usable(self._path(name, config))
        if record is None:
            return None
        self._note(record)
        return record["result"]

    def put(self, name: str, config: dict, result: dict, wall_s: float | None = None,
            earlier: list | None = None, modules: list[str] | None = None,
            stacked_with: list[str] | None = None) -> None:
        """Store one finished configuration: ``earlier``, a checkpointed unit's earlier
        sittings; ``modules``, the code it can run (None: every module loaded);
        ``stacked_with``, the keys of its stacked program's configurations, its own included."""
        path = self._path(name, config)
        record = seal({"config": config, "result": result, **_timing(wall_s, earlier),
                       **({"stacked_with": sorted(stacked_with)} if stacked_with else {}),
                       **self._stamp(modules)})
        self._write(path, dumps(record, indent=1, sort_keys=True))

    def missing(self, name: str, configs: Iterable[dict]) -> list[dict]:
        """The configurations of sweep ``name`` that still have to be computed."""
        return [c for c in configs if self._usable(self._path(name, c)) is None]

    def frame(self, name: str, configs: Iterable[dict]) -> pd.DataFrame:
        """One row per configuration: its parameters, then its stored result fields."""
        rows = []
        for c in configs:
            r = self.get(name, c)
            if r is None:
                raise AttnbookError(f"sweep {name!r}: configuration {c} has no stored result")
            rows.append({**c, **r})
        return pd.DataFrame(rows)

    def stored(self, name: str) -> pd.DataFrame:
        """Every intact, current result of sweep ``name`` stored so far, as :meth:`frame`
        gives them (in the order of their keys): what an unfinished sweep has computed."""
        rows = []
        for path in sorted((self.dir / name).glob("*.json")):
            record, problem, changed = check_record(path)
            if problem or changed:
                warnings.warn(f"{problem or f'{path}: computed by code that has changed since'}"
                              "; left out", DamagedResultWarning if problem
                              else StaleResultWarning, stacklevel=3)
                continue
            self._note(record)
            rows.append({**record["config"], **record["result"]})
        return pd.DataFrame(rows)

    # -- one table per parameter set ---------------------------------------------------
    def cached(self, name: str, params: dict, compute: Callable[[], pd.DataFrame],
               earlier: Callable[[], list] | None = None,
               modules: list[str] | None = None) -> pd.DataFrame:
        """The stored table for ``(name, params)``, computed and stored if absent
        (``earlier()``, asked after ``compute``: the earlier sittings, as in put; ``modules``:
        the code it can run, its fingerprint; None: every module loaded)."""
        key = config_key(params)
        csv, meta = self.dir / f"{name}-{key}.csv", self.dir / f"{name}-{key}.json"
        record = self._usable(meta)
        if record is not None:
            self._note(record)
            return pd.read_csv(io.StringIO(self._read(csv)))
        self.refuse_to_compute(f"table {name!r} ({params})")
        t0 = time.perf_counter()
        df = compute()
        if not isinstance(df, pd.DataFrame):
            raise TypeError(f"compute for {name!r} must return a pandas DataFrame, got {type(df)}")
        wall = time.perf_counter() - t0
        text = df.to_csv(index=False)
        record = seal({"name": name, "params": jsonable(params),
                       **_timing(round(wall, 3), earlier() if earlier else None),
                       **self._stamp(modules)}, text)
        self._note(record)
        self._write(csv, text)
        self._write(meta, dumps(record, indent=1, sort_keys=True))
        # read back, so the types are the same whether computed now or read later
        return pd.read_csv(io.StringIO(self._read(csv)))
