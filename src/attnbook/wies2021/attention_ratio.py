"""wies2021's attention-ratio experiment: the width d_x bottlenecks the attention dimension H d_a.

wies2021 (section 5.3, appendix C.3; Figures 4 and 6, Table 5) trains language models whose
attention dimension H d_a exceeds the width d_x by the *bottleneck ratio* rho = H d_a / d_x in
{1, 2, 4, 8, 16} (d_a fixed, H raised), picks for each ratio and size the best depth of a small
set, and reads how small a ratio-1 baseline reaches the same loss: at rho = 4 a baseline with
~75% of the parameters, at rho = 16 one with ~55% (T5-3B and T5-11B). Theorems 1 and 2 bound the
separation rank by terms in min(r, d_x) whatever H is, so parameters invested in H d_a > d_x are
predicted to be wasted. This module turns the design into one sweep and its results into tables:

* :func:`ratio_non_embedding_params`: the count of :class:`attnbook.engines.lm.LanguageModel`
  at ratio rho;
* :func:`ratio_width`: the width (with H = rho d_x / d_a an integer) whose count is closest to
  a target size, so every (ratio, depth) net of one size has about the same parameters;
* :func:`design` and :func:`ratio_configs`: the grid (ratio, depth, target size) and one flat
  :func:`attnbook.engines.lm_sweep.lm_config` per grid row and seed;
* :func:`ratio_loss_table`: seed mean and std of the test loss per grid row (Figure 6, all depths);
* :func:`best_depth`: per (ratio, size) the depth of least seed-mean loss (Figure 4's curves);
* :func:`redundancy`: per ratio and size, the ratio-1 baseline size with the same loss
  (:func:`attnbook.engines.lm_sweep.matched_size` over the best-depth baseline curve) over the
  net's own size (the *matched fraction*; 1 minus it is the parameter redundancy), and
  :func:`matched_fractions`, its mean over sizes per ratio (W-F4's measurement);
* :func:`spreads`: per size, the spread of the best-depth loss across ratios and the spread of
  the loss across depths within each ratio (W-F6's measurement); :func:`claim_reads`, both
  reads and the seeds' losses from the nets of some seeds only (a seed left out);
* :func:`pilot_fractions` and :func:`pilot_spreads`: of the pilot that sizes a long run (a
  small grid, the baseline and a few ratios at one size, the baselines far below it, every
  depth, trained at several budgets, one seed), W-F4's matched fraction per ratio and W-F6's
  spreads per size at each budget: how the effect grows with training; of a sweep of several
  seeds (one budget), the same read with each net's loss the mean over its seeds.

Sizes are non-embedding parameter counts (both embeddings and the head left out, as Kaplan et
al. count model size): at the small vocabularies of the ``cpu`` profile the embeddings would
otherwise weigh differently at different widths.

Used by: wies2021_attention_ratio.

>>> ratio_non_embedding_params(2, 16, 1) == 2 * (12 * 16 * 16 + 13 * 16) + 2 * 16
True
>>> d_x = ratio_width(4, 2, 50_000, d_a=8)
>>> d_x, 4 * d_x // 8  # width and heads H = rho d_x / d_a
(32, 16)
"""

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd

from ..engines.lm_sweep import lm_config
from ..errors import ParameterError
from .rank_bottleneck import baseline_match

__all__ = ["PAPER_TABLE5", "ratio_non_embedding_params", "width_step", "ratio_width", "design",
           "ratio_configs", "with_design", "ratio_loss_table", "best_depth", "redundancy",
           "matched_fractions", "spreads", "claim_reads", "pilot_fractions", "pilot_spreads"]

