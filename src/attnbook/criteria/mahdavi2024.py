"""Criteria of the mahdavi2024 claims (ledger: data/claims/mahdavi2024.csv).

The measurements are the chapters' tables (pandas DataFrames, or anything with the same
columns): the theorem checks of ``mahdavi2024_theory``, the per-point mean training accuracy
or MSE of the gradient-descent chapters (columns ``T``, the swept variable, ``metric``), and
the rank-test fractions of ``mahdavi2024_real_models``.
"""

import math

import numpy as np

from ..errors import AttnbookError
from . import NOT_TESTABLE, all_at_most, criterion

__all__ = ["clopper_pearson", "crossing_k", "line_r2_by", "memorization_limit",
           "unsaturated_counts"]


def _rows(table, *columns):
    """The columns of ``table`` (DataFrame or dict of sequences) as lists of equal length."""
    out = [list(table[c]) for c in columns]
    if len({len(c) for c in out}) > 1:
        raise AttnbookError(f"columns {columns} of unequal length")
    return out


def line_r2_by(points, x, *, saturated_at, min_points):
    """Per T: R^2 of the least-squares line of ``metric`` against ``x`` through the points
    with ``metric < saturated_at`` (mahdavi2024 section 5.2: "R^2 of the best linear fit of the
    non-saturated part"); NaN where fewer than ``min_points`` such points remain.

    >>> pts = {"T": [8] * 4, "H": [1, 2, 3, 4], "metric": [0.2, 0.4, 0.6, 1.0]}
    >>> line_r2_by(pts, "H", saturated_at=0.98, min_points=3)
    {8: 1.0}
    """
    Ts, xs, ys = _rows(points, "T", x, "metric")
    out = {}
    for T in sorted(set(Ts)):
        sel = [(float(a), float(b)) for t, a, b in zip(Ts, xs, ys, strict=True)
               if t == T and b < saturated_at]
        if len(sel) < min_points:
            out[T] = math.nan
            continue
        a, b = np.array(sel).T
        total = float(((b - b.mean()) ** 2).sum())
        if total == 0.0:  # a flat run: a line fits it exactly
            out[T] = 1.0
            continue
        fit = np.polyval(np.polyfit(a, b, 1), a)
        out[T] = round(1.0 - float(((b - fit) ** 2).sum()) / total, 12)
    return out


def _decided(r2: dict) -> list[float]:
    return [v for v in r2.values() if not math.isnan(v)]


def _linear(points, x, saturated_at, min_points, r2_min) -> bool | str:
    """The line test of M-F2a; NOT_TESTABLE when no T has ``min_points`` points below
    ``saturated_at`` (every model memorized its data: no trend was measured)."""
    r2 = _decided(line_r2_by(points, x, saturated_at=saturated_at, min_points=min_points))
    return all(v >= r2_min for v in r2) if r2 else NOT_TESTABLE


def unsaturated_counts(points, *, saturated_at=None, floor=None) -> dict:
    """Per T: how many points have not saturated, i.e. an accuracy (``metric``) below
    ``saturated_at``, or an MSE above ``floor`` (a model that memorized its data shows no
    trend: a trend criterion is tested only where some have not).

    >>> unsaturated_counts({"T": [8, 8, 8, 16], "metric": [0.5, 0.99, 1.0, 0.9]},
    ...                    saturated_at=0.98)
    {8: 1, 16: 1}
    >>> unsaturated_counts({"T": [8, 8], "metric": [1e-5, 2e-3]}, floor=1e-4)
    {8: 1}
    """
    if (saturated_at is None) == (floor is None):
        raise AttnbookError("unsaturated_counts: give saturated_at (accuracy) or floor (MSE)")
    Ts, ys = _rows(points, "T", "metric")
    out = {T: 0 for T in sorted(set(Ts))}
    for T, y in zip(Ts, ys, strict=True):
        y = float(y)
        out[T] += (y < saturated_at) if saturated_at is not None else (y > floor)
    return out


def _testable(points, min_points, **level) -> bool:
    return any(c >= min_points for c in unsaturated_counts(points, **level).values())


# ---------------------------------------------------------------- theory (exact constructions)

