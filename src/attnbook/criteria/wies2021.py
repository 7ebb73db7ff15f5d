"""Criteria of the wies2021 claims (ledger: data/claims/wies2021.csv)."""

import math

from ..errors import AttnbookError
from . import (
    NOT_TESTABLE,
    all_at_most,
    criterion,
    crossing_text,
    description,
    largest_seed_std,
    missing,
    thresholds,
)
from . import records as _records  # the one table-to-dicts of the criteria

__all__ = ["diverged", "noise_in_words", "positional_stops", "seed_sd"]


@criterion("W-F1")
def transition_near_vocabulary(crossings, *, factor, tie_se, min_found):
    """W-F1: for every V, the shallow width at the depth-efficiency point lies within
    ``factor`` of V (V/factor <= width <= factor V), the point located with a gap within
    ``tie_se`` standard errors of zero counted as a tie and found by at least ``min_found`` of
    the bootstrap replicates (else not established: not reproduced). ``crossings``: one row per
    V with ``V``, ``width`` (None or NaN: no crossing in the measured range), ``found_fraction``,
    ``band`` (the tie band the point was located with), ``L_shallow`` and ``max_width``.
    Not testable outside levine2020's depth-inefficient regime (3^L_shallow <= the widest
    shallow net), where the paper places the transition."""
    rows = _crossing_rows(crossings, tie_se)
    if not rows:
        return False
    if not all(_in_regime(r) for r in rows):
        return NOT_TESTABLE
    return all(_established(r, min_found) and _within(r["V"], r["width"], factor)
               for r in rows)


@description("W-F1")
def crossings_near_vocabulary_in_words(crossings):
    """What W-F1 reads, per V: the shallow width at the crossing and its ratio to V, with its
    95% bootstrap interval and the share of replicates that found one (or why none was found),
    then whether the sweep lies in levine2020's depth-inefficient regime (3^L_shallow above the
    widest shallow net), where the criterion is testable. ``crossings`` as for W-F1, with
    ``ratio`` and what :func:`attnbook.criteria.crossing_text` reads.

    >>> print(crossings_near_vocabulary_in_words([dict(V=16, width=20.0, ratio=1.25, found=True,
    ...     width_low=None, L_shallow=1, max_width=64)]))  # doctest: +NORMALIZE_WHITESPACE
    V=16: shallow width 20 = 1.25 V (no interval); outside levine2020's depth-inefficient regime
    (L_shallow = 1 <= log3 64 = 3.8), where the paper places the transition
    """
    rows = _records(crossings)
    per_v = "; ".join(crossing_text(f"V={r['V']}", f"shallow width {r['width']:.0f} = "
                                    f"{r['ratio']:.2f} V" if r["found"] else "", r, 0)
                      for r in rows)
    L, widest = rows[0]["L_shallow"], max(r["max_width"] for r in rows)
    return per_v + (f"; L_shallow = {L} > log3 of the widest shallow net {widest}: levine2020's "
                    "depth-inefficient regime" if all(_in_regime(r) for r in rows) else
                    f"; outside levine2020's depth-inefficient regime (L_shallow = {L} <= log3 "
                    f"{widest} = {math.log(widest, 3):.1f}), where the paper places the "
                    "transition")


@description("W-Tab2-5")
def seed_noise_in_words(table, label=None, *, n_seeds):
    """The largest seed standard deviation W-Tab2-5 reads, at which point, among how many
    (:func:`attnbook.criteria.largest_seed_std`): a point is named by its ``label`` column, or
    without one by its (V, family, width)."""
    return largest_seed_std(table, n_seeds, (lambda r: r[label]) if label else
                            (lambda r: f"V={r['V']}, {r['family']}, d_x={r['d_x']}"))


@criterion("W-Tab2-5")
def seed_noise_small(stds, *, max_std):
    """W-Tab2-5 (Tables 2 and 4): the seed standard deviation of the test loss is at most
    ``max_std`` at every point measured. ``stds``: one standard deviation per point."""
    return all_at_most(stds, max_std)


def seed_sd(seed_losses) -> float:
    """The seed standard deviation of a sweep, robust to a diverged seed: per net (a list of
    its seeds' losses, two or more) the sample standard deviation over its median under normal
    noise (sigma sqrt(median of chi^2_(n-1) / (n-1)): 0.674 sigma for two seeds), the median
    over the nets (NaN without a net of two seeds).

    >>> round(seed_sd([[1.0, 1.0 + 0.6745 * 2**0.5]] * 3 + [[1.0, 9.0]]), 3)
    1.0
    """
    import statistics

    from scipy.stats import chi2

    scaled = []
    for xs in seed_losses:
        xs = [float(x) for x in xs]
        if len(xs) >= 2:
            n = len(xs)
            scaled.append(statistics.stdev(xs) / math.sqrt(chi2.median(n - 1) / (n - 1)))
    return statistics.median(scaled) if scaled else math.nan


def diverged(seed_losses) -> list[int]:
    """The nets (indices into ``seed_losses``, one list of seed losses per net) with a seed
    whose test loss is not finite: a training that diverged. W-F4's and W-F6's guard.

    >>> diverged([[1.0, 1.01], [2.0, float("nan")], [3.0, float("inf")], [4.0, 4.5]])
    [1, 2]
    """
    return [i for i, xs in enumerate(seed_losses)
            if not all(math.isfinite(float(x)) for x in xs)]


