"""The MHA layer, the construction of Proposition 1, Step 2 and the bounds of mahdavi2024."""

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from tensors import F64, gaussian

import attnbook as ab
from attnbook.engines.linalg import numerical_rank
from attnbook.mahdavi2024.assumptions import assumption1, assumption2, kruskal_rank
from attnbook.mahdavi2024.attention import (
    MHAWeights,
    fcn_hard_dataset,
    make_dataset,
    mha_forward,
    trivial_attention_skip,
)
from attnbook.mahdavi2024.bounds import (
    memorization_lower_bound,
    mha_parameter_count,
    relu_fcn_bound,
    relu_fcn_parameter_count,
    shared_context_bound,
)
from attnbook.mahdavi2024.construction import (
    construct_attention,
    lemma3_w_plus,
    memorize,
    saturation_scale,
    solve_values,
)
from attnbook.mahdavi2024.feature_ranks import adversarial_rank_search, random_feature_ranks
from attnbook.mahdavi2024.relu_fcn import fcn_reduction_error, relu_fcn_jacobian_rank


# -- the layer ------------------------------------------------------------------------------
def test_forward_follows_equations_1_to_6():
    T, n, d, H, d_h, d_v, d_out = 3, 2, 4, 2, 3, 2, 1
    E, e = gaussian(T, n, d), gaussian(T, d, seed=1)
    w = MHAWeights(gaussian(H, d, d_h, seed=2), gaussian(H, d, d_h, seed=3),
                   gaussian(H, d, d_v, seed=4), gaussian(H * d_v, d, seed=5),
                   gaussian(d, d_out, seed=6))
    out = mha_forward(E, e, w)
    t, h = 2, 1
    alpha = E[t] @ w.W_K[h] @ w.W_Q[h].T @ e[t]  # eq. (1)
    theta = torch.softmax(alpha, 0)  # eq. (2)
    z = E[t].T @ theta  # eq. (3)
    assert torch.allclose(out.alpha[t, h], alpha) and torch.allclose(out.theta[t, h], theta)
    assert torch.allclose(out.Z[t, h * d:(h + 1) * d], z)  # eq. (7): heads side by side
    p = torch.cat([w.W_V[k].T @ out.Z[t, k * d:(k + 1) * d] for k in range(H)])  # eq. (4)
    assert torch.allclose(out.o[t], w.W_O.T @ p)  # eq. (5)
    assert torch.allclose(out.y_hat[t], w.W_D.T @ out.o[t])  # eq. (6)
    assert torch.allclose(mha_forward(E, e, w, skip=True).o, out.o + e)  # Appendix C


def test_weights_with_mismatched_shapes_are_rejected():
    with pytest.raises(ab.ParameterError, match="W_O"):
        MHAWeights(torch.zeros(2, 4, 3), torch.zeros(2, 4, 3), torch.zeros(2, 4, 1),
                   torch.zeros(3, 4), torch.zeros(4, 1))


def test_softmax_survives_logits_beyond_exp_range():
    E = torch.eye(2, 3, dtype=F64)[None]
    e = torch.tensor([[1e6, 0.0, 0.0]], dtype=F64)
    I = torch.eye(3, dtype=F64)
    out = mha_forward(E, e, MHAWeights(I[None], I[None], I[None], I, I))
    assert torch.isfinite(out.theta).all() and out.theta[0, 0].tolist() == [1.0, 0.0]


# -- bounds ---------------------------------------------------------------------------------
def test_bounds():
    assert memorization_lower_bound(3, 5, 10) == 13 == shared_context_bound(3, 5)
    assert memorization_lower_bound(3, 5, 2) == 4
    assert memorization_lower_bound(3, 5, 10, Q=3) == 7
    assert memorization_lower_bound(1, 1, 1) == 1  # n = 1: a single example (Section 4.2)
    assert relu_fcn_bound(3, 2, 1) == 11 == relu_fcn_parameter_count(3, 2, 1)
    with pytest.raises(ab.ParameterError, match="d_h"):
        memorization_lower_bound(3, 5, 0)


# -- data -----------------------------------------------------------------------------------
def test_datasets_have_the_stated_structure():
    E, e = make_dataset(9, 3, 6, query_rank=2, seed=1)
    assert kruskal_rank(e) == 2 and assumption2(E)
    E, e = make_dataset(9, 3, 6, shared=True, positional=True, token_sum=2.0)
    assert torch.allclose(E.sum(-1), torch.full((9, 3), 2.0, dtype=F64))
    assert bool((E == E[0]).all())
    E, e = fcn_hard_dataset(12, 3, 5)
    assert assumption1(e, 3) and assumption2(E)
    with pytest.raises(ab.ParameterError, match="dist"):
        make_dataset(3, 2, 3, dist="cauchy")


