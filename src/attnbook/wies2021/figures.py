"""Figures and tables of wies2021's trained language models, drawn from what the chapters read.

The attention ratio (section 5.3):

* :func:`figure4`: the best depth's loss per ratio against size, and the matched fraction per
  ratio beside the paper's two readings (W-F4);
* :func:`figure6`: every depth of every ratio, with the best depths of the paper's Table 5
  (W-F6); both colour a ratio by :func:`ratio_colours`;
* :func:`ratio_pilot_figure` and :func:`ratio_pilot_table`: the pilot, W-F4's matched fraction
  and W-F6's spreads against the training tokens, the profiles that have run as markers;
* :func:`ratio_remarks`: what the chapter's remarks quote of its sweep.

The embedding rank (section 5.1, appendix C.4, Tables 1-2):

* :func:`figure2`: the factored nets against full-rank nets of smaller width (W-F2);
* :func:`figure7_curves` and :func:`figure7`: the loss against the vocabulary and the
  positional rank (W-F7);
* :func:`positional_pilot_figure`: W-F7's pilot, each rank's cost and where positional rank 1
  lies between the vocabulary ranks;
* :func:`seed_table`: the repeated points of Tables 1 and 2, their seed mean and spread.

Each draws or arranges what its chapter measured (the tables of
:mod:`attnbook.wies2021.attention_ratio`, :mod:`attnbook.wies2021.rank_bottleneck` and
:mod:`attnbook.wies2021.positional_rank`) and decides nothing; the profiles that have run are
drawn by the ``mark`` a chapter passes (:func:`attnbook.book.pilot.mark`).

Used by: wies2021_attention_ratio, wies2021_rank_bottleneck.

>>> ratio_colours([16, 1, 4])[1][:3].round(3).tolist()  # viridis from its dark end
[0.267, 0.005, 0.329]
"""

from collections.abc import Iterable

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

__all__ = ["ratio_colours", "figure4", "figure6", "ratio_pilot_figure", "ratio_pilot_table",
           "ratio_remarks", "figure2", "figure2_labels", "figure7_curves", "figure7",
           "positional_pilot_figure", "seed_table"]


def ratio_colours(ratios: Iterable[int]) -> dict:
    """One colour per bottleneck ratio, the smallest darkest (viridis up to 0.9: the largest
    ratio stays visible on white)."""
    ratios = sorted(set(ratios))
    return dict(zip(ratios, plt.cm.viridis(np.linspace(0, 0.9, len(ratios))), strict=True))


def _size_ticks(ax, table: pd.DataFrame) -> None:
    """Tick the log size axis at the baseline's target sizes (the ratio-1 rows' ``size``)."""
    sizes = sorted(int(s) for s in set(table.loc[table["ratio"] == 1, "size"]))
    ax.set_xticks(sizes, [f"{s:,}" for s in sizes])
    ax.xaxis.set_minor_formatter(plt.NullFormatter())


