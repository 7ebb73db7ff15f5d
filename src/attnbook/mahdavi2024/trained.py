"""Memorization by gradient descent: many small multi-head attention models trained at once.

Covers the synthetic experiments of mahdavi2024 (section 5.2, appendices A, H and I.1,
Figures 2-5). The model is that of section 3 (eqs. 1-4) as the authors trained it: a linear
embedding d -> d with bias plus sinusoidal positions (query at position 0, context at 1..n),
one attention layer whose H heads each have W_Q, W_K in R^{d x d_h} and a value dimension of 1,
scores scaled by 1/sqrt(d), the query attending to the n context tokens only, an output
projection W_O: R^H -> R^d and a read-out W_D: R^d -> R^{d_out} (100 classes, or 1 value).

Speed comes from stacking: a *group* of M configurations that differ in H, d_h, n or T is one
model whose weights carry a leading model axis and are zero-padded to the group's largest H and
d_h. A zero-padded head (W_V = W_O row = 0) or key/query column stays exactly zero under Adam,
so every model trains as if alone; padded context positions are masked out of the softmax.
Mini-batches are drawn per model by a counter-based hash of (model seed, step), so a model sees
the same examples whether it trains alone or in a group.

References: mahdavi2024 section 3 (model), section 5.2 and appendix A (recipe), appendix H
(softmax saturation), appendix I.1 (contexts in general position), Figure 5 (regression).
The read-outs of a trained sweep are in :mod:`~attnbook.mahdavi2024.statistics`, its
figures in :mod:`~attnbook.mahdavi2024.figures`.

Used by: mahdavi2024_fig2_heads_context, mahdavi2024_fig2c_head_size, mahdavi2024_fig3_saturation,
benchmarks/bench_memorization_gd.py.
"""

import hashlib
import json
import math
from collections.abc import Iterable
from dataclasses import asdict, dataclass

import numpy as np
import pandas as pd
import torch
import torch.nn.functional as F
from torch import nn

from ..engines.schedules import warmup_cosine
from ..errors import AttnbookError, ParameterError

__all__ = ["MemorizationConfig", "MemorizationData", "StackedAttention", "make_data", "train_group",
           "lr_factor", "plan_groups", "train_sweep", "attention_maps", "training_flops"]

TASKS = ("classification", "regression")
CONTEXTS = ("shared", "per_example")  # Figure 2 | appendix I.1 (general position)


@dataclass(frozen=True)
class MemorizationConfig:
    """One trained model of a memorization sweep (mahdavi2024 section 5.2 and appendix A)."""

    H: int  # number of heads H
    T: int  # number of examples T
    n: int = 32  # context size n; n < d (Theorem 1)
    d: int = 64  # embedding dimension d (raw inputs are U(0,1)^d)
    d_h: int = 64  # key/query dimension d_h per head
    task: str = "classification"  # classification (100 uniform labels) | regression (U(0,1))
    context: str = "shared"  # shared context (Fig. 2) | per_example (general position, Fig. 4)
    n_classes: int = 100  # label classes for classification
    steps: int = 50_000  # optimization steps (appendix A: max(500 epochs, 50k))
    batch: int = 256  # batch size
    lr: float = 1e-3  # Adam peak learning rate
    eval_every: int = 500  # training-set evaluation period (best checkpoint, early stop)
    seed: int = 0  # data and initialisation seed

    def __post_init__(self):
        for name in ("H", "T", "n", "d", "d_h", "n_classes", "steps", "batch", "eval_every"):
            v = getattr(self, name)
            if not isinstance(v, (int, np.integer)) or v < 1:
                raise ParameterError(name, v, "an integer >= 1")
        if self.n >= self.d:
            raise ParameterError("n", self.n, f"n < d = {self.d} (mahdavi2024, Theorem 1)")
        if self.task not in TASKS:
            raise ParameterError("task", self.task, " or ".join(TASKS), problem="is unknown")
        if self.context not in CONTEXTS:
            raise ParameterError("context", self.context, " or ".join(CONTEXTS),
                                 problem="is unknown")
        if not (isinstance(self.lr, (int, float)) and 0 < self.lr < 1):
            raise ParameterError("lr", self.lr, "a learning rate in (0, 1)")
        if not isinstance(self.seed, (int, np.integer)) or self.seed < 0:
            raise ParameterError("seed", self.seed, "an integer >= 0")

    @property
    def d_out(self) -> int:
        return self.n_classes if self.task == "classification" else 1

    def group_key(self) -> tuple:
        """Configurations with equal keys train together in one stacked program."""
        return (self.d, self.task, self.context, self.d_out, self.steps, self.batch, self.lr,
                self.eval_every)

    def data_seed(self) -> int:
        """Seed of the data set: equal for configurations that differ only in the model."""
        return _hash_seed("data", self.d, self.n, self.T, self.task, self.context,
                          self.n_classes, self.seed)

    def init_seed(self) -> int:
        return _hash_seed("init", *asdict(self).values())