# wies2021 Table 5 (appendix C.3): ratio H d_a / d_x, depth L, heads H, widths; best depth of
# Figure 4 (bold in the paper) marked True.
PAPER_TABLE5 = pd.DataFrame(
    [(1, 18, 12, "360, 384, 420, 456", True), (1, 24, 12, "420, 456, 480", True),
     (2, 12, 12, "408, 480", True), (2, 18, 18, "396", False), (2, 24, 24, "336", False),
     (4, 12, 12, "288, 336", False), (4, 18, 12, "240, 276", False),
     (4, 24, 12, "204, 240", True), (8, 12, 12, "204, 240", True),
     (8, 18, 12, "168, 192", False), (8, 24, 12, "144, 168", False),
     (16, 12, 24, "144, 168", True)],
    columns=["ratio", "L", "H", "widths", "in_figure_4"])


def _check_int(name, v, low=1):
    if not isinstance(v, (int, np.integer)) or isinstance(v, bool) or v < low:
        raise ParameterError(name, v, f"an integer >= {low}")
    return int(v)


def ratio_non_embedding_params(L: int, d_x: int, ratio: int) -> int:
    """Non-embedding parameters of :class:`attnbook.engines.lm.LanguageModel` with H d_a = rho d_x.

    Per block, with A = H d_a = rho d_x: query, key, value (3 A d_x + 3 A), output projection
    (A d_x + d_x), feed-forward of width 4 d_x (8 d_x^2 + 5 d_x), two layer norms (4 d_x); plus
    the final layer norm (2 d_x). At rho = 1 this is 12 d_x^2 + 13 d_x per block.

    >>> ratio_non_embedding_params(1, 8, 2)  # A = 16: 4*16*8 + 3*16 + 8*64 + 10*8, plus 2*8
    1168
    """
    L, d_x, ratio = (_check_int(n, v) for n, v in (("L", L), ("d_x", d_x), ("ratio", ratio)))
    A = ratio * d_x
    return L * (8 * d_x * d_x + 4 * A * d_x + 3 * A + 10 * d_x) + 2 * d_x


def width_step(ratio: int, d_a: int) -> int:
    """The smallest width step keeping H = rho d_x / d_a an integer: d_a / gcd(d_a, rho).

    >>> [width_step(r, 8) for r in (1, 2, 4, 8, 16)]
    [8, 4, 2, 1, 1]
    """
    ratio, d_a = _check_int("ratio", ratio), _check_int("d_a", d_a)
    return d_a // math.gcd(d_a, ratio)


def ratio_width(ratio: int, L: int, size: float, *, d_a: int) -> int:
    """The width d_x (a multiple of :func:`width_step`) whose non-embedding count at ratio rho
    and depth L is closest to ``size`` (the smaller width on a tie).

    >>> ratio_width(1, 2, ratio_non_embedding_params(2, 64, 1), d_a=8)
    64
    """
    if not (isinstance(size, (int, float, np.integer, np.floating)) and size > 0):
        raise ParameterError("size", size, "a parameter count > 0")
    step = width_step(ratio, d_a)
    guess = math.sqrt(size / (L * (8 + 4 * ratio)))
    base = max(1, int(round(guess / step)))
    cands = {step * k for k in range(max(1, base - 3), base + 4)}
    return min(cands, key=lambda w: (abs(ratio_non_embedding_params(L, w, ratio) - size), w))