def noise_in_words(seed_losses, nets) -> str:
    """The seed noise beside W-F4's and W-F6's verdicts: :func:`seed_sd` of the sweep and of
    each ratio's nets alone (``nets``: the (ratio, size, L) of each list of ``seed_losses``),
    then the nets :func:`diverged` names, with their seeds' losses ("none" where none).

    >>> print(noise_in_words([[1.0, 1.01], [2.0, 2.01], [3.0, 3.04], [4.0, float("nan")]],
    ...       [(1, 8000, 2), (1, 8000, 3), (4, 8000, 2), (4, 8000, 3)]))
    ... # doctest: +NORMALIZE_WHITESPACE
    seed sd of the sweep 0.010 (per ratio: 1: 0.010, 4: 0.042); nets with a seed whose loss is
    not finite: ratio 4, L = 3, size 8,000: seeds 4.000, nan
    """
    finite = [[x for x in xs if math.isfinite(float(x))] for xs in seed_losses]
    by_ratio: dict[int, list] = {}
    for xs, net in zip(finite, nets, strict=True):
        by_ratio.setdefault(net[0], []).append(xs)
    per = ", ".join(f"{r}: {seed_sd(nets_r):.3f}" for r, nets_r in sorted(by_ratio.items()))
    bad = "; ".join(f"ratio {nets[i][0]}, L = {nets[i][2]}, size {nets[i][1]:,}: seeds "
                    + ", ".join(f"{float(x):.3f}" for x in seed_losses[i])
                    for i in diverged(seed_losses)) or "none"
    return (f"seed sd of the sweep {seed_sd(finite):.3f} (per ratio: {per}); nets with a seed "
            f"whose loss is not finite: {bad}")


@criterion("W-F4")
def attention_ratio_redundancy(fractions, seed_losses, *, mono_tol, ratio_a, paper_a, ratio_b,
                               paper_b, tol):
    """W-F4 (Figure 4): the matched fraction f_rho (ratio-1 baseline size with the same loss
    over the net's own size, mean over sizes) is non-increasing in rho up to ``mono_tol``
    (f_1 = 1), and lies within ``tol`` of ``paper_a`` at rho = ``ratio_a`` and of ``paper_b`` at
    rho = ``ratio_b``. ``fractions``: {rho: f_rho} for the ratios above 1, NaN or None where a
    loss had no match in the baseline range (not reproduced); every ratio 2, 4, ..., ``ratio_b``
    must be there (a missing one: not reproduced). All of them are read at the one
    training budget of the run: a longer budget that brings f_16 into its band but moves f_4
    out of its own is not reproduced (the paper states both at one budget); fractions at a
    pilot's smaller budgets are reported beside the verdict, never decided.

    Guard: ``seed_losses`` holds the seeds' test losses of every net of the sweep (one list
    per net); a seed whose loss is not finite (:func:`diverged`) is a training that diverged,
    and the seed means the fractions are read from do not measure the nets: not testable.
    Whether one seed decides the verdict is the leave-one-seed-out stability every verdict
    from trained models carries, not a threshold on a seed's distance from its others: the
    seed noise differs between ratios (:func:`noise_in_words`), so no one noise level of the
    sweep tells a diverged seed from a noisy net."""
    if diverged(seed_losses):
        return NOT_TESTABLE
    f = {1: 1.0}
    for rho, v in dict(fractions).items():
        if v is None or not math.isfinite(float(v)):
            return False
        f[int(rho)] = float(v)
    needed = {2 ** k for k in range(1, int(math.log2(ratio_b)) + 1)} | {ratio_a, ratio_b}
    if not needed <= f.keys():  # every ratio 2, 4, ..., ratio_b: a missing one fails
        return False
    order = [f[rho] for rho in sorted(f)]
    monotone = all(later <= earlier + mono_tol
                   for i, earlier in enumerate(order) for later in order[i + 1:])
    return (monotone and abs(f[ratio_a] - paper_a) <= tol
            and abs(f[ratio_b] - paper_b) <= tol)


@description("W-F4")
def attention_ratio_redundancy_in_words(fractions, seed_losses, *, sizes, nets, mono_tol,
                                        ratio_a, paper_a, ratio_b, paper_b, tol):
    """What W-F4 reads: the matched fraction of each ratio (mean over ``sizes``; "no match"
    where a size had none), beside the paper's two readings and the criterion's tolerances,
    then the seed noise and its guard (:func:`noise_in_words`; ``nets``: the (ratio, size, L)
    of each list of ``seed_losses``).

    >>> print(attention_ratio_redundancy_in_words({4: 0.7, 16: float("nan")},
    ...       [[2.0, 2.01], [1.9, 1.91]], sizes=[32000], nets=[(1, 32000, 2), (4, 32000, 2)],
    ...       mono_tol=0.1, ratio_a=4, paper_a=0.75, ratio_b=16, paper_b=0.55, tol=0.15))
    ... # doctest: +NORMALIZE_WHITESPACE
    matched fraction f (baseline size with the same loss / own size, mean over sizes 32,000):
    ratio 4: 0.70, ratio 16: no match (paper: ratio 4: 0.75, ratio 16: 0.55; tolerance 0.15,
    monotone up to 0.1); seed sd of the sweep 0.010 (per ratio: 1: 0.010, 4: 0.010); nets
    with a seed whose loss is not finite: none
    """
    read = ", ".join(f"ratio {r}: " + (f"{f:.2f}" if math.isfinite(f) else "no match")
                     for r, f in sorted(dict(fractions).items()))
    return ("matched fraction f (baseline size with the same loss / own size, mean over sizes "
            f"{', '.join(f'{s:,}' for s in sizes)}): {read} (paper: ratio {ratio_a}: {paper_a}, "
            f"ratio {ratio_b}: {paper_b}; tolerance {tol}, monotone up to {mono_tol}); "
            + noise_in_words(seed_losses, nets))


def _tie_band(seed_losses, tie_se) -> float:
    """W-F6's band: ``tie_se`` standard errors of a difference of two seed means,
    :func:`seed_sd` sqrt(2/n), n the fewest seeds of a net of at least two (NaN without one)."""
    n = min((len(xs) for xs in seed_losses if len(xs) >= 2), default=0)
    sd = seed_sd(seed_losses)
    return tie_se * sd * math.sqrt(2 / n) if n >= 2 and math.isfinite(sd) else math.nan


