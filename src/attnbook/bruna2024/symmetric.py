"""Symmetric functions: multisymmetric power sums, and unary (DeepSets) versus pairwise features.

Covers the first part of the Bruna talk (bruna2024talk; Zweig & Bruna 2022, zweig2022):

* ``powersum_basis_size(d, N)``: H* = C(d + N, N), the number of multisymmetric power sums
  p_alpha(X) = sum_i x_i^alpha with |alpha| <= N (alpha = 0 the constant), counted here by
  enumerating the multi-indices;
* ``generator_counts``: the number of power sums needed in each degree k, measured as the
  numerical rank of all products of power sums of degree k modulo the products of two or
  more: #{|alpha| = k} for k <= N and 0 for k = N + 1, so degree N is where generation stops;
* ``matrix_separation``: the step of the proof where a unary model Sym(H) meets a target
  g = sum_ab G_ab p_a p_b through its matrix representation: rank(F) <= H, so the error on
  the products of two power sums is at least the Eckart-Young tail of G, while one pairwise
  feature psi(x, x') = sum_ab G_ab x^a x'^b represents g exactly;
* the same separation trained (slides "DeepSet", "Self-Attention Mechanism", "Main Result"):
  a concrete target ``PowerSumTarget``, g = sum_ab G_ab q_a q_b - tr G (scaled to unit norm),
  with q_a the real parts of K power sums of points on the torus; ``SetModels``, many DeepSets
  models Sym(H, N, d) (one per H) and one pairwise model Sym^2(1, N, d) as one batched tensor
  program; ``train_set_models`` and ``unary_pairwise_table``, which train them on fresh samples
  and measure the relative error ||g - f||^2 / ||g||^2 on fresh test samples.

Used by: bruna2024_symmetric.
"""

import math
import time
from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch
from torch import nn

from ..engines.linalg import multi_indices, numerical_rank
from ..engines.schedules import warmup_cosine
from ..errors import AttnbookError, ParameterError, check_int

__all__ = ["powersum_basis_size", "generator_counts", "zb_lower_bound",
           "matrix_separation", "TARGETS", "target_multi_indices", "torus_angles", "torus_embed",
           "PowerSumTarget", "matrix_representation", "eckart_young_tail", "SetModels",
           "SetTrainSettings", "train_set_models", "unary_pairwise_table", "unary_pairwise_result"]


def powersum_basis_size(d: int, N: int) -> int:
    """H* = C(d + N, N): the multisymmetric power sums of degree <= N (zweig2022; slide "DeepSet").

    >>> powersum_basis_size(1, 3), len(multi_indices(1, 3))  # 1, p_1, p_2, p_3
    (4, 4)
    """
    d, N = check_int("d", d, 1), check_int("N", N, 1)
    return math.comb(d + N, N)


def _products(alphas_by_degree: dict, k: int, min_factors: int):
    """Multisets of non-zero multi-indices with total degree k and >= min_factors factors."""
    flat = [(a, deg) for deg in sorted(alphas_by_degree) for a in alphas_by_degree[deg]]

    def rec(start, left, chosen):
        if left == 0:
            if len(chosen) >= min_factors:
                yield tuple(chosen)
            return
        for i in range(start, len(flat)):
            a, deg = flat[i]
            if deg <= left:
                yield from rec(i, left - deg, chosen + [a])

    return list(rec(0, k, []))


def _evaluate(X: np.ndarray, prods) -> np.ndarray:
    """Columns prod_j p_{alpha_j}(X) for each product, rows the samples X (S, N, d)."""
    cache = {}

    def p(a):
        if a not in cache:
            cache[a] = np.prod(X ** np.array(a), axis=-1).sum(-1)  # (S,)
        return cache[a]

    return np.stack([np.prod([p(a) for a in prod], axis=0) for prod in prods], axis=1)


def _rank(A: np.ndarray, rtol: float = 1e-9) -> int:
    """Rank of A with unit columns, singular values above ``rtol`` sigma_1."""
    if A.shape[1] == 0:
        return 0
    return int(numerical_rank(A / np.linalg.norm(A, axis=0, keepdims=True), rtol=rtol))


