"""Where the configurations of a sweep are computed: the :class:`Executor` interface.

:meth:`attnbook.book.notebook.Sweep.run` hands an executor the work a sweep still lacks and
stores each result the moment the executor yields it, so an interrupted sweep loses no finished
configuration. A unit of work is one configuration, or one group of configurations computed
together (stacked models), whatever ``fn`` takes. :class:`LocalExecutor` computes the units one
after another in this process; an executor for a cluster only has to implement
:meth:`Executor.map`.
"""

import time
from collections.abc import Callable, Iterable, Iterator
from typing import Protocol

from ..progress import progress_bar

__all__ = ["Executor", "LocalExecutor"]


class Executor(Protocol):
    """Computes ``fn(unit)`` for each unit of work, yielding results as they finish."""

    def map(self, fn: Callable, units: Iterable) -> Iterator[tuple[object, object, float]]:
        """Yield (unit, result, wall seconds) per unit, in any order."""
        ...


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
