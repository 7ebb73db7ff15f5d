"""Criteria of the mahdavi2024 claims (ledger: data/claims/mahdavi2024.csv).

The measurements are the chapters' tables (pandas DataFrames, or anything with the same
columns): the theorem checks of ``mahdavi2024_theory``, the per-point mean training accuracy
or MSE of the gradient-descent chapters (columns ``T``, the swept variable, ``metric``), and
the rank-test fractions of ``mahdavi2024_real_models``. Where a criterion compares two noisy
means (M-F2b, M-F2c, M-F5) the table also holds each point's seed standard deviation
(``metric_std``) and its number of seeds (``seeds``), and the difference is read in standard
errors of the seeds: (m_b - m_a) / sqrt(s_a^2/k_a + s_b^2/k_b).
"""

import math

import numpy as np

from ..errors import AttnbookError
from . import NOT_TESTABLE, criterion, description, missing, thresholds

__all__ = ["clopper_pearson", "crossing_k", "decade", "f2c_case", "f2c_description",
           "head_size_reading", "kruskal_reading", "line_r2_by", "memorization_limit",
           "se_difference", "trend_description", "trend_in_se", "unsaturated_counts"]


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


def _judged(points, min_points, **level) -> list:
    """The T with at least ``min_points`` points short of saturation (or above the floor)."""
    return [T for T, c in unsaturated_counts(points, **level).items() if c >= min_points]


def se_difference(a, b) -> float:
    """``b - a`` in standard errors of the seeds: (m_b - m_a) / sqrt(se_a^2 + se_b^2), each point
    ``a``, ``b`` a (mean, standard error) pair; NaN where a point has no standard error (one
    seed); with both errors 0, 0 for equal means and +-inf otherwise.

    >>> se_difference((0.5, 0.03), (0.6, 0.04))
    2.0
    >>> se_difference((0.5, 0.0), (0.5, 0.0)), se_difference((0.5, 0.0), (0.4, 0.0))
    (0.0, -inf)
    """
    (ma, sa), (mb, sb) = a, b
    se = math.hypot(float(sa), float(sb))
    diff = float(mb) - float(ma)
    if math.isnan(se):
        return math.nan
    if se == 0.0:
        return 0.0 if diff == 0.0 else math.copysign(math.inf, diff)
    return round(diff / se, 12)


def _curves(points, x, floor=None) -> dict:
    """Per T: the points (x, mean, standard error of the mean over seeds) in the order of x;
    the mean raised to ``floor`` when one is given (an MSE below it counts as memorized)."""
    Ts, xs, ys, sds, ks = _rows(points, "T", x, "metric", "metric_std", "seeds")
    out: dict = {}
    for T, a, y, s, k in zip(Ts, xs, ys, sds, ks, strict=True):
        y = float(y) if floor is None else max(float(y), floor)
        out.setdefault(T, []).append((float(a), y, float(s) / math.sqrt(float(k))))
    return {T: sorted(c) for T, c in sorted(out.items())}


def trend_in_se(points, x, *, falling=False, floor=None) -> dict:
    """Per T: the worst step from one ``x`` to the next and the change from the first ``x`` to
    the last, each along the trend (a rise of accuracy, a fall of an MSE when ``falling``) in
    standard errors of the seeds (:func:`se_difference`; negative: against the trend). ``points``:
    ``T``, ``x``, ``metric`` (the mean over seeds), ``metric_std``, ``seeds``; ``floor`` raises
    every mean to it first.

    >>> pts = {"T": [8] * 3, "n": [1, 2, 3], "metric": [0.2, 0.19, 0.5],
    ...        "metric_std": [0.01, 0.01, 0.02], "seeds": [4, 4, 4]}
    >>> {T: {k: round(v, 2) for k, v in r.items()} for T, r in trend_in_se(pts, "n").items()}
    {8: {'worst_step': -1.41, 'overall': 26.83}}
    """
    sign = -1.0 if falling else 1.0
    out = {}
    for T, c in _curves(points, x, floor).items():
        z = [sign * se_difference(p[1:], q[1:]) for p, q in zip(c, c[1:], strict=False)]
        out[T] = {"worst_step": min(z) if z else math.nan,
                  "overall": sign * se_difference(c[0][1:], c[-1][1:]) if len(c) > 1 else math.nan}
    return out


def _trend_holds(points, x, judged, n_se, falling=False, floor=None) -> bool | str:
    """At every judged T: no step against the trend by more than ``n_se`` standard errors and
    a change along it, first x to last, of more than ``n_se``; NOT_TESTABLE without a judged T
    or where a point has one seed (no standard error)."""
    curves = _curves(points, x, floor)
    if any(not math.isfinite(m) for T in judged for _, m, _ in curves[T]):
        return False  # a model that diverged (NaN) memorized nothing
    trend = trend_in_se(points, x, falling=falling, floor=floor)
    read = [trend[T] for T in judged]
    if not read or any(math.isnan(v) for r in read for v in r.values()):
        return NOT_TESTABLE
    return all(r["worst_step"] >= -n_se and r["overall"] > n_se for r in read)


