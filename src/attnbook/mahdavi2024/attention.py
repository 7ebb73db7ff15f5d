"""The multi-head attention layer of mahdavi2024 and the data it is tested on.

* the MHA layer of eqs. (1)-(6) and the feature matrix Z of eq. (7) (``mha_forward``);
* data: per-example or shared contexts, sinusoidal positional encodings, queries of a chosen
  Kruskal rank, constant-sum tokens (Appendix I), the dataset of Appendix F (``make_dataset``,
  ``fcn_hard_dataset``) and the trivial attention layer with skip connection of Proposition 4.

All exact checks run in float64.

Used by: mahdavi2024_theory, benchmarks/bench_memorization_ranks.py.
"""

from dataclasses import dataclass

import torch

from ..errors import ParameterError

__all__ = ["MHAWeights", "MHAOutput", "mha_forward", "check_data", "positional_encoding",
           "make_dataset", "fcn_hard_dataset", "trivial_attention_skip"]

F64 = torch.float64


@dataclass(frozen=True)
class MHAWeights:
    """Weights of one MHA layer (mahdavi2024, Section 3), heads stacked on the first axis."""

    W_K: torch.Tensor  # (H, d, d_h)
    W_Q: torch.Tensor  # (H, d, d_h)
    W_V: torch.Tensor  # (H, d, d_v)
    W_O: torch.Tensor  # (H*d_v, d)
    W_D: torch.Tensor  # (d, d_out)

    def __post_init__(self):
        H, d, d_h = self.W_K.shape
        if self.W_Q.shape != (H, d, d_h):
            raise ParameterError("W_Q", tuple(self.W_Q.shape), f"shape of W_K = {(H, d, d_h)}")
        if self.W_V.shape[:2] != (H, d):
            raise ParameterError("W_V", tuple(self.W_V.shape), f"shape ({H}, {d}, d_v)")
        d_v = self.W_V.shape[2]
        if self.W_O.shape != (H * d_v, d):
            raise ParameterError("W_O", tuple(self.W_O.shape), f"shape (H d_v, d) = {(H * d_v, d)}")
        if self.W_D.shape[0] != d:
            raise ParameterError("W_D", tuple(self.W_D.shape), f"shape ({d}, d_out)")

    @property
    def shape(self) -> dict:
        H, d, d_h = self.W_K.shape
        return {"H": H, "d": d, "d_h": d_h, "d_v": self.W_V.shape[2], "d_out": self.W_D.shape[1]}


@dataclass(frozen=True)
class MHAOutput:
    """Intermediate variables of eqs. (1)-(7) for a batch of T examples."""

    alpha: torch.Tensor  # (T, H, n) logits, eq. (1)
    theta: torch.Tensor  # (T, H, n) softmax coefficients, eq. (2)
    Z: torch.Tensor  # (T, H*d) feature matrix, eqs. (3) and (7)
    o: torch.Tensor  # (T, d) layer output, eq. (5)
    y_hat: torch.Tensor  # (T, d_out) model output, eq. (6)


def check_data(E: torch.Tensor, e: torch.Tensor) -> tuple[int, int, int]:
    if E.ndim != 3:
        raise ParameterError("E", f"shape {tuple(E.shape)}", "contexts of shape (T, n, d)")
    T, n, d = E.shape
    if e.shape != (T, d):
        raise ParameterError("e", f"shape {tuple(e.shape)}",
                             f"queries of shape (T, d) = ({T}, {d})")
    return T, n, d


def mha_forward(E: torch.Tensor, e: torch.Tensor, w: MHAWeights, *,
                skip: bool = False) -> MHAOutput:
    """One MHA layer on T examples, exactly eqs. (1)-(6) of mahdavi2024 (skip: Appendix C).

    The softmax subtracts the row maximum (log-sum-exp), so logits far beyond exp's float64
    range (|alpha| > 709) are handled exactly; see ``Construction.naive_exp_overflows``.

    >>> E = torch.eye(2, 3, dtype=torch.float64)[None]; e = torch.ones(1, 3, dtype=torch.float64)
    >>> I = torch.eye(3, dtype=torch.float64)
    >>> w = MHAWeights(I[None], 0 * I[None], I[None], I, I[:, :1])  # W_Q = 0: uniform attention
    >>> mha_forward(E, e, w).Z.tolist()   # z = E^T theta = mean of the two context tokens
    [[0.5, 0.5, 0.0]]
    """
    T, n, d = check_data(E, e)
    if w.W_K.shape[1] != d:
        raise ParameterError("d", d, f"the weights' embedding dimension {w.W_K.shape[1]}")
    H = w.W_K.shape[0]
    q = torch.einsum("hbk,tb->thk", w.W_Q, e)  # (T, H, d_h): W_Q^T e
    k = torch.einsum("tia,hak->thik", E, w.W_K)  # (T, H, n, d_h): E W_K
    alpha = torch.einsum("thik,thk->thi", k, q)  # (T, H, n): eq. (1)
    theta = torch.softmax(alpha, dim=-1)  # eq. (2)
    z = torch.einsum("thi,tia->tha", theta, E)  # (T, H, d): eq. (3)
    p = torch.einsum("tha,hav->thv", z, w.W_V)  # (T, H, d_v): eq. (4)
    o = p.reshape(T, -1) @ w.W_O  # (T, d): eq. (5)
    if skip:
        o = o + e  # Appendix C
    return MHAOutput(alpha, theta, z.reshape(T, H * d), o, o @ w.W_D)


