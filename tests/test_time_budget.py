"""`attnbook run --time-budget`: sweeps stop between units before the deadline, keep what
finished, record no verdict from a subset, and the same command resumes (exit code 75)."""

import json
import time

import pytest
from notebook_files import write_notebook

from attnbook.book.cli import main
from attnbook.book.notebook import (
    ENV_BUDGET_REPORT,
    ENV_DEADLINE,
    ENV_SOURCE,
    BudgetExhausted,
    Run,
    Sweep,
    source_provenance,
)
from attnbook.book.runner import EXIT_BUDGET, execute, exit_code, plan
from attnbook.book.store import ResultStore


def _slow(calls, seconds=0.2):
    def fn(c):
        calls.append(c["x"])
        time.sleep(seconds)
        return {"y": c["x"] ** 2}
    return fn


def test_sweep_stops_before_a_unit_that_would_not_fit_and_resumes(tmp_path, monkeypatch):
    report = tmp_path / "report.jsonl"
    monkeypatch.setenv(ENV_BUDGET_REPORT, str(report))
    monkeypatch.setenv(ENV_DEADLINE, repr(time.time() + 0.3))
    calls, configs = [], [{"x": i} for i in range(5)]
    store = ResultStore("nb", "ci", root=tmp_path)
    with pytest.raises(BudgetExhausted, match="sweep 's' stopped with 4 of 5 configurations"):
        Sweep(store, "s").run(_slow(calls), configs, progress=False)
    assert calls == [0]  # the second unit (0.2 s) would end after the deadline: not started
    (missing,) = [json.loads(x) for x in report.read_text().splitlines()]
    assert missing["sweep"] == "s" and missing["missing"] == 4 and missing["configurations"] == 5
    assert missing["units_missing"] == 4
    # resumed without a budget: only the missing configurations are computed
    monkeypatch.delenv(ENV_DEADLINE)
    df = Sweep(ResultStore("nb", "ci", root=tmp_path), "s").run(_slow(calls, 0), configs,
                                                                progress=False)
    assert calls == [0, 1, 2, 3, 4] and df["y"].tolist() == [0, 1, 4, 9, 16]


def test_stored_unit_times_count_before_the_first_unit(tmp_path, monkeypatch):
    """A resumed sweep knows from its stored results how long a unit takes: a budget shorter
    than that starts nothing."""
    store = ResultStore("nb", "ci", root=tmp_path)
    store.put("s", {"x": 0}, {"y": 0}, wall_s=3600.0)
    monkeypatch.setenv(ENV_DEADLINE, repr(time.time() + 600))
    calls = []
    with pytest.raises(BudgetExhausted, match="3 of 4 configurations not computed"):
        Sweep(ResultStore("nb", "ci", root=tmp_path), "s").run(
            _slow(calls, 0), [{"x": i} for i in range(4)], progress=False)
    assert calls == []


def test_groups_stop_between_groups(tmp_path, monkeypatch):
    monkeypatch.setenv(ENV_DEADLINE, repr(time.time() + 0.3))
    seen = []

    def fn(group):
        seen.append([c["x"] for c in group])
        time.sleep(0.2)
        return [{"y": c["x"]} for c in group]

    with pytest.raises(BudgetExhausted, match=r"3 of 5 configurations not computed \(2 groups"):
        Sweep(ResultStore("nb", "ci", root=tmp_path), "s").run(
            fn, [{"x": i} for i in range(5)], progress=False,
            groups=lambda todo: [todo[i:i + 2] for i in range(0, len(todo), 2)])
    assert seen == [[0, 1]]


def test_no_verdict_after_a_budget_stop_even_if_the_notebook_catches_it(sandbox, monkeypatch):
    import torch

    ledger = sandbox / "data/claims/results/ci/L-Lem1.json"
    run = Run("nb", "ci", 0, torch.device("cpu"), "r1", False)
    monkeypatch.setenv(ENV_DEADLINE, repr(time.time() - 1))  # already spent
    try:
        run.sweep("s").run(_slow([], 0), [{"x": 0}, {"x": 1}], progress=False)
    except Exception:  # noqa: BLE001 - what a careless notebook might write
        pytest.fail("a budget stop is no Exception: `except Exception` does not swallow it")
    except BudgetExhausted:
        pass
    with pytest.raises(BudgetExhausted, match="L-Lem1 not recorded: time budget"):
        run.record("L-Lem1", True, "k = 1")
    assert not ledger.exists()
    with pytest.raises(BudgetExhausted):  # a missing table is not computed after the deadline
        run.cached("t", {"a": 1}, lambda: pytest.fail("computed after the deadline"))