def _construction_exact(table, max_rel_err) -> bool:
    rank, bound, err, inc = _rows(table, "rank", "bound", "max_rel_err", "increments_ok")
    return bool(rank) and all(int(r) == int(b) and float(e) < max_rel_err and bool(i)
                              for r, b, e, i in zip(rank, bound, err, inc, strict=True))


@criterion("M-T1")
def construction_reaches_the_bound(table, *, max_rel_err):
    """M-T1: at every setting of the grid (one row each: ``rank``, ``bound``, ``max_rel_err``,
    ``increments_ok``, ``saturated_within_delta``) rank(Z) equals H(min(n,d_h)-1)+1, the labels
    are memorized with relative error below ``max_rel_err``, every head raises the rank by
    min(n,d_h)-1 and keeps the earlier examples saturated within the delta of Appendix B.2."""
    (sat,) = _rows(table, "saturated_within_delta")
    return _construction_exact(table, max_rel_err) and all(bool(s) for s in sat)


@criterion("M-R1")
def construction_reaches_the_kruskal_bound(table, *, max_rel_err):
    """M-R1: at every setting (queries of Kruskal rank Q < n) rank(Z) equals
    H(min(Q,d_h)-1)+1, each head raises it by min(Q,d_h)-1 and the labels are memorized with
    relative error below ``max_rel_err``."""
    return _construction_exact(table, max_rel_err)


def _never_above_and_attained(table, max_ratio) -> bool:
    """Random draws (``max_rank``) and adversarial searches (``adv_max_rank``,
    ``adv_max_ratio``, NaN where none ran) never exceed ``bound``; random draws attain it."""
    bound, best, adv, ratio = _rows(table, "bound", "max_rank", "adv_max_rank", "adv_max_ratio")
    if not bound:
        return False
    searched = [(b, a, r) for b, a, r in zip(bound, adv, ratio, strict=True)
                if not (a is None or (isinstance(a, float) and math.isnan(a)))]
    return (all(int(m) == int(b) for m, b in zip(best, bound, strict=True))
            and all(int(a) <= int(b) and float(r) < max_ratio for b, a, r in searched))


@criterion("M-P2")
def shared_context_bound_holds_and_is_attained(table, *, max_ratio):
    """M-P2: per H, no random or adversarial draw exceeds H(n-1)+1 (adversarial
    sigma_(bound+1)/sigma_1 below ``max_ratio``) and the random draws attain it."""
    return _never_above_and_attained(table, max_ratio)


@criterion("M-P5")
def constant_sum_bound_holds_and_is_attained(table, *, max_ratio):
    """M-P5: per H, no random or adversarial draw exceeds H(d-1)+1 (adversarial
    sigma_(bound+1)/sigma_1 below ``max_ratio``) and the random draws attain it."""
    return _never_above_and_attained(table, max_ratio)


@criterion("M-P4")
def trivial_attention_gives_assumptions_1_and_2(table):
    """M-P4: every input data set satisfies Assumptions 2 and 3 and not 1 (``in_asm1..3``),
    and the output of the trivial attention layer satisfies Assumptions 1 and 2
    (``out_asm1``, ``out_asm2``) for every one of them."""
    a1, a2, a3, o1, o2 = _rows(table, "in_asm1", "in_asm2", "in_asm3", "out_asm1", "out_asm2")
    return bool(a1) and all(bool(i2) and bool(i3) and not bool(i1) and bool(u1) and bool(u2)
                            for i1, i2, i3, u1, u2 in zip(a1, a2, a3, o1, o2, strict=True))


