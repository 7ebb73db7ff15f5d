"""Read-outs of the trained memorization sweeps (mahdavi2024 section 5, appendix H).

Softmax saturation (appendix H), R^2 of the best line through the non-saturated part
(section 5.2), monotonicity along a parameter, means and spreads over seeds, and the head-size
gains of Fig. 2(c); each returns numbers a chapter turns into a verdict.

Used by: mahdavi2024_fig2_heads_context, mahdavi2024_fig2c_head_size, mahdavi2024_fig3_saturation.
"""

import numpy as np
import pandas as pd
import torch
from scipy import stats

from ..errors import ParameterError
from .trained import MemorizationConfig, attention_maps, train_group

__all__ = ["saturation_experiment", "saturation_stats", "linear_fit_r2", "linearity_by",
           "monotonicity_by", "mean_over_seeds", "head_size_gains"]


def saturation_stats(theta, threshold: float = 0.99) -> dict:
    """Softmax saturation of mahdavi2024 appendix H: head h is saturated for example t when
    max_i theta_h^(t)_i > threshold. ``theta`` is (T, H, n), or the (T, H) maxima themselves.

    >>> th = torch.tensor([[[1.0, 0.0], [0.5, 0.5]], [[0.995, 0.005], [0.0, 1.0]]])  # (T, H, n)
    >>> s = saturation_stats(th)
    >>> s["saturated"].tolist(), s["n_saturated"].tolist(), s["frac_with_unsaturated"]
    ([[True, False], [True, True]], [1, 2], 0.5)
    """
    # a copy for arrays: pandas hands out read-only views, which torch cannot wrap safely
    theta = theta if torch.is_tensor(theta) else torch.tensor(np.asarray(theta))
    if theta.dim() not in (2, 3):
        raise ParameterError("theta.dim()", theta.dim(), "3: (T, H, n) softmax coefficients, "
                             "or 2: (T, H) largest coefficients")
    if not 0 < threshold < 1:
        raise ParameterError("threshold", threshold, "a value in (0, 1)")
    max_coef = theta.max(-1).values if theta.dim() == 3 else theta  # (T, H)
    T, H = max_coef.shape
    sat = max_coef > threshold
    n_sat = sat.sum(-1)  # (T,)
    return {"max_coef": max_coef.numpy(), "saturated": sat.numpy(), "n_saturated": n_sat.numpy(),
            "frac_saturated": float(sat.float().mean()),
            "frac_with_unsaturated": float((n_sat < H).float().mean())}


def linear_fit_r2(x, y) -> float:
    """R^2 of the least-squares line through (x, y) (mahdavi2024 section 5.2's linearity test).

    >>> round(linear_fit_r2([1, 2, 3], [2, 4, 6.0]), 6)
    1.0
    """
    x, y = np.asarray(x, float), np.asarray(y, float)
    if len(x) < 3:
        raise ParameterError("points", len(x), "at least 3 points for a meaningful R^2")
    if np.ptp(y) == 0:
        return 1.0
    return float(stats.linregress(x, y).rvalue ** 2)


def linearity_by(df: pd.DataFrame, x: str = "H", y: str = "metric", by: str = "T",
                 saturated_at: float = 0.98) -> pd.DataFrame:
    """Per value of ``by``: R^2 of a line through the points with ``y < saturated_at``
    (mahdavi2024 section 5.2: "R^2 of the best linear fit of the non-saturated part").

    >>> df = pd.DataFrame({"T": 1, "H": [1, 2, 3, 4], "metric": [0.2, 0.4, 0.6, 1.0]})
    >>> linearity_by(df).round(3).to_dict("records")
    [{'T': 1, 'points': 3, 'slope': 0.2, 'r2': 1.0}]
    """
    rows = []
    for key, g in df.sort_values(x).groupby(by):
        g = g[g[y] < saturated_at]
        if len(g) >= 3:
            fit = stats.linregress(g[x].astype(float), g[y].astype(float))
            rows.append({by: key, "points": len(g), "slope": fit.slope,
                         "r2": linear_fit_r2(g[x], g[y])})
        else:
            rows.append({by: key, "points": len(g), "slope": np.nan, "r2": np.nan})
    return pd.DataFrame(rows)