def test_without_a_deadline_nothing_changes(tmp_path, monkeypatch):
    monkeypatch.delenv(ENV_DEADLINE, raising=False)
    df = Sweep(ResultStore("nb", "ci", root=tmp_path), "s").run(
        _slow([], 0), [{"x": i} for i in range(3)], progress=False)
    assert df["y"].tolist() == [0, 1, 4]


def _sweep_notebook(root, stem="e_sweep", n=4):
    """A chapter with one sweep of ``n`` configurations and one verdict drawn from all of them."""
    write_notebook(
        root / "notebooks" / f"{stem}.ipynb",
        'profile = "cpu"  # set by the runner\nseed = 0  # seed',
        "import attnbook as ab\n"
        f"run = ab.start({stem!r}, profile=profile, seed=seed)\n"
        f"configs = [{{'x': i}} for i in range({n})]\n"
        "df = run.sweep('s').run(lambda c: {'y': c['x'] ** 2}, configs, progress=False)",
        "total = int(df['y'].sum())\n"
        f"run.record('L-Lem1', total == {sum(i * i for i in range(n))}, f'sum = {{total}}')")
    (root / "notebooks" / f"{stem}.yml").write_text(
        "allowed:\n  seed: {min: 0, max: 1000000}\nprofiles:\n  ci: {}\n"
        "cost:\n  full: {where: gpu, minutes: 90, units: 4, flop: 3.0e17, note: estimated}\n")


def test_runner_records_partly_run_then_resumes(sandbox, capsys, monkeypatch):
    """Through the runner and a kernel: the stopped chapter is `partly run` in the manifest
    with what is missing, writes no ledger entry, later notebooks are `not started`, the
    command exits 75; the same command then completes it."""
    import attnbook.paths as paths

    _sweep_notebook(sandbox)
    # a stored result of this sweep that took an hour: a 10-minute budget starts no unit
    store = ResultStore("e_sweep", "ci", root=sandbox / "data" / "results")
    store.put("s", {"x": 0}, {"y": 0}, wall_s=3600.0)
    build, ledger = sandbox / "build", sandbox / "data/claims/results/ci/L-Lem1.json"
    jobs = plan(["e_sweep", "a_ok"], "ci", notebooks_dir=sandbox / "notebooks")
    entries = execute(jobs, build_dir=build, log=lambda *_: None, deadline=time.time() + 600)
    assert [e["status"] for e in entries] == ["partly run", "not started"], entries[0]["error"]
    assert exit_code(entries) == EXIT_BUDGET == 75
    assert entries[0]["missing"] == [{"sweep": "s", "configurations": 4, "missing": 3,
                                      "units_missing": 3, "longest_unit_s": 3600.0,
                                      "seconds_left": entries[0]["missing"][0]["seconds_left"]}]
    assert not ledger.exists()  # no verdict from one configuration of four
    manifest = [json.loads(x) for x in (build / "manifest.jsonl").read_text().splitlines()]
    assert [m["status"] for m in manifest] == ["partly run"]  # not started: not a run
    assert manifest[0]["missing"][0]["missing"] == 3
    budget = json.loads((build / "time-budget.json").read_text())
    assert budget["complete"] is False
    assert [r["status"] for r in budget["notebooks"]] == ["partly run", "not started"]
    assert not (build / "executed" / "e_sweep.ipynb").exists()

    # `plan` shows what is stored and what the budgeted run left missing
    monkeypatch.setattr(paths, "NOTEBOOKS", sandbox / "notebooks")
    monkeypatch.setattr(paths, "BUILD", build)
    monkeypatch.setattr(paths, "COMMITTED_RESULTS", sandbox / "data" / "results")
    assert main(["plan", "e_sweep", "--profile", "ci", "--json"]) == 0
    (row,) = json.loads(capsys.readouterr().out)
    assert row["stored"] == 1 and row["where"] == "unknown"  # the cost names profile full
    assert row["last_budget"] == "partly run: s 3/4 missing"
    assert main(["plan", "e_sweep", "--profile", "full"]) == 0
    out = capsys.readouterr().out
    assert "e_sweep | gpu | 4 | 0 | 90 (estimated) | 3e+17 | estimated" in out
    assert "gpu: 1 chapter, 90 minutes known (1.5 hours)" in out

    # again with time for an hour-long unit: the three missing configurations, then the verdict
    entries = execute(jobs, build_dir=build, log=lambda *_: None, deadline=time.time() + 7200)
    assert [e["status"] for e in entries] == ["ok", "ok"], entries[0]["error"]
    assert exit_code(entries) == 0
    assert json.loads(ledger.read_text())["measured"] == "k = 1"  # a_ok wrote last
    assert json.loads((build / "time-budget.json").read_text())["complete"] is True


