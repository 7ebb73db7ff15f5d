"""Reading a pilot: checked budgets, and the trend of its deciding statistic."""

import math
import re

import pandas as pd
import pytest

from attnbook.engines import pilots
from attnbook.errors import ParameterError


@pytest.mark.parametrize("bad", [[], [0, 4], [4, 4], [True, 2], [2.0, 4]])
def test_budgets_are_distinct_integers_of_at_least_one(bad):
    with pytest.raises(ParameterError, match="budgets"):
        pilots.budgets(bad)


def _table(ys, xs=(1e6, 2e6, 4e6, 8e6), seeds=(0, 1), jitter=0.01):
    """One row per (seed, budget): the gaps ``ys``, seed k shifted by k * ``jitter`` and its
    slope by k * jitter / 10 per doubling (so the seeds differ, and the slope has an SE)."""
    rows = []
    for k in seeds:
        for i, (x, y) in enumerate(zip(xs, ys, strict=False)):
            rows.append({"w": 1, "seed": k, "tokens": x, "s_per_token": 2e-4,
                         "gap": y + k * jitter + k * jitter / 10 * i})
    return pd.DataFrame(rows)


def test_a_gap_linear_in_log_budget_reaches_zero_where_its_line_does():
    # 0.3 - 0.1 per doubling from 1M over two seeds: zero one doubling after 4M
    row = pilots.trend(_table([0.3, 0.2, 0.1], jitter=0), by=["w"], x="tokens", y="gap",
                       cost="s_per_token").to_dict("records")[0]
    assert row["per_doubling"] == pytest.approx(-0.1) and row["seeds"] == 2
    assert row["reaches_at"] == pytest.approx(8e6)
    # the cost counts the group's nets at the seeds the criterion needs (3 by default)
    assert row["hours_at"] == pytest.approx(8e6 * 2e-4 * 3 / 3600)
    assert row["points"] == 3 and row["horizon"] == 16e6


def test_only_the_largest_budgets_decide_the_line():
    # shrinking at first, then growing: no crossing ahead, whatever the early budgets did
    row = pilots.trend(_table([0.9, 0.1, 0.2, 0.3]), by=["w"], x="tokens", y="gap").iloc[0]
    assert math.isinf(row["reaches_at"]) and row["per_doubling"] > 0


def test_a_sign_change_within_the_pilot_is_reached_at_the_largest_budget():
    row = pilots.trend(_table([0.2, 0.1, -0.05], seeds=[0]), by=["w"], x="tokens",
                       y="gap").iloc[0]
    assert row["reaches_at"] == 4e6  # measured, so one seed is enough


def test_a_single_budget_has_no_trend():
    reading = pilots.trend(_table([0.2]), by=["w"], x="tokens", y="gap")
    row = reading.iloc[0]
    assert math.isnan(row["per_doubling"]) and math.isinf(row["reaches_at"])
    assert pilots.readable(reading)["gap 0 at (tokens)"].isna().all()
    assert "no change measured" in pilots.summary(reading, lambda r: "w")


def test_one_seed_gives_no_standard_error_and_no_crossing():
    """The line of one seed heads for zero within the horizon, but one seed's slope is the
    size of its noise: no standard error, no crossing, and the summary says so."""
    reading = pilots.trend(_table([0.3, 0.2, 0.1], seeds=[0]), by=["w"], x="tokens", y="gap",
                           cost="s_per_token")
    row = reading.iloc[0]
    assert row["seeds"] == 1 and math.isnan(row["per_doubling_se"])
    assert math.isinf(row["reaches_at"]) and math.isnan(row["hours_at"])
    text = pilots.summary(reading, lambda r: "w1")
    assert text.startswith("One seed: no standard error and no crossing is read.")
    assert "Not reached by 1.6e+07 tokens (4 times the largest budget): w1 (the gap +0.1 " \
           "there, changing by -0.100 per doubling)" in text
    # a table without a seed column counts as one seed
    no_seed = pilots.trend(_table([0.3, 0.2, 0.1], seeds=[0]).drop(columns="seed"), by=["w"],
                           x="tokens", y="gap").iloc[0]
    assert no_seed["seeds"] == 1 and math.isinf(no_seed["reaches_at"])


def test_no_crossing_is_read_beyond_four_times_the_largest_budget():
    # -0.05 per doubling from 0.15 at 4M: zero 3 doublings on (32M), beyond 4 x 4M
    far = pilots.trend(_table([0.25, 0.2, 0.15], jitter=0.002), by=["w"], x="tokens",
                       y="gap")
    row = far.iloc[0]
    assert math.isinf(row["reaches_at"]) and row["per_doubling_se"] > 0
    text = pilots.summary(far, lambda r: "w1")
    assert "Not reached by 1.6e+07 tokens (4 times the largest budget): w1" in text
    assert re.search(r"changing by -0\.05\d \+- 0\.00\d per doubling", text)
    # -0.1 per doubling from 0.19: 1.9 doublings on, within the horizon
    near = pilots.trend(_table([0.39, 0.29, 0.19], jitter=0.002), by=["w"], x="tokens",
                        y="gap").iloc[0]
    assert near["reaches_at"] == pytest.approx(4e6 * 2 ** 1.9, rel=0.02)


def test_a_slope_within_two_standard_errors_of_zero_heads_nowhere():
    """Two seeds whose lines disagree in sign: the mean heads down, but not by 2 SE."""
    t = pd.concat([_table([0.03, 0.02, 0.01], seeds=[0], jitter=0),
                   _table([0.0, 0.02, 0.04], seeds=[0], jitter=0).assign(seed=1)])
    row = pilots.trend(t, by=["w"], x="tokens", y="gap").iloc[0]
    assert abs(row["per_doubling"]) < 2 * row["per_doubling_se"]
    assert math.isinf(row["reaches_at"])


def test_a_negative_statistic_heading_up_reaches_its_target_too():
    row = pilots.trend(_table([-0.3, -0.2, -0.1], jitter=0.001), by=["w"], x="tokens",
                       y="gap").iloc[0]
    assert row["reaches_at"] == pytest.approx(8e6, rel=0.05)


def test_the_summary_sorts_each_group_by_what_was_measured():
    t = pd.concat([_table([0.3, 0.2, 0.1], jitter=0.001).assign(w=1),
                   _table([0.2, 0.3, 0.4]).assign(w=2),
                   _table([0.2, 0.1, -0.1]).assign(w=3)])
    text = pilots.summary(pilots.trend(t, by=["w"], x="tokens", y="gap", cost="s_per_token"),
                          lambda row: f"w{row['w']}")
    assert text.startswith("Crossed within the pilot: w3. Reaches zero within 4 times the "
                           "largest budget (2 seeds): w1 at 8e+06 tokens (")
    assert "hours for every net and seed the criterion needs" in text
    assert "Not reached by 1.6e+07 tokens (4 times the largest budget): w2" in text


def test_the_cost_counts_every_net_of_the_grid_at_the_seeds_needed():
    runs = pd.DataFrame({"steps": [4, 8, 8, 8, 8], "seed": [0, 0, 0, 1, 1],
                         "tokens_per_s": [1.0, 2.0, 4.0, 2.0, 4.0]})
    assert pilots.grid_cost(runs, seeds=3) == pytest.approx((1 / 2 + 1 / 4) * 3)
    row = pilots.trend(_table([0.3, 0.2, 0.1], jitter=0), by=["w"], x="tokens", y="gap",
                       cost=pilots.grid_cost(runs, seeds=3)).iloc[0]
    assert row["hours_at"] == pytest.approx(8e6 * 2.25 / 3600)