def figure4(best: pd.DataFrame, red: pd.DataFrame, fractions: dict, *, paper: dict,
            tol: float):
    """wies2021 Figure 4 redrawn. Left: the seed-mean loss of the best depth per ratio against
    the non-embedding count (:func:`attnbook.wies2021.attention_ratio.best_depth`), ticked at
    the baseline's target sizes. Right: the matched fraction of each size (dots, ``red``:
    :func:`~attnbook.wies2021.attention_ratio.redundancy`) and its mean over sizes
    (``fractions``; squares, 1 at the baseline), beside ``paper`` (ratio -> the paper's
    fraction; stars with bars of +- ``tol``). Returns the figure."""
    colours = ratio_colours(best["ratio"])
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(10.5, 4))
    for rho, part in best.groupby("ratio"):
        ax.plot(part["params_non_embedding"], part["mean"], "o-", color=colours[rho],
                label=f"$H d_a/d_x$ = {rho}" + (" (baseline)" if rho == 1 else ""))
    ax.set(xscale="log", xlabel="non-embedding parameters (target sizes marked)",
           ylabel="test loss (nats per token)", title="best depth per ratio and size")
    _size_ticks(ax, best)
    ax.legend(fontsize=8)
    bx.plot(red["ratio"], red["fraction"], "o", color="tab:blue", alpha=0.5, ms=5)
    ours = sorted(fractions.items())
    bx.plot([1] + [r for r, _ in ours], [1.0] + [f for _, f in ours], "s-", color="tab:blue",
            label="here: matched fraction (mean over sizes; dots: each size)")
    for i, (rho, f) in enumerate(paper.items()):
        bx.errorbar([rho], [f], yerr=[[tol], [tol]], fmt="*", color="k", ms=12, capsize=4,
                    label="paper, section 5.3 (bar: W-F4 tolerance)" if i == 0 else None)
    bx.axhline(1.0, color="0.6", lw=0.8, ls=":")
    ratios = sorted(colours)
    bx.set(xscale="log", xticks=ratios, xticklabels=map(str, ratios), ylim=(0, 1.25),
           xlabel="bottleneck ratio $H d_a / d_x$",
           ylabel="baseline size with the same loss / own size",
           title="matched fraction (1 - redundancy)")
    bx.xaxis.set_minor_formatter(plt.NullFormatter())
    bx.legend(fontsize=7, loc="lower left")
    fig.tight_layout()
    return fig


def figure6(table: pd.DataFrame, best: pd.DataFrame, paper_table: pd.DataFrame):
    """wies2021 Figure 6 redrawn: every depth of every ratio (``table``,
    :func:`attnbook.wies2021.attention_ratio.ratio_loss_table`: markers by depth, bars of one seed
    standard deviation), each ratio's best depths joined by a line (``best``), the legend
    naming the best depths here and in ``paper_table`` (the paper's Table 5, its rows
    ``in_figure_4``). Returns the figure."""
    colours = ratio_colours(table["ratio"])
    markers = dict(zip(sorted(set(table["L"])), "os^Dv<>p", strict=False))
    fig, ax = plt.subplots(figsize=(6.8, 4.3))
    paper_best = paper_table[paper_table["in_figure_4"]].groupby("ratio")["L"].agg(
        lambda s: "/".join(map(str, s)))
    for rho, part in table.groupby("ratio"):
        b = best[best["ratio"] == rho]
        ours_L = "/".join(map(str, sorted(set(b["L"]))))
        ax.plot(b["params_non_embedding"], b["mean"], "-", color=colours[rho], lw=1.2,
                label=f"ratio {rho}: best L here {ours_L}; paper {paper_best.get(rho, '-')}")
        for L, p in part.groupby("L"):
            ax.errorbar(p["params_non_embedding"], p["mean"], yerr=p["std"], fmt=markers[L],
                        color=colours[rho], ms=5, mfc="none", capsize=2, lw=0.8)
    for L, m in markers.items():
        ax.plot([], [], m, color="0.3", mfc="none", label=f"L = {L}")
    ax.set(xscale="log", xlabel="non-embedding parameters (target sizes marked)",
           ylabel="test loss (nats per token)")
    _size_ticks(ax, table)
    ax.legend(fontsize=7)
    fig.tight_layout()
    return fig


