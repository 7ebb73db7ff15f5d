"""wies2021's Figure 7: what a low-rank positional embedding costs, against a low vocabulary rank.

wies2021 (appendix C.4, Figure 7) train language models whose positional embedding is factored
to rank r_e (``attnbook.engines.lm.LMConfig.r_e``) and find that rank 16 at the context N = 512 is
on par with full rank, and that even rank 1 costs about as much as a vocabulary embedding of rank
64 to 128 at the width d_x = 512. The claim W-F7 reads those points at the scale of a run:
positional rank max(1, N // pos_divisor), positional rank 1, and vocabulary ranks
d_x // high_divisor and d_x // low_divisor (the divisors are the criterion's, in the ledger).
This module holds the pilot that sizes a long run of it:

* :func:`f7_ranks`: the four ranks W-F7 reads at a context N and a width d_x;
* :func:`f7_configs`: the nets W-F7 compares (full rank, the two positional ranks, the two
  vocabulary ranks) at one budget of optimizer steps, one seed; the pilot trains them at each
  of its budgets, each with its own schedule;
* :func:`f7_pilot_statistics`: per budget, the five test losses and W-F7's deciding statistics:
  ``pos_gap`` (positional rank N/32 minus full rank; the criterion asks it to be within the seed
  noise of zero), ``rank1_gap`` (positional rank 1 minus full rank) and ``rank1_between``
  (where the rank-1 positional loss lies between the vocabulary ranks: 0 at d_x/4, 1 at
  d_x/8; the criterion asks for 0 to 1);
* :func:`f7_pilot_gaps`: the same as three gaps in nats per budget, each with the side W-F7 asks
  of it, in the long form that :func:`attnbook.engines.pilots.trend` reads.

Used by: wies2021_rank_bottleneck.

>>> f7_ranks(N=128, d_x=64, pos_divisor=32, low_divisor=8, high_divisor=4)
{'r_pos': 4, 'r_high': 16, 'r_low': 8}
"""

import math

import pandas as pd

from ..engines.lm_sweep import lm_config
from ..errors import ParameterError

__all__ = ["f7_ranks", "f7_configs", "f7_pilot_statistics", "f7_pilot_gaps", "pilot_reading",
           "f7_sweep_statistics"]


