"""The decoder-only Transformer language model of wies2021's experiments (section 5, appendix C).

A GPT-2 style model (pre-LN blocks, causal softmax attention, GELU feed-forward of width
4 d_x, learned positions), written in nanoGPT's reading order, with the knobs the paper turns:

* the input embedding M_V in R^{d_x x V} factorized as d_x x r times r x V (wies2021 eq. (3),
  section 5.1), the positional embedding as d_x x r_e times r_e x N (appendix C.4); the
  inner dimension may exceed d_x (the paper's r = 880, 1080 at d_x = 680);
* the classification head kept full rank (V x d_x) and untied whenever the input embedding is
  factorized, so only the input embedding is bottlenecked, not the softmax (section 5.1);
* H heads of dimension d_a independent of d_x, so H d_a / d_x can exceed 1 (section 5.3).

:func:`reference_gpt2` builds HuggingFace ``GPT2LMHeadModel`` of the same size (W-Tab1).

Used by: wies2021_rank_bottleneck.
"""

import math
from dataclasses import asdict, dataclass

import torch
import torch.nn.functional as F
from torch import nn

from .errors import ParameterError

__all__ = ["LMConfig", "LanguageModel", "reference_gpt2", "count_parameters"]


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
        from .errors import AttnbookError

        raise AttnbookError("the GPT-2 reference needs `pip install transformers`") from None
    hf_cfg = GPT2Config(vocab_size=cfg.V, n_positions=cfg.N, n_embd=cfg.d_x, n_layer=cfg.L,
                        n_head=cfg.H, n_inner=4 * cfg.d_x, activation_function="gelu_new",
                        resid_pdrop=cfg.dropout, embd_pdrop=cfg.dropout,
                        attn_pdrop=cfg.dropout, tie_word_embeddings=cfg.tie,
                        bos_token_id=0, eos_token_id=0)
    hf_cfg._attn_implementation = "sdpa"
    return _HFWrapper(GPT2LMHeadModel(hf_cfg))