def trend_description(points, x, judged, *, falling=False, floor=None) -> str:
    """The numbers :func:`trend_in_se` reads, per judged T, in words.

    >>> pts = {"T": [8] * 3, "n": [1, 2, 3], "metric": [0.2, 0.19, 0.5],
    ...        "metric_std": [0.01, 0.01, 0.02], "seeds": [4, 4, 4]}
    >>> trend_description(pts, "n", [8])
    'T=8: worst step -0.010 to n = 2 (-1.41 se), first to last +0.300 (+26.83 se)'
    """
    trend = trend_in_se(points, x, falling=falling, floor=floor)
    curves = _curves(points, x, floor)
    sign = -1.0 if falling else 1.0
    fmt = "{:+.2e}" if falling else "{:+.3f}"
    out = []
    for T in judged:
        c = curves[T]
        steps = [(sign * se_difference(p[1:], q[1:]), q[1] - p[1], q[0])
                 for p, q in zip(c, c[1:], strict=False)]
        if not steps:
            out.append(f"T={T}: one point")
            continue
        _, step, at = min(steps, key=lambda z: (z[0] if not math.isnan(z[0]) else -math.inf))
        out.append(f"T={T}: worst step {fmt.format(step)} to {x} = {at:g} "
                   f"({sign * trend[T]['worst_step']:+.2f} se), first to last "
                   f"{fmt.format(c[-1][1] - c[0][1])} ({sign * trend[T]['overall']:+.2f} se)")
    return "; ".join(out)


# ---------------------------------------------------------------- theory (exact constructions)

def decade(x: float) -> str:
    """An error rounded up to a power of ten, so that a sentence is stable across re-runs.

    >>> [decade(x) for x in (1e-6, 2e-6, 0.9, 1.0, 15.0)]
    ['1e-6', '1e-5', '1e0', '1e0', '1e2']
    """
    return f"1e{math.ceil(math.log10(max(x, 1e-300)))}"


def _exact_settings(table, max_rel_err) -> list[bool]:
    """Per setting: rank(Z) equals the bound, every head raised it as it should, and the labels
    are memorized with relative error below ``max_rel_err``."""
    rank, bound, err, inc = _rows(table, "rank", "bound", "max_rel_err", "increments_ok")
    return [int(r) == int(b) and float(e) < max_rel_err and bool(i)
            for r, b, e, i in zip(rank, bound, err, inc, strict=True)]


def _construction_exact(table, max_rel_err) -> bool:
    exact = _exact_settings(table, max_rel_err)
    return bool(exact) and all(exact)


@criterion("M-T1")
def construction_reaches_the_bound(table, *, max_rel_err):
    """M-T1: at every setting of the grid (one row each: ``rank``, ``bound``, ``max_rel_err``,
    ``increments_ok``, ``saturated_within_delta``) rank(Z) equals H(min(n,d_h)-1)+1, the labels
    are memorized with relative error below ``max_rel_err``, every head raises the rank by
    min(n,d_h)-1 and keeps the earlier examples saturated within the delta of Appendix B.2."""
    (sat,) = _rows(table, "saturated_within_delta")
    return _construction_exact(table, max_rel_err) and all(bool(s) for s in sat)


@description("M-T1")
def construction_in_words(table, *, max_rel_err):
    """How many settings of ``table`` the construction reaches exactly (:func:`_exact_settings`),
    where its widths d_h lie against n, its worst error and whether the earlier examples stayed
    saturated."""
    n, d_h, d_out, err, sat = _rows(table, "n", "d_h", "d_out", "max_rel_err",
                                    "saturated_within_delta")
    pairs = list(zip(d_h, n, strict=True))
    sides = [side for side, holds in (("below", any(h < k for h, k in pairs)),
                                      ("equal to", any(h == k for h, k in pairs)),
                                      ("above", any(h > k for h, k in pairs))) if holds]
    sides = " and ".join([", ".join(sides[:-1]), sides[-1]] if len(sides) > 1 else sides)
    return (f"rank(Z) = H(min(n,d_h)-1)+1 and max rel. error < {decade(max_rel_err)} at "
            f"{sum(_exact_settings(table, max_rel_err))}/{len(n)} settings (per-example and "
            f"shared contexts, d_h {sides} n, d_out up to {max(int(x) for x in d_out)}); worst "
            f"error < {decade(max(err))}; each head adds min(n,d_h)-1 to the rank; old examples "
            f"saturated within delta: {all(bool(x) for x in sat)}")


@criterion("M-R1")
def construction_reaches_the_kruskal_bound(table, *, max_rel_err):
    """M-R1: at every setting (queries of Kruskal rank Q < n) rank(Z) equals
    H(min(Q,d_h)-1)+1, each head raises it by min(Q,d_h)-1 and the labels are memorized with
    relative error below ``max_rel_err``."""
    return _construction_exact(table, max_rel_err)


@description("M-R1")
def kruskal_construction_in_words(table, *, max_rel_err):
    """The Kruskal ranks Q of ``table``, how many of its settings the construction reaches
    exactly (:func:`_exact_settings`) and its worst error."""
    Q, n, err = _rows(table, "Q", "n", "max_rel_err")
    return (f"queries of Kruskal rank Q in {sorted({int(q) for q in Q})} < n = "
            f"{max(int(k) for k in n)}: rank(Z) = H(min(Q,d_h)-1)+1 with exact memorization at "
            f"{sum(_exact_settings(table, max_rel_err))}/{len(Q)} settings; worst error < "
            f"{decade(max(err))}")


def _never_above_and_attained(table, max_ratio) -> bool:
    """Random draws (``max_rank``) and adversarial searches (``adv_max_rank``,
    ``adv_max_ratio``, NaN where none ran) never exceed ``bound``; random draws attain it. The
    row asks what the adversarial search keeps wherever a larger rank fits in Z (bound + 1 <=
    min(``T``, ``width_Hd``)): a row with room and no search has not shown it."""
    bound, best, adv, ratio, T, width = _rows(table, "bound", "max_rank", "adv_max_rank",
                                              "adv_max_ratio", "T", "width_Hd")
    if not bound:
        return False
    ran = [not missing(a) for a in adv]
    if any(int(b) + 1 <= min(int(t), int(w)) and not r
           for b, t, w, r in zip(bound, T, width, ran, strict=True)):
        return False
    searched = [(b, a, r) for b, a, r, s in zip(bound, adv, ratio, ran, strict=True) if s]
    return (all(int(m) == int(b) for m, b in zip(best, bound, strict=True))
            and all(int(a) <= int(b) and float(r) < max_ratio for b, a, r in searched))


