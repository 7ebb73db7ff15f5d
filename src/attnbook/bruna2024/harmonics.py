"""Spherical harmonics on S^{d-1} and the rank-separation lower bound of the Bruna talk.

Covers the harmonic-analysis side of the rank/heads separation (Amsel, Yehudai & Bruna 2024,
as presented in the talk bruna2024talk, slides "Spherical Harmonics" to "Putting it all
together"):

* ``harmonic_dimension(d, l)``: N(d, l), the dimension of degree-l spherical harmonics in d
  variables, in exact integers;
* ``sphere_marginal_density``: the measure u_d of t = theta . x for x uniform on S^{d-1},
  density proportional to (1 - t^2)^((d-3)/2) (the slide prints the exponent (d-2)/3);
* ``gegenbauer``: the Gegenbauer polynomials P_{l,d}, orthonormal in L^2([-1, 1], u_d),
  evaluated with ``scipy.special.eval_gegenbauer``;
* ``sign_coefficients``: <sign, P_{l,d}>_{u_d} in closed form (Rodrigues' formula), so the
  coefficients are accurate at every l, and ``sign_coefficients_quadrature`` as a check;
* ``rank_lower_bound`` and ``heads_needed``: the lower bound on the squared error of H heads
  of rank r approximating (z, y) -> sign(z . y), in the normalised form

      sum_l <sign, P_l>^2 (1 - H C(r+l, l) / N(d, l))_+ ,

  i.e. the slide's sum_l <sign, P_l>^2 (N(d,l) - H C(r+l,l)) with each of the N(d, l)
  harmonics of degree l carrying the energy <sign, P_l>^2 / N(d, l) (the slide's form drops
  this 1/N(d, l) and exceeds ||sign||^2 = 1 already at H = 0).

Used by: bruna2024_furthest_neighbour, bruna2024_lower_bound.
"""

import math
from fractions import Fraction

import numpy as np
import pandas as pd
from scipy import special

from ..engines.linalg import multi_indices
from ..errors import ParameterError, check_int

__all__ = ["harmonic_dimension", "homogeneous_dimension", "laplacian_kernel_dimension",
           "sphere_marginal_density",
           "gegenbauer", "sign_coefficients", "sign_coefficients_quadrature",
           "rank_lower_bound", "heads_needed", "dimension_table", "coefficient_table",
           "lower_bound_table", "heads_needed_table"]


def harmonic_dimension(d: int, l: int) -> int:
    """N(d, l) = (2l + d - 2)/l * C(l + d - 3, l - 1), degree-l harmonics in d variables (exact).

    Implements the dimension formula of the slide "Spherical Harmonics" (N(d, 0) = 1).

    >>> [harmonic_dimension(3, l) for l in range(5)]  # 2l + 1 on S^2
    [1, 3, 5, 7, 9]
    >>> harmonic_dimension(4, 3)  # (l + 1)^2 on S^3
    16
    """
    d = check_int("d", d, 2)
    l = check_int("l", l, 0)
    if l == 0:
        return 1
    n = Fraction(2 * l + d - 2, l) * math.comb(l + d - 3, l - 1)
    assert n.denominator == 1, "N(d, l) must be an integer"
    return int(n)


def homogeneous_dimension(d: int, l: int) -> int:
    """C(l + d - 1, d - 1): homogeneous polynomials of degree l in d variables (0 for l < 0).

    Harmonics of degree l are the homogeneous polynomials of degree l modulo |x|^2 times those
    of degree l - 2, so N(d, l) = homogeneous_dimension(d, l) - homogeneous_dimension(d, l - 2).

    >>> homogeneous_dimension(3, 2) - homogeneous_dimension(3, 0) == harmonic_dimension(3, 2)
    True
    """
    d = check_int("d", d, 1)
    return math.comb(l + d - 1, d - 1) if l >= 0 else 0


