"""Attention networks as the papers analyse them, with stacked weights so many run at once.

``SelfAttentionNet`` is the network analysed by levine2020 (eq. 3 of its main text) and
wies2021 (eq. 5): L layers of unnormalized multi-head self-attention, no softmax, no
feed-forward block, optional residual connections (levine2020, appendix A.4). Layer l maps
the columns y_1..y_N (each in R^{d_x}) to

    y'_i = sum_h W^{O,h} sum_j <W^{Q,h} y_i, W^{K,h} y_j> W^{V,h} y_j      (+ y_i if residual)

with W^{Q,h}, W^{K,h}, W^{V,h} in R^{d_a x d_x} and W^{O,h} in R^{d_x x d_a}.

Used by: levine2020_lemma1, levine2020_separation_rank, wies2021_embedding_rank.
"""

import math
from dataclasses import dataclass

import torch
from torch import nn

from ..errors import ParameterError

__all__ = ["AttentionNetConfig", "SelfAttentionNet"]


@dataclass(frozen=True)
class AttentionNetConfig:
    depth: int  # L, number of attention layers
    d_x: int  # width of the residual stream / embedding
    heads: int  # H
    d_a: int  # attention (key/query/value) dimension per head
    residual: bool = False  # levine2020 A.4: y' = y + attention(y)

    def __post_init__(self):
        for name in ("depth", "d_x", "heads", "d_a"):
            v = getattr(self, name)
            if not isinstance(v, int) or v < 1:
                raise ParameterError(name, v, "an integer >= 1")


class SelfAttentionNet(nn.Module):
    """Unnormalized multi-head self-attention network (levine2020 eq. 3, wies2021 eq. 5).

    >>> net = SelfAttentionNet(AttentionNetConfig(depth=2, d_x=4, heads=2, d_a=3))
    >>> net(torch.randn(5, 7, 4, dtype=torch.float64)).shape  # (batch, N, d_x)
    torch.Size([5, 7, 4])
    """

    def __init__(self, cfg: AttentionNetConfig, dtype=torch.float64, generator=None):
        super().__init__()
        self.cfg = cfg
        L, H, d_a, d_x = cfg.depth, cfg.heads, cfg.d_a, cfg.d_x

        def init(*shape, fan_in):
            w = torch.randn(*shape, dtype=dtype, generator=generator) / math.sqrt(fan_in)
            return nn.Parameter(w)

        self.W_Q = init(L, H, d_a, d_x, fan_in=d_x)  # (L, H, d_a, d_x)
        self.W_K = init(L, H, d_a, d_x, fan_in=d_x)
        self.W_V = init(L, H, d_a, d_x, fan_in=d_x)
        self.W_O = init(L, H, d_x, d_a, fan_in=H * d_a)  # (L, H, d_x, d_a)

    def layer(self, y: torch.Tensor, l: int) -> torch.Tensor:
        """One attention layer on y of shape (B, N, d_x)."""
        q = torch.einsum("had,bnd->bhna", self.W_Q[l], y)  # (B, H, N, d_a)
        k = torch.einsum("had,bnd->bhna", self.W_K[l], y)
        v = torch.einsum("had,bnd->bhna", self.W_V[l], y)
        scores = q @ k.transpose(-1, -2)  # (B, H, N, N): <W^Q y_i, W^K y_j>, no softmax
        out = torch.einsum("hxa,bhna->bnx", self.W_O[l], scores @ v)  # sum over heads
        return y + out if self.cfg.residual else out

    @torch.no_grad()
    def calibrate_(self, x: torch.Tensor) -> "SelfAttentionNet":
        """Rescale each layer's W^O so the layer keeps the RMS of its input on ``x``.

        One positive constant per layer multiplies the output by a constant, so the network
        stays in the analysed family and its function stays a homogeneous polynomial of the
        same degree; it only keeps deep networks (degree 3^L) inside float64's range.
        """
        y = x
        for l in range(self.cfg.depth):
            out = self.layer(y, l) - (y if self.cfg.residual else 0)
            self.W_O[l] *= y.pow(2).mean().sqrt() / out.pow(2).mean().sqrt()
            y = self.layer(y, l)
        return self

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """x: (B, N, d_x) -> (B, N, d_x)."""
        if x.shape[-1] != self.cfg.d_x:
            raise ParameterError("x.shape[-1]", x.shape[-1], f"d_x = {self.cfg.d_x}")
        y = x
        for l in range(self.cfg.depth):
            y = self.layer(y, l)
        return y
