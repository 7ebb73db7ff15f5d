"""Criteria of the levine2020 claims (ledger: data/claims/levine2020.csv)."""

import math
from itertools import pairwise

from ..errors import AttnbookError
from . import all_at_most, criterion, crossing_text, description, largest_seed_std, missing
from . import records as _rows  # the one table-to-dicts of the criteria

__all__ = ["bound_margin_text", "growth_rates", "residual_ratios"]


@criterion("L-D")
def transition_grows_like_log_width(transitions, *, min_pairs, max_rate_ratio, tie_se,
                                    min_found):
    """L-D: the depth-efficiency transition moves to wider nets as depth grows, geometrically
    (transition depth linear in log width, as L_th = log_3 d_x). ``transitions``: one
    (L_shallow, L_deep, width, found_fraction, band) per pair of consecutive depths, width the
    shallower depth's width at the crossing (located with a gap within ``band`` standard
    errors of zero a tie), None or NaN where no crossing was found (not reproduced).

    Reproduced when there are at least ``min_pairs`` pairs, chained (each pair's deeper depth
    is the next pair's shallower one), every pair has a crossing located with a tie band of
    ``tie_se`` standard errors and found by at least ``min_found`` of its bootstrap replicates,
    and the per-layer growth rates log_3(d*_next / d*) / (L_next - L) are all > 0, the largest
    at most ``max_rate_ratio`` times the smallest."""
    rows = []
    for a, b, w, frac, band in transitions:
        if float(band) != float(tie_se):
            raise AttnbookError(f"a transition located with a tie band of {band} standard "
                                f"errors; the criterion's is tie_se = {tie_se}")
        rows.append({"L_shallow": int(a), "L_deep": int(b), "width": w, "found_fraction": frac})
    rows.sort(key=lambda r: r["L_shallow"])
    if len(rows) < min_pairs or any(r0["L_deep"] != r1["L_shallow"]
                                    for r0, r1 in pairwise(rows)):
        return False
    rates = growth_rates(rows, min_found)
    if not rates or any(r is None for r in rates):  # a width missing, <= 0 or not established
        return False
    return all(r > 0 for r in rates) and max(rates) <= max_rate_ratio * min(rates)


def _established(width, found_fraction, min_found) -> float | None:
    """A crossing's width where it is established (found in at least ``min_found`` of the
    bootstrap replicates), else None: the one test L-D's criterion and its words share.

    >>> _established(27.0, 0.9, 0.8), _established(27.0, 0.5, 0.8), _established(None, 1.0, 0.8)
    (27.0, None, None)
    >>> _established(27.0, float("nan"), 0.8) is None
    True
    """
    if missing(width) or missing(found_fraction) or float(found_fraction) < min_found:
        return None
    return float(width)


def growth_rates(rows, min_found) -> list[float | None]:
    """L-D's growth rates per layer: log_3(d*_next / d*) / (L_next - L) between consecutive
    ``rows`` in depth (dicts or a table with ``L_shallow``, ``width`` and ``found_fraction``),
    the factors of 3 the transition width gains per added layer; None where a width is missing
    or not positive, or found in fewer than ``min_found`` of the bootstrap replicates (not
    established).

    >>> growth_rates([dict(L_shallow=L, width=w, found_fraction=1.0)
    ...               for L, w in ((1, 3.0), (2, 9.0), (4, 81.0))], 0.8)
    [1.0, 1.0]
    >>> growth_rates([dict(L_shallow=L, width=w, found_fraction=f)
    ...               for L, w, f in ((1, 3.0, 1.0), (2, 9.0, 0.6), (3, 27.0, 1.0))], 0.8)
    [None, None]
    """
    out = []
    for r0, r1 in pairwise(sorted(_rows(rows), key=lambda r: int(r["L_shallow"]))):
        w0, w1 = (_established(r["width"], r.get("found_fraction"), min_found) for r in (r0, r1))
        ok = (w0 is not None and w1 is not None and math.isfinite(w0) and math.isfinite(w1)
              and w0 > 0 and w1 > 0 and int(r1["L_shallow"]) != int(r0["L_shallow"]))
        out.append(math.log(w1 / w0, 3) / (int(r1["L_shallow"]) - int(r0["L_shallow"]))
                   if ok else None)
    return out


