"""The randomized rank test as counts: the share of rank-k subsets times the draws, exact zeros
above the rank of all queries."""

import pytest
import torch

from attnbook import ParameterError
from attnbook.mahdavi2024.rank_counts import rank_counts
from attnbook.mahdavi2024.token_ranks import subset_rank_fraction, summarize_tokens


def test_counts_are_the_shares_of_the_draws():
    g = torch.Generator().manual_seed(0)
    V = torch.randn(12, 6, dtype=torch.float64, generator=g)
    V[5] = V[2]  # two equal queries: a subset holding both is dependent
    s = summarize_tokens(V[:, None, :], 0)
    t = rank_counts(s, {3: 200, 6: 50, 7: 30}, seed=4).set_index("k")
    assert t.loc[3, "successes"] == round(subset_rank_fraction(V, 3, 200, seed=7) * 200)
    assert 0 < t.loc[3, "successes"] < 200 and t.loc[6, "draws"] == 50
    assert t.loc[7].to_dict() == {"successes": 0, "draws": 0, "exact": True}  # k > rank 6
    with pytest.raises(ParameterError):
        rank_counts(s, {0: 10})