@criterion("M-P2")
def shared_context_bound_holds_and_is_attained(table, *, max_ratio):
    """M-P2: per H, no random or adversarial draw exceeds H(n-1)+1 (adversarial
    sigma_(bound+1)/sigma_1 below ``max_ratio``) and the random draws attain it."""
    return _never_above_and_attained(table, max_ratio)


def upper_bound_in_words(table, *, draws):
    """What a rank upper-bound table (``bound``, ``max_rank``, ``width_Hd``, ``control_rank``,
    ``adv_max_rank`` and ``adv_max_ratio``, NaN where no search ran) shows: the bound attained
    and never exceeded by ``draws`` random draws, the adversarial search's largest ratio, and
    the unconstrained control above the bound where H d leaves room."""
    bound, best, width, control, adv, ratio = _rows(
        table, "bound", "max_rank", "width_Hd", "control_rank", "adv_max_rank", "adv_max_ratio")
    searched = [r for a, r in zip(adv, ratio, strict=True) if not missing(a)]
    room = [(b, c) for b, w, c in zip(bound, width, control, strict=True) if w > b]
    return (f"max rank = bound at {sum(m == b for m, b in zip(best, bound, strict=True))}/"
            f"{len(bound)} values of H ({draws} random draws each, bound + 4 rows), never above "
            f"it: {all(m <= b for m, b in zip(best, bound, strict=True))}; "
            + (f"adversarial sigma_(bound+1)/sigma_1 < {decade(max(searched))}" if searched
               else "no adversarial search (bound = min(T, H d) at every H)")
            + f"; unconstrained control above the bound at {sum(c > b for b, c in room)}/"
            f"{len(room)} values of H where H d > bound")


description("M-P2")(upper_bound_in_words)


@criterion("M-P5")
def constant_sum_bound_holds_and_is_attained(table, *, max_ratio):
    """M-P5: per H, no random or adversarial draw exceeds H(d-1)+1 (adversarial
    sigma_(bound+1)/sigma_1 below ``max_ratio``) and the random draws attain it."""
    return _never_above_and_attained(table, max_ratio)


description("M-P5")(upper_bound_in_words)


@criterion("M-P4")
def trivial_attention_gives_assumptions_1_and_2(table):
    """M-P4: every input data set satisfies Assumptions 2 and 3 and not 1 (``in_asm1..3``),
    and the output of the trivial attention layer satisfies Assumptions 1 and 2
    (``out_asm1``, ``out_asm2``) for every one of them."""
    a1, a2, a3, o1, o2 = _rows(table, "in_asm1", "in_asm2", "in_asm3", "out_asm1", "out_asm2")
    return bool(a1) and all(bool(i2) and bool(i3) and not bool(i1) and bool(u1) and bool(u2)
                            for i1, i2, i3, u1, u2 in zip(a1, a2, a3, o1, o2, strict=True))


@description("M-P4")
def trivial_attention_in_words(table):
    """How many input data sets satisfy Assumptions 2 and 3 and not 1, and among them how many
    outputs of the trivial attention layer satisfy Assumptions 1 and 2."""
    a1, a2, a3, o1, o2 = _rows(table, "in_asm1", "in_asm2", "in_asm3", "out_asm1", "out_asm2")
    valid = [bool(i2) and bool(i3) and not bool(i1) for i1, i2, i3 in zip(a1, a2, a3, strict=True)]
    out_ok = sum(v and bool(u1) and bool(u2) for v, u1, u2 in zip(valid, o1, o2, strict=True))
    return (f"input: Asm. 2+3 hold and Asm. 1 fails at {sum(valid)}/{len(valid)} datasets; "
            f"output of A_0: Asm. 1+2 hold (exact Kruskal test) at {out_ok}/{sum(valid)}")


@criterion("M-P3")
def relu_net_below_the_bound_mha_above(table, equal_model, *, mha_residual, fcn_residual):
    """M-P3: ``table``'s first row is the MHA, the others ReLU nets (``model``, ``T``,
    ``params``, ``bound``, ``residual``, ``jacobian_rank``, ``reduced_params``, ``T_d_out``).
    Every net's output-Jacobian rank is at most (n+1)m+(m+1)d_out (``reduced_params``), which
    is below T d_out, and every net keeps a relative residual above ``fcn_residual``; the MHA
    memorizes T examples to a residual below ``mha_residual``, with T above the bound of the
    net ``equal_model``: the largest of the nets with no more parameters than the MHA."""
    model, T, params, bound, res, jac, red, td = _rows(
        table, "model", "T", "params", "bound", "residual", "jacobian_rank", "reduced_params",
        "T_d_out")
    if len(model) < 2 or equal_model not in model[1:]:
        return False
    nets = range(1, len(model))
    eq = model.index(equal_model)
    largest = max((params[i] for i in nets if params[i] <= params[0]), default=None)
    return (all(jac[i] <= red[i] < td[i] and res[i] > fcn_residual for i in nets)
            and res[0] < mha_residual and T[0] > bound[eq] and params[eq] <= params[0]
            and params[eq] == largest)


