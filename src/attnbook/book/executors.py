"""Where the units of a sweep are computed. An executor's ``map(fn, units)`` yields (unit,
result, wall seconds) per unit, in any order; :meth:`~attnbook.book.notebook.Sweep.run` stores
each result the moment an executor yields it.
:class:`LocalExecutor` computes here, one unit after another; :class:`ProcessExecutor` in worker
processes of one thread each (``ATTNBOOK_WORKERS``, :func:`default_executor`). Every trainer
seeds its own generators, so neither the process nor the order of units enters a result.
"""

import multiprocessing
import os
import pickle
import shutil
import sys
import time
import warnings
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait

from ..errors import ParameterError, check_int
from ..progress import progress_bar

__all__ = ["LocalExecutor", "ProcessExecutor", "default_executor",
           "deterministic_kernels", "compile_toolchain", "ENV_WORKERS"]

ENV_WORKERS = "ATTNBOOK_WORKERS"  # worker processes for a sweep's units (unset or 1: in-process)


class LocalExecutor:
    """One unit after another in this process, with a progress bar over the units.

    >>> list(LocalExecutor(progress=False).map(lambda c: c["x"] + 1, [{"x": 1}]))[0][:2]
    ({'x': 1}, 2)
    """

    def __init__(self, progress: bool = True, desc: str = "runs", unit: str = "run"):
        self.progress, self.desc, self.unit = progress, desc, unit

    def map(self, fn, units):
        units = list(units)
        for u in progress_bar(units, desc=self.desc, unit=self.unit,
                              disable=not self.progress or not units):
            t0 = time.perf_counter()
            result = fn(u)
            yield u, result, time.perf_counter() - t0


def deterministic_kernels() -> None:
    """Ask torch for deterministic kernels, strictly: on CUDA, attention's backward takes its
    deterministic algorithm only then (under ``warn_only`` two runs could differ)."""
    import torch

    os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")  # needed for determinism on CUDA
    torch.use_deterministic_algorithms(True)


def compile_toolchain(device_type: str) -> str:
    """What ``torch.compile`` lacks here to build its kernels on ``device_type``: "" when
    nothing, else the compiler it needs, in words. On the CPU, inductor compiles C++ with
    ``$CXX``, else ``g++`` (``clang++`` on macOS); on a GPU, Triton builds its launcher with
    ``$CC``, else ``gcc`` or ``clang``.

    >>> compile_toolchain("cpu") in ("", "the C++ compiler 'g++' on the PATH (or set $CXX)")
    True
    """
    if device_type == "cuda":
        cc = os.environ.get("CC")
        names = [cc] if cc else ["gcc", "clang"]
        words = (f"the C compiler {cc!r} ($CC) on the PATH" if cc
                 else "a C compiler on the PATH (gcc or clang, or set $CC)")
    else:
        names = [os.environ.get("CXX") or ("clang++" if sys.platform == "darwin" else "g++")]
        words = f"the C++ compiler {names[0]!r} on the PATH (or set $CXX)"
    return "" if any(shutil.which(n) for n in names) else words


def _start_worker(threads: int) -> None:
    import torch

    os.environ["ATTNBOOK_THREADS"] = str(threads)
    torch.set_num_threads(threads)
    deterministic_kernels()  # a worker computes as the notebook's own process would


_SENT: dict[bytes, Callable] = {}  # a worker's functions received by value, by their bytes


def _timed(fn, unit):
    if isinstance(fn, bytes):  # sent by value (cloudpickle): loaded once per worker
        if fn not in _SENT:
            import cloudpickle

            _SENT[fn] = cloudpickle.loads(fn)
        fn = _SENT[fn]
    t0 = time.perf_counter()
    result = fn(unit)
    return result, time.perf_counter() - t0


def _sendable(fn, units) -> Callable | bytes:
    """``fn`` as a worker receives it: itself when it pickles by reference, else by value
    with cloudpickle (a closure, a notebook's function). Raises when it or the units cannot."""
    pickle.dumps(units)
    try:
        pickle.dumps(fn)
        return fn
    except Exception:  # noqa: BLE001 - a closure or a notebook's own function
        import cloudpickle

        return cloudpickle.dumps(fn)


class ProcessExecutor(LocalExecutor):
    """Units in ``workers`` spawned processes of ``threads`` torch threads each. A unit is
    handed out only when a worker is free and the sweep asks for the next result, so the
    budget check runs before every unit; a unit's exception reaches the sweep as it would
    locally. A ``fn`` that cannot be sent (:func:`_sendable`) is computed here, with a warning.

    >>> ex = ProcessExecutor(workers=2, progress=False)
    >>> sorted(r for _, r, _ in ex.map(abs, [-1, -2, -3]))
    [1, 2, 3]
    """

    def __init__(self, workers: int = 2, threads: int = 1, progress: bool = True,
                 desc: str = "runs", unit: str = "run"):
        self.workers = check_int("workers", workers, 1)
        self.threads = check_int("threads", threads, 1)
        super().__init__(progress, desc, unit)

    def map(self, fn, units):
        units = list(units)
        if not units:
            return
        try:
            fn = _sendable(fn, units)
        except Exception as e:  # noqa: BLE001 - whatever pickling raises
            warnings.warn(f"{self.desc}: its units cannot be sent to worker processes "
                          f"({type(e).__name__}); computed here, one after another",
                          stacklevel=3)
            yield from super().map(fn, units)
            return

        todo = iter(units)
        running: dict = {}
        pool = ProcessPoolExecutor(max_workers=min(self.workers, len(units)),
                                   mp_context=multiprocessing.get_context("spawn"),
                                   initializer=_start_worker, initargs=(self.threads,))
        bar = progress_bar(total=len(units), desc=self.desc, unit=self.unit,
                           disable=not self.progress)

        def submit() -> None:
            for u in todo:
                running[pool.submit(_timed, fn, u)] = u
                return

        try:
            for _ in range(min(self.workers, len(units))):
                submit()
            while running:
                done, _ = wait(running, return_when=FIRST_COMPLETED)
                for future in done:
                    u = running.pop(future)
                    result, wall = future.result()
                    bar.update()
                    yield u, result, wall
                    submit()
        finally:
            bar.close()
            pool.shutdown(wait=True, cancel_futures=True)


def default_executor(progress: bool = True, desc: str = "runs", unit: str = "run"):
    """:class:`ProcessExecutor` of ``ATTNBOOK_WORKERS`` workers when above 1, else local."""
    text = os.environ.get(ENV_WORKERS, "").strip()
    if text and (not text.isdigit() or int(text) < 1):
        raise ParameterError(ENV_WORKERS, text[:40], "an integer >= 1")
    if text and int(text) > 1:
        return ProcessExecutor(int(text), 1, progress=progress, desc=desc, unit=unit)
    return LocalExecutor(progress=progress, desc=desc, unit=unit)