@criterion("M-P3")
def relu_net_below_the_bound_mha_above(table, equal_model, *, mha_residual, fcn_residual):
    """M-P3: ``table``'s first row is the MHA, the others ReLU nets (``model``, ``T``,
    ``params``, ``bound``, ``residual``, ``jacobian_rank``, ``reduced_params``, ``T_d_out``).
    Every net's output-Jacobian rank is at most (n+1)m+(m+1)d_out (``reduced_params``), which
    is below T d_out, and every net keeps a relative residual above ``fcn_residual``; the MHA
    memorizes T examples to a residual below ``mha_residual``, with T above the bound of the
    net ``equal_model`` that has no more parameters than the MHA."""
    model, T, params, bound, res, jac, red, td = _rows(
        table, "model", "T", "params", "bound", "residual", "jacobian_rank", "reduced_params",
        "T_d_out")
    if len(model) < 2 or equal_model not in model[1:]:
        return False
    nets = range(1, len(model))
    eq = model.index(equal_model)
    return (all(jac[i] <= red[i] < td[i] and res[i] > fcn_residual for i in nets)
            and res[0] < mha_residual and T[0] > bound[eq] and params[eq] <= params[0])


# ---------------------------------------------------------------- trained by gradient descent

@criterion("M-F2a")
def accuracy_linear_in_heads(points, *, saturated_at, min_points, r2_min):
    """M-F2a: ``points`` (``T``, ``H``, ``metric`` = mean training accuracy): for every T with
    at least ``min_points`` points of accuracy below ``saturated_at``, the line fit through them
    has R^2 >= ``r2_min``; no such T: not testable (nothing but saturated models)."""
    return _linear(points, "H", saturated_at, min_points, r2_min)


@criterion("M-F2c")
def head_size_gains_stop_at_n(gains):
    """M-F2c: for every T (rows with ``gain_to_n``, ``gain_beyond_n``), the accuracy rises from
    the smallest d_h to d_h = n, and by more than it changes from d_h = n to the largest d_h
    (the paper's "flat beyond" read as: the head sizes past n add less than those up to n)."""
    to_n, beyond = _rows(gains, "gain_to_n", "gain_beyond_n")
    return bool(to_n) and all(float(a) > 0 and float(a) > float(b)
                              for a, b in zip(to_n, beyond, strict=True))


def memorization_limit(accuracy, H, n):
    """The largest T of the grid memorized perfectly (accuracy 1) by the models with H heads,
    its ratio to H(n-1)+1, and whether a larger T of the grid is not memorized (the limit is
    bracketed); ``(None, None, False)`` when no T is memorized perfectly.

    >>> memorization_limit({"H": [4, 4, 4], "T": [29, 58, 87], "metric": [1.0, 1.0, 0.97]}, 4, 8)
    (58, 2.0, True)
    """
    Hs, Ts, acc = _rows(accuracy, "H", "T", "metric")
    mine = [(int(t), float(a)) for h, t, a in zip(Hs, Ts, acc, strict=True) if int(h) == H]
    perfect = [t for t, a in mine if a >= 1.0]
    if not perfect:
        return None, None, False
    T = max(perfect)
    return T, round(T / (H * (n - 1) + 1), 12), any(t > T for t, _ in mine)


@criterion("M-F3")
def saturation_at_the_memorization_limit(accuracy, max_coef, H, n, *, coef, saturated_pairs,
                                         unsaturated_examples, ratio_H4, ratio_H8,
                                         ratio_factor):
    """M-F3, one part per H of the paper (4 and 8). ``accuracy``: the grid of T (``H``, ``T``,
    ``metric``); ``max_coef``: (T, H) largest softmax coefficient of every example and head of
    the model at the largest T memorized perfectly; ``n``: the context size.

    Capacity: that T, as a ratio to H(n-1)+1, lies within a factor ``ratio_factor`` of the
    paper's ratio (``ratio_H4`` = 550/125, ``ratio_H8`` = 1300/249 at d = 64, n = 32), and a
    larger T of the grid is not memorized (else the limit lies above the grid). Saturation: at
    that T more than a share ``saturated_pairs`` of (head, example) pairs have a coefficient
    above ``coef``, and at least a share ``unsaturated_examples`` of the examples keep a head
    with none above it. No T memorized perfectly: not reproduced."""
    paper = {4: ratio_H4, 8: ratio_H8}
    if H not in paper:
        raise AttnbookError(f"M-F3: the paper reports the memorization limit for H in "
                            f"{sorted(paper)}, not H = {H}")
    T, ratio, bracketed = memorization_limit(accuracy, H, n)
    if T is None:
        return False
    m = np.asarray(max_coef, dtype=float)
    if m.shape != (T, H):
        raise AttnbookError(f"M-F3: max_coef has shape {m.shape}, expected (T, H) = {(T, H)} "
                            f"for the largest T memorized perfectly")
    sat = m > coef
    frac_saturated = float(sat.mean())
    frac_with_unsaturated = float((sat.sum(axis=1) < H).mean())
    return (bracketed and 1 / ratio_factor <= ratio / paper[H] <= ratio_factor
            and frac_saturated > saturated_pairs
            and frac_with_unsaturated >= unsaturated_examples)