def generator_counts(d: int, N: int, k_max: int | None = None, *, seed: int = 0) -> pd.DataFrame:
    """Power sums needed in degree k: rank of all degree-k products of power sums minus the
    rank of the products of >= 2 factors, on random real point sets (S, N, d).

    Returns columns k, needed (measured), predicted (#{|alpha| = k} if k <= N else 0).

    >>> generator_counts(1, 2)[["k", "needed", "predicted"]].values.tolist()  # p_1, p_2; p_3 not
    [[1, 1, 1], [2, 1, 1], [3, 0, 0]]
    """
    d, N = check_int("d", d, 1), check_int("N", N, 1)
    k_max = N + 1 if k_max is None else check_int("k_max", k_max, 1)
    by_deg = {k: multi_indices(d, k, exact=True) for k in range(1, k_max + 1)}
    rng = np.random.default_rng(seed)
    rows = []
    for k in range(1, k_max + 1):
        every = _products(by_deg, k, 1)
        decomposable = [p for p in every if len(p) >= 2]
        if len(every) > 600:
            raise ParameterError("(d, N)", (d, N),
                                 f"small cases only ({len(every)} products at degree {k})")
        X = rng.uniform(-1, 1, size=(3 * len(every) + 20, N, d))  # (S, N, d)
        A = _evaluate(X, every)
        B = _evaluate(X, decomposable) if decomposable else np.zeros((len(X), 0))
        rows.append({"d": d, "N": N, "k": k, "needed": _rank(A) - _rank(B),
                     "predicted": len(by_deg[k]) if k <= N else 0})
    return pd.DataFrame(rows)


def zb_lower_bound(H, N: int, d: int):
    """(1/6)(1 - H / 2^min(N/2, d-1)), the slide's lower bound for Sym(H, N, d) (zweig2022).

    >>> [round(float(zb_lower_bound(H, 8, 5)), 4) for H in (0, 8, 16)]  # 2^min(4, 4) = 16
    [0.1667, 0.0833, 0.0]
    """
    D = 2.0 ** min(N / 2, d - 1)
    return np.clip(1 - np.asarray(H, dtype=float) / D, 0, None) / 6


def matrix_separation(D: int, Hs, *, samples: int = 4000, N: int = 8, d: int = 2,
                      seed: int = 0) -> pd.DataFrame:
    """Unary versus pairwise on g(X) = sum_ab G_ab p_{alpha_a}(X) p_{alpha_b}(X) (zweig2022).

    G = Q diag(1, -1, 1, ...) Q^T / sqrt(D), Q a random D x D orthogonal matrix: rank D, all
    singular values equal, unit Frobenius norm.

    A unary model's quadratic part has a matrix representation F of rank <= H, so
    ||F - G||_F^2 >= sum_{i > H} sigma_i(G)^2 = 1 - H/D (Eckart-Young; here the best F is the
    truncated SVD). One pairwise feature psi(x, x') = sum_ab G_ab x^alpha_a x'^alpha_b sums to
    g exactly; its error is measured on ``samples`` point sets with entries on the complex
    unit circle, where the monomials x^alpha are orthonormal.

    Returns columns H, eckart_young (1 - H/D by SVD), pairwise_error (relative, one feature).
    """
    D = check_int("D", D, 1)
    rng = np.random.default_rng(seed)
    Q, _ = np.linalg.qr(rng.standard_normal((D, D)))
    signs = np.where(np.arange(D) % 2 == 0, 1.0, -1.0)
    G = Q @ np.diag(signs) @ Q.T / math.sqrt(D)  # (D, D), ||G||_F = 1
    s = np.linalg.svd(G, compute_uv=False)
    A = target_multi_indices(d, D)  # (D, d): the first D non-zero multi-indices
    theta = 2 * np.pi * rng.uniform(size=(samples, N, d))  # (S, N, d): x = e^{i theta}
    mono = np.exp(1j * theta @ A.T)  # (S, N, D): x_i^alpha_a = e^{i alpha_a . theta_i}
    p = mono.sum(1)  # (S, D): power sums p_alpha_a(X)
    g = np.einsum("sa,ab,sb->s", p, G, p)  # the target
    pair = np.einsum("sia,ab,sjb->s", mono, G, mono)  # sum_{i,i'} psi(x_i, x_i')
    pair_err = float(np.mean(np.abs(pair - g) ** 2) / np.mean(np.abs(g) ** 2))
    rows = [{"H": int(H), "eckart_young": float((s[int(H):] ** 2).sum()),
             "pairwise_error": pair_err} for H in Hs]
    return pd.DataFrame(rows)


# -- the separation trained: Sym(H, N, d) against Sym^2(1, N, d) ----------------------------

TARGETS = ("rotated", "identity")  # the matrix G of the target (see PowerSumTarget)


