"""Tables and the figure of wies2021's depth-efficiency experiment (Figure 1, Tables 2 to 5),
drawn from what the chapter trained:

* :func:`depth_settings`: the paper's settings (appendix C.2) beside this profile's;
* :func:`corpus_sizes`: the train and test tokens of each vocabulary's corpus;
* :func:`family_depths`: the widths and largest seed deviation of each (V, family, depth);
* :func:`parameter_shares` and :func:`parameter_summary`: how much of each net its embeddings
  are, and how closely the matched pairs match in all their parameters;
* :func:`depth_efficiency_figure`: the shallow and deep families of each vocabulary against
  their non-embedding parameters, with the paper's transition, the criterion's window and the
  measured crossing (W-F1).

Each arranges or draws what the tables of :mod:`attnbook.engines.depth_sweep` hold and decides
nothing.

Used by: wies2021_depth_efficiency.

>>> results = pd.DataFrame({"V": 8, "L": [1, 2], "d_x": [8, 4],
...                         "params_non_embedding": [768, 384 * 2], "params_total": [900, 840]})
>>> shares = parameter_shares(results)
>>> shares["embedding_share"].round(3).tolist()
[0.147, 0.086]
>>> parameter_summary(shares, L_shallow=1, L_deep=2)["non_emb_ratio"]
'1.000 to 1.000'
"""

import matplotlib.pyplot as plt
import pandas as pd

from ..engines import depth_sweep as ds

__all__ = ["depth_settings", "corpus_sizes", "family_depths", "parameter_shares",
           "parameter_summary", "depth_efficiency_figure"]


def depth_settings(*, profile: str, vocabs, L_shallow: int, L_deep: int, width_factors, H: int,
                   N: int, tokens_per_model: int, n_seeds: int) -> pd.DataFrame:
    """The paper's settings (appendix C.2) in one column, this profile's in the next, one row
    per setting."""
    return pd.DataFrame({
        "paper (appendix C.2)": ["257, 500, 2000", "24 vs 48", "144-1064", "2", "128",
                                 f"{1_000_000 * 512 * 128:.1e}", "1 (5 for Table 4)"],
        f"here ({profile})": [", ".join(map(str, vocabs)), f"{L_shallow} vs {L_deep}",
                              ", ".join(f"{f:g} V" for f in width_factors), str(H), str(N),
                              f"{tokens_per_model:.1e}", str(n_seeds)]},
        index=["vocabulary V", "depths L", "shallow widths", "heads H", "context N",
               "training tokens per model", "seeds per point"])


def corpus_sizes(arrays) -> pd.DataFrame:
    """The train tokens, test tokens and train documents of each of ``arrays`` (token arrays of
    :func:`attnbook.engines.lm_sweep.token_arrays`), one row per vocabulary V."""
    return pd.DataFrame({"train tokens": [len(a.train) for a in arrays],
                         "test tokens": [len(a.test) for a in arrays],
                         "train documents": [a.info["train_documents"] for a in arrays]},
                        index=pd.Index([a.V for a in arrays], name="V"))


def family_depths(table: pd.DataFrame) -> pd.DataFrame:
    """Per (V, family, L) of ``table`` (:func:`attnbook.engines.depth_sweep.loss_table`), in
    its order: its widths, its largest seed standard deviation and its fewest seeds."""
    return table.groupby(["V", "family", "L"], sort=False).agg(
        widths=("d_x", lambda w: ", ".join(map(str, w))), largest_seed_std=("std", "max"),
        seeds=("seeds", "min")).reset_index()


def parameter_shares(results: pd.DataFrame) -> pd.DataFrame:
    """One row per net (V, L, d_x) of ``results``: its non-embedding and total parameters and
    the share of the total that its embeddings and head are, sorted by V, L and d_x."""
    counts = (results.groupby(["V", "L", "d_x"], sort=False)
              .agg(non_embedding=("params_non_embedding", "first"),
                   total=("params_total", "first"))
              .reset_index().sort_values(["V", "L", "d_x"]))
    counts["embedding_share"] = 1 - counts["non_embedding"] / counts["total"]
    return counts


