"""Batched rank tests: tolerance, Gram route, randomized and ordering Kruskal estimates, rows."""

import numpy as np
import pytest
import torch

from attnbook import ParameterError
from attnbook.engines.linalg import batched_rank
from attnbook.mahdavi2024.assumptions import kruskal_rank
from attnbook.mahdavi2024.token_ranks import (
    TokenSummary,
    assumption_row,
    ordering_kruskal_estimates,
    randomized_kruskal_rank,
    subset_rank_fraction,
    summarize_tokens,
    verdict_table,
)

F64 = torch.float64


def _summary(queries, contexts=None, eps=None):
    q = torch.as_tensor(queries, dtype=F64)
    T, d = q.shape
    E = contexts if contexts is not None else torch.randn(T, 2, d, dtype=F64,
                                                         generator=torch.Generator().manual_seed(0))
    s = summarize_tokens(E, 0)
    return TokenSummary(q, s.shifted, s.context_ranks, E.shape[1],
                        eps if eps is not None else float(torch.finfo(F64).eps))


def test_rank_matches_numpy_in_float64():
    g = torch.Generator().manual_seed(0)
    X = torch.stack([torch.randn(7, r, dtype=F64, generator=g) @ torch.randn(r, 9, dtype=F64,
                                                                             generator=g)
                     for r in range(1, 8)])
    assert batched_rank(X).tolist() == [np.linalg.matrix_rank(x.numpy()) for x in X] == \
        list(range(1, 8))


def test_float32_tokens_are_judged_at_float32_resolution():
    # a rank-3 product computed in float32 carries rounding noise of ~1e-7: the float32 rule
    # sees rank 3, the float64 rule would count the noise as rank
    g = torch.Generator().manual_seed(1)
    X = torch.randn(40, 3, generator=g) @ torch.randn(3, 64, generator=g)  # float32
    assert int(batched_rank(X)) == 3
    assert int(batched_rank(X.double())) > 3


def test_gram_route_equals_svd_route_across_the_cut():
    # singular values 1, 1e-2, ..., straddling the float32 cut sigma_max * 30 * 1.2e-7 = 3.6e-6
    g = torch.Generator().manual_seed(2)
    U, _ = torch.linalg.qr(torch.randn(20, 20, dtype=F64, generator=g))
    V, _ = torch.linalg.qr(torch.randn(30, 30, dtype=F64, generator=g))
    s = torch.tensor([1.0, 1e-2, 1e-4, 1e-5, 2e-6, 1e-7, 1e-9] + [0.0] * 13, dtype=F64)
    X = (U * s) @ V[:20]
    eps32 = float(torch.finfo(torch.float32).eps)
    by_svd = int((torch.linalg.svdvals(X) > 30 * eps32).sum())
    assert by_svd == 4 and int(batched_rank(X, eps32)) == 4
    assert int(batched_rank(X.T.contiguous(), eps32)) == 4


def test_randomized_and_ordering_estimates_bound_the_exact_kruskal_rank():
    g = torch.Generator().manual_seed(3)
    generic = torch.randn(10, 5, dtype=F64, generator=g)  # Kruskal rank 5 = d
    s = _summary(generic)
    assert kruskal_rank(generic) == 5
    assert randomized_kruskal_rank(s, 30) == 5
    assert set(ordering_kruskal_estimates(s, 40).tolist()) == {5}
    # three vectors in one plane: every 3-subset holding them is dependent, Kruskal rank 2
    plane = torch.randn(2, 5, dtype=F64, generator=g)
    V = torch.cat([plane, plane.sum(0, keepdim=True), torch.randn(4, 5, dtype=F64, generator=g)])
    s = _summary(V)
    assert kruskal_rank(V) == 2
    est = ordering_kruskal_estimates(s, 200, seed=1)
    assert est.min() == 2 and (est >= 2).all()  # upper bounds, attained by some ordering
    # one 3-subset of C(7, 3) = 35 is dependent: 97% < 99%, so the randomized test says 2
    assert subset_rank_fraction(s.queries, 3, 500) == pytest.approx(1 - 1 / 35, abs=0.02)
    assert randomized_kruskal_rank(s, 500) == 2