@criterion("W-F6")
def ratio_spread_exceeds_depth_spread(spreads, seed_losses, *, factor, tie_se):
    """W-F6 (Figure 6): at every size, the spread of the best-depth loss across ratios is at
    least ``factor`` times the largest spread of the loss across depths within one ratio.
    ``spreads``: (across_ratios, largest across_depths) pairs, one per size; ``seed_losses``:
    the seeds' test losses of every net of the sweep (one list per net), as for W-F4.

    A spread counts only where it exceeds ``tie_se`` standard errors of a difference of two
    seed means, sigma sqrt(2/n) (sigma: :func:`seed_sd`; n: the fewest seeds of a net). Per
    size: it passes when the ratio spread is resolved and at least ``factor`` times the depth
    spread; it measures nothing when neither spread is resolved (nets at one loss, as saturated
    ones are, would pass a comparison of spreads vacuously); it fails otherwise (the ratio
    spread not resolved but the depth spread is, or the ratio spread too small). Reproduced when
    every size passes; not reproduced when a size fails; else (some size measures nothing) not
    testable, as it is where W-F4's guard finds a diverged seed (:func:`diverged`)."""
    pairs = [(float(r), float(d)) for r, d in spreads]
    if diverged(seed_losses):
        return NOT_TESTABLE
    if not pairs or not all(math.isfinite(r) and math.isfinite(d) for r, d in pairs):
        return False
    band = _tie_band(seed_losses, tie_se)
    if not math.isfinite(band):
        return False  # no seed noise measured: nothing tells a spread from noise
    outcomes = []
    for across_ratios, across_depths in pairs:
        if across_ratios <= band and across_depths <= band:
            outcomes.append(NOT_TESTABLE)
        else:
            outcomes.append(across_ratios > band and across_ratios >= factor * across_depths)
    if any(o is False for o in outcomes):
        return False
    return NOT_TESTABLE if NOT_TESTABLE in outcomes else True


@description("W-F6")
def ratio_spread_in_words(spreads, seed_losses, *, sizes, nets, factor, tie_se):
    """What W-F6 reads at each of ``sizes`` (one pair of ``spreads`` each): the spread across
    ratios against the largest across depths, the factor asked, the band a spread must leave
    (the criterion's, :func:`_tie_band`), then the seed noise and the guard
    (:func:`noise_in_words`).

    >>> print(ratio_spread_in_words([(0.27, 0.11)], [[2.0, 2.01], [1.9, 1.91]], sizes=[32000],
    ...       nets=[(1, 32000, 2), (4, 32000, 2)], factor=2, tie_se=2))
    ... # doctest: +NORMALIZE_WHITESPACE
    size 32,000: across ratios 0.270 vs largest across depths 0.110 (needs a factor 2; a spread
    counts beyond 2 standard errors of a difference of seed means, 0.021; seed sd of the sweep
    0.010 (per ratio: 1: 0.010, 4: 0.010); nets with a seed whose loss is not finite: none)
    """
    band = _tie_band(seed_losses, tie_se)
    return ("; ".join(f"size {s:,}: across ratios {float(r):.3f} vs largest across depths "
                      f"{float(d):.3f}" for s, (r, d) in zip(sizes, spreads, strict=True))
            + f" (needs a factor {factor}; a spread counts beyond {tie_se} standard errors of a "
            f"difference of seed means, {band:.3f}; {noise_in_words(seed_losses, nets)})")


def _groups(rows, keys):
    out: dict[tuple, list[dict]] = {}
    for row in rows:
        out.setdefault(tuple(int(row[k]) for k in keys), []).append(row)
    return out


def _t1_checks(rows) -> dict[str, list[bool]]:
    """W-T1's four checks over ``rows``, one entry per case each checks: ``below`` eq. (9) per
    setting; ``by_r`` non-decreasing in r per (L, H, d_x, r_e); ``by_width`` one rank across
    the widths d_x >= r + r_e per (L, H, r, r_e) with two or more such widths, none at the grid
    cap; ``growth`` larger at d_x = r + r_e than at d_x = r per (L, H, r, r_e > 0) with both
    widths and the narrower below its grid cap."""
    out = {"below": [int(row["rank_exact"]) <= int(row["wies_upper"]) for row in rows],
           "by_r": [], "by_width": [], "growth": []}
    for group in _groups(rows, ("L", "H", "d_x", "r_e")).values():
        ranks = [int(g["rank_exact"]) for g in sorted(group, key=lambda g: int(g["r"]))]
        out["by_r"].append(all(b >= a for a, b in zip(ranks, ranks[1:], strict=False)))
    for (_, _, r, r_e), group in _groups(rows, ("L", "H", "r", "r_e")).items():
        wide = [g for g in group if int(g["d_x"]) >= r + r_e]
        if len(wide) > 1 and all(int(g["rank_exact"]) < int(g["grid_cap"]) for g in wide):
            out["by_width"].append(len({int(g["rank_exact"]) for g in wide}) == 1)
        at = {int(g["d_x"]): g for g in group}
        if r_e > 0 and r in at and r + r_e in at \
                and int(at[r]["rank_exact"]) < int(at[r]["grid_cap"]):
            out["growth"].append(int(at[r + r_e]["rank_exact"]) > int(at[r]["rank_exact"]))
    return out


