"""The sweeps of mahdavi2024's Figures 2 (a, b), 4 and 5 as configurations, their points per
panel, and the pilot that sizes a long run.

A *panel* is one curve family of a figure: memorization against the number of heads H at a
fixed context size n, or against n at a fixed H, for a shared context (Figure 2), a context
drawn per example (Figure 4, appendix I.1) or real-valued labels (Figure 5):

* :func:`figure2_panels`: every panel's configurations, one per (T, swept value, seed), with
  the paper's step rule max(steps, min_epochs T / batch);
* :func:`panel_points`: a trained sweep's rows of one panel, averaged over seeds;
* :func:`head_size_configs` and :func:`head_size_pilot_gains`: Figure 2(c)'s sweep over d_h at
  one step budget (its pilot trains it at a few), and per budget the gains its criterion
  compares;
* :func:`saturation_by_seed`: Figure 3's trained grids of several seeds, with each seed's
  chosen model per H and its saturation statistics;
* :func:`pilot_panels` and :func:`pilot_statistics`: the same panels at a few step budgets
  (one seed, the first T of each panel), and per budget the statistic each criterion decides
  on (the R^2 of the line in H, the largest drop of accuracy along n, the largest rise of the
  MSE), so that a chapter can show how the effect grows with training before a long run is
  sized; :func:`sweep_statistics`, the same of a chapter's sweep (the mean over its seeds).

Training is :func:`attnbook.mahdavi2024.trained.train_sweep`'s; nothing here trains, so a
change here leaves stored models current.

Used by: mahdavi2024_fig2_heads_context, mahdavi2024_fig2c_head_size,
mahdavi2024_fig3_saturation.
"""

import math
from collections.abc import Sequence

import pandas as pd

from ..engines.pilots import budgets as checked_budgets
from ..errors import ParameterError
from .statistics import (
    head_size_gains,
    linearity_by,
    mean_over_seeds,
    monotonicity_by,
    saturation_stats,
)
from .trained import MemorizationConfig, training_flops

__all__ = ["PANELS", "SWEEP_PARAMETERS", "figure2_panels", "panel_points", "pilot_panels",
           "pilot_statistics", "sweep_statistics", "head_size_configs", "head_size_pilot_gains",
           "saturation_by_seed"]

# panel -> (swept variable, task, context): Figure 2 (a, b), Figure 4, Figure 5
PANELS = {
    "heads": ("H", "classification", "shared"),
    "context": ("n", "classification", "shared"),
    "heads_gp": ("H", "classification", "per_example"),
    "context_gp": ("n", "classification", "per_example"),
    "heads_reg": ("H", "regression", "shared"),
    "context_reg": ("n", "regression", "shared"),
}
# the T list of each panel's figure: T_heads for the heads sweep of Figure 2(a), ...
_T_OF = {"heads": "T_heads", "context": "T_context", "heads_gp": "T_gp", "context_gp": "T_gp",
         "heads_reg": "T_reg", "context_reg": "T_reg", "context_control": "T_gp"}


