"""Criteria of the bruna2024 claims (ledger: data/claims/bruna2024.csv)."""

import math

import numpy as np

from . import criterion

__all__: list[str] = []


def _finite(values) -> np.ndarray:
    return np.asarray([float(v) for v in values], dtype=float)


def _slope(x, y) -> float:
    """Least-squares slope of y on x (NaN with fewer than 2 points or a non-finite value)."""
    x, y = _finite(x), _finite(y)
    if len(x) < 2 or not (np.isfinite(x).all() and np.isfinite(y).all()):
        return math.nan
    return float(np.polyfit(x, y, 1)[0])


@criterion("B-FR")
def full_rank_head_exact(mse_by_c, exact_at_largest, *, rise_tol, mse_max):
    """B-FR: the error of the head K Q^T = -c I, listed by increasing c, never rises by more
    than ``rise_tol`` from one c to the next, ends below ``mse_max``, and at the largest c the
    largest attention weight of every point sits on its furthest point
    (``exact_at_largest``: that fraction of points, 1 when all)."""
    mse = _finite(mse_by_c)
    return (len(mse) >= 2 and bool(np.isfinite(mse).all())
            and bool((np.diff(mse) <= rise_tol).all()) and mse[-1] < mse_max
            and float(exact_at_largest) == 1.0)


@criterion("B-NN")
def low_rank_fails_full_rank_learns(lines, d, *, full_max, low_min, rank_div, min_lines):
    """B-NN: at least ``min_lines`` lines of constant rH; on each, the full-rank model (r = d)
    reaches a loss <= ``full_max`` and every model of rank r <= d / ``rank_div`` stays at a
    loss >= ``low_min``. ``lines``: one (ranks, losses) pair per line (min held-out MSE x d)."""
    lines = [(list(rs), _finite(ls)) for rs, ls in lines]
    if len(lines) < min_lines:
        return False
    for ranks, losses in lines:
        if len(ranks) != len(losses) or not np.isfinite(losses).all():
            return False
        full = [v for r, v in zip(ranks, losses, strict=True) if r == d]
        low = [v for r, v in zip(ranks, losses, strict=True) if r * rank_div <= d]
        if len(full) != 1 or not low or full[0] > full_max or min(low) < low_min:
            return False
    return True


@criterion("B-LB")
def harmonic_lower_bound(dims, coef, d, needed, *, coef_rtol, decay_from, decay_exponent,
                         decay_tol, slope_spread, exponent_growth):
    """B-LB, four checks.

    ``dims``: columns formula, difference, laplacian (NaN where not computed): N(d, l) by the
    slide's formula, by dim P_l - dim P_(l-2), and by the kernel of the Laplacian; they must
    agree everywhere. ``coef``: columns d, l, coefficient, quadrature (NaN where not
    computed): closed form and quadrature agree to ``coef_rtol`` (relative), and at the
    chapter's ``d`` the least-squares slope of log |coefficient| on log l over the non-zero
    coefficients with l >= ``decay_from`` d is within ``decay_tol`` of ``decay_exponent``.
    ``needed``: columns d, r, eps, H_needed: for each (r, eps), the local slopes of log
    H_needed on log(d / r) between consecutive d spread by at most ``slope_spread`` times the
    fitted slope, and for each r the fitted slope at the smallest eps exceeds the one at the
    largest eps by more than ``exponent_growth``.
    """
    formula = dims["formula"].astype(str)
    if len(dims) == 0 or not (formula == dims["difference"].astype(str)).all():
        return False
    lap = dims.dropna(subset=["laplacian"])
    if not (lap["formula"].astype(str) == lap["laplacian"].astype(int).astype(str)).all():
        return False
    chk = coef.dropna(subset=["quadrature"])
    rel = np.abs(chk["quadrature"] - chk["coefficient"]) / np.abs(chk["coefficient"])
    if len(chk) == 0 or not (rel <= coef_rtol).all():
        return False
    tail = coef[(coef["d"] == d) & (coef["l"] >= decay_from * d) & (coef["coefficient"] != 0)]
    slope = _slope(np.log(tail["l"]), np.log(np.abs(tail["coefficient"])))
    if not abs(slope - decay_exponent) <= decay_tol:
        return False
    exponents = {}
    for (r, eps), sub in needed.groupby(["r", "eps"]):
        sub = sub.sort_values("d")
        x, y = np.log(sub["d"] / r), np.log(sub["H_needed"].astype(float))
        fit = _slope(x, y)
        local = np.diff(y) / np.diff(x)
        if not (math.isfinite(fit) and np.isfinite(local).all()):
            return False
        if local.max() - local.min() > slope_spread * fit:
            return False
        exponents.setdefault(r, {})[eps] = fit
    if not exponents:
        return False
    return all(len(e) >= 2 and e[min(e)] > e[max(e)] + exponent_growth
               for e in exponents.values())


@criterion("B-MV")
def majority_of_rank_one_heads(edges, margin_errors, *, edge_exponent, edge_tol, rate_min):
    """B-MV: one random rank-one head's edge E p - 1/2 over a coin is Theta(d^-1/2): its
    log-log slope in d is within ``edge_tol`` of ``edge_exponent``; and a majority of H ~ d^2
    heads is wrong with probability exp(-Theta(d)) on inputs of typical margin: between every
    two consecutive d, log(error) falls by at least ``rate_min`` per unit of d.
    ``edges``, ``margin_errors``: (d, value) pairs; errors must be positive (an error of 0
    cannot show a rate)."""
    edges = sorted((float(d), float(e)) for d, e in edges)
    errs = sorted((float(d), float(e)) for d, e in margin_errors)
    if len(edges) < 2 or len(errs) < 2 or any(not e > 0 for _, e in edges + errs):
        return False
    slope = _slope(np.log([d for d, _ in edges]), np.log([e for _, e in edges]))
    if not abs(slope - edge_exponent) <= edge_tol:
        return False
    d, logerr = np.array([d for d, _ in errs]), np.log([e for _, e in errs])
    rates = -np.diff(logerr) / np.diff(d)
    return bool(np.isfinite(rates).all() and (rates >= rate_min).all())


@criterion("B-ZB")
def unary_vs_pairwise(part, measurement, *, near_zero):
    """B-ZB in two parts.

    ``"power-sum basis"``: ``measurement`` is a list of (needed, predicted, total, basis) per
    (d, N): the power sums needed per degree equal the predicted counts (#{|alpha| = k} for
    k <= N and 0 at k = N + 1) and 1 + their sum equals C(d + N, N).

    ``"unary vs pairwise"``: ``measurement`` = (pairwise_error, K, [(H, deepsets_error), ...])
    of trained models, errors relative to the target's variance: one pairwise feature reaches
    an error <= ``near_zero``, and every DeepSets model with fewer than K unary features
    (K: the rank of the target's matrix representation) has an error above the pairwise
    model's.
    """
    if part == "power-sum basis":
        cases = list(measurement)
        return bool(cases) and all(list(needed) == list(predicted) and int(total) == int(basis)
                                   for needed, predicted, total, basis in cases)
    if part == "unary vs pairwise":
        pair, K, unary = measurement
        pair = float(pair)
        below = [float(e) for H, e in unary if H < K]
        return (math.isfinite(pair) and pair <= near_zero and bool(below)
                and all(math.isfinite(e) and e > pair for e in below))
    raise ValueError(f"B-ZB has the parts 'power-sum basis' and 'unary vs pairwise', "
                     f"got {part!r}")
