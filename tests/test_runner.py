"""The runner: bad input is one line and exit code 2 with nothing run; failures are recorded."""

import json
from pathlib import Path

import pytest

from attnbook.book.cli import main
from attnbook.book.runner import UsageError, execute, exit_code, plan


def test_plan_applies_profile_then_overrides(sandbox):
    (job,) = plan(["a_ok"], "ci", notebooks_dir=sandbox / "notebooks")
    assert job.parameters == {"k": 1, "profile": "ci"}
    (job,) = plan(["a_ok"], "ci", [("k", "4")], notebooks_dir=sandbox / "notebooks")
    assert job.parameters == {"k": 4, "profile": "ci"}
    (job,) = plan(["a_ok"], "cpu", notebooks_dir=sandbox / "notebooks")
    assert job.parameters == {"profile": "cpu"}  # cpu = the parameters cell itself


@pytest.mark.parametrize("names, profile, overrides, message", [
    (["nope"], "ci", [], "unknown notebook 'nope': available a_ok, b_fails, c_checks_k"),
    (["a_ok"], "gpu", [], "unknown profile 'gpu': allowed ci, cpu, long, full"),
    (["a_ok"], "ci", [("m", "1")], "parameter m = '1' is not a parameter of a_ok: allowed seed, k"),
    (["a_ok"], "ci", [("k", "two")], "parameter k = 'two' has the wrong type: allowed a value of "
                                     "type int"),
    (["a_ok"], "ci", [("k", "9")], "parameter k = 9 is out of range: allowed 1 <= k <= 5"),
    (["a_ok"], "ci", [("profile", "full")], "parameter profile = 'full' cannot be set directly"),
])
def test_bad_input_is_one_clear_line(sandbox, names, profile, overrides, message):
    with pytest.raises(UsageError) as err:
        plan(names, profile, overrides, notebooks_dir=sandbox / "notebooks")
    assert message in str(err.value)
    assert "\n" not in str(err.value)


