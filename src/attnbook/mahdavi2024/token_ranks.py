"""Batched rank tests of the memorization assumptions on model tokens (mahdavi2024, 5.1, App. J).

The exact Kruskal rank and the assumption checks on small sets live in
:mod:`attnbook.mahdavi2024.assumptions`; this module adds what the tests on real models need:

* a numerical rank whose tolerance follows the precision the vectors were computed in
  (``sigma_max * max(rows, cols) * eps``, with ``eps`` of float32 for model outputs: the
  default of ``torch.linalg.matrix_rank`` on float32 input), batched over stacked matrices;
* the paper's randomized test (draw k of the T query vectors, is the k x d matrix of rank k?)
  as a fraction, for one k or as the fraction-vs-k curve for k from 1 to d;
* estimates of the Kruskal rank: the largest k whose fraction reaches 99% (bisection), and per
  random ordering the number of vectors taken before the first one that depends on its
  predecessors (an upper bound of the Kruskal rank; Figure 1 is their histogram);
* :func:`assumption_row`: General Position, Assumptions 1, 2 and 3 for one model stage, as the
  fractions and verdicts of Tables 1 and 3.

Used by: mahdavi2024_real_models.
"""

from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch

from ..device import default_device
from ..engines.linalg import batched_rank, machine_eps
from ..errors import ParameterError

__all__ = ["TokenSummary", "summarize_tokens", "stack_summaries", "subset_rank_fraction",
           "subset_ranks", "fraction_curve", "randomized_kruskal_rank",
           "ordering_kruskal_estimates", "assumption_row", "assumption_table", "curve_table",
           "ordering_table", "verdict_table"]

F64 = torch.float64
_BYTES = 2e8  # float64 bytes per batched SVD chunk: linalg.batched_rank's, so subset_ranks
# gathers and ranks its subsets in the very chunks batched_rank would


@dataclass(frozen=True)
class TokenSummary:
    """What the tests need from one model stage on T inputs (float64 copies, float32 eps)."""

    queries: torch.Tensor  # (T, d): the query token e^(t) of each example
    shifted: torch.Tensor  # (T, d): e~^(t) = e^(t) + mean_i e_i^(t) (Assumption 3)
    context_ranks: torch.Tensor  # (T,): rank of each context E^(t), an (n, d) matrix
    n: int  # context size (tokens per example)
    eps: float  # precision the tokens were computed in

    @property
    def T(self) -> int:
        return self.queries.shape[0]

    @property
    def d(self) -> int:
        return self.queries.shape[1]


def summarize_tokens(hidden: torch.Tensor, query_index: int) -> TokenSummary:
    """Queries, Assumption-3 vectors and context ranks of a batch of token sequences (B, n, d).

    >>> s = summarize_tokens(torch.eye(3)[None].repeat(2, 1, 1), query_index=0)
    >>> s.context_ranks.tolist(), s.queries.tolist()[0]
    ([3, 3], [1.0, 0.0, 0.0])
    """
    B, n, d = hidden.shape
    eps = machine_eps(hidden.dtype)
    h = hidden.detach().to(F64).cpu()
    q = h[:, query_index].clone()  # (B, d), a copy: a view would keep all of h, (B, n, d), alive
    return TokenSummary(q, q + h.mean(dim=1), batched_rank(h, eps), n, eps)


def stack_summaries(parts: list[TokenSummary]) -> TokenSummary:
    """Concatenate the summaries of consecutive batches."""
    return TokenSummary(torch.cat([p.queries for p in parts]),
                        torch.cat([p.shifted for p in parts]),
                        torch.cat([p.context_ranks for p in parts]), parts[0].n, parts[0].eps)


def _subsets(T: int, k: int, draws: int, seed: int) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    return torch.rand(draws, T, generator=g).argsort(dim=1)[:, :k]  # (draws, k)


def subset_rank_fraction(V: torch.Tensor, k: int, draws: int, *, seed: int = 0,
                         eps: float | None = None) -> float:
    """Share of ``draws`` random k-subsets of the rows of V with rank k (mahdavi2024, Sec. 5.1).

    >>> V = torch.tensor([[1.0, 0.0], [0.0, 1.0], [2.0, 0.0]], dtype=torch.float64)
    >>> subset_rank_fraction(V, 1, 50), subset_rank_fraction(V, 3, 50)
    (1.0, 0.0)
    """
    T, d = V.shape
    if not isinstance(k, int) or k < 1:
        raise ParameterError("k", k, "an integer >= 1")
    if not isinstance(draws, int) or draws < 1:
        raise ParameterError("draws", draws, "an integer >= 1")
    if k > min(T, d):
        return 0.0  # k vectors in R^d with k > d, or more than there are: never independent
    idx = _subsets(T, k, draws, seed)
    ranks = subset_ranks(V, idx, machine_eps(V.dtype) if eps is None else eps)  # (draws,)
    return float((ranks == k).double().mean())