def _hash_seed(*parts) -> int:
    blob = json.dumps([p if not isinstance(p, np.integer) else int(p) for p in parts])
    return int(hashlib.sha256(blob.encode()).hexdigest()[:15], 16)  # < 2^60


# -- data ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class MemorizationData:
    """Raw inputs and labels of one data set (mahdavi2024 section 5.2)."""

    context: torch.Tensor  # (n, d) shared, or (T, n, d) per example
    query: torch.Tensor  # (T, d)
    y: torch.Tensor  # (T,) class index (long) or value in (0, 1) (float)


def make_data(cfg: MemorizationConfig) -> MemorizationData:
    """Draw x_1..x_n, x^(t) iid U(0,1)^d and labels, as in mahdavi2024 section 5.2 / I.1.

    >>> D = make_data(MemorizationConfig(H=1, T=5, n=3, d=4))
    >>> tuple(D.context.shape), tuple(D.query.shape), D.y.dtype
    ((3, 4), (5, 4), torch.int64)
    """
    g = torch.Generator().manual_seed(cfg.data_seed())
    T, n, d = cfg.T, cfg.n, cfg.d
    query = torch.rand(T, d, generator=g)
    ctx_shape = (n, d) if cfg.context == "shared" else (T, n, d)
    context = torch.rand(*ctx_shape, generator=g)
    if cfg.task == "classification":
        y = torch.randint(cfg.n_classes, (T,), generator=g)
    else:
        y = torch.rand(T, generator=g)
    return MemorizationData(context, query, y)


