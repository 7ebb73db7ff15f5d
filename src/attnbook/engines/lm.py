"""The decoder-only Transformer language model of wies2021's experiments (section 5, appendix C).

A GPT-2 style model (pre-LN blocks, causal softmax attention, GELU feed-forward of width
4 d_x, learned positions), written in nanoGPT's reading order, with the knobs the paper turns:

* the input embedding M_V in R^{d_x x V} factorized as d_x x r times r x V (wies2021 eq. (3),
  section 5.1), the positional embedding as d_x x r_e times r_e x N (appendix C.4); the
  inner dimension may exceed d_x (the paper's r = 880, 1080 at d_x = 680);
* the classification head kept full rank (V x d_x) and untied whenever the input embedding is
  factorized, so only the input embedding is bottlenecked, not the softmax (section 5.1);
* H heads of dimension d_a independent of d_x, so H d_a / d_x can exceed 1 (section 5.3).

:class:`StackedLanguageModel` is M such models of one configuration (the seeds of one row of a
sweep) as one tensor program: every weight carries a leading model axis, the matmuls are
batched over it, and model m starts from exactly the weights ``LanguageModel(cfg)`` draws under
its seed.

:func:`reference_gpt2` builds HuggingFace ``GPT2LMHeadModel`` of the same size (W-Tab1).

Used by: levine2020_depth_transition, wies2021_attention_ratio, wies2021_depth_efficiency,
wies2021_rank_bottleneck, wies2021_vocab_rank.
"""

import math
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from functools import cache
from numbers import Integral

import torch
import torch.nn.functional as F
from torch import nn

from ..errors import ParameterError

__all__ = ["LMConfig", "LanguageModel", "StackedLanguageModel", "reference_gpt2",
           "count_parameters"]


@dataclass(frozen=True)
class LMConfig:
    """Architecture of one language model (symbols of wies2021)."""

    V: int  # vocabulary size V
    N: int  # context length N (block size); the paper uses 128
    L: int  # depth: number of Transformer blocks
    d_x: int  # width of the residual stream
    H: int = 2  # heads per layer; appendix C keeps 2 except in section 5.3
    d_a: int | None = None  # attention dim per head; None means d_x / H (then H d_a = d_x)
    r: int | None = None  # input-embedding rank (inner dim); None means plain V x d_x table
    r_e: int | None = None  # positional-embedding rank (inner dim); None means plain N x d_x
    dropout: float = 0.1  # appendix C
    tie: bool = False  # tie head to input embedding (GPT-2 does; the paper's sweeps do not)

    def __post_init__(self):
        for name in ("V", "N", "L", "d_x", "H"):
            v = getattr(self, name)
            if not isinstance(v, int) or isinstance(v, bool) or v < 1:
                raise ParameterError(name, v, "an integer >= 1")
        if self.d_a is None and self.d_x % self.H:
            raise ParameterError("d_x", self.d_x, f"a multiple of H = {self.H} when d_a is not "
                                 f"given (d_a = d_x / H), or pass d_a explicitly")
        if self.d_a is not None and (not isinstance(self.d_a, int) or self.d_a < 1):
            raise ParameterError("d_a", self.d_a, "an integer >= 1 or None (d_x / H)")
        if self.r is not None and (not isinstance(self.r, int) or not 1 <= self.r <= self.V):
            raise ParameterError("r", self.r, f"an integer 1 <= r <= V = {self.V} (rank of the "
                                 f"V-column embedding), or None for full rank")
        if self.r_e is not None and (not isinstance(self.r_e, int) or not 1 <= self.r_e <= self.N):
            raise ParameterError("r_e", self.r_e, f"an integer 1 <= r_e <= N = {self.N}, or None")
        if not 0.0 <= self.dropout < 1.0:
            raise ParameterError("dropout", self.dropout, "0 <= dropout < 1")
        if self.tie and self.r is not None:
            raise ParameterError("tie", self.tie, "False when r is set: the head stays full rank "
                                 "and untied (wies2021 section 5.1)")

    @property
    def head_dim(self) -> int:
        return self.d_a if self.d_a is not None else self.d_x // self.H

    @property
    def embedding_rank(self) -> int:
        """The rank of M_V: min(r, d_x, V), or min(d_x, V) unfactorized."""
        return min(self.r or self.d_x, self.d_x, self.V)

    @property
    def attention_ratio(self) -> float:
        """H d_a / d_x, the quantity of wies2021 section 5.3."""
        return self.H * self.head_dim / self.d_x


