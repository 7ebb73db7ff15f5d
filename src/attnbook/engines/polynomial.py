"""Polynomial structure of unnormalized self-attention (levine2020, appendix A.1, Lemma 1).

Lemma 1: a depth-L network of unnormalized attention layers is a sum of products of
C(L) = (3^L - 1)/2 attention factors, each quadratic in the input, times the input once:
a homogeneous polynomial of degree 2 C(L) + 1 = 3^L. Two numerical witnesses:

* homogeneity: f(a X) = a^{3^L} f(X) for every scale a;
* degree along a line: t -> f(X + t V) is a polynomial of degree exactly 3^L (Chebyshev
  interpolation of degree 3^L reproduces it to rounding, degree 3^L - 1 does not).

Used by: levine2020_lemma1, levine2020_separation_rank, wies2021_embedding_rank.
"""

import numpy as np
import torch

from ..errors import ParameterError

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


def _log_norm(y: torch.Tensor) -> float:
    """log ||y||, computed as log max|y| + log ||y / max|y|||, so that it neither overflows nor
    underflows where ||y||^2 would (a degree-729 output at scale 2 has ||y||^2 ~ 2^1458; the
    largest float64 is about 2^1024): -inf for y = 0, NaN or inf for a non-finite y.

    >>> abs(_log_norm(torch.tensor([3.0, 4.0], dtype=torch.float64)) - float(np.log(5))) < 1e-15
    True
    >>> round(_log_norm(torch.tensor([2.0 ** 1000, 2.0 ** 1000], dtype=torch.float64)), 6)
    693.493754
    """
    m = float(y.abs().max())
    if m == 0 or not np.isfinite(m):
        return -np.inf if m == 0 else m
    return float(np.log(m) + np.log(float((y / m).norm())))


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
    base = _log_norm(y)
    if not np.isfinite(base):
        from ..errors import AttnbookError

        raise AttnbookError(f"f(x) has norm exp({base}): choose an input (or calibrate the "
                            "network) so that f(x) is finite and non-zero")
    errs, logs = [], []
    for a in scales:
        ya, pred = f(a * x), (a**degree) * y
        errs.append(float((ya - pred).abs().max() / pred.abs().max()))
        logs.append(_log_norm(ya) - base)
    la = np.log(scales)
    slope = float(np.dot(la, logs) / np.dot(la, la))  # fit through the origin: log r = D log a
    return {"max_rel_error": max(errs), "fitted_degree": slope}


@torch.no_grad()
def degree_along_line(f, x: torch.Tensor, v: torch.Tensor, degree: int,
                      radius: float = 4.0) -> dict:
    """Is t -> f(x + t v) a polynomial of degree exactly ``degree`` on [-radius, radius]?

    Samples at 2*degree + 2 Chebyshev points, fits Chebyshev series of degree ``degree`` and
    ``degree - 1`` and reports each fit's largest relative residual. A polynomial of degree
    exactly D leaves a rounding-level residual at D and a clearly non-zero one at D - 1.
    The interval is wide (radius 4) because on [-1, 1] the top Chebyshev coefficient of t^D is
    only 2^(1-D): the degree-D term would hide under rounding for D = 27.

    >>> r = degree_along_line(lambda x: x**2, torch.zeros(1, dtype=torch.float64),
    ...                       torch.ones(1, dtype=torch.float64), 2)
    >>> r["residual_at_degree"] < 1e-12 < r["residual_below_degree"]
    True
    """
    if degree < 1:
        raise ParameterError("degree", degree, "an integer >= 1")
    m = 2 * degree + 2
    t = np.cos(np.pi * (np.arange(m) + 0.5) / m)  # Chebyshev points of the first kind
    ys = torch.stack([f(x + radius * float(ti) * v) for ti in t]).reshape(m, -1).cpu().numpy()
    scale = np.abs(ys).max()
    out = {}
    for key, deg in (("residual_at_degree", degree), ("residual_below_degree", degree - 1)):
        coef = np.polynomial.chebyshev.chebfit(t, ys, deg)
        fit = np.polynomial.chebyshev.chebval(t, coef).T
        out[key] = float(np.abs(fit - ys).max() / scale)
    return out


def lemma1_table(depths, widths, heads, *, d_a: int, N: int, batch: int, line_max_depth: int,
                 scales=(0.5, 0.8, 1.25, 2.0), residual=(False, True), seed: int = 0):
    """Check levine2020 Lemma 1 on random networks: one row per (L, d_x, H, residual).

    Columns: the predicted degree 3^L, the homogeneity error and fitted degree
    (:func:`homogeneity_check`), and for L <= ``line_max_depth`` the two residuals of
    :func:`degree_along_line`. Each random network is calibrated (``calibrate_``: one positive
    constant per layer) so that degree-3^L outputs stay inside float64's range. The residual
    networks (levine2020 A.4) are a control: they are
    polynomials of the same top degree but not homogeneous, so the homogeneity check must
    fail on them.
    """
    import pandas as pd

    from .attention_net import AttentionNetConfig, SelfAttentionNet

    for name, values in (("depths", depths), ("widths", widths), ("heads", heads)):
        if not values or any(not isinstance(v, int) or v < 1 for v in values):
            raise ParameterError(name, values, "a non-empty list of integers >= 1")
    g = torch.Generator().manual_seed(seed)
    rows = []
    for res in residual:
        for L in depths:
            for d_x in widths:
                for H in heads:
                    net = SelfAttentionNet(AttentionNetConfig(L, d_x, H, d_a, residual=res),
                                           generator=g)
                    x = torch.randn(batch, N, d_x, dtype=torch.float64, generator=g)  # (B, N, d_x)
                    net.calibrate_(x)  # one constant per layer: keeps degree 3^L in range
                    D = lemma1_degree(L)
                    row = {"L": L, "d_x": d_x, "H": H, "residual": res, "degree": D,
                           **homogeneity_check(net, x, scales, D)}
                    if L <= line_max_depth:
                        v = torch.randn(batch, N, d_x, dtype=torch.float64, generator=g)
                        row.update(degree_along_line(net, x, v, D))
                    rows.append(row)
    return pd.DataFrame(rows)
