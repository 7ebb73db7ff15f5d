"""Spherical harmonics, Gegenbauer polynomials and the rank lower bound (bruna2024 talk)."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import special

import attnbook as ab
from attnbook.bruna2024 import harmonics as hm


@given(st.integers(2, 40), st.integers(0, 60))
@settings(max_examples=200, deadline=None)
def test_dimension_is_homogeneous_difference(d, l):
    difference = hm.homogeneous_dimension(d, l) - hm.homogeneous_dimension(d, l - 2)
    assert hm.harmonic_dimension(d, l) == difference


def test_dimension_known_values_and_laplacian_kernel():
    assert [hm.harmonic_dimension(2, l) for l in range(5)] == [1, 2, 2, 2, 2]  # cos, sin
    assert all(hm.harmonic_dimension(4, l) == (l + 1) ** 2 for l in range(30))
    for d in range(2, 6):
        for l in range(0, 7):
            assert hm.laplacian_kernel_dimension(d, l) == hm.harmonic_dimension(d, l), (d, l)


def test_dimension_is_exact_for_huge_values():
    n = hm.harmonic_dimension(512, 200)
    assert isinstance(n, int) and n > 2**200  # far beyond float64 resolution, still exact
    assert n == math.comb(711, 511) - math.comb(709, 511)


@pytest.mark.parametrize("d", [3, 5, 16, 64])
def test_gegenbauer_orthonormal_under_u_d(d):
    s, w = special.roots_jacobi(120, (d - 3) / 2, (d - 3) / 2)  # exact for degree < 240
    w = w / w.sum()  # u_d is a probability measure
    P = np.array([hm.gegenbauer(l, d, s) for l in range(61)])  # (61, nodes)
    assert np.abs((P * w) @ P.T - np.eye(61)).max() < 1e-10


def test_marginal_density_matches_sampling():
    rng = np.random.default_rng(0)
    g = rng.standard_normal((100_000, 6))
    t = g[:, 0] / np.linalg.norm(g, axis=1)
    hist, edges = np.histogram(t, bins=20, range=(-1, 1), density=True)
    mid = (edges[1:] + edges[:-1]) / 2
    assert np.abs(hist - hm.sphere_marginal_density(mid, 6)).max() < 0.03
    from scipy import integrate
    assert integrate.quad(lambda x: hm.sphere_marginal_density(x, 6), -1, 1)[0] == pytest.approx(1)


@pytest.mark.parametrize("d", [3, 8, 64])
def test_sign_coefficients_closed_form_vs_quadrature(d):
    c = hm.sign_coefficients(d, 300)
    q = hm.sign_coefficients_quadrature(d, 300)
    odd = np.arange(1, 301, 2)
    assert np.allclose(c[::2], 0) and np.allclose(q[::2], 0, atol=1e-12)
    assert np.abs(q[odd] - c[odd]).max() / np.abs(c[odd]).min() < 1e-8


def test_sign_coefficients_parseval_and_decay():
    c = hm.sign_coefficients(16, 20000)
    energy = np.cumsum(c**2)
    assert energy[-1] < 1 and energy[-1] > 0.999  # sum of squares -> ||sign||^2 = 1
    l = np.arange(1601, 20001, 2)
    slope = np.polyfit(np.log(l), np.log(np.abs(c[l])), 1)[0]
    assert slope == pytest.approx(-1.0, abs=0.02)  # the slide's 1/l for l >> d
    # large d, small l: Hermite limit c_1^2 -> 2/pi
    assert hm.sign_coefficients(4096, 1)[1] ** 2 == pytest.approx(2 / np.pi, abs=1e-3)


def test_lower_bound_properties():
    H = np.logspace(0, 8, 30)
    b = hm.rank_lower_bound(32, 2, H, l_max=500)
    assert np.all(np.diff(b) <= 1e-15) and np.all((0 <= b) & (b <= 1))
    # more rank at equal heads -> smaller bound
    assert np.all(hm.rank_lower_bound(32, 8, H, l_max=500) <= b + 1e-15)
    # one full-rank head already kills every degree: C(d+l, l) >= N(d, l)
    assert hm.rank_lower_bound(32, 32, 1, l_max=500) == 0


def test_heads_needed_is_the_crossing():
    # d = 512: N(d, l) leaves float range at moderate l, those degrees must stay in the bound
    for d, r, eps in [(32, 1, 0.3), (32, 4, 0.2), (32, 2, 0.45), (512, 1, 0.25), (512, 4, 0.3)]:
        H = hm.heads_needed(d, r, eps, l_max=800)
        assert hm.rank_lower_bound(d, r, H, l_max=800) == pytest.approx(eps, abs=1e-9)
        assert hm.rank_lower_bound(d, r, H * 0.99, l_max=800) > eps


def test_bad_input_is_one_clear_error():
    with pytest.raises(ab.ParameterError, match="parameter r = 9"):
        hm.rank_lower_bound(8, 9, 1)
    with pytest.raises(ab.ParameterError, match="parameter d = 2"):
        hm.gegenbauer(1, 2, 0.0)
    with pytest.raises(ab.ParameterError, match="parameter l = -1"):
        hm.harmonic_dimension(3, -1)
    with pytest.raises(ab.ParameterError, match="parameter eps"):
        hm.heads_needed(8, 1, 1.5)
    with pytest.raises(ab.ParameterError, match="parameter H"):
        hm.rank_lower_bound(8, 1, -1)
