"""wies2021's vocabulary sweeps: a shallow and a deep family per vocabulary (V, embedding rank r).

wies2021 (section 5.2, appendix C.2; Figures 1, 3, 5, Tables 3-5) trains language models of
depths L = 24 and 48 over a range of sizes for each BPE vocabulary V = 257, 500, 2000 and
finds the *depth-efficiency point*, the size from which the deep family reaches the lower test
loss, where the shallow family's width d_x is about V (V = 500: d_x ~ 408). With the input
embedding of V = 2000 factored to rank r = 500 the point moves to d_x ~ r (504, Figure 3), and
with a vocabulary larger than every width (GPT-2's 50257 against 2000) it barely moves
(Figure 5). This module turns that design into one sweep and its results into the curves,
tables and crossings of a chapter:

* :func:`family_widths`: the shallow widths ``factor * base`` (base: V, or the rank r; rounded
  to a multiple of H) and, for each, the deep width (a multiple of H) whose non-embedding
  parameter count (:func:`non_embedding_params`) is closest, so both families cover the same
  sizes;
* :func:`sweep_configs`: one flat :func:`attnbook.engines.lm_sweep.lm_config` per (V, family, width,
  seed), with the input embedding of rank ``r`` (None: full rank) when given; the family is
  read from L (:func:`family_of`);
* :func:`loss_table`: seed mean and standard deviation of the test loss per (V, r, family,
  width) (Tables 3 and 4);
* :func:`crossings`: per (V, r), the depth-efficiency point by :func:`attnbook.
  depth_efficiency.crossing_from_frame` in non-embedding parameters, and the same point (and
  its bootstrap interval) as a shallow width by :func:`width_at`, with its ratio to the
  embedding's rank bound min(V, r). The verdicts are the criteria of the ledger
  (:mod:`attnbook.criteria`), not decided here;
* :func:`rank_controls`: each rank-limited setting beside its full-rank control at the same
  widths (wies2021 Figure 3): the control's crossing, and how much more the rank-limited gap
  falls across the widths than the control's (a difference in differences);
* :func:`pilot_gaps`: the deep-minus-shallow gap of the test loss per width and budget of a
  pilot (the same pairs of widths trained at several budgets, one seed): how the effect grows
  with training; :func:`sweep_gaps`, the same of a sweep's full-rank nets, the mean over its
  seeds (:func:`seed_mean`).

Used by: levine2020_depth_transition, wies2021_depth_efficiency, wies2021_vocab_rank.

>>> family_widths(64, [0.5, 1, 2], L_shallow=1, L_deep=2, H=2)
([32, 64, 128], [22, 46, 90])
"""

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd

from ..errors import ParameterError
from .depth_efficiency import LEVEL, crossing_from_frame, gap_difference
from .lm_sweep import lm_config

__all__ = ["non_embedding_params", "family_widths", "sweep_configs", "family_of", "loss_table",
           "width_at", "crossings", "rank_controls", "pilot_gaps", "seed_mean",
           "sweep_gaps"]


def non_embedding_params(L: int, d_x: int) -> int:
    """Non-embedding parameters of :class:`attnbook.engines.lm.LanguageModel` with H d_a = d_x:
    per block 12 d_x^2 + 13 d_x (attention, feed-forward of width 4 d_x, two layer norms,
    biases), plus the final layer norm (2 d_x). The embedding's rank r does not enter.

    >>> non_embedding_params(1, 64)
    50112
    """
    return L * (12 * d_x * d_x + 13 * d_x) + 2 * d_x


def _round_to(x: float, H: int) -> int:
    return max(H, H * int(round(x / H)))