def parameter_summary(counts: pd.DataFrame, *, L_shallow: int, L_deep: int) -> dict:
    """Of ``counts`` (:func:`parameter_shares`): the largest and smallest embedding share (with
    their net) and the range of deep-to-shallow ratios, in total and non-embedding parameters,
    of the pairs matched in order of width within each V; as the chapter prints them."""
    pairs = [(s, d) for _, part in counts.groupby("V")
             for s, d in zip(part[part["L"] == L_shallow].itertuples(),
                             part[part["L"] == L_deep].itertuples(), strict=True)]
    total_ratio = [d.total / s.total for s, d in pairs]
    non_emb_ratio = [d.non_embedding / s.non_embedding for s, d in pairs]

    def share(row):
        return (f"{row['embedding_share']:.0%} (V = {int(row['V'])}, L = {int(row['L'])}, "
                f"width {int(row['d_x'])})")

    return {"emb_share_max": share(counts.loc[counts["embedding_share"].idxmax()]),
            "emb_share_min": share(counts.loc[counts["embedding_share"].idxmin()]),
            "total_ratio": f"{min(total_ratio):.2f} to {max(total_ratio):.2f}",
            "non_emb_ratio": f"{min(non_emb_ratio):.3f} to {max(non_emb_ratio):.3f}"}


def depth_efficiency_figure(table: pd.DataFrame, cross: pd.DataFrame, *, L_shallow: int,
                            L_deep: int, factor: float):
    """One panel per row of ``cross`` (:func:`attnbook.engines.depth_sweep.crossings`): the
    seed-mean test loss of the shallow (blue) and deep (red) families of ``table``
    (:func:`~attnbook.engines.depth_sweep.loss_table`) at its V against their non-embedding
    parameters, with bands of one seed standard deviation; grey, the shallow widths from
    V / ``factor`` to ``factor`` V; dashed, the paper's transition; black, the crossing and its
    bootstrap interval, or a note where there is none. Returns the figure."""
    fig, axes = plt.subplots(1, len(cross), figsize=(4.2 * len(cross), 3.8), squeeze=False)
    for ax, (_, c) in zip(axes[0], cross.iterrows(), strict=True):
        part = table[table["V"] == c["V"]]
        for fam, color in (("shallow", "tab:blue"), ("deep", "tab:red")):
            f = part[part["family"] == fam]
            L_f = L_shallow if fam == "shallow" else L_deep
            ax.plot(f["params_non_embedding"], f["mean"], "o-", color=color,
                    label=f"L = {L_f} ({fam})")
            ax.fill_between(f["params_non_embedding"], f["mean"] - f["std"],
                            f["mean"] + f["std"], color=color, alpha=0.2, lw=0)
        wides = [ds.non_embedding_params(L_shallow, round(w))
                 for w in (c["V"] / factor, c["V"] * factor)]
        ax.axvspan(*wides, color="0.85", zorder=0,
                   label=f"shallow width in [V/{factor:g}, {factor:g} V]")
        ax.axvline(c["predicted_params"], color="0.3", ls="--", lw=1,
                   label="paper: transition at shallow width ~ V")
        if c["found"]:
            ax.axvline(c["point"], color="k", lw=1.5,
                       label=f"crossing: shallow width {c['width']:.0f}")
            if c["low"] is not None:
                ax.axvspan(c["low"], c["high"], color="k", alpha=0.12, lw=0)
        else:
            ax.text(0.97, 0.96, "no crossing in range", transform=ax.transAxes, fontsize=8,
                    ha="right", va="top")
        ax.set(xscale="log", title=f"V = {c['V']}", xlabel="non-embedding parameters",
               ylabel="test loss (nats per token)")
        ax.xaxis.set_minor_formatter(plt.NullFormatter())
        ax.legend(fontsize=7)
    fig.tight_layout()
    return fig
