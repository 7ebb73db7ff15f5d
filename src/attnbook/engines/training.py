"""The training recipe of wies2021 appendix C, and test loss on held-out documents.

AdamW with (beta_1, beta_2) = (0.9, 0.999) and weight decay 0.01, a linear warm-up into the
peak learning rate followed by a cosine decay to zero, dropout 0.1 (in the model), next-token
cross-entropy on random windows of N tokens. The paper: 1M steps of 512 sequences of 128
tokens, 12,000 warm-up steps, peak 1.6e-3; the profiles of the notebooks scale the step count,
batch and warm-up down. On CUDA the forward pass runs under bf16 autocast.

The test loss is the mean next-token cross-entropy (nats) over consecutive non-overlapping
windows of N tokens of the held-out documents (the paper's Table 1 uses stride 1 instead).

:func:`train_lm_stacked` trains the models of several seeds of one configuration at once, as
one :class:`~attnbook.engines.lm.StackedLanguageModel` with one AdamW over the stack; on the CPU
each model gets the batches, dropout masks and (up to float rounding) the numbers of ``train_lm``
with its seed. Off the CPU, both trainers gather the batches on the device (the same windows
as :func:`sample_batch`), keep the running loss there (one sync per evaluation) and step a
fused AdamW.

Used by: levine2020_depth_transition, wies2021_attention_ratio, wies2021_depth_efficiency,
wies2021_rank_bottleneck, wies2021_vocab_rank.
"""

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from ..errors import AttnbookError, ParameterError
from .lm import LMConfig, StackedLanguageModel, check_seeds, count_parameters
from .schedules import warmup_cosine

_STACKED_CPU_ADAMW = "for-loop"  # the stack's AdamW on the CPU: foreach and fused were not
# consistently faster there (benchmarks/bench_lm_stacked.py --adamw times the three)

__all__ = ["TrainConfig", "lr_at", "sample_batch", "sample_batch_on",
           "evaluate", "train_step", "train_lm", "train_lm_stacked"]


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
    starts = _window_starts(len(tokens), N, batch, generator).numpy()
    win = np.stack([tokens[s:s + N + 1] for s in starts]).astype(np.int64)  # (B, N+1)
    win = torch.from_numpy(win)
    return win[:, :-1], win[:, 1:]


def _window_starts(n_tokens: int, N: int, batch: int, generator: torch.Generator):
    if n_tokens <= N + 1:
        raise ParameterError("N", N, f"less than the number of tokens ({n_tokens})")
    return torch.randint(0, n_tokens - N - 1, (batch,), generator=generator)


def sample_batch_on(tokens: torch.Tensor, N: int, batch: int, generator: torch.Generator):
    """:func:`sample_batch` from ``tokens`` already on the device (any integer dtype; the batch
    is int64): the same window starts
    (drawn from the same CPU ``generator``), the windows gathered where ``tokens`` lives, so no
    batch crosses the bus. Returns inputs (B, N) and targets (B, N), equal to sample_batch's.

    >>> t = np.arange(100, dtype=np.uint16)
    >>> a = sample_batch(t, 8, 3, torch.Generator().manual_seed(0))
    >>> b = sample_batch_on(torch.from_numpy(t.astype(np.int32)), 8, 3,
    ...                     torch.Generator().manual_seed(0))
    >>> all(torch.equal(u, v) for u, v in zip(a, b))
    True
    """
    starts = _window_starts(len(tokens), N, batch, generator).to(tokens.device, non_blocking=True)
    win = tokens[starts[:, None] + torch.arange(N + 1, device=tokens.device)].long()  # (B, N+1)
    return win[:, :-1], win[:, 1:]


def _device_tokens(tokens: np.ndarray, device: torch.device) -> torch.Tensor:
    """The token array on the device as int32 (half of int64's memory; batches are int64)."""
    return torch.from_numpy(np.asarray(tokens).astype(np.int32)).to(device)


def _acc_dtype(device: torch.device) -> torch.dtype:
    """float64 running sums: the same additions, in the same order, as a Python float."""
    return torch.float32 if device.type == "mps" else torch.float64


def _autocast(device: torch.device):
    if device.type == "cuda":
        return torch.autocast("cuda", dtype=torch.bfloat16)
    return torch.autocast("cpu", enabled=False)


def _eval_windows(tokens: np.ndarray, N: int, max_tokens: int, device: torch.device):
    """The non-overlapping N-token windows of ``tokens`` (at most ``max_tokens``; 0 means all)
    as inputs and next-token targets, (W, N) each, on ``device``."""
    n = len(tokens) - 1
    if max_tokens:
        n = min(n, max_tokens)
    n_win = n // N
    if n_win < 1:
        raise ParameterError("max_tokens", max_tokens, f"at least N = {N} test tokens")
    arr = np.asarray(tokens[: n_win * N + 1]).astype(np.int64)
    x_all = torch.from_numpy(arr[:-1].reshape(n_win, N)).to(device, non_blocking=True)
    y_all = torch.from_numpy(arr[1:].reshape(n_win, N)).to(device, non_blocking=True)
    return x_all, y_all


