"""Input embeddings of wies2021 section 2.1, with their rank r made explicit.

Two ways of turning raw inputs into the N columns y^{0,1..N} in R^{d_x} that the attention
network reads:

* vocabulary embedding, eq. (1): y^{0,i} = M_V e_{w^i} + p^i for tokens w^i in [V], with
  M_V = M_low M_vocab factorized d_x x r times r x V (so r = rank M_V, eq. (3), as in the
  ALBERT-style factorization of wies2021 section 5.1) and the positional embedding
  p^i = P_low M_pos[:, i] of rank r_e (Theorem 3 of the appendix, eq. (10));
* convolutional embedding, eq. (2): y^{0,i} = sum_{j=1}^{M/N} W^conv_j x^{(M/N)(i-1)+j} + p^i
  for M real inputs x in R^{d_input}, with r = rank of the kernel reshaped to d_x x (M/N
  d_input), eq. (4).

Factors are drawn Gaussian, so a drawn embedding has rank exactly r with probability one;
:func:`vocabulary_embedding` and :func:`convolutional_embedding` check it.

Used by: levine2020_separation_rank, wies2021_embedding_rank.
"""

import math
from dataclasses import dataclass

import torch

from ..errors import ParameterError, check_int

__all__ = ["VocabularyEmbedding", "ConvolutionalEmbedding", "vocabulary_embedding",
           "convolutional_embedding", "conv_kernel_matrix", "conv_embedding_rank"]


def _positional(N, d_x, r_e, dtype, generator):
    """P_low (d_x, r_e) @ M_pos (r_e, N), returned as the N rows p^i: (N, d_x)."""
    if r_e == 0:
        return torch.zeros(N, d_x, dtype=dtype)
    P_low = torch.randn(d_x, r_e, dtype=dtype, generator=generator) / math.sqrt(r_e)
    M_pos = torch.randn(r_e, N, dtype=dtype, generator=generator)
    return (P_low @ M_pos).T  # (N, d_x)


@dataclass(frozen=True, eq=False)
class VocabularyEmbedding:
    """y^{0,i} = M_low M_vocab e_{w^i} + p^i (wies2021 eq. (1) with eq. (10)'s factorization).

    >>> emb = vocabulary_embedding(V=5, d_x=4, r=2, N=3, r_e=1,
    ...                            generator=torch.Generator().manual_seed(0))
    >>> emb(torch.tensor([[0, 4, 4]])).shape  # (batch, N, d_x)
    torch.Size([1, 3, 4])
    >>> emb.rank, emb.positional_rank
    (2, 1)
    """

    M_low: torch.Tensor  # (d_x, r)
    M_vocab: torch.Tensor  # (r, V)
    positional: torch.Tensor  # (N, d_x): row i is p^i

    @property
    def matrix(self) -> torch.Tensor:
        """The vocabulary matrix M_V in R^{d_x x V}."""
        return self.M_low @ self.M_vocab

    @property
    def rank(self) -> int:
        """r = rank(M_V), eq. (3), computed (not assumed) from the matrix."""
        return int(torch.linalg.matrix_rank(self.matrix))

    @property
    def positional_rank(self) -> int:
        """r_e = rank of the N x d_x positional embedding matrix."""
        return int(torch.linalg.matrix_rank(self.positional)) if self.positional.any() else 0

    def __call__(self, w: torch.Tensor) -> torch.Tensor:
        """Tokens w of shape (B, N) with entries in [V] -> embedded columns (B, N, d_x)."""
        d_x, V = self.matrix.shape
        N = self.positional.shape[0]
        if w.shape[-1] != N:
            raise ParameterError("w.shape[-1]", w.shape[-1], f"N = {N} positions")
        if w.numel() and (int(w.min()) < 0 or int(w.max()) >= V):
            raise ParameterError("token", int(w.max()), f"token ids in 0..{V - 1} (V = {V})")
        table = self.matrix.T  # (V, d_x): row v is M_V e_v
        return table[w] + self.positional  # (B, N, d_x)


def vocabulary_embedding(V: int, d_x: int, r: int, N: int, r_e: int = 0, *,
                         dtype=torch.float64, generator=None) -> VocabularyEmbedding:
    """Draw a vocabulary embedding of rank r <= min(d_x, V) and positional rank r_e.

    Parameters carry the paper's symbols: vocabulary size V, width d_x, embedding rank r
    (eq. (3)), sequence length N, positional rank r_e (0 means no positional embedding).

    >>> vocabulary_embedding(V=3, d_x=8, r=4, N=2)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    attnbook.errors.ParameterError: parameter r = 4 is out of range: ... 1 <= r <= 3 (r <= ...
    """
    check_int("V", V, 1)
    check_int("d_x", d_x, 1)
    check_int("N", N, 1)
    check_int("r", r, 1, min(d_x, V), what="r <= min(d_x, V), wies2021 eq. (3)")
    check_int("r_e", r_e, 0, min(d_x, N), what="r_e <= min(d_x, N)")
    M_low = torch.randn(d_x, r, dtype=dtype, generator=generator) / math.sqrt(r)
    M_vocab = torch.randn(r, V, dtype=dtype, generator=generator)
    emb = VocabularyEmbedding(M_low, M_vocab, _positional(N, d_x, r_e, dtype, generator))
    if emb.rank != r or emb.positional_rank != r_e:  # probability zero for Gaussian factors
        raise ParameterError("generator", generator, "a draw of full rank r, r_e; reseed")
    return emb


