"""The training recipe of wies2021 appendix C, and test loss on held-out documents.

AdamW with (beta_1, beta_2) = (0.9, 0.999) and weight decay 0.01, a linear warm-up into the
peak learning rate followed by a cosine decay to zero, dropout 0.1 (in the model), next-token
cross-entropy on random windows of N tokens. The paper: 1M steps of 512 sequences of 128
tokens, 12,000 warm-up steps, peak 1.6e-3; the profiles of the notebooks scale the step count,
batch and warm-up down. On CUDA the forward pass runs under bf16 autocast.

The test loss is the mean next-token cross-entropy (nats) over consecutive non-overlapping
windows of N tokens of the held-out documents (the paper's Table 1 uses stride 1 instead).

Used by: wies2021_rank_bottleneck.
"""

import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from .errors import ParameterError
from .lm import count_parameters
from .schedules import warmup_cosine

__all__ = ["TrainConfig", "lr_at", "sample_batch", "evaluate", "train_step",
           "train_lm"]


@dataclass(frozen=True)
class TrainConfig:
    """One training run's recipe (wies2021 appendix C; sizes scaled by the profile)."""

    steps: int  # optimizer steps (paper: 1M)
    batch: int  # sequences per step (paper: 512)
    lr: float = 1.6e-3  # peak learning rate (paper: 1.6e-3)
    warmup: int = 0  # linear warm-up steps (paper: 12,000 of 1M = 1.2%)
    weight_decay: float = 0.01
    beta1: float = 0.9
    beta2: float = 0.999
    eval_tokens: int = 0  # test tokens evaluated at the end; 0 means all
    eval_every: int = 0  # also evaluate every this many steps (0: only at the end)
    eval_batch: int = 32

    def __post_init__(self):
        for name in ("steps", "batch", "eval_batch"):
            v = getattr(self, name)
            if not isinstance(v, int) or v < 1:
                raise ParameterError(name, v, "an integer >= 1")
        if not isinstance(self.warmup, int) or not 0 <= self.warmup <= self.steps:
            raise ParameterError("warmup", self.warmup, f"an integer 0 <= warmup <= steps = "
                                 f"{self.steps}")
        if not self.lr > 0:
            raise ParameterError("lr", self.lr, "lr > 0")


def lr_at(step: int, cfg: TrainConfig) -> float:
    """Learning rate at ``step`` (0-based): linear warm-up to ``lr``, then cosine to zero.

    >>> c = TrainConfig(steps=10, batch=1, lr=1.0, warmup=2)
    >>> [round(lr_at(s, c), 3) for s in (0, 1, 2, 6, 9)]
    [0.5, 1.0, 1.0, 0.389, 0.0]
    """
    return warmup_cosine(step, cfg.steps, cfg.warmup, cfg.lr)


def sample_batch(tokens: np.ndarray, N: int, batch: int, generator: torch.Generator):
    """``batch`` random windows of N+1 tokens: inputs (B, N) and next-token targets (B, N)."""
    if len(tokens) <= N + 1:
        raise ParameterError("N", N, f"less than the number of tokens ({len(tokens)})")
    starts = torch.randint(0, len(tokens) - N - 1, (batch,), generator=generator).numpy()
    win = np.stack([tokens[s:s + N + 1] for s in starts]).astype(np.int64)  # (B, N+1)
    win = torch.from_numpy(win)
    return win[:, :-1], win[:, 1:]


def _autocast(device: torch.device):
    if device.type == "cuda":
        return torch.autocast("cuda", dtype=torch.bfloat16)
    return torch.autocast("cpu", enabled=False)


@torch.no_grad()
def evaluate(model: nn.Module, tokens: np.ndarray, N: int, *, max_tokens: int = 0,
             batch: int = 32, device: torch.device | str = "cpu") -> float:
    """Mean next-token cross-entropy (nats) over non-overlapping N-token windows of ``tokens``."""
    device = torch.device(device)
    n = len(tokens) - 1
    if max_tokens:
        n = min(n, max_tokens)
    n_win = n // N
    if n_win < 1:
        raise ParameterError("max_tokens", max_tokens, f"at least N = {N} test tokens")
    arr = np.asarray(tokens[: n_win * N + 1]).astype(np.int64)
    x_all = torch.from_numpy(arr[:-1].reshape(n_win, N))  # (W, N)
    y_all = torch.from_numpy(arr[1:].reshape(n_win, N))
    was_training = model.training
    model.eval()
    total = 0.0
    for i in range(0, n_win, batch):
        x, y = x_all[i:i + batch].to(device), y_all[i:i + batch].to(device)
        with _autocast(device):
            logits = model(x)
        total += F.cross_entropy(logits.float().flatten(0, 1), y.flatten(),
                                 reduction="sum").item()
    model.train(was_training)
    return total / (n_win * N)