def ratio_pilot_figure(fractions: pd.DataFrame, spreads: pd.DataFrame,
                       profile_fractions: pd.DataFrame, profile_spreads: pd.DataFrame, *,
                       paper: dict, tol: float, factor: float, depths: Iterable[int],
                       mark=None):
    """The attention-ratio pilot against the training tokens per net. Left: the matched
    fraction per ratio (``fractions``,
    :func:`attnbook.wies2021.attention_ratio.pilot_fractions`; an open triangle at its
    ``bound`` where no baseline matched, pointing down where the net is worse than every
    baseline and up where it is better), the paper's fraction of each ratio in ``paper``
    (dashed, in a band of +- ``tol``). Right: per size, the spread of the best-depth loss
    across ratios beside ``factor`` times the largest across depths (``spreads``,
    :func:`~attnbook.wies2021.attention_ratio.pilot_spreads`). The same reads of the profiles
    that have run (``profile_*``, with a ``profile`` column) as their markers, drawn by
    ``mark`` (:func:`attnbook.book.pilot.mark`'s signature; none without it). Returns the
    figure."""
    fr, sp = fractions, spreads
    tint = {rho: f"C{i}" for i, rho in enumerate(sorted(set(fr["ratio"])))}
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(10.5, 3.9))
    for rho, part in fr.groupby("ratio"):
        ax.plot(part["tokens"], part["fraction"], "o-", color=tint[rho], label=f"ratio {rho}")
        for side, symbol in (("below", "v"), ("above", "^")):
            out = part[part["outside"] == side]
            ax.plot(out["tokens"], out["bound"], symbol, color=tint[rho], mfc="none", ms=8)
        if rho in paper:
            ax.axhspan(paper[rho] - tol, paper[rho] + tol, color=tint[rho], alpha=0.12, lw=0)
            ax.axhline(paper[rho], color=tint[rho], ls="--", lw=1,
                       label=f"paper: {paper[rho]:g} at ratio {rho}")
    ax.plot([], [], "v", color="0.4", mfc="none", label="no match: below this bound")
    if (fr["outside"] == "above").any():
        ax.plot([], [], "^", color="0.4", mfc="none", label="no match: above this bound")
    if len(profile_fractions) and mark is not None:
        mark(ax, profile_fractions, x="tokens", y="fraction",
             colour=lambda r: tint.get(r["ratio"], "0.45"))
    ax.set(xscale="log", ylim=(0, 1.25), xlabel="training tokens per net",
           ylabel="baseline size with the same loss / own size",
           title="W-F4: matched fraction per ratio")
    ax.xaxis.set_minor_formatter(plt.NullFormatter())  # decades only: no crowded labels
    ax.legend(fontsize=7, loc="upper left")
    for (size, part), symbol in zip(sp.groupby("size"), "os^D", strict=False):
        bx.plot(part["tokens"], part["across_ratios"], f"{symbol}-", color="k",
                label=f"across ratios (size {size:,})")
        bx.plot(part["tokens"], factor * part["across_depths_max"], f"{symbol}--", color="0.55",
                mfc="none", label=f"{factor:g} x largest across depths (size {size:,})")
    if len(profile_spreads) and mark is not None:
        mark(bx, profile_spreads, x="tokens", y="across_ratios", colour=lambda r: "k")
        mark(bx, profile_spreads.assign(twice=factor * profile_spreads["across_depths_max"]),
             x="tokens", y="twice", colour=lambda r: "0.55", filled=lambda r: False)
    bx.set(xscale="log", xlabel="training tokens per net", ylabel="spread of test loss (nats)",
           title="W-F6: ratio against depth")
    bx.xaxis.set_minor_formatter(plt.NullFormatter())  # decades only: no crowded labels
    bx.set_ylim(bottom=0)
    bx.legend(fontsize=7)
    fig.suptitle(f"Pilot: depths {', '.join(map(str, depths))}, one seed", fontsize=10)
    fig.tight_layout()
    return fig