def target_multi_indices(d: int, K: int) -> np.ndarray:
    """The first K non-zero multi-indices alpha in N^d, graded order, as a (K, d) array.

    >>> target_multi_indices(2, 4).tolist()
    [[0, 1], [1, 0], [0, 2], [1, 1]]
    """
    d, K = check_int("d", d, 1), check_int("K", K, 1)
    degree = 1
    while math.comb(d + degree, degree) - 1 < K:  # smallest degree with K non-zero alphas
        degree += 1
    return np.array(multi_indices(d, degree)[1:K + 1])


def torus_angles(B: int, N: int, d: int, *, generator=None, device=None,
                 dtype=torch.float32) -> torch.Tensor:
    """B sets of N points x_i in the torus T^d in C^d (x_ik = e^{i theta_ik}, theta uniform on
    [0, 2 pi)): the angles theta, a tensor of shape (B, N, d).

    >>> torus_angles(2, 3, 4, generator=torch.Generator().manual_seed(0)).shape
    torch.Size([2, 3, 4])
    """
    B, N, d = check_int("B", B, 1), check_int("N", N, 1), check_int("d", d, 1)
    u = torch.rand(B, N, d, generator=generator, device=device, dtype=dtype)
    return 2 * math.pi * u


def torus_embed(theta: torch.Tensor) -> torch.Tensor:
    """The points as real vectors (Re x, Im x) = (cos theta, sin theta): (..., d) -> (..., 2d).

    >>> torus_embed(torch.zeros(1, 1, 2)).tolist()
    [[[1.0, 1.0, 0.0, 0.0]]]
    """
    return torch.cat([theta.cos(), theta.sin()], dim=-1)


def _canonical(w) -> tuple:
    """w or -w, whichever has its first non-zero entry positive (cos(w.t) = cos(-w.t))."""
    w = tuple(int(v) for v in w)
    nz = next((v for v in w if v), 0)
    return tuple(-v for v in w) if nz < 0 else w


