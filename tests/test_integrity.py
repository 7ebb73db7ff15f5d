"""Failure tests for the runner and cache under hostile but fair use: one test (or more) per
item of the integrity report (numbered as there)."""

import json
import os
import signal
import subprocess
import sys
import time

import pandas as pd
import pytest
from notebook_files import write_notebook

from attnbook import paths
from attnbook.book.cli import main
from attnbook.book.runner import UsageError, execute, plan
from attnbook.book.store import (
    DamagedResultWarning,
    ResultStore,
    dumps,
    stored_results,
    write_record,
)
from attnbook.errors import AttnbookError


def _strict(text):
    """json.loads that refuses NaN and Infinity, as strict JSON parsers do."""
    def refuse(token):
        raise ValueError(f"non-standard JSON token {token}")

    return json.loads(text, parse_constant=refuse)


def _notebook(path, code, params='profile = "cpu"  # set by the runner\nseed = 0  # seed\n'
              'k = 2  # a small integer', yml="allowed:\n  seed: {min: 0, max: 9}\n"
              "  k: {min: 1, max: 5}\nprofiles:\n  ci: {k: 1}\n"):
    write_notebook(path, params, code)
    path.with_suffix(".yml").write_text(yml)


@pytest.fixture
def real_cli(tmp_path, monkeypatch):
    """The book's own notebooks, with every place a run could write moved into tmp_path."""
    monkeypatch.setattr(paths, "BUILD", tmp_path / "build")
    monkeypatch.setattr(paths, "EXPLORE", tmp_path / "build" / "explore")
    monkeypatch.setattr(paths, "COMMITTED_RESULTS", tmp_path / "results")
    monkeypatch.setattr(paths, "COMMITTED_FIGURES", tmp_path / "figures")
    return tmp_path


def _one_line_exit_2(capsys, argv):
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("attnbook: error: ") and "\n" not in err, err
    return err


# 1. the README's own example --------------------------------------------------------------
def test_1_readme_example_is_accepted_and_the_dependent_parameter_follows():
    (job,) = plan(["levine2020_lemma1"], "ci", [("max_depth", "2")])
    assert job.parameters["max_depth"] == 2 and job.parameters["line_max_depth"] == 2
    assert job.overrides == {"max_depth": 2, "line_max_depth": 2}  # exploratory, ledger alone
    assert job.notes and "line_max_depth = 2" in job.notes[0]
    # set explicitly against the rule, both parameters and the fix are named
    with pytest.raises(UsageError) as err:
        plan(["levine2020_lemma1"], "ci", [("max_depth", "2"), ("line_max_depth", "3")])
    assert "line_max_depth = 3, max_depth = 2" in str(err.value)
    assert "change -p line_max_depth or -p max_depth" in str(err.value)


# 2. rules that link parameters are checked before any kernel --------------------------------
def test_2_a_broken_rule_rejects_the_run_before_any_kernel_writes_or_deletes_anything(
        cli_sandbox, capsys):
    nbs = cli_sandbox / "notebooks"
    _notebook(nbs / "e_linked.ipynb", "raise RuntimeError('must not run')",
              yml="allowed:\n  seed: {min: 0, max: 9}\n  k: {min: 1, max: 5}\n"
                  "rules:\n  - {check: \"k < seed + 3\", message: \"k below seed + 3\"}\n")
    executed = cli_sandbox / "build" / "executed"
    executed.mkdir(parents=True)
    (executed / "e_linked.ipynb").write_text("last good")
    err = _one_line_exit_2(capsys, ["run", "a_ok", "e_linked", "-p", "k", "4"])
    assert "e_linked: parameters k = 4, seed = 0 break the rule k < seed + 3" in err
    assert sorted(p.name for p in (cli_sandbox / "build").rglob("*")) == [
        "e_linked.ipynb", "executed"]  # no manifest, no failed/, no tmp/
    assert (executed / "e_linked.ipynb").read_text() == "last good"
    assert not (cli_sandbox / "data" / "claims" / "results").exists()  # a_ok did not run


def test_2_mahdavi_n_is_rejected_for_both_chapters_up_front():
    with pytest.raises(UsageError, match=r"mahdavi2024_fig2c_head_size: parameters n = 7, "
                                         r"head_sizes = .* break the rule"):
        plan(["mahdavi2024_fig2c_head_size", "mahdavi2024_fig3_saturation"], "ci", [("n", "7")])
    with pytest.raises(UsageError, match=r"mahdavi2024_fig3_saturation: parameters n = 8, "
                                         r"d = 8 break the rule n < d"):
        plan(["mahdavi2024_fig3_saturation"], "ci", [("n", "8")])


