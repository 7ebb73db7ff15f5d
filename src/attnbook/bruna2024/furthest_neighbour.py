"""The furthest-neighbour map on the sphere and attention layers of given per-head rank.

Follows the rank/heads part of the Bruna talk (bruna2024talk; Amsel, Yehudai & Bruna 2024):

* data: N points x_1..x_N uniform on S^{d-1}; target f_j(X) = argmin_i x_i . x_j, the point
  furthest from x_j (slide "Metric Functions on the Sphere");
* ``full_rank_head``: the one-head construction X softmax(X^T (-c I) x_j) of slide "Full Rank
  Efficient Approximation", exact as c -> infinity;
* ``RankedAttention``: many multi-head self-attention layers without MLP,
  F(X) = sum_h softmax(X K_h Q_h^T X^T / sqrt(r)) X V_h with K_h, Q_h in R^{d x r}, V_h in
  R^{d x d} (slide "Transformers"), each model with its own (r, H), evaluated as one tensor
  program: model m owns P_m = r_m H_m rank-one "slots" that a fixed 0/1 matrix groups into
  its heads;
* ``EncoderLine``: off-the-shelf ``torch.nn.TransformerEncoderLayer`` models (per-head rank
  r = d / H), trained in lockstep on the same batches;
* ``train_line``: fresh data every step, loss MSE x d (zero output scores 1), AdamW
  (0.9, 0.95), linear warm-up then cosine decay, metric = minimum held-out loss over training
  (the setting of the authors' public code, github.com/NoahAmsel/attention-formers);
* majority vote of random rank-one heads for N = 2 candidates and a query (slide "Majority
  Voting"): ``rank1_votes``, ``majority_accuracy``, ``hoeffding_accuracy_bound`` and the
  two-layer attention construction with index and scratchpad coordinates,
  ``two_layer_majority``; the exact majority error at any number of heads (no simulation),
  ``majority_error_exact``.

Used by: bruna2024_furthest_neighbour, bruna2024_lower_bound.
"""

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch
from scipy import stats
from torch import nn

from ..engines.schedules import warmup_cosine
from ..errors import AttnbookError, ParameterError

__all__ = ["sphere_points", "furthest_neighbour", "full_rank_head", "line_configs",
           "RankedAttention", "EncoderLine", "TrainSettings", "train_line", "train_line_config",
           "rank1_votes", "head_accuracy", "majority_accuracy", "hoeffding_accuracy_bound",
           "two_layer_majority", "single_head_advantage", "majority_vote_table",
           "majority_error_exact", "majority_error_table", "full_rank_table"]


def sphere_points(B: int, N: int, d: int, *, generator=None, device=None,
                  dtype=torch.float32) -> torch.Tensor:
    """B sets of N points uniform on S^{d-1}: a tensor of shape (B, N, d).

    >>> X = sphere_points(2, 3, 4, generator=torch.Generator().manual_seed(0))
    >>> X.shape, bool(torch.allclose(X.norm(dim=-1), torch.ones(2, 3)))
    (torch.Size([2, 3, 4]), True)
    """
    if not isinstance(N, int) or N < 2:
        raise ParameterError("N", N, "an integer N >= 2 (a furthest point needs another point)")
    if not isinstance(d, int) or d < 2:
        raise ParameterError("d", d, "an integer d >= 2")
    g = torch.randn(B, N, d, generator=generator, device=device, dtype=dtype)  # (B, N, d)
    return g / g.norm(dim=-1, keepdim=True)


