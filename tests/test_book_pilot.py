"""attnbook.book.pilot: a chapter's pilot section (its units at each profile, the profiles that
have run on its axes, the standard figure, the stop after it), written once."""

import json

import matplotlib
import pandas as pd
import pytest

from attnbook import ParameterError, paths
from attnbook.book import claims
from attnbook.book import pilot as ap
from attnbook.book.notebook import BudgetExhausted, Run
from attnbook.book.store import ResultStore

matplotlib.use("Agg")


def test_the_builder_runs_at_each_budget_the_longest_first():
    got = ap.at_budgets(lambda steps: [{"steps": steps, "w": w} for w in (8, 16)], [10, 40, 20])
    assert [(c["steps"], c["w"]) for c in got] == [(40, 8), (40, 16), (20, 8), (20, 16),
                                                  (10, 8), (10, 16)]


def test_a_chapter_trains_its_pilot_only_at_the_profile_that_trains_it(tmp_path, monkeypatch):
    """Computed (by the chapter's function, in the run's sweep "pilot") when the run trains
    the pilot, else the long profile's stored pilot, with a phrase saying which; the function
    is not called."""
    monkeypatch.setattr(paths, "COMMITTED_RESULTS", tmp_path)
    long = ResultStore("nb", "long", root=tmp_path)
    long.put("pilot", {"steps": 10}, {"gap": 0.1})
    long.put("pilot", {"steps": 20}, {"gap": -0.1})
    calls = []

    def train(sweep):
        calls.append(sweep.name)
        return pd.DataFrame({"gap": [1.0]})

    monkeypatch.setattr(Run, "profile_parameters", lambda self, profile: {"at": profile})
    at_long = Run("nb", "long", 0, "cpu", "r", False, {}, True, {}, False)
    got = ap.units(at_long, True, train)
    assert calls == ["pilot"] and got.source == "this run (long)" and len(got) == 1
    at_cpu = Run("nb", "cpu", 0, "cpu", "r", False, {}, True, {}, False)
    got = ap.units(at_cpu, False, train, unit="nets")
    assert len(calls) == 1 and sorted(got.runs["gap"]) == [-0.1, 0.1]
    assert got.source == "the long profile's pilot, 2 nets stored so far"


def test_a_chapter_reads_every_profile_that_has_run_and_stored_a_sweep(sandbox, monkeypatch):
    """Per profile whose run is complete (a current verdict for each of the chapter's claims)
    and that stored some of the sweep, smallest first, the chapter's reading of what it stored
    with that profile's parameters; a profile with results but no verdicts (still running, or
    stopped after its pilot) is left out, and so is one with verdicts but nothing stored."""
    monkeypatch.setattr(paths, "CLAIMS", sandbox / "data/claims")
    monkeypatch.setattr(paths, "COMMITTED_RESULTS", sandbox / "data/results")
    nb = "mahdavi2024_fig2_heads_context"  # a chapter with a long profile
    root = sandbox / "data/results"
    ResultStore(nb, "long", root=root).put("models", {"H": 1}, {"metric": 0.5})
    ResultStore(nb, "ci", root=root).put("models", {"H": 2}, {"metric": 0.25})
    ResultStore(nb, "cpu", root=root).put("models", {"H": 3}, {"metric": 0.1})
    ResultStore(nb, "full", root=root).put("pilot", {"H": 3}, {"metric": 0.1})
    ids = claims.notebook_claims(paths.NOTEBOOKS / f"{nb}.ipynb")
    for profile in ("ci", "long", "full"):  # cpu has results but no verdicts
        for cid in ids:
            claims.record(cid, False, "x", profile=profile, notebook=nb,
                          run={"commit": "abc", "dirty": False},
                          claims_dir=sandbox / "data/claims")
    run = Run(nb, "cpu", 0, "cpu", "r", False, {}, True, {}, False)
    got = ap.across(run, "models", lambda runs, params: runs.assign(d=params["d"]))
    assert got[["profile", "H", "metric"]].values.tolist() == [["ci", 2, 0.25],
                                                                ["long", 1, 0.5]]
    assert got["d"].tolist() == [run.profile_parameters("ci")["d"], 64]
    nothing = ap.across(run, "nothing", lambda runs, params: runs, ["H"])
    assert nothing.empty and list(nothing.columns) == ["H", "profile"]


