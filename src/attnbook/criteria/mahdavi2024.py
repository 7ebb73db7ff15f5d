"""Criteria of the mahdavi2024 claims (ledger: data/claims/mahdavi2024.csv)."""

from . import criterion

__all__: list[str] = []


@criterion("M-F2b")
def accuracy_non_decreasing_in_context(worst_steps, *, max_drop):
    """M-F2b: for every T, the largest drop of accuracy from one context length n to the next
    is at most ``max_drop`` (seed noise). ``worst_steps``: that drop per T."""
    steps = [float(s) for s in worst_steps]
    return bool(steps) and all(s <= max_drop for s in steps)