def _optimizer(model: nn.Module, cfg: TrainConfig) -> torch.optim.AdamW:
    decay = [p for p in model.parameters() if p.requires_grad and p.dim() >= 2]
    no_decay = [p for p in model.parameters() if p.requires_grad and p.dim() < 2]
    groups = [{"params": decay, "weight_decay": cfg.weight_decay},
              {"params": no_decay, "weight_decay": 0.0}]  # biases and LayerNorm gains
    return torch.optim.AdamW(groups, lr=cfg.lr, betas=(cfg.beta1, cfg.beta2))


def train_step(model: nn.Module, opt: torch.optim.Optimizer, x: torch.Tensor, y: torch.Tensor,
               device: torch.device) -> torch.Tensor:
    """One optimizer step on next-token cross-entropy (bf16 autocast on GPU); returns the loss."""
    with _autocast(device):
        logits = model(x)
    loss = F.cross_entropy(logits.float().flatten(0, 1), y.flatten())
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
    return loss


def train_lm(make_model: Callable[[], nn.Module], train_tokens: np.ndarray,
             test_tokens: np.ndarray, N: int, cfg: TrainConfig, *, seed: int = 0,
             device: torch.device | str = "cpu", progress: bool = False) -> dict:
    """Build a model with torch seeded by ``seed``, train it with the recipe, return metrics.

    Returns the final test loss, loss curves (``curve_step``, ``curve_train``, ``curve_test``),
    parameter counts, tokens seen, throughput and peak memory. Same seed and device, same
    numbers: model init, dropout and batches all derive from ``seed``.
    """
    device = torch.device(device)
    torch.manual_seed(seed)
    model = make_model().to(device)
    gen = torch.Generator().manual_seed(seed + 1)  # batches, independent of dropout's stream
    opt = _optimizer(model, cfg)
    params = count_parameters(model)
    if device.type == "cuda":
        torch.cuda.reset_peak_memory_stats(device)
    curve_step, curve_train, curve_test = [], [], []
    steps = range(cfg.steps)
    if progress:
        from .progress import progress_bar

        steps = progress_bar(steps, desc="steps", leave=False)
    model.train()
    t0 = time.perf_counter()
    running = 0.0
    for step in steps:
        for group in opt.param_groups:
            group["lr"] = lr_at(step, cfg)
        x, y = sample_batch(train_tokens, N, cfg.batch, gen)
        x, y = x.to(device), y.to(device)
        running += train_step(model, opt, x, y, device).item()
        last = step == cfg.steps - 1
        if (cfg.eval_every and (step + 1) % cfg.eval_every == 0) or last:
            n_since = (step % cfg.eval_every + 1) if cfg.eval_every else cfg.steps
            curve_step.append(step + 1)
            curve_train.append(running / n_since)
            running = 0.0
            if not last:
                curve_test.append(evaluate(model, test_tokens, N, max_tokens=cfg.eval_tokens,
                                           batch=cfg.eval_batch, device=device))
    train_s = time.perf_counter() - t0
    test_loss = evaluate(model, test_tokens, N, max_tokens=cfg.eval_tokens,
                         batch=cfg.eval_batch, device=device)
    curve_test.append(test_loss)
    peak = torch.cuda.max_memory_allocated(device) if device.type == "cuda" else None
    return {"test_loss": test_loss, "train_loss": curve_train[-1],
            "curve_step": curve_step, "curve_train": curve_train, "curve_test": curve_test,
            **{f"params_{k}": v for k, v in params.items()},
            "tokens_seen": cfg.steps * cfg.batch * N,
            "tokens_per_s": cfg.steps * cfg.batch * N / train_s, "peak_mem_bytes": peak}
