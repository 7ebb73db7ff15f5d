"""Reading a pilot: checked budgets, and the trend of its deciding statistic."""

import math

import pandas as pd
import pytest

from attnbook import pilots
from attnbook.errors import ParameterError


@pytest.mark.parametrize("bad", [[], [0, 4], [4, 4], [True, 2], [2.0, 4]])
def test_budgets_are_distinct_integers_of_at_least_one(bad):
    with pytest.raises(ParameterError, match="budgets"):
        pilots.budgets(bad)


def _table(ys, xs=(1e6, 2e6, 4e6, 8e6)):
    return pd.DataFrame({"w": 1, "tokens": xs[:len(ys)], "gap": ys, "s_per_token": 2e-4})


def test_a_gap_linear_in_log_budget_reaches_zero_where_its_line_does():
    # 0.4 - 0.1 per doubling from 1M: zero after 4 doublings, at 16M tokens
    row = pilots.trend(_table([0.4, 0.3, 0.2, 0.1]), by=["w"], x="tokens", y="gap",
                       cost="s_per_token").iloc[0]
    assert row["per_doubling"] == pytest.approx(-0.1)
    assert row["reaches_at"] == pytest.approx(16e6)
    assert row["hours_at"] == pytest.approx(16e6 * 2e-4 / 3600)
    assert row["points"] == 3  # the three largest budgets only


def test_only_the_largest_budgets_decide_the_line():
    # shrinking at first, then growing: no crossing ahead, whatever the early budgets did
    row = pilots.trend(_table([0.9, 0.1, 0.2, 0.3]), by=["w"], x="tokens", y="gap").iloc[0]
    assert math.isinf(row["reaches_at"]) and row["per_doubling"] > 0


def test_a_sign_change_within_the_pilot_is_reached_at_the_largest_budget():
    row = pilots.trend(_table([0.2, 0.1, -0.05]), by=["w"], x="tokens", y="gap").iloc[0]
    assert row["reaches_at"] == 4e6


def test_a_single_budget_has_no_trend():
    row = pilots.trend(_table([0.2]), by=["w"], x="tokens", y="gap").iloc[0]
    assert math.isnan(row["per_doubling"]) and math.isinf(row["reaches_at"])
    shown = pilots.readable(pilots.trend(_table([0.2]), by=["w"], x="tokens", y="gap"))
    assert shown["gap 0 at (tokens)"].isna().all()


def test_a_negative_statistic_heading_up_reaches_its_target_too():
    row = pilots.trend(_table([-0.3, -0.2, -0.1]), by=["w"], x="tokens", y="gap").iloc[0]
    assert row["reaches_at"] == pytest.approx(8e6)


def test_the_summary_sorts_each_group_by_where_its_trend_goes():
    t = pd.concat([_table([0.4, 0.3, 0.2]).assign(w=1), _table([0.2, 0.3, 0.4]).assign(w=2),
                   _table([0.2, 0.1, -0.1]).assign(w=3)])
    text = pilots.summary(pilots.trend(t, by=["w"], x="tokens", y="gap", cost="s_per_token"),
                          lambda row: f"w{row['w']}")
    assert text.startswith("Crossed within the pilot: w3. Heading for a crossing: "
                           "w1 at 1.6e+07 tokens (0.89 hours)")
    assert text.endswith("No crossing in sight: w2.")


def test_a_crossing_beyond_the_horizon_is_not_in_sight():
    # -0.01 per doubling from 0.2: zero 18 doublings on, beyond the 10 extrapolated
    row = pilots.trend(_table([0.22, 0.21, 0.2]), by=["w"], x="tokens", y="gap").iloc[0]
    assert math.isinf(row["reaches_at"])
    near = pilots.trend(_table([0.03, 0.02, 0.01]), by=["w"], x="tokens", y="gap").iloc[0]
    assert near["reaches_at"] == pytest.approx(8e6)  # one doubling on


def test_each_profile_that_has_run_is_drawn_named_and_hollow_where_untestable():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from attnbook.pilots import PROFILE_MARKERS, mark_profiles

    table = pd.DataFrame({"profile": ["ci", "cpu", "long"], "x": [1, 2, 3],
                          "y": [0.1, float("nan"), 0.3], "ok": [True, True, False]})
    fig, ax = plt.subplots()
    drawn = mark_profiles(ax, table, x="x", y="y", colour=lambda r: "C3",
                          filled=lambda r: r["ok"])
    assert drawn == 2 and sorted(t.get_text() for t in ax.texts) == ["ci", "long"]
    long, ci = ax.lines  # drawn from the highest point down
    assert ci.get_marker() == PROFILE_MARKERS["ci"] and long.get_markerfacecolor() == "none"
    # points of one profile stacked at one budget: each drawn, the profile named once
    fig2, ax2 = plt.subplots()
    stacked = pd.DataFrame({"profile": ["cpu"] * 3, "x": [5, 5, 9], "y": [0.1, 0.2, 0.3]})
    assert mark_profiles(ax2, stacked, x="x", y="y", colour=lambda r: "C0") == 3
    assert [t.get_text() for t in ax2.texts] == ["cpu", "cpu"]
    assert [t.xy for t in ax2.texts] == [(9, 0.3), (5, 0.2)]
    plt.close(fig)
    plt.close(fig2)


def test_each_profile_is_read_alone_and_one_without_a_reading_is_left_out():
    """A profile's table comes from its own results and parameters; a profile that stored
    nothing, or whose reading is empty, adds no row; with none left, the named columns."""
    seen = []

    def read(results, params):
        seen.append(params["name"])
        part = results[results["w"] == params["w"]]
        return part.assign(doubled=2 * part["gap"]) if len(part) else None

    across = {"ci": (pd.DataFrame({"w": [4], "gap": [1.0]}), {"w": 8, "name": "ci"}),
              "cpu": (pd.DataFrame({"w": [8, 16], "gap": [0.5, 9.0]}), {"w": 8, "name": "cpu"}),
              "long": (pd.DataFrame(), {"w": 8, "name": "long"}),
              "full": (None, {"w": 8, "name": "full"})}
    got = pilots.per_profile(across, read, columns=["w", "gap", "doubled"])
    assert seen == ["ci", "cpu"]  # nothing stored: not read at all
    assert got[["profile", "w", "doubled"]].values.tolist() == [["cpu", 8, 1.0]]
    empty = pilots.per_profile({"ci": across["ci"]}, read, columns=["w", "gap", "doubled"])
    assert empty.empty and list(empty.columns) == ["w", "gap", "doubled", "profile"]
