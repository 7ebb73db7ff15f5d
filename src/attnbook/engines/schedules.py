"""The learning-rate schedule of every trainer in the book: linear warm-up, then cosine decay.

Used by: bruna2024_furthest_neighbour, bruna2024_lower_bound, bruna2024_symmetric,
levine2020_depth_transition, mahdavi2024_fig2_heads_context, mahdavi2024_fig2c_head_size,
mahdavi2024_fig3_saturation, wies2021_attention_ratio, wies2021_depth_efficiency,
wies2021_rank_bottleneck, wies2021_vocab_rank.
"""

import math

__all__ = ["warmup_cosine"]


def warmup_cosine(step: int, steps: int, warmup: int, lr: float = 1.0, *,
                  warmup_from: float | None = None, zero_at_last: bool = True) -> float:
    """Learning rate at ``step`` (0-based) of ``steps``: linear warm-up over ``warmup`` steps,
    then cosine decay; the one schedule of every trainer in the book.

    The warm-up reaches ``lr`` at step ``warmup - 1`` (rate ``lr (step + 1) / warmup``), or,
    with ``warmup_from = f``, rises from ``f lr`` at step 0 to ``lr`` at step ``warmup``. The
    cosine then falls to zero at the last step (``zero_at_last``), or at step ``steps``, one
    past the last, so the last step still has a small rate.

    >>> [round(warmup_cosine(s, 10, 2, 1.0), 3) for s in (0, 1, 2, 6, 9)]
    [0.5, 1.0, 1.0, 0.389, 0.0]
    >>> [round(warmup_cosine(s, 10, 2, warmup_from=0.01, zero_at_last=False), 3)
    ...  for s in (0, 1, 2, 6, 9)]
    [0.01, 0.505, 1.0, 0.5, 0.038]
    """
    if step < warmup:
        if warmup_from is None:
            return lr * (step + 1) / warmup
        return lr * (warmup_from + (1 - warmup_from) * step / warmup)
    if zero_at_last:
        span = max(steps - 1 - warmup, 1)
        return 0.5 * lr * (1 + math.cos(math.pi * min(step - warmup, span) / span))
    return 0.5 * lr * (1 + math.cos(math.pi * (step - warmup) / max(1, steps - warmup)))