def positional_stops(table) -> tuple[int, int]:
    """Where the rise that a positional embedding allows ends: of the (L, H, r, r_e > 0)
    curves with d_x = r and d_x = r + r_e both measured and the narrower below its grid cap,
    how many already reach their rank at d_x = r + r_e at a width between the two, and how many
    there are. Eq. (9) lets the rank grow up to d_x = r + r_e; it does not say that it does.

    >>> curve = [dict(L=1, H=1, r=2, r_e=2, d_x=d, rank_exact=k, grid_cap=99)
    ...          for d, k in ((2, 3), (3, 4), (4, 4))]
    >>> positional_stops(curve), positional_stops([{**c, "r_e": 1} for c in curve[:2]])
    ((1, 1), (0, 1))
    """
    early = n = 0
    for (_, _, r, r_e), group in _groups(_records(table), ("L", "H", "r", "r_e")).items():
        at = {int(g["d_x"]): g for g in group}
        if r_e == 0 or r not in at or r + r_e not in at \
                or int(at[r]["rank_exact"]) >= int(at[r]["grid_cap"]):
            continue
        n += 1
        top = int(at[r + r_e]["rank_exact"])
        early += any(int(at[d]["rank_exact"]) == top for d in range(r + 1, r + r_e) if d in at)
    return early, n


@criterion("W-T1")
def rank_set_by_embedding_rank(table):
    """W-T1: ``table`` has one row per setting (columns ``L``, ``H``, ``d_x``, ``r``, ``r_e``,
    ``rank_exact``, ``grid_cap``, ``wies_upper``). The exact rank is non-decreasing in r at
    every (L, H, d_x, r_e); for each (L, H, r, r_e) it is the same at every width
    d_x >= r + r_e, over the groups of two or more widths with none at the grid cap (at least
    one such group); for r_e > 0 it is larger at d_x = r + r_e than at d_x = r wherever the
    latter is below its grid cap (at least one such pair); and it is at most eq. (9) at every
    setting (:func:`_t1_checks`)."""
    rows = _records(table)
    checks = _t1_checks(rows)
    return (bool(rows) and all(all(held) for held in checks.values())
            and bool(checks["by_width"]) and bool(checks["growth"]))


@description("W-T1")
def embedding_rank_in_words(table, *, depths, pos_ranks, min_gap):
    """How many cases of each of W-T1's checks hold (:func:`_t1_checks`), and beside them, from
    ``table``'s ``rank`` and ``gap_decades``, the settings at the grid cap and how often a float
    rank with a gap of at least ``min_gap`` decades is the exact one."""
    rows = _records(table)
    c = {k: f"{sum(v)}/{len(v)}" for k, v in _t1_checks(rows).items()}
    resolved = [row for row in rows if row["gap_decades"] >= min_gap]
    return (f"L = {', '.join(map(str, depths))}, r_e = 0, {', '.join(map(str, pos_ranks))}: "
            f"exact rank non-decreasing in r at {c['by_r']} (L, H, d_x, r_e); equal across "
            f"widths d_x >= r + r_e at {c['by_width']} uncapped (L, H, r, r_e); with r_e > 0 "
            f"larger at d_x = r + r_e than at d_x = r at {c['growth']} uncapped pairs (the "
            f"rank of r + r_e reached at a width between them at "
            f"{'/'.join(map(str, positional_stops(rows)))}); <= eq. (9) "
            f"at {c['below']}; at the grid cap at "
            f"{sum(int(row['rank_exact']) >= int(row['grid_cap']) for row in rows)}; float rank "
            f"resolved at {len(resolved)}/{len(rows)}, equal to the exact rank at "
            f"{sum(row['rank'] == row['rank_exact'] for row in resolved)}/{len(resolved)}")


def _corollary_1_rows(table) -> tuple[list[dict], list[dict]]:
    """The settings where eq. (14) applies (``wies_lower`` set, L >= 2, H < r), each with its
    ``bound`` as an integer: those where Corollary 1's premises hold (3^L > d_x, i.e.
    L > log3 d_x, and V >= 2 bound + 1), and those where one fails."""
    holds, fails = [], []
    for row in _records(table):
        bound = row.get("wies_lower")
        if missing(bound) or not (int(row["L"]) >= 2 and int(row["H"]) < int(row["r"])):
            continue  # eq. (14) does not apply
        row = {**row, "bound": int(bound)}
        premises = 3 ** int(row["L"]) > int(row["d_x"]) and int(row["V"]) >= 2 * row["bound"] + 1
        (holds if premises else fails).append(row)
    return holds, fails


@criterion("W-T2")
def rank_above_corollary_1(table, *, min_bound):
    """W-T2: ``table`` has one row per setting (``L``, ``H``, ``d_x``, ``r``, ``V``,
    ``rank_exact`` and ``wies_lower``, the eq. (14) bound, None where L < 2 or H >= r). At
    every setting where the corollary applies and its premises hold (:func:`_corollary_1_rows`)
    the rank is at least the bound, and the largest bound among them is at least ``min_bound``
    (so the check says more than rank >= 1). A rank below its bound fails; without such a
    setting, or with every bound below ``min_bound``, the profile cannot test the claim: not
    testable."""
    checked = [(int(row["rank_exact"]), row["bound"]) for row in _corollary_1_rows(table)[0]]
    if not all(k >= b for k, b in checked):
        return False
    if not checked or max(b for _, b in checked) < min_bound:
        return NOT_TESTABLE
    return True


