"""wies2021's Figures 2 and 7 and Tables 1-2, read from one sweep of trained language models.

wies2021 (section 5.1, Figure 2) lower the rank r of the input embedding of a width-d_x net
(``attnbook.engines.lm.LMConfig.r``: the embedding factored as M_low M_vocab) and compare its test
loss with full-rank nets of smaller width: the loss rises much faster with falling r, and a net with
r / d_x = 16/680 is matched by a full-rank net about 25% smaller. A factored net with r > d_x has
full rank, only factored: it is the control that separates the cost of the rank from the cost
of the factoring itself.

* :func:`baseline_match`: the baseline size with a net's loss, or on which side of the
  baselines' range the loss falls (section 5.3's redundancy reads it too);
* :func:`net_table`: one row per net of a sweep (its seeds' losses, their mean and standard
  deviation, its parameter count);
* :func:`bottleneck_table`: the factored nets with the matched full-rank size of each (log-size
  interpolation over the baselines' monotone envelope, ``attnbook.engines.lm_sweep.matched_size``),
  as a share of its own size and of the control's matched size, and its loss above the control's in
  standard errors of the seeds;
* :func:`f2_nets`: the same as the records the W-F2 criterion reads;
* :func:`f7_measurement`: what W-F7 reads (Figure 7: positional against vocabulary rank), as
  seed means;
* :func:`repeat_losses`: the seed losses of the repeated points of Tables 1 and 2.

Each takes ``seeds``, the seeds whose models it reads, so a verdict can be decided again with
a seed left out (the stability rule).

Used by: wies2021_rank_bottleneck, wies2021_attention_ratio (baseline_match).
"""

import math

import numpy as np
import pandas as pd

from ..engines.lm_sweep import matched_size

__all__ = ["baseline_match", "net_table", "bottleneck_table", "f2_nets", "f7_measurement",
           "repeat_losses"]


def baseline_match(sizes, losses, loss: float) -> tuple[float, str]:
    """The size of the baseline with the same loss (log-size interpolation over the baselines'
    monotone envelope, :func:`attnbook.engines.lm_sweep.matched_size`) and ""; or, for a loss
    outside the baselines' range, NaN and its side: "below" (worse than the smallest baseline)
    or "above" (better than the best). A loss equal to the best is matched.

    >>> baseline_match([100, 400], [3.0, 2.0], 2.5), baseline_match([100, 400], [3.0, 2.0], 2.0)
    ((200.0, ''), (400.0, ''))
    >>> baseline_match([100, 400], [3.0, 2.0], 3.5), baseline_match([100, 400], [3.0, 2.0], 1.9)
    ((nan, 'below'), (nan, 'above'))
    """
    sizes, losses = np.asarray(sizes, dtype=float), np.asarray(losses, dtype=float)
    if loss > losses[np.argsort(sizes)][0]:
        return math.nan, "below"
    if loss < losses.min():
        return math.nan, "above"
    return matched_size(sizes, losses, loss), ""


def net_table(results: pd.DataFrame, seeds=None) -> pd.DataFrame:
    """One row per net (group, d_x, r, r_e) of our model: ``losses`` (one per seed, in seed
    order), ``test_loss`` (their mean), ``std`` (sample standard deviation; NaN with one seed),
    ``seeds`` (how many) and ``params_total``; only the seeds in ``seeds`` when given.

    >>> frame = pd.DataFrame({"group": "rank", "model": "ours", "d_x": 8, "r": [2.0, 2.0],
    ...                       "r_e": np.nan, "seed": [0, 1], "params_total": 100,
    ...                       "test_loss": [2.0, 2.2]})
    >>> net_table(frame)[["r", "seeds", "test_loss"]].to_dict("records")
    [{'r': 2.0, 'seeds': 2, 'test_loss': 2.1}]
    """
    nets = results[results["model"] == "ours"]
    if seeds is not None:
        nets = nets[nets["seed"].isin(list(seeds))]
    nets = nets.sort_values("seed").assign(r=nets["r"].fillna(0), r_e=nets["r_e"].fillna(0))
    out = (nets.groupby(["group", "d_x", "r", "r_e"], sort=False)
           .agg(params_total=("params_total", "first"), losses=("test_loss", list),
                seeds=("seed", "count")).reset_index())
    out["test_loss"] = [float(np.mean(x)) for x in out["losses"]]
    out["std"] = [float(np.std(x, ddof=1)) if len(x) > 1 else math.nan for x in out["losses"]]
    return out.assign(r=out["r"].replace(0, np.nan), r_e=out["r_e"].replace(0, np.nan))