@description("M-P3")
def relu_against_mha_in_words(table, equal_model, *, fcn_residual, mha_residual, n, d, d_out,
                              H, m_values):
    """The MHA's examples, parameters and residual (memorized where it is below
    ``mha_residual``, as the criterion reads it), then the ReLU nets of widths ``m_values``
    (``equal_model``: the one of the MHA's size, its bound against T): how many have their
    Jacobian rank within (n+1)m+(m+1)d_out < T d_out, and how many keep a residual above
    ``fcn_residual``; ``n``, ``d``, ``d_out``, ``H``: the chapter's Appendix F setting."""
    model, T, params, bound, res, jac, red, td = _rows(
        table, "model", "T", "params", "bound", "residual", "jacobian_rank", "reduced_params",
        "T_d_out")
    nets = range(1, len(model))
    eq = model.index(equal_model)
    m_equal = equal_model.removeprefix("ReLU m=")
    fit = (f"memorizes them to < {decade(res[0])}" if res[0] < mha_residual else
           f"does not memorize them (residual {res[0]:.1e}, not below {mha_residual:g})")
    return (f"T = {int(T[0])} examples of App. F (n={n}, d={d}, d_out={d_out}): MHA with H={H} "
            f"({int(params[0])} parameters) {fit}; ReLU nets with m in {m_values} "
            f"(m={m_equal}: {int(params[eq])} parameters, bound {bound[eq]:.2f} "
            f"{'<' if T[0] > bound[eq] else '>='} T): Jacobian rank <= (n+1)m+(m+1)d_out < "
            f"T d_out at "
            f"{sum(jac[i] <= red[i] < td[i] for i in nets)}/{len(nets)}, training residual > "
            f"{decade(fcn_residual)} at {sum(res[i] > fcn_residual for i in nets)}/{len(nets)}")


# ---------------------------------------------------------------- trained by gradient descent

@criterion("M-F2a")
def accuracy_linear_in_heads(points, *, saturated_at, min_points, r2_min):
    """M-F2a: ``points`` (``T``, ``H``, ``metric`` = mean training accuracy): for every T with
    at least ``min_points`` points of accuracy below ``saturated_at``, the line fit through them
    has R^2 >= ``r2_min``; no such T: not testable (nothing but saturated models)."""
    return _linear(points, "H", saturated_at, min_points, r2_min)


def _r2_text(points, x, saturated_at, min_points) -> tuple[str, bool]:
    """The R^2 of the line fit per T that :func:`line_r2_by` gives the criteria, in words, and
    whether any T has enough points below saturation to fit."""
    r2 = line_r2_by(points, x, saturated_at=saturated_at, min_points=min_points)
    few = f"< {min_points} points"
    text = ", ".join(f"T={T}: " + (few if math.isnan(v) else f"{v:.4f}") for T, v in r2.items())
    return text, not all(math.isnan(v) for v in r2.values())


@description("M-F2a")
def heads_line_in_words(points, *, saturated_at, min_points):
    """The R^2 per T that M-F2a reads (or why it has none to read).

    >>> pts = {"T": [8] * 4, "H": [1, 2, 3, 4], "metric": [0.2, 0.4, 0.6, 1.0]}
    >>> heads_line_in_words(pts, saturated_at=0.98, min_points=3)
    'R^2 of the line vs H on the non-saturated part: T=8: 1.0000'
    """
    text, decidable = _r2_text(points, "H", saturated_at, min_points)
    return (f"R^2 of the line vs H on the non-saturated part: {text}" if decidable else
            f"no T has {min_points} points below accuracy {saturated_at}: {text}")


@description("M-F4")
def general_position_lines_in_words(heads_gp, context_shared, context_gp, control=None, *,
                                    saturated_at, min_points):
    """The R^2 per T of the three line fits M-F4 reads (and why it is not testable where a
    sweep has no T to fit); with ``control`` (the shared-context sweep over n at the
    per-example sweep's T), its R^2 per T too, reported beside the verdict and not read by it.

    >>> pts = lambda T, ys: {"T": [T] * 4, "n": [5, 10, 20, 30], "metric": ys}
    >>> print(general_position_lines_in_words(
    ...     {"T": [9] * 3, "H": [1, 2, 3], "metric": [0.2, 0.4, 0.6]},
    ...     pts(6, [0.2, 0.4, 0.6, 0.8]), pts(9, [0.2, 0.3, 0.5, 0.5]),
    ...     pts(9, [0.1, 0.3, 0.4, 0.45]), saturated_at=0.98, min_points=3))
    ... # doctest: +NORMALIZE_WHITESPACE
    R^2 of the line vs H, per-example contexts: T=9: 1.0000; R^2 of the line vs n, per-example
    contexts: T=9: 0.8594, shared context: T=6: 0.9797; control, shared context at the
    per-example T (reported, not decided): T=9: 0.8290
    """
    text_H, ok_H = _r2_text(heads_gp, "H", saturated_at, min_points)
    text_gp, ok_gp = _r2_text(context_gp, "n", saturated_at, min_points)
    text_sh, ok_sh = _r2_text(context_shared, "n", saturated_at, min_points)
    text = (f"R^2 of the line vs H, per-example contexts: {text_H}; R^2 of the line vs n, "
            f"per-example contexts: {text_gp}, shared context: {text_sh}"
            + ("" if ok_H and ok_gp and ok_sh else
               f" (not testable: a sweep without a T of {min_points} points below accuracy "
               f"{saturated_at})"))
    if control is None:
        return text
    return (f"{text}; control, shared context at the per-example T (reported, not decided): "
            f"{_r2_text(control, 'n', saturated_at, min_points)[0]}")


