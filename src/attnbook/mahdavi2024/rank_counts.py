"""Counts of the randomized rank test, for bounds that the sampling noise cannot cross.

:func:`attnbook.mahdavi2024.token_ranks.subset_rank_fraction` gives the share of random
k-subsets of the queries with rank k; a verdict taken from that share against 0.99 (or a
bisection in k that compares it with 0.99 at every step) moves with the draws. M-F1's criterion
(:mod:`attnbook.criteria.mahdavi2024`) decides from the counts instead, with one-sided
Clopper-Pearson bounds: :func:`rank_counts` gives, per k, how many of the draws had rank k.

Used by: mahdavi2024_real_models.
"""

import pandas as pd

from ..engines.linalg import batched_rank
from ..errors import ParameterError
from .token_ranks import TokenSummary, subset_rank_fraction

__all__ = ["rank_counts"]


def rank_counts(summary: TokenSummary, draws_by_k: dict, *, seed: int = 0) -> pd.DataFrame:
    """Per k of ``draws_by_k`` ({k: draws}): how many of that many random k-subsets of the
    queries have rank k (``successes``), with ``exact`` True where k exceeds the rank of all
    the queries (then the share is 0 for certain and no draw is made). The draws at k use the
    seed ``seed + k``, as :func:`attnbook.mahdavi2024.token_ranks.fraction_curve` does.

    >>> import torch
    >>> from attnbook.mahdavi2024.token_ranks import summarize_tokens
    >>> s = summarize_tokens(torch.eye(3, dtype=torch.float64)[:, None, :], 0)
    >>> rank_counts(s, {2: 10, 4: 10}).to_dict("records")[1]
    {'k': 4, 'successes': 0, 'draws': 0, 'exact': True}
    """
    full = int(batched_rank(summary.queries, summary.eps))
    rows = []
    for k, draws in sorted(draws_by_k.items()):
        k, draws = int(k), int(draws)
        if k < 1 or draws < 1:
            raise ParameterError("draws_by_k", {k: draws}, "k >= 1 and draws >= 1")
        if k > full:
            rows.append({"k": k, "successes": 0, "draws": 0, "exact": True})
            continue
        share = subset_rank_fraction(summary.queries, k, draws, seed=seed + k, eps=summary.eps)
        rows.append({"k": k, "successes": round(share * draws), "draws": draws,
                     "exact": False})
    return pd.DataFrame(rows)