@description("L-D")
def transitions_in_words(transitions, *, min_found):
    """What L-D reads, per pair of consecutive depths: the shallower depth's width d* at the
    crossing with its 95% bootstrap interval and the share of replicates that found one (or
    why none was found), then the growth rates per layer between consecutive pairs where both
    widths are established (found in at least ``min_found`` of the replicates).
    ``transitions``: a table with ``L_shallow``, ``L_deep``, ``width`` and what
    :func:`attnbook.criteria.crossing_text` reads.

    >>> print(transitions_in_words([
    ...     dict(L_shallow=1, L_deep=2, found=True, width=3.0, width_low=None,
    ...          found_fraction=1.0),
    ...     dict(L_shallow=2, L_deep=3, found=True, width=27.0, width_low=20.0,
    ...          width_high=30.0, low_open=False, high_open=False, found_fraction=1.0)],
    ...     min_found=0.8))
    ... # doctest: +NORMALIZE_WHITESPACE
    L=1|2: d* 3.0 (no interval); L=2|3: d* 27.0 (95% bootstrap 20.0 .. 30.0, crossing in 100%
    of replicates); growth rates log3(d*_next/d*) per layer: 2.00 (theory's literal reading 1,
    paper's pair widths about 0.05)
    """
    rows = _rows(transitions)
    pairs = "; ".join(crossing_text(f"L={r['L_shallow']}|{r['L_deep']}",
                                    f"d* {r['width']:.1f}" if r["found"] else "", r, 1)
                      for r in rows)
    rates = ", ".join("-" if x is None else f"{x:.2f}" for x in growth_rates(rows, min_found))
    return (f"{pairs}; growth rates log3(d*_next/d*) per layer: {rates} (theory's literal "
            "reading 1, paper's pair widths about 0.05)")


@criterion("L-Tab2")
def seed_std_small(stds, *, max_std):
    """L-Tab2 (Table 2): the seed standard deviation of the test loss is at most ``max_std``
    at every (depth, width) measured. ``stds``: one standard deviation per point."""
    return all_at_most(stds, max_std)


@description("L-Tab2")
def table2_seed_std_in_words(table, *, n_seeds):
    """The largest seed standard deviation L-Tab2 reads, at which (L, d_x), among how many
    points (:func:`attnbook.criteria.largest_seed_std`)."""
    return largest_seed_std(table, n_seeds, lambda r: f"L={int(r['L'])}, d_x={int(r['d_x'])}")


def _lemma1_counts(table, line_max_depth, *, max_rel_error, degree_tol, line_tol, line_ratio,
                   control_min_error) -> dict:
    """What L-Lem1 counts: the plain networks and those homogeneous of degree 3^L; the plain
    networks the run had to line-test (L <= ``line_max_depth``, at most 3) and those fitted
    exactly along lines (a network of that depth without a line result is not); the residual
    controls and those that fail homogeneity; and the deepest L."""
    rows = _rows(table)
    plain = [r for r in rows if not r["residual"]]
    control = [r for r in rows if r["residual"]]
    line_depth = min(int(line_max_depth), 3)
    due = [r for r in plain if float(r["degree"]) <= 3**line_depth]
    return {
        "plain": len(plain),
        "homogeneous": sum(float(r["max_rel_error"]) < max_rel_error
                           and abs(float(r["fitted_degree"]) - float(r["degree"])) < degree_tol
                           for r in plain),
        "line_depth": line_depth, "due": len(due),
        "exact": sum(not missing(r.get("residual_at_degree"))
                     and float(r["residual_at_degree"]) < line_tol
                     and float(r["residual_below_degree"])
                     > line_ratio * float(r["residual_at_degree"]) for r in due),
        "control": len(control),
        "control_fails": sum(float(r["max_rel_error"]) > control_min_error for r in control),
        "max_L": max((round(math.log(float(r["degree"]), 3)) for r in plain), default=0)}


@criterion("L-Lem1")
def homogeneous_of_degree_3_to_the_L(table, line_max_depth, *, max_rel_error, degree_tol,
                                     line_tol, line_ratio, control_min_error):
    """L-Lem1: ``table`` has one row per random network (columns ``residual``, ``degree`` =
    3^L, ``fitted_degree``, ``max_rel_error`` of f(aX) = a^(3^L) f(X), and where the line test
    ran ``residual_at_degree`` and ``residual_below_degree``); ``line_max_depth`` is the run's.
    Every plain network is homogeneous of degree 3^L (error < ``max_rel_error``, fitted degree
    within ``degree_tol``); every plain network up to the run's ``line_max_depth`` (at most 3)
    is line-tested, fitted to ``line_tol`` at degree 3^L and leaving a residual more than
    ``line_ratio`` times larger at degree 3^L - 1 (one without a line result fails); every
    residual network (the control, not homogeneous) has an error above
    ``control_min_error``. Each kind must be present."""
    c = _lemma1_counts(table, line_max_depth, max_rel_error=max_rel_error,
                       degree_tol=degree_tol, line_tol=line_tol, line_ratio=line_ratio,
                       control_min_error=control_min_error)
    return (c["plain"] > 0 and c["due"] > 0 and c["control"] > 0
            and c["homogeneous"] == c["plain"] and c["exact"] == c["due"]
            and c["control_fails"] == c["control"])