class _Embedding(nn.Module):
    """A table of n vectors in R^{d_x}, plain (n x d_x) or factorized (n x k then k x d_x)."""

    def __init__(self, n: int, d_x: int, k: int | None):
        super().__init__()
        self.low = nn.Embedding(n, k if k else d_x)  # M_vocab^T: (n, k)
        self.up = nn.Linear(k, d_x, bias=False) if k else None  # M_low: (d_x, k)

    def forward(self, idx):
        e = self.low(idx)
        return self.up(e) if self.up is not None else e

    @torch.no_grad()
    def matrix(self) -> torch.Tensor:
        M = self.low.weight.double().T  # (k, n)
        return self.up.weight.double() @ M if self.up is not None else M  # (d_x, n)


class CausalSelfAttention(nn.Module):
    def __init__(self, cfg: LMConfig):
        super().__init__()
        self.H, self.hs = cfg.H, cfg.head_dim
        self.qkv = nn.Linear(cfg.d_x, 3 * cfg.H * self.hs)
        self.proj = nn.Linear(cfg.H * self.hs, cfg.d_x)
        self.dropout = cfg.dropout
        self.resid_drop = nn.Dropout(cfg.dropout)

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.qkv(x).split(self.H * self.hs, dim=2)
        q = q.view(B, T, self.H, self.hs).transpose(1, 2)  # (B, nh, T, hs)
        k = k.view(B, T, self.H, self.hs).transpose(1, 2)  # (B, nh, T, hs)
        v = v.view(B, T, self.H, self.hs).transpose(1, 2)  # (B, nh, T, hs)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True,
                                           dropout_p=self.dropout if self.training else 0.0)
        y = y.transpose(1, 2).reshape(B, T, self.H * self.hs)  # (B, T, nh*hs)
        return self.resid_drop(self.proj(y))


class MLP(nn.Module):
    def __init__(self, cfg: LMConfig):
        super().__init__()
        self.fc = nn.Linear(cfg.d_x, 4 * cfg.d_x)
        self.proj = nn.Linear(4 * cfg.d_x, cfg.d_x)
        self.drop = nn.Dropout(cfg.dropout)

    def forward(self, x):
        return self.drop(self.proj(F.gelu(self.fc(x), approximate="tanh")))  # GPT-2's GELU


class Block(nn.Module):
    def __init__(self, cfg: LMConfig):
        super().__init__()
        self.ln_1, self.attn = nn.LayerNorm(cfg.d_x), CausalSelfAttention(cfg)
        self.ln_2, self.mlp = nn.LayerNorm(cfg.d_x), MLP(cfg)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class LanguageModel(nn.Module):
    """Decoder-only Transformer with rank-r input and rank-r_e positional embeddings.

    >>> m = LanguageModel(LMConfig(V=50, N=8, L=1, d_x=16, r=4))
    >>> m(torch.zeros(3, 8, dtype=torch.long)).shape  # (B, T, V) logits
    torch.Size([3, 8, 50])
    >>> count_parameters(m)["embedding"] == 50 * 4 + 4 * 16 + 8 * 16
    True
    """

    def __init__(self, cfg: LMConfig):
        super().__init__()
        self.cfg = cfg
        self.wte = _Embedding(cfg.V, cfg.d_x, cfg.r)
        self.wpe = _Embedding(cfg.N, cfg.d_x, cfg.r_e)
        self.drop = nn.Dropout(cfg.dropout)
        self.blocks = nn.ModuleList(Block(cfg) for _ in range(cfg.L))
        self.ln_f = nn.LayerNorm(cfg.d_x)
        self.head = nn.Linear(cfg.d_x, cfg.V, bias=False)
        self.apply(self._init)
        for name, p in self.named_parameters():  # GPT-2: residual projections scaled by depth
            if name.endswith("proj.weight"):
                nn.init.normal_(p, mean=0.0, std=0.02 / math.sqrt(2 * cfg.L))
        for emb in (self.wte, self.wpe):
            # A factorized embedding starts at the entry scale of a plain one (std 0.02): the
            # up-projection gets std 1/sqrt(k). With both factors at 0.02 the product starts
            # ~1e-3 and short runs stay on the unigram plateau whatever the rank (measured at
            # 150 steps at the cpu width of wies2021_rank_bottleneck: r = 1, 2, 8 all 3.005).
            if emb.up is not None:
                nn.init.normal_(emb.up.weight, mean=0.0, std=1 / math.sqrt(emb.up.in_features))
        if cfg.tie:
            self.head.weight = self.wte.low.weight

    @staticmethod
    def _init(m):
        if isinstance(m, (nn.Linear, nn.Embedding)):
            nn.init.normal_(m.weight, mean=0.0, std=0.02)
            if getattr(m, "bias", None) is not None:
                nn.init.zeros_(m.bias)

    def forward(self, idx):
        B, T = idx.size()
        if T > self.cfg.N:
            raise ParameterError("T", T, f"a sequence length <= N = {self.cfg.N}")
        pos = torch.arange(T, device=idx.device)
        x = self.drop(self.wte(idx) + self.wpe(pos))  # (B, T, d_x)
        for block in self.blocks:
            x = block(x)
        return self.head(self.ln_f(x))  # (B, T, V)

    def embedding_matrix(self) -> torch.Tensor:
        """M_V in R^{d_x x V} (float64, so its numerical rank is the rank of the factors)."""
        return self.wte.matrix()

    def positional_matrix(self) -> torch.Tensor:
        """The positional embedding as a d_x x N matrix (float64), of rank min(r_e, d_x, N)."""
        return self.wpe.matrix()