def laplacian_kernel_dimension(d: int, l: int) -> int:
    """dim of the kernel of the Laplacian on degree-l homogeneous polynomials (an independent
    count of harmonics: build the integer matrix of Delta x^alpha = sum_i alpha_i (alpha_i - 1)
    x^(alpha - 2 e_i) and take its rank). Small d and l only.

    >>> laplacian_kernel_dimension(3, 2)  # x^2 - y^2, x^2 - z^2, xy, xz, yz
    5
    """
    d = check_int("d", d, 1)
    l = check_int("l", l, 0)
    if homogeneous_dimension(d, l) > 4000:
        raise ParameterError("(d, l)", (d, l), "at most 4000 monomials of degree l")
    src = multi_indices(d, l, exact=True)
    if l < 2:
        return len(src)
    dst = {a: i for i, a in enumerate(multi_indices(d, l - 2, exact=True))}
    lap = np.zeros((len(dst), len(src)))  # (dim P_{l-2}, dim P_l)
    for j, a in enumerate(src):
        for i in range(d):
            if a[i] >= 2:
                b = a[:i] + (a[i] - 2,) + a[i + 1:]
                lap[dst[b], j] += a[i] * (a[i] - 1)
    return len(src) - int(np.linalg.matrix_rank(lap))


def _a(d: int) -> float:
    return (d - 3) / 2  # u_d has density proportional to (1 - t^2)^a


def _log_u_normaliser(d: int) -> float:
    """log of int_{-1}^{1} (1 - t^2)^((d-3)/2) dt = B(1/2, (d-1)/2)."""
    return special.betaln(0.5, (d - 1) / 2)


def sphere_marginal_density(t, d: int):
    """Density of u_d, the law of theta . x for x uniform on S^{d-1} in R^d.

    Proportional to (1 - t^2)^((d-3)/2); normalised to integrate to 1 on [-1, 1].

    >>> round(float(sphere_marginal_density(0.3, 3)), 12)  # uniform on [-1, 1] at d = 3
    0.5
    """
    d = check_int("d", d, 3, allowed="an integer >= 3 (the sphere S^{d-1} in R^d)")
    t = np.asarray(t, dtype=float)
    return np.power(1 - t * t, _a(d)) * math.exp(-_log_u_normaliser(d))


def _log_gegenbauer_at_one(l: np.ndarray, alpha: float) -> np.ndarray:
    """log C_l^alpha(1) = log Gamma(l + 2 alpha) - log Gamma(2 alpha) - log l!."""
    return special.gammaln(l + 2 * alpha) - special.gammaln(2 * alpha) - special.gammaln(l + 1)


def gegenbauer(l: int, d: int, t):
    """P_{l,d}(t), the degree-l Gegenbauer polynomial orthonormal in L^2([-1, 1], u_d).

    P_{l,d} = sqrt(N(d, l)) C_l^{(d-2)/2}(t) / C_l^{(d-2)/2}(1): the Legendre-normalised
    polynomial of the Hecke-Funk formula (value 1 at t = 1) has squared norm 1/N(d, l) under
    u_d. Evaluated with scipy.special.eval_gegenbauer; accurate to ~1e-10 for the (l, d) the
    book uses (tests/test_harmonics.py checks orthonormality up to l = 60 at d = 64).

    >>> round(float(gegenbauer(1, 3, 0.5)), 12)  # sqrt(3) t on S^2
    0.866025403784
    """
    d = check_int("d", d, 3, allowed="an integer >= 3 (the sphere S^{d-1} in R^d)")
    l = check_int("l", l, 0)
    alpha = (d - 2) / 2
    t = np.asarray(t, dtype=float)
    scale = 0.5 * math.log(harmonic_dimension(d, l)) - _log_gegenbauer_at_one(np.array(l), alpha)
    return np.exp(scale) * special.eval_gegenbauer(l, alpha, t)


def sign_coefficients(d: int, l_max: int) -> np.ndarray:
    """c_l = <sign, P_{l,d}>_{u_d} for l = 0..l_max, in closed form (Rodrigues' formula).

    With a = (d - 3)/2 and odd l = 2k + 1, int_0^1 P_l(t)(1 - t^2)^a dt (P_l(1) = 1) equals
    (-1)^k Gamma(a + 1) (2k)! / (2^l k! Gamma(k + a + 2)); even l give 0 (sign is odd). The
    orthonormal coefficient is twice that, times sqrt(N(d, l)), over B(1/2, a + 1). Computed
    in log space, so it is accurate for every l. The squares sum to ||sign||^2 = 1.

    >>> c = sign_coefficients(3, 3)  # d = 3: Legendre; c_1 = sqrt(3)/2, c_3 = -sqrt(7)/8
    >>> [round(float(x), 12) for x in c]
    [0.0, 0.866025403784, 0.0, -0.330718913883]
    """
    d = check_int("d", d, 3, allowed="an integer >= 3 (the sphere S^{d-1} in R^d)")
    l_max = check_int("l_max", l_max, 0)
    a = _a(d)
    c = np.zeros(l_max + 1)
    l = np.arange(1, l_max + 1, 2)  # odd degrees
    k = (l - 1) // 2
    log_n = np.array([math.log(harmonic_dimension(d, int(li))) for li in l])
    log_i = (special.gammaln(a + 1) - l * math.log(2) + special.gammaln(2 * k + 1)
             - special.gammaln(k + 1) - special.gammaln(k + a + 2))
    c[l] = (-1.0) ** k * np.exp(math.log(2) + log_i + 0.5 * log_n - _log_u_normaliser(d))
    return c