# 3. element types inside lists ---------------------------------------------------------------
@pytest.mark.parametrize("value", ["[a, b]", "[[1,2]]", "[nan]", "[1e9]", "[]", "[1.5]"])
def test_3_list_elements_are_checked_as_one_line(real_cli, capsys, value):
    err = _one_line_exit_2(capsys, ["run", "levine2020_lemma1", "--profile", "ci",
                                    "-p", "widths", value])
    assert "parameter widths" in err and "Traceback" not in err
    assert not (real_cli / "build").exists()


# 4. NaN passes no check; the manifest is strict JSON ----------------------------------------
@pytest.mark.parametrize("name, value", [("min_gap", "nan"), ("min_gap", "inf")])
def test_4_non_finite_numbers_are_rejected(real_cli, capsys, name, value):
    err = _one_line_exit_2(capsys, ["run", "wies2021_embedding_rank", "--profile", "ci",
                                    "-p", name, value])
    assert "is not a finite number" in err
    err = _one_line_exit_2(capsys, ["run", "wies2021_rank_bottleneck", "-p", "lr", "nan"])
    assert "parameter lr = nan is not a finite number" in err


def test_4_measured_nan_is_written_as_null_and_the_manifest_is_strict(sandbox):
    assert dumps({"x": float("nan"), "y": [1.0, float("inf")]}) == '{"x": null, "y": [1.0, null]}'
    (entry,) = execute(plan(["a_ok"], "ci", notebooks_dir=sandbox / "notebooks"),
                       build_dir=sandbox / "build", log=lambda *_: None)
    for line in (sandbox / "build" / "manifest.jsonl").read_text().splitlines():
        _strict(line)
    store = ResultStore("nb", "ci", root=sandbox)
    store.put("sw", {"a": 1}, {"loss": float("nan")})
    (rec,) = (sandbox / "nb" / "ci" / "sw").glob("*.json")
    assert _strict(rec.read_text())["result"] == {"loss": None}
    assert ResultStore("nb", "ci", root=sandbox).get("sw", {"a": 1}) == {"loss": None}


# 5. a repeated -p ------------------------------------------------------------------------------
def test_5_a_parameter_given_twice_is_an_error(real_cli, capsys):
    err = _one_line_exit_2(capsys, ["run", "levine2020_lemma1", "--profile", "ci",
                                    "-p", "max_depth", "9", "-p", "max_depth", "3"])
    assert "parameter max_depth is given 2 times ('9', '3')" in err


# 6. every numeric parameter is bounded ------------------------------------------------------
@pytest.mark.parametrize("name", ["steps", "warmup", "eval_tokens"])
def test_6_unbounded_parameters_have_a_maximum(real_cli, capsys, name):
    err = _one_line_exit_2(capsys, ["run", "wies2021_rank_bottleneck", "--profile", "ci",
                                    "-p", name, "10000000000"])
    assert f"parameter {name} = 10000000000 is out of range" in err


# 7. a valid-looking parameter that would crash the chapter is rejected up front ------------
def test_7_heads_without_a_checkable_setting_is_rejected(real_cli, capsys):
    err = _one_line_exit_2(capsys, ["run", "wies2021_embedding_rank", "--profile", "ci",
                                    "-p", "heads", "[3]"])
    assert "heads = [3]" in err and "max(widths) > min(heads)" in err
    assert not (real_cli / "build").exists()
    (job,) = plan(["wies2021_embedding_rank"], "ci", [("heads", "[2]")])  # still allowed
    assert job.parameters["heads"] == [2]


# 8. a damaged cache is reported and recomputed, never used -----------------------------------
def _table_store(root, **kw):
    return ResultStore("nb", "cpu", root=root, **kw)


def test_8_a_truncated_csv_is_recomputed_not_served(tmp_path):
    full = pd.DataFrame({"x": range(12), "y": [0.5] * 12})
    _table_store(tmp_path).cached("t", {"v": 1}, lambda: full)
    (csv,) = tmp_path.rglob("*.csv")
    lines = csv.read_text().splitlines(keepends=True)
    for damaged in ("".join(lines[:5]), "".join(lines)[:-7]):  # 4 rows; cut mid-line
        csv.write_text(damaged)
        with pytest.warns(DamagedResultWarning, match=f"{csv}: content does not match"):
            df = _table_store(tmp_path).cached("t", {"v": 1}, lambda: full)
        assert len(df) == 12  # recomputed
        assert csv.read_text() == "".join(lines)  # and stored again