@description("W-T2")
def corollary_1_in_words(table, *, min_bound):
    """What W-T2 reads (:func:`_corollary_1_rows`: the rank against the bound where the
    premises hold), and beside it the largest bound, the smallest ratio, the settings at the
    grid cap (``table``'s ``grid_cap``) and the settings where a premise fails."""
    holds, fails = _corollary_1_rows(table)
    pairs = [(int(row["rank_exact"]), row["bound"]) for row in holds]
    largest = max((b for _, b in pairs), default=0)
    capped = [int(row["rank_exact"]) >= int(row["grid_cap"]) for row in holds]
    free = [k / b for (k, b), cap in zip(pairs, capped, strict=True) if b >= 1 and not cap]
    text = (f"exact rank >= eq. (14) at {sum(k >= b for k, b in pairs)}/{len(pairs)} settings "
            f"where L >= 2, H < r and the premises hold; bound >= {min_bound} at "
            f"{sum(b >= min_bound for _, b in pairs)} ("
            f"{sum(c for (_, b), c in zip(pairs, capped, strict=True) if b >= min_bound)} of "
            f"them at the grid cap), largest bound {largest} (rank "
            f"{min((k for k, b in pairs if b == largest), default=0)}); equality at "
            f"{sum(k == b for k, b in pairs)}; smallest rank / bound = "
            f"{min((k / b for k, b in pairs if b >= 1), default=float('nan')):.1f} ("
            + (f"below the grid cap {min(free):.1f}" if free else "none below the grid cap")
            + "); at the grid "
            f"cap at {sum(int(row['rank_exact']) >= int(row['grid_cap']) for row in holds)}/"
            f"{len(pairs)}; premises fail at {len(fails)}, rank >= bound there at "
            f"{sum(int(row['rank_exact']) >= row['bound'] for row in fails)}")
    if rank_above_corollary_1(table, min_bound=min_bound) == NOT_TESTABLE:
        return (f"not testable at this profile: no setting where the premises hold has a bound "
                f">= {min_bound}; " + text)
    return text


def _mean_var(losses) -> tuple[float, float, int]:
    """Mean, sample variance and count of one net's seed losses (variance NaN with one)."""
    x = [float(v) for v in losses]
    m = sum(x) / len(x)
    return m, (sum((v - m) ** 2 for v in x) / (len(x) - 1) if len(x) > 1 else math.nan), len(x)


@criterion("W-F2")
def low_rank_matched_by_smaller_full_rank(part, nets, d_x, *, n_se, anchor_ratio, anchor_factor,
                                          size_ratio, size_tolerance):
    """W-F2, in two parts; ``nets`` holds one record per factored net of width ``d_x``:
    ``r``, ``losses`` (one per seed), ``params`` (its size) and ``matched`` (the size of the
    full-rank net of reduced width with its loss; 0 below the smallest). The control is the
    net of the smallest r above d_x: full rank, only factored.

    ``"bottleneck"`` (the paper's Figure 2): every net with r < d_x is worse than the control
    by more than ``n_se`` standard errors of the seeds (sqrt(s_r^2/n_r + s_c^2/n_c)), and the
    cost over the control does not fall as r falls: for consecutive ranks r1 < r2 below d_x,
    cost(r1) - cost(r2) >= -n_se standard errors. Not testable with fewer than two seeds of a
    net, or without a control.

    ``"size"`` (the paper's 16/680 ~ a full-rank net 25% smaller): at the rank whose r / d_x is
    nearest ``anchor_ratio`` in log ratio, the matched size over the control's matched size
    (the size the rank costs beyond the factoring) is within ``size_tolerance`` of
    ``size_ratio``. Not testable where no rank run lies within a factor ``anchor_factor`` of
    ``anchor_ratio`` (a rank far from the paper's ratio tests another bottleneck), or where the
    control or the net falls below every baseline."""
    by_r = {int(n["r"]): n for n in nets}
    controls = sorted(r for r in by_r if r > d_x)
    below = sorted(r for r in by_r if r < d_x)
    if not controls or not below:
        return NOT_TESTABLE
    ctrl = by_r[controls[0]]
    if part == "bottleneck":
        stats = {r: _mean_var(by_r[r]["losses"]) for r in [*below, controls[0]]}
        if any(not v == v for _, v, _ in stats.values()):  # a net of one seed: no variance
            return NOT_TESTABLE
        mc, vc, nc = stats[controls[0]]
        above_ctrl = all(m - mc > n_se * math.sqrt(v / n + vc / nc)
                         for m, v, n in (stats[r] for r in below))
        steady = all(stats[a][0] - stats[b][0]
                     >= -n_se * math.sqrt(stats[a][1] / stats[a][2] + stats[b][1] / stats[b][2])
                     for a, b in zip(below, below[1:], strict=False))
        return bool(above_ctrl and steady)
    if part == "size":
        r, judged = f2_anchor(below, d_x, anchor_ratio, anchor_factor)
        if not judged:
            return NOT_TESTABLE
        if not float(ctrl["matched"]) > 0 or not float(by_r[r]["matched"]) > 0:
            return NOT_TESTABLE
        ratio = float(by_r[r]["matched"]) / float(ctrl["matched"])
        return abs(ratio - size_ratio) <= size_tolerance
    raise AttnbookError(f"W-F2 has parts 'bottleneck' and 'size', got {part!r}")


def f2_anchor(ranks, d_x, anchor_ratio, anchor_factor) -> tuple[int | None, bool]:
    """The rank below ``d_x`` whose r / d_x is nearest ``anchor_ratio`` in log ratio (None
    where no rank is below d_x), and whether it lies within a factor ``anchor_factor`` of that
    ratio: where W-F2's part "size" is judged, if it is.

    >>> f2_anchor([4, 8, 16, 32, 96], 64, 16 / 680, 4), f2_anchor([32, 96], 64, 16 / 680, 4)
    ((4, True), (32, False))
    """
    below = sorted(int(r) for r in ranks if int(r) < d_x)
    if not below:
        return None, False
    r = min(below, key=lambda r: abs(math.log(r / d_x) - math.log(anchor_ratio)))
    return r, abs(math.log(r / d_x / anchor_ratio)) <= math.log(anchor_factor)