@criterion("M-F4")
def linear_in_heads_weaker_in_context(heads_gp, context_shared, context_gp, *, saturated_at,
                                      min_points, r2_min):
    """M-F4, per-example contexts. (i) ``heads_gp`` (``T``, ``H``, ``metric``): the line test
    of M-F2a (R^2 >= ``r2_min`` through the points below ``saturated_at``, every T with at
    least ``min_points`` of them). (ii) Linearity in n weakens: the R^2 of the same line fit
    against n is, at every T of ``context_gp`` with ``min_points`` such points, below its
    smallest value over the T of ``context_shared`` (Figure 2(b), same H). Any of the three
    sweeps without such a T: not testable."""
    gp = _decided(line_r2_by(context_gp, "n", saturated_at=saturated_at, min_points=min_points))
    shared = _decided(line_r2_by(context_shared, "n", saturated_at=saturated_at,
                                 min_points=min_points))
    linear = _linear(heads_gp, "H", saturated_at, min_points, r2_min)
    if linear == NOT_TESTABLE or not gp or not shared:
        return NOT_TESTABLE
    return linear and max(gp) < min(shared)


def _monotone_down(points, x, floor) -> bool:
    Ts, xs, ys = _rows(points, "T", x, "metric")
    if not Ts:
        return False
    for T in set(Ts):
        seq = sorted((float(a), max(float(b), floor)) for t, a, b in zip(Ts, xs, ys, strict=True)
                     if t == T)
        if any(not math.isfinite(b) for _, b in seq):
            return False
        if any(b2 > b1 for (_, b1), (_, b2) in zip(seq, seq[1:], strict=False)):
            return False
    return True


@criterion("M-F5")
def mse_non_increasing(heads_reg, context_reg, *, mse_floor, min_points):
    """M-F5: for every T, the best training MSE (``metric``, raised to ``mse_floor``: below it
    counts as memorized, so equal) never rises from one H to the next (``heads_reg``) nor from
    one n to the next (``context_reg``). Tested only where a trend can show: each sweep needs
    a T with at least ``min_points`` models above the floor, else not testable (models that all
    memorized their labels are equal at the floor and pass any monotone test)."""
    if not (_testable(heads_reg, min_points, floor=mse_floor)
            and _testable(context_reg, min_points, floor=mse_floor)):
        return NOT_TESTABLE
    return _monotone_down(heads_reg, "H", mse_floor) and _monotone_down(context_reg, "n",
                                                                        mse_floor)


@criterion("M-F2b")
def accuracy_non_decreasing_in_context(worst_steps, points, *, max_drop, saturated_at,
                                       min_points):
    """M-F2b: for every T, the largest drop of accuracy from one context length n to the next
    is at most ``max_drop`` (seed noise). ``worst_steps``: that drop per T; ``points`` (``T``,
    ``metric``): the sweep's mean accuracies. Tested only where a trend can show: a T with at
    least ``min_points`` accuracies below ``saturated_at``, else not testable (saturated models
    never drop)."""
    if not _testable(points, min_points, saturated_at=saturated_at):
        return NOT_TESTABLE
    return all_at_most(worst_steps, max_drop)


# ---------------------------------------------------------------- real models