def test_trivial_layer_adds_the_context_mean():
    E, e = make_dataset(4, 3, 5, seed=2)
    Ep, ep = trivial_attention_skip(E, e)
    mean = E.mean(1, keepdim=True)
    assert torch.allclose(Ep, E + mean) and torch.allclose(ep, e + mean[:, 0])


# -- Lemma 3, Lemma 4 -----------------------------------------------------------------------
@settings(max_examples=20, deadline=None)
@given(n=st.integers(2, 5), extra=st.integers(1, 4), T=st.integers(3, 12), seed=st.integers(0, 999))
def test_lemma3_zero_logits_on_new_and_distinct_on_old(n, extra, T, seed):
    d = n + extra
    E, e = make_dataset(T, n, d, seed=seed)
    m = min(n - 1, T - 1)
    new, old = list(range(T - m, T)), list(range(T - m))
    c, w = lemma3_w_plus(E, e, new, old, seed=seed)
    Wp = torch.outer(c, w)  # rank one by construction
    assert int(numerical_rank(Wp)) == 1
    logits = torch.einsum("tia,ab,tb->ti", E, Wp, e)  # (T, n)
    scale = float(E.norm(dim=-1).max() * e.norm(dim=-1).max())
    assert float(logits[new].abs().max()) <= 1e-14 * scale  # eq. (17)
    gaps = (logits[old][:, :, None] - logits[old][:, None, :]).abs()
    gaps = gaps + torch.eye(n, dtype=F64) * 1e9
    assert float(gaps.min()) > 1e-10 * scale  # eq. (18)


@settings(max_examples=30, deadline=None)
@given(n=st.integers(2, 8), delta=st.floats(1e-8, 1.0), seed=st.integers(0, 999))
def test_saturation_scale_meets_delta(n, delta, seed):
    a_star = gaussian(5, n, seed=seed) * 3
    a_plus = gaussian(5, n, seed=seed + 1)
    c = saturation_scale(a_star, a_plus, delta)  # (5,)
    theta = torch.softmax(a_star + c[:, None] * a_plus, -1)
    onehot = torch.nn.functional.one_hot(a_plus.argmax(1), n).to(F64)
    assert bool(((theta - onehot).abs().sum(1) < delta).all())


def test_saturation_limit_is_the_argmax_of_w_plus():
    a_star, a_plus = gaussian(1, 4), gaussian(1, 4, seed=1)
    theta = torch.softmax(a_star + 1e8 * a_plus, -1)
    assert int(theta.argmax()) == int(a_plus.argmax()) and float(theta.max()) == 1.0


# -- Proposition 1 and Step 2 ---------------------------------------------------------------
@settings(max_examples=12, deadline=None)
@given(H=st.integers(1, 4), n=st.integers(2, 6), extra=st.integers(1, 3), d_h=st.integers(1, 8),
       shared=st.booleans(), seed=st.integers(0, 999))
def test_each_head_adds_r_minus_one_to_the_rank(H, n, extra, d_h, shared, seed):
    d = n + extra
    r = min(n, d_h)
    T = memorization_lower_bound(H, n, d_h)
    E, e = make_dataset(T, n, d, shared=shared, seed=seed)
    con = construct_attention(E, e, H, d_h, seed=seed)
    expected = [min(r + (h - 1) * (r - 1), T) for h in range(1, H + 1)]
    assert con.heads["rank_after"].tolist() == expected
    later = con.heads.iloc[1:]
    later = later[later["m"] > 0]
    # saturation on the earlier examples, within the delta of Appendix B.2
    assert bool((later["sat_l1_max"] < later["delta"]).all())
    # property (i) of sub-step 1.B: W+ leaves the new examples' logits at rounding level
    assert bool((later["new_logit_leak"] <= 1e-12 * later["c"]).all())
    assert con.W_K.shape == (H, d, d_h) and con.W_Q.shape == (H, d, d_h)


@pytest.mark.parametrize("H,n,d,d_h,d_v,d_out,shared", [
    (3, 4, 6, 6, 1, 1, False), (3, 4, 6, 2, 2, 2, False), (4, 5, 8, 8, 3, 2, True),
    (2, 6, 7, 3, 1, 1, True), (5, 3, 4, 3, 4, 4, False),
])
def test_theorem1_memorizes_exactly(H, n, d, d_h, d_v, d_out, shared):
    T = memorization_lower_bound(H, n, d_h)
    E, e = make_dataset(T, n, d, shared=shared, positional=True, dist="uniform", seed=3)
    Y = torch.rand(T, d_out, generator=torch.Generator().manual_seed(4), dtype=F64)
    res = memorize(E, e, Y, H, d_h, d_v=d_v, seed=5)
    assert res["rank"] == T == res["bound"]
    assert res["max_rel_err"] < 1e-8


