"""Bootstrap resamples of counts from random draws, for the stability of a verdict decided from
them (CONTRIBUTING.md, the stability rule): each count of successes in N independent draws is
drawn again as Binomial(N, observed share), and the verdict's own criterion decides every
resample. The share of resamples whose verdict agrees is the verdict's stability.

What it cannot show: a count of all successes or of none resamples to itself, so the bootstrap
measures the noise of a share only where the draws disagreed; a share of 1 from N draws is
stable here however small N is (its Clopper-Pearson bound says how small).

Used by: mahdavi2024_real_models.
"""

import numpy as np

from .errors import AttnbookError

__all__ = ["RESAMPLES", "binomial_resamples", "resample_verdicts"]

RESAMPLES = 1000  # bootstrap resamples per verdict: one overturned in 1000 makes it fragile


def _counts(successes, draws) -> tuple[np.ndarray, np.ndarray]:
    x = np.asarray(successes, dtype=np.int64).reshape(-1)
    N = np.asarray(draws, dtype=np.int64).reshape(-1)
    if x.shape != N.shape:
        raise AttnbookError(f"{x.size} counts of successes for {N.size} counts of draws")
    bad = [(int(a), int(b)) for a, b in zip(x, N, strict=True) if not 0 <= a <= b]
    if bad:
        raise AttnbookError(f"successes outside 0..draws: {bad[:3]}")
    return x, N


def binomial_resamples(successes, draws, resamples: int = RESAMPLES, *, seed: int
                       ) -> np.ndarray:
    """``resamples`` bootstrap resamples of the counts, shape (resamples, m): count i drawn again
    as Binomial(``draws[i]``, ``successes[i] / draws[i]``) (a count of 0 draws stays 0), from
    ``numpy.random.default_rng(seed)``.

    >>> r = binomial_resamples([3, 10, 0], [10, 10, 0], 4, seed=0)
    >>> r.shape, r[:, 1].tolist(), r[:, 2].tolist()
    ((4, 3), [10, 10, 10, 10], [0, 0, 0, 0])
    >>> bool((binomial_resamples([3], [10], 4, seed=0) == r[:, :1]).all())
    False
    """
    x, N = _counts(successes, draws)
    if int(resamples) < 1:
        raise AttnbookError(f"resamples = {resamples}: at least 1")
    p = np.divide(x, N, out=np.zeros(x.shape, dtype=float), where=N > 0)
    return np.random.default_rng(seed).binomial(N, p, size=(int(resamples), x.size))


def resample_verdicts(decide, successes, draws, resamples: int = RESAMPLES, *, seed: int
                      ) -> dict:
    """``{"resample i": decide(counts)}`` over :func:`binomial_resamples`: ``decide`` gets the
    resampled successes (a list of ints, in the order of ``successes``) and returns the
    verdict of the same criterion that decided the observed counts.

    A share of 198/200 against 0.99 holds in about two resamples of three (P(X >= 198) = 0.68
    for X ~ Binomial(200, 0.99)):

    >>> v = resample_verdicts(lambda c: c[0] / 200 >= 0.99, [198], [200], 1000, seed=0)
    >>> len(v), 0.6 < sum(v.values()) / len(v) < 0.75
    (1000, True)
    >>> set(resample_verdicts(lambda c: c[0] >= 198, [200], [200], 10, seed=0).values())
    {True}
    """
    counts = binomial_resamples(successes, draws, resamples, seed=seed)
    return {f"resample {i}": decide([int(c) for c in row]) for i, row in enumerate(counts)}
