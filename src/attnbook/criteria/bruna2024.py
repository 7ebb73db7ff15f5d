"""Criteria of the bruna2024 claims (ledger: data/claims/bruna2024.csv)."""

import math

import numpy as np

from ..errors import AttnbookError
from . import NOT_TESTABLE, criterion, description

__all__ = ["NN_LEVELS", "NN_PARTS", "NN_SEPARATION", "coefficient_fit", "dimension_agreement",
           "edge_slope", "heads_needed_slopes", "log_error_drops", "nn_lines"]


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


@description("B-FR")
def full_rank_head_in_words(mse_by_c, exact_at_largest, *, cs, points):
    """The error of the head at the smallest and the largest c (``cs``, one per error), its
    largest rise from one c to the next, and at the largest c the share of the ``points``
    whose largest attention weight sits on their furthest point."""
    mse = _finite(mse_by_c)
    return (f"MSE x d falls from {mse[0]:.2f} (c = {cs[0]:g}) to {mse[-1]:.1e} "
            f"(c = {cs[-1]:.0e}), largest rise from one c to the next {np.diff(mse).max():.1e}; "
            f"exact argmin at {float(exact_at_largest):.4f} of {points} points")


def _seed_stats(losses) -> tuple[float, float, int]:
    """Mean, sample variance (NaN with one seed) and count of one model's seed losses (mean NaN
    when one of them is not finite)."""
    x = _finite(losses)
    if len(x) == 0 or not np.isfinite(x).all():
        return math.nan, math.nan, len(x)
    return float(x.mean()), (float(x.var(ddof=1)) if len(x) > 1 else math.nan), len(x)


def _nn_line(ranks, losses, d, rank_div):
    """One line's full-rank model (r = d) and its low-rank models (r <= d / rank_div), each as
    (r, mean, variance, seeds) of its seed losses; None when the line lacks either, or a loss
    is not finite."""
    if len(ranks) != len(losses):
        return None
    models = [(int(r), *_seed_stats(ls)) for r, ls in zip(ranks, losses, strict=True)]
    full = [m for m in models if m[0] == d]
    low = [m for m in models if m[0] * rank_div <= d]
    if len(full) != 1 or not low or not all(math.isfinite(m[1]) for m in models):
        return None
    return full[0], low


NN_LEVELS = "the talk's levels at d = 64"  # B-NN's parts
NN_SEPARATION = "separation at any size"
NN_PARTS = (NN_LEVELS, NN_SEPARATION)


@criterion("B-NN")
def low_rank_fails_full_rank_learns(part, lines, d, *, full_max, low_min, rank_div, min_lines,
                                    n_se, gap_share):
    """B-NN in two parts, read off at least ``min_lines`` lines of constant rH. ``lines``: one
    (ranks, losses) pair per line, ``losses[i]`` the min held-out MSE x d of rank
    ``ranks[i]`` on each seed (a list); a model's loss is its mean over the seeds. In both
    parts, on every line the full-rank model (r = d) has a loss <= ``full_max``; the low-rank
    models are those of rank r <= d / ``rank_div``.

    ``NN_LEVELS`` (the talk's absolute levels, which it reads at d = 64): every low-rank
    model has a loss >= ``low_min``.

    ``NN_SEPARATION`` (what the talk finds, in a form that does not depend on d): every
    low-rank model closes less than ``gap_share`` of the way from the zero output (loss 1 at
    every d and N) to the full-rank model of its line, 1 - L_r < ``gap_share`` (1 - L_d),
    and stays above it by more than ``n_se`` standard errors of the seeds,
    sqrt(s_r^2/n_r + s_d^2/n_d). It fails where a low-rank model gets ``gap_share`` of the way
    or more, or comes within ``n_se`` standard errors of full rank. Not testable where a model
    it reads has one seed (no spread), unless a condition that needs none already fails.
    """
    if part not in NN_PARTS:
        raise AttnbookError(f"B-NN has the parts {NN_PARTS}, got {part!r}")
    read = [_nn_line(ranks, losses, d, rank_div) for ranks, losses in lines]
    if len(read) < min_lines or any(line is None for line in read):
        return False
    if any(full[1] > full_max for full, _ in read):
        return False
    if part == NN_LEVELS:
        return all(m >= low_min for _, low in read for _, m, _, _ in low)
    if not all(1 - m < gap_share * (1 - full[1]) for full, low in read for _, m, _, _ in low):
        return False
    if any(not v == v for full, low in read for _, _, v, _ in (full, *low)):
        return NOT_TESTABLE  # a model of one seed: no standard error
    return all(m - full[1] > n_se * math.sqrt(v / n + full[2] / full[3])
               for full, low in read for _, m, v, n in low)


