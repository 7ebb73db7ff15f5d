"""levine2020's depth-efficiency transition: from which width one more layer pays off.

levine2020 (Levine et al. 2020, "Limits to Depth Efficiencies of Self-Attention", section 5 and
appendix D, Tables 1-2) predict that deepening a self-attention network beats widening it while
its depth is below a threshold logarithmic in the width, L_th = log_3(d_x), and test it by
training language models of depths 6 to 48 over a range of sizes: for each pair of adjacent
depths, the size from which the deeper family reaches the lower test loss (the *transition*)
moves to larger widths as the depth grows. This module turns that design into one sweep and its
results into the curves, the transitions and their growth:

* :func:`depth_widths`: for every depth, the widths (multiples of H) whose non-embedding
  parameter counts match those of the shallowest depth's ``base_widths``
  (:func:`attnbook.engines.depth_sweep.family_widths`), so every depth covers the same sizes;
* :func:`depth_configs`: one flat :func:`attnbook.engines.lm_sweep.lm_config` per (depth,
  width, seed);
* :func:`depth_loss_table`: seed mean and standard deviation of the test loss per (depth,
  width) (levine2020 Table 2);
* :func:`transitions`: for each pair of consecutive depths, the depth-efficiency point
  (:mod:`attnbook.engines.depth_efficiency`, by :func:`attnbook.engines.depth_sweep.crossings`) in
  non-embedding parameters and as the shallower depth's width d*, with its bootstrap interval
  (how fast d* grows per layer is L-D's reading:
  :func:`attnbook.criteria.levine2020.growth_rates`);
* :func:`pilot_depth_gaps`: per pair of consecutive depths of the pilot that sizes a long run
  (every depth at a few sizes and several budgets, one seed), the gap deeper - shallower per
  size and budget (:func:`attnbook.engines.depth_sweep.pilot_gaps`); :func:`sweep_depth_gaps`,
  the same of a sweep, the mean over its seeds.

Used by: levine2020_depth_transition.

>>> depth_widths([16, 32], [1, 2], H=2)
{1: [16, 32], 2: [12, 22]}
"""

from collections.abc import Sequence
from itertools import pairwise

import pandas as pd

from ..engines.depth_efficiency import LEVEL
from ..engines.depth_sweep import crossings, family_widths, seed_mean
from ..engines.depth_sweep import pilot_gaps as _pair_gaps
from ..engines.lm_sweep import lm_config
from ..errors import ParameterError

__all__ = ["depth_widths", "depth_configs", "depth_loss_table", "transitions",
           "pilot_depth_gaps", "sweep_depth_gaps"]


def _depths(depths: Sequence[int]) -> list[int]:
    ds = list(depths)
    if len(ds) < 2 or any(isinstance(L, bool) or not isinstance(L, int) or L < 1 for L in ds) \
            or len(set(ds)) != len(ds):
        raise ParameterError("depths", ds, "at least two distinct integers >= 1")
    return sorted(ds)


def depth_widths(base_widths: Sequence[int], depths: Sequence[int], *, H: int = 2) \
        -> dict[int, list[int]]:
    """Depth -> widths: the shallowest depth gets ``base_widths`` (rounded to multiples of H,
    sorted, distinct), every other depth the multiple of H whose non-embedding parameter count
    is closest to each of them (so the i-th width of every depth is one size)."""
    ds = _depths(depths)
    if not base_widths or any(isinstance(w, bool) or not isinstance(w, (int, float)) or w < H
                              for w in base_widths):
        raise ParameterError("base_widths", list(base_widths), f"widths >= H = {H}")
    out = {}
    for L in ds[1:]:  # family_widths(V = 1, factors = widths): shallow widths are the widths
        out[ds[0]], out[L] = family_widths(1, list(base_widths), L_shallow=ds[0], L_deep=L, H=H)
    return out


