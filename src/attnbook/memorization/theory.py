"""Memorization capacity of one multi-head attention layer, checked constructively (mahdavi2024).

What is here, in the paper's order:

* the MHA layer of eqs. (1)-(6) and the feature matrix Z of eq. (7) (``mha_forward``);
* data: per-example or shared contexts, sinusoidal positional encodings, queries of a chosen
  Kruskal rank, constant-sum tokens (Appendix I), the dataset of Appendix F (``make_dataset``,
  ``fcn_hard_dataset``) and the trivial attention layer with skip connection of Proposition 4;
* the proof of Proposition 1 as an algorithm (``construct_attention``): head 1 fits r examples
  (Claim 1); each further head fits r-1 new ones with W = W* + c W+, where W+ is the rank-one
  matrix of Lemma 3 (zero logits on the new examples, distinct logits on the old ones), W*
  solves sub-step 1.A for the target rows, and c is the finite scale of Appendix B.2 / Lemma 4;
  r = min(n, d_h, Q) with Q the queries' Kruskal rank (Theorem 1, Remark 1);
* Step 2, solving Z W_V = Y (``solve_values``), and the whole Theorem 1 (``memorize``);
* the bounds of Theorem 1, Propositions 2, 3, 5 and Remark 1, and the two-layer ReLU network
  of Proposition 3 with its output Jacobian and a batched trainer.

All exact checks run in float64. Reference: mahdavi2024 (Mahdavi, Liao, Thrampoulidis, ICLR 2024).
"""

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch

from ..errors import AttnbookError, ParameterError
from .assumptions import assumption1, assumption2, assumption3, numerical_rank, rank_tolerance

__all__ = [
    "MHAWeights", "MHAOutput", "mha_forward", "make_dataset", "positional_encoding",
    "fcn_hard_dataset", "trivial_attention_skip", "memorization_lower_bound",
    "shared_context_bound", "constant_sum_bound", "relu_fcn_bound", "lemma3_w_plus",
    "saturation_scale", "construct_attention", "solve_values", "memorize", "Construction",
    "mha_parameter_count", "relu_fcn_parameter_count", "relu_fcn_jacobian_rank",
    "train_relu_fcn", "attention_features", "random_feature_ranks", "adversarial_rank_search",
    "theorem1_check", "rank_upper_bound_table", "proposition4_table", "proposition3_table",
    "fcn_reduction_error",
]

F64 = torch.float64
LOG_FLOAT64_MAX = math.log(torch.finfo(F64).max)  # 709.78: exp() of a larger logit overflows


# --------------------------------------------------------------------------------------------
# The layer, eqs. (1)-(7)
# --------------------------------------------------------------------------------------------
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


def _check_data(E: torch.Tensor, e: torch.Tensor) -> tuple[int, int, int]:
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
    T, n, d = _check_data(E, e)
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


# --------------------------------------------------------------------------------------------
# Data
# --------------------------------------------------------------------------------------------
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
    T, n, d = _check_data(E, e)
    I = torch.eye(d, dtype=F64)
    w = MHAWeights(torch.zeros(1, d, d, dtype=F64), torch.zeros(1, d, d, dtype=F64), I[None], I, I)
    tokens = torch.cat([e[:, None], E], dim=1)  # (T, n+1, d): the query, then the n context tokens
    Ex = E[:, None].expand(T, n + 1, n, d).reshape(T * (n + 1), n, d)  # context of each token
    out = mha_forward(Ex, tokens.reshape(T * (n + 1), d), w, skip=True).o.reshape(T, n + 1, d)
    return out[:, 1:], out[:, 0]


# --------------------------------------------------------------------------------------------
# Bounds
# --------------------------------------------------------------------------------------------
def _pos_int(name, v):
    if not isinstance(v, (int, np.integer)) or v < 1:
        raise ParameterError(name, v, "an integer >= 1")


def memorization_lower_bound(H: int, n: int, d_h: int, Q: int | None = None) -> int:
    """H(min(n, d_h)-1)+1 (Theorem 1), or H(min(Q, d_h)-1)+1 for queries of Kruskal rank Q < n.

    Implements mahdavi2024, Theorem 1 and Remark 1; r = min(n, d_h) is the per-head gain plus one.

    >>> memorization_lower_bound(4, 8, 16), memorization_lower_bound(4, 8, 3)
    (29, 9)
    >>> memorization_lower_bound(4, 8, 16, Q=5)
    17
    """
    for name, v in (("H", H), ("n", n), ("d_h", d_h)):
        _pos_int(name, v)
    r = min(n, d_h) if Q is None or Q >= n else min(Q, d_h)
    return H * (r - 1) + 1


def shared_context_bound(H: int, n: int) -> int:
    """Upper bound H(n-1)+1 on rank(Z) when all examples share one context (Proposition 2).

    >>> shared_context_bound(3, 5)
    13
    """
    _pos_int("H", H), _pos_int("n", n)
    return H * (n - 1) + 1


def constant_sum_bound(H: int, d: int) -> int:
    """Upper bound H(d-1)+1 on rank(Z) when all context tokens sum to one constant (Proposition 5).

    >>> constant_sum_bound(3, 5)
    13
    """
    _pos_int("H", H), _pos_int("d", d)
    return H * (d - 1) + 1