def _sinusoidal(positions: int, d: int) -> torch.Tensor:
    """Fixed sinusoidal position codes pos_0..pos_{positions-1} (Vaswani et al. 2017)."""
    p = torch.arange(positions, dtype=torch.float64)[:, None]
    freq = torch.exp(torch.arange(0, d, 2, dtype=torch.float64) * (-math.log(10000.0) / d))
    pe = torch.zeros(positions, d, dtype=torch.float64)
    pe[:, 0::2] = torch.sin(p * freq)
    pe[:, 1::2] = torch.cos(p * freq)[:, : d // 2]
    return pe.float()


def _init_weights(cfg: MemorizationConfig) -> dict:
    """Unpadded initial weights of one model: torch defaults for the linear layers, Xavier
    uniform per head for W_Q, W_K, W_V and for W_O (as in the authors' script)."""
    g = torch.Generator().manual_seed(cfg.init_seed())
    H, d, d_h, C = cfg.H, cfg.d, cfg.d_h, cfg.d_out

    def u(bound, *shape):
        return (torch.rand(*shape, generator=g) * 2 - 1) * bound

    return {
        "W_E": u(1 / math.sqrt(d), d, d),  # x @ W_E + b_E
        "b_E": u(1 / math.sqrt(d), d),
        "W_Q": u(math.sqrt(6 / (d + d_h)), H, d, d_h),
        "W_K": u(math.sqrt(6 / (d + d_h)), H, d, d_h),
        "W_V": u(math.sqrt(6 / (d + 1)), H, d),  # value dimension 1 per head
        "W_O": u(math.sqrt(6 / (H + d)), H, d),
        "W_D": u(1 / math.sqrt(d), d, C),
        "b_D": u(1 / math.sqrt(d), C),
    }


def _softmax(scores: torch.Tensor) -> torch.Tensor:
    """Softmax over the last axis. On CPU written out as exp(s - max) / sum: the same values as
    ``torch.softmax``, and about 3x faster for the short rows here (n <= 64 keys), where the
    fused CPU kernel is slow; elsewhere the fused kernel.

    >>> s = torch.tensor([[0.0, 1.0, float("-inf")]])
    >>> torch.allclose(_softmax(s), torch.softmax(s, -1))
    True
    """
    if scores.device.type != "cpu":
        return torch.softmax(scores, dim=-1)
    e = (scores - scores.detach().amax(-1, keepdim=True)).exp()
    return e / e.sum(-1, keepdim=True)


# -- the stacked model ---------------------------------------------------------------------
class StackedAttention(nn.Module):
    """M one-layer MHA models (mahdavi2024 eqs. 1-4) with stacked, zero-padded weights.

    >>> cfgs = [MemorizationConfig(H=h, T=8, n=3, d=4, d_h=2) for h in (1, 2)]
    >>> net = StackedAttention(cfgs)
    >>> out, theta = net(torch.rand(2, 5, 4), torch.rand(2, 3, 4), need_weights=True)
    >>> tuple(out.shape), tuple(theta.shape)  # (M, B, d_out), (M, B, H_max, n_max)
    ((2, 5, 100), (2, 5, 2, 3))
    """

    def __init__(self, cfgs: list[MemorizationConfig]):
        super().__init__()
        keys = {c.group_key()[:4] for c in cfgs}
        if len(keys) != 1:
            raise ParameterError("configs", len(cfgs), "one d, task, context and d_out per group")
        self.cfgs = list(cfgs)
        M, d, C = len(cfgs), cfgs[0].d, cfgs[0].d_out
        H, d_h, n = (max(getattr(c, k) for c in cfgs) for k in ("H", "d_h", "n"))
        self.shared = cfgs[0].context == "shared"
        shapes = {"W_E": (d, d), "b_E": (d,), "W_Q": (H, d, d_h), "W_K": (H, d, d_h),
                  "W_V": (H, d), "W_O": (H, d), "W_D": (d, C), "b_D": (C,)}
        for name, shape in shapes.items():
            w = torch.zeros(M, *shape)
            for m, c in enumerate(cfgs):
                w0 = _init_weights(c)[name]
                w[(m, *[slice(0, s) for s in w0.shape])] = w0  # zero padding keeps heads inert
            self.register_parameter(name, nn.Parameter(w))
        self.register_buffer("pos", _sinusoidal(n + 1, d))  # (n+1, d): query at 0
        n_m = torch.tensor([c.n for c in cfgs])
        self.register_buffer("key_mask", torch.arange(n)[None, :] >= n_m[:, None])  # (M, n)
        bias = torch.zeros(M, 1, 1, n).masked_fill(self.key_mask[:, None, None], float("-inf"))
        self.register_buffer("key_bias", bias)  # (M, 1, 1, n)
        self.padded_keys = bool(self.key_mask.any())
        self.register_buffer("eye_blocks", torch.eye(H)[:, None, :])  # (H, 1, H)

    def forward(self, query: torch.Tensor, context: torch.Tensor, need_weights: bool = False):
        """query (M, B, d), context (M, n, d) shared or (M, B, n, d) -> outputs (M, B, d_out)."""
        M, B, d = query.shape
        n = self.key_mask.shape[1]
        H = self.W_Q.shape[1]
        e = query @ self.W_E + self.b_E[:, None] + self.pos[0]  # (M, B, d)
        if self.shared:  # the context is the same for all B examples: work on it once
            E = context @ self.W_E + self.b_E[:, None] + self.pos[1: n + 1]  # (M, n, d)
            k = E[:, None] @ self.W_K  # (M, H, n, d_h)
            G = (self.W_Q / math.sqrt(d)) @ k.transpose(-1, -2)  # (M, H, d, n): W_Q W_K^T e_i
            G = G.permute(0, 2, 1, 3).reshape(M, d, H * n)
            scores = (e @ G).view(M, B, H, n)  # (M, B, H, n)
            v = (E @ self.W_V.transpose(1, 2)).transpose(1, 2)[:, None]  # (M, 1, H, n)
        else:  # E_i = x_i W_E + c_i with c_i = b_E + pos_i: work in the raw inputs x_i, so
            # the (M, B, n, d) embedded contexts are never formed (nor differentiated)
            c = self.b_E[:, None] + self.pos[1: n + 1]  # (M, n, d)
            W = (self.W_Q / math.sqrt(d)) @ self.W_K.transpose(-1, -2)  # (M, H, d, d)
            qk = e @ W.permute(0, 2, 1, 3).reshape(M, d, H * d)  # (M, B, H d): e W_Q W_K^T
            qk = qk.view(M, B * H, d)
            q_raw = (qk @ self.W_E.transpose(1, 2)).view(M, B, H, d)  # qk W_E^T
            scores = q_raw @ context.transpose(-1, -2)  # (M, B, H, n): the x_i part
            scores = scores + (qk @ c.transpose(1, 2)).view(M, B, H, n)  # the c_i part
            W_EV = self.W_E @ self.W_V.transpose(1, 2)  # (M, d, H)
            v = (context.reshape(M, B * n, d) @ W_EV).view(M, B, n, H)
            v = (v + (c @ self.W_V.transpose(1, 2))[:, None]).transpose(-1, -2)  # (M, B, H, n)
        if self.padded_keys:
            scores = scores + self.key_bias  # -inf at padded context positions
        theta = _softmax(scores)  # (M, B, H, n): softmax coefficients theta_h
        if self.shared and H <= 16:  # small H: z_h = theta_h . v_h as one block-diagonal matmul
            V = v[:, 0, :, :, None] * self.eye_blocks  # (M, H, n, H), block h holds v_h
            z = theta.reshape(M, B, H * n) @ V.reshape(M, H * n, H)  # (M, B, H)
        else:
            z = (theta * v).sum(-1)  # (M, B, H): one value per head
        if B * self.W_O.shape[-1] > H * self.W_D.shape[-1]:  # cheaper: fold W_O W_D first
            out = z @ (self.W_O @ self.W_D) + self.b_D[:, None]  # (M, B, d_out)
        else:
            out = (z @ self.W_O) @ self.W_D + self.b_D[:, None]
        return (out, theta) if need_weights else out


# -- batching and training -----------------------------------------------------------------
_MASK63 = (1 << 63) - 1


def _signed(c: int) -> int:
    return c - (1 << 64) if c >= 1 << 63 else c


def _lsr(x: torch.Tensor, k: int) -> torch.Tensor:
    """Logical right shift of int64 (torch's >> is arithmetic)."""
    return (x >> k) & ((1 << (64 - k)) - 1)


def _batch_indices(streams: torch.Tensor, step: int, B: int, T: torch.Tensor) -> torch.Tensor:
    """Example indices (M, B) of one step, uniform in [0, T_m): a splitmix64 hash of
    (stream_m, step, b), so each model's batches do not depend on its group."""
    b = torch.arange(B, device=streams.device, dtype=torch.int64)
    x = streams[:, None] + _signed(0x9E3779B97F4A7C15) * (step * 65536 + b + 1)[None, :]
    x = (x ^ _lsr(x, 30)) * _signed(0xBF58476D1CE4E5B9)
    x = (x ^ _lsr(x, 27)) * _signed(0x94D049BB133111EB)
    x = x ^ _lsr(x, 31)
    return (x & _MASK63) % T[:, None]  # (M, B)


def lr_factor(step: int, steps: int) -> float:
    """The learning-rate factor at ``step``: warm-up from 1% over the first 5% of the steps,
    then cosine decay (:func:`attnbook.engines.schedules.warmup_cosine`).

    >>> lr_factor(0, 1000), lr_factor(50, 1000)
    (0.01, 1.0)
    """
    return warmup_cosine(step, steps, max(1, int(0.05 * steps)), warmup_from=0.01,
                         zero_at_last=False)


class _Stack:
    """The data of a group, padded to the largest T and n and moved to the device."""

    def __init__(self, cfgs, device):
        M, d = len(cfgs), cfgs[0].d
        T, n = max(c.T for c in cfgs), max(c.n for c in cfgs)
        shared = cfgs[0].context == "shared"
        self.query = torch.zeros(M, T, d)
        self.context = torch.zeros(M, n, d) if shared else torch.zeros(M, T, n, d)
        ydtype = torch.long if cfgs[0].task == "classification" else torch.float32
        self.y = torch.zeros(M, T, dtype=ydtype)
        for m, c in enumerate(cfgs):
            D = make_data(c)
            self.query[m, : c.T] = D.query
            self.y[m, : c.T] = D.y
            if shared:
                self.context[m, : c.n] = D.context
            else:
                self.context[m, : c.T, : c.n] = D.context
        self.shared, self.T_m = shared, torch.tensor([c.T for c in cfgs])
        self.query, self.context, self.y = (t.to(device) for t in (self.query, self.context,
                                                                    self.y))
        self.T_m = self.T_m.to(device)
        self.row0 = (torch.arange(M, device=device) * T)[:, None]  # (M, 1): first row per model

    def batch(self, idx):  # idx (M, B)
        """Rows ``idx`` of each model's data; one index_select on the flattened (M T) axis
        (several times faster on CPU than a gather along the T axis)."""
        M, B = idx.shape
        T = self.query.shape[1]
        flat = (idx + self.row0).reshape(-1)  # (M B,) rows of the (M T, ...) views
        q = self.query.view(M * T, -1).index_select(0, flat).view(M, B, -1)
        y = self.y.view(-1).index_select(0, flat).view(M, B)
        if self.shared:
            return q, self.context, y
        n, d = self.context.shape[2:]
        ctx = self.context.view(M * T, n, d).index_select(0, flat).view(M, B, n, d)
        return q, ctx, y


def _loss(out, y, task, fused: bool | None = None):
    """Per-model mean loss (M,): cross-entropy, or squared error for regression.

    On CPU, cross-entropy is written out as logsumexp(out) - out[y] with a detached max shift:
    the same value as ``F.cross_entropy``, and faster there for (M, B, 100) logits; elsewhere
    the fused kernel (as in :func:`_softmax`); ``fused`` overrides the choice.

    >>> out, y = torch.randn(2, 3, 5), torch.randint(5, (2, 3))
    >>> ref = F.cross_entropy(out.reshape(6, 5), y.reshape(6), reduction="none").view(2, 3)
    >>> torch.allclose(_loss(out, y, "classification"), ref.mean(1))
    True
    """
    if fused is None:
        fused = out.device.type != "cpu"
    if task == "classification" and fused:
        M, B, C = out.shape
        return F.cross_entropy(out.reshape(M * B, C), y.reshape(M * B),
                               reduction="none").view(M, B).mean(1)
    if task == "classification":
        s = out - out.detach().amax(-1, keepdim=True)
        return (s.exp().sum(-1).log() - s.gather(-1, y[..., None])[..., 0]).mean(1)
    return ((out[..., 0] - y) ** 2).mean(1)


@torch.no_grad()
def _evaluate(net, data: _Stack, task, chunk=2048):
    """Training accuracy (classification) or MSE (regression) of each model, (M,)."""
    M, T_max = data.y.shape
    dev = data.y.device
    total = torch.zeros(M, device=dev)
    for s in range(0, T_max, chunk):
        idx = torch.arange(s, min(s + chunk, T_max), device=dev)[None].expand(M, -1)
        valid = idx < data.T_m[:, None]
        q, ctx, y = data.batch(torch.minimum(idx, data.T_m[:, None] - 1))
        out = net(q, ctx)
        per = (out.argmax(-1) == y).float() if task == "classification" else (out[..., 0] - y) ** 2
        total += (per * valid).sum(1)
    return total / data.T_m


def train_group(cfgs: list[MemorizationConfig], device="cpu", *, progress=False,
                keep_models=False, trace_every: int = 0, checkpoint=None) -> dict:
    """Train the models of ``cfgs`` together (one stacked program); return their metrics.

    Memorization is the training accuracy (or MSE) of each model's best checkpoint, evaluated
    every ``eval_every`` steps (mahdavi2024 appendix A); training stops early once every model
    of the group is at 100% accuracy. The best weights are kept, and the metric returned is
    their evaluation at the end, so that a training resumed from a checkpoint returns what its
    weights compute, not a number the checkpoint carried. ``trace_every > 0`` also records
    every model's loss at that period (for tests and benchmarks).

    ``checkpoint``: an object with ``load(device)`` (the state of an earlier sitting, or None)
    and ``tick(step, state)`` (called after every step but the last; it may save ``state()``
    and may stop the training by raising), e.g. the :class:`attnbook.book.checkpoints.
    Checkpoint` a sweep passes. The state is everything the loop carries (weights, Adam's
    moments, the schedule, the best metrics and weights so far, the traces); batches are a hash
    of (model, step), so no random stream needs saving, and a resumed training equals the
    uninterrupted one.

    >>> r = train_group([MemorizationConfig(H=h, T=4, n=2, d=4, steps=60) for h in (1, 2)])
    >>> r["metric"].shape, r["steps_run"], r["evals"].shape  # (M,), one evaluation at the end
    ((2,), 60, (1, 2))
    """
    if not cfgs:
        raise ParameterError("configs", 0, "at least one configuration")
    if len({c.group_key() for c in cfgs}) != 1:
        raise ParameterError("configs", len(cfgs),
                             "configurations that share d, task, context, steps and recipe")
    c0 = cfgs[0]
    device = torch.device(device)
    net = StackedAttention(cfgs).to(device)
    data = _Stack(cfgs, device)
    streams = torch.tensor([c.init_seed() for c in cfgs], dtype=torch.int64, device=device)
    opt = torch.optim.Adam(net.parameters(), lr=c0.lr, fused=True)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: lr_factor(s, c0.steps))
    classify = c0.task == "classification"
    best = torch.full((len(cfgs),), -1.0 if classify else float("inf"), device=device)
    best_state = {k: v.detach().clone() for k, v in net.state_dict().items()}
    trace, evals = [], []
    steps_run, loss = 0, None
    saved = checkpoint.load(device) if checkpoint is not None else None
    if saved is not None:
        net.load_state_dict(saved["net"])
        opt.load_state_dict(saved["opt"])
        sched.load_state_dict(saved["sched"])
        best, trace, evals = saved["best"].to(device), saved["trace"], saved["evals"]
        steps_run, loss = saved["step"], saved["loss"].to(device)
        best_state = {k: v.to(device) for k, v in saved["best_state"].items()}
        if not 0 < steps_run < c0.steps:  # a training is saved only before its last step
            raise AttnbookError(f"a checkpoint at step {steps_run} of {c0.steps}: one is saved "
                                "only between the first and the last step")

    def state() -> dict:
        return {"step": steps_run, "net": net.state_dict(), "opt": opt.state_dict(),
                "sched": sched.state_dict(), "best": best, "trace": trace, "evals": evals,
                "loss": loss.detach(), "best_state": best_state}

    bar = range(steps_run, c0.steps)
    if progress:
        from ..progress import progress_bar

        desc = progress if isinstance(progress, str) else f"{len(cfgs)} models"
        bar = progress_bar(bar, desc=desc, mininterval=5)
    for step in bar:
        q, ctx, y = data.batch(_batch_indices(streams, step, c0.batch, data.T_m))
        loss = _loss(net(q, ctx), y, c0.task)  # (M,)
        opt.zero_grad(set_to_none=True)
        loss.sum().backward()  # models share no weights: each gets its own gradient
        opt.step()
        sched.step()
        steps_run = step + 1
        if trace_every and step % trace_every == 0:
            trace.append(loss.detach().cpu())
        if steps_run % c0.eval_every == 0 or steps_run == c0.steps:
            metric = _evaluate(net, data, c0.task)
            better = metric > best if classify else metric < best
            if bool(better.any()):
                for k, v in net.state_dict().items():
                    if k in ("pos", "key_mask", "key_bias", "eye_blocks"):
                        continue
                    mask = better.view(-1, *([1] * (v.dim() - 1)))
                    best_state[k] = torch.where(mask, v.detach(), best_state[k])
            best = torch.where(better, metric, best)
            evals.append(metric.cpu())
            if classify and bool((best >= 1.0).all()):
                break
        if checkpoint is not None and steps_run < c0.steps:
            checkpoint.tick(steps_run, state)
    # the metric comes from the computation, never from numbers a checkpoint carried: each
    # model's best weights evaluated again (the same evaluation, so the same number in a run
    # without a checkpoint); a model that never improved (a NaN loss) keeps its sentinel
    net.load_state_dict(best_state)
    improved = best >= 0 if classify else torch.isfinite(best)
    best = torch.where(improved, _evaluate(net, data, c0.task), best)
    out = {"metric": best.cpu().numpy(), "steps_run": steps_run,
           "final_loss": loss.detach().cpu().numpy(),
           "trace": torch.stack(trace).numpy() if trace else None,
           "evals": torch.stack(evals).numpy()}
    if keep_models:
        out["model"], out["data"] = net, data
    return out


