"""The depth-efficiency point: the size from which a deep family beats a shallow one.

levine2020 (Levine et al. 2020, "Limits to Depth Efficiencies of Self-Attention") and wies2021
(Wies et al. 2021, "Which Transformer Architecture Fits My Data? A Vocabulary Bottleneck in
Self-Attention") train a shallow and a deep family of Transformer language models over a range
of sizes (non-embedding parameter count, or width) and locate the *depth-efficiency point*:
the size below which the shallow family wins or ties and above which the deep family reaches
a lower test loss. levine2020 ties it to the width (deepening pays off once the depth is
below about log_3 of the width, so an estimated width is compared with 3^L, or a depth with
log_3 of the width); wies2021 to the vocabulary size V (an estimated width is compared with
V). :meth:`Crossing.ratio` divides the estimate by such a prediction.

:func:`depth_efficiency_point` estimates that size from per-seed losses of the two families
and :func:`crossing_from_frame` does the same from a long table (columns size, family, seed,
loss). Both return a :class:`Crossing`:

* the **point**: where the deep family starts to win beyond the seed noise: where the
  seed-mean gap ``deep - shallow`` plus ``band`` standard errors changes sign from >= 0 (the
  shallow family wins, or the two tie: the gap is within ``band`` standard errors of zero or
  above) to < 0 (deep wins beyond the band), by linear interpolation in log size. The standard
  error of the gap at a size comes from the seeds, sqrt(var_shallow / n_shallow + var_deep /
  n_deep) (zero with one seed, so ``band`` then changes nothing). ``band = 0`` is the plain
  sign change of the gap. Sizes are compared in log size, and two families measured at
  different sizes are put on a common grid (the union of their sizes inside the range both
  cover) by linear interpolation in log size, their variances with the squared weights;
* **multiple sign changes**: the point is the *last* change from shallow-wins to deep-wins,
  after which deep keeps winning up to the largest size. If shallow wins or ties at the
  largest size there is no such change and no crossing is reported (``sign_changes`` counts
  all changes, so such curves are visible);
* **no crossing in range**: ``found`` is False with a reason (deep never wins in range; deep
  wins at every size in range, so the crossing is below the smallest size; deep does not win
  at the largest size). Nothing is ever extrapolated outside the measured range;
* the **interval**: a seeded bootstrap over seeds (for each family and size, resample that
  size's seeds with replacement, recompute the crossing). ``low``/``high`` are the lower and
  upper ``(1 - level)/2`` order statistics of the replicate crossings (widened, if rounding
  requires it, to contain the point), where a replicate with no crossing counts as below the
  range (deep wins everywhere) or above it (otherwise). A bound
  that falls on such a replicate is reported as the range edge with ``low_open``/``high_open``
  set: the interval runs out of the measured range on that side. ``found_fraction`` is the
  fraction of replicates that found a crossing (each replicate's gap with the band of the
  measured standard errors); a crossing found by few replicates is not established, whatever
  its point. The bootstrap only measures seed-to-seed
  noise; with a single seed in either family there is none to resample, and the interval is
  reported as unavailable (``low``, ``high``, ``found_fraction`` are None).


Used by: levine2020_depth_transition, wies2021_depth_efficiency, wies2021_vocab_rank.

>>> sizes = [1e6, 4e6, 16e6, 64e6]
>>> shallow = [[4.0, 4.1], [3.6, 3.7], [3.4, 3.5], [3.3, 3.4]]  # sizes x seeds
>>> deep = [[4.3, 4.4], [3.7, 3.8], [3.3, 3.4], [3.0, 3.1]]
>>> c = depth_efficiency_point(sizes, shallow, sizes, deep, seed=0)
>>> c.found, round(c.point / 1e6, 2), c.direction
(True, 8.0, 'shallow->deep')
"""

import math
import numbers
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..errors import ParameterError

__all__ = ["LEVEL", "Crossing", "depth_efficiency_point", "crossing_from_frame", "gap_difference"]

LEVEL = 0.95  # the bootstrap interval's coverage unless a caller asks for another

_NEVER = "deep never wins in range{}"
_ALWAYS = "deep wins at every size in range{} (crossing below the smallest size)"
_NOT_LAST = ("deep does not win at the largest size of the range{} (it wins only inside it: "
             "no crossing after which deep keeps winning)")