@torch.no_grad()
def evaluate(model: nn.Module, tokens: np.ndarray, N: int, *, max_tokens: int = 0,
             batch: int = 32, device: torch.device | str = "cpu") -> float:
    """Mean next-token cross-entropy (nats) over non-overlapping N-token windows of ``tokens``."""
    device = torch.device(device)
    x_all, y_all = _eval_windows(tokens, N, max_tokens, device)
    n_win = len(x_all)
    was_training = model.training
    model.eval()
    total = torch.zeros((), dtype=_acc_dtype(device), device=device)  # one sync, at the end
    for i in range(0, n_win, batch):
        x, y = x_all[i:i + batch], y_all[i:i + batch]
        with _autocast(device):
            logits = model(x)
        total += F.cross_entropy(logits.float().flatten(0, 1), y.flatten(),
                                 reduction="sum").to(total.dtype)
    model.train(was_training)
    return total.item() / (n_win * N)


def _optimizer(model: nn.Module, cfg: TrainConfig, *, model_axis: int = 0,
               impl: str | None = None) -> torch.optim.AdamW:
    """AdamW, decaying the matrices only (not biases and LayerNorm gains). ``model_axis`` = 1
    for stacked weights. ``impl``: "fused", "foreach" or "for-loop"; None keeps torch's default
    on the CPU (the for-loop, which the cached CPU results were computed with) and fuses on
    CUDA (one kernel for all parameters)."""
    decay = [p for p in model.parameters() if p.requires_grad and p.dim() >= 2 + model_axis]
    no_decay = [p for p in model.parameters() if p.requires_grad and p.dim() < 2 + model_axis]
    groups = [{"params": decay, "weight_decay": cfg.weight_decay},
              {"params": no_decay, "weight_decay": 0.0}]  # biases and LayerNorm gains
    if impl is None:
        on = next(model.parameters()).device.type
        impl = "fused" if on == "cuda" else None
    kw = {"fused": {"fused": True}, "foreach": {"foreach": True},
          "for-loop": {"foreach": False}, None: {}}[impl]
    return torch.optim.AdamW(groups, lr=cfg.lr, betas=(cfg.beta1, cfg.beta2), **kw)


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
        from ..progress import progress_bar

        steps = progress_bar(steps, desc="steps", leave=False)
    on_cpu = device.type == "cpu"
    tokens = None if on_cpu else _device_tokens(train_tokens, device)
    model.train()
    t0 = time.perf_counter()
    running = torch.zeros((), dtype=_acc_dtype(device), device=device)  # synced per evaluation
    for step in steps:
        for group in opt.param_groups:
            group["lr"] = lr_at(step, cfg)
        if on_cpu:  # the sampler the cached CPU results were drawn with
            x, y = sample_batch(train_tokens, N, cfg.batch, gen)
        else:  # the same windows, gathered on the device
            x, y = sample_batch_on(tokens, N, cfg.batch, gen)
        running += train_step(model, opt, x, y, device).detach().to(running.dtype)
        last = step == cfg.steps - 1
        if (cfg.eval_every and (step + 1) % cfg.eval_every == 0) or last:
            n_since = (step % cfg.eval_every + 1) if cfg.eval_every else cfg.steps
            curve_step.append(step + 1)
            curve_train.append(running.item() / n_since)
            running.zero_()
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


@torch.no_grad()
def _evaluate_stacked(net: StackedLanguageModel, tokens: np.ndarray, N: int, *,
                      max_tokens: int = 0, batch: int = 32, device=None) -> list[float]:
    """:func:`evaluate` of every model of the stack on the same windows, (M,) losses."""
    device = torch.device(device) if device is not None else torch.device("cpu")
    x_all, y_all = _eval_windows(tokens, N, max_tokens, device)
    n_win = len(x_all)
    M = net.M
    was_training = net.training
    net.eval()
    total = torch.zeros(M, dtype=_acc_dtype(device), device=device)
    for i in range(0, n_win, batch):
        x, y = x_all[i:i + batch], y_all[i:i + batch]
        with _autocast(device):
            logits = net(x.expand(M, *x.shape))  # (M, b, N, V)
        ce = F.cross_entropy(logits.float().flatten(0, 2), y.expand(M, *y.shape).flatten(),
                             reduction="none")
        total += ce.view(M, -1).sum(1).to(total.dtype)
    net.train(was_training)
    return (total / (n_win * N)).tolist()