@cache
def _draw_pool(workers: int) -> ThreadPoolExecutor:
    """Threads that draw the models' dropout masks side by side (kept for the process)."""
    return ThreadPoolExecutor(workers, thread_name_prefix="attnbook-dropout")


def check_seeds(seeds) -> list[int]:
    """The seeds of a stack as a list: non-empty, integers, pairwise distinct."""
    if isinstance(seeds, (str, bytes)) or not isinstance(seeds, Sequence) or not seeds:
        raise ParameterError("seeds", seeds, "a non-empty list of integer seeds, one per model")
    for s in seeds:
        if not isinstance(s, Integral) or isinstance(s, bool):
            raise ParameterError("seeds", list(seeds), "integer seeds")
    seeds = [int(s) for s in seeds]  # numpy integers from a frame become Python ints
    if len(set(seeds)) != len(seeds):
        raise ParameterError("seeds", seeds, "distinct seeds (a repeated seed would train "
                             "the same model twice)")
    return seeds


class StackedLanguageModel(nn.Module):
    """M language models of one :class:`LMConfig`, one per seed, as one tensor program.

    Every weight of :class:`LanguageModel` gets a leading model axis of size M; model m holds
    exactly the weights ``LanguageModel(cfg)`` draws after ``torch.manual_seed(seeds[m])``
    (each model is built that way and its parameters stacked). The forward pass takes token
    ids (M, B, T), one batch per model, and returns logits (M, B, T, V): embeddings are one
    lookup in the (M V, k) table, every linear map is a batched matmul over the model axis,
    attention runs over the M B sequences at once.

    Dropout: :meth:`draw_noise` draws model m's masks from its own stream, a generator that
    starts where the global CPU generator stands after building model m, in the order the
    single model's forward pass draws them (embedding, then per block attention weights,
    attention output, MLP output), so a stacked step with those masks is the single models'
    steps. Without ``noise`` a training-mode forward draws the masks from the global generator
    (fast, the same distribution, not model m's stream).

    >>> net = StackedLanguageModel(LMConfig(V=50, N=8, L=1, d_x=16, r=4), seeds=[0, 1, 2])
    >>> net(torch.zeros(3, 5, 8, dtype=torch.long)).shape  # (M, B, T, V)
    torch.Size([3, 5, 8, 50])
    >>> torch.equal(net.unstack(1).wte.up.weight, net.param("wte.up.weight")[1])
    True
    """

    def __init__(self, cfg: LMConfig, seeds: Sequence[int]):
        super().__init__()
        if not isinstance(cfg, LMConfig):
            raise ParameterError("cfg", type(cfg).__name__, "an LMConfig")
        self.cfg, self.seeds = cfg, check_seeds(seeds)
        models, self.rng_states = [], []
        for s in self.seeds:
            torch.manual_seed(s)
            models.append(LanguageModel(cfg))
            self.rng_states.append(torch.get_rng_state())  # model m's dropout stream
        self.names = [n for n, _ in models[0].named_parameters()]  # a tied head appears once
        self.w = nn.ParameterDict({
            n.replace(".", "__"): nn.Parameter(torch.stack([dict(m.named_parameters())[n].detach()
                                                            for m in models]))
            for n in self.names})
        self.counts = count_parameters(models[0])  # of one model
        self.generators = None
        self.register_buffer("causal", torch.full((cfg.N, cfg.N), float("-inf")).triu(1),
                             persistent=False)  # additive causal mask, as SDPA's math path

    @property
    def M(self) -> int:
        return len(self.seeds)

    def param(self, name: str) -> nn.Parameter:
        """The stacked (M, ...) weight of the single model's parameter ``name``."""
        return self.w[name.replace(".", "__")]

    def reset_dropout_streams(self):
        """Model m's dropout generator back to where ``torch.manual_seed(seeds[m])`` and
        building model m leave the global CPU generator (as ``train_lm`` starts training)."""
        self.generators = []
        for state in self.rng_states:
            g = torch.Generator()
            g.set_state(state)
            self.generators.append(g)

    def noise_layout(self, B: int, T: int) -> list[tuple]:
        """Shapes of one model's dropout masks of one step, in the single model's draw order."""
        c = self.cfg
        per_block = [(B, c.H, T, T), (B * T, c.d_x), (B * T, c.d_x)]  # residual stream (B T, d_x)
        return [(B, T, c.d_x)] + per_block * c.L

    def draw_noise(self, B: int, T: int, device=None) -> list[torch.Tensor]:
        """Dropout multipliers (0 or 1/(1-p)) of one step, each (M, *shape), model m's from its
        own stream with the single model's calls (``bernoulli_(1 - p)`` per mask, same shapes,
        same order), the M models' draws on up to ``torch.get_num_threads()`` threads."""
        if self.generators is None:
            self.reset_dropout_streams()
        shapes = self.noise_layout(B, T)
        sizes = [math.prod(s) for s in shapes]
        buf = torch.empty(self.M, sum(sizes))
        keep = 1.0 - self.cfg.dropout

        def draw(m):  # site by site, as the single model draws (also where bernoulli_ is not
            for part in buf[m].split(sizes):  # serial, e.g. MKL's: one seed per call)
                part.bernoulli_(keep, generator=self.generators[m])

        workers = min(self.M, torch.get_num_threads())
        if workers > 1:
            list(_draw_pool(workers).map(draw, range(self.M)))
        else:
            for m in range(self.M):
                draw(m)
        buf.div_(keep)
        if device is not None:
            buf = buf.to(device, non_blocking=True)
        return [part.view(self.M, *shape)
                for part, shape in zip(buf.split(sizes, dim=1), shapes, strict=True)]

    def _linear(self, x, name, bias=True):
        W = self.param(name + ".weight")  # (M, out, in), as nn.Linear
        if bias:
            return torch.baddbmm(self.param(name + ".bias")[:, None], x, W.transpose(1, 2))
        return torch.bmm(x, W.transpose(1, 2))

    def _layer_norm(self, x, name):
        w, b = self.param(name + ".weight"), self.param(name + ".bias")
        return torch.addcmul(b[:, None], F.layer_norm(x, x.shape[-1:]), w[:, None])

    def _embed(self, idx, name, n, k):
        M = self.M
        low = self.param(name + ".low.weight")  # (M, n, k)
        offset = (torch.arange(M, device=idx.device) * n).view(M, *[1] * (idx.dim() - 1))
        e = F.embedding(idx + offset, low.reshape(M * n, -1))  # (M, ..., k)
        if k is None:
            return e
        up = self.param(name + ".up.weight")  # (M, d_x, k)
        return torch.bmm(e.reshape(M, -1, k), up.transpose(1, 2)).view(*e.shape[:-1], -1)

    @staticmethod
    def _drop(x, p, noise, training):
        if noise is not None:
            return x * noise
        return F.dropout(x, p, training) if p > 0 else x

    def forward(self, idx: torch.Tensor, noise: list[torch.Tensor] | None = None):
        """Token ids (M, B, T) -> logits (M, B, T, V); ``noise`` from :meth:`draw_noise`."""
        c, M = self.cfg, self.M
        if idx.dim() != 3 or idx.shape[0] != M:
            raise ParameterError("idx", tuple(idx.shape), f"token ids of shape (M = {M}, B, T)")
        _, B, T = idx.shape
        if T > c.N:
            raise ParameterError("T", T, f"a sequence length <= N = {c.N}")
        p = c.dropout if self.training else 0.0
        noise = iter(noise) if noise is not None and self.training else None
        nxt = (lambda: next(noise)) if noise is not None else (lambda: None)
        tok = self._embed(idx, "wte", c.V, c.r)  # (M, B, T, d_x)
        pos_ids = torch.arange(T, device=idx.device).expand(M, T)
        pos = self._embed(pos_ids, "wpe", c.N, c.r_e)  # (M, T, d_x)
        x = self._drop(tok + pos[:, None], p, nxt(), self.training)
        x = x.view(M, B * T, c.d_x)
        H, hs = c.H, c.head_dim
        for i in range(c.L):
            b = f"blocks.{i}."
            qkv = self._linear(self._layer_norm(x, b + "ln_1"), b + "attn.qkv")  # (M, BT, 3Hhs)
            q, k, v = qkv.view(M * B, T, 3, H, hs).permute(2, 0, 3, 1, 4).unbind(0)  # (MB,H,T,hs)
            attn_noise = nxt()
            if attn_noise is None:
                y = F.scaled_dot_product_attention(q, k, v, is_causal=True, dropout_p=p)
            else:  # SDPA's math path, with model m's mask: q k^T each scaled by d_a^(-1/4)
                sf = math.sqrt(1.0 / math.sqrt(hs))
                a = (q * sf) @ (k.transpose(-2, -1) * sf) + self.causal[:T, :T]
                a = a.softmax(-1).view(M, B, H, T, T) * attn_noise
                y = a.view(M * B, H, T, T) @ v
            y = y.transpose(1, 2).reshape(M, B * T, H * hs)
            x = x + self._drop(self._linear(y, b + "attn.proj"), p, nxt(), self.training)
            h = F.gelu(self._linear(self._layer_norm(x, b + "ln_2"), b + "mlp.fc"),
                       approximate="tanh")
            x = x + self._drop(self._linear(h, b + "mlp.proj"), p, nxt(), self.training)
        x = self._layer_norm(x, "ln_f")
        head = self.param("wte.low.weight" if c.tie else "head.weight")  # (M, V, d_x)
        return torch.bmm(x, head.transpose(1, 2)).view(M, B, T, c.V)

    @torch.no_grad()
    def unstack(self, m: int) -> LanguageModel:
        """Model m as a plain :class:`LanguageModel` (a copy of its weights, on the CPU)."""
        if not isinstance(m, int) or not 0 <= m < self.M:
            raise ParameterError("m", m, f"a model index 0 <= m < M = {self.M}")
        with torch.random.fork_rng(devices=[]):
            model = LanguageModel(self.cfg)
        for name, p in model.named_parameters():
            p.copy_(self.param(name)[m].detach().cpu())
        return model