@description("W-F2")
def f2_description(part, nets, d_x, unfactored=None) -> str:
    """The numbers W-F2's ``part`` decides from, in words (``nets`` as the criterion reads
    them; ``unfactored``: the unfactored net's seed losses, reported beside the control).

    >>> nets = [{"r": r, "losses": [m - 0.01, m, m + 0.01], "params": 1000.0, "matched": s}
    ...         for r, m, s in ((2, 2.3, 300.0), (4, 2.2, 400.0), (16, 2.0, 500.0))]
    >>> f2_description("size", nets, 8)  # doctest: +ELLIPSIS
    'at r = 2 (r/d_x 0.25, ...): ... matched size 0.60 (asked 0.75 +- 0.15); over its own size 0.30'
    """
    t = thresholds("W-F2")
    by_r = {int(n["r"]): n for n in nets}
    controls = sorted(r for r in by_r if r > d_x)
    if not controls:
        return f"no factored net with r above d_x = {d_x} (the control)"
    c = by_r[controls[0]]
    mc, vc, nc = _mean_var(c["losses"])
    if part == "bottleneck":
        costs = []
        for r in sorted(r for r in by_r if r < d_x):
            m, v, n = _mean_var(by_r[r]["losses"])
            se = math.sqrt(v / n + vc / nc) if v == v and vc == vc else math.nan
            costs.append(f"r = {r}: {m - mc:+.3f}" + (f" ({(m - mc) / se:.1f} se)" if se > 0
                                                      else " (one seed: no se)"))
        ctrl = f"control r = {controls[0]} (full rank, factored): {mc:.3f}"
        if unfactored:
            mu, vu, nu = _mean_var(unfactored)
            se_u = math.sqrt(vu / nu + vc / nc) if vu == vu and vc == vc else math.nan
            ctrl += (f", {mc - mu:+.3f} against the unfactored net's {mu:.3f}"
                     + (f" ({(mc - mu) / se_u:.1f} se)" if se_u > 0 else ""))
        return (f"test loss above the control, at d_x = {d_x}, seeds {nc}: " + "; ".join(costs)
                + f" (more than {t['n_se']:g} se asked, not falling as r falls); {ctrl}")
    r, judged = f2_anchor(by_r, d_x, t["anchor_ratio"], t["anchor_factor"])
    if r is None:
        return f"no factored net with r below d_x = {d_x}"
    n = by_r[r]
    unmatched = [f"{name}'s loss {'above' if m == 0 else 'below'} every full-rank net's"
                 for name, m in ((f"r = {r}", n["matched"]),
                                 ("the control", c["matched"])) if not m > 0]
    over_c = (f"{n['matched'] / c['matched']:.2f}" if not unmatched
              else f"not measured ({'; '.join(unmatched)})")
    own = n["matched"] / n["params"]
    return (f"at r = {r} (r/d_x {r / d_x:.3g}, the ratio run nearest {t['anchor_ratio']:g}, "
            + (f"{r / d_x / t['anchor_ratio']:.2g} times it: beyond the factor "
               f"{t['anchor_factor']:g} asked, so not judged" if not judged else
               f"within the factor {t['anchor_factor']:g} asked") + "): "
            f"matched full-rank size over the control r = {controls[0]} matched size {over_c} "
            f"(asked {t['size_ratio']:g} +- {t['size_tolerance']:g}); over its own size "
            + (f"{own:.2f}" if own == own else "not measured"))