def subset_ranks(V: torch.Tensor, idx: torch.Tensor, eps: float) -> torch.Tensor:
    """Ranks of the (k, d) matrices ``V[idx[i]]`` for each row of ``idx`` (draws, k): the values
    of ``batched_rank(V.to(float64)[idx], eps)``, without holding ``V[idx]`` at once.

    The stacked subsets take draws * k * d * 8 bytes (6 GB for the 5000 draws of k = 197
    queries of d = 768 that M-F1 makes at ``cpu``); here each of :func:`batched_rank`'s own
    chunks (its ``_BYTES``, 0.2 GB) is gathered only when it is ranked, so every chunk, and so
    every rank, is the one that call computes.

    >>> V = torch.tensor([[1.0, 0.0], [0.0, 1.0], [2.0, 0.0]], dtype=torch.float64)
    >>> subset_ranks(V, torch.tensor([[0, 1], [0, 2], [1, 2]]), 1e-15).tolist()
    [2, 1, 2]
    """
    V = V.to(F64)
    k, d = idx.shape[1], V.shape[1]
    step = max(1, int(_BYTES // max(1, k * d * 8)))  # batched_rank's chunk at (k, d)
    parts = [batched_rank(V[idx[i:i + step]], eps) for i in range(0, idx.shape[0], step)]
    return torch.cat(parts) if parts else torch.empty(0, dtype=torch.long)


def fraction_curve(summary: TokenSummary, ks, draws: int, *, seed: int = 0) -> pd.DataFrame:
    """The fraction of random k-subsets of queries with rank k, for each k in ``ks``.

    For k above the rank of all T queries the fraction is exactly 0 and no draw is made.
    """
    V = summary.queries
    full = int(batched_rank(V, summary.eps))
    rows = []
    for k in ks:
        k = int(k)
        frac = 0.0 if k > full else subset_rank_fraction(V, k, draws, seed=seed + k,
                                                         eps=summary.eps)
        rows.append({"k": k, "fraction": frac, "exact_zero": k > full})
    return pd.DataFrame(rows)


def randomized_kruskal_rank(summary: TokenSummary, draws: int, *, fraction: float = 0.99,
                            seed: int = 0) -> int:
    """Largest k at which at least ``fraction`` of random k-subsets have rank k (bisection in k).

    >>> s = summarize_tokens(torch.eye(4, dtype=torch.float64)[:, None, :], 0)
    >>> randomized_kruskal_rank(s, draws=20)
    4
    """
    V = summary.queries
    lo, hi = 0, min(int(batched_rank(V, summary.eps)), summary.T)  # answer lies in [lo, hi]
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if subset_rank_fraction(V, mid, draws, seed=seed + mid, eps=summary.eps) >= fraction:
            lo = mid
        else:
            hi = mid - 1
    return lo


def _sigma_max(A: torch.Tensor, iters: int = 50) -> torch.Tensor:
    """Largest singular value of each (b, M, N) matrix by power iteration, shape (b, 1)."""
    v = torch.ones(A.shape[0], A.shape[-1], 1, dtype=A.dtype, device=A.device)
    for _ in range(iters):
        v = A.transpose(-1, -2) @ (A @ v)
        v = v / v.norm(dim=1, keepdim=True).clamp(min=1e-300)
    return (A @ v).norm(dim=1)  # (b, 1)


def ordering_kruskal_estimates(summary: TokenSummary, orderings: int, *, seed: int = 0
                               ) -> np.ndarray:
    """Per random ordering of the queries: how many come before the first dependent one.

    Vector k depends on its predecessors when the k-th pivot |R_kk| of a QR factorization is
    at most sigma_max * max(m, d) * eps of the ordered set (the rank rule above, sigma_max by
    power iteration); then those
    k vectors are dependent, so each value is an upper bound of the Kruskal rank.

    >>> V = torch.tensor([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [1.0, 1.0, 0.0]], dtype=torch.float64)
    >>> s = summarize_tokens(V[:, None, :], 0)
    >>> sorted(set(ordering_kruskal_estimates(s, 10).tolist()))
    [2]
    """
    V = summary.queries
    T, d = V.shape
    m = min(T, int(batched_rank(V, summary.eps)) + 1)  # the first dependent one comes by then
    idx = _subsets(T, m, orderings, seed)  # (B, m)
    out = np.empty(orderings, dtype=np.int64)
    step = max(1, int(_BYTES // max(1, m * d * 8)))
    for i in range(0, orderings, step):
        A = V[idx[i:i + step]].transpose(1, 2).to(default_device())  # (b, d, m): vectors as columns
        R = torch.linalg.qr(A, mode="r").R  # (b, min(d, m), m)
        piv = R.diagonal(dim1=-2, dim2=-1).abs()  # (b, min(d, m))
        cut = _sigma_max(A) * max(m, d) * summary.eps
        dep = piv <= cut  # (b, min(d, m))
        if m > d:  # the (d+1)-th vector is always dependent
            dep = torch.cat([dep, torch.ones(dep.shape[0], 1, dtype=torch.bool,
                                             device=dep.device)], dim=1)
        dep = dep.cpu()
        first = torch.where(dep.any(dim=1), dep.int().argmax(dim=1),
                            torch.full((dep.shape[0],), dep.shape[1]))
        out[i:i + step] = first.numpy()
    return out


def assumption_row(summary: TokenSummary, draws: int, *, gp_draws: int | None = None,
                   fraction: float = 0.99, seed: int = 0) -> dict:
    """General Position and Assumptions 1-3 for one stage: fractions and verdicts (Tables 1, 3).

    General Position is Kruskal rank d (Definition 2), tested with d-subsets; it fails for
    certain when all T queries span fewer than d dimensions. Assumption 1 is the randomized
    test at k = n (>= ``fraction`` of ``draws`` subsets of rank n); Assumption 2 asks every
    context to have rank n; Assumption 3 is the randomized test at k = n on e + mean_i e_i.
    """
    n, d, T = summary.n, summary.d, summary.T
    if T < d:
        raise ParameterError("T", T, f"T >= d = {d} query vectors (General Position needs "
                                     "d-subsets)")
    full = int(batched_rank(summary.queries, summary.eps))
    gp = 0.0 if full < d else subset_rank_fraction(summary.queries, d, gp_draws or draws,
                                                   seed=seed + 1, eps=summary.eps)
    a1 = subset_rank_fraction(summary.queries, n, draws, seed=seed + 2, eps=summary.eps)
    a3 = subset_rank_fraction(summary.shifted, n, draws, seed=seed + 3, eps=summary.eps)
    a2 = float((summary.context_ranks == min(n, d)).double().mean()) if n <= d else 0.0
    return {"T": T, "n": n, "d": d, "rank_all_queries": full,
            "general_position_fraction": gp, "general_position": gp >= fraction,
            "assumption1_fraction": a1, "assumption1": a1 >= fraction,
            "assumption2_fraction": a2, "assumption2": a2 == 1.0,
            "min_context_rank": int(summary.context_ranks.min()),
            "assumption3_fraction": a3, "assumption3": a3 >= fraction}



def assumption_table(summaries: dict, draws: int, *, gp_draws: int | None = None,
                     seed: int = 0) -> pd.DataFrame:
    """:func:`assumption_row` for every stage of ``summaries`` ({stage: TokenSummary})."""
    return pd.DataFrame([{"stage": stage, **assumption_row(s, draws, gp_draws=gp_draws,
                                                           seed=seed)}
                         for stage, s in summaries.items()])


def curve_table(summaries: dict, points: int, draws: int, *, seed: int = 0) -> pd.DataFrame:
    """Fraction-vs-k curves (``points`` values of k from 1 to d, plus n) and Kruskal estimates.

    One row per stage and k; ``kruskal_99`` repeats per stage: the largest k at which at least
    99% of ``draws`` random k-subsets have rank k (:func:`randomized_kruskal_rank`).
    """
    frames = []
    for stage, s in summaries.items():
        ks = sorted(set(np.linspace(1, s.d, points).round().astype(int).tolist()) | {s.n})
        df = fraction_curve(s, ks, draws, seed=seed).assign(stage=stage, n=s.n, d=s.d)
        df["kruskal_99"] = randomized_kruskal_rank(s, draws, seed=seed)
        frames.append(df)
    return pd.concat(frames, ignore_index=True)


def ordering_table(summaries: dict, orderings: int, *, seed: int = 0) -> pd.DataFrame:
    """Per stage, the :func:`ordering_kruskal_estimates` of ``orderings`` random orderings."""
    return pd.DataFrame([{"stage": stage, "estimate": int(v)} for stage, s in summaries.items()
                         for v in ordering_kruskal_estimates(s, orderings, seed=seed)])


_TESTS = {"general_position": "General Position", "assumption1": "Assumption 1",
          "assumption2": "Assumption 2", "assumption3": "Assumption 3"}


def verdict_table(measured: pd.DataFrame, paper: dict, reference: dict | None = None
                  ) -> pd.DataFrame:
    """Cell by cell: the paper's verdict, the measured fraction and our verdict.

    ``paper`` maps (stage, test name) to True/False; stages missing from ``measured`` are
    ``not run``. ``reference`` optionally maps cells to the fraction the paper's authors report.

    >>> m = pd.DataFrame([{"stage": "emb", "assumption1": False, "assumption1_fraction": 0.0}])
    >>> verdict_table(m, {("emb", "Assumption 1"): False}).to_dict("records")[0]["agrees"]
    True
    """
    mark = {True: "✓", False: "x", None: "not run"}
    rows = []
    for (stage, test), want in paper.items():
        key = {v: k for k, v in _TESTS.items()}[test]
        hit = measured[measured["stage"] == stage] if len(measured) else measured
        if len(hit):
            got, frac = bool(hit.iloc[0][key]), float(hit.iloc[0][f"{key}_fraction"])
            rows.append([stage, test, mark[want], frac, mark[got], got == want])
        else:
            rows.append([stage, test, mark[want], float("nan"), mark[None], None])
    out = pd.DataFrame(rows, columns=["stage", "test", "paper", "fraction", "measured",
                                      "agrees"])
    if reference is not None:
        out.insert(3, "paper_fraction", [reference.get((s, t), float("nan"))
                                         for s, t in zip(out["stage"], out["test"],
                                                         strict=True)])
    return out