def test_8_an_edited_sweep_value_or_truncated_json_is_recomputed(tmp_path):
    store = _table_store(tmp_path)
    store.put("sw", {"a": 1}, {"acc": 0.25})
    (rec,) = tmp_path.rglob("*.json")
    record = json.loads(rec.read_text())
    record["result"]["acc"] = 0.99  # "reproduced", by hand
    rec.write_text(json.dumps(record))
    with pytest.warns(DamagedResultWarning, match=str(rec)):
        assert _table_store(tmp_path).missing("sw", [{"a": 1}]) == [{"a": 1}]
    rec.write_text(rec.read_text()[:40])  # truncated
    with pytest.warns(DamagedResultWarning, match=f"{rec}: cannot be read as JSON"):
        assert _table_store(tmp_path).get("sw", {"a": 1}) is None
    with pytest.raises(AttnbookError, match=f"stored result {rec}: cannot be read"):
        _table_store(tmp_path, readonly=True).get("sw", {"a": 1})
    damaged = [r for r in stored_results(tmp_path) if r["problem"]]
    assert [r["path"] for r in damaged] == [rec]


# 9. exploratory and failed runs leave the committed results and figures alone ---------------
STORES = """import pandas as pd
import matplotlib.pyplot as plt
import attnbook as ab
run = ab.start("f_stores", profile=profile, seed=seed)
df = run.cached("t", {"k": k}, lambda: pd.DataFrame({"x": [k]}))
fig, ax = plt.subplots()
ax.plot([0, k])
run.savefig(fig, "f_fig")
if k == 5:
    raise RuntimeError("fails after saving its figure")
"""


def test_9_exploratory_and_failed_runs_keep_out_of_results_and_figures(cli_sandbox):
    nbs, build = cli_sandbox / "notebooks", cli_sandbox / "build"
    _notebook(nbs / "f_stores.ipynb", STORES)
    committed, figures = cli_sandbox / "data" / "results" / "f_stores" / "ci", \
        cli_sandbox / "figures"
    (ok,) = execute(plan(["f_stores"], "ci", notebooks_dir=nbs), build_dir=build,
                    log=lambda *_: None)
    assert ok["status"] == "ok", ok["error"]
    before = {p: p.read_bytes() for p in [*committed.iterdir(), *figures.iterdir()]}
    assert len([p for p in before if p.suffix == ".csv"]) == 1
    assert {p.name for p in figures.iterdir()} == {"f_fig.png", "f_fig.pdf"}
    (job,) = plan(["f_stores"], "ci", [("k", "3")], notebooks_dir=nbs)
    (explored,) = execute([job], build_dir=build, log=lambda *_: None)
    assert explored["status"] == "ok", explored["error"]
    where = job.explore_dir(build)
    assert explored["explore_dir"] == str(where)
    assert len(list((where / "results" / "f_stores" / "ci").glob("*.csv"))) == 1
    assert {p.name for p in (where / "figures").iterdir()} == {"f_fig.png", "f_fig.pdf"}
    assert (where / "f_stores.ipynb").exists()  # its executed copy too, out of the book
    (failed,) = execute(plan(["f_stores"], "ci", [("k", "5")], notebooks_dir=nbs),
                        build_dir=build, log=lambda *_: None)
    assert failed["status"] == "failed"
    after = {p: p.read_bytes() for p in [*committed.iterdir(), *figures.iterdir()]}
    assert after == before  # nothing new, nothing changed
    assert (build / "executed" / "f_stores.ipynb").exists()  # the profile run's copy stays
    assert not list((build / "tmp").iterdir())


# 10. results are tied to the code they ran on ------------------------------------------------
def test_10_records_carry_hash_fingerprint_and_commit(tmp_path):
    store = ResultStore("nb", "cpu", root=tmp_path, provenance={"commit": "abc", "dirty": True,
                                                                "diff_sha256": "f00"})
    import attnbook.engines.polynomial  # noqa: F401 - a science module the "computation" imported

    store.put("sw", {"a": 1}, {"y": 2})
    (rec,) = tmp_path.rglob("*.json")
    record = json.loads(rec.read_text())
    assert {"sha256", "fingerprint", "commit", "dirty", "diff_sha256"} <= set(record)
    assert "attnbook.engines.polynomial" in record["fingerprint"]
    assert not any(m.startswith("attnbook.book") for m in record["fingerprint"])
    assert len(record["fingerprint"]["attnbook.engines.polynomial"]) == 12