def design(*, ratios: Sequence[int], depths: Sequence[int], sizes: Sequence[float],
           baseline_sizes: Sequence[float], d_a: int) -> pd.DataFrame:
    """The grid: one row per (ratio, depth, target size) with its width d_x, heads H and
    non-embedding count. Ratio 1 (the baseline, H d_a = d_x) is measured at ``baseline_sizes``,
    every other ratio at ``sizes``.

    >>> g = design(ratios=[1, 16], depths=[2], sizes=[40_000], baseline_sizes=[10_000, 40_000],
    ...            d_a=8)
    >>> g[["ratio", "L", "size", "d_x", "H"]].to_dict("records")[-1]
    {'ratio': 16, 'L': 2, 'size': 40000, 'd_x': 16, 'H': 32}
    """
    ratios = [_check_int("ratios", r) for r in ratios]
    depths = [_check_int("depths", L) for L in depths]
    d_a = _check_int("d_a", d_a)
    if 1 not in ratios:
        raise ParameterError("ratios", ratios, "a list containing the baseline ratio 1")
    for name, vals in (("ratios", ratios), ("depths", depths), ("sizes", sizes),
                       ("baseline_sizes", baseline_sizes)):
        if not vals or len(set(vals)) != len(vals):
            raise ParameterError(name, list(vals), "distinct values, at least one")
    rows = []
    for ratio in sorted(ratios):
        for size in sorted(baseline_sizes if ratio == 1 else sizes):
            for L in sorted(depths):
                d_x = ratio_width(ratio, L, size, d_a=d_a)
                rows.append({"ratio": ratio, "L": L, "size": size, "d_x": d_x,
                             "H": ratio * d_x // d_a, "d_a": d_a,
                             "params_non_embedding": ratio_non_embedding_params(L, d_x, ratio)})
    g = pd.DataFrame(rows)
    dup = g.duplicated(["ratio", "L", "d_x"])
    if dup.any():
        r = g[dup].iloc[0]
        raise ParameterError("sizes", list(sizes if r["ratio"] != 1 else baseline_sizes),
                             f"sizes far enough apart to give distinct widths (ratio "
                             f"{r['ratio']}, L {r['L']}: two sizes give d_x = {r['d_x']})")
    return g


def ratio_configs(grid: pd.DataFrame, *, seeds: Sequence[int], **common) -> list[dict]:
    """One :func:`attnbook.engines.lm_sweep.lm_config` per grid row and seed (``common``: corpus,
    V, N, steps, batch, lr, warmup, eval_tokens, ...), H and d_a from the grid.

    >>> g = design(ratios=[1, 4], depths=[1], sizes=[4000], baseline_sizes=[4000], d_a=4)
    >>> cs = ratio_configs(g, seeds=[0, 1], corpus="kjv", V=32, N=8, steps=2, batch=2, lr=1e-3,
    ...                    warmup=0)
    >>> [(c["d_x"], c["H"], c["d_a"], c["seed"]) for c in cs]
    [(16, 4, 4, 0), (16, 4, 4, 1), (12, 12, 4, 0), (12, 12, 4, 1)]
    """
    if not seeds or len(set(seeds)) != len(seeds):
        raise ParameterError("seeds", list(seeds), "distinct seeds, at least one")
    return [lm_config(L=int(r.L), d_x=int(r.d_x), H=int(r.H), d_a=int(r.d_a), seed=s, **common)
            for r in grid.itertuples() for s in seeds]


def with_design(results: pd.DataFrame, grid: pd.DataFrame) -> pd.DataFrame:
    """The sweep's results (one row per net) with each net's ratio and target size from the
    grid, matched on (L, d_x, H, d_a); the ratio is checked against H d_a / d_x."""
    need = {"L", "d_x", "H", "d_a", "seed", "test_loss", "params_non_embedding"}
    if not isinstance(results, pd.DataFrame) or not need <= set(results.columns):
        raise ParameterError("results", type(results).__name__,
                             f"a DataFrame with columns {sorted(need)}")
    keys = ["L", "d_x", "H", "d_a"]
    df = results.astype({k: int for k in keys}).merge(
        grid[keys + ["ratio", "size"]], on=keys, how="left", validate="many_to_one")
    if df["ratio"].isna().any():
        raise ParameterError("results", int(df["ratio"].isna().sum()),
                             "nets of the grid only (some are not in it)")
    if not np.allclose(df["H"] * df["d_a"] / df["d_x"], df["ratio"]):
        raise ParameterError("results", "H d_a / d_x", "equal to each net's grid ratio")
    return df