def test_construction_is_deterministic():
    E, e = make_dataset(7, 4, 6, seed=1)
    a, b = construct_attention(E, e, 2, 4, seed=3), construct_attention(E, e, 2, 4, seed=3)
    assert torch.equal(a.W_K, b.W_K) and torch.equal(a.W_Q, b.W_Q)


def test_remark1_queries_of_low_kruskal_rank():
    H, n, d, Q = 3, 5, 8, 3
    T = memorization_lower_bound(H, n, d, Q=Q)
    E, e = make_dataset(T, n, d, query_rank=Q, seed=2)
    Y = gaussian(T, 1, seed=3)
    res = memorize(E, e, Y, H, d, Q=Q)
    assert res["rank"] == T == H * (Q - 1) + 1 and res["max_rel_err"] < 1e-8
    with pytest.raises(ab.ParameterError, match="T"):  # the stronger bound needs more examples
        construct_attention(*make_dataset(T + 1, n, d, query_rank=Q), H, d, Q=Q)
    E2, e2 = make_dataset(H * (n - 1) + 1, n, d, query_rank=Q, seed=2)
    with pytest.raises(ab.AttnbookError, match="Assumption 1"):
        construct_attention(E2, e2, H, d)  # Theorem 1 asked for, Assumption 1 broken


def test_construction_rejects_bad_input():
    E, e = make_dataset(5, 3, 4)
    with pytest.raises(ab.ParameterError, match="parameter n = 4"):
        construct_attention(*make_dataset(5, 4, 4), 2, 3)
    with pytest.raises(ab.ParameterError, match="d_h"):
        construct_attention(E, e, 2, 0)
    with pytest.raises(ab.ParameterError, match="T <= H"):
        construct_attention(*make_dataset(6, 3, 4), 2, 3)
    E_bad = E.clone()
    E_bad[1, 2] = E_bad[1, 0]
    with pytest.raises(ab.AttnbookError, match="Assumption 2"):
        construct_attention(E_bad, e, 2, 3)
    e_bad = e.clone()
    e_bad[1] = 2 * e_bad[0]
    with pytest.raises(ab.AttnbookError, match="Assumption 1"):
        construct_attention(E, e_bad, 2, 3)


def test_step2_needs_full_row_rank_and_valid_widths():
    Z = torch.ones(3, 4, dtype=F64)
    with pytest.raises(ab.AttnbookError, match="full row rank"):
        solve_values(Z, torch.ones(3, 1, dtype=F64), H=2)
    with pytest.raises(ab.ParameterError, match="d_v"):
        solve_values(torch.eye(3, 4, dtype=F64), torch.ones(3, 3, dtype=F64), H=2)


# -- Propositions 2, 3, 4, 5 ----------------------------------------------------------------
def test_shared_context_rank_never_exceeds_bound():
    H, n, d = 2, 3, 6
    E, e = make_dataset(12, n, d, shared=True, seed=1)
    ranks = random_feature_ranks(E, e, H, d, draws=50)
    assert ranks.max() == shared_context_bound(H, n) == 5
    df = adversarial_rank_search(E, e, H, d, k=6, restarts=2, steps=15)
    assert bool((df["rank"] <= 5).all())
    E2, e2 = make_dataset(12, n, d, seed=1)  # per-example contexts: no such bound
    assert random_feature_ranks(E2, e2, H, d, draws=5).min() == 12


def test_constant_sum_tokens_rank_bound():
    H, n, d = 2, 2, 4
    E, e = make_dataset(12, n, d, token_sum=1.5, seed=1)
    assert random_feature_ranks(E, e, H, d, draws=30).max() == H * (d - 1) + 1


def test_proposition4_trivial_layer_restores_assumption1():
    T, n, d = 10, 3, 6
    E, _ = make_dataset(T, n, d, seed=4)
    e = E[:, 0]  # self-attention: the query is the first token ...
    E[:, 0] = gaussian(d, seed=5)  # ... and the same [CLS] token in every example
    e = E[:, 0]
    assert not assumption1(e, n) and assumption2(E)
    Ep, ep = trivial_attention_skip(E, e)
    assert assumption1(ep, n) and assumption2(Ep)