def test_cli_time_budget_exit_code_and_bad_values(sandbox, capsys, monkeypatch):
    import attnbook.paths as paths

    _sweep_notebook(sandbox)
    monkeypatch.setattr(paths, "NOTEBOOKS", sandbox / "notebooks")
    monkeypatch.setattr(paths, "BUILD", sandbox / "build")
    for bad in ("0", "-5", "nan", "soon"):
        assert main(["run", "e_sweep", "--profile", "ci", "--time-budget", bad]) == 2
        assert "--time-budget" in capsys.readouterr().err
    assert not (sandbox / "build").exists()
    store = ResultStore("e_sweep", "ci", root=sandbox / "data" / "results")
    store.put("s", {"x": 0}, {"y": 0}, wall_s=3600.0)
    assert main(["run", "e_sweep", "--profile", "ci", "--time-budget", "600"]) == EXIT_BUDGET
    out = capsys.readouterr().out
    assert "time budget of 600 s spent: e_sweep partly run (sweep s: 3 of 4 configurations " \
           "missing)" in out
    assert main(["run", "e_sweep", "--profile", "ci"]) == 0


def test_source_provenance_fills_in_only_a_missing_commit(monkeypatch):
    monkeypatch.setenv(ENV_SOURCE, json.dumps({"commit": "abc123", "dirty": False}))
    assert source_provenance({"commit": "unknown", "dirty": False, "diff_sha256": "x"}) == \
        {"commit": "abc123", "dirty": False}
    assert source_provenance({"commit": "def456", "dirty": True})["commit"] == "def456"
    monkeypatch.setenv(ENV_SOURCE, "[]")
    with pytest.raises(Exception, match="ATTNBOOK_SOURCE"):
        source_provenance({"commit": "unknown"})


def test_a_chapter_that_stops_itself_is_not_told_its_budget_ran_out(sandbox, capsys,
                                                                    monkeypatch):
    """A chapter that stops by design (``run.partly``: a long sweep not sized yet) under a time
    budget: partly run, exit 75, but the budget is not blamed and nothing says to resume."""
    import attnbook.paths as paths

    write_notebook(
        sandbox / "notebooks" / "f_stops.ipynb",
        'profile = "cpu"  # set by the runner\nseed = 0  # seed',
        "import attnbook as ab\n"
        "run = ab.start('f_stops', profile=profile, seed=seed)\n"
        "run.partly('the long sweep is not sized yet')")
    (sandbox / "notebooks" / "f_stops.yml").write_text(
        "allowed:\n  seed: {min: 0, max: 1000000}\nprofiles:\n  ci: {}\n")
    monkeypatch.setattr(paths, "NOTEBOOKS", sandbox / "notebooks")
    monkeypatch.setattr(paths, "BUILD", sandbox / "build")
    assert main(["run", "f_stops", "--profile", "ci", "--time-budget", "600"]) == EXIT_BUDGET
    out = capsys.readouterr().out
    assert "f_stops partly run (stopped: the long sweep is not sized yet)" in out
    assert "time budget" not in out and "resume" not in out
