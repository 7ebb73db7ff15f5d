"""Cached results, so compute is separate from plotting and an interrupted sweep resumes.

Two granularities, both under ``data/results/<notebook>/<profile>/`` (small, committable):

* :meth:`ResultStore.cached` stores one whole table (CSV) per name and parameter set;
* :meth:`ResultStore.get` / :meth:`ResultStore.put` store one JSON file per finished
  configuration of a sweep, written atomically, so a sweep stopped at any point keeps every
  configuration it finished and recomputes only the missing ones.

Keys are hashes of the parameters that determine a result, so a changed parameter recomputes
only what it affects. ``recompute=True`` ignores what is stored (and overwrites it);
``readonly=True`` writes nothing and keeps this session's results in memory (the nbval pass of
``make test`` re-executes notebooks this way, as a determinism check that leaves no trace).
"""

import hashlib
import io
import json
import os
import time
from collections.abc import Callable, Iterable
from pathlib import Path

import numpy as np
import pandas as pd

from ..paths import RESULTS

__all__ = ["ResultStore", "config_key", "jsonable", "atomic_write"]


def jsonable(x):
    """Plain JSON types for numpy/torch scalars and arrays, recursively.

    >>> jsonable({"a": np.int64(3), "b": np.arange(2)})
    {'a': 3, 'b': [0, 1]}
    """
    if isinstance(x, dict):
        return {str(k): jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [jsonable(v) for v in x]
    if hasattr(x, "detach"):  # torch tensor
        x = x.detach().cpu().numpy()
    if isinstance(x, np.ndarray):
        return x.tolist()
    if isinstance(x, np.generic):
        return x.item()
    return x


def config_key(config: dict) -> str:
    """A short stable hash of a configuration (order of keys does not matter).

    >>> config_key({"H": 2, "n": 8}) == config_key({"n": 8, "H": 2})
    True
    """
    blob = json.dumps(jsonable(config), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def atomic_write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


class ResultStore:
    """Finished results of one notebook at one profile."""

    def __init__(self, notebook: str, profile: str, *, recompute: bool = False,
                 readonly: bool = False, provenance: dict | None = None,
                 root: Path | None = None):
        self.dir = Path(root or RESULTS) / notebook / profile
        self.recompute, self.readonly = recompute, readonly
        self.provenance = provenance or {}
        self._fresh: set[Path] = set()  # written during this session (valid even if recompute)
        self._memory: dict[Path, str] = {}  # readonly mode: this session's results
        self.sources: list[dict] = []  # provenance of every result served (computed or cached)

    def _note(self, record: dict) -> None:
        src = {k: record.get(k) for k in ("commit", "device", "time", "run_id")}
        if src not in self.sources:
            self.sources.append(src)

    def _write(self, path: Path, text: str) -> None:
        if self.readonly:
            self._memory[path] = text
        else:
            atomic_write(path, text)
        self._fresh.add(path)

    def _read(self, path: Path) -> str:
        return self._memory[path] if path in self._memory else path.read_text()

    # -- one JSON file per finished configuration -------------------------------------
    def _path(self, name: str, config: dict) -> Path:
        return self.dir / name / f"{config_key(config)}.json"

    def _valid(self, path: Path) -> bool:
        if path in self._memory:
            return True
        return path.exists() and (not self.recompute or path in self._fresh)

    def get(self, name: str, config: dict) -> dict | None:
        """The stored result of ``config`` in sweep ``name``, or None if not finished."""
        path = self._path(name, config)
        if not self._valid(path):
            return None
        record = json.loads(self._read(path))
        self._note(record)
        return record["result"]

    def put(self, name: str, config: dict, result: dict, wall_s: float | None = None) -> None:
        """Store the result of one finished configuration (atomically)."""
        path = self._path(name, config)
        record = {"config": jsonable(config), "result": jsonable(result), "wall_s": wall_s,
                  **self.provenance}
        self._write(path, json.dumps(record, indent=1, sort_keys=True))

    def missing(self, name: str, configs: Iterable[dict]) -> list[dict]:
        """The configurations of sweep ``name`` that still have to be computed."""
        return [c for c in configs if not self._valid(self._path(name, c))]

    def frame(self, name: str, configs: Iterable[dict]) -> pd.DataFrame:
        """One row per configuration: its parameters, then its stored result fields."""
        rows = []
        for c in configs:
            r = self.get(name, c)
            if r is None:
                from ..errors import AttnbookError

                raise AttnbookError(f"sweep {name!r}: configuration {c} has no stored result")
            rows.append({**c, **r})
        return pd.DataFrame(rows)

    # -- one table per parameter set ---------------------------------------------------
    def cached(self, name: str, params: dict, compute: Callable[[], pd.DataFrame]) -> pd.DataFrame:
        """Return the stored table for ``(name, params)``, computing and storing it if absent."""
        key = config_key(params)
        csv, meta = self.dir / f"{name}-{key}.csv", self.dir / f"{name}-{key}.json"
        if self._valid(csv) and self._valid(meta):
            self._note(json.loads(self._read(meta)))
            return pd.read_csv(io.StringIO(self._read(csv)))
        t0 = time.perf_counter()
        df = compute()
        if not isinstance(df, pd.DataFrame):
            raise TypeError(f"compute for {name!r} must return a pandas DataFrame, got {type(df)}")
        wall = time.perf_counter() - t0
        self._note(self.provenance)
        self._write(csv, df.to_csv(index=False))
        self._write(meta, json.dumps({"name": name, "params": jsonable(params),
                                      "wall_s": round(wall, 3), **self.provenance},
                                     indent=1, sort_keys=True))
        # read back, so the types are the same whether computed now or read later
        return pd.read_csv(io.StringIO(self._read(csv)))
