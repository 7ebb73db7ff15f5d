"""Kruskal rank, General Position and Assumptions 1-3 of mahdavi2024
(attnbook.mahdavi2024.assumptions)."""

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from tensors import F64, gaussian

import attnbook as ab
from attnbook.engines.linalg import numerical_rank
from attnbook.mahdavi2024.assumptions import (
    assumption1,
    assumption2,
    assumption3,
    general_position,
    kruskal_rank,
    kruskal_rank_at_least,
)


def test_numerical_rank_is_scale_aware():
    X = gaussian(6, 4) @ gaussian(4, 9, seed=1)  # rank 4
    for scale in (1e-200, 1.0, 1e200):
        assert int(numerical_rank(X * scale)) == 4
    assert numerical_rank(torch.stack([X, X[:, :3] @ gaussian(3, 9, seed=2)])).tolist() == [4, 3]


def test_numerical_rank_accepts_numpy_and_rejects_vectors():
    assert int(numerical_rank(np.eye(3)[:, :2])) == 2
    with pytest.raises(ab.ParameterError, match="X"):
        numerical_rank(torch.ones(3))


@settings(max_examples=15, deadline=None)
@given(m=st.integers(1, 7), d=st.integers(1, 5), seed=st.integers(0, 10_000))
def test_generic_vectors_have_maximal_kruskal_rank(m, d, seed):
    V = gaussian(m, d, seed=seed)
    assert kruskal_rank(V) == min(m, d)
    assert bool(general_position(V))


@settings(max_examples=15, deadline=None)
@given(m=st.integers(2, 7), d=st.integers(2, 5), seed=st.integers(0, 10_000))
def test_a_repeated_direction_drops_kruskal_rank_to_one(m, d, seed):
    V = gaussian(m, d, seed=seed)
    V[1] = -2.5 * V[0]
    assert kruskal_rank(V) == 1
    assert not kruskal_rank_at_least(V, 2)
    assert not general_position(V)


def test_kruskal_rank_below_matrix_rank():
    # rank 3, but the first three vectors lie in a plane: Kruskal rank 2
    V = torch.tensor([[1, 0, 0], [0, 1, 0], [1, 1, 0], [0, 0, 1]], dtype=F64)
    assert int(numerical_rank(V)) == 3 and kruskal_rank(V) == 2
    check = kruskal_rank_at_least(V, 3, method="exact")
    assert not check and "(0, 1, 2)" in check.detail


def test_randomized_test_agrees_on_generic_and_on_degenerate_sets():
    V = gaussian(40, 10)
    assert kruskal_rank_at_least(V, 6, method="randomized", n_draws=300).holds
    W = torch.cat([gaussian(20, 3) @ gaussian(3, 10, seed=1), gaussian(20, 10, seed=2)])
    assert not kruskal_rank_at_least(W, 6, method="randomized", n_draws=300).holds
    check = kruskal_rank_at_least(V, 6, method="randomized", n_draws=50, seed=3)
    assert check.method == "randomized"


def test_exact_test_refuses_huge_enumerations():
    with pytest.raises(ab.AttnbookError, match="randomized"):
        kruskal_rank_at_least(gaussian(60, 30), 15, method="exact")
    with pytest.raises(ab.AttnbookError, match="randomized"):
        kruskal_rank(gaussian(60, 30))


def test_bad_inputs_raise_one_line_errors():
    with pytest.raises(ab.ParameterError, match="method"):
        kruskal_rank_at_least(gaussian(4, 3), 2, method="magic")
    with pytest.raises(ab.ParameterError, match="k"):
        kruskal_rank_at_least(gaussian(4, 3), -1)
    with pytest.raises(ab.ParameterError, match="NaN"):
        kruskal_rank(torch.full((3, 3), float("nan")))
    with pytest.raises(ab.ParameterError, match="contexts"):
        assumption2(gaussian(3, 4))
    with pytest.raises(ab.ParameterError, match="queries"):
        assumption3(gaussian(3, 2, 4), gaussian(2, 4))


def test_more_vectors_needed_than_available():
    assert not kruskal_rank_at_least(gaussian(2, 5), 3)


def test_assumption2_flags_the_rank_deficient_contexts():
    E = gaussian(5, 3, 6)
    assert assumption2(E).holds
    E[2, 1] = E[2, 0]
    E[4, 2] = E[4, 0] + E[4, 1]
    check = assumption2(E)
    assert not check and "[2, 4]" in check.detail


def test_assumption1_and_3_on_a_cls_token():
    # every query the same [CLS] token: Assumption 1 fails; adding the context mean repairs it
    T, n, d = 12, 3, 8
    E = gaussian(T, n, d)
    e = gaussian(1, d, seed=1).expand(T, d)
    assert not assumption1(e, n)
    assert assumption3(E, e)
