"""The figure, tables and verdict text of mahdavi2024's real-model chapter, drawn from what it
computed:

* :func:`kruskal_rank_figure`: the fraction-vs-k curves of each stage and the Kruskal-rank
  histogram after the random attention layer (M-F1, the paper's Figure 1);
* :func:`kruskal_ks` and :func:`counts_from_tables`: the values of k and the counts of subsets
  of rank k that M-F1 is decided from (its reading and sentence:
  :func:`attnbook.criteria.mahdavi2024.kruskal_reading`);
* :data:`STAGE_NOTES`, :data:`STAGE_SKIPPED`, :func:`cell_draws` and
  :func:`stability_sentence`: what the cells of Tables 1 and 3 stand for, how many draws each
  share rests on, and how stable their verdicts were (M-T1tab, M-T3tab).

Each draws or phrases what the tables of :mod:`attnbook.mahdavi2024.token_ranks` and
:mod:`attnbook.mahdavi2024.rank_counts` hold and decides nothing.

Used by: mahdavi2024_real_models.

>>> kruskal_ks(197, 768, 0.5, 8)
[220, 244, 267, 290, 314, 337, 361]
>>> stability_sentence({"Embedding / Assumption 1": (1000, 1000)})
'every one of the 1 cells decided from draws held in all 1000'
"""

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from .real_models import DINOV2_SMALL

__all__ = ["kruskal_rank_figure", "kruskal_ks", "counts_from_tables", "STAGE_NOTES",
           "STAGE_SKIPPED", "cell_draws", "stability_sentence"]

#: what stands in for the paper's model in a stage's cells, added to their verdict lines
STAGE_NOTES = {"Trained ViT": f"{DINOV2_SMALL.split(' backbone')[0]}, n 257, d 384",
               "BERT trained L0": "MiniLM-L6-H384, d 384",
               "BERT trained L1": "MiniLM-L6-H384, d 384"}
#: why a stage has no tokens at a profile
STAGE_SKIPPED = {"Trained ViT": "skipped at this profile, trained_images is 0 (DINOv2-small "
                                "needs at least 384 images through onnxruntime)",
                 "GPT-2 trained L0": "trained GPT-2 weights are unavailable offline",
                 "GPT-2 trained L1": "trained GPT-2 weights are unavailable offline",
                 "BERT trained L0": "skipped at this profile, trained_text is off",
                 "BERT trained L1": "skipped at this profile, trained_text is off"}


def kruskal_rank_figure(curves: pd.DataFrame, kruskal: pd.DataFrame, *, n: int, d: int,
                        stage: str = "Random attention"):
    """Left: the fraction of random k-subsets of rank k against k, one line per stage of
    ``curves`` (:func:`attnbook.mahdavi2024.token_ranks.curve_table`), with the context size
    ``n`` dashed and the width ``d`` dotted. Right: the histogram of ``kruskal``'s estimates
    (:func:`~attnbook.mahdavi2024.token_ranks.ordering_table`) for ``stage``, 20 bins, the same
    two marks. Returns the figure."""
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 3.6))
    for name, c in curves.groupby("stage", sort=False):
        left.plot(c["k"], c["fraction"], marker=".",
                  label=f"{name} (n {c.n.iat[0]}, d {c.d.iat[0]})")
    left.axvline(n, color="k", ls="--", lw=1)
    left.axvline(d, color="k", ls=":", lw=1)
    left.set(xlabel="k (queries drawn)", ylabel="fraction of draws with rank k",
             title="Kruskal rank test on images")
    left.legend(fontsize=7)
    right.hist(kruskal[kruskal["stage"] == stage]["estimate"], bins=20, color="C1")
    right.axvline(n, color="k", ls="--", lw=1, label=f"n = {n}")
    right.axvline(d, color="k", ls=":", lw=1, label=f"d = {d}")
    right.set(xlabel="queries before the first dependent one", ylabel="random orderings",
              title="Random attention layer", xlim=(0, d * 1.05))
    right.legend(fontsize=8)
    fig.tight_layout()
    return fig


def kruskal_ks(n: int, d: int, max_d_fraction: float, points: int) -> list[int]:
    """The values of k above ``n`` at which M-F1 counts subsets of rank k: ``points`` evenly
    spaced from n up to (not including) ``max_d_fraction * d``, rounded, without n itself."""
    return sorted(set(np.linspace(n, max_d_fraction * d, points, endpoint=False)
                      .round().astype(int).tolist()) - {n})


def counts_from_tables(table: pd.DataFrame, curves: pd.DataFrame, stage: str, *, n: int,
                       draws: int, curve_draws: int) -> pd.DataFrame:
    """M-F1's counts read from the tables where they made enough draws: at k = ``n`` the
    Assumption 1 share of ``stage`` in ``table`` (:func:`~attnbook.mahdavi2024.token_ranks.
    assumption_table`) over ``draws``, above it each k of ``curves`` over ``curve_draws`` (no
    draws where the curve knew the share zero exactly). Columns k, successes, draws, exact."""
    cell = table.set_index("stage").loc[stage]
    return pd.DataFrame(
        [{"k": n, "successes": round(cell["assumption1_fraction"] * draws), "draws": draws,
          "exact": False}]
        + [{"k": int(r.k), "successes": 0 if r.exact_zero else round(r.fraction * curve_draws),
            "draws": 0 if r.exact_zero else curve_draws, "exact": bool(r.exact_zero)}
           for r in curves[curves["stage"] == stage].itertuples() if r.k != n])


def cell_draws(row, test: str, *, draws: int, gp_draws: int):
    """The random draws behind the share of ``test`` in a stage's ``row`` of Table 1 or 3
    (with columns rank_all_queries and d); None where it is no sample (Assumption 2 looks at
    every context, and General Position has no independent d-subset where all the queries span
    fewer than d dimensions)."""
    if test == "Assumption 2" or (test == "General Position"
                                  and row["rank_all_queries"] < row["d"]):
        return None
    return gp_draws if test == "General Position" else draws


def stability_sentence(agreeing: dict) -> str:
    """How stable the cells decided from draws were, from ``agreeing`` (cell -> (resamples
    agreeing with its verdict, resamples)): all of them, or the least stable one."""
    low = min(agreeing, key=lambda part: agreeing[part][0] / agreeing[part][1], default=None)
    if low is None:
        return "no cell was decided from draws"
    if agreeing[low][0] == agreeing[low][1]:
        return (f"every one of the {len(agreeing)} cells decided from draws held in all "
                f"{agreeing[low][1]}")
    return (f"the least stable of the {len(agreeing)} cells decided from draws, {low}, held in "
            f"{agreeing[low][0]} of {agreeing[low][1]}")