def test_assumption_row_verdicts():
    g = torch.Generator().manual_seed(4)
    T, n, d = 12, 3, 6
    E = torch.randn(T, n, d, dtype=F64, generator=g)
    row = assumption_row(_summary(torch.randn(T, d, dtype=F64, generator=g), E), 50)
    assert row["assumption1"] and row["assumption2"] and row["assumption3"]
    assert row["general_position"] and row["rank_all_queries"] == d
    # identical queries (an embedding's [CLS]): Assumption 1 fails, GP fails for certain
    same = torch.randn(1, d, dtype=F64, generator=g).repeat(T, 1)
    row = assumption_row(_summary(same, E), 50)
    assert not row["assumption1"] and row["assumption1_fraction"] == 0.0
    assert row["rank_all_queries"] == 1 and row["general_position_fraction"] == 0.0
    # one rank-deficient context breaks Assumption 2, and the fraction says how many
    E2 = E.clone()
    E2[5, 2] = E2[5, 0]
    row = assumption_row(_summary(torch.randn(T, d, dtype=F64, generator=g), E2), 50)
    assert not row["assumption2"] and row["assumption2_fraction"] == pytest.approx(11 / 12)
    assert row["min_context_rank"] == 2


def test_assumption_row_needs_at_least_d_queries():
    with pytest.raises(ParameterError, match="T >= d"):
        assumption_row(_summary(torch.randn(3, 5, dtype=F64)), 10)


def test_verdict_table_marks_missing_stages_not_run():
    import pandas as pd

    m = pd.DataFrame([{"stage": "a", "assumption2": True, "assumption2_fraction": 1.0}])
    t = verdict_table(m, {("a", "Assumption 2"): True, ("b", "Assumption 2"): False})
    assert t["agrees"].tolist() == [True, None]
    assert t["measured"].tolist() == ["✓", "not run"]


def test_subset_ranks_gathers_one_chunk_at_a_time_and_equals_the_stacked_ranks(monkeypatch):
    # The randomized test used to stack all draws x k x d subsets before ranking them (6 GB for
    # M-F1's 5000 draws of 197 ViT-Base queries at cpu). subset_ranks gathers them one chunk of
    # batched_rank at a time: no tensor handed to batched_rank exceeds a chunk, and every rank,
    # so every fraction, is the stacked computation's. Chunks of 4 subsets stand in for 0.2 GB.
    from attnbook.engines import linalg
    from attnbook.mahdavi2024 import token_ranks

    g = torch.Generator().manual_seed(5)
    T, k, d, draws = 12, 4, 6, 23  # 23 draws: five full chunks and one of 3
    V = torch.randn(T, d, dtype=F64, generator=g)
    V[7] = V[3]  # equal queries and a plane: some subsets are dependent
    V[11] = V[2] + V[9]
    V[5] = V[1]
    chunk = 4 * k * d * 8
    monkeypatch.setattr(linalg, "_BYTES", chunk)
    monkeypatch.setattr(token_ranks, "_BYTES", chunk)
    idx = token_ranks._subsets(T, k, draws, 1)
    stacked = batched_rank(V[idx], 1e-7)  # the former computation, all subsets at once
    assert 0 < int((stacked < k).sum()) < draws  # the draws do meet dependent subsets

    seen = []

    def recording(X, eps):
        seen.append(X.numel() * X.element_size())
        return batched_rank(X, eps)

    monkeypatch.setattr(token_ranks, "batched_rank", recording)
    assert torch.equal(token_ranks.subset_ranks(V, idx, 1e-7), stacked)
    assert max(seen) <= chunk and sum(seen) == draws * k * d * 8 and len(seen) == 6
    frac = subset_rank_fraction(V, k, draws, seed=1, eps=1e-7)
    assert frac == float((stacked == k).double().mean())


def test_a_batch_summary_keeps_no_tokens_of_the_batch():
    # _collect keeps the summary of every batch of every stage until the stage is stacked; a
    # query that is a view of the float64 batch kept all of it alive (B x n x d x 8 bytes per
    # batch and stage: 3 GB for 800 ViT-Base images at cpu). The summary holds B x d values.
    B, n, d = 4, 9, 5
    hidden = torch.randn(B, n, d, generator=torch.Generator().manual_seed(6))  # float32
    s = summarize_tokens(hidden, query_index=-1)
    assert torch.equal(s.queries, hidden[:, -1].double())
    assert torch.equal(s.shifted, hidden[:, -1].double() + hidden.double().mean(dim=1))
    for t in (s.queries, s.shifted):
        assert t.untyped_storage().nbytes() == B * d * 8


def test_subset_ranks_chunks_as_batched_rank_does():
    """subset_ranks cuts its subsets where batched_rank cuts a stacked call: one chunk size."""
    from attnbook.engines import linalg
    from attnbook.mahdavi2024 import token_ranks

    assert token_ranks._BYTES == linalg._BYTES