def f7_ranks(*, N: int, d_x: int, pos_divisor: int, low_divisor: int, high_divisor: int
             ) -> dict[str, int]:
    """The ranks W-F7 reads besides positional rank 1: ``r_pos`` = max(1, N // pos_divisor)
    (the positional rank on par with full rank), ``r_high`` = d_x // high_divisor and
    ``r_low`` = d_x // low_divisor (the vocabulary ranks whose losses bracket positional rank
    1's; r_high the larger, so the lower loss). At the paper's N = d_x = 512: 16, 128 and 64.

    >>> f7_ranks(N=512, d_x=512, pos_divisor=32, low_divisor=8, high_divisor=4)
    {'r_pos': 16, 'r_high': 128, 'r_low': 64}
    >>> f7_ranks(N=16, d_x=16, pos_divisor=32, low_divisor=8, high_divisor=4)["r_pos"]
    1
    """
    if not 1 <= high_divisor < low_divisor:
        raise ParameterError("high_divisor", high_divisor,
                             f"an integer 1 <= high_divisor < low_divisor = {low_divisor}")
    if d_x // low_divisor < 1:
        raise ParameterError("d_x", d_x, f"d_x >= low_divisor = {low_divisor} (a vocabulary "
                                         "rank d_x // low_divisor of at least 1)")
    return {"r_pos": max(1, N // pos_divisor), "r_high": d_x // high_divisor,
            "r_low": d_x // low_divisor}


def f7_configs(*, steps: int, seed: int, N: int, d_x: int, pos_divisor: int,
               low_divisor: int, high_divisor: int, **common) -> list[dict]:
    """The nets W-F7 compares at one budget of ``steps`` optimizer steps, one seed: the
    full-rank net, positional ranks 1 and :func:`f7_ranks`' r_pos (one net where they
    coincide) and vocabulary ranks r_high and r_low, in that order; ``common``: the other
    arguments of :func:`attnbook.engines.lm_sweep.lm_config` (corpus, V, L, H, batch, lr, ...),
    without r or r_e. The pilot trains them at each of its budgets.

    >>> cs = f7_configs(steps=8, seed=0, N=128, d_x=64, pos_divisor=32, low_divisor=8,
    ...                 high_divisor=4, corpus="kjv", V=64, L=2, batch=2, lr=1e-3, warmup=1)
    >>> [(c["steps"], c["r_e"], c["r"]) for c in cs]
    [(8, None, None), (8, 1, None), (8, 4, None), (8, None, 16), (8, None, 8)]
    """
    taken = sorted({"r", "r_e"} & set(common))
    if taken:
        raise ParameterError("common", taken, "no r or r_e (W-F7's nets set them)")
    k = f7_ranks(N=N, d_x=d_x, pos_divisor=pos_divisor, low_divisor=low_divisor,
                 high_divisor=high_divisor)
    if k["r_pos"] >= N:
        raise ParameterError("N", N, f"a context above the positional rank {k['r_pos']}")
    nets = [{}, {"r_e": 1}] + ([{"r_e": k["r_pos"]}] if k["r_pos"] != 1 else []) \
        + [{"r": k["r_high"]}, {"r": k["r_low"]}]
    return [lm_config(N=N, d_x=d_x, steps=steps, seed=seed, **common, **net) for net in nets]


def _rank(value) -> int | None:
    return None if value is None or pd.isna(value) else int(value)


def f7_pilot_statistics(results: pd.DataFrame, *, pos_divisor: int, low_divisor: int,
                        high_divisor: int) -> pd.DataFrame:
    """Per budget of a pilot (:func:`f7_configs` at each; one row per net with its configuration's
    columns and ``test_loss``): the steps, the training tokens per net (steps x batch x N), the
    ranks read (:func:`f7_ranks`), the test losses of the full-rank net (``loss_full``), of
    positional ranks r_pos and 1 (``loss_pos``, ``loss_rank1``) and of vocabulary ranks r_high
    and r_low (``loss_high``, ``loss_low``), and W-F7's statistics:

    * ``pos_gap`` = loss_pos - loss_full: the criterion asks |pos_gap| <= n_std seed std;
    * ``rank1_gap`` = loss_rank1 - loss_full: what positional rank 1 costs;
    * ``rank1_between`` = (loss_rank1 - loss_high) / (loss_low - loss_high): 0 at vocabulary
      rank r_high, 1 at r_low, so the criterion's second side asks for 0 to 1 (below 0: rank 1
      better than r_high); NaN where r_low's loss is not above r_high's, as the criterion's
      bracket is then empty (no rank-1 loss meets it but one equal to both);

    and, where the results carry their speed (``tokens_per_s``), ``s_per_token``: the seconds
    per training token of the budget's nets together, as measured. A budget with a net not yet
    stored (a pilot still running) is left out; two results of one net at one budget (two
    seeds) are an error.

    >>> cs = f7_configs(steps=10, seed=0, N=128, d_x=64, pos_divisor=32, low_divisor=8,
    ...                 high_divisor=4, corpus="kjv", V=64, L=2, batch=2, lr=1e-3, warmup=1)
    >>> rows = [dict(c, test_loss=t) for c, t in zip(cs, [2.0, 2.3, 2.02, 2.2, 2.4])]
    >>> s = f7_pilot_statistics(pd.DataFrame(rows), pos_divisor=32, low_divisor=8, high_divisor=4)
    >>> s[["tokens", "pos_gap", "rank1_gap", "rank1_between"]].round(3)
       tokens  pos_gap  rank1_gap  rank1_between
    0    2560     0.02        0.3            0.5
    """
    need = {"steps", "batch", "N", "d_x", "r", "r_e", "test_loss"}
    if not need <= set(results.columns):
        raise ParameterError("results", sorted(results.columns),
                             f"columns {sorted(need)} as well")
    rows = []
    for steps, part in results.groupby("steps", sort=True):
        first = part.iloc[0]
        k = f7_ranks(N=int(first["N"]), d_x=int(first["d_x"]), pos_divisor=pos_divisor,
                     low_divisor=low_divisor, high_divisor=high_divisor)
        nets = {"full": (None, None), "pos": (None, k["r_pos"]), "rank1": (None, 1),
                "high": (k["r_high"], None), "low": (k["r_low"], None)}
        keys = [(_rank(r), _rank(r_e)) for r, r_e in zip(part["r"], part["r_e"], strict=True)]
        found = {}
        for name, key in nets.items():
            at = [i for i, kk in enumerate(keys) if kk == key]
            if len(at) > 1:
                raise ParameterError("results", f"{len(at)} nets with (r, r_e) = {key} at "
                                     f"{steps} steps", "one seed per net and budget")
            if at:
                found[name] = at[0]
        if len(found) < len(nets):
            continue  # still training
        loss = {name: float(part["test_loss"].iloc[i]) for name, i in found.items()}
        spread = loss["low"] - loss["high"]
        row = {"steps": int(steps), "tokens": int(steps * first["batch"] * first["N"]), **k,
               **{f"loss_{name}": value for name, value in loss.items()},
               "pos_gap": round(loss["pos"] - loss["full"], 12),
               "rank1_gap": round(loss["rank1"] - loss["full"], 12),
               "rank1_between": (loss["rank1"] - loss["high"]) / spread if spread > 0 else math.nan}
        if "tokens_per_s" in part.columns:  # r_pos = 1: one net read twice, counted once
            row["s_per_token"] = sum(1 / float(part["tokens_per_s"].iloc[i])
                                     for i in set(found.values()))
        rows.append(row)
    return pd.DataFrame(rows)


def f7_pilot_gaps(statistics: pd.DataFrame) -> pd.DataFrame:
    """:func:`f7_pilot_statistics` as three gaps in nats per budget (long form, for
    :func:`attnbook.engines.pilots.trend` with ``by=["statistic"]``), each with ``needs``, the side
    W-F7 asks of it: positional rank r_pos minus full rank (near zero: within the seed noise),
    positional rank 1 minus vocabulary rank r_high (at least 0) and vocabulary rank r_low
    minus positional rank 1 (at least 0). ``s_per_token`` is carried where present.

    >>> s = pd.DataFrame([dict(steps=10, tokens=2560, r_pos=4, r_high=16, r_low=8,
    ...                        loss_full=2.0, loss_pos=2.02, loss_rank1=2.3, loss_high=2.2,
    ...                        loss_low=2.4)])
    >>> g = f7_pilot_gaps(s)
    >>> g[["statistic", "gap"]].round(3)
                     statistic   gap
    0  r_e = 4 minus full rank  0.02
    1     r_e = 1 minus r = 16  0.10
    2      r = 8 minus r_e = 1  0.10
    >>> list(g["needs"])
    ['near 0 (within the seed noise)', 'at least 0', 'at least 0']
    """
    rows = []
    for s in statistics.itertuples():
        extra = {"s_per_token": s.s_per_token} if "s_per_token" in statistics.columns else {}
        for name, gap, needs in (
                (f"r_e = {s.r_pos} minus full rank", s.loss_pos - s.loss_full,
                 "near 0 (within the seed noise)"),
                (f"r_e = 1 minus r = {s.r_high}", s.loss_rank1 - s.loss_high, "at least 0"),
                (f"r = {s.r_low} minus r_e = 1", s.loss_low - s.loss_rank1, "at least 0")):
            rows.append({"statistic": name, "steps": int(s.steps), "tokens": int(s.tokens),
                         "gap": round(float(gap), 12), "needs": needs, **extra})
    return pd.DataFrame(rows)


def pilot_reading(reading: pd.DataFrame, *, top_steps: int, long_steps: int) -> str:
    """The pilot's reading in words: ``reading`` is :func:`attnbook.engines.pilots.trend` of
    :func:`f7_pilot_gaps` with each statistic's ``needs``, read at the pilot's largest budget
    (``top_steps`` optimizer steps). A gap W-F7 needs at least 0 that is negative and falls
    (``per_doubling`` < 0) by more than 2 standard errors of the seeds (``per_doubling_se``)
    is heading away; with one seed the change has no standard error and the reading says only
    what was measured. ``long_steps``: the budget the long profile's sweep trains, said to be
    the pilot's largest where it is.

    >>> r = pd.DataFrame({"statistic": ["r_e = 4 minus full rank", "r_e = 1 minus r = 16",
    ...                                 "r = 8 minus r_e = 1"],
    ...                   "needs": ["near 0 (within the seed noise)", "at least 0",
    ...                             "at least 0"],
    ...                   "tokens": [4096000] * 3, "gap": [-0.058, 0.179, -0.159],
    ...                   "per_doubling": [-0.020, 0.101, -0.092], "seeds": [1] * 3})
    >>> print(pilot_reading(r, top_steps=2000, long_steps=2000))  # doctest: +NORMALIZE_WHITESPACE
    Reading the pilot: at 4,096,000 tokens (2000 steps), r_e = 4 minus full rank -0.058 nats
    (-0.020 per doubling); r_e = 1 minus r = 16 +0.179 nats (+0.101 per doubling); r = 8 minus
    r_e = 1 -0.159 nats (-0.092 per doubling). r = 8 minus r_e = 1 is below the zero W-F7 asks
    at the largest budget and fell over the last budgets; the pilot has one seed, so that change
    has no standard error and says nothing of where a longer budget would take it. The long
    profile's sweep trains 2000 steps, the pilot's largest budget: it measures W-F7 there with
    its seed noise, and W-F2, W-Tab1 and W-Tab2-5 beside it, at the pilot's deeper and wider
    scale.
    """
    wrong = reading[(reading["needs"] == "at least 0") & (reading["gap"] < 0)]
    one_seed = int(reading["seeds"].max()) < 2 if "seeds" in reading else True
    se = reading["per_doubling_se"] if "per_doubling_se" in reading else None
    falling = wrong["per_doubling"] < 0
    if not one_seed and se is not None:
        falling &= wrong["per_doubling"] < -2 * se.loc[wrong.index]
    away = wrong[falling]
    said = "; ".join(f"{r.statistic} {r.gap:+.3f} nats ({r.per_doubling:+.3f} per doubling)"
                     for r in reading.itertuples())
    text = (f"Reading the pilot: at {int(reading['tokens'].max()):,} tokens ({top_steps} "
            f"steps), {said}. ")
    verb = "is" if len(away) == 1 else "are"
    if len(away) and one_seed:
        text += (f"{' and '.join(away['statistic'])} {verb} below the zero W-F7 asks at the "
                 "largest budget and fell over the last budgets; the pilot has one seed, so that "
                 "change has no standard error and says nothing of where a longer budget would "
                 "take it. ")
    elif len(away):
        text += (f"{' and '.join(away['statistic'])} {verb} below the zero W-F7 asks and "
                 "falling by more than 2 standard errors of the seeds per doubling. ")
    elif len(wrong):
        text += (f"{' and '.join(wrong['statistic'])} "
                 f"{'is' if len(wrong) == 1 else 'are'} below zero, not falling beyond the "
                 "noise. ")
    else:
        text += "Every gap that must be at least zero is. "
    return text + (f"The long profile's sweep trains {long_steps} steps"
                   + (", the pilot's largest budget" if long_steps == top_steps else "")
                   + ": it measures W-F7 there with its seed noise, and W-F2, W-Tab1 and "
                   "W-Tab2-5 beside it, at the pilot's deeper and wider scale.")


def f7_sweep_statistics(results: pd.DataFrame, *, d_x: int, steps: int, pos_divisor: int,
                        low_divisor: int, high_divisor: int) -> pd.DataFrame:
    """:func:`f7_pilot_statistics` of a sweep of several seeds: its own model's nets of width
    ``d_x`` trained ``steps`` steps (not the baselines, the GPT-2 references or the longer
    convergence runs), each test loss the mean over the seeds: the sweep on the axes of its
    pilot. Empty without every net W-F7 reads.

    >>> cs = f7_configs(steps=10, seed=0, N=128, d_x=64, pos_divisor=32, low_divisor=8,
    ...                 high_divisor=4, corpus="kjv", V=64, L=2, batch=2, lr=1e-3, warmup=1)
    >>> rows = [dict(c, seed=s, test_loss=t + s / 10, model="ours")
    ...         for c, t in zip(cs, [2.0, 2.3, 2.02, 2.2, 2.4]) for s in (0, 2)]
    >>> t = f7_sweep_statistics(pd.DataFrame(rows), d_x=64, steps=10, pos_divisor=32,
    ...                         low_divisor=8, high_divisor=4)
    >>> t[["loss_full", "rank1_between"]].round(3)
       loss_full  rank1_between
    0        2.1            0.5
    """
    part = results[(results["d_x"] == d_x) & (results["steps"] == steps)]
    if "model" in part:
        part = part[part["model"] == "ours"]
    if not len(part):
        return pd.DataFrame()
    key = (part["r"].map(lambda v: _rank(v) or 0), part["r_e"].map(lambda v: _rank(v) or 0))
    mean = (part.assign(_r=key[0], _r_e=key[1])
            .groupby(["_r", "_r_e", "steps", "batch", "N", "d_x"], as_index=False)
            .agg(test_loss=("test_loss", "mean"), r=("r", "first"), r_e=("r_e", "first")))
    return f7_pilot_statistics(mean.drop(columns=["_r", "_r_e"]), pos_divisor=pos_divisor,
                               low_divisor=low_divisor, high_divisor=high_divisor)