def count_parameters(model: nn.Module) -> dict:
    """Parameters in total, in the token and positional embeddings, in the head, and the rest.

    ``non_embedding`` excludes both embeddings and the classification head (as Kaplan et al.
    count model size); a tied head is counted once, in the embedding.
    """
    seen, parts = set(), {"embedding": 0, "head": 0, "non_embedding": 0}
    for name, p in model.named_parameters():  # named_parameters skips tied duplicates
        if id(p) in seen:
            continue
        seen.add(id(p))
        if name.startswith(("wte.", "wpe.", "transformer.wte.", "transformer.wpe.")):
            parts["embedding"] += p.numel()
        elif name.startswith(("head.", "lm_head.")):
            parts["head"] += p.numel()
        else:
            parts["non_embedding"] += p.numel()
    parts["total"] = sum(parts.values())
    return parts


class _HFWrapper(nn.Module):
    """GPT2LMHeadModel called like :class:`LanguageModel`: token ids in, logits out."""

    def __init__(self, hf):
        super().__init__()
        self.hf = hf

    def forward(self, idx):
        return self.hf(input_ids=idx, use_cache=False).logits

    def named_parameters(self, *args, **kwargs):  # names as in GPT2LMHeadModel
        return self.hf.named_parameters(*args, **kwargs)


