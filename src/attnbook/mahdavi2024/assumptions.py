"""Linear-independence assumptions on attention inputs (mahdavi2024, Section 4 and Section 5.1).

Covers the numerical rank with a stated, scale-aware tolerance; the Kruskal rank of a set of
vectors (mahdavi2024, Definition 1), exactly by subset enumeration for small sets and by the
paper's randomized test (Section 5.1: sample k vectors, check rank k, pass if >= 99% of 5000
draws do) for large ones; General Position (Definition 2); and Assumptions 1, 2 and 3.

Vectors are the rows of a ``(m, d)`` array (torch or numpy); contexts are ``(T, n, d)``.
Everything is computed in float64 on the array's device. The functions are meant for any
set of vectors, including the token representations of real models.

Used by: mahdavi2024_theory.
"""

import math
from dataclasses import dataclass
from itertools import combinations, islice

import numpy as np
import torch

from ..engines.linalg import numerical_rank
from ..errors import AttnbookError, ParameterError

__all__ = ["AssumptionCheck", "kruskal_rank",
           "kruskal_rank_at_least", "general_position", "assumption1", "assumption2",
           "assumption3"]

EXACT_SUBSET_LIMIT = 200_000  # above this many k-subsets, "auto" switches to the randomized test
_CHUNK = 20_000  # subsets per batched SVD


@dataclass(frozen=True)
class AssumptionCheck:
    """The verdict of one test: ``bool(check)`` is whether it holds, ``detail`` says why."""

    name: str
    holds: bool
    method: str  # "exact", "randomized" or "rank"
    detail: str

    def __bool__(self) -> bool:
        return bool(self.holds)


def _as_f64(x, name: str, ndim: int) -> torch.Tensor:
    if isinstance(x, np.ndarray) or not isinstance(x, torch.Tensor):
        x = torch.as_tensor(np.asarray(x))
    x = x.to(torch.float64)
    if x.ndim != ndim:
        raise ParameterError(name, f"tensor of shape {tuple(x.shape)}", f"a {ndim}-d array")
    if not torch.isfinite(x).all():
        raise ParameterError(name, "an array with NaN/inf", "finite values")
    return x


def _subsets_independent(V: torch.Tensor, k: int) -> tuple[bool, tuple | None, int]:
    """Whether every k-subset of the rows of V is independent; first dependent subset if not."""
    m = V.shape[0]
    checked = 0
    it = combinations(range(m), k)
    while True:
        chunk = list(islice(it, _CHUNK))
        if not chunk:
            return True, None, checked
        idx = torch.tensor(chunk, device=V.device)  # (S, k)
        ranks = numerical_rank(V[idx])  # V[idx]: (S, k, d)
        checked += len(chunk)
        bad = (ranks < k).nonzero()
        if len(bad):
            return False, chunk[int(bad[0])], checked


def kruskal_rank(vectors) -> int:
    """Largest k such that every k of the rows are linearly independent (exact enumeration).

    Implements mahdavi2024, Definition 1; cost grows like C(m, k), so this is for small sets.

    >>> kruskal_rank([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [1.0, 1.0, 0.0]])
    2
    >>> kruskal_rank([[1.0, 0.0], [2.0, 0.0], [0.0, 1.0]])
    1
    """
    V = _as_f64(vectors, "vectors", 2)
    m, d = V.shape
    k = 0
    for size in range(1, min(m, d) + 1):
        if math.comb(m, size) > EXACT_SUBSET_LIMIT:
            raise AttnbookError(
                f"exact Kruskal rank needs C({m}, {size}) = {math.comb(m, size)} subsets, more "
                f"than {EXACT_SUBSET_LIMIT}: use kruskal_rank_at_least(..., method='randomized')")
        ok, _, _ = _subsets_independent(V, size)
        if not ok:
            break
        k = size
    return k