def figure2_panels(*, d: int, n: int, d_h: int, heads: Sequence[int], H_context: int,
                   contexts: Sequence[int], T_heads: Sequence[int], T_context: Sequence[int],
                   T_gp: Sequence[int], T_reg: Sequence[int], steps: int, seed: int,
                   seeds: int = 1, min_epochs: int = 0, context_control: bool = False,
                   **recipe) -> dict:
    """Panel -> (swept variable, configurations): the heads panels at context size ``n``, the
    context panels at ``H_context`` heads, one model per (T, swept value, seed) for the seeds
    ``seed, seed + 1, ...``; each trains max(``steps``, ceil(``min_epochs`` T / batch)) steps.
    ``recipe``: the remaining :class:`MemorizationConfig` fields (n_classes, batch, lr,
    eval_every). ``context_control``: also the panel ``"context_control"``, Figure 2(b)'s
    shared-context sweep over n at the T of the per-example panels (``T_gp``): the control that
    tells a weaker line in n with contexts per example (Figure 4) from one at a larger T.

    >>> p = figure2_panels(d=8, n=4, d_h=8, heads=[1, 2], H_context=2, contexts=[2, 3],
    ...                    T_heads=[16], T_context=[16], T_gp=[32], T_reg=[8], steps=10, seed=0,
    ...                    seeds=2, context_control=True)
    >>> {k: (x, len(cs)) for k, (x, cs) in p.items()}["heads"], p["context_reg"][1][0].task
    (('H', 4), 'regression')
    >>> [(c.T, c.n, c.context) for c in p["context_control"][1][::2]]
    [(32, 2, 'shared'), (32, 3, 'shared')]
    """
    if seeds < 1:
        raise ParameterError("seeds", seeds, "an integer >= 1")
    Ts = {"T_heads": T_heads, "T_context": T_context, "T_gp": T_gp, "T_reg": T_reg}
    panels = {**PANELS, **({"context_control": PANELS["context"]} if context_control else {})}
    out = {}
    for name, (x, task, context) in panels.items():
        values = heads if x == "H" else contexts
        out[name] = (x, [
            MemorizationConfig(H=v if x == "H" else H_context, T=T, n=n if x == "H" else v,
                               d=d, d_h=d_h, task=task, context=context,
                               steps=max(steps, math.ceil(min_epochs * T
                                                          / recipe.get("batch", 256))),
                               seed=s, **recipe)
            for T in Ts[_T_OF[name]] for v in values for s in range(seed, seed + seeds)])
    return out


def panel_points(results: pd.DataFrame, configs: Sequence[MemorizationConfig]) -> pd.DataFrame:
    """The rows of ``results`` (a trained sweep: one row per model, with the configuration's
    fields and ``metric``) that belong to ``configs``, averaged over seeds
    (:func:`~attnbook.mahdavi2024.statistics.mean_over_seeds`), with ``memorized`` = metric
    x T (for accuracies: the number of examples memorized)."""
    keys = {(c.H, c.T, c.n, c.task, c.context, c.steps) for c in configs}
    cols = zip(results["H"], results["T"], results["n"], results["task"], results["context"],
               results["steps"], strict=True)
    sel = mean_over_seeds(results[[k in keys for k in cols]])
    return sel.assign(memorized=sel["metric"] * sel["T"])


def pilot_panels(budgets: Sequence[int], **panels) -> dict[int, dict]:
    """Step budget -> :func:`figure2_panels` for one seed and the first T of each panel, each
    budget with its own schedule (warm-up and cosine decay over its steps); ``panels`` as
    figure2_panels takes them, without ``steps``, ``seeds`` and ``min_epochs``. The longest
    budget comes first.

    >>> p = pilot_panels([20, 10], d=8, n=4, d_h=8, heads=[1, 2], H_context=2, contexts=[2, 3],
    ...                  T_heads=[16, 32], T_context=[16], T_gp=[16], T_reg=[8], seed=0)
    >>> list(p), sorted({c.T for c in p[10]["heads"][1]}), p[10]["heads"][1][0].steps
    ([20, 10], [16], 10)
    """
    budgets = checked_budgets(budgets)
    for k in ("steps", "seeds", "min_epochs"):
        if k in panels:
            raise ParameterError(k, panels[k], "not given (the pilot sets it)")
    first = {k: list(panels.pop(k))[:1] for k in dict.fromkeys(_T_OF.values())}
    return {b: figure2_panels(**panels, **first, steps=b, seeds=1, min_epochs=0)
            for b in sorted(budgets, reverse=True)}