def train_lm_stacked(cfg: LMConfig | Sequence[LMConfig], train_tokens: np.ndarray,
                     test_tokens: np.ndarray, train_cfg: TrainConfig, seeds: Sequence[int],
                     device: torch.device | str = "cpu", *, progress: bool = False,
                     per_model_dropout: bool | None = None,
                     optimizer: str | None = None, return_model: bool = False,
                     checkpoint=None) -> list[dict]:
    """Train one model per seed of one configuration at once; one ``train_lm`` result per seed.

    The models form one :class:`~attnbook.engines.lm.StackedLanguageModel` (leading model axis M on
    every weight, batched matmuls) trained by one AdamW over the stack with the recipe
    ``train_cfg`` (wies2021 appendix C). Model m is ``train_lm(lambda: LanguageModel(cfg),
    ..., seed=seeds[m])``: the same initial weights, the same batches (window starts from a
    generator seeded ``seed + 1``), the same dropout masks when ``per_model_dropout`` (the
    default on the CPU; off the CPU the stack draws its masks from the device generator, the
    same distribution but not model m's stream), the same schedule, loss and AdamW step;
    its losses and weights equal train_lm's up to float rounding (the batched matmuls sum in
    another order).

    ``cfg`` is one :class:`LMConfig`, or one per seed (all equal). Returns a list of M dicts,
    in the order of ``seeds``, with train_lm's keys and meanings; ``tokens_per_s`` is that
    model's tokens over the stack's training time (the stack processes M times as many) and
    ``peak_mem_bytes`` the stack's peak. ``optimizer`` picks AdamW's implementation ("fused",
    "foreach", "for-loop"; None: fused on CUDA, the for-loop on the CPU, where no variant
    was consistently faster for the stack in ``benchmarks/bench_lm_stacked.py``).
    ``return_model`` returns ``(results, stacked_model)`` (:meth:`~attnbook.engines.lm.
    StackedLanguageModel.unstack` gives model m as a LanguageModel).

    ``checkpoint``: an object with ``load(device)`` (the state of an earlier sitting, or None)
    and ``tick(step, state)`` (called after every step but the last; it may save ``state()``
    and may stop the training by raising), e.g. the :class:`attnbook.book.checkpoints.
    Checkpoint` a sweep passes. The state holds the weights, AdamW's moments, the step, every
    random stream (each model's batch and dropout generators, the global CPU and CUDA ones),
    the running losses and curves, so a resumed training equals the uninterrupted one;
    ``tokens_per_s`` then counts the training time of all sittings.
    """
    seeds = check_seeds(seeds)
    if not isinstance(cfg, LMConfig):
        cfgs = list(cfg) if isinstance(cfg, Sequence) else [cfg]
        if len(cfgs) != len(seeds) or not all(isinstance(c, LMConfig) for c in cfgs):
            raise ParameterError("cfg", type(cfg).__name__, f"an LMConfig, or a list of "
                                 f"{len(seeds)} LMConfigs (one per seed)")
        if any(c != cfgs[0] for c in cfgs):
            differ = [f.name for f in fields(LMConfig)
                      if any(getattr(c, f.name) != getattr(cfgs[0], f.name) for c in cfgs)]
            raise ParameterError("cfg", differ, "one LMConfig shared by all models of a stack "
                                 "(the seeds of one configuration)",
                                 problem="differs between the models")
        cfg = cfgs[0]
    if not isinstance(train_cfg, TrainConfig):
        raise ParameterError("train_cfg", type(train_cfg).__name__, "a TrainConfig")
    for name, t in (("train_tokens", train_tokens), ("test_tokens", test_tokens)):
        if len(t) and int(np.max(t)) >= cfg.V:
            raise ParameterError(name, f"max id {int(np.max(t))}", f"token ids < V = {cfg.V}")
    device = torch.device(device)
    N, M, B = cfg.N, len(seeds), train_cfg.batch
    if per_model_dropout is None:
        per_model_dropout = device.type == "cpu"
    net = StackedLanguageModel(cfg, seeds).to(device)
    gens = [torch.Generator().manual_seed(s + 1) for s in seeds]  # as train_lm's batches
    if optimizer is None:
        optimizer = "fused" if device.type == "cuda" else _STACKED_CPU_ADAMW
    opt = _optimizer(net, train_cfg, model_axis=1, impl=optimizer)
    tokens = _device_tokens(train_tokens, device)
    _window_starts(len(tokens), N, B, torch.Generator())  # checks N against the corpus
    offsets = torch.arange(N + 1, device=device)
    exact_noise = per_model_dropout and cfg.dropout > 0
    if exact_noise:
        net.reset_dropout_streams()
    if device.type == "cuda":
        torch.cuda.reset_peak_memory_stats(device)

    def evaluate_all():
        return _evaluate_stacked(net, test_tokens, N, max_tokens=train_cfg.eval_tokens,
                                 batch=train_cfg.eval_batch, device=device)

    curve_step, curve_train, curve_test = [], [], []
    running = torch.zeros(M, dtype=_acc_dtype(device), device=device)
    done, before_s = 0, 0.0  # steps done and training seconds of earlier sittings
    saved = checkpoint.load(device) if checkpoint is not None else None
    if saved is not None:
        net.load_state_dict(saved["net"])
        opt.load_state_dict(saved["opt"])
        for g, state in zip(gens, saved["batch_rng"], strict=True):
            g.set_state(state.cpu())
        if exact_noise:
            for g, state in zip(net.generators, saved["dropout_rng"], strict=True):
                g.set_state(state.cpu())
        torch.set_rng_state(saved["cpu_rng"].cpu())
        if device.type == "cuda":
            torch.cuda.set_rng_state(saved["cuda_rng"].cpu(), device)
        running = saved["running"].to(device)
        curve_step, curve_train, curve_test = (saved["curve_step"], saved["curve_train"],
                                               saved["curve_test"])
        done, before_s = saved["step"], saved["train_s"]
        evals = done // train_cfg.eval_every if train_cfg.eval_every else 0
        if not 0 < done < train_cfg.steps:  # a training is saved only before its last step
            raise AttnbookError(f"a checkpoint at step {done} of {train_cfg.steps}: one is saved "
                                "only between the first and the last step")
        if not len(curve_step) == len(curve_train) == len(curve_test) == evals:
            raise AttnbookError(f"a checkpoint at step {done} with {len(curve_step)}, "
                                f"{len(curve_train)} and {len(curve_test)} curve points: "
                                f"{evals} evaluations come before that step")

    def state() -> dict:
        return {"step": done, "net": net.state_dict(), "opt": opt.state_dict(),
                "batch_rng": [g.get_state() for g in gens],
                "dropout_rng": [g.get_state() for g in net.generators] if exact_noise else None,
                "cpu_rng": torch.get_rng_state(),
                "cuda_rng": torch.cuda.get_rng_state(device) if device.type == "cuda" else None,
                "running": running, "curve_step": curve_step, "curve_train": curve_train,
                "curve_test": curve_test, "train_s": before_s + time.perf_counter() - t0}

    steps = range(done, train_cfg.steps)
    if progress:
        from ..progress import progress_bar

        steps = progress_bar(steps, desc=f"steps ({M} models)", leave=False)
    net.train()
    t0 = time.perf_counter()
    for step in steps:
        lr = lr_at(step, train_cfg)
        for group in opt.param_groups:
            group["lr"] = lr
        starts = torch.stack([torch.randint(0, len(tokens) - N - 1, (B,), generator=g)
                              for g in gens])  # (M, B): train_lm's window starts per model
        win = tokens[starts.to(device, non_blocking=True)[..., None] + offsets].long()  # (M,B,N+1)
        x, y = win[..., :-1], win[..., 1:]
        noise = net.draw_noise(B, N, device) if exact_noise else None
        with _autocast(device):
            logits = net(x, noise)  # (M, B, N, V)
        losses = F.cross_entropy(logits.float().flatten(0, 2), y.flatten(),
                                 reduction="none").view(M, -1).mean(1)  # (M,): each model's mean
        opt.zero_grad(set_to_none=True)
        losses.sum().backward()  # model m's gradient is that of its own mean loss
        opt.step()
        running += losses.detach().to(running.dtype)
        last = step == train_cfg.steps - 1
        if (train_cfg.eval_every and (step + 1) % train_cfg.eval_every == 0) or last:
            n_since = (step % train_cfg.eval_every + 1) if train_cfg.eval_every \
                else train_cfg.steps
            curve_step.append(step + 1)
            curve_train.append([v / n_since for v in running.tolist()])
            running.zero_()
            if not last:
                curve_test.append(evaluate_all())
        done = step + 1
        if checkpoint is not None and not last:
            checkpoint.tick(done, state)
    train_s = before_s + time.perf_counter() - t0
    test = evaluate_all()
    curve_test.append(test)
    peak = torch.cuda.max_memory_allocated(device) if device.type == "cuda" else None
    tokens_seen = train_cfg.steps * B * N
    params = net.counts
    results = [{"test_loss": test[m], "train_loss": curve_train[-1][m],
             "curve_step": list(curve_step), "curve_train": [c[m] for c in curve_train],
             "curve_test": [c[m] for c in curve_test],
             **{f"params_{k}": v for k, v in params.items()},
             "tokens_seen": tokens_seen, "tokens_per_s": tokens_seen / train_s,
             "peak_mem_bytes": peak} for m in range(M)]
    return (results, net) if return_model else results
