"""Criteria of the levine2020 claims (ledger: data/claims/levine2020.csv)."""

import math
from itertools import pairwise

from . import criterion

__all__: list[str] = []


@criterion("L-D")
def transition_grows_like_log_width(transitions, *, min_pairs, max_rate_ratio):
    """L-D: the depth-efficiency transition moves to wider nets as depth grows, geometrically
    (transition depth linear in log width, as L_th = log_3 d_x). ``transitions``: one
    (L_shallow, L_deep, width) per pair of consecutive depths, width the shallower depth's
    width at the crossing, None or NaN where no crossing was found (not reproduced).

    Reproduced when there are at least ``min_pairs`` pairs, chained (each pair's deeper depth
    is the next pair's shallower one), every pair has a crossing, and the per-layer growth
    rates log_3(d*_next / d*) / (L_next - L) are all > 0, the largest at most
    ``max_rate_ratio`` times the smallest."""
    rows = sorted(((int(a), int(b), None if w is None else float(w))
                   for a, b, w in transitions), key=lambda r: r[0])
    if len(rows) < min_pairs or any(r0[1] != r1[0] for r0, r1 in pairwise(rows)):
        return False
    if any(w is None or not math.isfinite(w) or w <= 0 for _, _, w in rows):
        return False
    rates = [math.log(r1[2] / r0[2], 3) / (r1[0] - r0[0]) for r0, r1 in pairwise(rows)]
    return all(r > 0 for r in rates) and max(rates) <= max_rate_ratio * min(rates)


@criterion("L-Tab2")
def seed_std_small(stds, *, max_std):
    """L-Tab2 (Table 2): the seed standard deviation of the test loss is at most ``max_std``
    at every (depth, width) measured. ``stds``: one standard deviation per point."""
    values = [float(s) for s in stds]
    return bool(values) and all(s <= max_std for s in values)
