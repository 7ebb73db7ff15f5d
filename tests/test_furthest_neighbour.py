"""Furthest-neighbour data, the full-rank head, batched ranked attention, majority vote."""

import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import attnbook as ab
from attnbook.bruna2024 import furthest_neighbour as fn


def _gen(seed=0):
    return torch.Generator().manual_seed(seed)


@given(st.integers(1, 5), st.integers(2, 9), st.integers(2, 12))
@settings(max_examples=30, deadline=None)
def test_target_is_the_furthest_point(B, N, d):
    X = fn.sphere_points(B, N, d, generator=_gen(B * 100 + N), dtype=torch.float64)
    assert torch.allclose(X.norm(dim=-1), torch.ones(B, N, dtype=torch.float64))
    target, idx = fn.furthest_neighbour(X)
    dist = torch.cdist(X, X)  # (B, N, N)
    assert torch.equal(idx, dist.argmax(-1))
    assert torch.equal(target, X[torch.arange(B)[:, None], idx])
    assert not (idx == torch.arange(N)).any()  # never itself


def test_full_rank_head_converges_to_the_target():
    X = fn.sphere_points(64, 8, 16, generator=_gen(), dtype=torch.float64)
    target, idx = fn.furthest_neighbour(X)
    errs = [float(((fn.full_rank_head(X, c)[0] - target) ** 2).sum(-1).mean()) for c in
            (1.0, 10.0, 1e3, 1e5, 1e8)]
    assert all(a > b for a, b in zip(errs, errs[1:], strict=False))
    assert errs[-1] < 1e-10
    assert torch.equal(fn.full_rank_head(X, 1e8)[1].argmax(-1), idx)


def test_ranked_attention_realises_the_full_rank_construction():
    d, c = 8, 50.0
    net = fn.RankedAttention(d, ranks=[d], heads=[1], dtype=torch.float64)
    a = math.sqrt(c * math.sqrt(d))  # scores are (X W_Q^T)(X W_K^T)^T / sqrt(r)
    with torch.no_grad():
        net.W_Q.copy_(a * torch.eye(d))
        net.W_K.copy_(-a * torch.eye(d))
        net.W_V.copy_(torch.eye(d)[None])
    X = fn.sphere_points(16, 5, d, generator=_gen(), dtype=torch.float64)
    assert torch.allclose(net(X)[0], fn.full_rank_head(X, c)[0], atol=1e-12)


def test_batched_models_equal_models_alone_and_heads_have_rank_r():
    d, ranks, heads = 8, [1, 2, 4, 8], [8, 4, 2, 1]
    net = fn.RankedAttention(d, ranks, heads, generator=_gen(1), dtype=torch.float64)
    X = fn.sphere_points(4, 6, d, generator=_gen(2), dtype=torch.float64)
    out = net(X)  # (M, B, N, d)
    for m, (r, H) in enumerate(zip(ranks, heads, strict=True)):
        alone = fn.RankedAttention(d, [r], [H], dtype=torch.float64)
        s0, h0 = net.slot_offsets[m], net.head_offsets[m]
        with torch.no_grad():
            alone.W_Q.copy_(net.W_Q[s0:s0 + r * H])
            alone.W_K.copy_(net.W_K[s0:s0 + r * H])
            alone.W_V.copy_(net.W_V[h0:h0 + H])
        assert torch.allclose(alone(X)[0], out[m], atol=1e-12)
        for h in range(H):  # the bilinear form of head h: sum of its r slots
            rows = slice(s0 + h * r, s0 + (h + 1) * r)
            assert torch.linalg.matrix_rank(net.W_Q[rows].T @ net.W_K[rows]) == r


def test_line_configs_and_bad_ranks():
    assert fn.line_configs(8, 32) == [(1, 32), (2, 16), (4, 8), (8, 4)]
    with pytest.raises(ab.ParameterError, match="parameter r = 9"):
        fn.RankedAttention(8, ranks=[9], heads=[1])
    with pytest.raises(ab.ParameterError, match="parameter N = 1"):
        fn.sphere_points(2, 1, 4)
    with pytest.raises(ab.ParameterError, match="parameter H = 3"):
        fn.EncoderLine(8, heads=[3])
    with pytest.raises(ab.ParameterError, match="parameter c"):
        fn.full_rank_head(torch.zeros(1, 2, 2), -1.0)
    with pytest.raises(ab.ParameterError, match="parameter warmup"):
        fn.TrainSettings(steps=10, warmup=10)