def ratio_pilot_table(fractions: pd.DataFrame, spreads: pd.DataFrame) -> pd.DataFrame:
    """The pilot per budget, one row each: its steps and tokens, the matched fraction of each
    ratio (NaN: no baseline of the same loss), and per size the spread across ratios and the
    largest across depths.

    >>> fr = pd.DataFrame({"steps": [4, 4, 8, 8], "tokens": [64, 64, 128, 128],
    ...                    "ratio": [4, 16, 4, 16], "fraction": [0.5, np.nan, 0.6, 0.4]})
    >>> sp = pd.DataFrame({"steps": [4, 8], "tokens": [64, 128], "size": [3000, 3000],
    ...                    "across_ratios": [0.2, 0.3], "across_depths_max": [0.05, 0.04]})
    >>> t = ratio_pilot_table(fr, sp)
    >>> list(t.columns)  # doctest: +NORMALIZE_WHITESPACE
    ['steps', 'tokens', 'matched fraction, ratio 4', 'matched fraction, ratio 16',
     'across ratios (size 3,000)', 'largest across depths (size 3,000)']
    >>> t.iloc[1, 2:].tolist()
    [0.6, 0.4, 0.3, 0.04]
    """
    per_budget = fractions.set_index(["steps", "tokens", "ratio"])["fraction"].unstack("ratio")
    per_budget.columns = [f"matched fraction, ratio {rho}" for rho in per_budget.columns]
    for size, part in spreads.groupby("size"):
        part = part.set_index(["steps", "tokens"])
        per_budget[f"across ratios (size {size:,})"] = part["across_ratios"]
        per_budget[f"largest across depths (size {size:,})"] = part["across_depths_max"]
    return per_budget.reset_index()


def ratio_remarks(red: pd.DataFrame, best: pd.DataFrame, table: pd.DataFrame) -> dict[str, str]:
    """What the attention-ratio chapter's remarks quote of its sweep, in words: ``no_match``,
    the ratios with a size outside the baselines' range, each with its side (``outside`` in
    ``red``, :func:`attnbook.wies2021.attention_ratio.redundancy`: "below", worse than every
    baseline, or "above", better than every baseline); ``smallest_baseline``, the
    smallest baseline's count in ``best``;
    ``grows``, the ratios above 1 whose best loss rises somewhere with size (training, not
    capacity, limits them); ``worst_std`` and ``worst_net``, the largest seed standard
    deviation of ``table`` and its net. "none" where a list is empty.

    >>> best = pd.DataFrame({"ratio": [1, 1, 4, 4], "size": [1, 2, 1, 2],
    ...                      "params_non_embedding": [900, 2100, 1000, 2000],
    ...                      "mean": [3.0, 2.8, 2.9, 2.95]})
    >>> red = pd.DataFrame({"ratio": [4, 4, 8], "outside": ["", "below", "above"]})
    >>> table = best.assign(std=[0.01, 0.02, 0.05, 0.01], L=2, d_x=16, H=8)
    >>> r = ratio_remarks(red, best, table)
    >>> r["no_match"], r["smallest_baseline"], r["grows"], r["worst_std"], r["worst_net"]
    ('4 (below), 8 (above)', '900', '4', '0.050', 'ratio 4, L = 2, d_x = 16, 8 heads')
    """
    out = red[red["outside"].isin(["below", "above"])]
    no_match = [f"{rho} ({'/'.join(sorted(set(o['outside'])))})"
                for rho, o in out.groupby("ratio", sort=True)]
    grows = [rho for rho, p in best[best["ratio"] > 1].groupby("ratio")
             if (np.diff(p.sort_values("size")["mean"].to_numpy()) > 0).any()]
    worst = table.loc[table["std"].idxmax()]
    return {"no_match": ", ".join(map(str, no_match)) or "none",
            "smallest_baseline":
                f"{int(best[best['ratio'] == 1]['params_non_embedding'].min()):,}",
            "grows": ", ".join(map(str, grows)) or "none",
            "worst_std": f"{worst['std']:.3f}",
            "worst_net": f"ratio {int(worst['ratio'])}, L = {int(worst['L'])}, "
                         f"d_x = {int(worst['d_x'])}, {int(worst['H'])} heads"}


