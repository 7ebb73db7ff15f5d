"""Criteria of the wies2021 claims (ledger: data/claims/wies2021.csv)."""

import math

from . import criterion

__all__: list[str] = []


@criterion("W-F1")
def transition_near_vocabulary(crossings, *, factor):
    """W-F1: for every V, the shallow width at the depth-efficiency point lies within
    ``factor`` of V (V/factor <= width <= factor V). ``crossings``: (V, width) pairs, width
    None or NaN where no crossing was found in the measured range (not reproduced)."""
    pairs = [(float(V), None if w is None else float(w)) for V, w in crossings]
    return bool(pairs) and all(w is not None and V / factor <= w <= factor * V
                               for V, w in pairs)


@criterion("W-Tab2-5")
def seed_noise_small(stds, *, max_std):
    """W-Tab2-5 (Tables 2 and 4): the seed standard deviation of the test loss is at most
    ``max_std`` at every point measured. ``stds``: one standard deviation per point."""
    values = [float(s) for s in stds]
    return bool(values) and all(s <= max_std for s in values)


@criterion("W-F4")
def attention_ratio_redundancy(fractions, *, mono_tol, ratio_a, paper_a, ratio_b, paper_b, tol):
    """W-F4 (Figure 4): the matched fraction f_rho (ratio-1 baseline size with the same loss
    over the net's own size, mean over sizes) is non-increasing in rho up to ``mono_tol``
    (f_1 = 1), and lies within ``tol`` of ``paper_a`` at rho = ``ratio_a`` and of ``paper_b`` at
    rho = ``ratio_b``. ``fractions``: {rho: f_rho} for the ratios above 1, NaN or None where a
    loss had no match in the baseline range (not reproduced)."""
    f = {1: 1.0}
    for rho, v in dict(fractions).items():
        if v is None or not math.isfinite(float(v)):
            return False
        f[int(rho)] = float(v)
    if len(f) < 2 or ratio_a not in f or ratio_b not in f:
        return False
    order = [f[rho] for rho in sorted(f)]
    monotone = all(later <= earlier + mono_tol
                   for i, earlier in enumerate(order) for later in order[i + 1:])
    return (monotone and abs(f[ratio_a] - paper_a) <= tol
            and abs(f[ratio_b] - paper_b) <= tol)


@criterion("W-F6")
def ratio_spread_exceeds_depth_spread(spreads, *, factor):
    """W-F6 (Figure 6): at every size, the spread of the best-depth loss across ratios is at
    least ``factor`` times the largest spread of the loss across depths within one ratio.
    ``spreads``: (across_ratios, largest across_depths) pairs, one per size."""
    pairs = [(float(r), float(d)) for r, d in spreads]
    return bool(pairs) and all(math.isfinite(r) and math.isfinite(d) and r >= factor * d
                               for r, d in pairs)