def nn_lines(table, seeds) -> tuple[list, list[str]]:
    """The lines B-NN reads from a table of trained models (one row per model: ``kind``,
    ``rank_heads``, ``r``, ``seed``, ``min_loss``), over the models of ``seeds`` only: one
    (ranks, losses) pair per line, each rank's losses one per seed, and the lines' names.

    >>> import pandas as pd
    >>> t = pd.DataFrame({"kind": "attention", "rank_heads": 4, "r": [1, 4, 1, 4],
    ...                   "seed": [0, 0, 1, 1], "min_loss": [0.8, 0.1, 0.9, 0.2]})
    >>> nn_lines(t, [0, 1])
    ([([1, 4], [[0.8, 0.9], [0.1, 0.2]])], ['attention rH = 4'])
    >>> nn_lines(t, [1])[0]
    [([1, 4], [[0.9], [0.2]])]
    """
    kept = table[table["seed"].isin(list(seeds))]
    lines, names = [], []
    for (kind, P), sub in kept.groupby(["kind", "rank_heads"]):
        ranks = sorted(int(r) for r in set(sub["r"]))
        lines.append((ranks, [[float(v) for v in sub.loc[sub["r"] == r, "min_loss"]]
                              for r in ranks]))
        names.append(f"{kind} rH = {P}")
    return lines, names


def _nn_clauses(part, lines, d, names, rank_div) -> str:
    """The numbers B-NN's ``part`` decides from, in words, one clause per line (``lines`` as
    the criterion reads them, ``names`` one label per line).

    >>> lines = [([1, 2, 4], [[0.8, 0.82], [0.7, 0.74], [0.05, 0.07]])]
    >>> _nn_clauses(NN_LEVELS, lines, 4, ["rH = 4"], 2)
    'rH = 4: r = 1/2 -> 0.81/0.72, r = d 0.06'
    >>> _nn_clauses(NN_SEPARATION, lines, 4, ["rH = 4"], 2)
    'rH = 4: r = 1/2 close 0.20/0.30 of the way to r = d (0.06), above it by 53/30 se'
    """
    out = []
    for name, (ranks, losses) in zip(names, lines, strict=True):
        line = _nn_line(ranks, losses, d, rank_div)
        if line is None:
            out.append(f"{name}: no full-rank model, no r <= d/{rank_div:g}, or a loss "
                       f"not finite")
            continue
        (_, mf, vf, nf), low = line
        rs = "/".join(str(r) for r, *_ in low)
        if part == NN_LEVELS:
            out.append(f"{name}: r = {rs} -> " + "/".join(f"{m:.2f}" for _, m, _, _ in low)
                       + f", r = d {mf:.2f}")
            continue
        way = "/".join(f"{(1 - m) / (1 - mf):.2f}" if mf < 1 else "-" for _, m, _, _ in low)
        se = [math.sqrt(v / n + vf / nf) for _, _, v, n in low]
        gaps = ("by " + "/".join(f"{(m - mf) / s:.0f}" for (_, m, _, _), s in
                                 zip(low, se, strict=True)) + " se"
                if all(s == s and s > 0 for s in se) else "(one seed: no standard error)")
        out.append(f"{name}: r = {rs} close {way} of the way to r = d ({mf:.2f}), above it {gaps}")
    return "; ".join(out)


@description("B-NN")
def nn_in_words(part, lines, d, *, names, N, steps, decided, full_max, low_min, rank_div,
                gap_share, n_se):
    """The run (d, N, steps; a smoke test where not ``decided``), what ``part`` asks, and per
    line (``names``) the numbers it decides from (:func:`_nn_clauses`)."""
    asked = (f"read at d = {d}; asked on every line r = d at most {full_max:g} and every "
             f"r <= d/{rank_div:g} at least {low_min:g}" if part == NN_LEVELS else
             f"asked on every line r = d at most {full_max:g}, and every r <= d/{rank_div:g} "
             f"less than {gap_share:g} of the way from the zero output to r = d and more than "
             f"{n_se:g} seed standard errors above it")
    return (("" if decided else "smoke test, too few steps to decide: ")
            + f"d = {d}, N = {N}, {steps} steps, {len(names)} lines ({asked}): "
            + _nn_clauses(part, lines, d, names, rank_div))