@description("M-F2b")
def context_trend_in_words(points, *, n_se, saturated_at, min_points):
    """The trend along n that M-F2b reads at each judged T (:func:`trend_description`), and
    how many accuracies per T lie below saturation."""
    free = unsaturated_counts(points, saturated_at=saturated_at)
    judged = [T for T, c in free.items() if c >= min_points]
    return ("accuracy along n: " + (trend_description(points, "n", judged) or "no T judged")
            + f" (asked: no step below -{n_se:g} se, first to last above {n_se:g} se); "
            f"accuracies below {saturated_at} per T: "
            + ", ".join(f"T={T}: {c}" for T, c in free.items())
            + f" (a trend needs {min_points})")


@description("M-F5")
def mse_trends_in_words(heads_reg, context_reg, *, n_se, mse_floor, min_points):
    """The falling trends of the MSE along H and along n that M-F5 reads at each judged T, and
    how many models per T lie above the floor."""
    def along(points, x):
        above = unsaturated_counts(points, floor=mse_floor)
        judged = [T for T, c in above.items() if c >= min_points]
        trend = trend_description(points, x, judged, falling=True, floor=mse_floor)
        return ((trend or "no T judged") + " (models above the floor per T: "
                + ", ".join(f"T={T}: {c}" for T, c in above.items()) + ")")

    return (f"MSE along H: {along(heads_reg, 'H')}; along n: {along(context_reg, 'n')} "
            f"(MSE raised to {mse_floor:g}; asked at every T with {min_points} models above it: "
            f"no step up by more than {n_se:g} se, first to last down by more than "
            f"{n_se:g} se)")


F2C_PARTS = ("up to n", "beyond n")


def head_size_reading(points, n, part, *, n_se, floor_at, saturated_at) -> list[dict]:
    """Per T, what M-F2c's ``part`` reads from ``points`` (``T``, ``d_h``, ``metric``,
    ``metric_std``, ``seeds``): ``judged`` (False where a mean it reads is at the floor
    ``floor_at`` or the ceiling ``saturated_at``, or where a point has one seed), the numbers in
    standard errors of the seeds, and ``holds`` (True, False, or None: not judged).

    ``"up to n"``: over d_h <= n the worst step to the next d_h (``worst_step``, in se) and the
    rise from the smallest d_h to n (``rise``, ``rise_se``); holds when no step drops by more than
    ``n_se`` and the rise exceeds ``n_se``. ``"beyond n"``: per d_h > n the gain over d_h = n per
    doubling of d_h (``gain_per_doubling``, its ``z`` in se) against the rise per doubling up to n
    (``rise_per_doubling``); fails when a gain exceeds ``n_se`` se, holds when none does and
    ``n_se`` se of every gain per doubling lie below the rise per doubling up to n (the noise
    would have shown a gain as large as those below n), else is not judged.

    >>> pts = {"T": [8] * 4, "d_h": [2, 4, 8, 16], "metric": [0.2, 0.4, 0.6, 0.61],
    ...        "metric_std": [0.02] * 4, "seeds": [4] * 4}
    >>> [r["holds"] for p in F2C_PARTS for r in head_size_reading(pts, 8, p, n_se=2,
    ...                                                             floor_at=0.02,
    ...                                                             saturated_at=0.98)]
    [True, True]
    """
    if part not in F2C_PARTS:
        raise AttnbookError(f"M-F2c has parts {F2C_PARTS}, got {part!r}")
    rows = []
    for T, c in _curves(points, "d_h").items():
        by = {int(k): (m, se) for k, m, se in c}
        if n not in by or min(by) >= n or (part == "beyond n" and max(by) <= n):
            raise AttnbookError(f"M-F2c at T = {T}: d_h {sorted(by)} needs n = {n}, a value "
                                f"below it and one above it")
        low = min(by)
        up = sorted(k for k in by if k <= n)
        mine = up if part == "up to n" else sorted(k for k in by if k >= n)
        # every mean the part reads: beyond n also reads the smallest d_h (its rise up to n)
        means = [by[k][0] for k in (mine if part == "up to n" else [low, *mine])]
        row = {"T": T, "d_h": f"{mine[0]}-{mine[-1]}", "judged": True, "why": "", "holds": None}
        if any(math.isnan(by[k][1]) for k in by):
            row.update(judged=False, why="one seed: no standard error")
        elif min(means) <= floor_at:
            row.update(judged=False, why=f"at the floor: mean {min(means):.3f}")
        elif max(means) >= saturated_at:
            row.update(judged=False, why=f"at the ceiling: mean {max(means):.3f}")
        rise = by[n][0] - by[low][0]
        row["rise"] = round(rise, 12)
        row["rise_se"] = se_difference(by[low], by[n])
        if part == "up to n":
            row["worst_step"] = min(se_difference(by[a], by[b]) for a, b in zip(up, up[1:],
                                                                                  strict=False))
            if row["judged"]:
                row["holds"] = row["worst_step"] >= -n_se and row["rise_se"] > n_se
            rows.append(row)
            continue
        per_doubling = rise / math.log2(n / low)
        row["rise_per_doubling"] = round(per_doubling, 12)
        gains = []
        for k in (k for k in mine if k > n):
            doublings = math.log2(k / n)
            se = math.hypot(by[k][1], by[n][1]) / doublings
            gains.append({"d_h": k, "gain_per_doubling": round((by[k][0] - by[n][0]) / doublings,
                                                                 12),
                          "z": se_difference(by[n], by[k]), "resolved": n_se * se < per_doubling})
        row["gains"] = gains
        if row["judged"]:
            if any(g["z"] > n_se for g in gains):
                row["holds"] = False
            elif all(g["resolved"] for g in gains):
                row["holds"] = True
            else:
                row.update(judged=False, why=f"the seeds' noise ({n_se:g} se) exceeds the rise "
                                             f"per doubling up to n, {per_doubling:+.3f}")
        rows.append(row)
    return rows