def family_widths(base: int, factors: Sequence[float], *, L_shallow: int, L_deep: int,
                  H: int = 2) -> tuple[list[int], list[int]]:
    """(shallow widths, deep widths): shallow ``factor * base`` (base: V, or the embedding
    rank r) rounded to a multiple of H; deep the multiple of H with the closest non-embedding
    count to each shallow width's."""
    if not (isinstance(L_shallow, int) and isinstance(L_deep, int) and 1 <= L_shallow < L_deep):
        raise ParameterError("L_deep", L_deep, f"an integer > L_shallow = {L_shallow} >= 1")
    if not factors or any(not (isinstance(f, (int, float)) and f > 0) for f in factors):
        raise ParameterError("width_factors", list(factors), "numbers > 0")
    if isinstance(base, bool) or not isinstance(base, int) or base < 1:
        raise ParameterError("base", base, "an integer >= 1 (V or the embedding rank r)")
    shallow = sorted({_round_to(f * base, H) for f in factors})
    deep = []
    for w in shallow:
        target = non_embedding_params(L_shallow, w)
        guess = w * math.sqrt(L_shallow / L_deep)
        cands = {_round_to(guess, H) + k * H for k in (-2, -1, 0, 1, 2)}
        deep.append(min((c for c in cands if c >= H),
                        key=lambda c: (abs(non_embedding_params(L_deep, c) - target), c)))
    return shallow, deep


def sweep_configs(*, vocabs: Sequence[int], width_factors: Sequence[float], L_shallow: int,
                  L_deep: int, seeds: Sequence[int], H: int = 2, r: int | None = None,
                  base: int | None = None, **common) -> list[dict]:
    """One :func:`attnbook.engines.lm_sweep.lm_config` per (V, family, width, seed); ``common``
    holds the other lm_config arguments (corpus, N, steps, batch, lr, warmup, eval_tokens, ...).

    ``r``: the input-embedding rank of every vocabulary (a V x r times r x d_x factorization,
    wies2021 Figure 3; None: a full V x d_x table). The shallow widths are ``width_factors``
    times ``base``, by default r where it is given and V otherwise (the predicted transition
    width); a fixed ``base`` gives every vocabulary the same widths (Figure 5).

    >>> cs = sweep_configs(vocabs=[64], width_factors=[1, 2], L_shallow=1, L_deep=2, seeds=[0, 1],
    ...                    corpus="kjv", N=16, steps=2, batch=2, lr=1e-3, warmup=0)
    >>> [(c["L"], c["d_x"], c["seed"]) for c in cs][:4], len(cs)
    ([(1, 64, 0), (1, 64, 1), (1, 128, 0), (1, 128, 1)], 8)
    >>> cs = sweep_configs(vocabs=[256], width_factors=[1], L_shallow=1, L_deep=2, seeds=[0],
    ...                    r=32, corpus="kjv", N=16, steps=2, batch=2, lr=1e-3, warmup=0)
    >>> [(c["V"], c["r"], c["L"], c["d_x"]) for c in cs]
    [(256, 32, 1, 32), (256, 32, 2, 22)]
    """
    if len(set(seeds)) != len(seeds) or not seeds:
        raise ParameterError("seeds", list(seeds), "distinct seeds, at least one")
    if "r" in common or "model" in common:
        raise ParameterError("common", sorted(common), "no r (an argument here) and no model")
    if r is not None and (isinstance(r, bool) or not isinstance(r, int) or r < 1):
        raise ParameterError("r", r, "an integer >= 1, or None for a full-rank embedding")
    out = []
    for V in vocabs:
        if r is not None and r >= V:
            raise ParameterError("r", r, f"a rank below V = {V} (r >= V is full rank)")
        b = base if base is not None else r if r is not None else V
        shallow, deep = family_widths(b, width_factors, L_shallow=L_shallow, L_deep=L_deep, H=H)
        for L, widths in ((L_shallow, shallow), (L_deep, deep)):
            out += [lm_config(V=V, L=L, d_x=w, H=H, r=r, seed=s, **common)
                    for w in widths for s in seeds]
    return out


def family_of(L, L_shallow: int, L_deep: int) -> str:
    """"shallow" or "deep" for depth L (one of the two depths)."""
    if L == L_shallow:
        return "shallow"
    if L == L_deep:
        return "deep"
    raise ParameterError("L", L, f"L_shallow = {L_shallow} or L_deep = {L_deep}")