@dataclass(frozen=True)
class Crossing:
    """Where a deep family overtakes a shallow one (see the module docstring for the rules).

    ``point``, ``low`` and ``high`` are sizes in the units given (None when unavailable);
    ``direction`` is "<winner at the smallest size>-><winner at the largest size>", the winner
    being "deep" where the seed-mean gap deep - shallow is < 0 and "shallow" where it is >= 0;
    ``sizes`` and ``gap`` are the common grid and the seed-mean gap on it.

    >>> c = Crossing(True, 8.0, 6.0, 11.0, "shallow->deep", "deep wins from 8 on")
    >>> c.contains(10.0), c.ratio(4.0)
    (True, (2.0, 1.5, 2.75))
    """

    found: bool
    point: float | None
    low: float | None
    high: float | None
    direction: str
    reason: str
    found_fraction: float | None = None
    low_open: bool = False
    high_open: bool = False
    level: float = LEVEL
    n_boot: int = 0
    n_seeds: tuple[int, int] = (1, 1)
    sign_changes: int = 0
    sizes: tuple[float, ...] = ()
    gap: tuple[float, ...] = ()
    se: tuple[float, ...] = ()  # the gap's standard error from the seeds, per size
    band: float = 0.0  # standard errors of the gap that count as a tie

    def deep_ahead(self) -> tuple[bool, ...]:
        """Per size of the common grid, whether the deep family wins beyond the tie band
        (gap + band * se < 0), the winner the crossing is located from.

        >>> Crossing(False, None, None, None, "", "", gap=(0.1, -0.01, -0.2), se=(0.01,) * 3,
        ...          band=2.0).deep_ahead()
        (False, False, True)
        """
        return tuple(bool(g + self.band * s < 0) for g, s in zip(self.gap, self.se, strict=True))

    def contains(self, value: float) -> bool:
        """Whether ``value`` lies in [low, high] (False when there is no interval)."""
        if self.low is None or self.high is None:
            return False
        return self.low <= value <= self.high

    def ratio(self, prediction: float) -> tuple[float | None, float | None, float | None]:
        """(point, low, high) divided by a predicted size, e.g. V (wies2021); None stays None."""
        if isinstance(prediction, bool) or not isinstance(prediction, numbers.Real) \
                or not (math.isfinite(prediction) and prediction > 0):
            raise ParameterError("prediction", prediction, "a finite number > 0")
        return tuple(None if v is None else v / prediction  # type: ignore[return-value]
                     for v in (self.point, self.low, self.high))

    def __str__(self) -> str:
        if not self.found:
            return f"no crossing in range: {self.reason}"
        s = f"depth-efficiency point {self.point:.4g}"
        if self.low is not None:
            lo = ("<=" if self.low_open else "") + f"{self.low:.4g}"
            hi = (">=" if self.high_open else "") + f"{self.high:.4g}"
            s += f" ({self.level:.0%} bootstrap interval {lo} .. {hi}, " \
                 f"crossing in {self.found_fraction:.0%} of {self.n_boot} replicates)"
        return s


# -- validation -----------------------------------------------------------------------------

def _sizes(name: str, sizes) -> np.ndarray:
    try:
        s = np.asarray(sizes, dtype=float)
    except (TypeError, ValueError):
        raise ParameterError(name, sizes, "a 1-D sequence of numbers") from None
    if s.ndim != 1:
        raise ParameterError(name, f"array of shape {s.shape}", "a 1-D sequence of sizes")
    if len(s) < 2:
        raise ParameterError(name, s.tolist(), "at least 2 sizes")
    if not np.all(np.isfinite(s)):
        raise ParameterError(name, s.tolist(), "finite sizes", problem="has non-finite values")
    if not np.all(s > 0):
        raise ParameterError(name, s.tolist(), "sizes > 0 (they are compared in log size)")
    if len(np.unique(s)) != len(s):
        raise ParameterError(name, s.tolist(), "distinct sizes", problem="has repeated sizes")
    return s