@criterion("W-F7")
def positional_rank_cheap(pos_losses, vocab_losses, full_loss, full_std, d_x, N, *, n_std,
                          pos_divisor, low_divisor, high_divisor):
    """W-F7: ``pos_losses`` maps positional rank r_e to test loss, ``vocab_losses`` maps
    vocabulary rank r to test loss (positional full rank); ``full_loss`` and ``full_std`` are
    the full-rank net's loss and seed standard deviation. Positional rank
    max(1, N // pos_divisor) is within ``n_std`` std of the full-rank loss, and the rank-1
    positional loss lies between those of vocabulary ranks d_x // high_divisor (lower loss)
    and d_x // low_divisor: at least the first and at most the second, so where the larger
    vocabulary rank has the higher loss no loss lies between and this side fails."""
    pos = {int(k): float(v) for k, v in dict(pos_losses).items()}
    vocab = {int(k): float(v) for k, v in dict(vocab_losses).items()}
    r_pos = max(1, int(N) // pos_divisor)
    low, high = int(d_x) // low_divisor, int(d_x) // high_divisor
    missing = ([f"r_e = {k}" for k in sorted({r_pos, 1} - set(pos))]
               + [f"r = {k}" for k in sorted({low, high} - set(vocab))])
    if missing:
        raise AttnbookError(f"W-F7 needs the test losses at {', '.join(missing)}")
    near_full = abs(pos[r_pos] - float(full_loss)) <= n_std * float(full_std)
    return bool(near_full and vocab[high] <= pos[1] <= vocab[low])


@description("W-F7")
def positional_rank_in_words(pos_losses, vocab_losses, full_loss, full_std, d_x, N, *, n_std,
                             pos_divisor, low_divisor, high_divisor):
    """The losses W-F7 compares, at the ranks its divisors pick: positional rank
    max(1, N // pos_divisor) against the full-rank net and its ``n_std`` seed standard
    deviations, and the rank-1 positional net against vocabulary ranks d_x // low_divisor and
    d_x // high_divisor.

    >>> print(positional_rank_in_words({1: 3.2, 16: 3.01}, {64: 3.3, 128: 3.1}, 3.0, 0.02, 512,
    ...       512, n_std=2, pos_divisor=32, low_divisor=8, high_divisor=4))
    ... # doctest: +NORMALIZE_WHITESPACE
    seed means: r_e=16: 3.010 vs full rank 3.000 (2 std 0.040); r_e=1: 3.200 vs vocabulary
    r=64: 3.300, r=128: 3.100
    """
    pos, vocab = dict(pos_losses), dict(vocab_losses)
    r_pos = max(1, int(N) // pos_divisor)
    low, high = int(d_x) // low_divisor, int(d_x) // high_divisor
    rank1 = "" if r_pos == 1 else f"r_e=1: {pos[1]:.3f} "
    return (f"seed means: r_e={r_pos}: {pos[r_pos]:.3f} vs full rank {full_loss:.3f} ({n_std} "
            f"std {n_std * full_std:.3f}); {rank1}vs vocabulary r={low}: {vocab[low]:.3f}, "
            f"r={high}: {vocab[high]:.3f}")


def _pooled_gap(a, b) -> tuple[float, float] | None:
    """mean(a) - mean(b) and the pooled seed standard deviation sqrt((s_a^2 + s_b^2) / 2) of
    two lists of seed losses (sample standard deviations; None with fewer than two each)."""
    import statistics

    a, b = [float(x) for x in a], [float(x) for x in b]
    if len(a) < 2 or len(b) < 2 or not all(math.isfinite(x) for x in a + b):
        return None
    pooled = math.sqrt((statistics.stdev(a) ** 2 + statistics.stdev(b) ** 2) / 2)
    return statistics.fmean(a) - statistics.fmean(b), pooled


@criterion("W-Tab1")
def implementation_and_convergence(part, ours, other, steps=None, *, n_std, longer):
    """W-Tab1, an implementation check of the chapter's model and recipe (not the paper's
    claim, that the recipe trains to GPT-2's quality), in two parts; ``ours`` and ``other``
    are the test losses of each seed (two or more each).

    ``"implementation"``: ``other`` is a reference implementation (HF GPT2LMHeadModel) of the
    same size trained identically; the two means differ by at most ``n_std`` pooled seed
    standard deviations, sqrt((s_ours^2 + s_ref^2) / 2).

    ``"convergence"``: ``other`` is the same net trained ``longer`` times as many steps (the
    schedule stretched), ``steps`` = (the chapter's steps, the longer run's); the longer
    training lowers the mean test loss by at most ``n_std`` pooled seed standard deviations
    (mean(ours) - mean(other) <= n_std pooled): more training does not move the loss beyond the
    seed noise."""
    gap = _pooled_gap(ours, other)
    if part == "implementation":
        return gap is not None and abs(gap[0]) <= n_std * gap[1]
    if part == "convergence":
        short, long_ = steps
        if int(long_) != longer * int(short):
            raise AttnbookError(f"W-Tab1 convergence: the longer run has {long_} steps, not "
                                f"longer = {longer} times the chapter's {short}")
        return gap is not None and gap[0] <= n_std * gap[1]
    raise AttnbookError(f"W-Tab1 has the parts 'implementation' and 'convergence', got {part!r}")


@description("W-Tab1")
def implementation_and_convergence_in_words(part, ours, other, steps=None, *, n_std, longer):
    """What W-Tab1's ``part`` reads from the seeds' test losses (as its criterion takes them):
    for ``"implementation"``, our mean and perplexity against GPT2LMHeadModel's and the band of
    ``n_std`` pooled seed standard deviations; for ``"convergence"``, how much ``longer`` times
    the steps lower the mean, in nats and in pooled standard deviations.

    >>> ours, ref = [2.00, 2.02, 2.04], [2.01, 2.03, 2.05]
    >>> print(implementation_and_convergence_in_words("implementation", ours, ref, n_std=2,
    ...                                               longer=4))  # doctest: +NORMALIZE_WHITESPACE
    ours 2.020 (ppl 7.54) vs GPT2LMHeadModel 2.030 (ppl 7.61), 3 seeds, 2 pooled std 0.040
    (an implementation check, not the paper's claim)
    >>> print(implementation_and_convergence_in_words("convergence", ours, [1.8, 1.82],
    ...       (100, 400), n_std=2, longer=4))  # doctest: +NORMALIZE_WHITESPACE
    ours 2.020 after 100 steps (3 seeds) vs 1.810 after 400 (2 seeds): 4 x the steps lower the
    test loss by 0.210 nats, 12.1 pooled std (at most 2 asked)
    """
    import statistics

    a, b = [float(x) for x in ours], [float(x) for x in other]
    mean_a, mean_b = sum(a) / len(a), sum(b) / len(b)
    pooled = math.sqrt((statistics.stdev(a) ** 2 + statistics.stdev(b) ** 2) / 2)
    if part == "implementation":
        return (f"ours {mean_a:.3f} (ppl {math.exp(mean_a):.2f}) vs GPT2LMHeadModel "
                f"{mean_b:.3f} (ppl {math.exp(mean_b):.2f}), {len(a)} seeds, {n_std} pooled std "
                f"{n_std * pooled:.3f} (an implementation check, not the paper's claim)")
    short, long_ = steps
    gain = mean_a - mean_b
    return (f"ours {mean_a:.3f} after {short} steps ({len(a)} seeds) vs {mean_b:.3f} after "
            f"{long_} ({len(b)} seeds): {longer} x the steps lower the test loss by {gain:.3f} "
            f"nats, {gain / pooled:.1f} pooled std (at most {n_std} asked)")


def _width(w):
    """A measured transition width as a float, None where no crossing was found (None/NaN)."""
    if w is None:
        return None
    w = float(w)
    return w if w == w else None


def _within(target, width, factor) -> bool:
    """A found width within ``factor`` of its target (target/factor <= width <= factor
    target)."""
    w = _width(width)
    return w is not None and float(target) / factor <= w <= factor * float(target)


def _crossing_rows(crossings, tie_se) -> list[dict]:
    """The rows of a crossings table, checked to be located with the ledger's tie band."""
    rows = _records(crossings)
    for r in rows:
        if "band" not in r or float(r["band"]) != float(tie_se):
            raise AttnbookError(f"a crossing located with a tie band of {r.get('band')} "
                                f"standard errors; the criterion's is tie_se = {tie_se}")
    return rows


def _in_regime(row) -> bool:
    """levine2020's depth-inefficient regime at every shallow width: L > log3 d_x."""
    return 3 ** int(row["L_shallow"]) > int(row["max_width"])


def _established(row, min_found) -> bool:
    """A crossing that a share of at least ``min_found`` of the bootstrap replicates finds
    (None: one seed, nothing resampled: not established)."""
    f = row.get("found_fraction")
    return _width(row.get("width")) is not None and f is not None and f == f \
        and float(f) >= min_found


@criterion("W-F3")
def transition_near_rank(crossings, *, factor, tie_se, min_found, did_se):
    """W-F3: the rank, not V, moves the transition. For every vocabulary whose input embedding
    is factored to rank r < V (rows of ``crossings`` as in W-F1, with ``r``), the shallow width
    at the depth-efficiency point lies within ``factor`` of r and is established (W-F1's
    ``tie_se`` and ``min_found``); and its full-rank control at the same widths (the row's
    ``control_width``: its crossing, None or NaN where it has none) does not cross inside that
    window [r/factor, factor r], or else the rank-limited gap falls across the widths by more
    than the control's: the row's ``did`` (the difference deep - shallow, rank-limited minus
    control, at the largest width minus at the smallest: a difference in differences that no
    constant offset moves) is below -``did_se`` times its standard error ``did_se_value``. Not
    testable outside the depth-inefficient regime (W-F1)."""
    rows = _crossing_rows(crossings, tie_se)
    if not rows:
        return False
    if not all(_in_regime(r) for r in rows):
        return NOT_TESTABLE
    for r in rows:
        rank = float(r["r"])
        ctrl = _width(r.get("control_width"))
        control_ok = ctrl is None or not (rank / factor <= ctrl <= factor * rank)
        did, se = r.get("did"), r.get("did_se_value")
        moved = did is not None and se is not None and did == did and se == se \
            and float(did) < -did_se * float(se)
        if not (_established(r, min_found) and _within(rank, r["width"], factor)
                and (control_ok or moved)):
            return False
    return True


def _rank_crossing_text(row) -> str:
    """One crossing of the vocabulary-rank sweep in words: V (and r where the embedding is
    factored), the shallow width, its ratio to the rank that limits it, its bootstrap interval."""
    name = f"V={row['V']}" + (f", r={row['r']}" if row.get("r") is not None else "")
    return crossing_text(name, f"shallow width {row['width']:.1f} = {row['ratio']:.2f} x "
                         f"{row['rank']}" if row.get("found") else "", row, 1)


def _regime_text(rows) -> str:
    """Nothing inside levine2020's depth-inefficient regime; outside it, that it is."""
    L, widest = rows[0]["L_shallow"], max(r["max_width"] for r in rows)
    return ("" if 3 ** int(L) > widest else
            f"; outside levine2020's depth-inefficient regime (L_shallow = {L} <= log3 "
            f"{widest}), where the paper places the transition")


@description("W-F3")
def rank_crossings_in_words(crossings, *, full_rank):
    """What W-F3 reads: each rank-limited crossing (``crossings``: rows of
    :func:`attnbook.engines.depth_sweep.rank_controls`), the first full-rank control's
    (``full_rank``: the crossings without ``r``, by V), and per rank-limited vocabulary the
    change of its gap across the widths against its control's in standard errors."""
    rows, full = _records(crossings), _records(full_rank)
    did = "; ".join(f"gap change across the widths, rank-limited minus control: "
                    f"{r['did']:+.4f} ({r['did'] / r['did_se_value']:+.1f} standard errors)"
                    for r in rows)
    return ("; ".join(_rank_crossing_text(r) for r in rows)
            + f"; control {_rank_crossing_text(full[0])}; {did}" + _regime_text(rows + full))


@description("W-F5")
def full_rank_crossings_in_words(crossings, gaps):
    """What W-F5 reads: the crossing of each full-rank vocabulary, the largest over the
    smallest width where every one crossed, and how far apart the gap curves of the largest and
    the smallest vocabulary lie (``gaps``: ``diff`` and ``se`` per shared size)."""
    rows, g = _records(crossings), _records(gaps)
    found = [r["width"] for r in rows if r["width"] is not None and r["width"] == r["width"]]
    spread = (f"; largest / smallest width {max(found) / min(found):.2f}"
              if len(found) == len(rows) else "")
    apart = max(abs(float(x["diff"])) / float(x["se"]) for x in g)
    return ("; ".join(_rank_crossing_text(r) for r in rows) + spread
            + f"; gap curves of V={rows[-1]['V']} minus V={rows[0]['V']}: at most {apart:.1f} "
            f"standard errors apart over {len(g)} sizes")


@criterion("W-F5")
def transition_barely_moves(crossings, gaps, *, max_ratio, tie_se, min_found, agree_se):
    """W-F5: the vocabularies of the comparison (at least two, full rank, larger than every
    width; rows of ``crossings`` as in W-F1) have crossings established as in W-F1, and the
    largest shallow width at the depth-efficiency point is at most ``max_ratio`` times the
    smallest. Where none of them crosses inside the widths nothing was located: not testable,
    provided their gap curves agree (``gaps``: per shared size the difference of the two
    vocabularies' gaps deep - shallow, ``diff``, and its standard error ``se``; agreement:
    |diff| <= ``agree_se`` se at every size), and not reproduced where they do not (the
    vocabulary moved the curve the transition is read from). Only some crossing: not
    reproduced."""
    rows = _crossing_rows(crossings, tie_se)
    if len(rows) < 2:
        return False
    found = [r for r in rows if _width(r.get("width")) is not None]
    if not found:
        g = _records(gaps)
        agree = bool(g) and all(abs(float(x["diff"])) <= agree_se * float(x["se"]) for x in g)
        return NOT_TESTABLE if agree else False
    if len(found) < len(rows) or not all(_established(r, min_found) for r in rows):
        return False
    widths = [_width(r["width"]) for r in rows]
    return max(widths) <= max_ratio * min(widths)