@dataclass(frozen=True, eq=False)
class ConvolutionalEmbedding:
    """y^{0,i} = sum_j W^conv_j x^{(M/N)(i-1)+j} + p^i (wies2021 eq. (2)).

    >>> emb = convolutional_embedding(M=6, N=3, d_input=2, d_x=5, r=3,
    ...                               generator=torch.Generator().manual_seed(0))
    >>> emb(torch.randn(7, 6, 2, dtype=torch.float64)).shape  # (batch, N, d_x)
    torch.Size([7, 3, 5])
    >>> conv_embedding_rank(emb.W_conv)
    3
    """

    W_conv: torch.Tensor  # (M/N, d_x, d_input)
    positional: torch.Tensor  # (N, d_x)

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        """Raw inputs x of shape (B, M, d_input) -> embedded columns (B, N, d_x)."""
        k, d_x, d_input = self.W_conv.shape  # k = M/N, the patch length
        N = self.positional.shape[0]
        B, M, d_in = x.shape
        if d_in != d_input or M != k * N:
            raise ParameterError("x.shape", tuple(x.shape),
                                 f"(B, M = {k * N}, d_input = {d_input})")
        patches = x.reshape(B, N, k, d_input)  # (B, N, M/N, d_input): patch i holds x^{k(i-1)+j}
        return torch.einsum("kxc,bnkc->bnx", self.W_conv, patches) + self.positional


def conv_kernel_matrix(W_conv: torch.Tensor) -> torch.Tensor:
    """The kernel reshaped to W~conv in R^{d_x x V}, V = (M/N) d_input (wies2021 eq. (4)).

    Column (j, c) holds the weights that read channel c of the j-th input of a patch.

    >>> conv_kernel_matrix(torch.zeros(2, 5, 3)).shape  # (M/N, d_x, d_input) -> (d_x, V)
    torch.Size([5, 6])
    """
    k, d_x, d_input = W_conv.shape
    return W_conv.permute(1, 0, 2).reshape(d_x, k * d_input)  # (d_x, M/N * d_input)


def conv_embedding_rank(W_conv: torch.Tensor) -> int:
    """r = rank(W~conv), the embedding rank of the convolutional embedding (eq. (4)).

    >>> conv_embedding_rank(torch.ones(2, 4, 3))  # every column equal: rank 1
    1
    """
    return int(torch.linalg.matrix_rank(conv_kernel_matrix(W_conv)))


def convolutional_embedding(M: int, N: int, d_input: int, d_x: int, r: int, r_e: int = 0, *,
                            dtype=torch.float64, generator=None) -> ConvolutionalEmbedding:
    """Draw a convolutional embedding whose kernel has rank r <= min(d_x, (M/N) d_input).

    >>> convolutional_embedding(M=7, N=2, d_input=1, d_x=3, r=1)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    attnbook.errors.ParameterError: parameter M = 7 is out of range: allowed a multiple of N = 2 ...
    """
    check_int("N", N, 1)
    check_int("M", M, 1)
    if M % N:
        raise ParameterError("M", M, f"a multiple of N = {N} (wies2021 eq. (2))")
    check_int("d_input", d_input, 1)
    check_int("d_x", d_x, 1)
    k = M // N
    V = k * d_input  # the effective vocabulary dimension of eq. (4)
    check_int("r", r, 1, min(d_x, V), what="r <= min(d_x, (M/N) d_input), wies2021 eq. (4)")
    check_int("r_e", r_e, 0, min(d_x, N), what="r_e <= min(d_x, N)")
    low = torch.randn(d_x, r, dtype=dtype, generator=generator) / math.sqrt(r)
    conv = torch.randn(r, V, dtype=dtype, generator=generator)
    W_tilde = low @ conv  # (d_x, V) of rank r
    W_conv = W_tilde.reshape(d_x, k, d_input).permute(1, 0, 2).contiguous()  # (M/N, d_x, d_input)
    emb = ConvolutionalEmbedding(W_conv, _positional(N, d_x, r_e, dtype, generator))
    if conv_embedding_rank(W_conv) != r:
        raise ParameterError("generator", generator, "a draw of full rank r; reseed")
    return emb