def _losses(name: str, losses, n: int) -> np.ndarray:
    try:
        a = np.asarray(losses, dtype=float)
    except (TypeError, ValueError):
        raise ParameterError(name, losses, "a sizes x seeds array of numbers") from None
    if a.ndim == 1:
        a = a[:, None]
    if a.ndim != 2 or a.shape[0] != n or a.shape[1] < 1:
        raise ParameterError(name, f"array of shape {a.shape}",
                             f"shape ({n},) or ({n}, seeds): one row per size")
    if not np.all(np.isfinite(a)):
        raise ParameterError(name, f"array with {int(np.sum(~np.isfinite(a)))} non-finite "
                             "values", "finite losses", problem="has non-finite values")
    return a


def _interp_matrix(src: np.ndarray, dst: np.ndarray) -> np.ndarray:
    """W with W @ f(src) = f interpolated linearly at dst (all in log size, dst inside src)."""
    W = np.zeros((len(dst), len(src)))
    j = np.clip(np.searchsorted(src, dst, side="right") - 1, 0, len(src) - 2)
    t = (dst - src[j]) / (src[j + 1] - src[j])
    W[np.arange(len(dst)), j] = 1 - t
    W[np.arange(len(dst)), j + 1] = t
    return W


# -- the crossing ---------------------------------------------------------------------------

def _crossings(gap: np.ndarray, logx: np.ndarray):
    """Per row of gap (replicates x grid): (found, log point, below) by the last-change rule.

    ``below`` marks rows where deep wins at every size (no crossing, crossing below range).
    """
    nonneg = gap >= 0
    any_nonneg = nonneg.any(axis=1)
    G = gap.shape[1]
    k = G - 1 - np.argmax(nonneg[:, ::-1], axis=1)  # last size where shallow wins or ties
    found = any_nonneg & (k < G - 1)
    kk = np.minimum(k, G - 2)
    g0 = gap[np.arange(len(gap)), kk]
    g1 = gap[np.arange(len(gap)), kk + 1]
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(found, g0 / (g0 - g1), 0.0)  # g0 >= 0 > g1 where found
    point = logx[kk] + t * (logx[kk + 1] - logx[kk])
    return found, np.where(found, point, np.nan), ~any_nonneg


