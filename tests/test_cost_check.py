"""The cost check before a run: from each chapter's .yml (``estimate``, scaled by its ``cost``
minutes), a run with changed parameters that needs more memory than the machine has, or more
than an hour at a profile meant to take minutes, is refused in one line before any kernel."""

import math

import pytest

from attnbook.book.claims import PROFILES
from attnbook.book.cli import main
from attnbook.book.costs import MAX_MINUTES, check_costs, estimate
from attnbook.book.runner import UsageError, available_notebooks, plan

STEMS = list(available_notebooks())
DEVICE_GB = {"cpu": 16, "gpu": 80}  # what a profile's machine has at least


def test_the_issues_run_is_refused_for_its_memory_before_any_kernel(capsys):
    """bruna2024_furthest_neighbour -p steps 200000 -p batch 4096 -p d 256 -p N 64 failed
    after 53 s allocating 154 GB: now one line with the estimate and the override."""
    jobs = plan(["bruna2024_furthest_neighbour"], "cpu",
                [("steps", "200000"), ("batch", "4096"), ("d", "256"), ("N", "64")])
    with pytest.raises(UsageError) as err:
        check_costs(jobs, memory_gb=128)
    message = str(err.value)
    assert "GB" in message and "more than this machine's 128 GB" in message
    assert "--no-cost-check" in message and "\n" not in message
    assert main(["run", "bruna2024_furthest_neighbour", "-p", "steps", "200000", "-p", "batch",
                 "4096", "-p", "d", "256", "-p", "N", "64"]) == 2
    assert "--no-cost-check" in capsys.readouterr().err


def test_hours_at_a_profile_meant_for_minutes_are_refused_unless_budgeted():
    (job,) = plan(["bruna2024_furthest_neighbour"], "cpu", [("steps", "200000")])
    assert estimate(job)["minutes"] > MAX_MINUTES
    with pytest.raises(UsageError, match=r"takes about .* hours on this cpu .* profile cpu is "
                                         r"meant to take minutes.*--no-cost-check"):
        check_costs([job], memory_gb=1e6)
    check_costs([job], memory_gb=1e6, budgeted=True)  # the budget stops it in time
    (small,) = plan(["bruna2024_furthest_neighbour"], "ci", [("steps", "600")])
    check_costs([small], memory_gb=1e6)
    (defined,) = plan(["bruna2024_furthest_neighbour"], "full")
    check_costs([defined], memory_gb=1)  # a profile as defined: its .yml is the promise


@pytest.mark.parametrize("stem", STEMS)
def test_every_profile_estimates_its_own_minutes_and_fits_its_machine(stem):
    for profile in PROFILES:
        try:
            (job,) = plan([stem], profile)
        except UsageError:  # a profile this chapter does not define
            continue
        cost = job.spec.cost.get(profile)
        where = cost["where"] if cost else "cpu"
        est = estimate(job, where)
        assert est["memory_gb"] is not None and est["memory_gb"] <= DEVICE_GB[where], \
            (profile, est)
        if cost and cost.get("minutes"):
            assert math.isclose(est["minutes"], cost["minutes"], rel_tol=1e-9), (profile, est)
        if profile in ("ci", "cpu"):
            assert est["minutes"] is not None and est["minutes"] <= MAX_MINUTES, (profile, est)


def _extremes(spec):
    """(name, text) for every numeric parameter at its allowed minimum and maximum (a list
    parameter as a one-element list)."""
    for name, rule in spec.allowed.items():
        if "min" not in rule or "max" not in rule:
            continue
        default = spec.defaults[name]
        for bound in (rule["min"], rule["max"]):
            value = type(default[0] if isinstance(default, list) else default)(bound)
            yield name, repr([value]) if isinstance(default, list) else repr(value)


@pytest.mark.parametrize("stem", STEMS)
def test_every_numeric_extreme_is_planned_or_refused_in_one_line(stem):
    """At ci, each numeric parameter at each end of its allowed range: the plan accepts it
    (other parameters following where a rule lets them) or refuses it in one line, and the
    cost check gives an estimate or refuses in one line, all before any kernel."""
    (base,) = plan([stem], "ci")
    for name, text in _extremes(base.spec):
        try:
            jobs = plan([stem], "ci", [(name, text)])
        except UsageError as e:
            assert "\n" not in str(e) and stem in str(e), (name, text, e)
            continue
        est = estimate(jobs[0])
        for key in ("minutes", "memory_gb"):
            assert est[key] is None or (math.isfinite(est[key]) and est[key] >= 0), \
                (name, text, est)
        try:
            check_costs(jobs, memory_gb=16)
        except UsageError as e:
            assert "\n" not in str(e) and "--no-cost-check" in str(e), (name, text, e)


def test_levine2020_lemma1_holds_at_every_allowed_extreme():
    """Lemma 1 is a proven property: at ci with any one numeric parameter at either end of its
    allowed range, the chapter's computation must reproduce it (max_depth 6 did not: the norm
    of f(aX) underflowed at degree 729, fitted degree inf)."""
    from attnbook import criteria
    from attnbook.engines.polynomial import lemma1_table

    (base,) = plan(["levine2020_lemma1"], "ci")
    for name, text in _extremes(base.spec):
        (job,) = plan(["levine2020_lemma1"], "ci", [(name, text)])
        p = {**job.spec.defaults, **job.parameters}
        table = lemma1_table(list(range(1, p["max_depth"] + 1)), p["widths"], p["heads"],
                             d_a=p["d_a"], N=p["N"], batch=p["batch"],
                             line_max_depth=p["line_max_depth"], seed=p["seed"])
        assert criteria.decide("L-Lem1", table, p["line_max_depth"]) is True, (name, text)