def ratio_loss_table(results: pd.DataFrame, grid: pd.DataFrame) -> pd.DataFrame:
    """Per (ratio, size, L): d_x, H, non-embedding count, seed mean, std and count of the test
    loss (wies2021 Figure 6 and Table 5), sorted by ratio, size and depth."""
    df = with_design(results, grid)
    return (df.groupby(["ratio", "size", "L"])
            .agg(d_x=("d_x", "first"), H=("H", "first"),
                 params_non_embedding=("params_non_embedding", "first"),
                 mean=("test_loss", "mean"), std=("test_loss", "std"), seeds=("seed", "count"))
            .reset_index().sort_values(["ratio", "size", "L"]).reset_index(drop=True))


def best_depth(table: pd.DataFrame) -> pd.DataFrame:
    """Per (ratio, size) the row of :func:`ratio_loss_table` with the least seed-mean loss (the
    best depth of the set, wies2021 section 5.3: Figure 4's curves).

    >>> t = pd.DataFrame({"ratio": [1, 1], "size": [10, 10], "L": [2, 3], "mean": [2.0, 1.9]})
    >>> best_depth(t)["L"].tolist()
    [3]
    """
    idx = table.groupby(["ratio", "size"])["mean"].idxmin()
    return table.loc[idx].sort_values(["ratio", "size"]).reset_index(drop=True)


def redundancy(best: pd.DataFrame) -> pd.DataFrame:
    """Per ratio rho > 1 and size: the ratio-1 baseline size with the same loss and its fraction
    of the net's own size (wies2021 Figure 4: ~0.75 at rho = 4, ~0.55 at rho = 16).

    ``best`` is :func:`best_depth`'s frame (columns ratio, size, params_non_embedding, mean).
    The baseline is the best-depth ratio-1 curve, matched by
    :func:`attnbook.wies2021.rank_bottleneck.baseline_match` (log-size interpolation). A loss
    outside the baseline's range has no matched size: ``matched`` and ``fraction`` are NaN and
    ``outside`` says "below" (worse than the smallest baseline) or "above" (better than the
    best).

    A synthetic check with a known answer: baselines on loss = 10 - log(size), a net of size
    1000 with the loss of a baseline of size 500 has fraction 0.5.

    >>> b = pd.DataFrame({"ratio": [1, 1, 1, 4], "size": [250, 500, 1000, 1000],
    ...                   "params_non_embedding": [250, 500, 1000, 1000],
    ...                   "mean": [10 - np.log(250), 10 - np.log(500), 10 - np.log(1000),
    ...                            10 - np.log(500)]})
    >>> redundancy(b)[["ratio", "matched", "fraction"]].round(6).to_dict("records")
    [{'ratio': 4, 'matched': 500.0, 'fraction': 0.5}]
    """
    base = best[best["ratio"] == 1]
    if len(base) < 2:
        raise ParameterError("best", len(base), "at least two ratio-1 baseline sizes")
    sizes, losses = base["params_non_embedding"].to_numpy(float), base["mean"].to_numpy(float)
    rows = []
    for r in best[best["ratio"] != 1].itertuples():
        own, loss = float(r.params_non_embedding), float(r.mean)
        matched, outside = baseline_match(sizes, losses, loss)
        rows.append({"ratio": int(r.ratio), "size": r.size, "L": getattr(r, "L", None),
                     "params_non_embedding": own, "loss": loss, "matched": matched,
                     "fraction": matched / own, "outside": outside})
    return pd.DataFrame(rows)


def matched_fractions(red: pd.DataFrame) -> dict[int, float]:
    """Per ratio, the mean over sizes of :func:`redundancy`'s fraction (NaN if any size has no
    match): W-F4's measurement.

    >>> matched_fractions(pd.DataFrame({"ratio": [4, 4, 16], "fraction": [0.7, 0.8, np.nan]}))
    {4: 0.75, 16: nan}
    """
    return {int(k): float(v.mean()) if v.notna().all() else math.nan
            for k, v in red.groupby("ratio")["fraction"]}