def sign_coefficients_quadrature(d: int, l_max: int, nodes: int | None = None) -> np.ndarray:
    """<sign, P_{l,d}>_{u_d} by Gauss-Jacobi quadrature on [0, 1] with ``gegenbauer`` (a check).

    On [0, 1], t = (1 + s)/2 turns (1 - t)^a into a Jacobi weight and leaves the smooth factor
    (1 + t)^a, so the rule converges fast although sign jumps at 0.

    >>> bool(np.allclose(sign_coefficients_quadrature(5, 7), sign_coefficients(5, 7)))
    True
    """
    d = check_int("d", d, 3, allowed="an integer >= 3 (the sphere S^{d-1} in R^d)")
    l_max = check_int("l_max", l_max, 0)
    a = _a(d)
    s, w = special.roots_jacobi(nodes or l_max + 60, a, 0.0)
    t = (1 + s) / 2
    # int_0^1 f(t) (1-t)^a (1+t)^a dt = 2^-(a+1) int f(t(s)) (1-s)^a (1+t)^a ds
    weights = w * (1 + t) ** a * 2.0 ** (-(a + 1)) * np.exp(-_log_u_normaliser(d))
    return np.array([2 * np.sum(weights * gegenbauer(l, d, t)) if l % 2 else 0.0
                     for l in range(l_max + 1)])


def _kill_ratio(d: int, r: int, l_max: int) -> np.ndarray:
    """rho_l = C(r + l, l) / N(d, l) for l = 0..l_max: one rank-r head covers at most this
    fraction of the degree-l harmonics (slide "Spectral decomposition of self-attention
    heads"). Exact integers, rounded once."""
    return np.array([math.comb(r + l, l) / harmonic_dimension(d, l) for l in range(l_max + 1)])


def rank_lower_bound(d: int, r: int, H, l_max: int = 2000) -> np.ndarray:
    """Lower bound on E|sign(z . y) - sum_h g_h(z, y)|^2 for H heads of rank r (slide
    "Putting it all together", normalised): sum_{l <= l_max} c_l^2 (1 - H C(r+l,l)/N(d,l))_+.

    Dropping the degrees above ``l_max`` only drops non-negative terms, so the truncated sum
    is still a lower bound. ``H`` may be an array (a float for astronomically many heads).

    >>> round(float(rank_lower_bound(64, 64, 0)), 3)  # no heads: ||sign||^2 = 1 less l > 2000
    0.998
    >>> bool(rank_lower_bound(16, 2, 10) > rank_lower_bound(16, 8, 10))  # higher rank helps
    True
    """
    d = check_int("d", d, 3, allowed="an integer >= 3 (the sphere S^{d-1} in R^d)")
    r = check_int("r", r, 1, allowed=f"an integer 1 <= r <= d = {d}")
    if r > d:
        raise ParameterError("r", r, f"an integer 1 <= r <= d = {d}")
    H = np.asarray(H, dtype=float)
    if np.any(H < 0):
        raise ParameterError("H", H.min(), "a number of heads >= 0")
    c2 = sign_coefficients(d, l_max) ** 2  # (L,)
    rho = _kill_ratio(d, r, l_max)  # (L,)
    return np.sum(c2 * np.clip(1 - H[..., None] * rho, 0, None), axis=-1)


