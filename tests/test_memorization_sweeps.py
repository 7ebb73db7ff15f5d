"""attnbook.mahdavi2024.sweeps: the panels of Figures 2, 4 and 5 as configurations, their
points, and the pilot's statistics read from a (synthetic) trained sweep."""

import math
from dataclasses import asdict
from functools import partial

import pandas as pd
import pytest

from attnbook.book.pilot import at_budgets, mark
from attnbook.errors import ParameterError
from attnbook.mahdavi2024 import sweeps as msw

GRID = dict(d=16, n=8, d_h=16, heads=[1, 2, 4], H_context=2, contexts=[2, 4, 6],
            T_heads=[64, 128], T_context=[32], T_gp=[48], T_reg=[24], seed=3)


def test_panels_hold_one_model_per_T_value_and_seed_with_the_step_rule():
    p = msw.figure2_panels(**GRID, steps=100, seeds=2, min_epochs=500, batch=256, lr=1e-3)
    assert set(p) == set(msw.PANELS)
    x, heads = p["heads"]
    assert x == "H" and len(heads) == 2 * 3 * 2
    assert {(c.T, c.H, c.n, c.seed) for c in heads} == {
        (T, H, 8, s) for T in (64, 128) for H in (1, 2, 4) for s in (3, 4)}
    # the paper's rule: max(steps, ceil(min_epochs T / batch))
    assert {c.T: c.steps for c in heads} == {64: 125, 128: 250}
    ctx = p["context_gp"][1]
    assert {(c.H, c.n, c.context, c.T) for c in ctx} == {(2, m, "per_example", 48)
                                                         for m in (2, 4, 6)}
    assert {c.task for c in p["heads_reg"][1]} == {"regression"}


def test_context_control_is_the_shared_n_sweep_at_the_per_example_T():
    plain = msw.figure2_panels(**GRID, steps=100, seeds=2, min_epochs=500)
    p = msw.figure2_panels(**GRID, steps=100, seeds=2, min_epochs=500, context_control=True)
    assert "context_control" not in plain and set(p) == set(msw.PANELS) | {"context_control"}
    assert {k: v for k, v in p.items() if k != "context_control"} == plain  # nothing else moves
    x, ctrl = p["context_control"]
    gp = p["context_gp"][1]
    assert x == "n" and len(ctrl) == len(gp)
    # the per-example sweep's models with the shared context: same H, n, T, steps and seeds
    assert [(c.H, c.n, c.T, c.steps, c.seed, c.task) for c in ctrl] == \
        [(c.H, c.n, c.T, c.steps, c.seed, c.task) for c in gp]
    assert {c.context for c in ctrl} == {"shared"} and {c.context for c in gp} == {"per_example"}
    # at a T the shared sweep already has, the control is the same models (trained once)
    same_T = msw.figure2_panels(**{**GRID, "T_gp": GRID["T_context"]}, steps=100,
                                context_control=True)
    assert same_T["context_control"][1] == same_T["context"][1]


def _trained(configs, metric):
    return pd.DataFrame([{**asdict(c), "metric": metric(c)} for c in configs])


def test_panel_points_average_seeds_and_count_what_is_memorized():
    cs = msw.figure2_panels(**GRID, steps=10, seeds=2)["heads"][1]
    pts = msw.panel_points(_trained(cs, lambda c: 0.1 * c.H + 0.01 * (c.seed - 3)), cs)
    assert len(pts) == 6 and (pts["seeds"] == 2).all()
    row = pts[(pts["H"] == 2) & (pts["T"] == 64)].iloc[0]
    assert row["metric"] == pytest.approx(0.205) and row["memorized"] == pytest.approx(0.205 * 64)


def test_pilot_is_one_seed_at_the_first_T_per_budget():
    pilot = msw.pilot_panels([50, 200], **GRID)
    assert list(pilot) == [200, 50]
    for steps, panels in pilot.items():
        for _, cs in panels.values():
            assert {c.steps for c in cs} == {steps} and {c.seed for c in cs} == {3}
            assert len({c.T for c in cs}) == 1
    assert {c.T for c in pilot[50]["heads"][1]} == {64}
    with pytest.raises(ParameterError, match="budgets"):
        msw.pilot_panels([50, 50], **GRID)
    with pytest.raises(ParameterError, match="steps"):
        msw.pilot_panels([50], **GRID, steps=3)