class PowerSumTarget:
    """A concrete g of high-rank matrix representation, for training (zweig2022, slide "Main
    Result"; the theorem only states that some nu and g exist).

    Data nu: N points of the torus T^d in C^d, angles theta_ik i.i.d. uniform on [0, 2 pi).
    Power sums: q_a(X) = sqrt(2/N) Re p_{alpha_a}(X) = sqrt(2/N) sum_i cos(alpha_a . theta_i)
    for the first K non-zero multi-indices alpha_a (``target_multi_indices``). The functions
    cos(alpha_a . theta) are orthogonal with mean square 1/2 under nu, so E q_a q_b = delta_ab,
    and the products q_a q_b are orthogonal up to the terms i = i' of the double sum.

    Target: g = (q^T G q - tr G) / c with G a symmetric K x K matrix of ||G||_F = 1 whose K
    singular values all equal 1/sqrt(K) (flat spectrum, rank K):

    * ``"rotated"``: G = Q diag(1, -1, 1, ...) Q^T / sqrt(K), Q a random orthogonal matrix;
    * ``"identity"``: G = I / sqrt(K).

    c is the exact standard deviation of q^T G q under nu, so ||g||_nu = 1 and E g = 0:
    c^2 = 2 (N - 1)/N ||G||_F^2 (pairs i != i') + Var(h)/N (the terms i = i'), with
    h(theta) = sum_ab G_ab [cos((alpha_a - alpha_b).theta) + cos((alpha_a + alpha_b).theta)].
    ``diagonal_share`` = Var(h) / (N c^2) is the part of g's variance in the terms i = i', a
    unary function. The matrix representation of g in the basis q_a q_b is G / c
    (``matrix``). One pairwise feature represents g exactly:
    psi(x, x') = (2 / (N c)) sum_ab G_ab cos(alpha_a . theta) cos(alpha_b . theta'), rho(t) =
    t - tr G / c.

    >>> g = PowerSumTarget("identity", K=3, N=4, d=2)
    >>> g.alphas.tolist(), round(g.c, 4), round(g.diagonal_share, 4)
    ([[0, 1], [1, 0], [0, 2]], 1.2748, 0.0769)
    """

    def __init__(self, name: str = "rotated", K: int = 16, N: int = 8, d: int = 5, *,
                 seed: int = 0):
        if name not in TARGETS:
            raise ParameterError("target", name, " or ".join(TARGETS))
        self.K, self.N, self.d = check_int("K", K, 1), check_int("N", N, 2), check_int("d", d, 1)
        self.name, self.seed = name, check_int("seed", seed, 0)
        self.alphas = target_multi_indices(d, K)  # (K, d)
        if name == "identity":
            G = np.eye(K)
        else:
            Q, _ = np.linalg.qr(np.random.default_rng(seed).standard_normal((K, K)))
            G = Q @ np.diag([(-1.0) ** a for a in range(K)]) @ Q.T
            G = (G + G.T) / 2
        self.G = G / np.linalg.norm(G)  # (K, K), ||G||_F = 1
        coef: dict[tuple, float] = {}
        for a in range(K):
            for b in range(K):
                for w in (self.alphas[a] - self.alphas[b], self.alphas[a] + self.alphas[b]):
                    key = _canonical(w)
                    coef[key] = coef.get(key, 0.0) + self.G[a, b]
        var_h = sum(v * v for k, v in coef.items() if any(k)) / 2
        var_pairs = 2 * (N - 1) / N * float((self.G ** 2).sum())
        self.c = float(math.sqrt(var_pairs + var_h / N))
        self.diagonal_share = float(var_h / N / self.c ** 2)
        self.matrix = self.G / self.c  # matrix representation of g in the basis q_a q_b
        self.offset = float(np.trace(self.G)) / self.c  # E (q^T G q) / c

    def _tensors(self, ref: torch.Tensor):
        A = torch.as_tensor(self.alphas, dtype=ref.dtype, device=ref.device)  # (K, d)
        G = torch.as_tensor(self.matrix, dtype=ref.dtype, device=ref.device)  # (K, K)
        return A, G

    def _check_theta(self, theta: torch.Tensor):
        if theta.dim() != 3 or tuple(theta.shape[1:]) != (self.N, self.d):
            raise ParameterError("theta.shape", tuple(theta.shape),
                                 f"(B, N, d) = (B, {self.N}, {self.d})")

    def unary_features(self, theta: torch.Tensor) -> torch.Tensor:
        """psi_a(x_i) = sqrt(2/N) cos(alpha_a . theta_i) for every point: (B, N, d) -> (B, N, K)."""
        self._check_theta(theta)
        A, _ = self._tensors(theta)
        return math.sqrt(2 / self.N) * torch.cos(theta @ A.T)

    def power_sums(self, theta: torch.Tensor) -> torch.Tensor:
        """q_a(X) = sum_i psi_a(x_i), the K unary features of g: (B, N, d) -> (B, K)."""
        return self.unary_features(theta).sum(1)

    def from_power_sums(self, q: torch.Tensor) -> torch.Tensor:
        """rho(q) = q^T (G / c) q - tr G / c: the quadratic read-out of g from its power sums."""
        _, G = self._tensors(q)
        return torch.einsum("ba,ac,bc->b", q, G, q) - self.offset

    def __call__(self, theta: torch.Tensor) -> torch.Tensor:
        """g(X) for point sets given by their angles: (B, N, d) -> (B,)."""
        return self.from_power_sums(self.power_sums(theta))

    def pair_feature(self, theta: torch.Tensor) -> torch.Tensor:
        """phi(X) = sum_{i, i'} psi(x_i, x_i'), one pairwise feature, summed over all N^2
        ordered pairs: (B, N, d) -> (B,); g = phi - tr G / c."""
        self._check_theta(theta)
        A, G = self._tensors(theta)
        cos = torch.cos(theta @ A.T)  # (B, N, K)
        psi = (2 / self.N) * torch.einsum("bia,ac,bjc->bij", cos, G, cos)  # (B, N, N)
        return psi.sum(dim=(1, 2))


def matrix_representation(target: PowerSumTarget, samples: int = 0, *,
                          seed: int = 0) -> np.ndarray:
    """The matrix representation of ``target`` measured, not read off: least squares of g on
    the constant and the products q_a q_b (a <= b) over random point sets (float64).

    Returns the symmetric K x K matrix M with g = q^T M q + const. The fit is unique (and
    equals G / c) when the products are linearly independent functions under nu.
    ``samples`` defaults to 3 x the number of products + 50.
    """
    K = target.K
    iu = np.triu_indices(K)
    n_cols = len(iu[0]) + 1
    samples = samples or 3 * n_cols + 50
    if check_int("samples", samples, 1) < n_cols:
        raise ParameterError("samples", samples, f">= {n_cols} (the number of products + 1)")
    gen = torch.Generator().manual_seed(seed)
    theta = torus_angles(samples, target.N, target.d, generator=gen, dtype=torch.float64)
    q = target.power_sums(theta).numpy()  # (S, K)
    y = target(theta).numpy()  # (S,)
    X = np.concatenate([(q[:, :, None] * q[:, None, :])[:, iu[0], iu[1]],
                        np.ones((samples, 1))], axis=1)
    coef = np.linalg.lstsq(X, y, rcond=None)[0][:-1]
    M = np.zeros((K, K))
    M[iu] = coef
    return (M + M.T) / 2  # the coefficient of q_a q_b (a < b) is 2 M_ab