@criterion("M-F2c")
def head_size_gains_stop_at_n(part, points, n, *, n_se, floor_at, saturated_at):
    """M-F2c, in two parts (:data:`F2C_PARTS`), read per T by :func:`head_size_reading` from
    ``points`` (``T``, ``d_h``, ``metric``: the mean accuracy over seeds, ``metric_std``,
    ``seeds``) and the context size ``n``. ``"up to n"`` (the paper's "increases monotonically
    with d_h as long as d_h <= n"): no step along d_h <= n drops by more than ``n_se`` standard
    errors of the seeds and the accuracy at d_h = n exceeds that at the smallest d_h by more than
    ``n_se``. ``"beyond n"`` ("no benefit beyond d_h > n"): no d_h > n gains over d_h = n by more
    than ``n_se`` standard errors, with noise small enough to show a gain per doubling as large
    as the doublings up to n had. A part is judged only at the T whose means it reads lie above
    ``floor_at`` and below ``saturated_at`` (a curve at its floor or ceiling cannot show the
    shape): reproduced when every judged T holds, not testable when none is judged."""
    rows = head_size_reading(points, int(n), part, n_se=n_se, floor_at=floor_at,
                             saturated_at=saturated_at)
    judged = [r["holds"] for r in rows if r["judged"]]
    return all(judged) if judged else NOT_TESTABLE


@description("M-F2c")
def f2c_description(part, points, n) -> str:
    """The numbers M-F2c's ``part`` decides from, per T, in words (those not judged say why).

    >>> pts = {"T": [8] * 4, "d_h": [2, 4, 8, 16], "metric": [0.2, 0.4, 0.6, 0.61],
    ...        "metric_std": [0.02] * 4, "seeds": [4] * 4}
    >>> print(f2c_description("up to n", pts, 8))  # doctest: +NORMALIZE_WHITESPACE
    T=8: rise from d_h = 2 to n = 8 +0.400 (+28.28 se), worst step +14.14 se
    (asked: above 2 se, no step below -2 se)
    >>> print(f2c_description("beyond n", pts, 8))  # doctest: +NORMALIZE_WHITESPACE
    T=8: gain per doubling beyond n = 8: d_h 16 +0.010 (+0.71 se), against +0.200 per doubling
    up to n (asked: at most 2 se)
    """
    t = thresholds("M-F2c")
    out = []
    for r in head_size_reading(points, int(n), part, **t):
        if part == "up to n":
            text = (f"T={r['T']}: rise from d_h = {r['d_h'].split('-')[0]} to n = {n} "
                    f"{r['rise']:+.3f} ({r['rise_se']:+.2f} se), worst step "
                    f"{r['worst_step']:+.2f} se")
        else:
            text = (f"T={r['T']}: gain per doubling beyond n = {n}: "
                    + ", ".join(f"d_h {g['d_h']} {g['gain_per_doubling']:+.3f} ({g['z']:+.2f} se)"
                                for g in r["gains"])
                    + f", against {r['rise_per_doubling']:+.3f} per doubling up to n")
        out.append(text + (f" (not judged: {r['why']})" if not r["judged"] else ""))
    asked = (f"above {t['n_se']:g} se, no step below -{t['n_se']:g} se" if part == "up to n"
             else f"at most {t['n_se']:g} se")
    return "; ".join(out) + f" (asked: {asked})"


def f2c_case(points, n) -> str:
    """Which case a run of Fig. 2(c) shows beyond d_h = n, from M-F2c's reading of the part
    ``"beyond n"``: per T a gain beyond the seeds' noise, none (with noise small enough to show
    one), or why the T is not judged; the words follow the criterion, not a separate rule.

    >>> pts = {"T": [8] * 4 + [9] * 4, "d_h": [2, 4, 8, 16] * 2,
    ...        "metric": [0.2, 0.4, 0.6, 0.61, 0.2, 0.4, 0.6, 0.9],
    ...        "metric_std": [0.02] * 8, "seeds": [4] * 8}
    >>> print(f2c_case(pts, 8))  # doctest: +NORMALIZE_WHITESPACE
    past d_h = n the accuracy still gains beyond the seeds' noise at T = 9 (up to +0.300 per
    doubling of d_h, +21.21 se); it gains nothing beyond the noise at T = 8
    """
    t = thresholds("M-F2c")
    rows = head_size_reading(points, int(n), "beyond n", **t)
    gain = [r for r in rows if r["holds"] is False]
    flat = [r for r in rows if r["holds"] is True]
    out = []
    if gain:
        top = max((g for r in gain for g in r["gains"] if g["z"] > t["n_se"]),
                  key=lambda g: g["gain_per_doubling"])
        out.append("past d_h = n the accuracy still gains beyond the seeds' noise at T = "
                   + ", ".join(str(r["T"]) for r in gain)
                   + f" (up to {top['gain_per_doubling']:+.3f} per doubling of d_h, "
                   f"{top['z']:+.2f} se)")
    if flat:
        out.append(("it" if gain else "past d_h = n the accuracy") + " gains nothing beyond "
                   "the noise at T = " + ", ".join(str(r["T"]) for r in flat))
    rest = [r for r in rows if not r["judged"]]
    if rest:
        out.append("T = " + ", ".join(f"{r['T']} is not judged ({r['why']})" for r in rest))
    return "; ".join(out)


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