def test_pilot_statistics_read_each_panel_and_skip_unfinished_ones():
    pilot = msw.pilot_panels([50, 200], **GRID)
    cs = [c for p in pilot.values() for _, group in p.values() for c in group]

    def metric(c):
        if c.task == "regression":  # falls along H, rises along n from 4 to 6
            return 0.1 / c.H if c.n == 8 else {2: 0.05, 4: 0.02, 6: 0.03}[c.n]
        if c.n == 8:  # the heads panels (the context panels sweep n = 2, 4, 6)
            return 0.1 * c.H * c.steps / 200  # exactly linear in H
        return {2: 0.5, 4: 0.45, 6: 0.6}[c.n]  # a drop of 0.05 from n = 2 to 4

    df = _trained(set(cs), metric)
    table = msw.pilot_statistics(df, pilot, saturated_at=0.98, mse_floor=1e-4)
    st = table.set_index(["steps", "panel", "statistic"])
    assert sorted(table[table["steps"] == 50]["statistic"]) == sorted(
        ["r2", "r2", "worst_drop", "r2_n", "worst_drop", "r2_n", "worst_rise", "worst_rise"])
    assert st.loc[(200, "heads", "r2"), "value"] == pytest.approx(1.0)
    assert st.loc[(200, "heads", "r2"), "unsaturated"] == 3
    assert st.loc[(50, "context", "worst_drop"), "value"] == pytest.approx(0.05)
    assert st.loc[(50, "context_gp", "worst_drop"), "value"] == pytest.approx(0.05)
    # M-F4 (ii) reads the line in n of both context panels: here through (2, 0.5), (4, 0.45),
    # (6, 0.6), whose R^2 is 3/7
    for panel in ("context", "context_gp"):
        assert st.loc[(50, panel, "r2_n"), "value"] == pytest.approx(3 / 7)
        assert st.loc[(50, panel, "r2_n"), "unsaturated"] == 3
    assert st.loc[(50, "heads_reg", "worst_rise"), "value"] < 0  # falling: monotone
    assert st.loc[(50, "context_reg", "worst_rise"), "value"] == pytest.approx(0.01)
    assert st.loc[(50, "heads_reg", "worst_rise"), "unsaturated"] == 3
    # a panel with a model missing (still training) is left out, the others stay
    partial = df[~((df["task"] == "regression") & (df["n"] == 6) & (df["steps"] == 50))]
    st2 = msw.pilot_statistics(partial, pilot, saturated_at=0.98, mse_floor=1e-4)
    assert len(st2) == len(table) - 1
    assert not ((st2["steps"] == 50) & (st2["panel"] == "context_reg")).any()
    assert math.isfinite(st2["value"].iloc[0])


def test_head_size_pilot_needs_n_and_both_sides_and_reads_the_gains_per_budget():
    cs = at_budgets(partial(msw.head_size_configs, H=2, T=16, n=4, d=8, head_sizes=[8, 2, 4],
                            seed=1), [30, 10])
    assert [(c.steps, c.d_h) for c in cs] == [(30, 2), (30, 4), (30, 8), (10, 2), (10, 4),
                                              (10, 8)]
    for bad in ([2, 8], [4, 8], [2, 4]):
        with pytest.raises(ParameterError, match="head_sizes"):
            msw.head_size_configs(steps=10, H=2, T=16, n=4, d=8, head_sizes=bad, seed=0)
    acc = {(30, 2): 0.2, (30, 4): 0.7, (30, 8): 0.71, (10, 2): 0.1, (10, 4): 0.2, (10, 8): 0.5}
    gains = msw.head_size_pilot_gains(_trained(cs, lambda c: acc[(c.steps, c.d_h)]), n=4)
    g = gains.set_index("steps")
    assert g.loc[30, "gain_to_n"] == pytest.approx(0.5)
    assert g.loc[30, "gain_beyond_n"] == pytest.approx(0.01)
    assert g.loc[10, "gain_beyond_n"] == pytest.approx(0.3)
    assert g.loc[30, "flops"] == pytest.approx(3 * g.loc[10, "flops"])