def figure2(base: pd.DataFrame, low: pd.DataFrame, d_x: int, *, anchor: int | None = None,
            size_ratio: float | None = None, size_tolerance: float = 0.0):
    """wies2021 Figure 2 redrawn: the seed-mean test loss against all parameters of the
    full-rank nets of reduced width (``base``) and of the width-``d_x`` net with its embedding
    rank lowered (``low``, :func:`attnbook.wies2021.rank_bottleneck.bottleneck_table`). With
    the ``anchor`` rank (the one nearest the paper's r/d_x) and W-F2's ``size_ratio`` and
    ``size_tolerance``, the paper's reading as W-F2 places it: the sizes within the tolerance
    of that share of the control's matched size (shaded: where the anchor's matched size, the
    cross on the full-rank curve, should fall; drawn where both sizes were matched). Its
    points lie close together: the chapter names them with the book's label spreader, from
    :func:`figure2_labels`, once the layout is set. Returns the figure."""
    fig, ax = plt.subplots(figsize=(6.4, 4))
    ctrl, at = low[low["control"]], low[low["r"] == anchor]
    if size_ratio is not None and len(ctrl) and len(at):
        c, m = float(ctrl["matched_params"].iloc[0]), float(at["matched_params"].iloc[0])
        if c > 0 and m > 0:  # NaN or 0: no matched size (W-F2 not testable there)
            ax.axvspan((size_ratio - size_tolerance) * c, (size_ratio + size_tolerance) * c,
                       color="0.88", zorder=0, label=f"W-F2: {size_ratio:g} +- "
                       f"{size_tolerance:g} of the control's matched size (paper: ~25% smaller)")
            ax.plot([m], [float(at["test_loss"].iloc[0])], "x", color="k", ms=8,
                    label=f"r = {anchor}: its matched full-rank size")
    ax.plot(base["params_total"], base["test_loss"], "o-", color="tab:green",
            label="full rank, width reduced")
    ax.plot(low["params_total"], low["test_loss"], "s-", color="tab:orange",
            label=f"width {d_x}, embedding rank r")
    ax.set(xscale="log", xlabel="parameters (all)", ylabel="test loss (nats per token)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def figure2_labels(base: pd.DataFrame, low: pd.DataFrame) -> dict:
    """Figure 2's ``points``, their ``labels`` and ``colors`` (the label spreader's
    arguments): each rank of ``low`` (the control, the rank above d_x, named so) and each
    width of ``base``.

    >>> low = pd.DataFrame({"params_total": [10, 20], "test_loss": [3.0, 2.9], "r": [2, 96],
    ...                     "control": [False, True]})
    >>> base = pd.DataFrame({"params_total": [30], "test_loss": [2.8], "d_x": [64]})
    >>> named = figure2_labels(base, low)
    >>> named["labels"], named["colors"]
    (['r=2', 'r=96 (control)', '$d_x$=64'], ['black', 'black', 'tab:green'])
    """
    points = [(p.params_total, p.test_loss) for p in (*low.itertuples(), *base.itertuples())]
    labels = ([f"r={int(p.r)}" + (" (control)" if p.control else "") for p in low.itertuples()]
              + [f"$d_x$={int(p.d_x)}" for p in base.itertuples()])
    return {"points": points, "labels": labels,
            "colors": ["black"] * len(low) + ["tab:green"] * len(base)}


def figure7_curves(nets: pd.DataFrame, d_x: int, N: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Figure 7's two curves from the nets of width ``d_x``
    (:func:`attnbook.wies2021.rank_bottleneck.net_table`): the vocabulary ranks up to d_x and
    the positional ranks, each ending at the full-rank net (at r = d_x and at r_e = ``N``).

    >>> nets = pd.DataFrame({"group": ["full", "rank", "rank", "positional"], "d_x": 8,
    ...                      "r": [np.nan, 2, 16, np.nan], "r_e": [np.nan, np.nan, np.nan, 1],
    ...                      "test_loss": [2.0, 2.4, 2.1, 2.2]})
    >>> vocab, positional = figure7_curves(nets, 8, 32)
    >>> vocab["r"].tolist(), positional["r_e"].tolist()
    ([2.0, 8.0], [1.0, 32.0])
    """
    nets_dx = nets[nets["d_x"] == d_x]
    full_row = nets_dx[nets_dx["group"] == "full"].assign(r=d_x, r_e=N)
    vocab = pd.concat([nets_dx[(nets_dx["group"] == "rank") & (nets_dx["r"] <= d_x)],
                       full_row])
    positional = pd.concat([nets_dx[nets_dx["group"] == "positional"].sort_values("r_e"),
                            full_row])
    return vocab, positional


def figure7(vocab: pd.DataFrame, positional: pd.DataFrame, f7: dict | None = None, *,
            d_x: int | None = None, thresholds: dict | None = None):
    """wies2021 Figure 7 redrawn: the seed-mean test loss against the vocabulary rank r and
    against the positional rank r_e (:func:`figure7_curves`), bars of one seed standard
    deviation. With W-F7's measurement ``f7``
    (:func:`attnbook.wies2021.rank_bottleneck.f7_measurement`), the width ``d_x`` and W-F7's
    ``thresholds``, the paper's two readings as the criterion places them: the full-rank loss
    within ``n_std`` seed standard deviations (grey; the paper: positional rank 16 on par with
    full rank), and the losses between vocabulary ranks d_x / ``high_divisor`` and
    d_x / ``low_divisor`` (hatched; the paper: positional rank 1 there). Returns the figure."""
    fig, ax = plt.subplots(figsize=(6.4, 4))
    if f7 is not None and thresholds is not None:
        t, full, std = thresholds, f7["full_loss"], f7["full_std"]
        ax.axhspan(full - t["n_std"] * std, full + t["n_std"] * std, color="0.85", zorder=0,
                   label=f"full rank +- {t['n_std']:g} seed std (paper: $r_e$ = 16 on par)")
        high, low = d_x // t["high_divisor"], d_x // t["low_divisor"]
        if high in f7["vocab"] and low in f7["vocab"]:
            ax.axhspan(f7["vocab"][high], f7["vocab"][low], facecolor="none", hatch="///",
                       edgecolor="tab:orange", lw=0, zorder=0,
                       label=f"vocabulary r = {high} to {low} (paper: $r_e$ = 1 there)")
    ax.errorbar(vocab["r"], vocab["test_loss"], yerr=vocab["std"], fmt="s-", color="tab:orange",
                capsize=2, label="vocabulary rank r")
    ax.errorbar(positional["r_e"], positional["test_loss"], yerr=positional["std"], fmt="o-",
                color="tab:blue", capsize=2,
                label="positional rank $r_e$ (vocabulary full rank)")
    ax.set(xscale="log", xlabel="rank", ylabel="test loss (nats per token)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def positional_pilot_figure(stats: pd.DataFrame, profiles: pd.DataFrame, runs: pd.DataFrame, *,
                            pos_divisor: int, low_divisor: int, high_divisor: int, mark=None):
    """W-F7's pilot against the training tokens per net (``stats``,
    :func:`attnbook.wies2021.positional_rank.f7_pilot_statistics`, with the ranks it read):
    (a) each net's test loss minus the full-rank net's, (b) where positional rank 1 lies
    between the vocabulary ranks (0 at d_x / ``high_divisor``, 1 at d_x / ``low_divisor``;
    the criterion's band shaded). ``profiles``: the same reads of the profiles that have run
    (:func:`~attnbook.wies2021.positional_rank.f7_sweep_statistics`, with a ``profile``
    column), drawn as their markers by ``mark`` (:func:`attnbook.book.pilot.mark`'s
    signature; none without it); ``runs``: the pilot's nets (the title names their N, d_x and
    L). Returns the figure."""
    r_pos, r_high, r_low = (int(stats[k].iloc[0]) for k in ("r_pos", "r_high", "r_low"))
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(10.5, 3.8), sharex=True)
    lines = [("loss_pos", f"positional rank {r_pos} (N/{pos_divisor})", "tab:blue", "o-"),
             ("loss_rank1", "positional rank 1", "tab:blue", "s--"),
             ("loss_high", f"vocabulary rank {r_high} (d_x/{high_divisor})", "tab:orange",
              "o-"),
             ("loss_low", f"vocabulary rank {r_low} (d_x/{low_divisor})", "tab:orange", "s--")]
    for col, label, color, style in lines:
        ax.plot(stats["tokens"], stats[col] - stats["loss_full"], style, color=color,
                label=label)
        if len(profiles) and mark is not None:
            mark(ax, profiles.assign(cost=profiles[col] - profiles["loss_full"]),
                 x="tokens", y="cost", colour=lambda r, c=color: c,
                 filled=lambda r, solid="--" not in style: solid)
    ax.axhline(0, color="0.3", lw=1, label="full rank")
    ax.set(xscale="log", xlabel="training tokens per net",
           ylabel="test loss minus full rank's (nats)", title="(a) the cost of each rank")
    ax.legend(fontsize=7)
    bx.axhspan(0, 1, color="0.88", zorder=0, label="W-F7: between the vocabulary ranks")
    bx.plot(stats["tokens"], stats["rank1_between"], "s--", color="tab:blue",
            label="positional rank 1")
    if len(profiles) and mark is not None:
        mark(bx, profiles, x="tokens", y="rank1_between", colour=lambda r: "tab:blue")
    if stats["rank1_between"].isna().any():
        bx.text(0.02, 0.03, f"no point: vocabulary rank {r_low}'s loss not above rank "
                f"{r_high}'s (no bracket)", transform=bx.transAxes, fontsize=7)
    bx.set(xscale="log", xlabel="training tokens per net",
           ylabel=f"0: vocabulary rank {r_high}, 1: rank {r_low}",
           title="(b) where positional rank 1 lies")
    bx.legend(fontsize=7)
    net = runs.iloc[0]
    fig.suptitle(f"N = {int(net['N'])}, d_x = {int(net['d_x'])}, L = {int(net['L'])}, one seed",
                 fontsize=9)
    fig.tight_layout()
    return fig


def seed_table(losses: dict, *, d_x: int, tab2_rank: int, longer: int) -> pd.DataFrame:
    """The points Tables 1 and 2 repeat over seeds (``losses``,
    :func:`attnbook.wies2021.rank_bottleneck.repeat_losses`), one row each, named: the seed
    mean, standard deviation and count of the test loss, and the perplexity of the mean.

    >>> t = seed_table({"full": [2.0, 2.2], "gpt2": [2.1, 2.1], "tab2": [2.5, 2.7],
    ...                 "long": [1.9, 1.9]}, d_x=32, tab2_rank=4, longer=4)
    >>> t.round(3)  # doctest: +NORMALIZE_WHITESPACE
                          mean    std  count    ppl
    point
    GPT2LMHeadModel        2.1  0.000      2  8.166
    ours, 4 x the steps    1.9  0.000      2  6.686
    ours, r = 4            2.6  0.141      2 13.464
    ours, r = d_x = 32     2.1  0.141      2  8.166
    """
    names = {"full": f"ours, r = d_x = {d_x}", "gpt2": "GPT2LMHeadModel",
             "tab2": f"ours, r = {tab2_rank}", "long": f"ours, {longer} x the steps"}
    rows = pd.DataFrame([(names[k], x) for k, xs in losses.items() for x in xs],
                        columns=["point", "test_loss"])
    table = rows.groupby("point")["test_loss"].agg(["mean", "std", "count"])
    return table.assign(ppl=np.exp(table["mean"]))