def test_10_a_result_whose_code_changed_is_stale_and_recomputed(tmp_path):
    store = ResultStore("nb", "cpu", root=tmp_path)
    import attnbook.engines.polynomial  # noqa: F401

    store.put("sw", {"a": 1}, {"y": 2})
    store.cached("t", {"v": 1}, lambda: pd.DataFrame({"x": [1]}))
    assert ResultStore("nb", "cpu", root=tmp_path).missing("sw", [{"a": 1}]) == []
    assert not [r for r in stored_results(tmp_path) if r["changed"] or r["problem"]]
    for rec in tmp_path.rglob("*.json"):  # as if attnbook.engines.polynomial had changed since
        record = json.loads(rec.read_text())
        record["fingerprint"]["attnbook.engines.polynomial"] = "000000000000"
        write_record(rec, record)
    fresh = ResultStore("nb", "cpu", root=tmp_path)
    assert fresh.missing("sw", [{"a": 1}]) == [{"a": 1}]
    calls = []
    fresh.cached("t", {"v": 1}, lambda: calls.append(1) or pd.DataFrame({"x": [1]}))
    assert calls == [1]
    assert all(v == ["attnbook.engines.polynomial"] for v in fresh.stale.values())
    stale = [r for r in stored_results(tmp_path) if r["changed"]]
    assert [r["changed"] for r in stale] == [["attnbook.engines.polynomial"]]  # the sweep record


def test_10_a_library_unit_records_only_the_code_it_can_run(tmp_path):
    """A sweep unit computed by a library function is fingerprinted by that function's
    module and what it imports, so a change to analysis code loaded beside it (here the
    crossing estimator) leaves it current; a notebook's own function records every module."""
    from functools import partial

    import attnbook.engines.depth_efficiency  # noqa: F401 - loaded, as in a chapter, but not run
    from attnbook.book.notebook import Sweep
    from attnbook.book.provenance import function_modules, module_closure
    from attnbook.engines.linalg import numerical_rank

    def unit(c):  # the notebook's own function
        return {"r": c["n"]}

    lib_fn = partial(numerical_rank)  # a library function, through a partial
    assert function_modules(lib_fn) == module_closure("attnbook.engines.linalg")
    assert "attnbook.engines.depth_efficiency" not in function_modules(lib_fn)
    assert function_modules(unit) is None
    def lib_unit(c):
        return {"r": c["n"]}

    lib_unit.__module__ = "attnbook.engines.linalg"  # as if the library defined it
    store = ResultStore("nb", "cpu", root=tmp_path)
    Sweep(store, "own").run(unit, [{"n": 2}], progress=False)
    Sweep(store, "lib").run(partial(lib_unit), [{"n": 3}], progress=False)
    own = json.loads(next((tmp_path / "nb" / "cpu" / "own").glob("*.json")).read_text())
    lib = json.loads(next((tmp_path / "nb" / "cpu" / "lib").glob("*.json")).read_text())
    assert "attnbook.engines.depth_efficiency" in own["fingerprint"]
    assert set(lib["fingerprint"]) == set(module_closure("attnbook.engines.linalg"))
    for rec in tmp_path.rglob("*.json"):  # as if the crossing estimator had changed since
        record = json.loads(rec.read_text())
        if "attnbook.engines.depth_efficiency" in record["fingerprint"]:
            record["fingerprint"]["attnbook.engines.depth_efficiency"] = "000000000000"
        write_record(rec, record)
    fresh = ResultStore("nb", "cpu", root=tmp_path)
    assert fresh.missing("lib", [{"n": 3}]) == []
    assert fresh.missing("own", [{"n": 2}]) == [{"n": 2}]


def test_10_module_closure_reads_imports_from_source():
    from attnbook.book.provenance import module_closure

    closure = module_closure("attnbook.engines.lm_sweep")
    assert {"attnbook.engines.lm", "attnbook.engines.training", "attnbook.engines.schedules",
            "attnbook.data.corpus", "attnbook.data"} <= set(closure)  # data: an import inside
    assert "attnbook.engines.depth_sweep" not in closure
    assert "attnbook.engines.depth_efficiency" not in closure
    assert all(not m.startswith("attnbook.book") for m in closure)
    assert "attnbook.mahdavi2024" in module_closure("attnbook.mahdavi2024.trained")


def test_10_results_without_a_fingerprint_are_stale(tmp_path):
    rec = tmp_path / "nb" / "cpu" / "sw" / "x.json"
    rec.parent.mkdir(parents=True)
    write_record(rec, {"config": {"a": 1}, "result": {"y": 2}, "commit": "abc+dirty"})
    (r,) = stored_results(tmp_path)
    assert r["changed"] and "no code fingerprint" in r["changed"][0] and not r["problem"]