def kruskal_rank_at_least(vectors, k: int, *, method: str = "auto", n_draws: int = 5000,
                          fraction: float = 0.99, seed: int = 0) -> AssumptionCheck:
    """Test Kruskal rank >= k: exact (all k-subsets) or randomized (mahdavi2024, Section 5.1).

    The randomized test samples ``n_draws`` random k-subsets and passes when at least
    ``fraction`` of them have rank k; it is what the paper used on real models, and it can pass
    a set whose exact Kruskal rank is lower. ``"auto"`` is exact up to 200,000 subsets.

    >>> bool(kruskal_rank_at_least([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [1.0, 1.0, 0.0]], 2))
    True
    >>> kruskal_rank_at_least([[1.0, 0.0], [2.0, 0.0], [0.0, 1.0]], 2).detail
    'rows (0, 1) are linearly dependent (exact test over 3 2-subsets)'
    """
    V = _as_f64(vectors, "vectors", 2)
    m, d = V.shape
    if method not in ("auto", "exact", "randomized"):
        raise ParameterError("method", method, "auto, exact or randomized")
    if not isinstance(k, int) or k < 0:
        raise ParameterError("k", k, "an integer >= 0")
    name = f"Kruskal rank >= {k}"
    if k == 0:
        return AssumptionCheck(name, True, "exact", "every set has Kruskal rank >= 0")
    if k > min(m, d):
        return AssumptionCheck(name, False, "exact",
                               f"{m} vectors in R^{d} have Kruskal rank <= {min(m, d)} < {k}")
    if method == "auto":
        method = "exact" if math.comb(m, k) <= EXACT_SUBSET_LIMIT else "randomized"
    if method == "exact":
        if math.comb(m, k) > EXACT_SUBSET_LIMIT:
            raise AttnbookError(f"exact test needs C({m}, {k}) = {math.comb(m, k)} subsets, more "
                                f"than {EXACT_SUBSET_LIMIT}: use method='randomized'")
        ok, bad, checked = _subsets_independent(V, k)
        if ok:
            return AssumptionCheck(name, True, "exact", f"all {checked} {k}-subsets independent")
        return AssumptionCheck(name, False, "exact",
                               f"rows {bad} are linearly dependent (exact test over "
                               f"{math.comb(m, k)} {k}-subsets)")
    if not (0 < fraction <= 1) or n_draws < 1:
        raise ParameterError("fraction, n_draws", (fraction, n_draws),
                             "0 < fraction <= 1, n_draws >= 1")
    g = torch.Generator().manual_seed(seed)
    idx = torch.stack([torch.randperm(m, generator=g)[:k] for _ in range(n_draws)])  # (n_draws, k)
    ranks = numerical_rank(V[idx.to(V.device)])  # (n_draws,)
    share = float((ranks == k).double().mean())
    return AssumptionCheck(name, share >= fraction, "randomized",
                           f"{share:.2%} of {n_draws} random {k}-subsets have rank {k} "
                           f"(pass at >= {fraction:.0%})")


def general_position(vectors, **kw) -> AssumptionCheck:
    """General Position: the maximal possible Kruskal rank min(m, d) (mahdavi2024, Definition 2).

    >>> bool(general_position([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]))
    True
    """
    V = _as_f64(vectors, "vectors", 2)
    c = kruskal_rank_at_least(V, min(V.shape), **kw)
    return AssumptionCheck("General Position", c.holds, c.method, c.detail)


def assumption1(queries, n: int, **kw) -> AssumptionCheck:
    """Assumption 1: the T query vectors (rows) have Kruskal rank at least n (mahdavi2024, Sec. 4).

    >>> bool(assumption1(torch.eye(3, dtype=torch.float64), n=3))
    True
    """
    c = kruskal_rank_at_least(_as_f64(queries, "queries", 2), n, **kw)
    return AssumptionCheck("Assumption 1", c.holds, c.method, c.detail)


def assumption2(contexts) -> AssumptionCheck:
    """Assumption 2: every context E^(t) in (T, n, d) has rank n (mahdavi2024, Sec. 4).

    >>> assumption2(torch.tensor([[[1.0, 0.0], [2.0, 0.0]]])).detail
    'examples [0] have rank(E) < n = 2 (min rank 1)'
    """
    E = _as_f64(contexts, "contexts", 3)
    T, n, d = E.shape
    ranks = numerical_rank(E)  # (T,)
    bad = (ranks < n).nonzero().flatten().tolist()
    if not bad:
        return AssumptionCheck("Assumption 2", True, "rank", f"all {T} contexts have rank n = {n}")
    return AssumptionCheck("Assumption 2", False, "rank",
                           f"examples {bad[:10]}{' ...' if len(bad) > 10 else ''} have rank(E) < "
                           f"n = {n} (min rank {int(ranks.min())})")


def assumption3(contexts, queries, **kw) -> AssumptionCheck:
    """Assumption 3: the e^(t) + mean_i e_i^(t) have Kruskal rank >= n (mahdavi2024, Sec. 4.4).

    >>> E = torch.zeros(3, 2, 3, dtype=torch.float64); E[:, 0, 0] = torch.tensor([0.0, 2.0, 4.0])
    >>> bool(assumption3(E, torch.eye(3, dtype=torch.float64)))
    True
    """
    E = _as_f64(contexts, "contexts", 3)
    e = _as_f64(queries, "queries", 2)
    T, n, d = E.shape
    if e.shape != (T, d):
        raise ParameterError("queries", f"shape {tuple(e.shape)}", f"shape (T, d) = ({T}, {d})")
    c = kruskal_rank_at_least(e + E.mean(dim=1), n, **kw)  # e~ of Assumption 3: (T, d)
    return AssumptionCheck("Assumption 3", c.holds, c.method, c.detail)