def bottleneck_table(results: pd.DataFrame, d_x: int, seeds=None) -> pd.DataFrame:
    """The factored nets (group ``rank``) of width ``d_x``, by rank: each one's matched
    full-rank size (over the baselines and the unfactored net of width d_x; 0 where its loss is
    above every full-rank net's, NaN where it is below them all), as a share of its
    own size (``matched_over_own``) and of the control's matched size (``matched_over_control``;
    the control is the factored net of the smallest rank above d_x, full rank only factored),
    and its loss above the control's (``cost``) in standard errors of the seeds
    (``cost_se``: sqrt(s_r^2 / n_r + s_c^2 / n_c)). ``control`` marks the control's row."""
    nets = net_table(results, seeds)
    base = nets[nets["group"].isin(["baseline", "full"])].sort_values("params_total")
    low = nets[(nets["group"] == "rank") & (nets["d_x"] == d_x)].sort_values("r")
    match = [baseline_match(base["params_total"], base["test_loss"], x) for x in low["test_loss"]]
    low = low.assign(matched_params=[0.0 if side == "below" else m for m, side in match])
    low = low.assign(matched_over_own=low["matched_params"] / low["params_total"],
                     control=False)
    above = low[low["r"] > d_x]
    if len(above):
        c = above.index[0]
        low.loc[c, "control"] = True
        ctrl = low.loc[c]
        low["matched_over_control"] = (low["matched_params"] / ctrl["matched_params"]
                                       if ctrl["matched_params"] > 0 else math.nan)
        low["cost"] = low["test_loss"] - ctrl["test_loss"]
        low["cost_se"] = np.sqrt(low["std"] ** 2 / low["seeds"]
                                 + ctrl["std"] ** 2 / ctrl["seeds"])
    else:
        low = low.assign(matched_over_control=math.nan, cost=math.nan, cost_se=math.nan)
    return low.reset_index(drop=True)


def f2_nets(table: pd.DataFrame) -> list[dict]:
    """The rows of :func:`bottleneck_table` as W-F2 reads them: r, each seed's loss, own and
    matched full-rank size."""
    return [{"r": int(t.r), "losses": [float(x) for x in t.losses],
             "params": float(t.params_total), "matched": float(t.matched_params)}
            for t in table.itertuples()]


def f7_measurement(results: pd.DataFrame, d_x: int, seeds=None) -> dict:
    """W-F7's measurement from the nets of width ``d_x``: ``pos`` (positional rank r_e ->
    mean test loss, the vocabulary at full rank), ``vocab`` (vocabulary rank r -> mean test
    loss), the unfactored net's mean loss ``full_loss`` and its seed standard deviation
    ``full_std``; only the seeds in ``seeds`` when given."""
    nets = net_table(results, seeds)
    nets = nets[nets["d_x"] == d_x]
    full = nets[nets["group"] == "full"].iloc[0]
    pos = nets[nets["group"] == "positional"]
    vocab = nets[nets["group"] == "rank"]
    return {"pos": {int(r): float(x) for r, x in zip(pos["r_e"], pos["test_loss"], strict=True)},
            "vocab": {int(r): float(x) for r, x in zip(vocab["r"], vocab["test_loss"],
                                                        strict=True)},
            "full_loss": float(full["test_loss"]), "full_std": float(full["std"])}


def repeat_losses(results: pd.DataFrame, tab2_rank: int, seeds=None) -> dict[str, list]:
    """The seed losses (in seed order) of the points Tables 1 and 2 repeat: ``full`` (our
    unfactored net), ``gpt2`` (GPT2LMHeadModel of its architecture), ``tab2`` (our net of rank
    ``tab2_rank``) and ``long`` (the unfactored net trained longer); only ``seeds`` when given.

    >>> frame = pd.DataFrame({"group": ["full", "full", "gpt2"], "model": ["ours", "ours", "gpt2"],
    ...                       "r": np.nan, "seed": [1, 0, 0], "test_loss": [2.1, 2.0, 2.2]})
    >>> repeat_losses(frame, 4)
    {'full': [2.0, 2.1], 'gpt2': [2.2], 'tab2': [], 'long': []}
    """
    rows = results if seeds is None else results[results["seed"].isin(list(seeds))]
    rows = rows.sort_values("seed")
    ours = rows["model"] == "ours"
    pick = {"full": ours & (rows["group"] == "full"), "gpt2": rows["model"] == "gpt2",
            "tab2": ours & (rows["group"] == "rank") & (rows["r"] == tab2_rank),
            "long": ours & (rows["group"] == "long")}
    return {k: [float(x) for x in rows.loc[m, "test_loss"]] for k, m in pick.items()}