def _rank(r) -> int | None:
    """A config's r as an int, None for a full-rank embedding (None or NaN in a frame)."""
    if r is None or r is pd.NA or (isinstance(r, float) and math.isnan(r)):
        return None
    return int(r)


def _with_family(results: pd.DataFrame, L_shallow: int, L_deep: int) -> pd.DataFrame:
    need = {"V", "L", "d_x", "seed", "test_loss", "params_non_embedding"}
    if not isinstance(results, pd.DataFrame) or not need <= set(results.columns):
        raise ParameterError("results", type(results).__name__,
                             f"a DataFrame with columns {sorted(need)}")
    ranks = results["r"] if "r" in results.columns else [None] * len(results)
    return results.assign(family=[family_of(L, L_shallow, L_deep) for L in results["L"]],
                          r=pd.array([_rank(v) for v in ranks], dtype="Int64"))


def loss_table(results: pd.DataFrame, *, L_shallow: int, L_deep: int) -> pd.DataFrame:
    """Per (V, r, family, L, d_x): non-embedding parameters, seed mean, std and count of the
    test loss (wies2021 Tables 3 and 4), sorted by V, r (full rank, <NA>, last), family
    (shallow first) and width."""
    df = _with_family(results, L_shallow, L_deep)
    t = (df.groupby(["V", "r", "family", "L", "d_x"], dropna=False)
         .agg(params_non_embedding=("params_non_embedding", "first"),
              mean=("test_loss", "mean"), std=("test_loss", "std"), seeds=("seed", "count"))
         .reset_index())
    t["order"] = (t["family"] == "deep").astype(int)
    return (t.sort_values(["V", "r", "order", "d_x"], na_position="last")
            .drop(columns="order").reset_index(drop=True))


def width_at(params: float, sizes: Sequence[float], widths: Sequence[float]) -> float:
    """The width at non-embedding count ``params`` by linear interpolation of log width in log
    parameters between a family's measured (sizes, widths); ``params`` must lie in their range.

    >>> round(width_at(2 * 100, [100, 400], [10, 40]), 6)  # halfway in log size
    20.0
    """
    s, w = np.asarray(sizes, dtype=float), np.asarray(widths, dtype=float)
    o = np.argsort(s)
    s, w = s[o], w[o]
    if not (s[0] * (1 - 1e-12) <= params <= s[-1] * (1 + 1e-12)):
        raise ParameterError("params", params, f"a size in the measured range [{s[0]:.4g}, "
                             f"{s[-1]:.4g}] (no extrapolation)")
    return float(np.exp(np.interp(np.log(params), np.log(s), np.log(w))))


def crossings(results: pd.DataFrame, *, L_shallow: int, L_deep: int, n_boot: int = 2000,
              level: float = LEVEL, seed: int = 0, band: float = 0.0) -> pd.DataFrame:
    """Per (V, r): the depth-efficiency point in non-embedding parameters (seed means,
    bootstrap over seeds, a gap within ``band`` standard errors of zero a tie;
    :mod:`attnbook.engines.depth_efficiency`) and as a shallow width, with its ratio to the
    embedding's rank bound min(V, r) (the width wies2021 predict).

    Columns: V, r (None for a full-rank embedding), rank (min(V, r), V at full rank), found,
    reason, point, low, high (parameters), width, width_low, width_high, low_open, high_open,
    found_fraction, ratio (width / rank), predicted_params (the shallow count at width =
    rank), band, L_shallow and max_width (the widest shallow net: levine2020's
    depth-inefficient regime, where wies2021 place the transition, needs 3^L_shallow above
    it), crossing (the :class:`~attnbook.engines.depth_efficiency.Crossing`).
    """
    df = _with_family(results, L_shallow, L_deep)
    df = df.assign(_r=df["r"].fillna(0).astype(int))  # 0: full rank (a key groupby keeps)
    rows = []
    for (V, r0), part in df.groupby(["V", "_r"], sort=True):
        r = None if r0 == 0 else int(r0)
        rank = int(V) if r is None else min(int(V), r)
        c = crossing_from_frame(part, size="params_non_embedding", loss="test_loss",
                                n_boot=n_boot, level=level, seed=seed, band=band)
        sh = part[part["family"] == "shallow"].drop_duplicates("d_x")
        conv = (lambda p, sh=sh: None if p is None else
                width_at(p, sh["params_non_embedding"], sh["d_x"]))
        width = conv(c.point)
        rows.append({"V": int(V), "r": r, "rank": rank, "found": c.found, "reason": c.reason,
                     "point": c.point, "low": c.low, "high": c.high, "width": width,
                     "width_low": conv(c.low), "width_high": conv(c.high),
                     "low_open": c.low_open, "high_open": c.high_open,
                     "found_fraction": c.found_fraction,
                     "ratio": None if width is None else width / rank,
                     "predicted_params": non_embedding_params(L_shallow, rank),
                     "band": float(band), "L_shallow": int(L_shallow),
                     "max_width": int(sh["d_x"].max()), "crossing": c})
    out = pd.DataFrame(rows)
    if rows:  # keep r as ints and None (a float column would turn None into NaN)
        out["r"] = pd.Series([row["r"] for row in rows], dtype=object)
    return out


