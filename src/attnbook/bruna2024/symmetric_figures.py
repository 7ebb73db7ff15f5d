"""Figures and tables of bruna2024's symmetric functions, drawn from what the chapter computed:

* :func:`generator_summary` and :func:`basis_cases`: the power sums needed per degree beside
  the counts they should equal (B-ZB);
* :func:`separation_figure`: the Eckart-Young tail of the target's matrix against the slide's
  bound and one pairwise feature (B-ZB);
* :func:`trained_figure`: the trained DeepSets models and the pairwise model (B-ZB).

Each draws or arranges what the chapter measured (the tables of
:mod:`attnbook.bruna2024.symmetric`) and decides nothing; the figures of
bruna2024_lower_bound are in :mod:`attnbook.bruna2024.figures`.

Used by: bruna2024_symmetric.

>>> counts = pd.DataFrame({"d": 1, "N": 2, "needed": [1, 1, 0], "predicted": [1, 1, 0]})
>>> needed, predicted, total, size = basis_cases(counts)[0]  # p_1, p_2: 1 + 2 = C(3, 2)
>>> needed, predicted, int(total), size
([1, 1, 0], [1, 1, 0], 3, 3)
"""

from collections.abc import Sequence

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from ..engines.linalg import multi_indices
from . import symmetric as sy

__all__ = ["generator_summary", "basis_cases", "separation_figure", "trained_figure"]


def generator_summary(counts: pd.DataFrame) -> pd.DataFrame:
    """One row per (d, N) of ``counts`` (:func:`attnbook.bruna2024.symmetric.generator_counts`,
    concatenated): the power sums needed per degree, one plus their sum, the multi-indices
    with ``|alpha| <= N`` enumerated, and ``C(d+N, N)``: the last three should agree."""
    return pd.DataFrame(
        [
            {
                "d": dd,
                "N": NN,
                "needed by degree": " ".join(str(v) for v in t["needed"]),
                "1 + sum": 1 + t["needed"].sum(),
                "enumerated |alpha| <= N": len(multi_indices(int(dd), int(NN))),
                "C(d+N, N)": sy.powersum_basis_size(int(dd), int(NN)),
            }
            for (dd, NN), t in counts.groupby(["d", "N"])
        ]
    )


def basis_cases(counts: pd.DataFrame) -> list[tuple]:
    """Per (d, N) of ``counts``: (needed per degree, predicted per degree, 1 + needed in all,
    ``C(d+N, N)``), what B-ZB's power-sum basis part reads."""
    return [
        (t["needed"].tolist(), t["predicted"].tolist(), 1 + t["needed"].sum(),
         sy.powersum_basis_size(int(dd), int(NN)))
        for (dd, NN), t in counts.groupby(["d", "N"])
    ]


def separation_figure(sep: pd.DataFrame, *, N: int, d: int, D: int):
    """The Eckart-Young tail of ``sep`` (:func:`attnbook.bruna2024.symmetric.matrix_separation`
    with a ``zb_bound`` column) against the unary features H, the slide's bound dashed and the
    largest error of one pairwise feature as a horizontal line. Returns the figure."""
    fig, ax = plt.subplots(figsize=(5.5, 3.6))
    ax.plot(sep["H"], sep["eckart_young"], "o-", ms=3,
            label=r"rank-$H$ matrix part: $\sum_{i>H}\sigma_i(G)^2$")
    ax.plot(sep["H"], sep["zb_bound"], "k--", label=r"$\frac{1}{6}(1 - H/2^{\min(N/2, d-1)})$")
    ax.axhline(max(sep["pairwise_error"].max(), 1e-300), color="C2",
               label="one pairwise feature (error)")
    ax.set(xlabel="unary features H", ylabel="squared error (relative)",
           title=f"N = {N}, d = {d}, D = {D}")
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def _positive(v):
    return np.where(v > 0, v, np.nan)  # 0 has no place on a log axis


def trained_figure(unary: pd.DataFrame, sigma: Sequence[float], stored, *, pair_err: float,
                   near_zero: float, N: int, d: int, K: int, steps: int, max_H: int):
    """Left: the test error of the trained DeepSets models in ``unary`` (columns ``H``,
    ``test_error``) against H, with the Eckart-Young tail of the singular values ``sigma`` and
    the slide's bound on H = 0 .. ``max_H`` (log axis: zeros left out), the pairwise model's
    error ``pair_err`` and ``near_zero`` as horizontal lines. Right: the held-out error during
    training of every model of ``stored`` (a sweep row: ``model``, ``H``, ``curve``,
    ``curve_step``), the pairwise model thick. Returns the figure."""
    fig, axes = plt.subplots(1, 2, figsize=(10.5, 3.8))
    ax = axes[0]
    grid = np.arange(0, max_H + 1)
    tail = sy.eckart_young_tail(np.diag(sigma), grid)
    bound = sy.zb_lower_bound(grid, N, d)
    ax.plot(unary["H"], unary["test_error"], "o-", label=r"trained DeepSets $\mathrm{Sym}(H)$")
    ax.plot(grid, _positive(tail), ":", color="C1", label="Eckart-Young tail of G (0 for H >= K)")
    ax.plot(grid, _positive(bound), "k--", label=r"$\frac{1}{6}(1 - H/2^{\min(N/2, d-1)})$")
    ax.axhline(pair_err, color="C3", label=r"one pairwise feature $\mathrm{Sym}^2(1)$")
    ax.axhline(near_zero, color="C3", ls=":", lw=0.8, label="near-zero threshold")
    ax.set(
        xlabel="unary features H",
        ylabel=r"test error $\|g - f\|^2 / \|g\|^2$",
        yscale="log",
        ylim=(min(1e-3, pair_err / 2, unary["test_error"].min() / 2), 2),
        title=f"N = {N}, d = {d}, K = {K}, {steps} steps",
    )
    ax.legend(fontsize=7, loc="upper right")
    curve = np.array(stored["curve"])  # (evaluations, models): held-out error during training
    colors = plt.cm.viridis(np.linspace(0, 0.9, len(unary)))
    for m, (kind, H) in enumerate(zip(stored["model"], stored["H"], strict=True)):
        if kind == "pairwise":
            axes[1].plot(stored["curve_step"], curve[:, m], color="C3", lw=2,
                         label="pairwise, 1 feature")
        else:
            axes[1].plot(stored["curve_step"], curve[:, m], color=colors[m], label=f"H = {H}")
    axes[1].set(xlabel="step", ylabel="held-out relative error", yscale="log", title="training")
    axes[1].legend(fontsize=7, ncol=2)
    fig.tight_layout()
    return fig