@description("L-Lem1")
def homogeneity_in_words(table, line_max_depth, *, max_rel_error, degree_tol, line_tol,
                         line_ratio, control_min_error):
    """What L-Lem1 counts (:func:`_lemma1_counts`), each against how many it was read on."""
    c = _lemma1_counts(table, line_max_depth, max_rel_error=max_rel_error,
                       degree_tol=degree_tol, line_tol=line_tol, line_ratio=line_ratio,
                       control_min_error=control_min_error)
    return (f"degree 3^L homogeneous at {c['homogeneous']}/{c['plain']} networks "
            f"(L = 1..{c['max_L']}), exact degree along lines at {c['exact']}/{c['due']} "
            f"(L <= {c['line_depth']}); residual control non-homogeneous at "
            f"{c['control_fails']}/{c['control']}")


@criterion("L-T1")
def rank_below_theorems_1_and_2(ranks_and_bounds):
    """L-T1: ``ranks_and_bounds`` holds (exact rank, Theorem 1 bound, Theorem 2 bound) per
    setting, as exact integers; every rank is at most both bounds (and some setting exists)."""
    triples = [(int(k), int(b1), int(b2)) for k, b1, b2 in ranks_and_bounds]
    return bool(triples) and all(k <= b1 and k <= b2 for k, b1, b2 in triples)


@description("L-T1")
def theorems_1_and_2_in_words(ranks_and_bounds, *, table, depths, widths):
    """What L-T1 reads, and beside it, from ``table`` (one row per setting: rank_exact,
    grid_cap, rank, gap_decades), the settings at the grid cap (there the rank is a lower
    estimate) and how often the float rank of a clear spectral gap (3 decades or more) is the
    exact one."""
    triples = [(int(k), int(b1), int(b2)) for k, b1, b2 in ranks_and_bounds]
    rows = _rows(table)
    clear = [r for r in rows if r["gap_decades"] >= 3]
    n = len(triples)
    return (f"exact rank <= Theorem 1 at {sum(k <= b1 for k, b1, _ in triples)}/{n} and <= "
            f"Theorem 2 at {sum(k <= b2 for k, _, b2 in triples)}/{n} settings (L = "
            f"{', '.join(map(str, depths))}, d_x = {', '.join(map(str, widths))}); Theorem 1 "
            f"attained at {sum(k == b1 for k, b1, _ in triples)}; at the grid cap at "
            f"{sum(int(r['rank_exact']) >= int(r['grid_cap']) for r in rows)}; float rank (gap "
            f">= 3 decades) equal to the exact rank at "
            f"{sum(r['rank'] == r['rank_exact'] for r in clear)}/{len(clear)}")


def bound_margin_text(table, *, close: float = 3.0) -> str:
    """How tight Theorems 1 and 2 are for deeper networks: over the rows of ``table`` (one
    plain setting each: L, d_x, H, d_a, rank_exact, grid_cap, log10_levine_t1,
    log10_levine_t2) with L >= 2 and the rank below the grid cap, the smallest factor by which
    the smaller bound exceeds the exact rank, where, and at how many settings it is below
    ``close``.

    >>> row = dict(L=2, d_x=4, H=1, d_a=2, rank_exact=46, grid_cap=343,
    ...            log10_levine_t1=math.log10(81), log10_levine_t2=math.log10(500))
    >>> text = bound_margin_text([row, {**row, "L": 1}])  # the L = 1 row is not read
    >>> text[text.index("at least"):text.index("),") + 1]
    'at least 1.76 (L = 2, d_x = 4, H = 1, d_a = 2: rank 46)'
    >>> text.endswith("by less than 3 at 1 of 1 settings.")
    True
    >>> bound_margin_text([{**row, "rank_exact": 343}])
    'No deeper network (L >= 2) below the grid cap is measured at this profile.'
    """
    deep = [r for r in _rows(table) if r["L"] >= 2 and r["rank_exact"] < r["grid_cap"]]
    if not deep:
        return "No deeper network (L >= 2) below the grid cap is measured at this profile."
    margins = [10 ** (min(r["log10_levine_t1"], r["log10_levine_t2"])
                      - math.log10(float(r["rank_exact"]))) for r in deep]
    least = min(range(len(deep)), key=margins.__getitem__)
    t = deep[least]
    return (f"For deeper networks (L >= 2, below the grid cap) the smaller of the two bounds "
            f"exceeds the rank by a factor of at least {margins[least]:.2f} (L = {t['L']}, "
            f"d_x = {t['d_x']}, H = {t['H']}, d_a = {t['d_a']}: rank {t['rank_exact']}), and by "
            f"less than {close:g} at {sum(m < close for m in margins)} of {len(deep)} settings.")