def coefficient_fit(coef, d, decay_from) -> dict:
    """What B-LB reads of the sign's coefficients ``coef`` (columns d, l, coefficient,
    quadrature): the closed forms' relative distances from quadrature (``rel``), and at ``d``
    the slope of log |coefficient| on log l over l >= ``decay_from`` d (``slope``, decided)
    and over l <= 9 (``head``, reported)."""
    chk = coef.dropna(subset=["quadrature"])
    at_d = coef[(coef["d"] == d) & (coef["coefficient"] != 0)]
    tail, head = at_d[at_d["l"] >= decay_from * d], at_d[at_d["l"] <= 9]
    return {"rel": np.abs(chk["quadrature"] - chk["coefficient"]) / np.abs(chk["coefficient"]),
            "slope": _slope(np.log(tail["l"]), np.log(np.abs(tail["coefficient"]))),
            "head": _slope(np.log(head["l"]), np.log(np.abs(head["coefficient"])))}


def dimension_agreement(dims) -> dict:
    """What B-LB reads of ``dims`` (columns formula, difference, laplacian; NaN where not
    counted): how many (d, l) have N(d, l)'s formula equal to the difference (``exact`` of
    ``dims``) and to the Laplacian kernel where it was counted (``lap_exact`` of ``laps``)."""
    lap = dims.dropna(subset=["laplacian"])
    return {"exact": int((dims["formula"].astype(str) == dims["difference"].astype(str)).sum()),
            "dims": len(dims), "laps": len(lap),
            "lap_exact": int((lap["formula"].astype(str)
                              == lap["laplacian"].astype(int).astype(str)).sum())}


def heads_needed_slopes(needed) -> dict:
    """What B-LB reads of ``needed`` (columns r, eps, d, H_needed): per (r, eps), the
    least-squares slope of log H_needed on log(d / r) and the local slopes between consecutive
    d, as (fit, local).

    >>> import pandas as pd
    >>> needed = pd.DataFrame({"r": 1, "eps": 0.5, "d": [16, 4, 8], "H_needed": [256, 16, 64]})
    >>> {k: (round(fit, 6), local.tolist()) for k, (fit, local) in
    ...  heads_needed_slopes(needed).items()}
    {(1, 0.5): (2.0, [2.0, 2.0])}
    """
    fits = {}
    for (r, eps), sub in needed.groupby(["r", "eps"]):
        sub = sub.sort_values("d")
        x, y = np.log(sub["d"] / r), np.log(sub["H_needed"].astype(float))
        fits[r, eps] = (_slope(x, y), np.diff(y) / np.diff(x))
    return fits


def _lb_numbers(dims, coef, d, needed, decay_from) -> dict:
    """What B-LB reads: :func:`dimension_agreement`, :func:`coefficient_fit`, and
    :func:`heads_needed_slopes` (``fits``)."""
    return {**dimension_agreement(dims), **coefficient_fit(coef, d, decay_from),
            "fits": heads_needed_slopes(needed)}


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
    m = _lb_numbers(dims, coef, d, needed, decay_from)
    if m["dims"] == 0 or m["exact"] < m["dims"] or m["lap_exact"] < m["laps"]:
        return False
    if len(m["rel"]) == 0 or not (m["rel"] <= coef_rtol).all():
        return False
    if not abs(m["slope"] - decay_exponent) <= decay_tol:
        return False
    exponents = {}
    for (r, eps), (fit, local) in m["fits"].items():
        if not (math.isfinite(fit) and np.isfinite(local).all()):
            return False
        if local.max() - local.min() > slope_spread * fit:
            return False
        exponents.setdefault(r, {})[eps] = fit
    if not exponents:
        return False
    return all(len(e) >= 2 and e[min(e)] > e[max(e)] + exponent_growth
               for e in exponents.values())