@pytest.mark.parametrize("kind", ["sweep", "table"])
def test_8_a_result_without_its_hash_is_damaged_named_and_never_served(tmp_path, kind):
    """A record whose sha256 was deleted (and its number edited) is no legacy result: it is
    damaged, named, recomputed, and under --cache-only an error naming it."""
    from attnbook.book.store import CacheMiss

    store = _table_store(tmp_path)
    if kind == "sweep":
        store.put("sw", {"a": 1}, {"acc": 0.25})
        (rec,) = tmp_path.rglob("*.json")
    else:
        store.cached("t", {"v": 1}, lambda: pd.DataFrame({"acc": [0.25]}))
        (rec,) = tmp_path.rglob("t-*.json")
        rec.with_suffix(".csv").write_text("acc\n0.99\n")  # "reproduced", by hand
    record = json.loads(rec.read_text())
    if kind == "sweep":
        record["result"]["acc"] = 0.99
    del record["sha256"]
    rec.write_text(json.dumps(record))
    (r,) = [r for r in stored_results(tmp_path) if r["path"] == rec]
    assert r["problem"] == f"{rec}: has no sha256 (damaged or edited: a result without its " \
        "hash is never used)"

    def ask(s):
        if kind == "sweep":
            return s.get("sw", {"a": 1})
        return s.cached("t", {"v": 1}, lambda: pd.DataFrame({"acc": [0.25]}))["acc"].iloc[0]

    with pytest.raises(CacheMiss, match=f"{rec}: has no sha256"):
        ask(ResultStore("nb", "cpu", root=tmp_path, cache_only=True))
    with pytest.raises(AttnbookError, match=f"{rec}: has no sha256"):
        ask(ResultStore("nb", "cpu", root=tmp_path, readonly=True))
    with pytest.warns(DamagedResultWarning, match=f"{rec}: has no sha256"):
        got = ask(_table_store(tmp_path))
    assert got is None if kind == "sweep" else got == 0.25  # never served: recomputed


def test_8_a_record_whose_fingerprint_or_provenance_was_edited_fails_its_hash(tmp_path):
    """The hash covers the whole record: emptying a stale result's fingerprint, or editing its
    commit, dirty state, device, time or wall time, makes it damaged, not current."""
    from attnbook.book.store import check_record

    store = ResultStore("nb", "cpu", root=tmp_path,
                        provenance={"commit": "abc", "dirty": True, "diff_sha256": "f00",
                                    "device": "cpu", "time": "2000-01-01"})
    import attnbook.engines.polynomial  # noqa: F401

    store.put("sw", {"a": 1}, {"y": 2})
    store.cached("t", {"v": 1}, lambda: pd.DataFrame({"x": [1]}))
    for rec in sorted(tmp_path.rglob("*.json")):
        record = json.loads(rec.read_text())
        assert record["hash_version"] == 2 and check_record(rec)[1] is None
        record["fingerprint"]["attnbook.engines.polynomial"] = "000000000000"  # changed since
        write_record(rec, record)
        assert check_record(rec)[2] == ["attnbook.engines.polynomial"]  # stale
        stale = rec.read_text()
        for key, value in [("fingerprint", {}), ("commit", "def"), ("dirty", False),
                           ("diff_sha256", None), ("device", "cuda"), ("time", "2100-01-01"),
                           ("wall_s", 123.0), ("hash_version", 1), ("params", {"v": 2}),
                           ("migrated", {"seed": 1})]:
            edited = {**json.loads(stale), key: value}
            rec.write_text(json.dumps(edited))
            record, problem, changed = check_record(rec)
            assert record is None and "does not match its recorded sha256" in problem \
                or key == "hash_version" and "earlier format" in problem, (key, problem)
        rec.write_text(stale)
    fresh = ResultStore("nb", "cpu", root=tmp_path)
    assert fresh.missing("sw", [{"a": 1}]) == [{"a": 1}]  # stale, as stored


def test_10_status_and_execution_pages_mark_stale_and_dirty_entries(sandbox, tmp_path):
    from attnbook.book import claims
    from attnbook.book.report import execution_markdown, status_markdown

    cdir = sandbox / "data" / "claims"
    run = {"run_id": "r1", "commit": "abc", "dirty": True, "diff_sha256": "d1ff",
           "device": "cpu", "time": "t", "fingerprint": {"attnbook.engines.polynomial": "0" * 12},
           "computed_by": []}
    claims.record("L-Lem1", True, "ok", profile="cpu", notebook="levine2020_lemma1", run=run,
                  claims_dir=cdir)
    table = claims.status_table(claims_dir=cdir)
    row = table[(table["id"] == "L-Lem1") & (table["profile"] == "cpu")].iloc[0]
    assert row["stale"] == "attnbook.engines.polynomial" and row["dirty"] == "dirty (diff d1ff)"
    page = status_markdown(table, tmp_path)
    assert "{verdict}`stale`" in page and "changed since: attnbook.engines.polynomial" in page
    assert "dirty (diff d1ff)" in page
    manifest = tmp_path / "manifest.jsonl"
    manifest.write_text(json.dumps({"notebook": "levine2020_lemma1", "profile": "cpu",
                                    "status": "ok", "wall_s": 1, "device": "cpu",
                                    "commit": "abc", "dirty": True, "diff_sha256": "d1ff",
                                    "start": "s", "overrides": {}}) + "\n")
    page = execution_markdown(manifest, table)
    assert "results **stale** (changed: attnbook.engines.polynomial)" in page
    assert "abc dirty (diff d1ff)" in page