def _f3_seed(accuracy, max_coef, H, n, coef) -> tuple:
    """One seed as M-F3 reads it: its limit T, that T / (H(n-1)+1) and whether a larger T of the
    grid is not memorized (:func:`memorization_limit`), then ``max_coef``'s shape and, of its
    coefficients above ``coef``, the share of saturated (head, example) pairs and the share of
    examples that keep a non-saturated head."""
    T, ratio, bracketed = memorization_limit(accuracy, H, n)
    m = np.asarray(max_coef, dtype=float)
    sat = m > coef
    return (T, ratio, bracketed, m.shape, float(sat.mean()),
            float((sat.sum(axis=-1) < H).mean()))


@criterion("M-F3")
def saturation_at_the_memorization_limit(seeds, H, n, *, coef, saturated_pairs,
                                         unsaturated_examples, ratio_H4, ratio_H8,
                                         ratio_factor):
    """M-F3, one part per H of the paper (4 and 8). ``seeds``: one ``(accuracy, max_coef)``
    pair per seed: ``accuracy`` the grid of T (``H``, ``T``, ``metric``), ``max_coef`` the
    (T, H) largest softmax coefficient of every example and head of that seed's model at its
    largest T memorized perfectly; ``n``: the context size.

    Capacity: each seed's limit, that T as a ratio to H(n-1)+1; the median over the seeds lies
    within a factor ``ratio_factor`` of the paper's ratio (``ratio_H4`` = 550/125, ``ratio_H8`` =
    1300/249 at d = 64, n = 32), and every seed has a larger T of the grid not memorized (else
    its limit lies above the grid). Saturation: at each seed's own limit, the share of (head,
    example) pairs with a coefficient above ``coef``, and the share of examples that keep a head
    with none above it; their means over the seeds are above ``saturated_pairs`` and at least
    ``unsaturated_examples``. A seed with no T memorized perfectly: not reproduced."""
    paper = {4: ratio_H4, 8: ratio_H8}
    if H not in paper:
        raise AttnbookError(f"M-F3: the paper reports the memorization limit for H in "
                            f"{sorted(paper)}, not H = {H}")
    if not len(seeds):
        return False
    ratios, saturated, unsaturated = [], [], []
    for accuracy, max_coef in seeds:
        T, ratio, bracketed, shape, sat, free = _f3_seed(accuracy, max_coef, H, n, coef)
        if T is None or not bracketed:
            return False
        if shape != (T, H):
            raise AttnbookError(f"M-F3: max_coef has shape {shape}, expected (T, H) = "
                                f"{(T, H)} for the largest T memorized perfectly")
        ratios.append(ratio)
        saturated.append(sat)
        unsaturated.append(free)
    ratio = float(np.median(ratios))
    return (1 / ratio_factor <= ratio / paper[H] <= ratio_factor
            and float(np.mean(saturated)) > saturated_pairs
            and float(np.mean(unsaturated)) >= unsaturated_examples)


@description("M-F3")
def saturation_in_words(seeds, H, n, *, coef, ratio_H4, ratio_H8, ratio_factor):
    """Each seed's limit (or its best T where it memorized none), whether every limit is
    bracketed by the grid, the seeds' mean shares of saturated pairs and of examples keeping a
    non-saturated head (:func:`_f3_seed`), and the paper's ratio where it reports one."""
    read = [_f3_seed(accuracy, max_coef, H, n, coef) for accuracy, max_coef in seeds]
    text = ("largest T memorized perfectly per seed: "
            + ", ".join(f"none (best T = {shape[0]})" if T is None
                        else f"{T} ({ratio:.2f} x H(n-1)+1)" for T, ratio, _, shape, _, _ in read)
            + ("" if all(b for T, _, b, *_ in read if T) else
               " (a limit at the largest T of the grid lies above it)")
            + f"; saturated pairs {np.mean([r[4] for r in read]):.1%}, examples with a "
            f"non-saturated head {np.mean([r[5] for r in read]):.1%} (means over the seeds)")
    paper = {4: ratio_H4, 8: ratio_H8}.get(H)
    if paper is None:
        return f"{text}; the paper reports the limit for H = 4 and 8 only"
    return f"{text} (paper: {paper} x, within a factor {ratio_factor}, the median seed)"


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


@criterion("M-F5")
def mse_decreasing(heads_reg, context_reg, *, n_se, mse_floor, min_points):
    """M-F5: along H (``heads_reg``) and along n (``context_reg``), each a table of ``T``, the
    swept variable, ``metric`` (the best training MSE, mean over seeds), ``metric_std`` and
    ``seeds``, with every mean raised to ``mse_floor`` (below it counts as memorized, so equal):
    at every T with at least ``min_points`` models above the floor, the MSE rises from no point
    to the next by more than ``n_se`` standard errors of the seeds and falls from the first point
    to the last by more than ``n_se``. A sweep without such a T (models that all memorized their
    labels show no trend), or a point of one seed: not testable."""
    verdicts = [_trend_holds(pts, x, _judged(pts, min_points, floor=mse_floor), n_se,
                             falling=True, floor=mse_floor)
                for pts, x in ((heads_reg, "H"), (context_reg, "n"))]
    if NOT_TESTABLE in verdicts:
        return NOT_TESTABLE
    return all(verdicts)