def pilot_statistics(results: pd.DataFrame, pilot: dict[int, dict], *, saturated_at: float,
                     mse_floor: float) -> pd.DataFrame:
    """Per budget and panel of a pilot (:func:`pilot_panels`) whose models are all in
    ``results``: the number of steps, the training FLOPs of the panel's models
    (:func:`~attnbook.mahdavi2024.trained.training_flops`), the statistic its criterion reads
    and its value: ``r2`` of the line in H through the accuracies below ``saturated_at`` (NaN
    with fewer than 3 such points) for the heads panels (M-F2a, M-F4 (i)); for each context
    panel two rows, ``worst_drop`` of accuracy along n (M-F2b) and ``r2_n``, the same line fit
    against n (M-F4 (ii) compares the per-example panel's with the shared panel's); and
    ``worst_rise`` of the MSE for the regression panels (<= 0: the trend holds), with
    ``unsaturated``: how many models have not saturated (accuracy below ``saturated_at``, MSE
    above ``mse_floor``; for a line, the points it is fitted through), and ``mean_metric``:
    the panel's mean accuracy or MSE. Panels with a model not yet trained are left out."""
    rows = []
    for steps, panels in pilot.items():
        for name, (x, configs) in panels.items():
            pts = panel_points(results, configs)
            if len(pts) < len({(c.H, c.T, c.n) for c in configs}):
                continue  # still training
            task = PANELS[name][1]
            flops = sum(training_flops(c) for c in configs)
            read = []  # (statistic, value, unsaturated)
            if task == "regression":
                read.append(("worst_rise", float(monotonicity_by(
                    pts, x, increasing=False)["worst_step"].max()),
                    int((pts["metric"] > mse_floor).sum())))
            else:
                if x == "n":
                    read.append(("worst_drop", float(monotonicity_by(pts, x)["worst_step"].max()),
                                 int((pts["metric"] < saturated_at).sum())))
                fit = linearity_by(pts, x, saturated_at=saturated_at)
                read.append(("r2" if x == "H" else "r2_n", float(fit["r2"].iloc[0]),
                             int(fit["points"].iloc[0])))
            rows += [{"steps": int(steps), "flops": flops, "panel": name, "statistic": stat,
                      "value": value, "unsaturated": free,
                      "mean_metric": float(pts["metric"].mean())} for stat, value, free in read]
    return pd.DataFrame(rows)


# the parameters of mahdavi2024_fig2_heads_context that define its sweep's panels
SWEEP_PARAMETERS = ("d", "n", "d_h", "heads", "H_context", "contexts", "T_heads", "T_context",
                    "T_gp", "T_reg", "steps", "min_epochs", "seed", "seeds", "n_classes",
                    "batch", "lr", "eval_every")


def sweep_statistics(results: pd.DataFrame, params: dict, *, saturated_at: float,
                     mse_floor: float) -> pd.DataFrame:
    """:func:`pilot_statistics` of a chapter's sweep: ``results`` its trained models,
    ``params`` its parameters (the names of ``SWEEP_PARAMETERS``). The pilot's statistics at
    the first T of each panel, each point the mean over the sweep's seeds, so that the sweep
    sits on its pilot's axes; ``steps`` is the longest training among those
    models. Empty while a panel lacks a model.

    >>> p = dict(d=8, n=4, d_h=8, heads=[1, 2, 3], H_context=2, contexts=[2, 3, 5],
    ...          T_heads=[16, 32], T_context=[16], T_gp=[16], T_reg=[8], steps=10,
    ...          min_epochs=0, seed=0, seeds=2, n_classes=4, batch=8, lr=1e-3, eval_every=5)
    >>> sweep_statistics(pd.DataFrame(), p, saturated_at=0.98, mse_floor=1e-4).empty
    True
    """
    p = {k: params[k] for k in SWEEP_PARAMETERS}
    first = {k: list(p.pop(k))[:1] for k in dict.fromkeys(_T_OF.values())}
    panels = figure2_panels(**p, **first)
    if results is None or not len(results):
        return pd.DataFrame()
    steps = max(c.steps for _, cs in panels.values() for c in cs)
    return pilot_statistics(results, {steps: panels}, saturated_at=saturated_at,
                            mse_floor=mse_floor)


def head_size_configs(*, steps: int, H: int, T: int, n: int, d: int,
                      head_sizes: Sequence[int], seed: int, **recipe) -> list[MemorizationConfig]:
    """Figure 2(c)'s pilot at one budget of ``steps`` optimizer steps: one model per key/query
    dimension in ``head_sizes`` (which holds n, one value below it and one above) at data set
    size ``T``, one seed. The pilot trains them at each of its budgets, each with its own
    schedule.

    >>> cs = head_size_configs(steps=20, H=2, T=16, n=4, d=8, head_sizes=[8, 2, 4], seed=0)
    >>> [(c.steps, c.d_h) for c in cs]
    [(20, 2), (20, 4), (20, 8)]
    """
    if n not in head_sizes or min(head_sizes) >= n or max(head_sizes) <= n:
        raise ParameterError("head_sizes", list(head_sizes),
                             f"n = {n}, a value below it and one above it")
    return [MemorizationConfig(H=H, T=T, n=n, d=d, d_h=k, steps=steps, seed=seed, **recipe)
            for k in sorted(head_sizes)]