def attention_maps(result: dict, m: int) -> torch.Tensor:
    """Softmax coefficients theta_h^(t) of model ``m`` of a ``train_group(keep_models=True)``
    result, on its whole training set: (T, H, n)."""
    net, data, c = result["model"], result["data"], result["model"].cfgs[m]
    with torch.no_grad():
        q = data.query[m: m + 1, : c.T]
        ctx = data.context[m: m + 1] if data.shared else data.context[m: m + 1, : c.T]
        sub = {k: getattr(net, k)[m: m + 1] for k in ("W_E", "b_E", "W_Q", "W_K", "W_V", "W_O",
                                                      "W_D", "b_D")}
        one = StackedAttention.__new__(StackedAttention)
        nn.Module.__init__(one)
        for k, v in sub.items():
            one.register_parameter(k, nn.Parameter(v))
        one.register_buffer("pos", net.pos)
        one.register_buffer("key_mask", net.key_mask[m: m + 1])
        one.register_buffer("key_bias", net.key_bias[m: m + 1])
        one.register_buffer("eye_blocks", net.eye_blocks)
        one.shared, one.cfgs, one.padded_keys = net.shared, [c], net.padded_keys
        _, theta = one(q, ctx, need_weights=True)
    return theta[0, :, : c.H, : c.n].cpu()  # (T, H, n)