@criterion("M-F2b")
def accuracy_increasing_in_context(points, *, n_se, saturated_at, min_points):
    """M-F2b: ``points`` (``T``, ``n``, ``metric``: the mean accuracy over seeds,
    ``metric_std``, ``seeds``): at every T with at least ``min_points`` accuracies below
    ``saturated_at``, no step from one n to the next drops by more than ``n_se`` standard errors
    of the seeds, and the accuracy rises from the smallest n to the largest by more than
    ``n_se``. No such T (saturated models show no trend), or a point of one seed: not
    testable."""
    return _trend_holds(points, "n", _judged(points, min_points, saturated_at=saturated_at),
                        n_se)


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
    read = kruskal_reading(at_n, curve, d, confidence=confidence, crossing=crossing,
                           max_d_fraction=max_d_fraction)
    return bool(read["low"] >= fraction_min and read["below"])


def kruskal_reading(at_n, curve, d, *, confidence, crossing, max_d_fraction) -> dict:
    """What M-F1 reads and its sentence names. At k = n, ``at_n`` = (successes, draws): their
    ``share`` and one-sided Clopper-Pearson bounds at ``confidence`` (``low``, ``high``). Per
    row (k, successes, draws, exact) of ``curve``: its share (``shares``, 0 where exact). The
    k below ``max_d_fraction`` d whose share is below ``crossing`` beyond noise, its upper
    bound below it or the share 0 for certain (``below``: M-F1's "far below d" holds when
    there is one), and where the curve crosses ``crossing`` (``half``, interpolated, reported;
    None where no measured k brackets it).

    >>> r = kruskal_reading((990, 1000), [(197, 990, 1000, False), (250, 3, 200, False),
    ...                     (380, 0, 0, True)], 768, confidence=0.95, crossing=0.5,
    ...                     max_d_fraction=0.5)
    >>> r["below"], r["half"], r["shares"], round(r["low"], 4)
    ([250, 380], 223.6, [0.99, 0.015, 0.0], 0.9831)
    """
    successes, draws = (int(x) for x in at_n)
    low, high = clopper_pearson(successes, draws, confidence)
    shares = [0.0 if bool(exact) else int(x) / max(int(N), 1) for _, x, N, exact in curve]
    below = []
    for k, x, N, exact in curve:
        if float(k) < max_d_fraction * d:
            up = 0.0 if bool(exact) and int(x) == 0 else clopper_pearson(x, N, confidence)[1]
            if up < crossing:
                below.append(int(k))
    return {"successes": successes, "draws": draws, "share": successes / max(draws, 1),
            "low": low, "high": high, "shares": shares, "below": below,
            "half": crossing_k([k for k, *_ in curve], shares, crossing)}


@description("M-F1")
def kruskal_in_words(at_n, curve, n, d, decided=True, counts_from="", estimates=(), redrawn=0,
                     nearest=math.nan, *, fraction_min, confidence, min_draws, crossing,
                     max_d_fraction):
    """The count at k = ``n`` with its Clopper-Pearson bounds, the first k whose upper bound fell
    below the crossing level and the interpolated crossing (:func:`kruskal_reading`), where the
    counts came from (``counts_from``), the range of the ordering ``estimates``, and the crops'
    ``redrawn`` count and ``nearest`` distance; prefixed by why it is not ``decided``."""
    r = kruskal_reading(at_n, curve, d, confidence=confidence, crossing=crossing,
                        max_d_fraction=max_d_fraction)
    return (("" if decided else f"fewer than {min_draws} draws at k = n at this profile: ")
            + f"after the random attention layer, k = n = {n}: {r['successes']} of "
            f"{r['draws']} random subsets of rank k ({r['share']:.4f}; one-sided "
            f"{confidence:.0%} Clopper-Pearson bounds {r['low']:.4f} .. {r['high']:.4f}, at "
            f"least {fraction_min} asked); upper bound of the share below {crossing} from "
            "k = " + (f"{min(r['below'])}" if r["below"] else "none measured")
            + f" (d/2 = {d / 2:g}), crossing it at k ~ "
            + ("(not within the measured k)" if r["half"] is None else f"{r['half']:.0f}")
            + f" (d {d}); counts from {counts_from}; ordering estimates from "
            f"{int(min(estimates))} to {int(max(estimates))}; crops: {redrawn} redrawn, "
            f"closest pair {nearest:.2g} apart")


def _cell_holds(test, fraction, fraction_min):
    """Whether a cell's test holds at its measured share (None where it is not a number):
    Assumption 2 asks for every context (a share of 1), the others for ``fraction_min``."""
    f = float(fraction)
    if math.isnan(f):
        return None
    return f == 1.0 if test == "Assumption 2" else f >= fraction_min


def _cell_agrees(test, fraction, paper_holds, fraction_min) -> bool:
    holds = _cell_holds(test, fraction, fraction_min)
    return holds is not None and holds == bool(paper_holds)


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


def _cell_in_words(test, fraction, paper_holds, note, fraction_min) -> str:
    mark = {True: "✓", False: "x", None: "not a number"}
    return (f"fraction {float(fraction):.3f} -> {mark[_cell_holds(test, fraction, fraction_min)]}"
            f" (paper {mark[bool(paper_holds)]})" + (f", {note}" if note else ""))


@description("M-T1tab")
def image_cell_in_words(test, fraction, paper_holds, note="", *, fraction_min):
    """One cell of Table 1: its measured share, whether the test holds by the criterion's rule
    (:func:`_cell_holds`), the paper's verdict, and ``note``: what stands in for the paper's
    model in that stage, if anything."""
    return _cell_in_words(test, fraction, paper_holds, note, fraction_min)


@description("M-T3tab")
def text_cell_in_words(test, fraction, paper_holds, note="", *, fraction_min):
    """One cell of Table 3, as :func:`image_cell_in_words` says it."""
    return _cell_in_words(test, fraction, paper_holds, note, fraction_min)