def test_training_is_deterministic_and_learns():
    s = fn.TrainSettings(steps=200, batch=64, warmup=10, eval_every=50, eval_size=256)
    runs = []
    for _ in range(2):
        torch.manual_seed(0)
        net = fn.RankedAttention(4, [1, 4], [4, 1], generator=_gen(3))
        runs.append(fn.train_line(net, 3, s, seed=5))
    assert np.array_equal(runs[0]["curve"], runs[1]["curve"])
    assert runs[0]["curve"].shape == (4, 2)
    assert (runs[0]["min_loss"] < 0.9).all()  # both models beat the zero output (loss 1)


def test_votes_agree_with_the_exact_head_accuracy():
    g = _gen(4)
    x1, x2, y = fn.sphere_points(20, 3, 6, generator=g, dtype=torch.float64).unbind(1)
    q = fn.sphere_points(1, 20001, 6, generator=g, dtype=torch.float64)[0]
    truth = torch.where(((x1 - x2) * y).sum(-1) < 0, 1.0, -1.0).double()
    freq = (fn.rank1_votes(x1, x2, y, q) == truth[:, None]).double().mean(1)
    p = fn.head_accuracy(x1, x2, y)
    assert (p >= 0.5).all()
    assert torch.allclose(freq, p, atol=0.015)  # 20001 heads: sd < 0.0036
    # the two-layer attention construction returns the vote count's pick
    tally = fn.rank1_votes(x1, x2, y, q[:101]).sum(1)
    pick = torch.where(tally[:, None] > 0, x1, x2)
    assert torch.allclose(fn.two_layer_majority(x1, x2, y, q[:101], c=1e6), pick, atol=1e-9)


def test_majority_and_hoeffding():
    v = torch.tensor([[1.0, -1.0, 1.0, -1.0, -1.0]])
    assert fn.majority_accuracy(v, torch.tensor([1.0]), [1, 3, 5]).tolist() == [1.0, 1.0, 0.0]
    with pytest.raises(ab.ParameterError, match="parameter H = 2"):
        fn.majority_accuracy(v, torch.tensor([1.0]), [2])
    b = fn.hoeffding_accuracy_bound(torch.tensor([0.6, 0.9]), [1, 11, 101, 1001])
    assert np.all(np.diff(b) > 0) and b[-1] < 1
    limit = math.sqrt(2 / math.pi) / math.pi  # sqrt(d) E|t| / pi for large d
    assert fn.single_head_advantage(64) * 8 == pytest.approx(limit, rel=0.02)


def test_exact_majority_error_matches_a_vote_with_fresh_heads_per_input():
    d, T = 8, 20000
    exact = fn.majority_error_table([d])
    H = exact["H"].item()  # 65: the odd number nearest d^2
    g = _gen(5)
    x1, x2, y = fn.sphere_points(T, 3, d, generator=g, dtype=torch.float64).unbind(1)
    q = fn.sphere_points(T, H, d, generator=g, dtype=torch.float64)  # own heads per input
    s = torch.einsum("td,thd->th", x1 - x2, q) * torch.einsum("td,thd->th", y, q)
    truth = ((x1 - x2) * y).sum(-1) < 0  # x1 is the furthest
    wrong = ((s < 0).sum(1) > H // 2) != truth  # majority votes x1 iff s < 0 for most heads
    z = (x1 - x2) / (x1 - x2).norm(dim=-1, keepdim=True)
    typical = (z * y).sum(-1).abs() >= d**-0.5
    for col, sel in (("error_all", slice(None)), ("error_margin", typical)):
        err, n = exact[col].item(), int(wrong[sel].numel())
        assert float(wrong[sel].double().mean()) == pytest.approx(
            err, abs=4 * math.sqrt(err * (1 - err) / n))
    assert exact["margin_share"].item() == pytest.approx(float(typical.double().mean()), abs=0.02)
    # one head is right with probability 1/2 + the exact edge
    assert fn.majority_error_exact(16, 1) == pytest.approx(0.5 - fn.single_head_advantage(16))
    with pytest.raises(ab.ParameterError, match="parameter H = 4"):
        fn.majority_error_exact(8, 4)