def test_cli_bad_input_exits_2_and_writes_nothing(sandbox, capsys, monkeypatch):
    import attnbook.paths as paths

    monkeypatch.setattr(paths, "NOTEBOOKS", sandbox / "notebooks")
    monkeypatch.setattr(paths, "BUILD", sandbox / "build")
    assert main(["run", "a_ok", "--profile", "ci", "-p", "k", "99"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == "attnbook: error: a_ok: parameter k = 99 is out of range: allowed 1 <= k <= 5"
    assert not (sandbox / "build").exists()
    assert main(["run", "--profile", "laptop"]) == 2
    assert main(["claims", "--profile", "laptop"]) == 2


def test_failing_notebook_is_recorded_and_the_others_still_run(sandbox):
    build = sandbox / "build"
    jobs = plan(["b_fails", "a_ok"], "ci", notebooks_dir=sandbox / "notebooks")
    entries = execute(jobs, build_dir=build, log=lambda *_: None)
    assert [e["status"] for e in entries] == ["failed", "ok"]
    assert "RuntimeError: this notebook fails on purpose" in entries[0]["error"]
    assert exit_code(entries) == 1
    assert (build / "executed" / "a_ok.ipynb").exists()
    assert not (build / "executed" / "b_fails.ipynb").exists()
    assert (build / "failed" / "b_fails.ipynb").exists()
    manifest = [json.loads(x) for x in (build / "manifest.jsonl").read_text().splitlines()]
    assert [m["notebook"] for m in manifest] == ["b_fails", "a_ok"]
    for m in manifest:
        assert {"profile", "parameters", "commit", "device", "versions", "start", "wall_s",
                "status"} <= set(m)
    # the ok notebook recorded its claim in the sandbox ledger, with the run that made it
    rec = json.loads((sandbox / "data/claims/results/ci/L-Lem1.json").read_text())
    assert rec["status"] == "not reproduced" and rec["measured"] == "k = 1"  # ci sets k = 1
    assert rec["run"]["run_id"] == manifest[1]["run_id"]


def test_notebook_rejecting_its_parameters_exits_2(sandbox):
    jobs = plan(["c_checks_k"], "ci", [("k", "7")], notebooks_dir=sandbox / "notebooks")
    entries = execute(jobs, build_dir=sandbox / "build", log=lambda *_: None)
    assert entries[0]["status"] == "bad parameters"
    assert entries[0]["error"] == ("ParameterError: parameter k = 7 is out of range: "
                                   "allowed k < 3 (needed by this notebook)")
    assert exit_code(entries) == 2


def test_changed_parameters_run_but_leave_the_ledger_alone(sandbox):
    """A ledger entry means the profile as defined: a run with -p changes prints its verdict,
    records the changes in the manifest, and writes nothing to the ledger."""
    build, ledger = sandbox / "build", sandbox / "data/claims/results/ci/L-Lem1.json"
    (same,) = plan(["a_ok"], "ci", [("k", "1")], notebooks_dir=sandbox / "notebooks")
    assert same.overrides == {}  # ci already sets k = 1: nothing changed
    (job,) = plan(["a_ok"], "ci", [("k", "2")], notebooks_dir=sandbox / "notebooks")
    assert job.overrides == {"k": 2}
    (entry,) = execute([job], build_dir=build, log=lambda *_: None)
    assert entry["status"] == "ok" and entry["overrides"] == {"k": 2}
    assert not ledger.exists()
    assert not (build / "executed" / "a_ok.ipynb").exists()  # the book's copy: profiles only
    text = (job.explore_dir(build) / "a_ok.ipynb").read_text()
    assert "L-Lem1 [ci] reproduced: k = 2" in text  # k == 2: the verdict is computed and shown
    assert "not recorded in the ledger: parameters changed from profile ci: k=2" in text
    (entry,) = execute([same], build_dir=build, log=lambda *_: None)
    assert entry["overrides"] == {} and json.loads(ledger.read_text())["measured"] == "k = 1"


def test_bad_overrides_variable_is_one_clear_error(monkeypatch):
    from attnbook.book.notebook import ENV_OVERRIDES, start
    from attnbook.errors import ParameterError

    monkeypatch.setenv(ENV_OVERRIDES, "[1, 2]")
    with pytest.raises(ParameterError, match="ATTNBOOK_OVERRIDES .* a JSON object"):
        start("x", profile="ci")


def test_printed_warnings_are_listed_in_log_and_manifest(sandbox):
    """The book hides stderr (progress bars); warnings reach the runner's log and manifest."""
    from notebook_files import write_notebook

    write_notebook(
        sandbox / "notebooks" / "d_warns.ipynb", 'profile = "cpu"  # set by the runner',
        "import sys, warnings\n"
        "warnings.simplefilter('always')\n"
        "sys.stderr.write('steps: 100%|##########| 10/10\\n')  # a progress bar: not a warning\n"
        "def f():\n"
        "    warnings.warn('careful', UserWarning)\n"
        "f()\n"
        "warnings.warn('old', DeprecationWarning)",
        "f()  # printed again, from the same place: listed once")
    lines = []
    jobs = plan(["d_warns", "a_ok"], "ci", notebooks_dir=sandbox / "notebooks")
    entries = execute(jobs, build_dir=sandbox / "build", log=lines.append)
    assert [e["status"] for e in entries] == ["ok", "ok"], entries[0]["error"]
    warned = entries[0]["warnings"]
    # where: the cell of the notebook (not ipykernel's hash-named file) and its line
    assert warned == ["UserWarning: careful (cell 2, line 5)",
                      "DeprecationWarning: old (cell 2, line 7)"]
    assert entries[1]["warnings"] == []
    assert sum("warning: UserWarning: careful" in x for x in lines) == 1


def test_full_profile_without_gpu_says_so_first(sandbox, capsys, monkeypatch):
    import attnbook.book.cli as cli
    import attnbook.paths as paths

    monkeypatch.setattr(paths, "NOTEBOOKS", sandbox / "notebooks")
    monkeypatch.setattr(paths, "BUILD", sandbox / "build")
    monkeypatch.setattr(cli, "_device", lambda: "cpu")
    assert main(["run", "a_ok", "--profile", "full"]) == 0
    assert "note: profile full is sized for one GPU" in capsys.readouterr().err
    assert main(["run", "a_ok", "--profile", "ci"]) == 0
    assert "sized for one GPU" not in capsys.readouterr().err
    monkeypatch.setattr(cli, "_device", lambda: "cuda")
    assert main(["run", "a_ok", "--profile", "full"]) == 0
    assert "sized for one GPU" not in capsys.readouterr().err


def test_full_profile_meant_for_the_cpu_runs_without_the_gpu_note(sandbox, capsys, monkeypatch):
    import attnbook.book.cli as cli
    import attnbook.paths as paths

    monkeypatch.setattr(paths, "NOTEBOOKS", sandbox / "notebooks")
    monkeypatch.setattr(paths, "BUILD", sandbox / "build")
    monkeypatch.setattr(cli, "_device", lambda: "cpu")
    yml = sandbox / "notebooks" / "a_ok.yml"
    yml.write_text(yml.read_text() + "cost:\n  full: {where: cpu, minutes: 1}\n")
    assert main(["run", "a_ok", "--profile", "full"]) == 0
    assert "sized for one GPU" not in capsys.readouterr().err
    assert main(["run", "a_ok", "c_checks_k", "--profile", "full"]) == 0
    note = [x for x in capsys.readouterr().err.splitlines() if "sized for one GPU" in x]
    assert len(note) == 1 and "at c_checks_k, and" in note[0]  # only the chapter without one


def test_kernels_run_on_local_sockets_not_tcp(sandbox, capfd):
    jobs = plan(["a_ok"], "ci", notebooks_dir=sandbox / "notebooks")
    (entry,) = execute(jobs, build_dir=sandbox / "build", log=lambda *_: None)
    assert entry["status"] == "ok"
    assert "TCP without encryption" not in capfd.readouterr().err  # ipykernel warns on TCP
    assert not list((sandbox / "notebooks").glob("kernel-*"))  # no sockets beside notebooks


def test_a_path_must_resolve_to_a_notebook_of_the_book(sandbox, monkeypatch, tmp_path):
    """A stem, or a path to the book's own notebook; a path is never cut down to its stem."""
    nbs = sandbox / "notebooks"
    monkeypatch.chdir(sandbox)
    for good in ("a_ok", "a_ok.ipynb", "notebooks/a_ok.ipynb", "notebooks/a_ok",
                 str(nbs / "a_ok.ipynb"), "./notebooks/../notebooks/a_ok.ipynb"):
        assert [j.spec.stem for j in plan([good], "ci", notebooks_dir=nbs)] == ["a_ok"], good
    copy = tmp_path / "elsewhere" / "a_ok.ipynb"
    copy.parent.mkdir()
    copy.write_bytes((nbs / "a_ok.ipynb").read_bytes())
    for bad, why in (("/nonexistent/a_ok.ipynb", "no such file"), ("../a_ok", "no such file"),
                     (str(copy), "is not a notebook of the book")):
        with pytest.raises(UsageError, match=why) as err:
            plan([bad], "ci", notebooks_dir=nbs)
        assert "\n" not in str(err.value) and "available a_ok" in str(err.value)


def test_a_long_name_is_shown_cut_in_the_error(sandbox):
    with pytest.raises(UsageError) as err:
        plan(["x" * 20000], "ci", notebooks_dir=sandbox / "notebooks")
    assert len(str(err.value)) < 300 and "(20000 characters)" in str(err.value)


def test_a_path_parameter_is_checked_before_any_kernel_starts(tmp_path, monkeypatch):
    """mahdavi2024_real_models -p image_folder: a folder that does not exist (or holds no
    images) is a one-line error before the kernel, exit 2; a multi-line value shows its first
    line; a relative folder reaches the kernel (which runs in notebooks/) absolute."""
    stem = "mahdavi2024_real_models"
    for value, why in (("/nonexistent", "does not exist"), (str(tmp_path), "holds no .png"),
                       ("/nonexistent\nsecond line", "does not exist")):
        with pytest.raises(UsageError) as err:
            plan([stem], "ci", [("image_folder", value)])
        message = str(err.value)
        assert "\n" not in message and why in message and "second line" not in message
        assert f"parameter image_folder = '{value.splitlines()[0][:40]}" in message
    (tmp_path / "photos").mkdir()
    (tmp_path / "photos" / "a.png").write_bytes(b"")
    monkeypatch.chdir(tmp_path)
    (job,) = plan([stem], "ci", [("image_folder", "photos")])
    assert job.parameters["image_folder"] == str(tmp_path / "photos")


def test_a_failure_message_of_several_lines_keeps_its_first_line():
    from attnbook.book.runner import _error_summary

    name, text = _error_summary(ValueError("image folder /nonexistent\nsecond does not exist"))
    assert name == "ValueError" and text.startswith("image folder /nonexistent\\nsecond")
    assert "\n" not in text and len(_error_summary(ValueError("x" * 9000))[1]) < 600


def test_negative_values_small_budgets_and_bad_environment_are_one_line(sandbox, capsys,
                                                                         monkeypatch):
    """-p k -3 and -p k -inf reach the parameter check (argparse read them as options);
    --time-budget below a second can never fit a unit; ATTNBOOK_THREADS is checked before
    any kernel starts; nothing is written."""
    import attnbook.paths as paths

    monkeypatch.setattr(paths, "NOTEBOOKS", sandbox / "notebooks")
    monkeypatch.setattr(paths, "BUILD", sandbox / "build")
    for argv, message in (
            (["-p", "k", "-3"], "parameter k = -3 is out of range: allowed 1 <= k <= 5"),
            (["-p", "k", "-inf"], "parameter k = '-inf' has the wrong type"),
            (["--time-budget", "1e-9"], "--time-budget '1e-9': allowed a number of seconds 1 <="),
            (["--time-budget", "-inf"], "--time-budget '-inf': allowed")):
        assert main(["run", "a_ok", "--profile", "ci", *argv]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and message in err, err
    monkeypatch.setenv("ATTNBOOK_THREADS", "abc")
    assert main(["run", "a_ok", "--profile", "ci"]) == 2
    assert "ATTNBOOK_THREADS = 'abc': allowed an integer" in capsys.readouterr().err
    assert not (sandbox / "build").exists()


def test_make_run_needs_a_notebook_and_an_empty_profile_means_every_one():
    import subprocess

    from attnbook import paths

    def make(*args, dry=False):
        return subprocess.run(["make", "-s", "-o", ".venv/.installed", *(["-n"] if dry else []),
                               *args], cwd=paths.ROOT, capture_output=True, text=True)

    r = make("run", "NB=")
    assert r.returncode == 2 and "NB=<stem> names the notebook to run" in r.stderr
    for target in ("stale", "claims"):
        line = make(target, "PROFILE=", dry=True).stdout.strip().splitlines()[-1]
        assert line.split()[-1] == target, line  # no --profile: every profile
    assert "--profile=ci" in make("stale", "PROFILE=ci", dry=True).stdout


@pytest.mark.parametrize("stop", ["ctrl-c twice", "sigterm"])
def test_a_stopped_run_prints_one_line_and_leaves_no_scratch(sandbox, stop):
    """Ctrl-C (SIGINT to the terminal's process group, twice 0.3 s apart) or SIGTERM while a
    cell runs: one line on stderr and no kernel traceback; build/tmp is empty and the manifest
    records the run as interrupted; exit code 130 (Ctrl-C) or 143 (SIGTERM)."""
    import os
    import signal
    import subprocess
    import sys
    import time

    from notebook_files import write_notebook

    running = sandbox / "running"  # the cell touches it: the kernel is in the sleeping cell
    write_notebook(sandbox / "notebooks" / "f_sleeps.ipynb", 'profile = "cpu"',
                   f"import pathlib, time\npathlib.Path({str(running)!r}).touch()\n"
                   "for _ in range(1200):\n    time.sleep(0.1)")
    proc = subprocess.Popen([sys.executable, "-m", "attnbook", "run", "f_sleeps", "--profile",
                             "ci"], cwd=sandbox, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True,
                            env={**os.environ, "ATTNBOOK_THREADS": "1"},
                            # a shell that starts jobs in the background (as a CI runner may)
                            # makes them ignore SIGINT, and a child inherits that: restore the
                            # default, as in a terminal (as the SIGINT test of test_integrity)
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    scratch = sandbox / "build" / "tmp"
    t0 = time.time()
    while not running.exists() and time.time() - t0 < 300:  # however slow a loaded machine
        time.sleep(0.2)
    assert list(scratch.glob("f_sleeps.*.ipynb"))
    time.sleep(0.5)
    if stop == "sigterm":
        proc.send_signal(signal.SIGTERM)
    else:
        os.killpg(proc.pid, signal.SIGINT)
        time.sleep(0.3)
        os.killpg(proc.pid, signal.SIGINT)
    _, err = proc.communicate(timeout=300)
    assert proc.returncode in ((143,) if stop == "sigterm" else (130, -signal.SIGINT)), err
    assert err.count("\n") == 1 and err.startswith("attnbook: ") and "Traceback" not in err, err
    assert ("terminated (SIGTERM)" if stop == "sigterm" else "interrupted:") in err
    assert not list(scratch.iterdir())
    (entry,) = [json.loads(x) for x in (sandbox / "build/manifest.jsonl").read_text().splitlines()]
    assert entry["status"] == "interrupted"


@pytest.mark.parametrize("name, value, message", [
    ("ATTNBOOK_READONLY", "1", "ATTNBOOK_READONLY = '1' writes nothing"),
    ("ATTNBOOK_MIGRATE", '{"sample": []}', "ATTNBOOK_MIGRATE = '{\"sample\": []}' is set by"),
    ("ATTNBOOK_THREADS", "\u00b2", "ATTNBOOK_THREADS = '\u00b2': allowed an integer"),
    ("ATTNBOOK_WORKERS", "1" * 5000, "ATTNBOOK_WORKERS = '1111"),
    ("ATTNBOOK_SOURCE", "[" * 100000, "ATTNBOOK_SOURCE = '[[[["),
    ("ATTNBOOK_ROOT", "/nonexistent/attnbook-root", "ATTNBOOK_ROOT = '/nonexistent/attnbook-root':"
                                                    " allowed an existing folder"),
])
def test_every_environment_variable_is_checked_before_any_kernel_starts(
        sandbox, capsys, monkeypatch, name, value, message):
    """A stray variable the book reads is one line and exit code 2, nothing written, before
    any kernel starts: ATTNBOOK_READONLY (set by make nbval for pytest alone) would make a run
    record nothing and report ok; a nonexistent ATTNBOOK_ROOT is not created."""
    import attnbook.paths as paths

    monkeypatch.setattr(paths, "NOTEBOOKS", sandbox / "notebooks")
    monkeypatch.setattr(paths, "BUILD", sandbox / "build")
    monkeypatch.setenv(name, value)
    before = sorted(sandbox.rglob("*"))
    assert main(["run", "a_ok", "--profile", "ci"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err and len(err) < 1200, err
    assert sorted(sandbox.rglob("*")) == before
    assert not (sandbox / "build").exists() and not Path("/nonexistent").exists()
    if name == "ATTNBOOK_ROOT":
        assert main(["report"]) == 2
        assert message in capsys.readouterr().err


def test_a_root_that_cannot_be_written_is_refused_by_run_and_report(sandbox, capsys,
                                                                     monkeypatch):
    import os

    import attnbook.paths as paths

    monkeypatch.setattr(paths, "NOTEBOOKS", sandbox / "notebooks")
    monkeypatch.setattr(paths, "BUILD", sandbox / "build")
    real = os.access
    monkeypatch.setattr(os, "access", lambda p, mode: False if Path(p) == sandbox
                        else real(p, mode))  # as a read-only folder is, to any user but root
    for argv in (["run", "a_ok", "--profile", "ci"], ["report"]):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "is not writable" in err, err
    assert not (sandbox / "build").exists() and not (sandbox / "status").exists()


def test_scratch_files_of_a_killed_run_are_removed_by_the_next(tmp_path):
    """A run killed with SIGKILL leaves its scratch files in build/tmp: the next run removes
    them, and leaves those of a run still alive (its .pid names a live process)."""
    import os
    import subprocess
    import sys

    from attnbook.book.runner import clean_scratch

    scratch = tmp_path / "build" / "tmp"
    scratch.mkdir(parents=True)
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True).stdout.strip()
    killed, old, alive = ("a_ok.20240101T000000-0123abcd", "b.20230101T000000-deadbeef",
                          "c.20240101T000000-00aa11bb")
    (scratch / f"{killed}.pid").write_text(dead)
    (scratch / f"{killed}.ipynb").write_text("{}")
    (scratch / f"{killed}.figures").mkdir()
    (scratch / f"{killed}.figures" / "f.png").write_bytes(b"png")
    (scratch / f"{old}.kernel.log").write_text("from before .pid files")
    (scratch / f"{alive}.pid").write_text(str(os.getpid()))
    (scratch / f"{alive}.work.jsonl").write_text("")
    (scratch / "notes.txt").write_text("not a run's")
    execute([], build_dir=tmp_path / "build")
    assert sorted(p.name for p in scratch.iterdir()) == [
        f"{alive}.pid", f"{alive}.work.jsonl", "notes.txt"]
    assert clean_scratch(scratch) == []


# checks the chapters once repeated in their kernels, now said by their .yml alone (a rule or a
# range): a value that breaks one is still one line naming the parameter, before any kernel
@pytest.mark.parametrize("stem, overrides, named", [
    ("mahdavi2024_fig2_heads_context", [("n", "16")], "n = 16, d = 8"),
    ("levine2020_depth_transition", [("depths", "[2, 2]")], "depths = [2, 2]"),
    ("wies2021_rank_bottleneck", [("converge_seeds", "9")], "converge_seeds = 9"),
    ("mahdavi2024_theory", [("p3_m_values", "[4096]")], "p3_m_values = [4096]"),
    ("mahdavi2024_real_models", [("patch_size", "2")], "patch_size = 2"),
    ("wies2021_depth_efficiency", [("n_seeds", "1")], "n_seeds = 1 is out of range"),
    ("bruna2024_furthest_neighbour", [("d", "12")], "d = 12"),
])
def test_a_check_the_yml_says_is_one_line_before_any_kernel(stem, overrides, named):
    with pytest.raises(UsageError) as err:
        plan([stem], "ci", overrides)
    assert named in str(err.value) and "\n" not in str(err.value), str(err.value)


def test_a_broken_rule_of_a_chapter_exits_2_and_writes_nothing(tmp_path, capsys, monkeypatch):
    import attnbook.paths as paths

    monkeypatch.setattr(paths, "BUILD", tmp_path / "build")
    assert main(["run", "mahdavi2024_fig2_heads_context", "--profile", "ci", "-p", "n",
                 "8"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "parameters n = 8, d = 8 break the rule n < d" in err, err
    assert not (tmp_path / "build").exists()


def test_a_chapter_run_by_hand_checks_its_parameters_as_the_runner_does():
    """In Jupyter no runner checks the parameters cell before the kernel starts: ab.start does,
    with the same ranges and rules, in one line naming the parameter (or the rule)."""
    import pytest

    from attnbook.book.notebook import check_interactive_parameters
    from attnbook.errors import ParameterError

    check_interactive_parameters("mahdavi2024_fig2_heads_context", "cpu", {"d": 16, "n": 8})
    with pytest.raises(ParameterError, match="n < d"):  # a rule of the .yml
        check_interactive_parameters("mahdavi2024_fig2_heads_context", "cpu",
                                     {"d": 16, "n": 20, "contexts": [2, 4]})
    with pytest.raises(ParameterError, match="max_depth"):  # a range of the .yml
        check_interactive_parameters("levine2020_lemma1", "cpu", {"max_depth": 99})
    check_interactive_parameters("no_such_chapter", "cpu", {"max_depth": 99})  # no .yml


def _determinism_flags(_unit=None):
    import torch

    return (torch.are_deterministic_algorithms_enabled(),
            torch.is_deterministic_algorithms_warn_only_enabled())


def test_seeding_asks_for_strict_deterministic_kernels():
    """Strict, not warn-only: under warn_only, CUDA attention's backward (flash, cuDNN) warns
    once and stays non-deterministic, so the same seed could give two results."""
    import torch

    from attnbook.book.notebook import seed_everything

    before = _determinism_flags()
    try:
        seed_everything(0)
        assert _determinism_flags() == (True, False)
    finally:
        torch.use_deterministic_algorithms(before[0], warn_only=before[1])


def test_worker_processes_compute_with_strict_deterministic_kernels():
    from attnbook.book.executors import ProcessExecutor

    def flags(_unit):  # sent by value, as a notebook's own function is
        import torch

        return (torch.are_deterministic_algorithms_enabled(),
                torch.is_deterministic_algorithms_warn_only_enabled())

    out = list(ProcessExecutor(workers=1, threads=1, progress=False).map(flags, [0]))
    assert out[0][1] == (True, False)