def furthest_neighbour(X: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """The target f_j(X) = x_{i*(j)}, i*(j) = argmin_i x_i . x_j, and the indices i*(j).

    >>> X = torch.tensor([[[1., 0.], [0.6, 0.8], [-1., 0.]]])
    >>> furthest_neighbour(X)[1]  # x_1 . x_3 = -1, x_2 . x_3 = -0.6
    tensor([[2, 2, 0]])
    """
    B, N, d = X.shape
    if N < 2:
        raise ParameterError("N", N, "an integer N >= 2 (a furthest point needs another point)")
    gram = X @ X.transpose(-1, -2)  # (B, N, N): x_j . x_i
    idx = gram.argmin(dim=-1)  # (B, N)
    return torch.gather(X, 1, idx[..., None].expand(B, N, d)), idx


def full_rank_head(X: torch.Tensor, c: float) -> tuple[torch.Tensor, torch.Tensor]:
    """One full-rank head with K Q^T = -c I: out_j = sum_i softmax_i(-c x_i . x_j) x_i.

    Returns the outputs (B, N, d) and the attention weights (B, N, N) (query j, key i).

    >>> X = torch.tensor([[[1., 0.], [0.6, 0.8], [-1., 0.]]], dtype=torch.float64)
    >>> out, A = full_rank_head(X, 1e3)
    >>> A.argmax(-1)  # each point attends to its furthest point
    tensor([[2, 2, 0]])
    """
    if not c > 0:
        raise ParameterError("c", c, "a scale c > 0 (K Q^T = -c I)")
    A = torch.softmax(-c * (X @ X.transpose(-1, -2)), dim=-1)  # (B, N, N)
    return A @ X, A


def line_configs(d: int, rank_heads: int) -> list[tuple[int, int]]:
    """The (r, H) pairs with r H = ``rank_heads``, r a power of two dividing it, 1 <= r <= d.

    >>> line_configs(16, 16)
    [(1, 16), (2, 8), (4, 4), (8, 2), (16, 1)]
    """
    if not isinstance(rank_heads, int) or rank_heads < 1:
        raise ParameterError("rank_heads", rank_heads, "an integer r*H >= 1")
    out, r = [], 1
    while r <= min(d, rank_heads):
        if rank_heads % r == 0:
            out.append((r, rank_heads // r))
        r *= 2
    return out


class RankedAttention(nn.Module):
    """M multi-head self-attention layers (no MLP), model m with H_m heads of rank r_m.

    Model m: F_m(X) = sum_{h <= H_m} softmax(X K_h Q_h^T X^T / sqrt(r_m)) X V_h. The heads of
    all models form one flat list (no padding): model m owns P_m = r_m H_m rank-one query/key
    slots, a fixed 0/1 matrix sums slots into heads, another sums heads into models.

    >>> net = RankedAttention(d=4, ranks=[1, 4], heads=[4, 1])
    >>> net(torch.randn(3, 5, 4)).shape  # (M, B, N, d)
    torch.Size([2, 3, 5, 4])
    """

    def __init__(self, d: int, ranks, heads, *, generator=None, dtype=torch.float32):
        super().__init__()
        ranks, heads = [int(r) for r in ranks], [int(h) for h in heads]
        if len(ranks) != len(heads) or not ranks:
            raise AttnbookError(f"ranks {ranks} and heads {heads} must be non-empty, equal length")
        for r, H in zip(ranks, heads, strict=True):
            if not 1 <= r <= d:
                raise ParameterError("r", r, f"a per-head rank 1 <= r <= d = {d}")
            if H < 1:
                raise ParameterError("H", H, "a number of heads H >= 1")
        self.d, self.ranks, self.heads = d, ranks, heads
        M, T = len(ranks), sum(heads)  # models, heads of all models together
        S = sum(r * H for r, H in zip(ranks, heads, strict=True))  # slots of all models
        self.head_offsets = [sum(heads[:m]) for m in range(M)]  # model m: heads from here
        self.slot_offsets = [sum(r * H for r, H in zip(ranks[:m], heads[:m], strict=True))
                             for m in range(M)]
        slot_head = torch.zeros(S, T, dtype=dtype)  # slot s belongs to head h
        head_model = torch.zeros(T, M, dtype=dtype)  # head h belongs to model m
        scale, v_std = torch.zeros(T, dtype=dtype), torch.zeros(T, dtype=dtype)
        for m, (r, H) in enumerate(zip(ranks, heads, strict=True)):
            for h in range(H):
                t = self.head_offsets[m] + h
                head_model[t, m] = 1
                scale[t], v_std[t] = 1 / math.sqrt(r), 1 / (math.sqrt(d) * H)  # output O(1)
                s0 = self.slot_offsets[m] + h * r
                slot_head[s0:s0 + r, t] = 1
        self.register_buffer("slot_head", slot_head)  # (S, T)
        self.register_buffer("head_model", head_model)  # (T, M)
        self.register_buffer("scale", scale)  # (T,): 1/sqrt(r) of each head

        def init(*shape, std):
            return nn.Parameter(torch.randn(*shape, generator=generator, dtype=dtype) * std)

        self.W_Q = init(S, d, std=1 / math.sqrt(d))  # (S, d): one row per query slot
        self.W_K = init(S, d, std=1 / math.sqrt(d))  # (S, d): one row per key slot
        self.W_V = nn.Parameter(torch.randn(T, d, d, generator=generator, dtype=dtype)
                                * v_std[:, None, None])  # (T, d, d): V_h of every head

    def attention(self, X: torch.Tensor) -> torch.Tensor:
        """Attention weights of every head of every model: (B, T, N, N), query i, key j."""
        q, k = X @ self.W_Q.T, X @ self.W_K.T  # (B, N, S) each
        qk = q[:, :, None, :] * k[:, None, :, :]  # (B, N, N, S): slot products
        scores = (qk @ self.slot_head) * self.scale  # (B, N, N, T): sum of the slots of a head
        return torch.softmax(scores, dim=2).permute(0, 3, 1, 2)  # (B, T, N, N)

    def forward(self, X: torch.Tensor) -> torch.Tensor:
        """X: (B, N, d) -> (M, B, N, d), every model on the same input."""
        if X.shape[-1] != self.d:
            raise ParameterError("X.shape[-1]", X.shape[-1], f"d = {self.d}")
        A = self.attention(X)  # (B, T, N, N)
        AX = A @ X[:, None]  # (B, T, N, d): attention-weighted points of each head
        out = torch.einsum("btid,tde->btie", AX, self.W_V)  # (B, T, N, d): head outputs
        return torch.einsum("btie,tm->mbie", out, self.head_model)  # (M, B, N, d)


class EncoderLine(nn.Module):
    """Off-the-shelf ``nn.TransformerEncoderLayer`` models, model m with H_m heads of rank
    d / H_m (post-LN, ReLU MLP of width 4d, no dropout), on the same input.

    Layers with different head counts cannot share one tensor program; they are trained in
    lockstep on the same batches with one optimizer.

    >>> EncoderLine(d=8, heads=[1, 8])(torch.randn(3, 5, 8)).shape  # (M, B, N, d)
    torch.Size([2, 3, 5, 8])
    """

    def __init__(self, d: int, heads, *, dtype=torch.float32):
        super().__init__()
        for H in heads:
            if H < 1 or d % H:
                raise ParameterError("H", H, f"a number of heads dividing d = {d}")
        self.d, self.heads, self.ranks = d, list(heads), [d // H for H in heads]
        self.layers = nn.ModuleList(
            nn.TransformerEncoderLayer(d, H, dim_feedforward=4 * d, dropout=0.0,
                                       batch_first=True, dtype=dtype) for H in heads)

    def forward(self, X: torch.Tensor) -> torch.Tensor:
        if X.shape[-1] != self.d:
            raise ParameterError("X.shape[-1]", X.shape[-1], f"d = {self.d}")
        return torch.stack([layer(X) for layer in self.layers])  # (M, B, N, d)


@dataclass(frozen=True)
class TrainSettings:
    """Training of one line (setting of the authors' code, scaled by ``steps`` and ``batch``)."""

    steps: int = 3000  # optimizer steps, each on a fresh batch
    batch: int = 256  # point sets per batch
    lr: float = 0.01  # AdamW peak learning rate (1 layer)
    warmup: int = 100  # linear warm-up steps, then cosine decay to 0
    weight_decay: float = 0.0
    eval_every: int = 100  # held-out evaluation period (steps)
    eval_size: int = 2048  # held-out point sets

    def __post_init__(self):
        for name in ("steps", "batch", "eval_every", "eval_size"):
            v = getattr(self, name)
            if not isinstance(v, int) or v < 1:
                raise ParameterError(name, v, "an integer >= 1")
        if not 0 <= self.warmup < self.steps:
            raise ParameterError("warmup", self.warmup, f"0 <= warmup < steps = {self.steps}")


def _mse(out: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """Per-model loss MSE x d: mean over sets and points of ||out_j - f_j||^2, shape (M,)."""
    return ((out - target) ** 2).sum(-1).mean(dim=(-1, -2))


def train_line(model: nn.Module, N: int, settings: TrainSettings, *, seed: int = 0,
               device=None, progress: bool = False, checkpoint=None) -> dict:
    """Train the M models of ``model`` together on the furthest-neighbour map.

    Every step draws a fresh batch; the summed loss gives each model its own gradient. Returns
    ``min_loss`` (M,), the minimum held-out MSE x d over the evaluations, and ``curve``
    (evaluations, M). Each model's weights at its lowest evaluation are kept, and ``min_loss``
    is their evaluation at the end (the same number, the models being independent), so that a
    training resumed from a checkpoint returns what its weights compute, not a number the
    checkpoint carried; NaN for a model with a NaN evaluation.

    ``checkpoint``: an object with ``load(device)`` (the state of an earlier sitting, or None)
    and ``tick(step, state)`` (called after every step but the last; it may save ``state()``
    and may stop the training by raising), e.g. the :class:`attnbook.book.checkpoints.
    Checkpoint` a sweep passes. The state (weights, AdamW, schedule, the batch generator, the
    curve so far) makes a resumed training equal to the uninterrupted one.
    """
    device = torch.device(device or "cpu")
    model = model.to(device)
    d = model.d
    g = torch.Generator(device=device).manual_seed(seed)
    g_eval = torch.Generator(device=device).manual_seed(seed + 10_000)
    dtype = next(model.parameters()).dtype
    X_eval = sphere_points(settings.eval_size, N, d, generator=g_eval, device=device, dtype=dtype)
    Y_eval = furthest_neighbour(X_eval)[0]
    opt = torch.optim.AdamW(model.parameters(), lr=settings.lr, betas=(0.9, 0.95),
                            weight_decay=settings.weight_decay)

    sched = torch.optim.lr_scheduler.LambdaLR(  # the authors' code: zero one step past the end
        opt, lambda step: warmup_cosine(step, settings.steps, settings.warmup, zero_at_last=False))
    curve, done = [], 0
    lowest, best = None, None  # each model's lowest evaluation, and the weights of all models
    # then (model m -> a snapshot, shared by the models that improved at the same evaluation)
    saved = checkpoint.load(device) if checkpoint is not None else None
    if saved is not None:
        model.load_state_dict(saved["model"])
        opt.load_state_dict(saved["opt"])
        sched.load_state_dict(saved["sched"])
        g.set_state(saved["rng"].cpu())
        curve, done = saved["curve"], saved["step"]
        lowest, best = saved["lowest"], saved["best"]
        if not 0 < done < settings.steps:  # a training is saved only before its last step
            raise AttnbookError(f"a checkpoint at step {done} of {settings.steps}: one is saved "
                                "only between the first and the last step")

    def state() -> dict:
        return {"step": done, "model": model.state_dict(), "opt": opt.state_dict(),
                "sched": sched.state_dict(), "rng": g.get_state(), "curve": curve,
                "lowest": lowest, "best": best}

    steps = range(done, settings.steps)
    if progress:
        from ..progress import progress_bar

        steps = progress_bar(steps, desc=f"{type(model).__name__} r*H line", leave=False)
    for step in steps:
        X = sphere_points(settings.batch, N, d, generator=g, device=device, dtype=dtype)
        Y = furthest_neighbour(X)[0]
        loss = _mse(model(X), Y).sum()  # (M,) summed: independent gradients
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        sched.step()
        if (step + 1) % settings.eval_every == 0 or step + 1 == settings.steps:
            with torch.no_grad():
                curve.append(_mse(model(X_eval), Y_eval).cpu().numpy())
            now = torch.as_tensor(curve[-1], dtype=torch.float64)
            if lowest is None:
                lowest, best = torch.full_like(now, float("inf")), [None] * len(now)
            better = now < lowest  # a NaN evaluation is never the best
            if bool(better.any()):
                snapshot = {k: v.detach().clone() for k, v in model.state_dict().items()}
                for m in better.nonzero()[:, 0].tolist():
                    best[m] = snapshot
                lowest = torch.where(better, now, lowest)
        done = step + 1
        if checkpoint is not None and done < settings.steps:
            checkpoint.tick(done, state)
    curve = np.array(curve)  # (evaluations, M)
    min_loss = np.full(curve.shape[1], np.nan, dtype=curve.dtype)
    with torch.no_grad():  # each kept set of weights evaluated again, for its models
        for snapshot in {id(b): b for b in best if b is not None}.values():
            model.load_state_dict(snapshot)
            again = _mse(model(X_eval), Y_eval).cpu().numpy()
            for m in (m for m, b in enumerate(best) if b is snapshot):
                min_loss[m] = again[m]
    min_loss[np.isnan(curve).any(0)] = np.nan  # as the minimum of a curve with a NaN is
    return {"min_loss": min_loss, "final_loss": curve[-1], "curve": curve}


def train_line_config(config: dict, settings: TrainSettings, *, device=None,
                      progress: bool = False, checkpoint=None) -> dict:
    """Build and train one line of constant rH (``config``: ``kind`` "attention" or "encoder",
    ``d``, ``N``, ``rank_heads``, ``seed``) and return what the chapter stores: per model ``r``,
    ``H`` and ``min_loss``, and the held-out ``curve``. ``checkpoint``: as
    :func:`train_line`'s (a sweep with ``checkpoint=True`` passes one per line)."""
    d, seed = config["d"], config["seed"]
    rh = line_configs(d, config["rank_heads"])
    torch.manual_seed(seed)
    if config["kind"] == "attention":
        model = RankedAttention(d, [r for r, _ in rh], [H for _, H in rh],
                                generator=torch.Generator().manual_seed(seed))
    elif config["kind"] == "encoder":
        model = EncoderLine(d, [H for _, H in rh])
    else:
        raise ParameterError("kind", config["kind"], "'attention' or 'encoder'")
    res = train_line(model, config["N"], settings, seed=seed, device=device, progress=progress,
                     checkpoint=checkpoint)
    return {"r": [r for r, _ in rh], "H": [H for _, H in rh], "min_loss": res["min_loss"],
            "curve": res["curve"]}


# -- majority vote of random rank-one heads (slide "Majority Voting") -------------------------

def rank1_votes(x1: torch.Tensor, x2: torch.Tensor, y: torch.Tensor,
                q: torch.Tensor) -> torch.Tensor:
    """Votes of rank-one heads with K = Q = q (scores -(x_i . q)(q . y)): +1 for x1, -1 for x2.

    Head q attends to the candidate with the larger score, i.e. the smaller (x_i . q)(q . y).
    x1, x2, y: (T, d); q: (H, d) -> votes (T, H).

    >>> e = torch.eye(2, dtype=torch.float64)
    >>> q = torch.tensor([[1.0, 0.0], [0.6, 0.8], [0.6, -0.8]], dtype=torch.float64)
    >>> rank1_votes(e[:1], e[1:], e[:1], q).tolist()  # x1 = y: x2 (-1) is the furthest
    [[-1.0, 1.0, -1.0]]
    """
    s = ((x1 - x2) @ q.T) * (y @ q.T)  # (T, H): (x1 - x2).q  q.y
    return torch.where(s < 0, 1.0, -1.0).to(x1.dtype)


def head_accuracy(x1: torch.Tensor, x2: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """Probability over q ~ Unif(S^{d-1}) that one rank-one head votes right, per input (T,).

    Sign(q . z) and sign(q . y) agree with probability 1 - angle(z, y)/pi, so a head is right
    with probability 1/2 + |arcsin(z . y)|/pi, z = (x1 - x2)/|x1 - x2|.

    >>> e = torch.eye(2, dtype=torch.float64)
    >>> head_accuracy(e[:1], -e[:1], e[:1]).tolist()  # z = y: always right
    [1.0]
    """
    z = (x1 - x2) / (x1 - x2).norm(dim=-1, keepdim=True)
    cos = (z * y).sum(-1).clamp(-1, 1)
    return 0.5 + cos.asin().abs() / math.pi


def majority_accuracy(votes: torch.Tensor, truth: torch.Tensor, Hs) -> np.ndarray:
    """Fraction of inputs where the majority of the first H votes is right, for each odd H.

    votes: (T, Hmax) in {+1, -1}; truth: (T,) in {+1, -1}.

    >>> v = torch.tensor([[1., 1., -1.], [-1., -1., 1.]])
    >>> majority_accuracy(v, torch.tensor([1., 1.]), [1, 3]).tolist()
    [0.5, 0.5]
    """
    T, Hmax = votes.shape
    for H in Hs:
        if H % 2 == 0 or not 1 <= H <= Hmax:
            raise ParameterError("H", H, f"odd numbers of heads 1 <= H <= {Hmax} (no ties)")
    tally = votes.cumsum(dim=1)  # (T, Hmax): tally of the first H votes at column H - 1
    idx = torch.tensor([H - 1 for H in Hs], device=votes.device)
    right = torch.sign(tally[:, idx]) == truth[:, None]  # (T, len(Hs))
    return right.double().mean(0).cpu().numpy()


def hoeffding_accuracy_bound(p: torch.Tensor, Hs) -> np.ndarray:
    """Hoeffding: the majority of H independent votes, each right w.p. p > 1/2, is wrong with
    probability <= exp(-2 H (p - 1/2)^2); averaged over inputs, a lower bound on accuracy.

    >>> hoeffding_accuracy_bound(torch.tensor([1.0]), [1, 3]).round(4).tolist()
    [0.3935, 0.7769]
    """
    H = torch.tensor(list(Hs), dtype=torch.float64, device=p.device)
    gap2 = (p.double() - 0.5) ** 2  # (T,)
    return (1 - torch.exp(-2 * H[:, None] * gap2[None, :]).mean(1)).cpu().numpy()


def two_layer_majority(x1: torch.Tensor, x2: torch.Tensor, y: torch.Tensor, q: torch.Tensor,
                       c: float = 1e4) -> torch.Tensor:
    """The two attention layers of slide "Majority Voting", with tokens [x; index; scratch].

    Tokens [x1; 1; 0], [x2; -1; 0], [y; 0; 0]. Layer 1: H rank-one heads with query/key
    q q^T (scaled by -c) let y attend over x1, x2; each head's value reads the index
    coordinate and writes it, averaged over heads, into y's scratchpad. Layer 2: one head
    with score c * index_i * scratch_y lets y attend to the candidate whose index matches the
    tally's sign and copies its x block. Returns y's output x block, (T, d).

    >>> e = torch.eye(2, dtype=torch.float64)
    >>> q = torch.tensor([[1.0, 0.0], [0.6, 0.8], [0.6, -0.8]], dtype=torch.float64)
    >>> two_layer_majority(e[:1], e[1:], e[:1], q).tolist()  # votes -1, +1, -1: x2 wins
    [[0.0, 1.0]]
    """
    T, d = y.shape
    cand = torch.stack([x1, x2], dim=1)  # (T, 2, d) keys for y's query
    index = torch.tensor([1.0, -1.0], dtype=y.dtype, device=y.device)  # (2,)
    # layer 1: head h scores -c (x_i . q_h)(q_h . y); value = index coordinate / H
    scores = -c * torch.einsum("tid,hd->thi", cand, q) * (y @ q.T)[..., None]  # (T, H, 2)
    scratch = (torch.softmax(scores, dim=-1) @ index).mean(dim=1)  # (T,): tally / H
    # layer 2: y attends with score c * index_i * scratch, value = x block
    A2 = torch.softmax(c * index[None, :] * scratch[:, None], dim=-1)  # (T, 2)
    return torch.einsum("ti,tid->td", A2, cand)


def single_head_advantage(d: int) -> float:
    """E[p] - 1/2 = E|arcsin t| / pi, t ~ u_d: a random rank-one head's edge over a coin.

    Exact up to quadrature (t = z . y is distributed as u_d, harmonics.sphere_marginal_density);
    for large d it is ~ E|t| / pi ~ sqrt(2 / (pi d)) / pi, the slide's Theta(1/sqrt(d)).

    >>> round(single_head_advantage(3), 5)  # t uniform on [-1, 1]: E|arcsin t| = pi/2 - 1
    0.18169
    """
    from scipy import integrate

    from .harmonics import sphere_marginal_density

    if not isinstance(d, int) or d < 3:
        raise ParameterError("d", d, "an integer d >= 3")
    val, _ = integrate.quad(lambda t: 2 * np.arcsin(t) * sphere_marginal_density(t, d), 0, 1,
                            epsabs=1e-13, epsrel=1e-12)
    return float(val / math.pi)


def _clopper_pearson(k: np.ndarray, n: int, level: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    a = (1 - level) / 2
    lo = np.where(k > 0, stats.beta.ppf(a, k, n - k + 1), 0.0)
    hi = np.where(k < n, stats.beta.ppf(1 - a, k + 1, n - k), 1.0)
    return lo, hi


def majority_vote_table(ds, H_over_d2, T: int, *, seed: int = 0, device=None,
                        chunk: int = 1000) -> pd.DataFrame:
    """Majority vote of H random rank-one heads on T random inputs (x1, x2, y), per d and H.

    H runs over the odd numbers nearest to ``H_over_d2`` x d^2 (and H = 1). Columns: accuracy
    with a 95% Clopper-Pearson band, the Hoeffding lower bound averaged over the same inputs,
    and the same two restricted to inputs of typical margin |z . y| >= 1/sqrt(d), where the
    slide's 1 - exp(-Theta(d)) applies. Heads are nested: the first H of one draw of q's.
    """
    device = torch.device(device or "cpu")
    rows = []
    for d in ds:
        g = torch.Generator(device=device).manual_seed(seed + d)
        Hs = sorted({1} | {max(1, 2 * int(round(f * d * d / 2)) + 1) for f in H_over_d2})
        Hmax = Hs[-1]
        q = sphere_points(1, Hmax, d, generator=g, device=device, dtype=torch.float64)[0]
        right, right_typ, hoef, hoef_typ, n_typ = 0, 0, 0, 0, 0
        for start in range(0, T, chunk):
            t = min(chunk, T - start)
            x1, x2, y = sphere_points(t, 3, d, generator=g, device=device,
                                      dtype=torch.float64).unbind(1)  # each (t, d)
            truth = torch.where(((x1 - x2) * y).sum(-1) < 0, 1.0, -1.0).to(x1.dtype)
            votes = rank1_votes(x1, x2, y, q)  # (t, Hmax)
            z = (x1 - x2) / (x1 - x2).norm(dim=-1, keepdim=True)
            typical = ((z * y).sum(-1).abs() >= 1 / math.sqrt(d))  # (t,)
            p = head_accuracy(x1, x2, y)
            right = right + t * majority_accuracy(votes, truth, Hs)
            hoef = hoef + t * hoeffding_accuracy_bound(p, Hs)
            k = int(typical.sum())
            if k:
                right_typ = right_typ + k * majority_accuracy(votes[typical], truth[typical], Hs)
                hoef_typ = hoef_typ + k * hoeffding_accuracy_bound(p[typical], Hs)
            n_typ += k
        hits = np.rint(right).astype(int)
        lo, hi = _clopper_pearson(hits, T)
        hits_t = np.rint(right_typ).astype(int)
        lo_t, hi_t = _clopper_pearson(hits_t, n_typ)
        for i, H in enumerate(Hs):
            rows.append({"d": d, "H": H, "H_over_d2": H / d**2, "T": T, "accuracy": hits[i] / T,
                         "lo": lo[i], "hi": hi[i], "hoeffding": hoef[i] / T,
                         "T_typical": n_typ, "accuracy_typical": hits_t[i] / n_typ,
                         "lo_typical": lo_t[i], "hi_typical": hi_t[i],
                         "hoeffding_typical": hoef_typ[i] / n_typ})
    return pd.DataFrame(rows)


def majority_error_exact(d: int, H: int, margin: float = 0.0) -> float:
    """Probability that the majority of H random rank-one heads is wrong, given |z . y| >= margin.

    Exact up to quadrature: given the input, the H votes are independent, each right with
    probability p(t) = 1/2 + |arcsin t|/pi (t = z . y, distributed as u_d), so the majority of
    an odd H is wrong with probability P[Binomial(H, p(t)) <= (H - 1)/2]; this is averaged
    over t ~ u_d restricted to |t| >= margin. Small errors stay accurate (no simulation).

    >>> round(majority_error_exact(3, 1), 5)  # one head: 1/2 - E|arcsin t|/pi
    0.31831
    >>> majority_error_exact(64, 4097, 64**-0.5) < 1e-4 < majority_error_exact(64, 4097)
    True
    """
    from scipy import integrate

    from .harmonics import sphere_marginal_density

    if not isinstance(H, int) or H < 1 or H % 2 == 0:
        raise ParameterError("H", H, "an odd number of heads >= 1 (no ties)")
    if not 0 <= margin < 1:
        raise ParameterError("margin", margin, "0 <= margin < 1")

    def wrong(t):
        return stats.binom.cdf((H - 1) // 2, H, 0.5 + np.arcsin(t) / math.pi)

    scale = min(1.0, math.pi / math.sqrt(2 * H))  # where the votes' edge starts to tell
    points = sorted({min(0.99, margin + k * scale) for k in (0.1, 0.5, 1, 2, 4)})
    num, _ = integrate.quad(lambda t: wrong(t) * sphere_marginal_density(t, d), margin, 1,
                            points=points, epsabs=0, epsrel=1e-9, limit=500)
    den, _ = integrate.quad(lambda t: sphere_marginal_density(t, d), margin, 1,
                            epsabs=0, epsrel=1e-12, limit=200)
    return float(num / den)


def majority_error_table(ds, *, H_over_d2: float = 1.0) -> pd.DataFrame:
    """:func:`majority_error_exact` at H = the odd number nearest ``H_over_d2`` d^2, per d: over
    all inputs (``error_all``) and over inputs of typical margin |z . y| >= d^-1/2
    (``error_margin``), with the share of inputs that margin keeps (``margin_share``)."""
    from scipy import integrate

    from .harmonics import sphere_marginal_density

    rows = []
    for d in ds:
        H = max(1, 2 * int(round(H_over_d2 * d * d / 2)) + 1)
        m = 1 / math.sqrt(d)
        share = 2 * integrate.quad(sphere_marginal_density, m, 1, args=(int(d),),
                                   epsabs=0, epsrel=1e-12)[0]
        rows.append({"d": int(d), "H": H, "error_all": majority_error_exact(int(d), H),
                     "error_margin": majority_error_exact(int(d), H, m), "margin_share": share})
    return pd.DataFrame(rows)


def full_rank_table(d: int, N: int, B: int, cs, *, seed: int = 0) -> pd.DataFrame:
    """Error of the full-rank head (K Q^T = -c I) against the furthest-neighbour target, per c.

    Float64 on B point sets: MSE x d (mean over points of ||out_j - f_j||^2), the largest
    per-point error, and the fraction of points whose largest attention weight sits on the
    furthest point.

    >>> t = full_rank_table(8, 4, 16, [1.0, 1e6])
    >>> bool(t["mse"].iloc[1] < 1e-6 < t["mse"].iloc[0]), float(t["argmax_exact"].iloc[1])
    (True, 1.0)
    """
    g = torch.Generator().manual_seed(seed)
    X = sphere_points(B, N, d, generator=g, dtype=torch.float64)  # (B, N, d)
    target, idx = furthest_neighbour(X)
    gram = X @ X.transpose(-1, -2)
    two = gram.topk(2, dim=-1, largest=False).values  # (B, N, 2): smallest two x_i . x_j
    rows = []
    for c in cs:
        out, A = full_rank_head(X, float(c))
        err = ((out - target) ** 2).sum(-1)  # (B, N)
        rows.append({"c": float(c), "mse": float(err.mean()), "max_err": float(err.max()),
                     "argmax_exact": float((A.argmax(-1) == idx).double().mean()),
                     "min_gap": float((two[..., 1] - two[..., 0]).min())})
    return pd.DataFrame(rows)
