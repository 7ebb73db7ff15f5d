"""Checkpoints of long units of work: a training stopped mid-way resumes where it stopped.

A trainer that accepts a :class:`Checkpoint` calls ``checkpoint.load(device)`` (the state of an
earlier sitting or None, its tensors on the CPU: the trainer places them) and, after every step,
``checkpoint.tick(step, state)`` (``state()`` is called only when a save is due: every
``every_s`` seconds, and once more before the run's deadline, where :class:`BudgetExhausted` is
raised); the sweep deletes the file once the unit's result is stored. Files live under
``data/checkpoints/<notebook>/<profile>/<name>/<key>.pt`` and travel between machines, so they
are read as data only (:func:`load_state`). One written by code that has changed since,
unreadable, or that its trainer cannot take is set aside (CONTRIBUTING.md, "A GPU machine
without network"); each lists its sittings (device, seconds, step), which the stored result
keeps. A :class:`Checkpoint` pickles (a Slurm job saves its own); a read-only run saves nothing.
"""

import os
import pickle
import re
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import torch

from .. import paths
from ..device import describe_device
from .provenance import code_fingerprint
from .store import config_key, total_wall

__all__ = ["BudgetExhausted", "Checkpoint", "Finished", "UnsafeCheckpoint", "checkpoint_dir",
           "in_flight", "load_state", "unit_key", "MIN_SLICE_S", "DEFAULT_EVERY_S"]

DEFAULT_EVERY_S = 300.0  # seconds between saves of a running unit
MIN_SLICE_S = 60.0  # a budgeted run starts a checkpointed unit if at least this much is left


class BudgetExhausted(BaseException):  # noqa: N818 - a stop, like KeyboardInterrupt
    """The run's time budget ends here: the finished units are stored, the rest of the
    notebook does not run, and no verdict is recorded (:mod:`attnbook.book.notebook`)."""


class UnsafeCheckpoint(Exception):
    """A checkpoint holds something beyond the data a trainer saves: it is not unpickled."""


def _safe_globals() -> list:
    """What a checkpoint may hold beyond torch's weights-only types: numeric numpy arrays and
    scalars (a trainer's measured curves), not object arrays."""
    import numpy as np

    try:
        from numpy._core.multiarray import _reconstruct, scalar
    except ImportError:  # numpy 1.x
        from numpy.core.multiarray import _reconstruct, scalar
    kinds = ("Bool", "Int8", "Int16", "Int32", "Int64", "UInt8", "UInt16", "UInt32", "UInt64",
             "Float16", "Float32", "Float64")
    dtypes = [getattr(np.dtypes, f"{k}DType") for k in kinds if hasattr(np.dtypes, f"{k}DType")]
    return [_reconstruct, scalar, np.ndarray, np.dtype, *dtypes]


_REFUSED = (", which a checkpoint may not (tensors, numbers, strings, lists, dicts and numeric "
            "numpy arrays only)")


def load_state(f, map_location=None):
    """``torch.load`` of a checkpoint (a path or a binary file) as data only, raising
    :class:`UnsafeCheckpoint` (naming what it holds) before unpickling anything else."""
    with torch.serialization.safe_globals(_safe_globals()):
        try:
            unsafe = torch.serialization.get_unsafe_globals_in_checkpoint(f)
        except (ValueError, RuntimeError, OSError, KeyError):
            unsafe = []  # not a torch.save file: torch.load below says so
        if hasattr(f, "seek"):
            f.seek(0)
        if unsafe:
            raise UnsafeCheckpoint(f"holds {', '.join(sorted(unsafe)[:5])}"
                                   + (f" and {len(unsafe) - 5} more" if len(unsafe) > 5 else "")
                                   + _REFUSED)
        try:
            return torch.load(f, map_location=map_location, weights_only=True)
        except pickle.UnpicklingError as e:  # a type built inside the pickle (an object array)
            found = re.findall(r"(?:GLOBAL|but got) <?(?:class )?'?([\w.]+)", str(e))
            if not found:
                raise  # not a refusal: a damaged file
            raise UnsafeCheckpoint(f"holds {found[0]}{_REFUSED}") from None