def test_10_stale_command_lists_stale_results(cli_sandbox, capsys):
    rec = cli_sandbox / "data" / "results" / "nb" / "cpu" / "sw" / "x.json"
    rec.parent.mkdir(parents=True)
    write_record(rec, {"config": {"a": 1}, "result": {"y": 2}})
    (rec.parent / "y.json").write_text(json.dumps({"config": {"a": 2}, "result": {"y": 3}}))
    assert main(["stale", "--profile", "cpu"]) == 0
    out = capsys.readouterr()
    assert "nb\tcpu\tdata/results/nb/cpu/sw/x.json\tstale (changed: (no code fingerprint" \
        in out.out
    assert "nb\tcpu\tdata/results/nb/cpu/sw/y.json\t" in out.out  # no hash: damaged, named
    assert "sw/y.json: has no sha256" in out.out
    assert "ledger" not in out.out  # the sandbox ledger has no entries
    assert main(["stale", "--profile", "ci"]) == 0
    assert "nb\tcpu" not in capsys.readouterr().out
    assert main(["stale", "--profile", "laptop"]) == 2


def test_10_provenance_records_dirty_state_with_the_diff_hash():
    from attnbook.book.provenance import git_state

    state = git_state()
    assert set(state) >= {"commit", "dirty"} and "+dirty" not in state["commit"]
    assert ("diff_sha256" in state) == state["dirty"]


