"""The proof of Theorem 1 of mahdavi2024 as an algorithm: Proposition 1 step by step.

Head 1 fits r examples (Claim 1); each further head fits r-1 new ones with W = W* + c W+,
where W+ is the rank-one matrix of Lemma 3 (zero logits on the new examples, distinct logits
on the old ones), W* solves sub-step 1.A for the target rows, and c is the finite scale of
Appendix B.2 / Lemma 4; r = min(n, d_h, Q) with Q the queries' Kruskal rank (Theorem 1,
Remark 1). Step 2 solves Z W_V = Y (``solve_values``); ``memorize`` is the whole Theorem 1.

All in float64.

Used by: mahdavi2024_theory.
"""

import math
from dataclasses import dataclass

import pandas as pd
import torch

from ..engines.linalg import numerical_rank, rank_tolerance
from ..errors import AttnbookError, ParameterError, check_int
from .assumptions import assumption1, assumption2
from .attention import MHAWeights, check_data, mha_forward
from .bounds import memorization_lower_bound

__all__ = ["lemma3_w_plus", "saturation_scale", "Construction", "construct_attention",
           "solve_values", "memorize"]

F64 = torch.float64
LOG_FLOAT64_MAX = math.log(torch.finfo(F64).max)  # 709.78: exp() of a larger logit overflows