def rank_controls(cross: pd.DataFrame) -> pd.DataFrame:
    """The rank-limited rows of :func:`crossings` (``r`` given), each with its full-rank
    control (the row of the same V without ``r``, swept at the same widths): ``control_width``
    (the control's crossing as a shallow width, None where it has none), ``did`` and
    ``did_se_value``: the difference of the gaps deep - shallow, rank-limited minus control, at
    the largest shared size minus at the smallest, and its standard error
    (:func:`attnbook.engines.depth_efficiency.gap_difference`). A rank that moves the transition
    makes ``did`` negative: the rank-limited gap falls across the widths by more than the control's,
    and a constant offset between the two settings cancels."""
    limited = cross[cross["r"].notna()]
    rows = []
    for _, row in limited.iterrows():
        ctrl = cross[(cross["V"] == row["V"]) & cross["r"].isna()]
        if len(ctrl) != 1:
            raise ParameterError("cross", f"V = {row['V']}", "one full-rank control per "
                                 "rank-limited vocabulary, swept at the same widths")
        c = ctrl.iloc[0]
        d = gap_difference(row["crossing"], c["crossing"])
        if len(d) < 2:
            raise ParameterError("cross", f"V = {row['V']}", "a control sharing at least two "
                                 "sizes with its rank-limited setting")
        rows.append({**row.to_dict(), "control_width": c["width"] if c["found"] else None,
                     "did": float(d["diff"].iloc[-1] - d["diff"].iloc[0]),
                     "did_se_value": float(math.hypot(d["se"].iloc[-1], d["se"].iloc[0]))})
    return pd.DataFrame(rows)