def checkpoint_dir(results_dir: Path, name: str) -> Path:
    """``data/checkpoints/<notebook>/<profile>/<name>`` for a store under ``data/results``;
    under another root (an exploratory run, a test), that root's ``.checkpoints``."""
    results_dir = Path(results_dir)
    root, notebook, profile = results_dir.parent.parent, results_dir.parent.name, results_dir.name
    base = paths.DATA / "checkpoints"
    if root.resolve() != Path(paths.COMMITTED_RESULTS).resolve():
        base = root / ".checkpoints"
    return base / notebook / profile / name


def in_flight(notebook: str, profile: str, results_root: Path | None = None) -> list[dict]:
    """The units of ``notebook`` at ``profile`` stopped mid-way: one dict per checkpoint file,
    ``sweep``, ``unit`` (its key), and ``step``, ``saved`` (UTC), ``sittings`` and ``s`` (the
    seconds of all its sittings) as the file says, or ``error`` where it cannot be read. Read
    as data only; a file set aside or half written is not a unit in flight."""
    base = checkpoint_dir(Path(results_root or paths.COMMITTED_RESULTS) / notebook / profile, "")
    rows = []
    for f in sorted(base.glob("*/*.pt")):
        row = {"sweep": f.parent.name, "unit": f.stem}
        try:
            saved = load_state(f, "cpu")
            sittings = saved.get("sittings", [])
            row.update(step=int(saved["step"]), saved=str(saved.get("time", "")),
                       sittings=len(sittings), s=total_wall(0.0, sittings))
        except Exception as e:  # noqa: BLE001 - the plan reports it; the run sets it aside
            row["error"] = type(e).__name__
        rows.append(row)
    return rows


def unit_key(unit) -> str:
    """The hash of a unit: one configuration (a dict) or a group of them (a list)."""
    if isinstance(unit, dict):
        return config_key(unit)
    return config_key({"unit": [config_key(c) for c in unit]})


def _current(saved, modules) -> bool:
    """Whether fingerprint ``saved`` matches the code now, over ``modules`` (None: every module
    it recorded); a module gone or missing from ``saved`` counts as changed."""
    if not isinstance(saved, dict):
        return False
    names = sorted(set(modules) if modules is not None
                   else (m for m in saved if m.startswith("attnbook.")))
    now = code_fingerprint(names)
    return bool(names) and all(saved.get(m) is not None and saved.get(m) == now.get(m)
                               for m in names)