def lemma3_w_plus(E: torch.Tensor, e: torch.Tensor, new: list[int], old: list[int],
                  seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    """Rank-one W+ = c w^T of Lemma 3: E^(t) W+ e^(t) = 0 on ``new``, distinct logits on ``old``.

    w is a random unit vector orthogonal to the new queries, c a random unit vector (eqs. 22-23);
    returns (c, w). Raises when the data break the lemma's hypotheses (Assumptions 1 and 2).

    >>> from attnbook.mahdavi2024.attention import make_dataset
    >>> E, e = make_dataset(4, 2, 3, seed=1)
    >>> c, w = lemma3_w_plus(E, e, new=[3], old=[0, 1, 2])
    >>> float((E[3] @ c * (w @ e[3])).abs().max()) < 1e-15   # zero logits on the new example
    True
    """
    T, n, d = check_data(E, e)
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


def _checked_rank(E, e, H, d_h, Q, check, seed) -> int:
    """Check the inputs of :func:`construct_attention`; return r = min(n, d_h) (or min(Q, d_h))."""
    T, n, d = check_data(E, e)
    check_int("H", H, 1)
    check_int("d_h", d_h, 1, what="mahdavi2024, Theorem 1")
    if not n < d:
        raise ParameterError("n", n, f"n < d = {d} (mahdavi2024, Theorem 1)")
    if Q is not None:
        check_int("Q", Q, 1, n, allowed=f"an integer in [1, n = {n}] (mahdavi2024, Remark 1)")
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
    return r


def _later_head(E, e, Ep, Zs, new, old, B_seed, g, e_max):
    """Claim 2 for one head h >= 2: W = W* + c W+ fitting examples ``new`` while keeping the
    rows of ``old`` (Lemma 3, sub-steps 1.A and 1.B, Appendix B.2). Returns (W_K, W_Q) blocks
    of width m+1, the argmax of W+'s logits on ``old``, and the head's diagnostics."""
    n, m = E.shape[1], len(new)
    Qn_pinv = torch.linalg.pinv(e[new].T)  # (m, d): W* = B Qn^+ gives W* e^(t_j) = B[:, j]
    Zprev = torch.cat(Zs, dim=1)  # (T, h d)
    Za, Zb = Zprev[old], Zprev[new]  # (T', h d), (m, h d)
    C = Zb @ torch.linalg.pinv(Za)  # (m, T'): coefficients of the row operations
    cvec, w = lemma3_w_plus(E, e, new, old, seed=B_seed)
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
        raise AttnbookError(f"no target logits gave rank(Z''_b + A) = {m}; the data violate "
                            f"Assumption 2")
    B = torch.einsum("jan,jn->aj", Ep[new], alpha_star_new)  # (d, m)
    C_norm = float(torch.linalg.matrix_norm(C, ord=2))
    sigma_min = float(s[-1])
    # Appendix B.2: delta = sigma_min(Z''_b,+ + A_+) / (sqrt(T') e_max ||C||_2)
    delta = sigma_min / (math.sqrt(len(old)) * e_max * C_norm) if C_norm > 0 else 2.0
    alpha_star_old = torch.einsum("tia,ab,tb->ti", E[old], B @ Qn_pinv, e[old])  # (T', n)
    c = float(saturation_scale(alpha_star_old, alpha_plus, min(delta, 2.0)).max())
    WK = torch.cat([B, c * cvec[:, None]], dim=1)  # (d, m+1)
    WQ = torch.cat([Qn_pinv.T, w[:, None]], dim=1)  # (d, m+1)
    top2 = alpha_plus.topk(2, dim=1).values if n > 1 else alpha_plus
    # property (i) of sub-step 1.B in float64: zero in exact arithmetic, c x rounding here
    leak = c * float(((E[new] @ cvec) * (e[new] @ w)[:, None]).abs().max())
    info = dict(c=c, delta=delta, sigma_min_M=sigma_min, C_norm=C_norm, new_logit_leak=leak,
                min_gap=float((top2[:, 0] - top2[:, -1]).min()),
                c_alpha_max=c * float(alpha_plus.abs().max()))
    return WK, WQ, istar, info


def construct_attention(E: torch.Tensor, e: torch.Tensor, H: int, d_h: int, *,
                        Q: int | None = None, seed: int = 0, check: bool = True) -> Construction:
    """Key/query weights with rank(Z) >= min(H(r-1)+1, T), r = min(n, d_h) (mahdavi2024, Prop. 1).

    Head 1 fits examples 0..r-1 (Claim 1); head h >= 2 fits the next r-1 examples with
    W = W* + c W+ (Claim 2): W+ from Lemma 3, W* solving E^(t) W* e^(t) = alpha*^(t) for random
    target logits alpha* (sub-step 1.A; any generic target gives rank(Z''_b + A_+) = r-1), and c
    from the delta of Appendix B.2 through Lemma 4. W = [B, c c_vec] [pinv(e_R); w^T] is
    factored exactly into W_K, W_Q of width m+1 <= r <= d_h (zero-padded to d_h).
    ``Q``: Kruskal rank of the queries when below n (Remark 1); r becomes min(Q, d_h).

    >>> from attnbook.mahdavi2024.attention import make_dataset
    >>> E, e = make_dataset(5, 3, 4, seed=0)
    >>> con = construct_attention(E, e, H=2, d_h=3)
    >>> con.r, con.heads["rank_after"].tolist()   # rank(Z) on the examples used so far: 3, then 5
    (3, [3, 5])
    """
    r = _checked_rank(E, e, H, d_h, Q, check, seed)
    E, e = E.to(F64), e.to(F64)
    T, n, d = E.shape
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
        new, old = list(range(len(used), len(used) + m)), list(used)
        info = {"head": h + 1, "m": m, "T_old": len(old), "c": 0.0, "delta": float("nan"),
                "sigma_min_M": float("nan"), "C_norm": float("nan"), "min_gap": float("nan"),
                "c_alpha_max": 0.0, "new_logit_leak": 0.0, "sat_l1_max": float("nan"),
                "sat_theta_min": float("nan")}
        if m == 0:  # nothing left to fit: an idle head (W = 0) cannot lower the rank
            Zs.append(torch.einsum("ti,tia->ta", torch.full((T, n), 1.0 / n, dtype=F64), E))
            info["rank_after"] = int(numerical_rank(torch.cat(Zs, 1)[used]))
            rows.append(info)
            continue
        if int(numerical_rank(e[new].T)) < m:
            raise AttnbookError(f"Assumption 1 violated: queries of examples {new} are linearly "
                                f"dependent")
        if h == 0:
            # Claim 1: any targets; generic random logits give r independent rows of Z.
            alpha_star = torch.randn(m, n, generator=g, dtype=F64)  # (m, n)
            WK = torch.einsum("jan,jn->aj", Ep[new], alpha_star)  # (d, m): E^+ alpha*
            WQ = torch.linalg.pinv(e[new].T).T  # (d, m)
        else:
            try:
                WK, WQ, istar, more = _later_head(E, e, Ep, Zs, new, old, seed * 1009 + h, g,
                                                  e_max)
            except AttnbookError as err:
                raise AttnbookError(f"head {h + 1}: {err}") from None
            info.update(more)
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

    >>> from attnbook.mahdavi2024.attention import make_dataset
    >>> E, e = make_dataset(5, 3, 4, seed=0); Y = torch.rand(5, 2, dtype=torch.float64)
    >>> res = memorize(E, e, Y, H=2, d_h=3)
    >>> res["rank"], res["bound"], res["max_rel_err"] < 1e-8
    (5, 5, True)
    """
    T, n, d = check_data(E, e)
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
