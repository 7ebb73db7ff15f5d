"""Upper bounds on rank(Z) of mahdavi2024, probed with many weight draws at once.

Propositions 2 (shared context) and 5 (constant-sum tokens) bound the rank of the attention
features Z whatever the weights; here random draws and adversarial searches, batched, look for
the largest rank they reach.

Used by: mahdavi2024_theory, benchmarks/bench_memorization_ranks.py.
"""

import math

import numpy as np
import pandas as pd
import torch

from ..engines.linalg import numerical_rank
from ..errors import ParameterError
from .attention import check_data

__all__ = ["attention_features", "random_feature_ranks", "adversarial_rank_search"]

F64 = torch.float64


def attention_features(E: torch.Tensor, e: torch.Tensor, W_K: torch.Tensor,
                       W_Q: torch.Tensor) -> torch.Tensor:
    """Z of eq. (7) for a batch of weight draws: W_K, W_Q (B, H, d, d_h) -> Z (B, T, H d).

    >>> from attnbook.mahdavi2024.attention import make_dataset
    >>> E, e = make_dataset(3, 2, 3, shared=True)
    >>> attention_features(E, e, torch.zeros(5, 2, 3, 1), torch.zeros(5, 2, 3, 1)).shape
    torch.Size([5, 3, 6])
    """
    T, n, d = check_data(E, e)
    B, H = W_K.shape[:2]
    q = torch.einsum("bhak,ta->bthk", W_Q.to(E.dtype), e)  # (B, T, H, d_h)
    k = torch.einsum("tia,bhak->bthik", E, W_K.to(E.dtype))  # (B, T, H, n, d_h)
    theta = torch.softmax(torch.einsum("bthik,bthk->bthi", k, q), dim=-1)  # (B, T, H, n)
    return torch.einsum("bthi,tia->btha", theta, E).reshape(B, T, H * d)  # (B, T, H d)


def _random_kq(B, H, d, d_h, scale, g):
    W_K = torch.randn(B, H, d, d_h, generator=g, dtype=F64) * scale / math.sqrt(d)
    W_Q = torch.randn(B, H, d, d_h, generator=g, dtype=F64) * scale / math.sqrt(d)
    return W_K, W_Q


def random_feature_ranks(E: torch.Tensor, e: torch.Tensor, H: int, d_h: int, *, draws: int = 100,
                         scale: float = 1.0, seed: int = 0) -> np.ndarray:
    """rank(Z) for ``draws`` random Gaussian key/query weights (entries N(0, scale^2/d)).

    >>> from attnbook.mahdavi2024.attention import make_dataset
    >>> E, e = make_dataset(12, 3, 5, shared=True)
    >>> sorted(set(random_feature_ranks(E, e, H=2, d_h=5, draws=20).tolist()))   # H(n-1)+1 = 5
    [5]
    """
    T, n, d = check_data(E, e)
    g = torch.Generator().manual_seed(seed)
    W_K, W_Q = _random_kq(draws, H, d, d_h, scale, g)
    return numerical_rank(attention_features(E, e, W_K, W_Q)).numpy()


def adversarial_rank_search(E: torch.Tensor, e: torch.Tensor, H: int, d_h: int, k: int, *,
                            restarts: int = 8, steps: int = 300, lr: float = 0.05,
                            seed: int = 0) -> pd.DataFrame:
    """Adam on key/query weights to push up sigma_k(Z)/sigma_1(Z), the k-th singular value.

    With k = bound + 1, an upper bound on rank(Z) holds only if this ratio stays at rounding
    level however hard the optimizer pushes. Returns, per restart, the ratios
    sigma_{k-1}/sigma_1 and sigma_k/sigma_1 at the end and the rank of Z.

    >>> from attnbook.mahdavi2024.attention import make_dataset
    >>> E, e = make_dataset(8, 2, 4, shared=True)
    >>> df = adversarial_rank_search(E, e, H=2, d_h=4, k=4, restarts=2, steps=20)
    >>> bool((df["rank"] <= 3).all()), bool((df["ratio_k"] < 1e-12).all())
    (True, True)
    """
    T, n, d = check_data(E, e)
    if not 2 <= k <= min(T, H * d):
        raise ParameterError("k", k, f"2 <= k <= min(T, H d) = {min(T, H * d)}")
    g = torch.Generator().manual_seed(seed)
    W_K, W_Q = (w.requires_grad_() for w in _random_kq(restarts, H, d, d_h, 1.0, g))
    opt = torch.optim.Adam([W_K, W_Q], lr=lr)
    for _ in range(steps):
        opt.zero_grad()
        s = torch.linalg.svdvals(attention_features(E, e, W_K, W_Q))  # (R, min(T, H d))
        loss = -(torch.log(s[:, k - 1] + 1e-300) - torch.log(s[:, 0])).sum()
        loss.backward()
        opt.step()
    with torch.no_grad():
        Z = attention_features(E, e, W_K, W_Q)
        s = torch.linalg.svdvals(Z)
        return pd.DataFrame({"ratio_k_minus_1": (s[:, k - 2] / s[:, 0]).numpy(),
                             "ratio_k": (s[:, k - 1] / s[:, 0]).numpy(),
                             "rank": numerical_rank(Z).numpy()})