@dataclass
class Checkpoint:
    """The checkpoint file of one unit of work, and when to save it (see the module)."""

    path: Path | None  # None: save nothing (a read-only run)
    every_s: float = DEFAULT_EVERY_S
    deadline: float | None = None  # seconds since the epoch (the run's time budget)
    label: str = "unit"  # what the unit is, for messages
    modules: list[str] | None = None  # the code the unit can run; None: every module loaded
    saves: int = field(default=0, init=False)
    resumed_step: int | None = field(default=None, init=False)
    _last_save: float = field(default_factory=time.monotonic, init=False, repr=False)
    _last_tick: float | None = field(default=None, init=False, repr=False)
    earlier: list = field(default_factory=list, init=False)  # sittings before this one
    device: str = field(default="", init=False)  # this sitting's device (set by load)
    _started: float = field(default_factory=time.monotonic, init=False, repr=False)
    _step_s: float = field(default=0.0, init=False, repr=False)
    _save_s: float = field(default=1.0, init=False, repr=False)
    _resumed: bool = field(default=False, init=False, repr=False)  # load returned a state
    _ticked: bool = field(default=False, init=False, repr=False)  # a step ran this sitting

    def _present(self) -> bool:
        return self.path is not None and (self.path.exists() or self.path.is_symlink())

    def set_aside(self, why: str) -> Path | None:
        """Move whatever is at the path aside as ``<key>.pt.set-aside-<time>``, with one warning
        naming it and ``why``; where it went (None: nothing was there)."""
        if not self._present():
            return None
        dest = self.path.with_name(f"{self.path.name}.set-aside-"
                                   f"{time.strftime('%Y%m%dT%H%M%S')}-{os.getpid()}")
        try:
            os.replace(self.path, dest)
        except OSError as e:
            warnings.warn(f"checkpoint {self.path} {why}, and it cannot be moved aside "
                          f"({type(e).__name__}): remove it", stacklevel=3)
            raise
        warnings.warn(f"checkpoint {self.path} {why}: set aside as {dest.name}; {self.label} "
                      "starts over", stacklevel=3)
        return dest

    def run(self, fn, *args):
        """``fn(*args, self)``; a checkpoint its trainer cannot take (it fails after
        :meth:`load` and before its first step) is set aside and the unit runs again, once."""
        try:
            return fn(*args, self)
        except Exception as e:
            if not self._resumed or self._ticked:
                raise
            why = " ".join(str(e).split())[:160]
            self.set_aside(f"does not fit {self.label} ({type(e).__name__}: {why})")
            self.resumed_step, self.earlier, self._resumed = None, [], False
            return fn(*args, self)

    def load(self, device=None) -> dict | None:
        """The state of an earlier sitting, or None; ``device``: where this sitting runs."""
        self.device = describe_device(torch.device(device) if device is not None else
                                      torch.device("cpu"))
        if not self._present():
            return None
        if not self.path.is_file():
            self.set_aside("is not a file")
            return None
        try:
            saved = load_state(self.path, "cpu")
            if not isinstance(saved, dict) or not isinstance(saved.get("state"), dict) \
                    or not isinstance(saved.get("step"), int) \
                    or not isinstance(saved.get("sittings", []), list) \
                    or not all(isinstance(x, dict) and isinstance(x.get("device"), str)
                               for x in saved.get("sittings", [])):
                raise ValueError("not a checkpoint of this book")
        except UnsafeCheckpoint as e:  # never unpickled: discarded, so it is not tried again
            warnings.warn(f"checkpoint {self.path} {e}: discarded unread; {self.label} starts "
                          "over", stacklevel=2)
            self.path.unlink(missing_ok=True)
            return None
        except Exception as e:  # noqa: BLE001 - a damaged checkpoint is only lost time
            self.set_aside(f"is unreadable ({type(e).__name__})")
            return None
        if not _current(saved.get("fingerprint"), self.modules):
            self.set_aside("was written by code that has changed since")
            return None
        self.resumed_step = int(saved["step"])
        self.earlier = list(saved.get("sittings", []))
        kinds = {s["device"].split(":")[0] for s in self.earlier} - {self.device.split(":")[0]}
        if kinds:
            warnings.warn(f"checkpoint {self.path} was written on {', '.join(sorted(kinds))} and "
                          f"{self.label} resumes on {self.device}: the result will equal neither "
                          "device's uninterrupted run to the bit (its record lists both)",
                          stacklevel=2)
        self._resumed = True
        return saved["state"]

    def tick(self, step: int, state) -> None:
        """After step ``step`` (steps done so far): save if due; stop before the deadline."""
        now = time.monotonic()
        self._ticked = True
        if self._last_tick is not None:  # the slowest recent step (evaluations included)
            self._step_s = max(now - self._last_tick, 0.9 * self._step_s)
        self._last_tick = now
        stop = False
        if self.deadline is not None:
            left = self.deadline - time.time()
            stop = left <= 3 * self._step_s + 2 * self._save_s + 1.0
        if self.path is not None and (stop or now - self._last_save >= self.every_s):
            self.save(step, state())
        if stop:
            raise BudgetExhausted(f"time budget: {self.label} checkpointed at step {step}"
                                  + (f" ({self.path.name})" if self.path is not None else ""))

    def save(self, step: int, state: dict) -> None:
        """Write ``state`` (after ``step`` steps) atomically."""
        if self.path is None:
            return
        t0 = time.monotonic()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(f".tmp{os.getpid()}")
        fingerprint = code_fingerprint(self.modules)
        sitting = {"device": self.device or describe_device(torch.device("cpu")),
                   "s": round(t0 - self._started, 3), "step": int(step)}
        torch.save({"step": int(step), "state": state, "fingerprint": fingerprint,
                    "sittings": [*self.earlier, sitting],
                    "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}, tmp)
        os.replace(tmp, self.path)
        self.saves += 1
        self._last_save = time.monotonic()
        self._save_s = max(self._last_save - t0, 0.1)

    def clear(self) -> None:
        """Delete the file (the unit's result is stored)."""
        if self.path is not None:
            self.path.unlink(missing_ok=True)


@dataclass
class Finished:
    """A checkpointed unit's result with its earlier sittings, as it travels back."""

    value: object
    earlier: list  # [{"device", "s", "step"}] of the earlier sittings; [] if not resumed
