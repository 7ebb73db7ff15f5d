"""levine2020 Lemma 1: the analysed network is a homogeneous polynomial of degree 3^L."""

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from attnbook.engines.attention_net import AttentionNetConfig, SelfAttentionNet
from attnbook.engines.polynomial import (
    attention_factor_count,
    degree_along_line,
    homogeneity_check,
    lemma1_degree,
    lemma1_table,
)
from attnbook.errors import ParameterError


def test_factor_count_follows_the_induction_of_the_proof():
    for L in range(1, 8):
        assert attention_factor_count(L + 1) == 3 * attention_factor_count(L) + 1
        assert lemma1_degree(L) == 3**L
    with pytest.raises(ParameterError, match="parameter L = 0"):
        attention_factor_count(0)


@settings(max_examples=15, deadline=None)
@given(L=st.integers(1, 3), d_x=st.integers(1, 6), H=st.integers(1, 3), d_a=st.integers(1, 4),
       N=st.integers(1, 5), seed=st.integers(0, 10**6))
def test_random_networks_are_homogeneous_of_degree_3_to_the_L(L, d_x, H, d_a, N, seed):
    g = torch.Generator().manual_seed(seed)
    net = SelfAttentionNet(AttentionNetConfig(L, d_x, H, d_a), generator=g)
    x = torch.randn(2, N, d_x, dtype=torch.float64, generator=g)
    r = homogeneity_check(net, x, [0.5, 1.5], 3**L)
    assert r["max_rel_error"] < 1e-9
    assert abs(r["fitted_degree"] - 3**L) < 1e-6
    wrong = homogeneity_check(net, x, [0.5, 1.5], 3**L - 1)  # the check can fail
    assert wrong["max_rel_error"] > 0.1


def test_degree_along_line_tells_degree_d_from_d_minus_one():
    g = torch.Generator().manual_seed(0)
    net = SelfAttentionNet(AttentionNetConfig(2, 4, 2, 3), generator=g)
    x, v = (torch.randn(1, 5, 4, dtype=torch.float64, generator=g) for _ in range(2))
    r = degree_along_line(net, x, v, 9)
    assert r["residual_at_degree"] < 1e-12
    assert r["residual_below_degree"] > 1e3 * r["residual_at_degree"]
    exp = degree_along_line(torch.exp, torch.zeros(1, dtype=torch.float64),
                            torch.ones(1, dtype=torch.float64) / 4, 3)
    assert exp["residual_at_degree"] > 1e-6  # not a cubic: the fit cannot be exact


def test_residual_networks_are_not_homogeneous():
    t = lemma1_table([1, 2], [4], [2], d_a=3, N=4, batch=2, line_max_depth=2)
    plain, res = t[~t["residual"]], t[t["residual"]]
    assert (plain["max_rel_error"] < 1e-9).all()
    assert (res["max_rel_error"] > 1e-3).all()
    assert (res["residual_at_degree"] < 1e-12).all()  # still a polynomial of degree 3^L


def test_lemma1_table_is_deterministic_and_validates_input():
    a = lemma1_table([1, 2], [3], [1], d_a=2, N=3, batch=1, line_max_depth=1, seed=5)
    b = lemma1_table([1, 2], [3], [1], d_a=2, N=3, batch=1, line_max_depth=1, seed=5)
    assert a.equals(b)
    with pytest.raises(ParameterError, match="parameter widths"):
        lemma1_table([1], [0], [1], d_a=2, N=3, batch=1, line_max_depth=1)
    with pytest.raises(ParameterError, match=r"parameter x.shape\[-1\] = 3"):
        SelfAttentionNet(AttentionNetConfig(1, 4, 1, 2))(torch.zeros(1, 2, 3, dtype=torch.float64))


def test_calibration_keeps_the_function_up_to_a_constant_and_the_scale_near_one():
    g = torch.Generator().manual_seed(1)
    net = SelfAttentionNet(AttentionNetConfig(3, 6, 2, 3), generator=g)
    x = torch.randn(2, 5, 6, dtype=torch.float64, generator=g)
    z = torch.randn(2, 5, 6, dtype=torch.float64, generator=g)
    with torch.no_grad():
        before_x, before_z = net(x), net(z)
        net.calibrate_(x)
        after_x, after_z = net(x), net(z)
    ratio = (after_x / before_x).flatten()
    assert torch.allclose(ratio, ratio[0].expand_as(ratio), rtol=1e-9)  # one constant
    assert torch.allclose(after_z / before_z, ratio[0].expand_as(before_z), rtol=1e-9)
    assert abs(float(after_x.pow(2).mean().sqrt() / x.pow(2).mean().sqrt()) - 1) < 1e-9