def _step_cost(cfgs: list[MemorizationConfig]) -> float:
    """FLOPs of one training step of ``cfgs`` stacked: each model padded to the largest H, d_h
    and n."""
    pad = {k: max(getattr(c, k) for c in cfgs) for k in ("H", "d_h", "n")}
    return len(cfgs) * training_flops(MemorizationConfig(**{**asdict(cfgs[0]), **pad,
                                                            "steps": 1}))


def plan_groups(configs: list[MemorizationConfig], max_group: int = 64,
                max_waste: float = 1.5) -> list[list[MemorizationConfig]]:
    """Split configurations into stacked groups: one recipe per group (``group_key``), at most
    ``max_group`` models, and padding that costs at most ``max_waste`` times the FLOPs of the
    models trained alone (models are sorted by size and cut greedily). Per-example contexts are
    also split by T when their stacked data would pass 2 GB.

    >>> cfgs = [MemorizationConfig(H=h, T=100, n=8, d=16) for h in (1, 2, 30, 32)]
    >>> [[c.H for c in g] for g in plan_groups(cfgs)]  # H = 1, 2 are not padded to 32 heads
    [[1, 2], [30, 32]]
    """
    if max_group < 1:
        raise ParameterError("max_group", max_group, "an integer >= 1")
    if max_waste < 1:
        raise ParameterError("max_waste", max_waste, "a factor >= 1")
    recipes: dict = {}
    for c in configs:
        recipes.setdefault(c.group_key(), []).append(c)
    for key, g in list(recipes.items()):  # per-example contexts are stacked padded to the
        if key[2] == "per_example" and \
                len(g) * max(c.T for c in g) * max(c.n for c in g) * key[0] * 4 > 2**31:
            del recipes[key]  # largest T and n: past 2 GB, one group per T
            for c in g:
                recipes.setdefault((*key, c.T), []).append(c)
    chunks = []
    for group in recipes.values():
        group = sorted(group, key=lambda c: (c.H * c.d_h, c.n, c.T, c.seed))
        chunk, alone = [], 0.0  # alone: the chunk's FLOPs without padding
        for c in group:
            cost = _step_cost([c])
            if chunk and (len(chunk) >= max_group or
                          _step_cost(chunk + [c]) > max_waste * (alone + cost)):
                chunks.append(chunk)
                chunk, alone = [], 0.0
            chunk.append(c)
            alone += cost
        chunks.append(chunk)
    return chunks


