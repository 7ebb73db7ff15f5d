"""Speed of rank(Z) over many weight draws: one batched program against a loop over draws.

Prints the ratio loop / batched within one run (mahdavi2024, Proposition 2 checks), so the
number compares across machines and loads. Run: python benchmarks/bench_memorization_ranks.py
"""

import time

import torch

from attnbook.engines.linalg import numerical_rank
from attnbook.mahdavi2024.attention import make_dataset
from attnbook.mahdavi2024.feature_ranks import attention_features, random_feature_ranks


def main(H: int = 4, n: int = 4, d: int = 8, draws: int = 200, seed: int = 0) -> float:
    E, e = make_dataset(H * (n - 1) + 5, n, d, shared=True, seed=seed)
    t0 = time.perf_counter()
    batched = random_feature_ranks(E, e, H, d, draws=draws, seed=seed)
    t_batched = time.perf_counter() - t0
    g = torch.Generator().manual_seed(seed)
    t0 = time.perf_counter()
    looped = []
    for _ in range(draws):
        W_K = torch.randn(1, H, d, d, generator=g, dtype=torch.float64) / d**0.5
        W_Q = torch.randn(1, H, d, d, generator=g, dtype=torch.float64) / d**0.5
        looped.append(int(numerical_rank(attention_features(E, e, W_K, W_Q))[0]))
    t_loop = time.perf_counter() - t0
    assert max(looped) == int(batched.max())  # same bound reached either way
    ratio = t_loop / t_batched
    print(f"{draws} draws, H={H}, n={n}, d={d}: loop / batched = {ratio:.1f}x")
    return ratio


if __name__ == "__main__":
    main()
