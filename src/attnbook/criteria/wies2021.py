"""Criteria of the wies2021 claims (ledger: data/claims/wies2021.csv)."""

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


def _width(w):
    """A measured transition width as a float, None where no crossing was found (None/NaN)."""
    if w is None:
        return None
    w = float(w)
    return w if w == w else None


@criterion("W-F3")
def transition_near_rank(crossings, *, factor):
    """W-F3: for every rank-limited vocabulary, the shallow width at the depth-efficiency point
    lies within ``factor`` of the embedding rank r (r/factor <= width <= factor r).
    ``crossings``: (r, width) pairs, width None or NaN where no crossing was found in the
    measured range (not reproduced)."""
    pairs = [(float(r), _width(w)) for r, w in crossings]
    return bool(pairs) and all(w is not None and r / factor <= w <= factor * r
                               for r, w in pairs)


@criterion("W-F5")
def transition_barely_moves(widths, *, max_ratio):
    """W-F5: every vocabulary of the comparison (at least two) has a crossing, and the largest
    shallow width at the depth-efficiency point is at most ``max_ratio`` times the smallest.
    ``widths``: one width per vocabulary, None or NaN where no crossing was found."""
    values = [_width(w) for w in widths]
    if len(values) < 2 or any(w is None or w <= 0 for w in values):
        return False
    return max(values) <= max_ratio * min(values)