def depth_efficiency_point(shallow_sizes, shallow_losses, deep_sizes, deep_losses, *,
                           n_boot: int = 2000, level: float = LEVEL, seed: int = 0,
                           band: float = 0.0) -> Crossing:
    """The size from which the deep family has the lower test loss (module docstring: rules).

    ``*_sizes``: 1-D sizes of each family (e.g. non-embedding parameters or width; > 0,
    distinct, any order); ``*_losses``: losses as a sizes x seeds array (a 1-D array is one
    seed). The families may use different sizes and seed counts; only the range both cover is
    compared. ``n_boot`` bootstrap replicates over seeds (0: no interval) drawn from
    ``numpy.random.default_rng(seed)`` give the ``level`` interval, so the result is
    deterministic for a fixed ``seed``. ``band``: how many standard errors of the gap count
    as a tie (>= 0).

    >>> s = [10, 100, 1000]
    >>> depth_efficiency_point(s, [3.0, 2.0, 1.0], s, [3.5, 2.5, 1.5]).reason
    'deep never wins in range [10, 1000]'
    >>> round(depth_efficiency_point(s, [3.0, 2.0, 1.0], s, [3.5, 1.5, 0.5]).point, 6)  # sqrt(1000)
    31.622777
    >>> depth_efficiency_point(s, [3.0, 2.0, 1.0], s, [3.5, 1.5, 0.5]).low is None  # one seed
    True
    """
    xs, xd = _sizes("shallow_sizes", shallow_sizes), _sizes("deep_sizes", deep_sizes)
    ls, ld = _losses("shallow_losses", shallow_losses, len(xs)), \
        _losses("deep_losses", deep_losses, len(xd))
    if isinstance(n_boot, bool) or not isinstance(n_boot, (int, np.integer)) or n_boot < 0:
        raise ParameterError("n_boot", n_boot, "an integer >= 0")
    if not (isinstance(level, (int, float)) and 0 < level < 1):
        raise ParameterError("level", level, "a number in (0, 1), e.g. 0.95")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise ParameterError("seed", seed, "an integer")
    if isinstance(band, bool) or not isinstance(band, (int, float)) or not (
            math.isfinite(band) and band >= 0):
        raise ParameterError("band", band, "a finite number >= 0 (standard errors)")
    os_, od = np.argsort(xs), np.argsort(xd)
    xs, ls, xd, ld = xs[os_], ls[os_], xd[od], ld[od]
    lo, hi = max(xs[0], xd[0]), min(xs[-1], xd[-1])
    if not lo < hi:
        raise ParameterError("deep_sizes", xd.tolist(), f"a range overlapping shallow_sizes "
                             f"{xs.tolist()} in more than one size")
    raw = np.unique(np.concatenate([xs, xd]))
    raw = raw[(raw >= lo) & (raw <= hi)]  # the common grid: no extrapolation
    grid = np.log(raw)
    Ws, Wd = _interp_matrix(np.log(xs), grid), _interp_matrix(np.log(xd), grid)

    gap = Wd @ ld.mean(axis=1) - Ws @ ls.mean(axis=1)
    se = np.sqrt((Ws ** 2) @ _mean_var(ls) + (Wd ** 2) @ _mean_var(ld))
    shift = band * se  # deep wins where gap + shift < 0: beyond the band of noise
    found, logp, below = (v[0] for v in _crossings((gap + shift)[None], grid))
    sizes = tuple(float(v) for v in raw)
    winners = np.where(gap + shift < 0, "deep", "shallow")
    common = dict(direction=f"{winners[0]}->{winners[-1]}", level=float(level),
                  n_seeds=(ls.shape[1], ld.shape[1]),
                  sign_changes=int(np.sum(winners[1:] != winners[:-1])),
                  sizes=sizes, gap=tuple(float(v) for v in gap),
                  se=tuple(float(v) for v in se), band=float(band))
    rng_txt = f" [{sizes[0]:.4g}, {sizes[-1]:.4g}]"
    if not found:
        reason = (_ALWAYS if below else _NEVER if not (gap < 0).any() else _NOT_LAST)
        frac = None
        if n_boot > 0 and min(ls.shape[1], ld.shape[1]) >= 2:
            frac = float(np.mean(_bootstrap(ls, ld, Ws, Wd, grid, n_boot, seed, shift)[0]))
        return Crossing(False, None, None, None, reason=reason.format(rng_txt),
                        found_fraction=frac,
                        n_boot=n_boot if frac is not None else 0, **common)

    k = int(np.searchsorted(grid, logp, side="right")) - 1
    beyond = f" beyond {band:g} standard errors" if band else ""
    reason = (f"deep wins{beyond} from {math.exp(logp):.4g} on (between measured sizes "
              f"{sizes[k]:.4g} and {sizes[min(k + 1, len(sizes) - 1)]:.4g})")
    point = float(math.exp(logp))
    if n_boot == 0 or min(ls.shape[1], ld.shape[1]) < 2:
        why = "n_boot = 0" if n_boot == 0 else "one seed: nothing to resample"
        return Crossing(True, point, None, None, reason=f"{reason}; interval unavailable "
                        f"({why})", **common)
    bfound, blogp, bbelow = _bootstrap(ls, ld, Ws, Wd, grid, n_boot, seed, shift)
    # replicates without a crossing sit beyond the range: below it, or above it
    vals = np.where(bfound, blogp, np.where(bbelow, -np.inf, np.inf))
    q = (1 - level) / 2
    vlo = float(np.quantile(vals, q, method="lower"))
    vhi = float(np.quantile(vals, 1 - q, method="higher"))
    low_open, high_open = not math.isfinite(vlo), not math.isfinite(vhi)
    low = sizes[0] if low_open else min(point, math.exp(vlo))
    high = sizes[-1] if high_open else max(point, math.exp(vhi))
    return Crossing(True, point, float(low), float(high), reason=reason,
                    found_fraction=float(np.mean(bfound)), low_open=low_open,
                    high_open=high_open, n_boot=n_boot, **common)


def _mean_var(a: np.ndarray) -> np.ndarray:
    """Per size (row): the variance of the seed mean, var / n (0 with one seed)."""
    if a.shape[1] < 2:
        return np.zeros(a.shape[0])
    return a.var(axis=1, ddof=1) / a.shape[1]