def test_proposition3_jacobian_rank_within_reduced_parameter_count():
    T, n, d, m, d_out = 20, 3, 5, 2, 2
    E, e = fcn_hard_dataset(T, n, d)
    X = torch.cat([E.reshape(T, -1), e], 1)  # flattened inputs, (T, (n+1) d)
    ranks = relu_fcn_jacobian_rank(X, m, d_out, points=2)
    reduced = relu_fcn_parameter_count(n, m, d_out)
    assert max(ranks) <= reduced < T * d_out
    assert T > relu_fcn_bound(n, m, d_out) == reduced / d_out
    assert math.isclose(relu_fcn_bound(n, m, d_out), 7.0)  # (3+1)2/2 + 2 + 1


def test_appendix_f_reduction_needs_a_plus_sign():
    assert fcn_reduction_error(4, 6, 3, 2) < 1e-12
    assert fcn_reduction_error(4, 6, 3, 2, sign=-1.0) > 1e-2  # the sign printed in Appendix F


# -- the chapter's checks at the ends of their ranges ----------------------------------------
def test_theorem1_check_with_idle_heads_at_d_h_1():
    """d_h = 1 (Theorem 1 allows d_h >= 1): r = 1, T = 1, and heads 2..H fit no example. An
    idle head has no W+ and no delta of Appendix B.2: the saturation check is vacuous there,
    not a failure (it compared NaN with NaN)."""
    from attnbook import criteria
    from attnbook.mahdavi2024.checks import theorem1_check

    rows = [theorem1_check(3, 3, 5, 1, 2, context=ctx) for ctx in ("per_example", "shared")]
    assert all(r["T"] == r["rank"] == r["bound"] == 1 for r in rows)
    assert all(r["saturated_within_delta"] and r["increments_ok"] for r in rows)
    table = {k: [r[k] for r in rows] for k in ("rank", "bound", "max_rel_err", "increments_ok",
                                               "saturated_within_delta")}
    assert criteria.decide("M-T1", table) is True


def test_upper_bound_table_without_room_for_a_larger_rank():
    """Proposition 5 at H = 1 has bound d = H d: no adversarial search fits, yet the table
    keeps its adversarial columns (NaN) and the criterion decides on the random draws."""
    from attnbook import criteria
    from attnbook.mahdavi2024.checks import rank_upper_bound_table

    df = rank_upper_bound_table("constant_sum", [1], 2, 5, draws=5, restarts=1, steps=2)
    assert {"adv_max_rank", "adv_max_ratio", "adv_min_ratio_at_bound"} <= set(df.columns)
    assert df["adv_max_rank"].isna().all() and df["bound"].tolist() == [5]
    assert criteria.decide("M-P5", df) is True


def test_chapter_refuses_settings_outside_the_premises_of_propositions_3_and_4():
    """The .yml of mahdavi2024_theory refuses, before any kernel, what lies outside a premise:
    T < n for Proposition 4 (Assumption 3: T vectors of Kruskal rank n), and a ReLU net M-P3
    compares whose bound (n+1)m/d_out + m + 1 is not below T = H(n-1)+1 (Proposition 3 says
    nothing there): at n = 2 or d_out = 1 the parameter-matched net's bound exceeds T."""
    import itertools

    from attnbook.book.runner import UsageError, plan

    with pytest.raises(UsageError, match=r"p3_n = 2\b.*Proposition 3"):
        plan(["mahdavi2024_theory"], "ci", [("p3_n", "2")])
    with pytest.raises(UsageError, match=r"p3_d_out = 1\b.*Proposition 3"):
        plan(["mahdavi2024_theory"], "ci", [("p3_d_out", "1")])
    with pytest.raises(UsageError, match=r"p3_m_values = \[20\].*Proposition 3"):
        plan(["mahdavi2024_theory"], "ci", [("p3_m_values", "[20]")])
    with pytest.raises(UsageError, match=r"p4_n = 3, p4_T = 2\b.*Assumption 3"):
        plan(["mahdavi2024_theory"], "ci", [("p4_T", "2"), ("p4_n", "3")])
    (job,) = plan(["mahdavi2024_theory"], "ci", [("p4_T", "2")])  # n follows T down
    assert job.parameters["p4_n"] == 2
    # the rule's closed form of the parameter-matched width is the notebook's m_equal
    rule = next(r for r in job.spec.rules if "p3_m_values" not in r.names and "p3_H" in r.names)
    for n, d, H, k in itertools.product([2, 5, 9, 12], [13, 40], [1, 3, 8], [1, 2, 4, 13]):
        P = mha_parameter_count(H, d, n, k, k)
        m_equal = max(m for m in range(1, 10_000)
                      if relu_fcn_parameter_count((n + 1) * d, m, k) <= P)
        params = {"p3_n": n, "p3_d": d, "p3_H": H, "p3_d_out": k}
        assert rule.holds(params) == (H * (n - 1) + 1 > relu_fcn_bound(n, m_equal, k))
