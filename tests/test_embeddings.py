"""Vocabulary and convolutional embeddings of wies2021 section 2.1: shapes, ranks, errors."""

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from attnbook import ParameterError
from attnbook.engines import embeddings as E


@settings(max_examples=25, deadline=None)
@given(V=st.integers(1, 12), d_x=st.integers(1, 12), N=st.integers(1, 6), data=st.data())
def test_vocabulary_embedding_has_the_requested_ranks(V, d_x, N, data):
    r = data.draw(st.integers(1, min(d_x, V)))
    r_e = data.draw(st.integers(0, min(d_x, N)))
    emb = E.vocabulary_embedding(V, d_x, r, N, r_e, generator=torch.Generator().manual_seed(1))
    assert emb.matrix.shape == (d_x, V)
    assert emb.rank == r and emb.positional_rank == r_e
    w = torch.randint(0, V, (3, N))
    y = emb(w)  # eq. (1): M_V e_w + p^i
    assert y.shape == (3, N, d_x)
    assert torch.allclose(y[1, N - 1], emb.matrix[:, w[1, N - 1]] + emb.positional[N - 1])


def test_vocabulary_embedding_is_deterministic():
    a = E.vocabulary_embedding(6, 4, 2, 3, 1, generator=torch.Generator().manual_seed(5))
    b = E.vocabulary_embedding(6, 4, 2, 3, 1, generator=torch.Generator().manual_seed(5))
    assert torch.equal(a.matrix, b.matrix) and torch.equal(a.positional, b.positional)


def test_vocabulary_embedding_errors():
    with pytest.raises(ParameterError, match=r"r = 5 .*min\(d_x, V\)"):
        E.vocabulary_embedding(V=4, d_x=8, r=5, N=2)
    with pytest.raises(ParameterError, match=r"r = 5 .*min\(d_x, V\)"):
        E.vocabulary_embedding(V=40, d_x=4, r=5, N=2)
    with pytest.raises(ParameterError, match="r_e = 3"):
        E.vocabulary_embedding(V=4, d_x=8, r=2, N=2, r_e=3)
    emb = E.vocabulary_embedding(V=4, d_x=3, r=2, N=2)
    with pytest.raises(ParameterError, match="token"):
        emb(torch.tensor([[0, 4]]))
    with pytest.raises(ParameterError, match="N = 2"):
        emb(torch.tensor([[0, 1, 2]]))


def test_convolutional_embedding_matches_eq2_by_hand():
    # eq. (2): y^{0,i} = sum_j W_j x^{(M/N)(i-1)+j} + p^i, here M = 6, N = 3 (patches of 2)
    emb = E.convolutional_embedding(M=6, N=3, d_input=2, d_x=4, r=2, r_e=1,
                                    generator=torch.Generator().manual_seed(0))
    x = torch.randn(1, 6, 2, dtype=torch.float64)
    y = emb(x)
    i = 1  # second patch: inputs 2 and 3
    by_hand = emb.W_conv[0] @ x[0, 2] + emb.W_conv[1] @ x[0, 3] + emb.positional[i]
    assert torch.allclose(y[0, i], by_hand)
    # eq. (4): W~conv acting on the flattened patch gives the same token embedding
    assert torch.allclose(E.conv_kernel_matrix(emb.W_conv) @ x[0, 2:4].reshape(-1) +
                          emb.positional[i], y[0, i])


@settings(max_examples=20, deadline=None)
@given(N=st.integers(1, 4), k=st.integers(1, 3), d_input=st.integers(1, 4),
       d_x=st.integers(1, 8), data=st.data())
def test_convolutional_embedding_rank_eq4(N, k, d_input, d_x, data):
    r = data.draw(st.integers(1, min(d_x, k * d_input)))
    emb = E.convolutional_embedding(M=k * N, N=N, d_input=d_input, d_x=d_x, r=r,
                                    generator=torch.Generator().manual_seed(2))
    assert emb.W_conv.shape == (k, d_x, d_input)
    assert E.conv_embedding_rank(emb.W_conv) == r


def test_convolutional_embedding_errors():
    with pytest.raises(ParameterError, match="M = 5"):
        E.convolutional_embedding(M=5, N=2, d_input=1, d_x=2, r=1)
    with pytest.raises(ParameterError, match=r"r = 3 .*\(M/N\) d_input"):
        E.convolutional_embedding(M=2, N=2, d_input=2, d_x=4, r=3)  # V = 1 * 2
    emb = E.convolutional_embedding(M=4, N=2, d_input=3, d_x=4, r=2)
    with pytest.raises(ParameterError, match="x.shape"):
        emb(torch.zeros(1, 5, 3, dtype=torch.float64))