def spreads(table: pd.DataFrame, sizes: Sequence[float]) -> pd.DataFrame:
    """Per size of ``sizes`` (measured at every ratio): the spread of the best-depth seed-mean
    loss across ratios (max - min) and, per ratio, the spread across depths (max - min), with
    their mean and maximum over ratios (wies2021 Figure 6).

    >>> t = pd.DataFrame({"ratio": [1, 1, 4, 4], "size": [9] * 4, "L": [2, 3, 2, 3],
    ...                   "mean": [2.0, 2.1, 2.5, 2.55]})
    >>> spreads(t, [9])[["across_ratios", "across_depths_mean"]].round(6).to_dict("records")
    [{'across_ratios': 0.5, 'across_depths_mean': 0.075}]
    """
    rows = []
    for size in sizes:
        part = table[table["size"] == size]
        if part.empty:
            raise ParameterError("sizes", size, "a size measured at every ratio")
        best = part.groupby("ratio")["mean"].min()
        depth = part.groupby("ratio")["mean"].agg(lambda m: m.max() - m.min())
        rows.append({"size": size, "across_ratios": float(best.max() - best.min()),
                     "across_depths_mean": float(depth.mean()),
                     "across_depths_max": float(depth.max()),
                     "ratios": len(best)})
    return pd.DataFrame(rows)


def claim_reads(results: pd.DataFrame, grid: pd.DataFrame, sizes: Sequence[float],
                seeds: Sequence[int] | None = None) -> dict:
    """What W-F4 and W-F6 read from a sweep, from the nets of ``seeds`` only (None: all):
    ``fractions`` (:func:`matched_fractions` of the best depths), ``spreads`` (:func:`spreads`
    at ``sizes``) and ``seed_losses``, each net's test loss per seed (their guard), with
    ``nets``, the (ratio, size, L) of each. How a verdict is decided again without a seed."""
    if seeds is not None:
        results = results[results["seed"].isin(list(seeds))]
    table = ratio_loss_table(results, grid)
    nets = with_design(results, grid).groupby(["ratio", "size", "L"])
    return {"fractions": matched_fractions(redundancy(best_depth(table))),
            "spreads": spreads(table, sizes), "nets": list(nets.groups),
            "seed_losses": [g.sort_values("seed")["test_loss"].tolist() for _, g in nets]}


_NET = ["L", "d_x", "H", "d_a"]


def _complete_budgets(results: pd.DataFrame, grid: pd.DataFrame):
    """(steps, tokens, that budget's results) per budget of a pilot whose every net of ``grid``
    is stored, the smallest first; a budget still training is left out."""
    need = {"steps", "batch", "N", *_NET}
    if not isinstance(results, pd.DataFrame) or not need <= set(results.columns):
        raise ParameterError("results", type(results).__name__,
                             f"a DataFrame with columns {sorted(need)}")
    nets = set(map(tuple, grid[_NET].astype(int).to_numpy()))
    for steps, part in results.groupby("steps", sort=True):
        if nets <= set(map(tuple, part[_NET].astype(int).to_numpy())):
            yield int(steps), int(steps * part["batch"].iloc[0] * part["N"].iloc[0]), part


def _s_per_token(part: pd.DataFrame) -> dict:
    """The seconds per training token of every net of a budget together (one seed each), as
    measured, where the results carry their speed."""
    if "tokens_per_s" not in part:
        return {}
    return {"s_per_token": float((1 / part.drop_duplicates(_NET)["tokens_per_s"]).sum())}