def heads_needed(d: int, r: int, eps: float, l_max: int = 2000) -> float:
    """Smallest H (a real number) at which ``rank_lower_bound`` drops below ``eps``.

    Fewer heads than this incur a squared error >= eps whatever the heads compute. The bound
    is piecewise linear and decreasing in H; its breakpoints are the H = N(d,l)/C(r+l,l).
    Returns inf when the degrees up to ``l_max`` keep it above eps for every H (then raise
    ``l_max``).

    >>> heads_needed(16, 16, 0.2) < heads_needed(16, 1, 0.2)
    True
    """
    if not 0 < eps < 1:
        raise ParameterError("eps", eps, "a relative error 0 < eps < 1")
    c2 = sign_coefficients(d, l_max) ** 2
    rho = _kill_ratio(d, r, l_max)
    # where N(d, l) / C(r+l, l) exceeds float range rho is 0: no realistic H touches that
    # degree, and its energy stays in the bound for every H
    untouched = float(c2[rho == 0].sum())
    if untouched >= eps:
        return float("inf")
    eps = eps - untouched
    odd = np.nonzero((c2 > 0) & (rho > 0))[0]
    c2, rho = c2[odd], rho[odd]
    # On the interval between consecutive breakpoints the bound is sum over live l of
    # c_l^2 (1 - H rho_l): walk the breakpoints in increasing H and solve the linear piece.
    with np.errstate(over="ignore"):  # 1/rho may exceed float range: an infinite breakpoint
        breaks = 1 / rho
    order = np.argsort(breaks)
    c2, rho, breaks = c2[order], rho[order], breaks[order]
    live_c2, live_c2rho = c2.sum(), (c2 * rho).sum()
    prev = 0.0
    for i, b in enumerate(breaks):
        val_at_b = live_c2 - b * live_c2rho
        if val_at_b < eps:  # crosses eps in [prev, b]
            return float(max(prev, (live_c2 - eps) / live_c2rho))
        live_c2 -= c2[i]
        live_c2rho -= c2[i] * rho[i]
        prev = b
    return float("inf")


# -- tables for the chapter bruna2024_lower_bound ------------------------------------------

def dimension_table(ds, ls, laplacian_max_monomials: int = 400) -> pd.DataFrame:
    """N(d, l) by the slide's formula, by dim P_l - dim P_{l-2}, and (small cases) by the rank
    of the Laplacian, one row per (d, l); exact integers stored as strings.

    >>> dimension_table([3], [2]).iloc[0][["formula", "difference", "laplacian"]].tolist()
    ['5', '5', '5']
    """
    rows = []
    for d in ds:
        for l in ls:
            small = homogeneous_dimension(d, l) <= laplacian_max_monomials
            rows.append({"d": d, "l": l, "formula": str(harmonic_dimension(d, l)),
                         "difference": str(homogeneous_dimension(d, l)
                                           - homogeneous_dimension(d, l - 2)),
                         "laplacian": str(laplacian_kernel_dimension(d, l)) if small else ""})
    return pd.DataFrame(rows)


def coefficient_table(ds, l_max: int, l_quadrature: int = 400) -> pd.DataFrame:
    """<sign, P_{l,d}> for odd l <= l_max: closed form, and quadrature with scipy's
    Gegenbauer polynomials for l <= l_quadrature (NaN above)."""
    rows = []
    for d in ds:
        c = sign_coefficients(d, l_max)
        q = sign_coefficients_quadrature(d, min(l_max, l_quadrature))
        for l in range(1, l_max + 1, 2):
            rows.append({"d": d, "l": l, "coefficient": c[l],
                         "quadrature": q[l] if l < len(q) else np.nan})
    return pd.DataFrame(rows)


def lower_bound_table(d: int, ranks, Hs, l_max: int = 2000) -> pd.DataFrame:
    """``rank_lower_bound`` for every rank r and number of heads H: columns r, H, bound."""
    rows = []
    for r in ranks:
        b = rank_lower_bound(d, r, np.asarray(Hs, dtype=float), l_max)
        rows += [{"d": d, "r": r, "H": float(H), "bound": float(v)}
                 for H, v in zip(Hs, b, strict=True)]
    return pd.DataFrame(rows)


def heads_needed_table(ds, ranks, epss, l_max: int = 2000) -> pd.DataFrame:
    """``heads_needed`` for every (d, r, eps) with r <= d: columns d, r, eps, H_needed."""
    return pd.DataFrame([{"d": d, "r": r, "eps": e, "H_needed": heads_needed(d, r, e, l_max)}
                         for d in ds for r in ranks if r <= d for e in epss])
