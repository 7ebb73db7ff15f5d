"""Symmetric functions: multisymmetric power sums, and unary (DeepSets) versus pairwise features.

Covers the first part of the Bruna talk (bruna2024talk; Zweig & Bruna 2022, zweig2022):

* ``powersum_basis_size(d, N)``: H* = C(d + N, N), the number of multisymmetric power sums
  p_alpha(X) = sum_i x_i^alpha with |alpha| <= N (alpha = 0 the constant), counted here by
  enumerating the multi-indices;
* ``generator_counts``: the number of power sums needed in each degree k, measured as the
  numerical rank of all products of power sums of degree k modulo the products of two or
  more: #{|alpha| = k} for k <= N and 0 for k = N + 1, so degree N is where generation stops;
* ``matrix_separation``: the step of the proof where a unary model Sym(H) meets a target
  g = sum_ab G_ab p_a p_b through its matrix representation: rank(F) <= H, so the error on
  the products of two power sums is at least the Eckart-Young tail of G, while one pairwise
  feature psi(x, x') = sum_ab G_ab x^a x'^b represents g exactly.
"""

import itertools
import math

import numpy as np
import pandas as pd

from .errors import ParameterError

__all__ = ["multi_indices", "powersum_basis_size", "generator_counts", "zb_lower_bound",
           "matrix_separation"]


def _check(name, value, low):
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
        raise ParameterError(name, value, f"an integer >= {low}")
    return int(value)


def multi_indices(d: int, degree: int, exact: bool = False) -> list[tuple[int, ...]]:
    """All alpha in N^d with |alpha| <= degree (or == degree), graded, by enumeration.

    >>> multi_indices(2, 2)
    [(0, 0), (0, 1), (1, 0), (0, 2), (1, 1), (2, 0)]
    """
    d, degree = _check("d", d, 1), _check("degree", degree, 0)
    out = []
    for k in ([degree] if exact else range(degree + 1)):  # stars and bars: C(k+d-1, d-1) each
        for bars in itertools.combinations(range(k + d - 1), d - 1):
            edges = (-1,) + bars + (k + d - 1,)
            out.append(tuple(edges[i + 1] - edges[i] - 1 for i in range(d)))
    return out


def powersum_basis_size(d: int, N: int) -> int:
    """H* = C(d + N, N): the multisymmetric power sums of degree <= N (zweig2022; slide "DeepSet").

    >>> powersum_basis_size(1, 3), len(multi_indices(1, 3))  # 1, p_1, p_2, p_3
    (4, 4)
    """
    d, N = _check("d", d, 1), _check("N", N, 1)
    return math.comb(d + N, N)


def _products(alphas_by_degree: dict, k: int, min_factors: int):
    """Multisets of non-zero multi-indices with total degree k and >= min_factors factors."""
    flat = [(a, deg) for deg in sorted(alphas_by_degree) for a in alphas_by_degree[deg]]

    def rec(start, left, chosen):
        if left == 0:
            if len(chosen) >= min_factors:
                yield tuple(chosen)
            return
        for i in range(start, len(flat)):
            a, deg = flat[i]
            if deg <= left:
                yield from rec(i, left - deg, chosen + [a])

    return list(rec(0, k, []))


def _evaluate(X: np.ndarray, prods) -> np.ndarray:
    """Columns prod_j p_{alpha_j}(X) for each product, rows the samples X (S, N, d)."""
    cache = {}

    def p(a):
        if a not in cache:
            cache[a] = np.prod(X ** np.array(a), axis=-1).sum(-1)  # (S,)
        return cache[a]

    return np.stack([np.prod([p(a) for a in prod], axis=0) for prod in prods], axis=1)


def _rank(A: np.ndarray, tol: float = 1e-9) -> int:
    if A.shape[1] == 0:
        return 0
    A = A / np.linalg.norm(A, axis=0, keepdims=True)
    s = np.linalg.svd(A, compute_uv=False)
    return int((s > tol * s[0]).sum())