def _bootstrap(ls, ld, Ws, Wd, grid, n_boot, seed, shift=0.0):
    """Crossings of ``n_boot`` replicates resampling each size's seeds with replacement (each
    replicate's gap moved by ``shift``, the measured band)."""
    rng = np.random.default_rng(seed)

    def means(a):
        S, R = a.shape
        idx = rng.integers(0, R, size=(n_boot, S, R))
        return a[np.arange(S)[None, :, None], idx].mean(axis=2)  # replicates x sizes

    gap = means(ld) @ Wd.T - means(ls) @ Ws.T
    return _crossings(gap + shift, grid)


def crossing_from_frame(frame: pd.DataFrame, *, shallow: str = "shallow", deep: str = "deep",
                        size: str = "size", family: str = "family", seed_col: str = "seed",
                        loss: str = "loss", **kwargs) -> Crossing:
    """:func:`depth_efficiency_point` from a long table, one row per (size, family, seed).

    ``shallow`` and ``deep`` name the two families in column ``family``; every size of a family
    needs the same seeds, each once. ``kwargs`` go to :func:`depth_efficiency_point`
    (``n_boot``, ``level``, ``seed``).

    >>> df = pd.DataFrame({"size": [10, 100, 1000] * 2, "family": ["shallow"] * 3 + ["deep"] * 3,
    ...                    "seed": 0, "loss": [3.0, 2.0, 1.0, 3.5, 1.5, 0.5]})
    >>> round(crossing_from_frame(df).point, 3)
    31.623
    """
    if not isinstance(frame, pd.DataFrame):
        raise ParameterError("frame", type(frame).__name__, "a pandas DataFrame")
    missing = [c for c in (size, family, seed_col, loss) if c not in frame.columns]
    if missing:
        raise ParameterError("frame", sorted(map(str, frame.columns)),
                             f"columns {size}, {family}, {seed_col}, {loss} (missing: "
                             f"{', '.join(missing)})", problem="lacks columns")
    arrays = []
    for name in (shallow, deep):
        part = frame[frame[family] == name]
        if part.empty:
            raise ParameterError(family, sorted(map(str, frame[family].unique())),
                                 f"values including {name!r}", problem="lacks a family")
        if part.duplicated([size, seed_col]).any():
            raise ParameterError("frame", name, f"one row per ({size}, {seed_col}) of a family",
                                 problem="has repeated rows in family")
        wide = part.pivot(index=size, columns=seed_col, values=loss)
        if len(part) != wide.size:
            raise ParameterError("frame", name, f"the same {seed_col}s at every {size}",
                                 problem="has missing seeds in family")
        arrays += [wide.index.to_numpy(), wide.to_numpy()]
    return depth_efficiency_point(*arrays, **kwargs)


def gap_difference(a: Crossing, b: Crossing) -> pd.DataFrame:
    """Per size shared by two crossings' grids: ``a``'s gap minus ``b``'s (``diff``) and its
    standard error ``se`` (the two measured on different nets: sqrt(se_a^2 + se_b^2)).

    Two settings whose gap curves differ by a constant (one vocabulary harder for both
    families, say) have a constant ``diff``; what moves a transition is how ``diff`` changes
    with size: ``diff`` at the largest shared size minus at the smallest, with its standard
    error, is a difference in differences that no constant offset moves.

    >>> a = Crossing(True, 1.0, None, None, "", "", sizes=(1.0, 2.0), gap=(0.1, -0.2),
    ...              se=(0.03, 0.04))
    >>> b = Crossing(False, None, None, None, "", "", sizes=(1.0, 2.0), gap=(0.1, 0.1),
    ...              se=(0.04, 0.03))
    >>> gap_difference(a, b).round(3).to_dict("list")
    {'size': [1.0, 2.0], 'diff': [0.0, -0.3], 'se': [0.05, 0.05]}
    """
    ga = dict(zip(a.sizes, zip(a.gap, a.se or (0.0,) * len(a.gap), strict=True), strict=True))
    gb = dict(zip(b.sizes, zip(b.gap, b.se or (0.0,) * len(b.gap), strict=True), strict=True))
    shared = sorted(set(ga) & set(gb))
    return pd.DataFrame({"size": shared,
                         "diff": [ga[x][0] - gb[x][0] for x in shared],
                         "se": [math.hypot(ga[x][1], gb[x][1]) for x in shared]})