def head_size_pilot_gains(results: pd.DataFrame, n: int) -> pd.DataFrame:
    """Per budget (``steps``) of Figure 2(c)'s pilot (:func:`head_size_configs` at each budget)
    whose models are all in ``results``, or of a sweep (one budget, the mean over its seeds):
    the training FLOPs of its models and :func:`~attnbook.mahdavi2024.statistics.
    head_size_gains` (``gain_to_n``, ``gain_beyond_n``), the two numbers M-F2c compares.
    Budgets with a model missing are left out.

    >>> rows = [dict(H=2, T=16, n=4, d=8, d_h=k, steps=s, seed=0, metric=m)
    ...         for s, ms in ((10, (0.2, 0.5, 0.6)), (20, (0.3, 0.8, 0.8))) for k, m in
    ...         zip((2, 4, 8), ms)]
    >>> head_size_pilot_gains(pd.DataFrame(rows), n=4)[["steps", "gain_to_n", "gain_beyond_n"]]
       steps  gain_to_n  gain_beyond_n
    0     10        0.3            0.1
    1     20        0.5            0.0
    """
    rows = []
    for steps, part in results.groupby("steps", sort=True):
        pts = mean_over_seeds(part)
        if n not in set(pts["d_h"]) or pts["d_h"].min() >= n or pts["d_h"].max() <= n:
            continue
        fields = [f for f in MemorizationConfig.__dataclass_fields__ if f in pts.columns]
        flops = sum(training_flops(MemorizationConfig(**r))
                    for r in pts[fields].to_dict("records"))
        rows.append({"steps": int(steps), "flops": flops, **head_size_gains(pts, n).to_dict(),
                     "models": len(pts)})
    return pd.DataFrame(rows)


def saturation_by_seed(tables: dict, threshold: float) -> tuple[pd.DataFrame, dict]:
    """Figure 3's trained grids of several seeds. ``tables``: seed -> the tables of
    :func:`~attnbook.mahdavi2024.statistics.saturation_experiment` (``accuracy`` and
    ``max_coef``). Returns the accuracy grids with a ``seed`` column, and per (seed, H) the
    chosen model's :func:`~attnbook.mahdavi2024.statistics.saturation_stats` at ``threshold``
    with its ``T`` and whether it memorized perfectly (``perfect``).

    >>> acc = pd.DataFrame({"H": [2, 2], "T": [3, 6], "metric": [1.0, 0.9]})
    >>> coef = pd.DataFrame({"H": 2, "T": 3, "max_coef": [0.999, 0.5, 1.0, 1.0, 0.3, 0.2]})
    >>> grid, stats = saturation_by_seed({7: {"accuracy": acc, "max_coef": coef}}, 0.99)
    >>> grid["seed"].tolist(), stats[7, 2]["T"], stats[7, 2]["perfect"]
    ([7, 7], 3, True)
    >>> stats[7, 2]["n_saturated"].tolist(), round(stats[7, 2]["frac_with_unsaturated"], 3)
    ([1, 2, 0], 0.667)
    """
    grids, stats = [], {}
    for seed, t in sorted(tables.items()):
        acc = t["accuracy"]
        grids.append(acc.assign(seed=seed))
        for H, g in t["max_coef"].groupby("H"):
            T = int(g["T"].iloc[0])
            row = acc[(acc["H"] == H) & (acc["T"] == T)]["metric"]
            stats[seed, int(H)] = {
                **saturation_stats(g["max_coef"].to_numpy().reshape(T, int(H)), threshold),
                "T": T, "perfect": bool(row.iloc[0] >= 1.0)}
    return pd.concat(grids, ignore_index=True), stats