def clopper_pearson(successes: int, draws: int, confidence: float) -> tuple[float, float]:
    """One-sided Clopper-Pearson bounds of a binomial share: the lower bound at ``confidence``
    (the share is at least this, unless a chance of 1 - confidence came true) and the upper
    bound likewise (scipy.stats.binomtest, alternative "greater" and "less", exact method).

    >>> [round(b, 4) for b in clopper_pearson(990, 1000, 0.95)]
    [0.9831, 0.9946]
    >>> clopper_pearson(20, 20, 0.95)[1], round(clopper_pearson(0, 20, 0.95)[1], 4)
    (1.0, 0.1391)
    """
    from scipy.stats import binomtest

    x, N = int(successes), int(draws)
    if N < 1 or not 0 <= x <= N:
        raise AttnbookError(f"a share of {x} successes in {N} draws")
    low = binomtest(x, N, alternative="greater").proportion_ci(confidence, "exact").low
    high = binomtest(x, N, alternative="less").proportion_ci(confidence, "exact").high
    return float(low), float(high)


def crossing_k(ks, fractions, level):
    """The k at which a falling fraction-vs-k curve passes below ``level``: linear
    interpolation between the last k at or above it and the next k (None when no measured k is
    below it, or none at or above it).

    >>> crossing_k([10, 20, 30], [0.9, 0.7, 0.3], 0.5)
    25.0
    """
    pts = sorted((float(k), float(f)) for k, f in zip(ks, fractions, strict=True))
    above = [i for i, (_, f) in enumerate(pts) if f >= level]
    if not above or above[-1] + 1 >= len(pts):
        return None
    (k0, f0), (k1, f1) = pts[above[-1]], pts[above[-1] + 1]
    return round(k0 + (k1 - k0) * (f0 - level) / (f0 - f1), 1)


@criterion("M-F1")
def kruskal_rank_slightly_above_n(at_n, curve, n, d, *, fraction_min, confidence, min_draws,
                                  crossing, max_d_fraction):
    """M-F1, from the randomized rank test on the queries after one random attention layer
    (draw k of them: is the k x d matrix of rank k?), decided by one-sided Clopper-Pearson
    bounds of the shares (never a sampled fraction against 0.99 directly); how often a
    bootstrap resample of the draws overturns the verdict is its stability, not part of it.

    ``at_n`` = (successes, draws) at k = n; ``curve``: rows (k, successes, draws, exact),
    ``exact`` True where the share is 0 for certain (k above the rank of all the queries).

    At least n: from at least ``min_draws`` draws (fewer: AttnbookError), the one-sided
    Clopper-Pearson lower bound at ``confidence`` of the share of rank-k subsets at k = n is
    at least ``fraction_min`` (the paper's 99% test of Assumption 1). Far below d: at some
    measured k below ``max_d_fraction`` d the share is below ``crossing`` beyond noise (its
    one-sided upper bound is below it, or it is 0 for certain), so the curve has crossed 50%
    there. Where it crosses (slightly above n, the paper says) is reported, not tested."""
    successes, draws = (int(x) for x in at_n)
    if draws < min_draws:
        raise AttnbookError(f"M-F1 decides from at least min_draws = {min_draws} draws at "
                            f"k = n, got {draws}")
    at_least_n = clopper_pearson(successes, draws, confidence)[0] >= fraction_min
    below = False
    for k, x, N, exact in curve:
        if float(k) < max_d_fraction * d:
            high = 0.0 if bool(exact) and int(x) == 0 else clopper_pearson(x, N, confidence)[1]
            below = below or high < crossing
    return bool(at_least_n and below)


def _cell_agrees(test, fraction, paper_holds, fraction_min) -> bool:
    f = float(fraction)
    if math.isnan(f):
        return False
    holds = f == 1.0 if test == "Assumption 2" else f >= fraction_min
    return holds == bool(paper_holds)


@criterion("M-T1tab")
def image_table_cell_agrees(test, fraction, paper_holds, *, fraction_min):
    """M-T1tab, one cell: General Position, Assumption 1 or 3 holds when at least a share
    ``fraction_min`` of the random k-subsets have rank k, Assumption 2 when every context has
    rank n (a share of 1); the cell is reproduced when that verdict equals the paper's."""
    return _cell_agrees(test, fraction, paper_holds, fraction_min)


@criterion("M-T3tab")
def text_table_cell_agrees(test, fraction, paper_holds, *, fraction_min):
    """M-T3tab, one cell: the test of M-T1tab on a text model stage."""
    return _cell_agrees(test, fraction, paper_holds, fraction_min)
