"""The language model: shapes, parameter counts by formula, embedding rank, causality, errors."""

import pytest
import torch

from attnbook import ParameterError
from attnbook.engines.lm import LanguageModel, LMConfig, count_parameters, reference_gpt2


def _count_by_formula(V, N, L, d, H, d_a, r, r_e, tie):
    emb = (V * r + r * d if r else V * d) + (N * r_e + r_e * d if r_e else N * d)
    attn = d * 3 * H * d_a + 3 * H * d_a + H * d_a * d + d
    mlp = d * 4 * d + 4 * d + 4 * d * d + d
    block = attn + mlp + 2 * 2 * d  # two LayerNorms
    head = 0 if tie else V * d
    return emb, head, L * block + 2 * d  # + final LayerNorm


@pytest.mark.parametrize("V,N,L,d,H,d_a,r,r_e,tie", [
    (50, 8, 2, 16, 2, None, None, None, False),
    (50, 8, 1, 16, 2, None, 4, None, False),
    (50, 8, 3, 12, 3, 10, 30, 2, False),  # H d_a / d_x = 2.5, r > d_x
    (40, 8, 1, 16, 4, None, None, None, True),
])
def test_parameter_counts_match_formula(V, N, L, d, H, d_a, r, r_e, tie):
    cfg = LMConfig(V=V, N=N, L=L, d_x=d, H=H, d_a=d_a, r=r, r_e=r_e, tie=tie)
    counts = count_parameters(LanguageModel(cfg))
    emb, head, rest = _count_by_formula(V, N, L, d, H, d_a or d // H, r, r_e, tie)
    assert (counts["embedding"], counts["head"], counts["non_embedding"]) == (emb, head, rest)
    assert counts["total"] == emb + head + rest


@pytest.mark.parametrize("r,expected", [(1, 1), (5, 5), (16, 16), (30, 16), (None, 16)])
def test_rank_of_factorized_embedding(r, expected):
    m = LanguageModel(LMConfig(V=40, N=8, L=1, d_x=16, r=r))
    M = m.embedding_matrix()
    assert M.shape == (16, 40)
    assert torch.linalg.matrix_rank(M).item() == expected == m.cfg.embedding_rank


def test_positional_rank():
    m = LanguageModel(LMConfig(V=40, N=8, L=1, d_x=16, r_e=2))
    P = m.positional_matrix()  # (d_x, N)
    assert P.shape == (16, 8) and torch.linalg.matrix_rank(P).item() == 2


def test_head_untied_and_full_rank_when_factorized():
    m = LanguageModel(LMConfig(V=40, N=8, L=1, d_x=16, r=2))
    assert m.head.weight.shape == (40, 16)
    assert torch.linalg.matrix_rank(m.head.weight.double()).item() == 16
    tied = LanguageModel(LMConfig(V=40, N=8, L=1, d_x=16, tie=True))
    assert tied.head.weight is tied.wte.low.weight


def test_causal_future_tokens_do_not_change_past_logits():
    m = LanguageModel(LMConfig(V=30, N=10, L=2, d_x=16, dropout=0.0)).eval()
    x = torch.randint(0, 30, (2, 10), generator=torch.Generator().manual_seed(0))
    y = x.clone()
    y[:, 6:] = (y[:, 6:] + 1) % 30
    with torch.no_grad():
        a, b = m(x), m(y)
    assert torch.allclose(a[:, :6], b[:, :6], atol=1e-6)
    assert not torch.allclose(a[:, 6:], b[:, 6:])


def test_attention_ratio_beyond_one():
    cfg = LMConfig(V=30, N=8, L=1, d_x=16, H=4, d_a=16)
    assert cfg.attention_ratio == 4.0
    assert LanguageModel(cfg)(torch.zeros(1, 8, dtype=torch.long)).shape == (1, 8, 30)


def test_same_counts_as_gpt2_reference():
    cfg = LMConfig(V=60, N=16, L=2, d_x=32, tie=True)
    assert count_parameters(LanguageModel(cfg)) == count_parameters(reference_gpt2(cfg))
    ref = reference_gpt2(cfg)
    assert ref(torch.zeros(2, 16, dtype=torch.long)).shape == (2, 16, 60)


@pytest.mark.parametrize("kwargs,name", [
    (dict(r=41), "r"), (dict(r=0), "r"), (dict(d_x=15), "d_x"), (dict(r_e=9), "r_e"),
    (dict(r=4, tie=True), "tie"), (dict(L=0), "L"), (dict(dropout=1.0), "dropout"),
])
def test_bad_config(kwargs, name):
    base = dict(V=40, N=8, L=1, d_x=16)
    with pytest.raises(ParameterError, match=f"parameter {name} ="):
        LMConfig(**{**base, **kwargs})


def test_too_long_input_and_bad_reference():
    m = LanguageModel(LMConfig(V=40, N=8, L=1, d_x=16))
    with pytest.raises(ParameterError, match="N = 8"):
        m(torch.zeros(1, 9, dtype=torch.long))
    with pytest.raises(ParameterError, match="GPT-2 reference"):
        reference_gpt2(LMConfig(V=40, N=8, L=1, d_x=16, r=4))