def pilot_fractions(results: pd.DataFrame, grid: pd.DataFrame) -> pd.DataFrame:
    """Per budget of a pilot (the nets of ``grid`` at several budgets) whose nets are all
    stored, and per ratio rho > 1: the optimizer steps, the training tokens (steps x batch x N)
    and
    ``fraction``, the matched fraction of :func:`matched_fractions` read from that budget's
    nets alone (its best depths, its own baseline curve; NaN where a size has no match);
    ``outside``, where a size has no match, on which side of the baseline range it falls
    ("below": worse than the smallest baseline; "above": at least as good as the largest);
    ``bound``, where every size of the ratio falls out on one side, the end of the baseline
    range over the net's own size (mean over sizes): the fraction lies below it ("below") or
    above it ("above"); and, where the results carry their training speed, ``s_per_token``: the
    seconds per training token of all the budget's nets together, as measured.

    A synthetic check: baselines on loss = 10 - log(size); the ratio-4 net has the loss of a
    baseline of half its size after 4 steps and of 0.8 of it after 8.

    >>> g = design(ratios=[1, 4], depths=[1], sizes=[4000], baseline_sizes=[1000, 4000], d_a=4)
    >>> cs = [c for steps in (8, 4) for c in ratio_configs(
    ...     g, seeds=[0], steps=steps, corpus="kjv", V=32, N=8, batch=2, lr=1e-3, warmup=1)]
    >>> own = {(c["d_x"], c["H"]):
    ...        ratio_non_embedding_params(c["L"], c["d_x"], c["H"] * 4 // c["d_x"]) for c in cs}
    >>> res = pd.DataFrame([{**c, "params_non_embedding": own[c["d_x"], c["H"]],
    ...                      "test_loss": 10 - np.log(own[c["d_x"], c["H"]] * (
    ...                          1 if c["H"] * 4 == c["d_x"] else {4: 0.5, 8: 0.8}[c["steps"]]))}
    ...                     for c in cs])
    >>> pilot_fractions(res, g)[["steps", "tokens", "ratio", "fraction"]].round(6)
       steps  tokens  ratio  fraction
    0      4      64      4       0.5
    1      8     128      4       0.8
    """
    rows = []
    for steps, tokens, part in _complete_budgets(results, grid):
        best = best_depth(ratio_loss_table(part, grid))
        red = redundancy(best)
        base = best.loc[best["ratio"] == 1, "params_non_embedding"].to_numpy(float)
        for rho, f in matched_fractions(red).items():
            sub = red[red["ratio"] == rho]
            sides = sorted(set(sub["outside"]) - {""})
            bound = math.nan
            if len(sides) == 1 and (sub["outside"] == sides[0]).all():
                end = base.min() if sides[0] == "below" else base.max()
                bound = float((end / sub["params_non_embedding"]).mean())
            rows.append({"steps": steps, "tokens": tokens, "ratio": rho, "fraction": f,
                         "outside": ", ".join(sides), "bound": bound, **_s_per_token(part)})
    return pd.DataFrame(rows)


def pilot_spreads(results: pd.DataFrame, grid: pd.DataFrame,
                  sizes: Sequence[float] | None = None) -> pd.DataFrame:
    """Per budget of a pilot whose nets are all stored, and per size of ``sizes`` (default:
    the grid's sizes of the ratios > 1, each also a baseline size): the optimizer steps, the
    training tokens and :func:`spreads` of that budget's nets alone (W-F6's spread of the
    best-depth loss across ratios, and the spread across depths within a ratio)."""
    if sizes is None:
        sizes = sorted(set(grid.loc[grid["ratio"] != 1, "size"]))
    every = set.intersection(*(set(g) for _, g in grid.groupby("ratio")["size"]))
    if not sizes or not set(sizes) <= every:
        raise ParameterError("sizes", list(sizes), f"sizes measured at every ratio of the "
                             f"grid ({sorted(every)})")
    rows = []
    for steps, tokens, part in _complete_budgets(results, grid):
        s = spreads(ratio_loss_table(part, grid), sizes)
        rows.append(s.assign(steps=steps, tokens=tokens)[
            ["steps", "tokens", *s.columns]])
    return pd.concat(rows, ignore_index=True) if rows else pd.DataFrame()