def generator_counts(d: int, N: int, k_max: int | None = None, *, seed: int = 0) -> pd.DataFrame:
    """Power sums needed in degree k: rank of all degree-k products of power sums minus the
    rank of the products of >= 2 factors, on random real point sets (S, N, d).

    Returns columns k, needed (measured), predicted (#{|alpha| = k} if k <= N else 0).

    >>> generator_counts(1, 2)[["k", "needed", "predicted"]].values.tolist()  # p_1, p_2; p_3 not
    [[1, 1, 1], [2, 1, 1], [3, 0, 0]]
    """
    d, N = _check("d", d, 1), _check("N", N, 1)
    k_max = N + 1 if k_max is None else _check("k_max", k_max, 1)
    by_deg = {k: multi_indices(d, k, exact=True) for k in range(1, k_max + 1)}
    rng = np.random.default_rng(seed)
    rows = []
    for k in range(1, k_max + 1):
        every = _products(by_deg, k, 1)
        decomposable = [p for p in every if len(p) >= 2]
        if len(every) > 600:
            raise ParameterError("(d, N)", (d, N),
                                 f"small cases only ({len(every)} products at degree {k})")
        X = rng.uniform(-1, 1, size=(3 * len(every) + 20, N, d))  # (S, N, d)
        A = _evaluate(X, every)
        B = _evaluate(X, decomposable) if decomposable else np.zeros((len(X), 0))
        rows.append({"d": d, "N": N, "k": k, "needed": _rank(A) - _rank(B),
                     "predicted": len(by_deg[k]) if k <= N else 0})
    return pd.DataFrame(rows)


def zb_lower_bound(H, N: int, d: int):
    """(1/6)(1 - H / 2^min(N/2, d-1)), the slide's lower bound for Sym(H, N, d) (zweig2022).

    >>> [round(float(zb_lower_bound(H, 8, 5)), 4) for H in (0, 8, 16)]  # 2^min(4, 4) = 16
    [0.1667, 0.0833, 0.0]
    """
    D = 2.0 ** min(N / 2, d - 1)
    return np.clip(1 - np.asarray(H, dtype=float) / D, 0, None) / 6


def matrix_separation(D: int, Hs, *, samples: int = 4000, N: int = 8, d: int = 2,
                      seed: int = 0) -> pd.DataFrame:
    """Unary versus pairwise on g(X) = sum_ab G_ab p_{alpha_a}(X) p_{alpha_b}(X) (zweig2022).

    G = Q Q^T / sqrt(D), Q a random D x D orthogonal matrix: rank D, unit Frobenius norm.

    A unary model's quadratic part has a matrix representation F of rank <= H, so
    ||F - G||_F^2 >= sum_{i > H} sigma_i(G)^2 = 1 - H/D (Eckart-Young; here the best F is the
    truncated SVD). One pairwise feature psi(x, x') = sum_ab G_ab x^alpha_a x'^alpha_b sums to
    g exactly; its error is measured on ``samples`` point sets with entries on the complex
    unit circle, where the monomials x^alpha are orthonormal.

    Returns columns H, eckart_young (1 - H/D by SVD), pairwise_error (relative, one feature).
    """
    D = _check("D", D, 1)
    rng = np.random.default_rng(seed)
    Q, _ = np.linalg.qr(rng.standard_normal((D, D)))
    G = Q @ np.diag(np.ones(D)) @ Q.T / math.sqrt(D)  # (D, D), ||G||_F = 1
    s = np.linalg.svd(G, compute_uv=False)
    degree = 1
    while math.comb(d + degree, degree) - 1 < D:  # smallest degree with D non-zero alphas
        degree += 1
    alphas = multi_indices(d, degree)[1:D + 1]  # the first D non-zero multi-indices
    A = np.array(alphas)  # (D, d)
    X = np.exp(2j * np.pi * rng.uniform(size=(samples, N, d)))  # (S, N, d) on the torus
    mono = np.prod(X[:, :, None, :] ** A[None, None], axis=-1)  # (S, N, D): x_i^alpha_a
    p = mono.sum(1)  # (S, D): power sums p_alpha_a(X)
    g = np.einsum("sa,ab,sb->s", p, G, p)  # the target
    pair = np.einsum("sia,ab,sjb->s", mono, G, mono)  # sum_{i,i'} psi(x_i, x_i')
    pair_err = float(np.mean(np.abs(pair - g) ** 2) / np.mean(np.abs(g) ** 2))
    rows = [{"H": int(H), "eckart_young": float((s[int(H):] ** 2).sum()),
             "pairwise_error": pair_err} for H in Hs]
    return pd.DataFrame(rows)