def test_a_sweep_sits_on_the_pilot_axes_at_its_first_T_and_its_seed_mean():
    """A sweep read as its pilot is read: each panel's first T only (the other T does not
    count), the mean over its seeds, at the steps those models trained."""
    params = {**GRID, "steps": 100, "min_epochs": 0, "seeds": 2, "n_classes": 100,
              "batch": 256, "lr": 1e-3, "eval_every": 500}
    panels = msw.figure2_panels(**{k: params[k] for k in msw.SWEEP_PARAMETERS})
    cs = [c for _, group in panels.values() for c in group]

    def metric(c):
        if c.task == "regression":
            return 0.1 / c.H if c.n == 8 else 0.05
        if c.T == 128:  # the heads panel's second T: far from a line, and left out
            return {1: 0.9, 2: 0.1, 4: 0.5}[c.H]
        if c.n == 8:  # seeds 3 and 4 either side of an exact line in H
            return 0.1 * c.H + (0.02 if c.seed == 3 else -0.02)
        return 0.3

    table = msw.sweep_statistics(_trained(cs, metric), params, saturated_at=0.98,
                                 mse_floor=1e-4)
    st = table.set_index(["panel", "statistic"])
    assert set(table["steps"]) == {100}
    assert st.loc[("heads", "r2"), "value"] == pytest.approx(1.0)
    assert st.loc[("heads", "r2"), "unsaturated"] == 3
    # the same table as the pilot's for those models: one pilot budget of the same panels
    first = {k: [params[k][0]] for k in ("T_heads", "T_context", "T_gp", "T_reg")}
    same = msw.pilot_statistics(_trained(cs, metric), {100: msw.figure2_panels(
        **{**{k: params[k] for k in msw.SWEEP_PARAMETERS}, **first})}, saturated_at=0.98,
        mse_floor=1e-4)
    pd.testing.assert_frame_equal(table, same)
    # a sweep with no panel complete reads nothing
    assert msw.sweep_statistics(_trained(cs[:3], metric), params, saturated_at=0.98,
                                mse_floor=1e-4).empty


def test_the_pilot_figure_names_each_profile_point_it_can_draw():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from attnbook.mahdavi2024 import figures as mfig

    pilot = pd.DataFrame({"steps": [10, 20], "panel": ["heads", "heads"], "statistic": ["r2"] * 2,
                          "value": [0.9, 0.95], "unsaturated": [3, 3]})
    profiles = pd.DataFrame({"steps": [5, 40, 40], "panel": ["heads", "heads", "context"],
                             "statistic": ["r2", "r2", "worst_drop"],
                             "value": [0.99, math.nan, 0.02], "unsaturated": [3, 1, 4],
                             "profile": ["cpu", "long", "long"]})
    fig, axes = plt.subplots(1, 4)
    mfig.plot_pilot(axes, pilot, {"r2": 0.98}, min_points=3, profiles=profiles, mark=mark)
    names = [[t.get_text() for t in ax.texts] for ax in axes]
    assert names == [["cpu"], ["long"], [], []]  # the NaN is not drawn
    plt.close(fig)


def test_a_sweep_of_figure_2c_reads_its_first_T_and_its_own_n():
    """A sweep's gains from its own narrowest head to its n and on to its widest, at its
    first T only, the mean over its seeds; a sweep without n or a side of it reads nothing."""
    from attnbook.mahdavi2024.trained import MemorizationConfig

    def models(n, sizes, T_values, acc, steps):
        return _trained([MemorizationConfig(H=2, T=T, n=n, d=16, d_h=k, steps=steps, seed=s)
                         for T in T_values for k in sizes for s in (0, 1)],
                        lambda c: acc[c.d_h] + (0.01 if c.seed else -0.01) + (c.T == 99))
    cpu = models(4, [2, 4, 8], [50, 99], {2: 0.2, 4: 0.7, 8: 0.75}, 30)
    long = models(8, [4, 8, 12], [70], {4: 0.1, 8: 0.6, 12: 0.6}, 60)
    gone = models(8, [4, 8], [70], {4: 0.1, 8: 0.6}, 60)  # nothing beyond n
    got = pd.concat([msw.head_size_pilot_gains(runs[runs["T"] == T], n).assign(profile=name)
                     for name, runs, T, n in (("cpu", cpu, 50, 4), ("long", long, 70, 8))],
                    ignore_index=True)
    g = got.set_index("profile")
    assert g.loc["cpu", "gain_to_n"] == pytest.approx(0.5)  # T = 99 (+1) left out
    assert g.loc["cpu", "gain_beyond_n"] == pytest.approx(0.05)
    assert g.loc["long", "gain_to_n"] == pytest.approx(0.5) and g.loc["long", "steps"] == 60
    assert msw.head_size_pilot_gains(gone, 8).empty

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from attnbook.mahdavi2024 import figures as mfig

    fig, ax = plt.subplots()
    mfig.plot_head_size_pilot(ax, got.drop(columns="profile"), low=2, n=4, high=8,
                              profiles=got, mark=mark)
    assert sorted(t.get_text() for t in ax.texts) == ["cpu", "cpu", "long", "long"]
    plt.close(fig)