def monotonicity_by(df: pd.DataFrame, x: str, y: str = "metric", by: str = "T",
                    increasing: bool = True) -> pd.DataFrame:
    """Per value of ``by``: the worst step of ``y`` against the trend along ``x`` (a drop when
    ``increasing``, a rise otherwise); <= 0 means monotone.

    >>> df = pd.DataFrame({"T": 1, "n": [1, 2, 3], "metric": [0.1, 0.3, 0.28]})
    >>> monotonicity_by(df, "n").round(3).to_dict("records")
    [{'T': 1, 'worst_step': 0.02}]
    """
    rows = []
    for key, g in df.sort_values(x).groupby(by):
        steps = np.diff(g[y].to_numpy(float))
        worst = float(np.max(-steps if increasing else steps)) if len(steps) else 0.0
        rows.append({by: key, "worst_step": worst})
    return pd.DataFrame(rows)


def mean_over_seeds(df: pd.DataFrame, value: str = "metric") -> pd.DataFrame:
    """One row per configuration up to the seed: the mean of ``value`` over seeds, its sample
    standard deviation (NaN for one seed) and the number of seeds.

    >>> df = pd.DataFrame({"H": [1, 1, 2], "T": 8, "seed": [0, 1, 0], "metric": [0.5, 0.7, 0.9]})
    >>> mean_over_seeds(df).round(3).to_dict("records")[0]
    {'H': 1, 'T': 8, 'metric': 0.6, 'metric_std': 0.141, 'seeds': 2}
    """
    keys = [c for c in df.columns if c in MemorizationConfig.__dataclass_fields__ and c != "seed"]
    g = df.groupby(keys, sort=True)[value]
    out = g.mean().to_frame(value)
    out[f"{value}_std"] = g.std()
    out["seeds"] = g.size()
    return out.reset_index()


def head_size_gains(g: pd.DataFrame, n: int, y: str = "metric") -> pd.Series:
    """Gain of ``y`` from the smallest d_h to d_h = n, and from d_h = n to the largest d_h
    (mahdavi2024 Fig. 2(c): gains should stop at d_h = n).

    >>> head_size_gains(pd.DataFrame({"d_h": [1, 4, 8], "metric": [0.1, 0.5, 0.52]}), n=4)
    gain_to_n        0.40
    gain_beyond_n    0.02
    dtype: float64
    """
    at = g.set_index("d_h")[y]
    if n not in at.index:
        raise ParameterError("d_h values", sorted(at.index), f"a list that contains n = {n}")
    return pd.Series({"gain_to_n": at[n] - at[at.index.min()],
                      "gain_beyond_n": at[at.index.max()] - at[n]}).round(12)


def saturation_experiment(cfgs: list[MemorizationConfig], device="cpu", threshold=0.99,
                          progress=True, checkpoint=None) -> dict:
    """Appendix H of mahdavi2024: train ``cfgs`` (several T per H) together, take per H the
    largest T memorized perfectly (else the best-memorized T), and return the accuracy table and
    the max softmax coefficient of every (example, head) of the chosen models. ``checkpoint``:
    as :func:`~attnbook.mahdavi2024.trained.train_group`'s (the training resumes from it)."""
    r = train_group(cfgs, device, progress=progress, keep_models=True, checkpoint=checkpoint)
    acc = pd.DataFrame([{"H": c.H, "T": c.T, "metric": float(r["metric"][m])}
                        for m, c in enumerate(cfgs)])
    acc["chosen"] = False
    maps = []
    for H, g in acc.groupby("H"):
        perfect = g[g["metric"] >= 1.0]
        pick = perfect["T"].idxmax() if len(perfect) else g["metric"].idxmax()
        acc.loc[pick, "chosen"] = True
        s = saturation_stats(attention_maps(r, int(pick)), threshold)
        T, Hm = s["max_coef"].shape  # (T, H)
        maps.append(pd.DataFrame({"H": H, "T": int(acc.loc[pick, "T"]),
                                  "t": np.repeat(np.arange(T), Hm), "h": np.tile(np.arange(Hm), T),
                                  "max_coef": s["max_coef"].reshape(-1)}))
    return {"accuracy": acc, "max_coef": pd.concat(maps, ignore_index=True)}