def pilot_gaps(results: pd.DataFrame, *, L_shallow: int, L_deep: int) -> pd.DataFrame:
    """Per (V, r, budget, seed, width pair) of a pilot: the training tokens (steps x batch x N),
    the shallow and deep widths, the shallow net's non-embedding parameters, both test losses
    and ``gap`` = deep - shallow (negative: the deep net is better), and where the results
    carry their training speed (``tokens_per_s``), ``s_per_token``: the seconds per training
    token of the two nets together, as measured. Each shallow net is
    paired with the deep net of the same budget whose non-embedding count is closest, as
    :func:`family_widths` matches them (within 25%); a net whose partner is not stored (a
    pilot still running) is left out.

    >>> rows = [dict(V=32, L=L, d_x=w, seed=0, steps=4, batch=2, N=16, test_loss=t,
    ...              params_non_embedding=non_embedding_params(L, w))
    ...         for L, w, t in ((1, 16, 3.0), (1, 64, 2.0), (2, 12, 3.5), (2, 46, 1.9))]
    >>> pilot_gaps(pd.DataFrame(rows), L_shallow=1, L_deep=2)[["tokens", "d_shallow", "gap"]]
       tokens  d_shallow  gap
    0     128         16  0.5
    1     128         64 -0.1
    """
    df = _with_family(results, L_shallow, L_deep)
    need = {"steps", "batch", "N"}
    if not need <= set(df.columns):
        raise ParameterError("results", sorted(df.columns), f"columns {sorted(need)} as well")
    df = df.assign(_r=df["r"].fillna(0).astype(int))
    if "seed" not in df.columns:
        df = df.assign(seed=0)
    rows = []
    for (V, r0, steps, seed), part in df.groupby(["V", "_r", "steps", "seed"], sort=True):
        sh = part[part["family"] == "shallow"].sort_values("d_x")
        dp = part[part["family"] == "deep"].sort_values("d_x")
        pairs = []
        for a in sh.itertuples():
            if dp.empty:
                break
            ratio = dp["params_non_embedding"] / a.params_non_embedding
            b = dp.loc[(ratio.apply(math.log)).abs().idxmin()]
            if abs(math.log(b["params_non_embedding"] / a.params_non_embedding)) \
                    <= math.log(1.25):
                pairs.append((a, b))
        for a, b in pairs:
            rows.append({"V": int(V), "r": None if r0 == 0 else int(r0), "steps": int(steps),
                         "seed": int(seed),
                         "tokens": int(steps * a.batch * a.N), "d_shallow": int(a.d_x),
                         "d_deep": int(b["d_x"]), "params": int(a.params_non_embedding),
                         "loss_shallow": float(a.test_loss), "loss_deep": float(b["test_loss"]),
                         "gap": round(float(b["test_loss"]) - float(a.test_loss), 12),
                         **({"s_per_token": 1 / float(a.tokens_per_s)
                             + 1 / float(b["tokens_per_s"])} if "tokens_per_s" in df else {})})
    return pd.DataFrame(rows)


def seed_mean(results: pd.DataFrame) -> pd.DataFrame:
    """One row per net of a sweep (V, L, d_x, budget), its test loss the mean over the seeds
    (``seed``: the first), as :func:`pilot_gaps` reads a pilot's single seed.

    >>> rows = [dict(V=8, L=1, d_x=4, steps=2, batch=1, N=4, params_non_embedding=10, seed=s,
    ...              test_loss=1.0 + s) for s in (3, 4)]
    >>> seed_mean(pd.DataFrame(rows))[["seed", "test_loss"]].values.tolist()
    [[3.0, 4.5]]
    """
    keys = [k for k in ("V", "L", "d_x", "steps", "batch", "N", "params_non_embedding")
            if k in results.columns]
    return (results.groupby(keys, as_index=False)
            .agg(test_loss=("test_loss", "mean"), seed=("seed", "min")))


def sweep_gaps(results: pd.DataFrame, *, V: int, L_shallow: int,
               L_deep: int) -> pd.DataFrame:
    """:func:`pilot_gaps` of a sweep's full-rank nets of vocabulary ``V``, each test loss the
    mean over the seeds (:func:`seed_mean`), with ``factor``, the shallow width over V, and
    the two depths: a sweep of several seeds on the axes of its pilot. Empty without a
    matched pair.

    >>> rows = [dict(V=32, L=L, d_x=w, seed=s, steps=4, batch=2, N=16, test_loss=t + s / 10,
    ...              params_non_embedding=non_embedding_params(L, w))
    ...         for L, w, t in ((1, 16, 3.0), (2, 12, 3.5)) for s in (0, 1)]
    >>> sweep_gaps(pd.DataFrame(rows), V=32, L_shallow=1, L_deep=2)[["factor", "gap"]]
       factor  gap
    0     0.5  0.5
    """
    part = results[results["V"] == V]
    if "r" in part:
        part = part[[_rank(r) is None for r in part["r"]]]
    gaps = pilot_gaps(seed_mean(part), L_shallow=L_shallow, L_deep=L_deep) if len(part) \
        else pd.DataFrame()
    return gaps.assign(factor=gaps["d_shallow"] / V, L_shallow=L_shallow,
                       L_deep=L_deep) if len(gaps) else gaps