def reference_gpt2(cfg: LMConfig) -> nn.Module:
    """HuggingFace ``GPT2LMHeadModel`` of the same architecture, built from a config (no download).

    Only full-rank embeddings and H d_a = d_x exist there, so ``r``, ``r_e`` and ``d_a`` must
    be left unset; the head is tied exactly when ``cfg.tie``.
    """
    if cfg.r is not None or cfg.r_e is not None or cfg.head_dim * cfg.H != cfg.d_x:
        raise ParameterError("cfg", asdict(cfg), "full-rank embeddings and H d_a = d_x for the "
                             "GPT-2 reference (r = r_e = d_a = None)")
    try:
        from transformers import GPT2Config, GPT2LMHeadModel
    except ImportError:
        from ..errors import AttnbookError

        raise AttnbookError("the GPT-2 reference needs `pip install transformers`") from None
    hf_cfg = GPT2Config(vocab_size=cfg.V, n_positions=cfg.N, n_embd=cfg.d_x, n_layer=cfg.L,
                        n_head=cfg.H, n_inner=4 * cfg.d_x, activation_function="gelu_new",
                        resid_pdrop=cfg.dropout, embd_pdrop=cfg.dropout,
                        attn_pdrop=cfg.dropout, tie_word_embeddings=cfg.tie,
                        bos_token_id=0, eos_token_id=0)
    hf_cfg._attn_implementation = "sdpa"
    return _HFWrapper(GPT2LMHeadModel(hf_cfg))