# 11. Ctrl-C --------------------------------------------------------------------------------------
def test_11_sigint_is_one_line_exit_130_a_manifest_entry_and_no_scratch(sandbox):
    running = sandbox / "running"  # the cell touches it: the kernel is in the sleeping cell
    _notebook(sandbox / "notebooks" / "g_sleeps.ipynb",
              f"import pathlib, time\npathlib.Path({str(running)!r}).touch()\ntime.sleep(60)")
    env = {**os.environ, "ATTNBOOK_ROOT": str(sandbox),
           "PYTHONPATH": os.pathsep.join(sys.path)}
    # a shell that starts jobs in the background (as a CI runner may) makes them ignore
    # SIGINT, and a child inherits that: restore the default, as in a terminal
    proc = subprocess.Popen([sys.executable, "-m", "attnbook", "run", "g_sleeps",
                             "--profile", "ci"], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    manifest, scratch = sandbox / "build" / "manifest.jsonl", sandbox / "build" / "tmp"
    deadline = time.time() + 120
    while time.time() < deadline and not running.exists():  # however slow a loaded machine
        time.sleep(0.2)
    assert running.exists() and list(scratch.glob("*.ipynb"))
    time.sleep(0.5)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    ours = [line for line in err.splitlines() if line.startswith("attnbook")]
    assert len(ours) == 1 and ours[0].startswith("attnbook: interrupted:"), err
    # the only word: nothing nbclient or asyncio log while the kernel goes down, before it
    # ("Kernel died while waiting for execute reply") or after it, at exit ("Task exception was
    # never retrieved ... DeadKernelError"), as in about half the tries before they were dropped
    assert err.strip().splitlines() == ours, err
    assert "KeyboardInterrupt" not in err
    (entry,) = [_strict(x) for x in manifest.read_text().splitlines()]
    assert entry["status"] == "interrupted" and entry["notebook"] == "g_sleeps"
    assert not list(scratch.iterdir())
    assert not (sandbox / "build" / "executed" / "g_sleeps.ipynb").exists()


def test_8_a_damaged_ledger_entry_or_manifest_line_is_named_not_a_traceback(cli_sandbox,
                                                                              capsys):
    from attnbook.book.report import execution_markdown

    entry = cli_sandbox / "data" / "claims" / "results" / "cpu" / "L-Lem1.json"
    entry.parent.mkdir(parents=True)
    entry.write_text('{"id": "L-Lem1", "status": "repro')
    # named for its own claim alone: the ledger is still printed, and stale lists the file
    assert main(["claims", "--profile", "cpu"]) == 0
    out, err = capsys.readouterr()
    assert "L-Lem1" in out and "1 has a damaged ledger entry" in err and "Traceback" not in err
    assert main(["stale", "--profile", "cpu"]) == 0
    assert "L-Lem1.json\tdamaged ledger entry: cannot be read" in capsys.readouterr().out
    manifest = cli_sandbox / "manifest.jsonl"
    good = {"notebook": "a_ok", "profile": "ci", "status": "ok", "wall_s": 1, "device": "cpu",
            "commit": "abc", "start": "s"}
    manifest.write_text(json.dumps(good) + "\n" + '{"notebook": "a_o')
    page = execution_markdown(manifest)
    assert "| a_ok | `ci` | ok |" in page and "1 unreadable lines of manifest.jsonl" in page


def test_params_lists_the_rules(capsys):
    assert main(["params", "levine2020_lemma1"]) == 0
    assert "rule: line_max_depth <= max_depth" in capsys.readouterr().out


def test_fingerprint_ignores_docstrings_and_comments_but_not_code(tmp_path):
    from attnbook.book.provenance import _hash_file

    def h(text, name):
        p = tmp_path / name
        p.write_text(text)
        st = p.stat()
        return _hash_file(p, st.st_mtime_ns, st.st_size)

    base = h('"""Doc."""\n\ndef f(x):\n    """Twice."""\n    return 2 * x\n', "a.py")
    assert h('"""Other doc.\n\nUsed by: a chapter."""\n\n\ndef f(x):  # comment\n'
             '    return 2 * x\n', "b.py") == base
    assert h('"""Doc."""\n\ndef f(x):\n    """Twice."""\n    return 3 * x\n', "c.py") != base


def test_fingerprint_is_the_same_on_every_python():
    """A module's hash must not depend on the Python that computes it: results computed on
    a GPU machine's Python 3.12 once carried other hashes than the same code's here, because
    3.12's ``ast.dump`` writes ``type_params=[]`` into every function and class."""
    import ast
    import sys
    from pathlib import Path

    from attnbook.book import provenance

    source = ('def f(x, *, y=None):\n    """Doc."""\n    return f"{x!r:>{y}}"\n\n\n'
              'class C:\n    z: int = None\n')
    # sha256[:12] of Python 3.11's ast.dump of this tree without its docstring, pinned
    assert provenance.source_hash(source.encode()) == "9d1a77a9ede0"
    # a tree as 3.12 parses it (an empty type_params field on functions and classes) dumps
    # as the same text
    tree = ast.parse(source)
    later = {}
    for node in ast.walk(tree):
        for cls in (ast.FunctionDef, ast.ClassDef):
            if type(node) is cls:
                kind = later.setdefault(cls.__name__, type(cls.__name__, (ast.AST,), {
                    "_fields": cls._fields + ("type_params",)}))
                node.__class__ = kind
                node.type_params = []
    assert provenance._dump(tree) == provenance._dump(ast.parse(source))
    # None as a value is kept, an absent option is left out
    assert provenance.source_hash(b"x = None\n") != provenance.source_hash(b"x = 0\n")
    assert provenance.source_hash(b"def f():\n    return None\n") != \
        provenance.source_hash(b"def f():\n    return\n")
    if sys.version_info[:2] == (3, 11):  # the hashes every stored result carries
        root = Path(provenance.__file__).resolve().parents[1]
        for path in sorted(root.rglob("*.py")):
            tree = ast.parse(path.read_bytes())
            assert provenance._dump(tree) == ast.dump(tree), path


def test_10_results_written_by_a_run_do_not_make_it_dirty(tmp_path, monkeypatch):
    import subprocess

    from attnbook.book import provenance

    def git(*a):
        subprocess.run(["git", *a], cwd=tmp_path, check=True, capture_output=True)

    git("init", "-q")
    for rel in ("src/m.py", "data/results/r.json"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("1\n")
    git("add", "-A")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "c")
    monkeypatch.setattr(provenance, "ROOT", tmp_path)
    (tmp_path / "data/results/r.json").write_text("2\n")  # a stored result
    (tmp_path / "data/results/new.json").write_text("3\n")
    assert provenance.git_state()["dirty"] is False
    (tmp_path / "src/m.py").write_text("2\n")  # the code itself
    state = provenance.git_state()
    assert state["dirty"] is True and len(state["diff_sha256"]) == 16


def test_10_committed_sweep_units_list_only_the_code_they_can_run():
    """tools/narrow_fingerprints.py has nothing left to narrow: every committed unit of a
    sweep with a known library unit function is fingerprinted by that function's closure."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("narrow",
                                                  paths.ROOT / "tools/narrow_fingerprints.py")
    narrow = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(narrow)
    assert narrow.main(["--check"]) == 0


def _tool(name: str):
    import importlib.util

    spec = importlib.util.spec_from_file_location(name, paths.ROOT / f"tools/{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_10_committed_ledger_entries_hold_the_hash_of_what_decided_them():
    """tools/restamp_criteria.py has nothing left to re-stamp: every committed ledger entry
    holds the criterion hash that covers the helpers its criterion reads and, for a claim
    decided from trained models or random draws, the stability rule."""
    assert _tool("restamp_criteria").main(["--check"]) == 0


def test_10_committed_entries_and_results_name_commits_of_this_history():
    """Every commit a committed ledger entry or stored result names (the run that recorded
    it, the runs that computed it, a migration's) is in this repository's history: a run
    recorded at a local commit that was later amended or rebased names code nobody can check
    out. Skipped where the history is not all here (a shallow clone, no git)."""
    shallow = subprocess.run(["git", "rev-parse", "--is-shallow-repository"], cwd=paths.ROOT,
                             capture_output=True, text=True)
    if shallow.returncode or shallow.stdout.strip() != "false":
        pytest.skip("the repository's history is not all here")
    named: dict = {}

    def walk(value, where):
        if isinstance(value, dict):
            for k, v in value.items():
                if k in ("commit", "from_commit", "checked_at") and isinstance(v, str) and v:
                    named.setdefault(v, where)
                else:
                    walk(v, where)
        elif isinstance(value, list):
            for v in value:
                walk(v, where)

    for path in sorted([*(paths.CLAIMS / "results").rglob("*.json"),
                        *paths.COMMITTED_RESULTS.rglob("*.json")]):
        walk(json.loads(path.read_text()), path.relative_to(paths.ROOT))
    check = subprocess.run(["git", "cat-file", "--batch-check"], cwd=paths.ROOT, text=True,
                           input="".join(f"{c}^{{commit}}\n" for c in named),
                           capture_output=True, check=True)
    missing = [c for c, line in zip(named, check.stdout.splitlines(), strict=True)
               if line.endswith(" missing")]
    assert not missing, {c: str(named[c]) for c in missing}


def test_an_entry_is_restamped_only_where_its_commit_gives_the_hash_it_holds(tmp_path):
    """The re-stamp reads the row, the criteria package and the stability rule at the entry's
    commit: the entry's hash must be one that code gave the older way (the function alone, or
    with its helpers but without the rule; else it is left stale), and the hash it writes is
    today's of the same code, helper and rule included."""
    import hashlib

    from attnbook.book.claims import rule_code, sealed_criterion
    from attnbook.criteria import criterion_code

    restamp = _tool("restamp_criteria")
    crit = tmp_path / "src" / "attnbook" / "criteria"
    crit.mkdir(parents=True)
    (tmp_path / "data" / "claims").mkdir(parents=True)
    (tmp_path / "data" / "claims" / "w.csv").write_text("id,criterion,thresholds,evidence\n"
                                                        "X-1,at most a,a=1,trained models\n")
    rule_text = "MIN_SEEDS = 3\n"
    (tmp_path / "src" / "attnbook" / "book").mkdir(parents=True)
    (tmp_path / "src" / "attnbook" / "book" / "claims.py").write_text(rule_text)
    sources = {"__init__": "def guard(v):\n    return v == v\n",
               "w": "from . import guard\n@criterion('X-1')\ndef x(v, *, a):\n"
                    "    return guard(v) and v <= a\n"}
    for name, text in sources.items():
        (crit / f"{name}.py").write_text(text)
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"}
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "c"]):
        subprocess.run(["git", *args], cwd=tmp_path, check=True, env=env)
    commit = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], cwd=tmp_path,
                            check=True, capture_output=True, text=True).stdout.strip()

    def sha(*texts):
        return hashlib.sha256("\n".join(texts).encode()).hexdigest()[:12]

    code = criterion_code("X-1", sources)
    assert len(code) == 2  # the function and its guard
    narrow, wide = sha("at most a", "a=1", sha(code[0])), sha("at most a", "a=1", sha(*code))
    today = sealed_criterion("at most a", "a=1", sha(*code), rule_code(rule_text))
    assert len(rule_code(rule_text)) == 1 and len({narrow, wide, today}) == 3
    entry = {"id": "X-1", "criterion": narrow, "run": {"commit": commit, "dirty": False}}
    for older in (narrow, wide):
        new, why = restamp.restamped({**entry, "criterion": older}, {}, tmp_path)
        assert why == "" and new["criterion"] == today and new["sha256"]
    assert restamp.restamped(new, {}, tmp_path) == (None, "")  # once only
    forged = {**entry, "criterion": "0" * 12}
    assert restamp.restamped(forged, {}, tmp_path)[1].startswith("its criterion hash is not")
    dirty = {**entry, "run": {"commit": commit, "dirty": True}}
    assert restamp.restamped(dirty, {}, tmp_path) == (None, "its run was not from a commit")
    lost = {**entry, "run": {"commit": "0" * 12}}
    assert "not in this history" in restamp.restamped(lost, {}, tmp_path)[1]