@description("B-LB")
def lower_bound_in_words(dims, coef, d, needed, *, l_max, decay_from, slope_spread):
    """What B-LB reads (:func:`_lb_numbers`), the (r, eps) whose local slopes spread most
    first, and the slope of the coefficients for l <= 9 (reported, not decided);
    ``l_max``: the last degree the chapter computed."""
    m = _lb_numbers(dims, coef, d, needed, decay_from)
    fits = {k: (fit, float(local.min()), float(local.max()))
            for k, (fit, local) in m["fits"].items()}
    (r, eps), (fit, lo, hi) = max(fits.items(), key=lambda kv: (kv[1][2] - kv[1][1]) / kv[1][0])
    epss = sorted({float(e) for _, e in fits}, reverse=True)
    per_r = "; ".join(
        f"r = {r0:g}: k = " + ", ".join(f"{fits[r0, e][0]:.2f}" for e in epss)
        + " (local slopes " + ", ".join(f"{fits[r0, e][1]:.2f}-{fits[r0, e][2]:.2f}"
                                        for e in epss) + ")"
        for r0 in sorted({r0 for r0, _ in fits}))
    return (f"local slopes of heads needed against d/r spread by up to {(hi - lo) / fit:.2f} "
            f"times the fitted exponent (criterion: at most {slope_spread}), at r = {r:g}, "
            f"eps = {eps:g}: {lo:.2f}-{hi:.2f} around k = {fit:.2f}; N(d,l) exact at "
            f"{m['exact']}/{m['dims']} (d,l) (Laplacian kernel at {m['lap_exact']}/{m['laps']}); "
            f"closed form vs quadrature {float(m['rel'].max()):.0e} (relative); |<sign,P_l>| ~ "
            f"l^{m['slope']:.2f} for l in [{int(decay_from) * d}, {l_max}] at d = {d} (l^"
            f"{m['head']:.2f} for l <= 9); "
            f"heads needed ~ (d/r)^k at eps = {', '.join(str(e) for e in epss)}: {per_r}")


def edge_slope(edges) -> float:
    """The log-log slope in d of a single rank-one head's edge, ``edges`` (d, E p - 1/2)
    pairs in any order: what B-MV compares with -1/2."""
    edges = sorted((float(d), float(e)) for d, e in edges)
    return _slope(np.log([d for d, _ in edges]), np.log([e for _, e in edges]))