def relu_fcn_bound(n: int, m: int, d_out: int) -> float:
    """(n+1)m/d_out + m + 1: most examples of App. F a 2-layer ReLU net with m units fits (Prop. 3).

    >>> relu_fcn_bound(3, 2, 4)
    5.0
    """
    for name, v in (("n", n), ("m", m), ("d_out", d_out)):
        _pos_int(name, v)
    return (n + 1) * m / d_out + m + 1


def mha_parameter_count(H: int, d: int, d_h: int, d_v: int, d_out: int, *,
                        with_W_O: bool = True) -> int:
    """2Hd d_h + Hd d_v (+ H d_v d for W_O) + d d_out; Theorem 1's text omits W_O.

    >>> mha_parameter_count(2, 4, 3, 1, 1), mha_parameter_count(2, 4, 3, 1, 1, with_W_O=False)
    (68, 60)
    """
    return 2 * H * d * d_h + H * d * d_v + (H * d_v * d if with_W_O else 0) + d * d_out


def relu_fcn_parameter_count(d_in: int, m: int, d_out: int) -> int:
    """Parameters of x -> W_2^T ReLU(W_1^T x + b_1) + b_2 with d_in inputs and m hidden units.

    >>> relu_fcn_parameter_count(3, 2, 1)   # (d_in + 1) m + (m + 1) d_out
    11
    """
    return (d_in + 1) * m + (m + 1) * d_out


# --------------------------------------------------------------------------------------------
# Proposition 1, step by step
# --------------------------------------------------------------------------------------------
def _lstsq_tol(A: torch.Tensor) -> float:
    s = torch.linalg.svdvals(A)
    return float(rank_tolerance(s, tuple(A.shape))) if len(s) else 0.0