def positional_encoding(n: int, d: int) -> torch.Tensor:
    """Sinusoidal positional encodings pos_0..pos_{n-1} in R^d (Vaswani et al.; mahdavi2024 Sec. 3).

    >>> positional_encoding(2, 2).tolist()
    [[0.0, 1.0], [0.8414709848078965, 0.5403023058681398]]
    """
    pos = torch.arange(n, dtype=F64)[:, None]  # (n, 1)
    freq = torch.pow(10000.0, -torch.arange(0, d, 2, dtype=F64) / d)  # (ceil(d/2),)
    P = torch.zeros(n, d, dtype=F64)
    P[:, 0::2] = torch.sin(pos * freq)
    P[:, 1::2] = torch.cos(pos * freq[: d // 2])
    return P


def _sample(shape, dist: str, g: torch.Generator) -> torch.Tensor:
    if dist == "uniform":
        return torch.rand(shape, generator=g, dtype=F64)
    if dist == "gaussian":
        return torch.randn(shape, generator=g, dtype=F64)
    raise ParameterError("dist", dist, "uniform or gaussian")


def make_dataset(T: int, n: int, d: int, *, shared: bool = False, dist: str = "gaussian",
                 positional: bool = False, query_rank: int | None = None,
                 token_sum: float | None = None,
                 seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    """Random contexts E (T, n, d) and queries e (T, d) for the settings of mahdavi2024.

    ``shared``: one context for all examples (Proposition 2, Section 5.2); ``positional``: add
    pos_1..pos_n to the context and pos_0 to the query (Section 3); ``query_rank`` Q: queries
    drawn in a random Q-dim subspace, so their Kruskal rank is Q (Remark 1); ``token_sum`` C:
    every context token is shifted to sum to C (Proposition 5).

    >>> E, e = make_dataset(5, 3, 4, shared=True, token_sum=1.0)
    >>> E.shape, e.shape, bool((E[0] == E[4]).all()), round(float(E.sum(-1).max()), 12)
    (torch.Size([5, 3, 4]), torch.Size([5, 4]), True, 1.0)
    """
    for name, v in (("T", T), ("n", n), ("d", d)):
        if not isinstance(v, int) or v < 1:
            raise ParameterError(name, v, "an integer >= 1")
    g = torch.Generator().manual_seed(seed)
    E = _sample((1 if shared else T, n, d), dist, g).expand(T, n, d).clone()  # (T, n, d)
    if query_rank is None:
        e = _sample((T, d), dist, g)
    else:
        if not isinstance(query_rank, int) or not 1 <= query_rank <= d:
            raise ParameterError("query_rank", query_rank, f"an integer in [1, d = {d}]")
        basis = torch.linalg.qr(torch.randn(d, query_rank, generator=g, dtype=F64))[0]  # (d, Q)
        e = _sample((T, query_rank), dist, g) @ basis.T  # (T, d), Kruskal rank Q
    if positional:
        P = positional_encoding(n + 1, d)
        E = E + P[1:]
        e = e + P[0]
    if token_sum is not None:
        E = E - (E.sum(-1, keepdim=True) - token_sum) / d  # project onto 1^T x = C
    return E, e


def fcn_hard_dataset(T: int, n: int, d: int, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    """The inputs of Appendix F (Proposition 3): E^(t) = [s_1; ...; s_n], e^(t) = [0_{d-n}; x^(t)].

    The x^(t) in R^n are Gaussian, hence in General Position (Kruskal rank n).

    >>> E, e = fcn_hard_dataset(4, 2, 3); E[0].tolist(), e[:, 0].tolist()
    ([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]], [0.0, 0.0, 0.0, 0.0])
    """
    if not n < d:
        raise ParameterError("n", n, f"n < d = {d} (mahdavi2024, Proposition 3)")
    g = torch.Generator().manual_seed(seed)
    E = torch.eye(n, d, dtype=F64).expand(T, n, d).clone()  # (T, n, d): rows s_1..s_n
    x = torch.randn(T, n, generator=g, dtype=F64)
    e = torch.cat([torch.zeros(T, d - n, dtype=F64), x], dim=1)  # (T, d)
    return E, e


def trivial_attention_skip(E: torch.Tensor, e: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """The layer A_0 of Proposition 4 (W_K = W_Q = 0, W_V = W_O = I, skip) applied to every token.

    Each token x becomes x + f(E, x); returns the new contexts E' and queries e'.

    >>> E = torch.tensor([[[1.0, 0.0], [0.0, 1.0]]], dtype=torch.float64)
    >>> Ep, ep = trivial_attention_skip(E, E[:, 0]); Ep.tolist(), ep.tolist()
    ([[[1.5, 0.5], [0.5, 1.5]]], [[1.5, 0.5]])
    """
    T, n, d = check_data(E, e)
    I = torch.eye(d, dtype=F64)
    w = MHAWeights(torch.zeros(1, d, d, dtype=F64), torch.zeros(1, d, d, dtype=F64), I[None], I, I)
    tokens = torch.cat([e[:, None], E], dim=1)  # (T, n+1, d): the query, then the n context tokens
    Ex = E[:, None].expand(T, n + 1, n, d).reshape(T * (n + 1), n, d)  # context of each token
    out = mha_forward(Ex, tokens.reshape(T * (n + 1), d), w, skip=True).o.reshape(T, n + 1, d)
    return out[:, 1:], out[:, 0]