def _minutes(stem: str) -> str:
    """The minutes a chapter's .yml gives its long profile (its pilot's measured cost)."""
    from attnbook.book.profiles import load_spec

    return f"{load_spec(paths.NOTEBOOKS / f'{stem}.ipynb').cost['long']['minutes']:g}"


def test_a_chapter_its_pilot_stops_says_in_the_ledger_why_it_has_no_verdict(sandbox,
                                                                            monkeypatch):
    """Each claim recorded as not run at this profile, with the pilot's reading and its cost
    from the .yml, then the chapter stops as partly run; without claims it only stops."""
    monkeypatch.setattr(paths, "CLAIMS", sandbox / "data/claims")
    monkeypatch.setattr(paths, "COMMITTED_RESULTS", sandbox / "data/results")
    run = Run("bruna2024_furthest_neighbour", "long", 0, "cpu", "r", False,
              {"commit": "abc", "dirty": False})
    with pytest.raises(BudgetExhausted, match="the ledger says why"):
        ap.stop(run, "r = d/2 is at 0.6 and falling.", claims=["B-NN"])
    entry = json.loads((sandbox / "data/claims/results/long/B-NN.json").read_text())
    assert entry["status"] == "not run"
    assert entry["measured"].startswith("no long run: r = d/2 is at 0.6 and falling. The pilot "
                                        f"took {_minutes('bruna2024_furthest_neighbour')} "
                                        "minutes on the cpu (measured).")
    row = claims.status_table("long", claims_dir=sandbox / "data/claims").set_index("id")
    assert row.loc["B-NN", "status"] == "not run" and "falling" in row.loc["B-NN", "measured"]
    with pytest.raises(BudgetExhausted):  # nothing is recorded after the stop
        run.record("B-NN", True, "late")
    # a chapter that reads another chapter's pilot cites that chapter's cost
    run = Run("wies2021_vocab_rank", "long", 0, "cpu", "r", False,
              {"commit": "abc", "dirty": False})
    with pytest.raises(BudgetExhausted, match="the ledger says why"):
        ap.stop(run, "the gap closes too slowly.", claims=["W-F3"],
                pilot_of="wies2021_depth_efficiency")
    entry = json.loads((sandbox / "data/claims/results/long/W-F3.json").read_text())
    assert entry["measured"].startswith(
        "no long run: the gap closes too slowly. The pilot (wies2021_depth_efficiency at long) "
        f"took {_minutes('wies2021_depth_efficiency')} minutes on the cpu (measured).")
    run = Run("wies2021_attention_ratio", "long", 0, "cpu", "r", False, {})
    with pytest.raises(BudgetExhausted, match=ap.SIZED_LATER):  # the long sweep still to come
        ap.stop(run)


def test_the_deep_nets_standing_names_its_side_at_every_width():
    """Gap deep - shallow: all above 0 is behind, all below 0 ahead, mixed names the sides that
    occur (a gap of exactly 0 is level); no rows is refused."""
    assert ap.standing(pd.DataFrame({"gap": [0.3, 0.1, 0.05]})) == "behind at every width"
    assert ap.standing(pd.DataFrame({"gap": [-0.3, -0.1]}), "size") == "ahead at every size"
    assert ap.standing(pd.DataFrame({"gap": [0.1, 0.0]})) == \
        "behind at some widths and level at others"
    assert ap.standing(pd.DataFrame({"gap": [0.1, -0.2, 0.0]})) == \
        "behind at some widths and ahead and level at others"
    with pytest.raises(ParameterError, match="gaps"):
        ap.standing(pd.DataFrame({"gap": []}))