def lemma3_w_plus(E: torch.Tensor, e: torch.Tensor, new: list[int], old: list[int],
                  seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    """Rank-one W+ = c w^T of Lemma 3: E^(t) W+ e^(t) = 0 on ``new``, distinct logits on ``old``.

    w is a random unit vector orthogonal to the new queries, c a random unit vector (eqs. 22-23);
    returns (c, w). Raises when the data break the lemma's hypotheses (Assumptions 1 and 2).

    >>> E, e = make_dataset(4, 2, 3, seed=1)
    >>> c, w = lemma3_w_plus(E, e, new=[3], old=[0, 1, 2])
    >>> float((E[3] @ c * (w @ e[3])).abs().max()) < 1e-15   # zero logits on the new example
    True
    """
    T, n, d = _check_data(E, e)
    g = torch.Generator().manual_seed(seed)
    Qn = e[new].T  # (d, m): the new queries as columns
    if len(new):
        U = torch.linalg.svd(Qn, full_matrices=True)[0]  # (d, d)
        m_rank = int(numerical_rank(Qn))
        if m_rank < len(new):
            raise AttnbookError(f"Assumption 1 violated: queries of examples {new} are linearly "
                                f"dependent (rank {m_rank} < {len(new)})")
        perp = U[:, len(new):]  # (d, d-m): orthonormal basis of the complement
    else:
        perp = torch.eye(d, dtype=F64)
    w = perp @ torch.randn(perp.shape[1], generator=g, dtype=F64)
    w = w / w.norm()
    cvec = torch.randn(d, generator=g, dtype=F64)
    cvec = cvec / cvec.norm()
    if old:
        proj = e[old] @ w  # (T',): w^T e^(t), nonzero iff e^(t) is not in span of the new queries
        scale = e[old].norm(dim=1) * float(torch.finfo(F64).eps) * d * 10
        bad = [old[i] for i in (proj.abs() <= scale).nonzero().flatten().tolist()]
        if bad:
            raise AttnbookError(f"Assumption 1 violated: queries of examples {bad[:5]} lie in the "
                                f"span of the queries of examples {new}")
        alpha = (E[old] @ cvec) * proj[:, None]  # (T', n): logits of W+
        top2 = alpha.topk(min(2, n), dim=1).values
        if n > 1 and bool((top2[:, 0] - top2[:, 1] <= 0).any()):
            raise AttnbookError("Assumption 2 violated: an old example has two equal context "
                                "tokens (Lemma 3 needs distinct logits)")
    return cvec, w


def saturation_scale(alpha_star: torch.Tensor, alpha_plus: torch.Tensor,
                     delta: float) -> torch.Tensor:
    """Smallest c with ||softmax(a* + c a+) - onehot(argmax a+)||_1 < delta by Lemma 4's bound.

    Uses ||.||_1 = 2 sum_{j != i*} theta_j < 2 (n-1) exp(max_j(a*_j - a*_{i*}) - c g), g the gap
    between the two largest entries of a+; per row of ``(T', n)`` inputs.

    >>> a_plus = torch.tensor([[1.0, 0.0]], dtype=torch.float64)
    >>> c = saturation_scale(torch.zeros(1, 2, dtype=torch.float64), a_plus, 0.01)
    >>> round(float(c), 4)
    5.2983
    >>> th = torch.softmax(c * a_plus, -1); float(2 * th[0, 1]) < 0.01
    True
    """
    T_, n = alpha_plus.shape
    if n == 1:
        return torch.zeros(T_, dtype=F64)
    top2 = alpha_plus.topk(2, dim=1)
    gap = top2.values[:, 0] - top2.values[:, 1]  # (T',)
    istar = top2.indices[:, 0]
    a_top = alpha_star.gather(1, istar[:, None])  # (T', 1)
    spread = (alpha_star - a_top).amax(dim=1)  # (T',): max_j a*_j - a*_{i*}
    return torch.clamp((spread + math.log(2 * (n - 1) / delta)) / gap, min=0.0)


@dataclass(frozen=True)
class Construction:
    """The key/query weights of Proposition 1, with what each induction step measured."""

    W_K: torch.Tensor  # (H, d, d_h)
    W_Q: torch.Tensor  # (H, d, d_h)
    r: int  # min(n, d_h, Q)
    heads: pd.DataFrame  # one row per head: examples fitted, c, delta, saturation, rank

    @property
    def naive_exp_overflows(self) -> bool:
        """Whether some logit c*|alpha+| exceeds 709.78, where exp() without max-shift overflows."""
        return bool((self.heads["c_alpha_max"] > LOG_FLOAT64_MAX).any())


def _head_logits(E, e, WK, WQ):
    return torch.einsum("tia,ak,bk,tb->ti", E, WK, WQ, e)  # (T, n): E W_K W_Q^T e


def construct_attention(E: torch.Tensor, e: torch.Tensor, H: int, d_h: int, *,
                        Q: int | None = None, seed: int = 0, check: bool = True) -> Construction:
    """Key/query weights with rank(Z) >= min(H(r-1)+1, T), r = min(n, d_h) (mahdavi2024, Prop. 1).

    Head 1 fits examples 0..r-1 (Claim 1); head h >= 2 fits the next r-1 examples with
    W = W* + c W+ (Claim 2): W+ from Lemma 3, W* solving E^(t) W* e^(t) = alpha*^(t) for random
    target logits alpha* (sub-step 1.A; any generic target gives rank(Z''_b + A_+) = r-1), and c
    from the delta of Appendix B.2 through Lemma 4. W = [B, c c_vec] [pinv(e_R); w^T] is
    factored exactly into W_K, W_Q of width m+1 <= r <= d_h (zero-padded to d_h).
    ``Q``: Kruskal rank of the queries when below n (Remark 1); r becomes min(Q, d_h).

    >>> E, e = make_dataset(5, 3, 4, seed=0)
    >>> con = construct_attention(E, e, H=2, d_h=3)
    >>> con.r, con.heads["rank_after"].tolist()   # rank(Z) on the examples used so far: 3, then 5
    (3, [3, 5])
    """
    T, n, d = _check_data(E, e)
    E, e = E.to(F64), e.to(F64)
    _pos_int("H", H)
    if not isinstance(d_h, (int, np.integer)) or d_h < 1:
        raise ParameterError("d_h", d_h, "an integer >= 1 (mahdavi2024, Theorem 1)")
    if not n < d:
        raise ParameterError("n", n, f"n < d = {d} (mahdavi2024, Theorem 1)")
    if Q is not None and (not isinstance(Q, (int, np.integer)) or not 1 <= Q <= n):
        raise ParameterError("Q", Q, f"an integer in [1, n = {n}] (mahdavi2024, Remark 1)")
    r = min(n, d_h) if Q is None else min(Q, d_h)
    bound = H * (r - 1) + 1
    if T > bound:
        raise ParameterError("T", T, f"T <= H(r-1)+1 = {bound} (r = {r}; mahdavi2024, Theorem 1)")
    if check:
        a2 = assumption2(E)
        if not a2:
            raise AttnbookError(f"Assumption 2 violated: {a2.detail}")
        k = min(r, T)  # the construction needs every k queries independent
        a1 = assumption1(e, k, method="exact" if math.comb(T, k) <= 2000 else "randomized",
                         n_draws=500, fraction=1.0, seed=seed)
        if not a1:
            raise AttnbookError(f"Assumption 1 violated (needed Kruskal rank >= {k}): {a1.detail}")
    g = torch.Generator().manual_seed(seed)
    e_max = float(E.norm(dim=-1).max())  # largest context-token norm (Appendix B.2)
    Ep = torch.linalg.pinv(E)  # (T, d, n): right inverses, E E^+ = I_n under Assumption 2
    W_K = torch.zeros(H, d, d_h, dtype=F64)
    W_Q = torch.zeros(H, d, d_h, dtype=F64)
    Zs = []  # per-head blocks (T, d) of Z, computed with the actual finite weights
    used: list[int] = []
    rows = []
    for h in range(H):
        m = min(r if h == 0 else r - 1, T - len(used))
        new = list(range(len(used), len(used) + m))
        old = list(used)
        info = {"head": h + 1, "m": m, "T_old": len(old), "c": 0.0, "delta": float("nan"),
                "sigma_min_M": float("nan"), "C_norm": float("nan"), "min_gap": float("nan"),
                "c_alpha_max": 0.0, "new_logit_leak": 0.0, "sat_l1_max": float("nan"),
                "sat_theta_min": float("nan")}
        if m == 0:  # nothing left to fit: an idle head (W = 0) cannot lower the rank
            Zs.append(torch.einsum("ti,tia->ta", torch.full((T, n), 1.0 / n, dtype=F64), E))
            info["rank_after"] = int(numerical_rank(torch.cat(Zs, 1)[used]))
            rows.append(info)
            continue
        Qn = e[new].T  # (d, m): new queries as columns
        if int(numerical_rank(Qn)) < m:
            raise AttnbookError(f"Assumption 1 violated: queries of examples {new} are linearly "
                                f"dependent")
        Qn_pinv = torch.linalg.pinv(Qn)  # (m, d): W* = B Qn^+ gives W* e^(t_j) = B[:, j]
        if h == 0:
            # Claim 1: any targets; generic random logits give r independent rows of Z.
            alpha_star = torch.randn(m, n, generator=g, dtype=F64)  # (m, n)
            B = torch.einsum("jan,jn->aj", Ep[new], alpha_star)  # (d, m): E^+ alpha*
            WK, WQ = B, Qn_pinv.T  # (d, m), (d, m)
        else:
            Zprev = torch.cat(Zs, dim=1)  # (T, h d)
            Za, Zb = Zprev[old], Zprev[new]  # (T', h d), (m, h d)
            C = Zb @ torch.linalg.pinv(Za)  # (m, T'): coefficients of the row operations
            cvec, w = lemma3_w_plus(E, e, new, old, seed=seed * 1009 + h)
            alpha_plus = (E[old] @ cvec) * (e[old] @ w)[:, None]  # (T', n): logits of W+
            istar = alpha_plus.argmax(dim=1)
            Za_plus = E[old, istar]  # (T', d): limit rows E^T onehot(argmax) (sub-step 1.B)
            for _attempt in range(5):
                alpha_star_new = torch.randn(m, n, generator=g, dtype=F64)  # (m, n) targets
                Zb_new = torch.einsum("jn,jna->ja", torch.softmax(alpha_star_new, -1), E[new])
                M_plus = Zb_new - C @ Za_plus  # (m, d): Z''_{b,+} + A_+ of eq. (16)
                s = torch.linalg.svdvals(M_plus)
                if s[-1] > rank_tolerance(s, tuple(M_plus.shape)) * 1e3:
                    break
            else:
                raise AttnbookError(f"head {h + 1}: no target logits gave rank(Z''_b + A) = {m}; "
                                    f"the data violate Assumption 2")
            B = torch.einsum("jan,jn->aj", Ep[new], alpha_star_new)  # (d, m)
            C_norm = float(torch.linalg.matrix_norm(C, ord=2))
            sigma_min = float(s[-1])
            # Appendix B.2: delta = sigma_min(Z''_b,+ + A_+) / (sqrt(T') e_max ||C||_2)
            delta = sigma_min / (math.sqrt(len(old)) * e_max * C_norm) if C_norm > 0 else 2.0
            alpha_star_old = torch.einsum("tia,ab,tb->ti", E[old], B @ Qn_pinv, e[old])  # (T', n)
            c_t = saturation_scale(alpha_star_old, alpha_plus, min(delta, 2.0))
            c = float(c_t.max())
            WK = torch.cat([B, c * cvec[:, None]], dim=1)  # (d, m+1)
            WQ = torch.cat([Qn_pinv.T, w[:, None]], dim=1)  # (d, m+1)
            top2 = alpha_plus.topk(2, dim=1).values if n > 1 else alpha_plus
            # property (i) of sub-step 1.B in float64: zero in exact arithmetic, c x rounding here
            leak = c * float(((E[new] @ cvec) * (e[new] @ w)[:, None]).abs().max())
            info.update(c=c, delta=delta, sigma_min_M=sigma_min, C_norm=C_norm, new_logit_leak=leak,
                        min_gap=float((top2[:, 0] - top2[:, -1]).min()),
                        c_alpha_max=c * float(alpha_plus.abs().max()))
        W_K[h, :, : WK.shape[1]] = WK
        W_Q[h, :, : WQ.shape[1]] = WQ
        theta = torch.softmax(_head_logits(E, e, W_K[h], W_Q[h]), dim=-1)  # (T, n)
        Zs.append(torch.einsum("ti,tia->ta", theta, E))  # (T, d)
        if old:
            onehot = torch.nn.functional.one_hot(istar, n).to(F64)
            info["sat_l1_max"] = float((theta[old] - onehot).abs().sum(1).max())
            info["sat_theta_min"] = float(theta[old].max(1).values.min())
        used += new
        info["rank_after"] = int(numerical_rank(torch.cat(Zs, 1)[used]))
        rows.append(info)
    return Construction(W_K, W_Q, r, pd.DataFrame(rows))


def solve_values(Z: torch.Tensor, Y: torch.Tensor, H: int, d_v: int | None = None
                 ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Step 2 of the proof of Theorem 1: W_V with Z W_V = [Y, 0], W_O = [I; ...; I], W_D = I.

    Needs rank(Z) = T (full row rank); returns W_V (H, d, d_v), W_O (H d_v, d), W_D (d, d_out).

    >>> Z = torch.eye(2, 4, dtype=torch.float64)
    >>> Y = torch.tensor([[3.0], [5.0]], dtype=torch.float64)
    >>> W_V, W_O, W_D = solve_values(Z, Y, H=2)
    >>> (Z @ W_V.reshape(4, -1)).tolist()
    [[3.0], [5.0]]
    """
    T, Hd = Z.shape
    if Y.ndim != 2 or Y.shape[0] != T:
        raise ParameterError("Y", f"shape {tuple(Y.shape)}",
                             f"labels of shape (T, d_out) = ({T}, d_out)")
    d_out = Y.shape[1]
    if Hd % H:
        raise ParameterError("H", H, f"a divisor of Z's width {Hd}")
    d = Hd // H
    d_v = d_out if d_v is None else d_v
    if not d_out <= d_v <= d:
        raise ParameterError("d_v", d_v, f"d_out = {d_out} <= d_v <= d = {d} (mahdavi2024, Step 2)")
    rank = int(numerical_rank(Z))
    if rank < T:
        raise AttnbookError(f"Step 2 needs rank(Z) = T = {T} (full row rank), got rank {rank}")
    target = torch.cat([Y.to(F64), torch.zeros(T, d_v - d_out, dtype=F64)], dim=1)  # (T, d_v)
    W_V = torch.linalg.pinv(Z) @ target  # (H d, d_v): minimum-norm solution of Z W_V = target
    W_O = torch.eye(d_v, d, dtype=F64).repeat(H, 1)  # (H d_v, d): stacked I_{d_v x d}
    W_D = torch.eye(d, d_out, dtype=F64)  # (d, d_out)
    return W_V.reshape(H, d, d_v), W_O, W_D


def memorize(E: torch.Tensor, e: torch.Tensor, Y: torch.Tensor, H: int, d_h: int, *,
             d_v: int | None = None, Q: int | None = None, seed: int = 0) -> dict:
    """Theorem 1 end to end: build the layer, run it, and measure rank(Z) and the label error.

    Returns weights, construction, Z, rank, bound and ``max_rel_err`` = max|y_hat - y| / max|y|.

    >>> E, e = make_dataset(5, 3, 4, seed=0); Y = torch.rand(5, 2, dtype=torch.float64)
    >>> res = memorize(E, e, Y, H=2, d_h=3)
    >>> res["rank"], res["bound"], res["max_rel_err"] < 1e-8
    (5, 5, True)
    """
    T, n, d = _check_data(E, e)
    con = construct_attention(E, e, H, d_h, Q=Q, seed=seed)
    zero = MHAWeights(con.W_K, con.W_Q, torch.zeros(H, d, 1, dtype=F64),
                      torch.zeros(H, d, dtype=F64), torch.zeros(d, 1, dtype=F64))
    Z = mha_forward(E, e, zero).Z  # (T, H d)
    W_V, W_O, W_D = solve_values(Z, Y, H, d_v)
    w = MHAWeights(con.W_K, con.W_Q, W_V, W_O, W_D)
    y_hat = mha_forward(E, e, w).y_hat
    scale = float(Y.abs().max()) or 1.0
    return {"weights": w, "construction": con, "Z": Z, "rank": int(numerical_rank(Z)),
            "bound": memorization_lower_bound(H, n, d_h, Q), "y_hat": y_hat,
            "max_rel_err": float((y_hat - Y).abs().max()) / scale,
            "cond_Z": float(torch.linalg.cond(Z))}


# --------------------------------------------------------------------------------------------
# Upper bounds on rank(Z): many weight draws at once (Propositions 2 and 5)
# --------------------------------------------------------------------------------------------
def attention_features(E: torch.Tensor, e: torch.Tensor, W_K: torch.Tensor,
                       W_Q: torch.Tensor) -> torch.Tensor:
    """Z of eq. (7) for a batch of weight draws: W_K, W_Q (B, H, d, d_h) -> Z (B, T, H d).

    >>> E, e = make_dataset(3, 2, 3, shared=True)
    >>> attention_features(E, e, torch.zeros(5, 2, 3, 1), torch.zeros(5, 2, 3, 1)).shape
    torch.Size([5, 3, 6])
    """
    T, n, d = _check_data(E, e)
    B, H = W_K.shape[:2]
    q = torch.einsum("bhak,ta->bthk", W_Q.to(E.dtype), e)  # (B, T, H, d_h)
    k = torch.einsum("tia,bhak->bthik", E, W_K.to(E.dtype))  # (B, T, H, n, d_h)
    theta = torch.softmax(torch.einsum("bthik,bthk->bthi", k, q), dim=-1)  # (B, T, H, n)
    return torch.einsum("bthi,tia->btha", theta, E).reshape(B, T, H * d)  # (B, T, H d)


def _random_kq(B, H, d, d_h, scale, g):
    W_K = torch.randn(B, H, d, d_h, generator=g, dtype=F64) * scale / math.sqrt(d)
    W_Q = torch.randn(B, H, d, d_h, generator=g, dtype=F64) * scale / math.sqrt(d)
    return W_K, W_Q


def random_feature_ranks(E: torch.Tensor, e: torch.Tensor, H: int, d_h: int, *, draws: int = 100,
                         scale: float = 1.0, seed: int = 0) -> np.ndarray:
    """rank(Z) for ``draws`` random Gaussian key/query weights (entries N(0, scale^2/d)).

    >>> E, e = make_dataset(12, 3, 5, shared=True)
    >>> sorted(set(random_feature_ranks(E, e, H=2, d_h=5, draws=20).tolist()))   # H(n-1)+1 = 5
    [5]
    """
    T, n, d = _check_data(E, e)
    g = torch.Generator().manual_seed(seed)
    W_K, W_Q = _random_kq(draws, H, d, d_h, scale, g)
    return numerical_rank(attention_features(E, e, W_K, W_Q)).numpy()


def adversarial_rank_search(E: torch.Tensor, e: torch.Tensor, H: int, d_h: int, k: int, *,
                            restarts: int = 8, steps: int = 300, lr: float = 0.05,
                            seed: int = 0) -> pd.DataFrame:
    """Adam on key/query weights to push up sigma_k(Z)/sigma_1(Z), the k-th singular value.

    With k = bound + 1, an upper bound on rank(Z) holds only if this ratio stays at rounding
    level however hard the optimizer pushes. Returns, per restart, the ratios
    sigma_{k-1}/sigma_1 and sigma_k/sigma_1 at the end and the rank of Z.

    >>> E, e = make_dataset(8, 2, 4, shared=True)
    >>> df = adversarial_rank_search(E, e, H=2, d_h=4, k=4, restarts=2, steps=20)
    >>> bool((df["rank"] <= 3).all()), bool((df["ratio_k"] < 1e-12).all())
    (True, True)
    """
    T, n, d = _check_data(E, e)
    if not 2 <= k <= min(T, H * d):
        raise ParameterError("k", k, f"2 <= k <= min(T, H d) = {min(T, H * d)}")
    g = torch.Generator().manual_seed(seed)
    W_K, W_Q = (w.requires_grad_() for w in _random_kq(restarts, H, d, d_h, 1.0, g))
    opt = torch.optim.Adam([W_K, W_Q], lr=lr)
    for _ in range(steps):
        opt.zero_grad()
        s = torch.linalg.svdvals(attention_features(E, e, W_K, W_Q))  # (R, min(T, H d))
        loss = -(torch.log(s[:, k - 1] + 1e-300) - torch.log(s[:, 0])).sum()
        loss.backward()
        opt.step()
    with torch.no_grad():
        Z = attention_features(E, e, W_K, W_Q)
        s = torch.linalg.svdvals(Z)
        return pd.DataFrame({"ratio_k_minus_1": (s[:, k - 2] / s[:, 0]).numpy(),
                             "ratio_k": (s[:, k - 1] / s[:, 0]).numpy(),
                             "rank": numerical_rank(Z).numpy()})


# --------------------------------------------------------------------------------------------
# Proposition 3: the two-layer ReLU network
# --------------------------------------------------------------------------------------------
def _relu_fcn(X, W1, b1, W2, b2):
    return torch.relu(X @ W1 + b1) @ W2 + b2  # W_2^T ReLU(W_1^T x + b_1) + b_2, row form


def relu_fcn_jacobian_rank(X: torch.Tensor, m: int, d_out: int, *, points: int = 3,
                           seed: int = 0) -> list[int]:
    """Rank of d(outputs)/d(parameters) of a 2-layer ReLU net at random parameters (Prop. 3).

    The outputs on T inputs form a (T d_out)-vector; the rank bounds the dimension of the set of
    reachable label vectors near that point.

    >>> X = torch.randn(6, 3, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    >>> max(relu_fcn_jacobian_rank(X, m=1, d_out=1)) <= relu_fcn_parameter_count(3, 1, 1)
    True
    """
    T, d_in = X.shape
    g = torch.Generator().manual_seed(seed)
    ranks = []
    for _ in range(points):
        W1 = torch.randn(d_in, m, generator=g, dtype=F64) / math.sqrt(d_in)
        b1 = torch.randn(m, generator=g, dtype=F64) * 0.1
        W2 = torch.randn(m, d_out, generator=g, dtype=F64) / math.sqrt(m)
        pre = X @ W1 + b1  # (T, m)
        act, mask = torch.relu(pre), (pre > 0).to(F64)
        I = torch.eye(d_out, dtype=F64)
        J_W1 = torch.einsum("ta,tj,jo->toaj", X, mask, W2).reshape(T * d_out, d_in * m)
        J_b1 = torch.einsum("tj,jo->toj", mask, W2).reshape(T * d_out, m)
        J_W2 = torch.einsum("tj,op->tojp", act, I).reshape(T * d_out, m * d_out)
        J_b2 = I.repeat(T, 1)  # (T d_out, d_out)
        J = torch.cat([J_W1, J_b1, J_W2, J_b2], dim=1)  # (T d_out, P): d outputs / d params
        ranks.append(int(numerical_rank(J)))
    return ranks


def fcn_reduction_error(n: int, d: int, m: int, d_out: int, *, sign: float = 1.0, T: int = 8,
                        seed: int = 0) -> float:
    """Max |f'(x_FCN) - f(x)| when Appendix F's bias is b'_1 + sign W'_1[:, :K] c_FCN (Prop. 3).

    Appendix F maps a net f' on x_FCN = [c_FCN; x] to a net f on x in R^n, keeping the last n
    input columns of W'_1 and folding the constant part into the bias. The right fold is
    sign = +1; the text writes b'_1 - W'_1[...]^T c_FCN (sign = -1).

    >>> fcn_reduction_error(3, 5, 4, 2) < 1e-12, fcn_reduction_error(3, 5, 4, 2, sign=-1.0) > 1e-3
    (True, True)
    """
    E, e = fcn_hard_dataset(T, n, d, seed=seed)
    X_fcn = torch.cat([E.reshape(T, -1), e], dim=1)  # (T, (n+1) d) = [c_FCN; 0_{d-n}; x]
    K = (n + 1) * d - n  # length of c_FCN (eq. 29)
    c_fcn, x = X_fcn[0, :K], X_fcn[:, K:]  # (K,), (T, n)
    g = torch.Generator().manual_seed(seed)
    W1p = torch.randn((n + 1) * d, m, generator=g, dtype=F64)  # W'_1, row form: x^T W'_1
    b1p = torch.randn(m, generator=g, dtype=F64)
    W2 = torch.randn(m, d_out, generator=g, dtype=F64)
    b2 = torch.randn(d_out, generator=g, dtype=F64)
    full = _relu_fcn(X_fcn, W1p, b1p, W2, b2)  # (T, d_out)
    reduced = _relu_fcn(x, W1p[K:], b1p + sign * (c_fcn @ W1p[:K]), W2, b2)
    return float((full - reduced).abs().max())


def train_relu_fcn(X: torch.Tensor, Y: torch.Tensor, m: int, *, restarts: int = 4,
                   steps: int = 2000, lr: float = 1e-2, seed: int = 0) -> np.ndarray:
    """Full-batch Adam on ``restarts`` stacked 2-layer ReLU nets; relative residual of each.

    Residual = ||f(X) - Y||_F / ||Y||_F after training (float64, one batched program).

    >>> X = torch.eye(3, dtype=torch.float64); Y = torch.ones(3, 1, dtype=torch.float64)
    >>> float(train_relu_fcn(X, Y, m=2, restarts=2, steps=1000, lr=3e-2).min()) < 1e-6
    True
    """
    T, d_in = X.shape
    d_out = Y.shape[1]
    g = torch.Generator().manual_seed(seed)
    R = restarts
    W1 = (torch.randn(R, d_in, m, generator=g, dtype=F64) / math.sqrt(d_in)).requires_grad_()
    b1 = torch.zeros(R, 1, m, dtype=F64).requires_grad_()
    W2 = (torch.randn(R, m, d_out, generator=g, dtype=F64) / math.sqrt(m)).requires_grad_()
    b2 = torch.zeros(R, 1, d_out, dtype=F64).requires_grad_()
    opt = torch.optim.Adam([W1, b1, W2, b2], lr=lr)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, steps)
    for _ in range(steps):
        opt.zero_grad()
        out = torch.relu(X @ W1 + b1) @ W2 + b2  # (R, T, d_out)
        loss = ((out - Y) ** 2).sum()
        loss.backward()
        opt.step()
        sched.step()
    with torch.no_grad():
        out = torch.relu(X @ W1 + b1) @ W2 + b2
        res = ((out - Y) ** 2).sum((1, 2)).sqrt() / Y.norm()
    return res.numpy()


# --------------------------------------------------------------------------------------------
# The chapter's checks, one table each (notebooks/mahdavi2024_theory.ipynb)
# --------------------------------------------------------------------------------------------
def theorem1_check(H: int, n: int, d: int, d_h: int, d_out: int, context: str = "per_example",
                   Q: int | None = None, seed: int = 0) -> dict:
    """Theorem 1 (or Remark 1 with Q < n) at one setting: T = bound examples, random U(0,1) labels.

    Contexts are U(0,1) tokens plus sinusoidal positional encodings (Section 3), drawn per
    example or shared; queries have Kruskal rank Q when given. Returns scalars for a table.

    >>> r = theorem1_check(2, 3, 4, 3, 2)
    >>> r["T"], r["rank"], r["increments_ok"], r["max_rel_err"] < 1e-8
    (5, 5, True, True)
    """
    if context not in ("per_example", "shared"):
        raise ParameterError("context", context, "per_example or shared")
    T = memorization_lower_bound(H, n, d_h, Q)
    E, e = make_dataset(T, n, d, shared=context == "shared", positional=True, dist="uniform",
                        query_rank=Q, seed=seed)
    Y = torch.rand(T, d_out, generator=torch.Generator().manual_seed(seed + 1), dtype=F64)
    res = memorize(E, e, Y, H, d_h, d_v=d_out, Q=Q, seed=seed)
    heads = res["construction"].heads
    r = res["construction"].r
    alpha = mha_forward(E, e, res["weights"]).alpha  # (T, H, n)
    naive = torch.exp(alpha) / torch.exp(alpha).sum(-1, keepdim=True)  # softmax without max-shift
    expected = [min(r + (h - 1) * (r - 1), T) for h in range(1, H + 1)]
    later = heads[heads["T_old"] > 0]
    return {
        "T": T, "bound": res["bound"], "rank": res["rank"], "max_rel_err": res["max_rel_err"],
        "cond_Z": res["cond_Z"], "increments_ok": heads["rank_after"].tolist() == expected,
        "c_max": float(heads["c"].max()), "c_per_head": heads["c"].tolist(),
        "delta_min": float(later["delta"].min()) if len(later) else float("nan"),
        "saturated_within_delta": bool((later["sat_l1_max"] < later["delta"]).all()),
        "sat_theta_min": float(later["sat_theta_min"].min()) if len(later) else float("nan"),
        "c_alpha_max": float(heads["c_alpha_max"].max()),
        "c_alpha_per_head": heads["c_alpha_max"].tolist(),
        "new_logit_leak_max": float(heads["new_logit_leak"].max()),
        "delta_per_head": heads["delta"].tolist(),
        "unsaturation_per_head": heads["sat_l1_max"].tolist(),
        "naive_exp_overflow": res["construction"].naive_exp_overflows,
        "naive_softmax_nonfinite": int((~torch.isfinite(naive)).any(-1).sum()),  # (t, h) pairs
    }


def rank_upper_bound_table(kind: str, H_values, n: int, d: int, *, extra_rows: int = 4,
                           draws: int = 100, restarts: int = 4, steps: int = 100,
                           seed: int = 0) -> pd.DataFrame:
    """Propositions 2 (``kind="shared"``) and 5 (``"constant_sum"``): rank(Z) against its bound.

    For each H: T = bound + ``extra_rows`` examples, so rank(Z) could exceed the bound; the
    largest rank over ``draws`` random weight draws (and the share reaching the bound); the
    adversarial search pushing sigma_{bound+1}(Z); and, as a control, the random rank on
    per-example unconstrained contexts of the same size. d_h = d (Proposition 5's setting).

    >>> rank_upper_bound_table("shared", [2], 3, 5, draws=5, restarts=1, steps=2)[
    ...     ["bound", "max_rank", "adv_max_rank"]].values.tolist()
    [[5, 5, 5]]
    """
    rows = []
    for H in H_values:
        if kind == "shared":
            bound = shared_context_bound(H, n)
            kw = {"shared": True}
        elif kind == "constant_sum":
            bound = constant_sum_bound(H, d)
            kw = {"token_sum": 1.0}
        else:
            raise ParameterError("kind", kind, "shared or constant_sum")
        T = bound + extra_rows
        E, e = make_dataset(T, n, d, seed=seed + H, **kw)
        ranks = random_feature_ranks(E, e, H, d, draws=draws, seed=seed + H)
        row = {"H": H, "n": n, "d": d, "T": T, "bound": bound, "width_Hd": H * d,
               "max_rank": int(ranks.max()), "share_at_bound": float((ranks == bound).mean())}
        if bound + 1 <= min(T, H * d):
            adv = adversarial_rank_search(E, e, H, d, bound + 1, restarts=restarts, steps=steps,
                                          seed=seed + H)
            row.update(adv_max_rank=int(adv["rank"].max()),
                       adv_max_ratio=float(adv["ratio_k"].max()),
                       adv_min_ratio_at_bound=float(adv["ratio_k_minus_1"].min()))
        E0, e0 = make_dataset(T, n, d, seed=seed + H)
        row["control_rank"] = int(random_feature_ranks(E0, e0, H, d, draws=3, seed=seed).max())
        rows.append(row)
    return pd.DataFrame(rows)


def proposition4_table(draws: int, T: int, n: int, d: int, seed: int = 0) -> pd.DataFrame:
    """Proposition 4: a [CLS] query breaks Assumption 1; the trivial layer A_0 restores it.

    Each draw: self-attention examples whose first token (the query) is one shared [CLS]
    vector plus pos_0, the others U(0,1) plus positional encodings. Assumptions are tested
    exactly (all n-subsets) before and after A_0.

    >>> df = proposition4_table(1, 6, 2, 4)
    >>> df[["in_asm1", "in_asm3", "out_asm1", "out_asm2"]].values.tolist()
    [[False, True, True, True]]
    """
    rows = []
    for k in range(draws):
        g = torch.Generator().manual_seed(seed + k)
        E = torch.rand(T, n, d, generator=g, dtype=F64)
        E[:, 0] = torch.rand(d, generator=g, dtype=F64)  # the same [CLS] token in every example
        E = E + positional_encoding(n, d)
        e = E[:, 0]  # self-attention: the query is the first context token
        Ep, ep = trivial_attention_skip(E, e)
        rows.append({"draw": k, "in_asm1": assumption1(e, n, method="exact").holds,
                     "in_asm2": assumption2(E).holds,
                     "in_asm3": assumption3(E, e, method="exact").holds,
                     "out_asm1": assumption1(ep, n, method="exact").holds,
                     "out_asm2": assumption2(Ep).holds})
    return pd.DataFrame(rows)


def proposition3_table(n: int, d: int, H: int, d_out: int, m_values, *, restarts: int = 4,
                       steps: int = 2000, lr: float = 1e-2, seed: int = 0) -> pd.DataFrame:
    """Proposition 3 on the dataset of Appendix F: ReLU nets of m units against one MHA layer.

    The MHA (d_h = n, d_v = d_out) is built by Theorem 1 on T = H(n-1)+1 examples of Appendix
    F with N(0,1) labels. For each m: parameter counts, the bound (n+1)m/d_out + m + 1, the
    output-Jacobian rank of the ReLU net on the flattened inputs (at 3 random points) against
    T d_out, and the smallest relative training residual over ``restarts`` Adam runs.

    >>> df = proposition3_table(4, 5, 2, 2, [1], restarts=1, steps=10)
    >>> df[["model", "T"]].values.tolist()
    [['MHA', 7], ['ReLU m=1', 7]]
    """
    T = H * (n - 1) + 1
    E, e = fcn_hard_dataset(T, n, d, seed=seed)
    Y = torch.randn(T, d_out, generator=torch.Generator().manual_seed(seed + 1), dtype=F64)
    mha = memorize(E, e, Y, H, n, d_v=d_out, seed=seed)
    rows = [{"model": "MHA", "params": mha_parameter_count(H, d, n, d_out, d_out), "T": T,
             "bound": float(memorization_lower_bound(H, n, n)), "jacobian_rank": np.nan,
             "reduced_params": np.nan, "T_d_out": T * d_out,
             "residual": mha["max_rel_err"]}]
    X = torch.cat([E.reshape(T, -1), e], dim=1)  # (T, (n+1) d): x_FCN of Section 4.3
    for m in m_values:
        ranks = relu_fcn_jacobian_rank(X, m, d_out, seed=seed + m)
        res = train_relu_fcn(X, Y, m, restarts=restarts, steps=steps, lr=lr, seed=seed + m)
        rows.append({"model": f"ReLU m={m}",
                     "params": relu_fcn_parameter_count((n + 1) * d, m, d_out),
                     "T": T, "bound": relu_fcn_bound(n, m, d_out), "jacobian_rank": max(ranks),
                     "reduced_params": relu_fcn_parameter_count(n, m, d_out), "T_d_out": T * d_out,
                     "residual": float(res.min())})
    return pd.DataFrame(rows)
