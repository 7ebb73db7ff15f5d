"""Grid tensors, matricization, numerical rank and the separation-rank bounds."""

import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from attnbook import AttnbookError, ParameterError
from attnbook.engines import separation_rank as sr
from attnbook.engines.linalg import rank_with_gap

# -- rank of known functions ----------------------------------------------------------------

def _grid_rank(f, Z, N, P=None):
    A = sr.grid_tensor(f, Z, N)
    return rank_with_gap(sr.matricize(A, P if P is not None else range(N // 2))).rank


def test_separable_function_has_rank_one():
    t = torch.linspace(0.5, 2.0, 5, dtype=torch.float64)
    f = lambda d: t[d].prod(dim=1)  # noqa: E731  prod_n t_{d_n}: separable for any partition
    for P in sr.balanced_partitions(4):
        assert _grid_rank(f, 5, 4, P) == 1


def test_sum_of_cross_products_has_known_rank():
    # y = sum_{k=0}^{K-1} (x_0 + x_1)^k x_2^k ... built as prod of sums: (1 + s_P s_Q)^K has
    # rank K + 1 for partition ({0,1},{2,3}) when s takes > K values on each side.
    t = torch.linspace(-1.0, 1.0, 6, dtype=torch.float64)
    K = 3
    f = lambda d: (1 + (t[d[:, 0]] + t[d[:, 1]]) * (t[d[:, 2]] + t[d[:, 3]])) ** K  # noqa: E731
    assert _grid_rank(f, 6, 4, [0, 1]) == K + 1


def test_non_separable_indicator_has_full_rank():
    # y = [d_0 == d_1] for N = 2 is the identity matrix: rank Z (the equality function).
    f = lambda d: (d[:, 0] == d[:, 1]).double()  # noqa: E731
    assert _grid_rank(f, 7, 2, [0]) == 7


def test_worked_example_matches_hand_formula():
    ex = sr.worked_example([0.5, 1.0, 2.0, 3.0])
    assert ex["max_abs_diff"] == 0.0 and ex["rank"] == 2
    assert sr.worked_example([-2.0, 2.0])["rank"] == 1  # equal squares: the measure-zero set


# -- grid and matricization ------------------------------------------------------------------

def test_grid_tensor_batched_equals_pointwise():
    f = lambda d: (d.double() * torch.tensor([1.0, 3.0, 7.0], dtype=torch.float64)).sum(1) ** 2  # noqa: E731,E501
    A = sr.grid_tensor(f, 3, 3, chunk=5)  # chunks that do not divide 27
    for d in sr.grid_points(3, 3):
        assert A[tuple(d.tolist())] == f(d[None])[0]


@settings(max_examples=25, deadline=None)
@given(Z=st.integers(1, 4), half=st.integers(1, 3), data=st.data())
def test_matricize_places_each_entry(Z, half, data):
    N = 2 * half
    A = torch.arange(Z**N, dtype=torch.float64).reshape((Z,) * N)
    P = data.draw(st.permutations(range(N)))[:half]
    M = sr.matricize(A, P)
    Ps, Qs = sr.check_partition(P, None, N)
    d = [data.draw(st.integers(0, Z - 1)) for _ in range(N)]
    row = sum(d[p] * Z ** (half - 1 - t) for t, p in enumerate(Ps))
    col = sum(d[q] * Z ** (half - 1 - t) for t, q in enumerate(Qs))
    assert M.shape == (Z**half, Z**half) and M[row, col] == A[tuple(d)]


def test_bad_partitions_are_clear_errors():
    with pytest.raises(ParameterError, match="N = 5 .*even"):
        sr.check_partition([0, 1], None, 5)
    with pytest.raises(ParameterError, match="is not a partition"):
        sr.check_partition([0, 0], None, 4)
    with pytest.raises(ParameterError, match="is not a partition"):
        sr.check_partition([0, 1, 2], None, 4)
    with pytest.raises(ParameterError, match="is not a partition"):
        sr.check_partition([0, 7], None, 4)
    with pytest.raises(ParameterError, match="is not a partition"):
        sr.matricize(torch.zeros(2, 2, 2, 2), [0, 1], [1, 3])
    with pytest.raises(ParameterError, match="N = 3"):
        sr.matricize(torch.zeros(2, 2, 2), [0])
    assert len(sr.balanced_partitions(6)) == math.comb(6, 3) // 2


# -- numerical rank ---------------------------------------------------------------------------

@settings(max_examples=20, deadline=None)
@given(m=st.integers(2, 30), n=st.integers(2, 30), k=st.integers(0, 10),
       scale=st.sampled_from([1e-30, 1.0, 1e30]), seed=st.integers(0, 10**6))
def test_numerical_rank_of_random_low_rank_matrix(m, n, k, scale, seed):
    k = min(k, m, n)
    g = np.random.default_rng(seed)
    M = scale * g.standard_normal((m, k)) @ g.standard_normal((k, n))
    R = rank_with_gap(M)
    assert R.rank == k  # scale-aware: the same rank at 1e-30 and 1e30
    if 0 < k < min(m, n):
        assert R.gap_decades > 8


def test_numerical_rank_rejects_overflowed_entries():
    with pytest.raises(AttnbookError, match="non-finite"):
        rank_with_gap(np.array([[1.0, np.inf], [0.0, 1.0]]))


# -- networks: partition invariance, determinism, settings -----------------------------------

@pytest.mark.parametrize("L,d_x,H,r,seed", [(1, 3, 2, 3, 0), (2, 2, 1, 2, 1), (2, 3, 2, 2, 2)])
def test_partition_invariance_on_random_nets(L, d_x, H, r, seed):
    s = sr.GridSetting(L=L, d_x=d_x, H=H, d_a=2, r=r, N=4, V=5)
    m = sr.measure_rank(s, seed, sr.balanced_partitions(4))
    assert len(set(m["ranks_exact"])) == 1  # levine2020 Claim 3
    assert m["ranks"] == m["ranks_exact"] and m["gap_decades"] > 4  # float agrees here


def test_one_layer_rank_is_one_plus_min_r_and_heads_times_d_a():
    # L = 1: y^i = sum_k x_{i,k} g_k(Q) + g_0(P), so sep = 1 + min(r, H d_a) (and <= Thm 1)
    for H, d_a, r in [(1, 1, 3), (1, 2, 3), (2, 1, 3), (2, 2, 2), (1, 3, 4)]:
        s = sr.GridSetting(L=1, d_x=4, H=H, d_a=d_a, r=r, N=4, V=8)
        m = sr.measure_rank(s)
        assert m["rank_exact"] == m["rank"] == 1 + min(r, H * d_a)
        assert m["rank_exact"] <= sr.levine2020_theorem1_bound(1, H, d_a)


def _sweep(tmp_path, name="ranks"):
    from attnbook.book.notebook import Sweep
    from attnbook.book.store import ResultStore

    return Sweep(ResultStore("test_sep", "ci", root=tmp_path), name)


def test_rank_sweep_is_deterministic_and_bounded(tmp_path):
    settings_ = [sr.GridSetting(L=L, d_x=3, H=1, d_a=3, r=r, N=4, V=5)
                 for L in (1, 2) for r in (1, 2, 3)]
    a = sr.add_bounds(sr.rank_sweep(settings_, _sweep(tmp_path, "a"), seed=3, progress=False))
    b = sr.rank_sweep(settings_, _sweep(tmp_path, "b"), seed=3, progress=False)
    assert a["rank_exact"].tolist() == b["rank_exact"].tolist()
    assert a["rank"].tolist() == b["rank"].tolist()
    assert all(a["rank_exact"] <= a["grid_cap"])
    assert all(int(k) <= u for k, u in zip(a["rank_exact"], a["wies_upper"], strict=True))
    assert all(int(k) <= u for k, u in zip(a["rank_exact"], a["levine_t2"], strict=True))


def test_rank_sweep_in_worker_processes_stores_the_same_ranks(tmp_path, monkeypatch, recwarn):
    """ATTNBOOK_WORKERS=2: the grid ranks are measured in two worker processes (the sweep's
    unit function is sent by value), and every rank and singular value equals the in-process
    run's."""
    settings_ = [sr.GridSetting(L=L, d_x=3, H=1, d_a=3, r=r, N=4, V=5)
                 for L in (1, 2) for r in (1, 3)]
    monkeypatch.setenv("ATTNBOOK_WORKERS", "2")
    par = sr.rank_sweep(settings_, _sweep(tmp_path, "par"), seed=3, progress=False)
    monkeypatch.delenv("ATTNBOOK_WORKERS")
    one = sr.rank_sweep(settings_, _sweep(tmp_path, "one"), seed=3, progress=False)
    assert not [w for w in recwarn if "cannot be sent" in str(w.message)]
    assert par["rank_exact"].tolist() == one["rank_exact"].tolist()
    assert par["ranks"].tolist() == one["ranks"].tolist()
    for a, b in zip(par["sigma_rel"], one["sigma_rel"], strict=True):
        assert list(a) == list(b)


def test_grid_setting_rejects_bad_values(tmp_path):
    with pytest.raises(ParameterError, match="r = 4"):
        sr.GridSetting(L=1, d_x=3, H=1, d_a=1, r=4, N=4, V=8)
    with pytest.raises(ParameterError, match="N = 3"):
        sr.GridSetting(L=1, d_x=3, H=1, d_a=1, r=2, N=3, V=8)
    with pytest.raises(ParameterError, match="partitions"):
        sr.rank_sweep([], _sweep(tmp_path), partitions="some")


# -- bounds against hand-computed values -------------------------------------------------------

def test_multiset_counts_multisets():
    for n in range(0, 5):
        for k in range(0, 5):
            brute = sum(1 for c in np.ndindex(*(k + 1,) * n) if sum(c) == k) if n else int(k == 0)
            assert sr.multiset(n, k) == brute


def test_wies2021_bounds_by_hand():
    # eq. (9), L = 1, r = 2, r_e = 0: ((2,3)) ((4,3)) 4^2 = 4 * 20 * 16
    assert sr.wies2021_upper_bound(1, 2) == 4 * 20 * 16
    # L = 2, r = 1, r_e = 1: ((2,9)) ((4,9)) 10^2 = 10 * 220 * 100
    assert sr.wies2021_upper_bound(2, 1, 1) == 10 * 220 * 100
    # eq. (14): L = 2 -> ((m, 1)) = m; L = 4, r = 6, H = 2 -> ((2, 9)) = 10
    assert sr.wies2021_lower_bound(2, 7, 2) == 2
    assert sr.wies2021_lower_bound(4, 6, 2) == 10
    with pytest.raises(ParameterError, match="H < r"):
        sr.wies2021_lower_bound(3, 4, 4)
    with pytest.raises(ParameterError, match="L = 1"):
        sr.wies2021_lower_bound(1, 4, 1)
    big = sr.wies2021_upper_bound(8, 256, 1)  # exact int, far beyond float range
    assert isinstance(big, int) and big.bit_length() > 3000 > 1024


def test_levine2020_bounds_by_hand():
    assert sr.levine2020_theorem1_bound(1, 2, 3) == 8  # H (d_a + 1)
    assert sr.levine2020_theorem1_bound(2, 2, 1) == 4**4  # C(2) = 4
    # Theorem 2, L = 2, d_x = 1: C = 4 -> 1 * 5 * ((1, 8)) * (8 + 1)^1 = 45
    assert sr.levine2020_theorem2_bound(2, 1) == 45
    # Theorem 3 proof recursion, L = 2, K = N d^4 / H = 2: s_2 = 2 (2 * 2)^3 = 128, x3
    assert sr.levine2020_theorem3_bound(2, 2, 1, 1) == 384
    assert sr.levine2020_theorem3_bound(2, 2, 1, 1, form="stated") == 4 * 2**4  # L^L K^C(L)
    assert sr.levine2020_theorem4_bound(2, 1) == 5 * 45
    with pytest.raises(ParameterError, match="form"):
        sr.levine2020_theorem3_bound(2, 2, 1, 1, form="other")


# -- exact rank modulo p -----------------------------------------------------------------------

@settings(max_examples=25, deadline=None)
@given(m=st.integers(1, 12), n=st.integers(1, 12), k=st.integers(0, 6), seed=st.integers(0, 10**6))
def test_rank_mod_p_equals_rank_of_integer_low_rank_products(m, n, k, seed):
    g = np.random.default_rng(seed)
    M = g.integers(-3, 4, (m, k)) @ g.integers(-3, 4, (k, n))  # small ints: exact everywhere
    assert sr.rank_mod_p(M) == np.linalg.matrix_rank(M.astype(float))


def test_rank_mod_p_sees_characteristic():
    assert sr.rank_mod_p([[2, 0], [0, 3]], p=3) == 1  # 3 = 0 in GF(3)
    with pytest.raises(ParameterError, match="p = "):
        sr.rank_mod_p([[1]], p=(1 << 31) + 11)


@pytest.mark.parametrize("residual", [False, True])
def test_modular_forward_matches_the_network(residual):
    # integer weights in {-1, 0, 1} and integer inputs: net(x) is exact in float64 and must
    # agree with the modular forward pass modulo p
    from attnbook.engines.attention_net import AttentionNetConfig, SelfAttentionNet

    g = torch.Generator().manual_seed(0)
    net = SelfAttentionNet(AttentionNetConfig(depth=2, d_x=3, heads=2, d_a=2, residual=residual))
    with torch.no_grad():
        for W in (net.W_Q, net.W_K, net.W_V, net.W_O):
            W.copy_(torch.randint(-1, 2, W.shape, generator=g).double())
        x = torch.randint(-2, 3, (5, 4, 3), generator=g).double()
        exact = net(x)
        assert exact.abs().max() < 2**52
        p = sr.PRIME
        mod = sr.attention_mod_p(x % p, net.W_Q % p, net.W_K % p, net.W_V % p, net.W_O % p, p,
                                 residual)
    assert torch.equal(exact % p, mod)


def test_exact_rank_of_depth3_scalar_network_is_fourteen():
    # d_x = r = 1: y^i = c u_i (S_P + S_Q)^13 with S = sum of u_j^2 (Lemma 1 with C(3) = 13),
    # 14 separable terms; float64 cannot resolve this (degree 27), the exact rank can.
    s = sr.GridSetting(L=3, d_x=1, H=1, d_a=1, r=1, N=6, V=7)
    m = sr.measure_rank(s)
    assert m["rank_exact"] == 14
    assert m["rank"] <= 14


def test_symmetric_grid_cap_bounds_and_is_reached():
    # without positional embedding, columns depend on the multiset of Q tokens: rank <= ((V, N/2))
    s = sr.GridSetting(L=3, d_x=2, H=1, d_a=2, r=2, N=4, V=4)
    assert s.grid_cap == sr.multiset(4, 2) == 10
    assert sr.measure_rank(s)["rank_exact"] == 10  # a depth-3 net fills the whole cap
    s_pos = sr.GridSetting(L=1, d_x=2, H=1, d_a=2, r=2, N=4, V=4, r_e=1)
    assert s_pos.grid_cap == 16  # positional embedding: no symmetry, only V^(N/2)


def test_rank_sweep_resumes_from_its_cache(tmp_path, monkeypatch):
    sweep = _sweep(tmp_path)
    settings_ = [sr.GridSetting(L=1, d_x=2, H=1, d_a=2, r=r, N=4, V=4) for r in (1, 2)]
    first = sr.rank_sweep(settings_[:1], sweep, progress=False)  # "interrupted" after one
    calls = []
    real = sr.measure_rank
    monkeypatch.setattr(sr, "measure_rank", lambda *a, **k: calls.append(a) or real(*a, **k))
    both = sr.rank_sweep(settings_, sweep, progress=False)
    assert len(calls) == 1  # only the missing setting is computed
    assert both["rank_exact"].tolist() == [2, 3] and first["rank_exact"].tolist() == [2]


@pytest.mark.parametrize("r", [1, 2, 3])
def test_convolutional_embedding_caps_one_layer_rank_at_kernel_rank(r):
    # wies2021 eq. (2)/(4): M = 4 raw inputs in patches of k = 2 (N = 2 positions); for the
    # partition ({0, 1}, {2, 3}) that splits no patch, one layer gives sep = 1 + min(r, H d_a)
    from attnbook.engines.attention_net import AttentionNetConfig, SelfAttentionNet
    from attnbook.engines.embeddings import convolutional_embedding

    g = torch.Generator().manual_seed(r)
    emb = convolutional_embedding(M=4, N=2, d_input=2, d_x=4, r=r, generator=g)
    net = SelfAttentionNet(AttentionNetConfig(depth=1, d_x=4, heads=1, d_a=4), generator=g)
    templates = torch.randn(4, 2, dtype=torch.float64, generator=g)  # Z = 4 vectors in R^2
    A = sr.grid_tensor(lambda d: net(emb(templates[d]))[:, 0, 0], Z=4, N=4)  # (Z,)*M
    assert rank_with_gap(sr.matricize(A, [0, 1])).rank == 1 + r