def train_sweep(sweep, configs: Iterable[MemorizationConfig], device="cpu", *,
                max_group: int = 64, progress=True) -> pd.DataFrame:
    """Train every configuration not yet stored in ``sweep`` (a ``run.sweep``), in stacked
    groups (:func:`plan_groups`), store each model's result as its group finishes, and return
    the whole table. Each group checkpoints its training (``sweep.run(..., checkpoint=True)``)
    and a group stopped mid-way resumes from its checkpoint."""
    configs = [asdict(c) for c in configs]

    def groups(todo):
        return [[asdict(c) for c in chunk] for chunk in
                plan_groups([MemorizationConfig(**d) for d in todo], max_group=max_group)]

    def train(chunk, checkpoint=None):
        r = train_group([MemorizationConfig(**d) for d in chunk], device,
                        progress=f"{len(chunk)} models" if progress else False,
                        checkpoint=checkpoint)
        return [{"metric": float(r["metric"][m]), "steps_run": r["steps_run"],
                 "final_loss": float(r["final_loss"][m]), "group_size": len(chunk)}
                for m in range(len(chunk))]

    return sweep.run(train, configs, groups=groups, desc="groups", progress=bool(progress),
                     checkpoint=True)


# -- statistics ----------------------------------------------------------------------------
def training_flops(cfg: MemorizationConfig) -> float:
    """Approximate FLOPs to train one model (forward + backward ~ 3 x forward matmuls).

    >>> training_flops(MemorizationConfig(H=1, T=10, n=2, d=4, d_h=4, steps=1, batch=1)) > 0
    True
    """
    H, d, d_h, n, B, C = cfg.H, cfg.d, cfg.d_h, cfg.n, cfg.batch, cfg.d_out
    per_example = 2 * d * d + 2 * H * d * d_h + 2 * H * n * d + 2 * H * d + 2 * d * C
    if cfg.context == "shared":
        per_step = B * (per_example + 2 * H * n * d_h) + 2 * n * d * (d + 2 * H * d_h)
    else:
        per_example += 2 * H * d * d_h + 2 * n * d * d + 2 * H * n * d
        per_step = B * per_example
    return 3.0 * per_step * cfg.steps