def depth_configs(*, depths: Sequence[int], base_widths: Sequence[int], seeds: Sequence[int],
                  V: int, H: int = 2, **common) -> list[dict]:
    """One :func:`attnbook.engines.lm_sweep.lm_config` per (depth, width, seed); ``common`` holds
    the other lm_config arguments (corpus, N, steps, batch, lr, warmup, eval_tokens, ...).

    >>> cs = depth_configs(depths=[1, 2], base_widths=[16, 32], seeds=[0, 1], V=64,
    ...                    corpus="kjv", N=16, steps=2, batch=2, lr=1e-3, warmup=0)
    >>> [(c["L"], c["d_x"], c["seed"]) for c in cs][::2]
    [(1, 16, 0), (1, 32, 0), (2, 12, 0), (2, 22, 0)]
    """
    if not seeds or len(set(seeds)) != len(seeds):
        raise ParameterError("seeds", list(seeds), "distinct seeds, at least one")
    return [lm_config(V=V, L=L, d_x=w, H=H, seed=s, **common)
            for L, widths in depth_widths(base_widths, depths, H=H).items()
            for w in widths for s in seeds]


_NEED = {"L", "d_x", "seed", "test_loss", "params_non_embedding"}


def _check(results) -> pd.DataFrame:
    if not isinstance(results, pd.DataFrame) or not _NEED <= set(results.columns):
        raise ParameterError("results", type(results).__name__,
                             f"a DataFrame with columns {sorted(_NEED)}")
    return results


def depth_loss_table(results: pd.DataFrame) -> pd.DataFrame:
    """Per (L, d_x): non-embedding parameters, seed mean, standard deviation and count of the
    test loss (levine2020 Table 2), sorted by depth and width."""
    t = (_check(results).groupby(["L", "d_x"])
         .agg(params_non_embedding=("params_non_embedding", "first"),
              mean=("test_loss", "mean"), std=("test_loss", "std"), seeds=("seed", "count"))
         .reset_index())
    return t.sort_values(["L", "d_x"]).reset_index(drop=True)


def transitions(results: pd.DataFrame, *, n_boot: int = 2000, level: float = LEVEL,
                seed: int = 0, band: float = 0.0) -> pd.DataFrame:
    """For each pair of consecutive depths in ``results``: where the deeper one starts winning
    (beyond ``band`` standard errors of the gap: within it, a tie).

    Columns: L_shallow, L_deep, found, reason, point, low, high (non-embedding parameters;
    bootstrap over seeds), width, width_low, width_high (the shallower depth's width d*,
    log-log interpolated), low_open, high_open, found_fraction, band, crossing (the
    :class:`~attnbook.engines.depth_efficiency.Crossing`).
    """
    df = _check(results)
    if "V" not in df.columns:
        df = df.assign(V=0)
    if df["V"].nunique() != 1:
        raise ParameterError("results", sorted(df["V"].unique()), "one vocabulary size")
    ds = sorted(int(L) for L in df["L"].unique())
    if len(ds) < 2:
        raise ParameterError("results", ds, "at least two depths")
    keep = ["found", "reason", "point", "low", "high", "width", "width_low", "width_high",
            "low_open", "high_open", "found_fraction", "band", "crossing"]
    rows = []
    for a, b in pairwise(ds):
        c = crossings(df[df["L"].isin([a, b])], L_shallow=a, L_deep=b, n_boot=n_boot,
                      level=level, seed=seed, band=band).iloc[0]
        rows.append({"L_shallow": a, "L_deep": b, **{k: c[k] for k in keep}})
    return pd.DataFrame(rows)


def pilot_depth_gaps(results: pd.DataFrame) -> pd.DataFrame:
    """Per pair of consecutive depths of a pilot: :func:`attnbook.engines.depth_sweep.pilot_gaps` of
    the pair (gap = deeper - shallower at matched sizes, per budget), with ``L_shallow`` and
    ``L_deep`` columns first."""
    df = _check(results)
    if "V" not in df.columns:
        df = df.assign(V=0)
    parts = []
    for a, b in pairwise(sorted(int(L) for L in df["L"].unique())):
        g = _pair_gaps(df[df["L"].isin([a, b])], L_shallow=a, L_deep=b)
        parts.append(g.assign(L_shallow=a, L_deep=b)[["L_shallow", "L_deep", *g.columns]])
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()


def sweep_depth_gaps(results: pd.DataFrame) -> pd.DataFrame:
    """:func:`pilot_depth_gaps` of a sweep, each test loss the mean over its seeds
    (:func:`attnbook.engines.depth_sweep.seed_mean`): a sweep of several seeds on the axes of
    its pilot. Empty without a matched pair."""
    return pilot_depth_gaps(seed_mean(_check(results)))
