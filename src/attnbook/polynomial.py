"""Polynomial structure of unnormalized self-attention (levine2020, appendix A.1, Lemma 1).

Lemma 1: a depth-L network of unnormalized attention layers is a sum of products of
C(L) = (3^L - 1)/2 attention factors, each quadratic in the input, times the input once:
a homogeneous polynomial of degree 2 C(L) + 1 = 3^L. Two numerical witnesses:

* homogeneity: f(a X) = a^{3^L} f(X) for every scale a;
* degree along a line: t -> f(X + t V) is a polynomial of degree exactly 3^L (Chebyshev
  interpolation of degree 3^L reproduces it to rounding, degree 3^L - 1 does not).
"""

import numpy as np
import torch

from .errors import ParameterError

__all__ = ["attention_factor_count", "lemma1_degree", "homogeneity_check",
           "degree_along_line"]


def attention_factor_count(L: int) -> int:
    """C(L) = (3^L - 1)/2, the number of quadratic factors M in levine2020 Lemma 1.

    Satisfies C(1) = 1 and C(L+1) = 3 C(L) + 1 (the induction of the proof).

    >>> [attention_factor_count(L) for L in range(1, 5)]
    [1, 4, 13, 40]
    """
    if not isinstance(L, int) or L < 1:
        raise ParameterError("L", L, "an integer >= 1")
    return (3**L - 1) // 2


def lemma1_degree(L: int) -> int:
    """The degree 2 C(L) + 1 = 3^L of a depth-L network (levine2020 Lemma 1).

    >>> lemma1_degree(3)
    27
    """
    return 2 * attention_factor_count(L) + 1


@torch.no_grad()
def homogeneity_check(f, x: torch.Tensor, scales, degree: int) -> dict:
    """Compare f(a x) with a^degree f(x) for every a in ``scales``.

    Returns the largest relative error ``max |f(a x) - a^D f(x)| / max |a^D f(x)|`` over the
    scales, and the least-squares slope of log ||f(a x)|| against log a (the fitted degree).

    >>> r = homogeneity_check(lambda x: x**3, torch.ones(2, dtype=torch.float64), [0.5, 2.0], 3)
    >>> r["max_rel_error"], round(r["fitted_degree"], 12)
    (0.0, 3.0)
    """
    scales = [float(a) for a in scales]
    if any(a <= 0 for a in scales):
        raise ParameterError("scales", scales, "positive numbers")
    y = f(x)
    base = float(y.norm())
    if not np.isfinite(base) or base == 0:
        raise ParameterError("x", "f(x)", "an input where f(x) is finite and non-zero")
    errs, logs = [], []
    for a in scales:
        ya, pred = f(a * x), (a**degree) * y
        errs.append(float((ya - pred).abs().max() / pred.abs().max()))
        logs.append(np.log(float(ya.norm())) - np.log(base))
    la = np.log(scales)
    slope = float(np.dot(la, logs) / np.dot(la, la))  # fit through the origin: log r = D log a
    return {"max_rel_error": max(errs), "fitted_degree": slope}


@torch.no_grad()
def degree_along_line(f, x: torch.Tensor, v: torch.Tensor, degree: int) -> dict:
    """Is t -> f(x + t v) a polynomial of degree exactly ``degree`` on [-1, 1]?

    Samples at 2*degree + 2 Chebyshev points, fits Chebyshev series of degree ``degree`` and
    ``degree - 1`` and reports each fit's largest relative residual. A polynomial of degree
    exactly D leaves a rounding-level residual at D and a clearly non-zero one at D - 1.

    >>> r = degree_along_line(lambda x: x**2, torch.zeros(1, dtype=torch.float64),
    ...                       torch.ones(1, dtype=torch.float64), 2)
    >>> r["residual_at_degree"] < 1e-12 < r["residual_below_degree"]
    True
    """
    if degree < 1:
        raise ParameterError("degree", degree, "an integer >= 1")
    m = 2 * degree + 2
    t = np.cos(np.pi * (np.arange(m) + 0.5) / m)  # Chebyshev points of the first kind
    ys = torch.stack([f(x + float(ti) * v) for ti in t]).reshape(m, -1).cpu().numpy()
    scale = np.abs(ys).max()
    out = {}
    for key, deg in (("residual_at_degree", degree), ("residual_below_degree", degree - 1)):
        coef = np.polynomial.chebyshev.chebfit(t, ys, deg)
        fit = np.polynomial.chebyshev.chebval(t, coef).T
        out[key] = float(np.abs(fit - ys).max() / scale)
    return out