def eckart_young_tail(M: np.ndarray, Hs) -> np.ndarray:
    """sum_{i > H} sigma_i(M)^2 / ||M||_F^2: the smallest relative error ||F - M||_F^2 /
    ||M||_F^2 of a matrix F of rank <= H (Eckart-Young), for each H.

    >>> eckart_young_tail(np.diag([2.0, 1.0, 1.0]), [0, 1, 3]).round(4).tolist()
    [1.0, 0.3333, 0.0]
    """
    s2 = np.linalg.svd(np.asarray(M, dtype=float), compute_uv=False) ** 2
    tail = np.concatenate([np.cumsum(s2[::-1])[::-1], [0.0]]) / s2.sum()
    return np.array([tail[min(int(H), len(s2))] for H in Hs])


def _model_generator(seed: int, key: int) -> torch.Generator:
    """The initialisation stream of one model: a function of the seed and the model alone."""
    return torch.Generator().manual_seed(1_000_003 * seed + key)


class SetModels(nn.Module):
    """M DeepSets models Sym(H_m, N, d), one per H in ``Hs``, and optionally one pairwise
    model Sym^2(1, N, d), evaluated as one tensor program (slides "DeepSet" and
    "Self-Attention Mechanism"; zweig2022).

    Unary model m: f_m(X) = rho_m(N^{-1/2} sum_i psi_m(x_i)) with psi_m: R^{2d} -> R^{H_m},
    and rho_m: R^{H_m} -> R an MLP with one hidden layer of ``width`` SiLU units plus a linear
    skip, rho(z) = v^T silu(U z + c) + a^T z + b (v = 0 at initialisation). Pairwise model:
    f(X) = a N^{-1} sum_{i, i'} psi(x_i, x_i') + b with psi: R^{4d} -> R, one feature and an
    affine rho (a = 1 at initialisation): the construction needs no more, and an MLP
    read-out of one summed feature tends to stall training on a plateau near the zero
    predictor. Every psi is an MLP with one hidden layer of ``width`` SiLU units (analytic, as
    the theorem requires), psi(x) = W_2 silu(W_1 x + b_1) + b_2.

    The weights of the M unary models are stacked along a leading model axis (batched matrix
    products); the feature axis is padded to max(Hs) and model m's padded features are masked
    to zero, so it has exactly H_m features. The pairwise model runs in the same forward pass.
    Each model is initialised from its own stream (seed and H), so its weights do not depend
    on which other models are trained beside it.

    >>> net = SetModels(d=3, Hs=[1, 4])
    >>> net(torch.randn(5, 6, 6)).shape  # (M + 1, B): two unary models and the pairwise one
    torch.Size([3, 5])
    """

    def __init__(self, d: int, Hs, *, pairwise: bool = True, width: int = 64, seed: int = 0,
                 dtype=torch.float32):
        super().__init__()
        d, width = check_int("d", d, 1), check_int("width", width, 1)
        seed = check_int("seed", seed, 0)
        Hs = [check_int("H", H, 1) for H in Hs]
        if len(set(Hs)) != len(Hs):
            raise ParameterError("Hs", Hs, "distinct numbers of features")
        if not Hs and not pairwise:
            raise ParameterError("Hs", Hs, "at least one model (some H >= 1, or pairwise)")
        self.d, self.Hs, self.width, self.pairwise = d, Hs, width, bool(pairwise)
        M, Hmax, W = len(Hs), max(Hs, default=1), width

        def normal(gen, *shape, fan_in):
            return torch.randn(*shape, generator=gen, dtype=dtype) / math.sqrt(fan_in)

        # unary models: weights (M, fan_in, fan_out), biases (M, 1, fan_out)
        shapes = {"psi1": (2 * d, W), "psi2": (W, Hmax), "rho1": (Hmax, W), "rho2": (W, 1),
                  "skip": (Hmax, 1)}
        weights = {k: torch.zeros(M, *s, dtype=dtype) for k, s in shapes.items()}
        mask = torch.zeros(M, Hmax, dtype=dtype)
        for m, H in enumerate(Hs):
            gen = _model_generator(seed, H)
            weights["psi1"][m] = normal(gen, 2 * d, W, fan_in=2 * d)
            weights["psi2"][m, :, :H] = normal(gen, W, H, fan_in=W)
            weights["rho1"][m, :H] = normal(gen, H, W, fan_in=H)
            weights["skip"][m, :H] = normal(gen, H, 1, fan_in=H)
            mask[m, :H] = 1
        for k, w in weights.items():
            setattr(self, f"W_{k}", nn.Parameter(w))
            setattr(self, f"b_{k}", nn.Parameter(torch.zeros(M, 1, w.shape[-1], dtype=dtype)))
        self.register_buffer("mask", mask[:, None, :])  # (M, 1, Hmax)
        if self.pairwise:
            gen = _model_generator(seed, 0)
            self.pair = nn.ParameterDict({
                "psi1": nn.Parameter(normal(gen, 4 * d, W, fan_in=4 * d)),
                "psi2": nn.Parameter(normal(gen, W, 1, fan_in=W)),
                "skip": nn.Parameter(torch.ones(1, 1, dtype=dtype)),
                **{f"b_{k}": nn.Parameter(torch.zeros(n, dtype=dtype))
                   for k, n in (("psi1", W), ("psi2", 1), ("skip", 1))}})

    def n_models(self) -> int:
        """Number of models: len(Hs) unary ones, then the pairwise one if present."""
        return len(self.Hs) + self.pairwise

    def _layer(self, h: torch.Tensor, k: str) -> torch.Tensor:
        return torch.baddbmm(getattr(self, f"b_{k}"), h, getattr(self, f"W_{k}"))

    def unary(self, x: torch.Tensor) -> torch.Tensor:
        """The M DeepSets models: x (B, N, 2d) -> (M, B)."""
        B, N, _ = x.shape
        M = len(self.Hs)
        act = nn.functional.silu
        h = act(self._layer(x.reshape(1, B * N, -1).expand(M, -1, -1), "psi1"))  # (M, BN, W)
        # psi_m's last layer is affine, so the sum over the N points is taken before it:
        # sum_i (h_i W + b) = (sum_i h_i) W + N b, one product per set instead of one per point
        hsum = h.reshape(M, B, N, -1).sum(2)  # (M, B, W)
        psi = torch.baddbmm(N * self.b_psi2, hsum, self.W_psi2) * self.mask  # padding zero
        phi = psi / math.sqrt(N)  # (M, B, Hmax): the features (1/sqrt N) sum_i psi_m(x_i)
        rho = self._layer(act(self._layer(phi, "rho1")), "rho2") + self._layer(phi, "skip")
        return rho[..., 0]  # (M, B)

    def pair_model(self, x: torch.Tensor) -> torch.Tensor:
        """The pairwise model: x (B, N, 2d) -> (B,)."""
        p, act = self.pair, nn.functional.silu
        B, N, e = x.shape
        # hidden layer on the pair (x_i, x_i'): the x_i half (with the bias) and the x_i' half,
        # broadcast over the N^2 pairs
        first = torch.addmm(p["b_psi1"], x.reshape(B * N, e), p["psi1"][:e]).reshape(B, N, -1)
        h = act(first[:, :, None] + (x @ p["psi1"][e:])[:, None])  # (B, N, N, W)
        # psi's last layer is affine: summed over the pairs before it, as in unary
        phi = (h.sum(dim=(1, 2)) @ p["psi2"] + N * N * p["b_psi2"]) / N  # (B, 1): the feature
        return (phi @ p["skip"] + p["b_skip"])[:, 0]  # (B,): affine read-out

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """x: (B, N, 2d) points as real vectors -> (M + pairwise, B), every model's f(X)."""
        if x.dim() != 3 or x.shape[-1] != 2 * self.d:
            raise ParameterError("x.shape", tuple(x.shape), f"(B, N, 2d) = (B, N, {2 * self.d})")
        outs = [self.unary(x)] if self.Hs else []
        if self.pairwise:
            outs.append(self.pair_model(x)[None])
        return torch.cat(outs, dim=0)


