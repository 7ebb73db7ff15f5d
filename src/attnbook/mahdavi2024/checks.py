"""The checks of the mahdavi2024 theory chapter, one table each.

Theorem 1 on a grid of (H, n, d_h, d_out, context) (``theorem1_check``), the upper bounds of
Propositions 2 and 5 (``rank_upper_bound_table``), Proposition 4 (``proposition4_table``) and
Proposition 3 (``proposition3_table``), built from :mod:`~attnbook.mahdavi2024.construction`,
:mod:`~attnbook.mahdavi2024.feature_ranks` and :mod:`~attnbook.mahdavi2024.relu_fcn`.

Used by: mahdavi2024_theory.
"""

import numpy as np
import pandas as pd
import torch

from ..errors import ParameterError
from .assumptions import assumption1, assumption2, assumption3
from .attention import (
    fcn_hard_dataset,
    make_dataset,
    mha_forward,
    positional_encoding,
    trivial_attention_skip,
)
from .bounds import (
    constant_sum_bound,
    memorization_lower_bound,
    mha_parameter_count,
    relu_fcn_bound,
    relu_fcn_parameter_count,
    shared_context_bound,
)
from .construction import memorize
from .feature_ranks import adversarial_rank_search, random_feature_ranks
from .relu_fcn import relu_fcn_jacobian_rank, train_relu_fcn

__all__ = ["theorem1_check", "rank_upper_bound_table", "proposition4_table", "proposition3_table"]

F64 = torch.float64


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
    # heads that fit new examples while keeping old ones saturated; with r = 1 (d_h = 1)
    # heads 2..H fit none (r - 1 = 0): no W+, no delta, nothing to saturate
    later = heads[(heads["T_old"] > 0) & (heads["m"] > 0)]
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
    adversarial search pushing sigma_{bound+1}(Z) (NaN where bound = min(T, H d): no larger rank
    fits, as for Proposition 5 at H = 1); and, as a control, the random rank on
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
        row.update(adv_max_rank=np.nan, adv_max_ratio=np.nan, adv_min_ratio_at_bound=np.nan)
        if bound + 1 <= min(T, H * d):  # else no larger rank fits in Z: nothing to search
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