def test_the_standard_figure_draws_a_line_per_group_and_a_marker_per_profile_point():
    gaps = pd.DataFrame({"L_shallow": 1, "L_deep": 2, "tokens": [10, 20] * 2,
                         "d_shallow": [8, 8, 16, 16], "d_deep": [6, 6, 12, 12],
                         "gap": [0.2, 0.1, -0.1, -0.2]})
    profiles = pd.DataFrame({"L_shallow": [1, 1], "L_deep": [2, 2], "tokens": [40, 40],
                             "d_shallow": [8, 32], "gap": [0.05, float("nan")],
                             "profile": ["cpu", "long"]})
    fig = ap.grows(gaps, profiles, panels=["L_shallow", "L_deep"], line=["d_shallow", "d_deep"],
                   colour_by="d_shallow", label=lambda k: f"width {k[0]}",
                   title=lambda at: f"L = {at[0]} vs {at[1]}")
    ax = fig.axes[0]
    assert ax.get_title() == "L = 1 vs 2" and ax.get_ylim()[0] == -ax.get_ylim()[1]
    lines = [line for line in ax.get_lines() if line.get_label().startswith("width")]
    assert [line.get_label() for line in lines] == ["width 8", "width 16"]
    marked = [line for line in ax.get_lines() if line.get_marker() == ap.MARKERS["cpu"]]
    assert len(marked) == 1 and marked[0].get_color() == lines[0].get_color()
    assert not [line for line in ax.get_lines() if line.get_marker() == ap.MARKERS["long"]]


def test_the_standard_figure_draws_the_mean_over_a_pilots_seeds_with_their_spread():
    gaps = pd.DataFrame({"L_shallow": 1, "L_deep": 2, "tokens": [10, 20] * 2, "seed": [0, 0, 1, 1],
                         "d_shallow": 8, "d_deep": 6, "gap": [0.2, 0.1, 0.4, -0.1]})
    fig = ap.grows(gaps, gaps.iloc[:0].assign(profile=[]), panels=["L_shallow", "L_deep"],
                   line=["d_shallow", "d_deep"], colour_by="d_shallow",
                   label=lambda k: f"width {k[0]}")
    ax = fig.axes[0]
    (line,) = [line for line in ax.get_lines() if line.get_label() == "width 8"]
    assert list(line.get_xdata()) == [10, 20]
    assert list(line.get_ydata()) == pytest.approx([0.3, 0.0])
    assert len(ax.collections) == 1  # one seed standard deviation at each budget


def test_each_profile_that_has_run_is_drawn_named_and_hollow_where_untestable():
    import matplotlib.pyplot as plt

    table = pd.DataFrame({"profile": ["ci", "cpu", "long"], "x": [1, 2, 3],
                          "y": [0.1, float("nan"), 0.3], "ok": [True, True, False]})
    fig, ax = plt.subplots()
    drawn = ap.mark(ax, table, x="x", y="y", colour=lambda r: "C3", filled=lambda r: r["ok"])
    assert drawn == 2 and sorted(t.get_text() for t in ax.texts) == ["ci", "long"]
    long, ci = ax.lines  # drawn from the highest point down
    assert ci.get_marker() == ap.MARKERS["ci"] and long.get_markerfacecolor() == "none"
    # points of one profile stacked at one budget: each drawn, the profile named once
    fig2, ax2 = plt.subplots()
    stacked = pd.DataFrame({"profile": ["cpu"] * 3, "x": [5, 5, 9], "y": [0.1, 0.2, 0.3]})
    assert ap.mark(ax2, stacked, x="x", y="y", colour=lambda r: "C0") == 3
    assert [t.get_text() for t in ax2.texts] == ["cpu", "cpu"]
    assert [t.xy for t in ax2.texts] == [(9, 0.3), (5, 0.2)]
    plt.close(fig)
    plt.close(fig2)