@dataclass(frozen=True)
class SetTrainSettings:
    """Adam on fresh samples, linear warm-up then cosine decay to 0, squared loss.

    ``compile``: the training step's forward pass and loss under ``torch.compile`` (inductor,
    which needs a C++ compiler on a CPU): its elementwise work fused, about 1.5x per step on one
    CPU thread at the ``full`` shape (benchmarks/bench_symmetric_step.py). Its numbers differ
    from the eager step's by rounding, so it is a parameter of the training, not a switch of
    the machine; the evaluations are eager either way.
    """

    steps: int = 2000  # optimizer steps, each on a fresh batch
    batch: int = 256  # point sets per batch
    lr: float = 3e-3  # Adam peak learning rate
    warmup: int = 100  # linear warm-up steps
    eval_every: int = 100  # held-out evaluation period (steps), for the training curves
    eval_size: int = 1024  # held-out point sets of the curves
    test_size: int = 8192  # fresh test point sets of the final error
    chunk: int = 1024  # point sets per forward pass at evaluation
    compile: bool = False  # torch.compile the training step's forward pass and loss

    def __post_init__(self):
        for name in ("steps", "batch", "eval_every", "eval_size", "test_size", "chunk"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ParameterError(name, v, "an integer >= 1")
        if not isinstance(self.warmup, int) or not 0 <= self.warmup < self.steps:
            raise ParameterError("warmup", self.warmup, f"an integer 0 <= warmup < steps = "
                                 f"{self.steps}")
        if not self.lr > 0:
            raise ParameterError("lr", self.lr, "lr > 0")
        if not isinstance(self.compile, bool):
            raise ParameterError("compile", self.compile, "True or False")

    def lr_at(self, step: int) -> float:
        """Learning rate at ``step`` (0-based).

        >>> s = SetTrainSettings(steps=10, lr=1.0, warmup=2)
        >>> [round(s.lr_at(k), 3) for k in (0, 1, 2, 9)]
        [0.5, 1.0, 1.0, 0.0]
        """
        return warmup_cosine(step, self.steps, self.warmup, self.lr)


@torch.no_grad()
def _relative_errors(model: SetModels, target: PowerSumTarget, theta: torch.Tensor,
                     chunk: int) -> np.ndarray:
    """||g - f_m||^2 / ||g||^2 on the point sets theta, per model: (M + pairwise,)."""
    err = torch.zeros(model.n_models(), dtype=torch.float64, device=theta.device)
    norm = torch.zeros((), dtype=torch.float64, device=theta.device)
    for i in range(0, len(theta), chunk):
        t = theta[i:i + chunk]
        y = target(t)
        err += ((model(torus_embed(t)) - y) ** 2).sum(1).double()
        norm += (y.double() ** 2).sum()
    return (err / norm).cpu().numpy()


def train_set_models(model: SetModels, target: PowerSumTarget, settings: SetTrainSettings, *,
                     seed: int = 0, device=None, progress: bool = False,
                     checkpoint=None) -> dict:
    """Train every model of ``model`` on the target, together: one batch of fresh point sets
    per step, the summed squared loss (each model gets its own gradient; Adam acts entrywise,
    so the models train exactly as they would alone).

    Returns ``test_error`` (M + pairwise,): the relative error ||g - f||^2 / ||g||^2 on
    ``settings.test_size`` fresh point sets after training; ``curve`` (evaluations, M +
    pairwise): the same on a held-out set during training, at ``curve_step``; ``wall_s`` (of
    this sitting).

    ``checkpoint``: an object with ``load(device)`` (the state of an earlier sitting, or None)
    and ``tick(step, state)`` (called after every step but the last; it may save ``state()``
    and may stop the training by raising), e.g. the :class:`attnbook.book.checkpoints.
    Checkpoint` a sweep passes. The state (weights, Adam, the batch generator, the curve so
    far) makes a resumed training equal to the uninterrupted one; the test error is always
    computed from the weights.
    """
    if model.d != target.d:
        raise ParameterError("d", model.d, f"the target's d = {target.d}")
    device = torch.device(device or "cpu")
    model = model.to(device)
    dtype = next(model.parameters()).dtype
    N, d = target.N, target.d
    gen = torch.Generator(device=device).manual_seed(seed)
    gen_eval = torch.Generator(device=device).manual_seed(seed + 10_000)
    gen_test = torch.Generator(device=device).manual_seed(seed + 20_000)
    theta_eval = torus_angles(settings.eval_size, N, d, generator=gen_eval, device=device,
                              dtype=dtype)
    opt = torch.optim.Adam(model.parameters(), lr=settings.lr)
    curve, curve_step, done = [], [], 0
    saved = checkpoint.load(device) if checkpoint is not None else None
    if saved is not None:
        done = saved["step"]
        if not 0 < done < settings.steps:  # a training is saved only before its last step
            raise AttnbookError(f"a checkpoint at step {done} of {settings.steps}: one is saved "
                                "only between the first and the last step")
        model.load_state_dict(saved["model"])
        opt.load_state_dict(saved["opt"])
        gen.set_state(saved["rng"].cpu())
        curve, curve_step = list(saved["curve"]), list(saved["curve_step"])

    def state() -> dict:
        return {"step": done, "model": model.state_dict(), "opt": opt.state_dict(),
                "rng": gen.get_state(), "curve": curve, "curve_step": curve_step}

    def loss_of(theta):
        return ((model(torus_embed(theta)) - target(theta)) ** 2).mean(1).sum()

    if settings.compile:
        loss_of = torch.compile(loss_of)
    steps = range(done, settings.steps)
    if progress:
        from ..progress import progress_bar

        steps = progress_bar(steps, desc="Sym(H) and Sym^2(1)", leave=False)
    t0 = time.perf_counter()
    for step in steps:
        for group in opt.param_groups:
            group["lr"] = settings.lr_at(step)
        theta = torus_angles(settings.batch, N, d, generator=gen, device=device, dtype=dtype)
        loss = loss_of(theta)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if (step + 1) % settings.eval_every == 0 or step + 1 == settings.steps:
            curve.append(_relative_errors(model, target, theta_eval, settings.chunk))
            curve_step.append(step + 1)
        done = step + 1
        if checkpoint is not None and done < settings.steps:
            checkpoint.tick(done, state)
    theta_test = torus_angles(settings.test_size, N, d, generator=gen_test, device=device,
                              dtype=dtype)
    test_error = _relative_errors(model, target, theta_test, settings.chunk)
    return {"test_error": test_error, "curve": np.array(curve), "curve_step": curve_step,
            "wall_s": time.perf_counter() - t0}


def unary_pairwise_table(target: PowerSumTarget, Hs, settings: SetTrainSettings, *,
                         width: int = 64, seed: int = 0, device=None, progress: bool = False,
                         checkpoint=None) -> tuple[pd.DataFrame, dict]:
    """Train Sym(H, N, d) for every H in ``Hs`` and Sym^2(1, N, d) together on ``target``.

    Returns a table, one row per model (``model`` "unary" or "pairwise", ``H``, ``test_error``,
    ``zb_bound`` the slide's (1/6)(1 - H/2^min(N/2, d-1)), ``eckart_young`` the tail of the
    target's matrix representation beyond rank H), and the raw result of
    ``train_set_models``.
    """
    net = SetModels(target.d, Hs, width=width, seed=seed)
    res = train_set_models(net, target, settings, seed=seed, device=device, progress=progress,
                           checkpoint=checkpoint)
    tail = eckart_young_tail(target.matrix, Hs)
    rows = [{"model": "unary", "H": H, "test_error": float(res["test_error"][m]),
             "zb_bound": float(zb_lower_bound(H, target.N, target.d)),
             "eckart_young": float(tail[m])} for m, H in enumerate(net.Hs)]
    rows.append({"model": "pairwise", "H": 1, "test_error": float(res["test_error"][-1]),
                 "zb_bound": float("nan"), "eckart_young": float("nan")})
    return pd.DataFrame(rows), res


def unary_pairwise_result(target: PowerSumTarget, Hs, settings: SetTrainSettings, *,
                          width: int = 64, seed: int = 0, device=None, progress: bool = False,
                          checkpoint=None) -> dict:
    """:func:`unary_pairwise_table` as one storable result: per model ``model``, ``H`` and
    ``test_error``, the held-out ``curve`` (evaluations x models) at ``curve_step``, and the
    training time ``train_s`` (of the last sitting). ``checkpoint``: as
    :func:`train_set_models`'s (a sweep with ``checkpoint=True`` passes one per unit)."""
    tab, res = unary_pairwise_table(target, Hs, settings, width=width, seed=seed, device=device,
                                    progress=progress, checkpoint=checkpoint)
    return {"model": tab["model"].tolist(), "H": tab["H"].tolist(),
            "test_error": tab["test_error"].tolist(), "curve": res["curve"],
            "curve_step": res["curve_step"], "train_s": res["wall_s"]}