@criterion("L-C3")
def rank_same_for_every_balanced_partition(settings):
    """L-C3: ``settings`` holds (N, exact ranks of every balanced partition) per setting; each
    setting has all binom(N, N/2)/2 partitions measured and a single rank across them."""
    pairs = [(int(N), [int(k) for k in ranks]) for N, ranks in settings]
    return bool(pairs) and all(len(ranks) == math.comb(N, N // 2) // 2 and len(set(ranks)) == 1
                               for N, ranks in pairs)


@description("L-C3")
def one_rank_per_partition_in_words(settings, *, table, depths):
    """What L-C3 reads (how many settings have one exact rank across every balanced partition),
    and beside it, from ``table`` (one row per setting: ranks_exact, grid_cap, ranks), those at
    the grid cap, where equal ranks say nothing, and how often the float ranks agree too."""
    pairs = [(int(N), [int(k) for k in ranks]) for N, ranks in settings]
    rows = _rows(table)
    Ns = sorted({N for N, _ in pairs})
    return (f"one exact rank across all {'/'.join(str(math.comb(N, N // 2) // 2) for N in Ns)} "
            f"balanced partitions of N = {'/'.join(map(str, Ns))} positions at "
            f"{sum(len(set(ranks)) == 1 for _, ranks in pairs)}/{len(pairs)} settings (L = "
            f"{', '.join(map(str, depths))}; "
            f"{sum(max(r['ranks_exact']) >= r['grid_cap'] for r in rows)} of them at the grid "
            "cap, where equal ranks say nothing); float rank partition-independent at "
            f"{sum(len(set(r['ranks'])) == 1 for r in rows)}/{len(rows)}")


@criterion("L-T3")
def residual_rank_below_theorems_3_and_4(ranks_and_bounds):
    """L-T3: ``ranks_and_bounds`` holds (exact rank of the residual network, Theorem 3 bound of
    the proof's recursion, Theorem 3's stated closed form, Theorem 4 bound) per setting; every
    rank is at most all three (and some setting exists)."""
    rows = [tuple(int(x) for x in row) for row in ranks_and_bounds]
    return bool(rows) and all(len(row) == 4 and all(row[0] <= b for b in row[1:])
                              for row in rows)


def residual_ratios(pairs) -> list[tuple[float, int]]:
    """Per row of ``pairs`` (one setting with its plain twin: ``rank_exact``,
    ``rank_exact_res``, ``C`` = C(L)), the residual network's exact rank over the plain one's,
    with C(L): what L-T3's sentence compares with the factor C(L) + 1.

    >>> residual_ratios([{"rank_exact": 4, "rank_exact_res": 6, "C": 1}])
    [(1.5, 1)]
    """
    return [(r["rank_exact_res"] / r["rank_exact"], int(r["C"])) for r in _rows(pairs)]


@description("L-T3")
def theorems_3_and_4_in_words(ranks_and_bounds, *, pairs):
    """What L-T3 reads, and beside it, from ``pairs`` (one row per setting with its plain twin:
    rank_exact, rank_exact_res, C = C(L)), the residual rank over the plain one against the
    factor C(L) + 1 that separates Theorem 4 from Theorem 2."""
    rows = [tuple(int(x) for x in row) for row in ranks_and_bounds]
    ratios = residual_ratios(pairs)
    n = len(rows)
    return (f"residual exact rank <= Theorem 3 (proof) at {sum(r[0] <= r[1] for r in rows)}/{n}, "
            f"<= its stated closed form at {sum(r[0] <= r[2] for r in rows)}/{n}, <= Theorem 4 "
            f"at {sum(r[0] <= r[3] for r in rows)}/{n}; residual / plain rank "
            f"{min(q for q, _ in ratios):.2f}..{max(q for q, _ in ratios):.2f}, within the "
            f"factor C(L) + 1 of Theorem 4 over Theorem 2 at "
            f"{sum(q <= C + 1 for q, C in ratios)}/{len(ratios)}")