def log_error_drops(pairs) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``pairs`` of (d, error) sorted by d, as (d, error, drop of the log error per unit d
    between consecutive d): B-MV's rates at margin, and what it reports over all inputs.

    >>> d, err, drops = log_error_drops([(16, np.exp(-8.0)), (8, np.exp(-4.0))])
    >>> d.tolist(), drops.tolist()
    ([8.0, 16.0], [0.5])
    """
    d, err = (np.array(v, dtype=float) for v in zip(*sorted(pairs), strict=True))
    return d, err, -np.diff(np.log(err)) / np.diff(d)


@criterion("B-MV")
def majority_of_rank_one_heads(edges, margin_errors, *, edge_exponent, edge_tol, rate_min):
    """B-MV: one random rank-one head's edge E p - 1/2 over a coin is Theta(d^-1/2): its
    log-log slope in d (:func:`edge_slope`) is within ``edge_tol`` of ``edge_exponent``; and a
    majority of H ~ d^2 heads is wrong with probability exp(-Theta(d)) on inputs of typical
    margin: between every two consecutive d, log(error) falls by at least ``rate_min`` per unit
    of d (:func:`log_error_drops`). ``edges``, ``margin_errors``: (d, value) pairs; errors must
    be positive (an error of 0 cannot show a rate)."""
    edges, errs = list(edges), list(margin_errors)
    if len(edges) < 2 or len(errs) < 2 or any(not float(e) > 0 for _, e in edges + errs):
        return False
    if not abs(edge_slope(edges) - edge_exponent) <= edge_tol:
        return False
    rates = log_error_drops(errs)[2]
    return bool(np.isfinite(rates).all() and (rates >= rate_min).all())


@description("B-MV")
def majority_in_words(edges, margin_errors, *, all_inputs, simulated):
    """What B-MV reads (the edge's slope, the errors at margin and their drops per unit d),
    then what it reports beside them: the errors over all inputs (``all_inputs``: (d, error)
    pairs) and in how many (d, H) of the ``simulated`` majority (columns hi, hoeffding,
    hi_typical, hoeffding_typical) the 95% band reaches the averaged Hoeffding bound."""
    ds_edge = sorted(float(d) for d, _ in edges)

    def errors_and_drops(pairs, fmt, rate_fmt):
        d, err, rates = log_error_drops(pairs)
        return (", ".join(f"{e:{fmt}}" for e in err) + ", drop per unit d "
                + ", ".join(f"{v:{rate_fmt}}" for v in rates)), [int(x) for x in d]

    margin, ds = errors_and_drops(margin_errors, ".1e", ".3f")
    everywhere, _ = errors_and_drops(all_inputs, ".3f", ".4f")
    within = int(((simulated["hi"] >= simulated["hoeffding"])
                  & (simulated["hi_typical"] >= simulated["hoeffding_typical"])).sum())
    return (f"single-head edge ~ d^{edge_slope(edges):.3f} (d = {ds_edge[0]:g}..{ds_edge[-1]:g});"
            f" exact majority error at H = d^2 (d = {', '.join(str(x) for x in ds)}): margin >= "
            f"d^-1/2: {margin.replace('drop per', 'ln-error drop per')}; all inputs (reported, "
            "not decided: averaged over inputs the error falls like d^-1/2, not exp(-Theta(d)); "
            "the slide's rate holds per input at typical margin, see the text): "
            f"{everywhere}; simulated majority (95% band) >= averaged Hoeffding at "
            f"{within}/{len(simulated)} (d, H)")


def _pairwise_wins(pair, K, unary, near_zero) -> bool:
    """One trained instance of B-ZB: the pairwise error is <= ``near_zero`` and every
    DeepSets model with H < K has an error above it."""
    pair = float(pair)
    below = [float(e) for H, e in unary if H < K]
    return (math.isfinite(pair) and pair <= near_zero and bool(below)
            and all(math.isfinite(e) and e > pair for e in below))


def _basis_matches(cases) -> list[bool]:
    """Per (needed, predicted, total, basis) case of B-ZB's power-sum basis part: whether the
    power sums needed per degree equal the predicted counts and 1 + their sum equals C(d+N, N)."""
    return [list(needed) == list(predicted) and int(total) == int(basis)
            for needed, predicted, total, basis in cases]


@criterion("B-ZB")
def unary_vs_pairwise(part, measurement, *, near_zero):
    """B-ZB in two parts.

    ``"power-sum basis"``: ``measurement`` is a list of (needed, predicted, total, basis) per
    (d, N): the power sums needed per degree equal the predicted counts (#{|alpha| = k} for
    k <= N and 0 at k = N + 1) and 1 + their sum equals C(d + N, N).

    ``"unary vs pairwise"``: ``measurement`` holds one trained instance per seed (its own
    target, initialisations and batches), each (pairwise_error, K, [(H, deepsets_error),
    ...]), errors relative to the target's variance. On every instance one pairwise feature
    reaches an error <= ``near_zero``, and every DeepSets model with fewer than K unary
    features (K: the rank of the target's matrix representation) has an error above the
    pairwise model's.
    """
    if part == "power-sum basis":
        cases = _basis_matches(measurement)
        return bool(cases) and all(cases)
    if part == "unary vs pairwise":
        instances = list(measurement)
        return bool(instances) and all(_pairwise_wins(*i, near_zero) for i in instances)
    raise ValueError(f"B-ZB has the parts 'power-sum basis' and 'unary vs pairwise', "
                     f"got {part!r}")


@description("B-ZB")
def zb_in_words(part, measurement, max_d=None, max_N=None, said=(), N=None, d=None, rank=None,
                steps=None, decided=True, held=None, *, near_zero):
    """``"power-sum basis"``: how many (d, N) cases, d <= ``max_d`` and N <= ``max_N``, match
    (:func:`_basis_matches`). ``"unary vs pairwise"``: the trained target (``N``, ``d``, the
    instances' K and its matrix ``rank``, ``steps``; a smoke test where not ``decided``), one
    sentence per instance (``said``, as the chapter reads them) and ``held`` = (H at or above
    the slide's bound, H trained) of the chapter's own target (reported, not decided)."""
    if part == "power-sum basis":
        cases = _basis_matches(measurement)
        return (f"power sums needed per degree = #{{|alpha| = k}} up to k = N, 0 at N + 1, "
                f"total C(d+N, N) at {sum(cases)}/{len(cases)} (d, N) "
                f"with d <= {max_d}, N <= {max_N}")
    K = {int(k) for _, k, _ in measurement}
    return (("" if decided else "smoke test, too few steps to decide: ")
            + f"trained, N = {N}, d = {d}, K = {'/'.join(map(str, sorted(K)))} (rank {rank}), "
            f"{steps} steps, near zero means <= {near_zero:g}: " + "; ".join(said)
            + f"; the chapter's target at or above the slide's bound at {held[0]}/{held[1]} H")
