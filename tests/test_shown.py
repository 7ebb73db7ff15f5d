"""The profile a chapter of the built book shows: the largest whose results are complete."""

import json

import pandas as pd
import pytest
from notebook_files import write_notebook

from attnbook.book import display, runner, shown
from attnbook.book.runner import UsageError


def _row(cid, profile, status="reproduced", stale="", damaged="", dirty=""):
    return {"id": cid, "profile": profile, "status": status, "stale": stale,
            "damaged": damaged, "dirty": dirty}


@pytest.fixture
def chapter(tmp_path):
    return write_notebook(tmp_path / "ch.ipynb", "profile = 'cpu'",
                          'run.record("M-T1", True, "x")\nrun.record("M-P2", True, "y")')


def test_complete_when_every_claim_has_a_current_verdict(chapter):
    table = pd.DataFrame([_row("M-T1", "long"), _row("M-P2", "long", "not testable"),
                          _row("M-P2", "full", "not run")])
    assert shown.completeness("ch", chapter, "long", table, []) == ""
    assert shown.completeness("ch", chapter, "full", table, []) == \
        "2 of 2 claims not run (M-P2, M-T1)"


@pytest.mark.parametrize("bad, why", [
    (dict(status="not run"), "1 of 2 claims not run (M-P2)"),
    (dict(stale="attnbook.engines.lm"), "1 of 2 ledger entries stale"),
    (dict(damaged="M-P2.json: sha256 mismatch"), "1 of 2 ledger entries damaged"),
    (dict(dirty="diff 1234"), "1 of 2 ledger entries recorded from uncommitted changes"),
])
def test_one_bad_entry_makes_the_profile_incomplete(chapter, bad, why):
    table = pd.DataFrame([_row("M-T1", "long"), _row("M-P2", "long", **bad)])
    assert shown.completeness("ch", chapter, "long", table, []).startswith(why)


def test_a_stale_entry_says_what_changed(chapter):
    why = "(the long profile's values: steps [4000] -> [4000, 24000])"
    table = pd.DataFrame([_row("M-T1", "long", stale=why), _row("M-P2", "long", stale=why)])
    assert shown.completeness("ch", chapter, "long", table, []) == (
        "2 of 2 ledger entries stale (code, criterion or profile values changed since) "
        f"(M-P2, M-T1: {why})")


def test_a_stale_or_damaged_stored_result_makes_it_incomplete(chapter):
    table = pd.DataFrame([_row("M-T1", "long"), _row("M-P2", "long")])
    stored = [{"notebook": "ch", "problem": None, "changed": []},
              {"notebook": "other", "problem": "bad json", "changed": []}]
    assert shown.completeness("ch", chapter, "long", table, stored) == ""
    stored.append({"notebook": "ch", "problem": None, "changed": ["attnbook.engines.lm"]})
    assert shown.completeness("ch", chapter, "long", table, stored) == \
        "1 stored results damaged or stale"


def test_a_chapter_without_claims_is_never_complete(tmp_path):
    nb = write_notebook(tmp_path / "ch.ipynb", "profile = 'cpu'", "x = 1")
    assert shown.completeness("ch", nb, "full", pd.DataFrame([_row("M-T1", "full")]), []) == \
        "the chapter records no claim"


class _Spec:
    def __init__(self, stem, path, profiles):
        self.stem, self.path, self.profiles = stem, path, profiles

    def has_profile(self, p):
        return p in self.profiles


def test_choose_takes_full_then_long_then_cpu(chapter, monkeypatch):
    table = pd.DataFrame([_row("M-T1", "long"), _row("M-P2", "long"),
                          _row("M-T1", "full"), _row("M-P2", "full", "not run")])
    monkeypatch.setattr(shown, "status_table", lambda: table)
    monkeypatch.setattr(shown, "stored_results", lambda profile: iter([]))
    got = shown.choose([_Spec("ch", chapter, ("ci", "cpu", "long", "full")),
                        _Spec("no_long", chapter, ("ci", "cpu", "full"))])
    assert got["ch"] == {"profile": "long", "skipped": {"full": "1 of 2 claims not run (M-P2)"},
                         "where": ""}
    assert got["no_long"] == {"profile": "cpu", "skipped": {
        "full": "1 of 2 claims not run (M-P2)", "long": "not defined for this chapter"},
        "where": ""}


def test_the_note_says_where_the_shown_results_ran_and_what_an_unrun_profile_costs(
        chapter, monkeypatch):
    """The profile shown names the machine its ledger entries were computed on (a `full` run
    on the CPU says CPU, not GPU); a larger profile none of whose claims ran gives its cost
    from the .yml: how long, where, measured or estimated."""
    cpu = "cpu: AMD EPYC (2 cores, 1 threads)"
    table = pd.DataFrame([{**_row("M-T1", "long"), "device": cpu},
                          {**_row("M-P2", "long"), "device": cpu},
                          {**_row("M-T1", "full", "not run"), "device": ""},
                          {**_row("M-P2", "full", "not run"), "device": ""}])
    monkeypatch.setattr(shown, "status_table", lambda: table)
    monkeypatch.setattr(shown, "stored_results", lambda profile: iter([]))
    spec = _Spec("ch", chapter, ("ci", "cpu", "long", "full"))
    spec.cost = {"full": {"where": "gpu", "minutes": 120, "measured": False}}
    got = shown.choose([spec])["ch"]
    assert got["profile"] == "long" and got["where"] == "CPU (AMD EPYC, 2 cores)"
    assert got["skipped"]["full"] == ("not run: about 2 hours on one GPU (estimated), no GPU "
                                      "used (2 of 2 claims not run (M-P2, M-T1))")
    note = display.banner(got)
    assert "`long` results, the largest profile with complete and current results; they were " \
           "computed on CPU (AMD EPYC, 2 cores)." in note
    assert "`full`: not run: about 2 hours on one GPU (estimated), no GPU used" in note
    # a full run on the CPU is said to be on the CPU
    table["status"] = "reproduced"
    table["device"] = cpu
    got = shown.choose([spec])["ch"]
    assert got["profile"] == "full" and got["where"] == "CPU (AMD EPYC, 2 cores)"
    assert "GPU" not in display.banner(got)
    spec.profiles = {"full": {"run_main": False, "pilot": True}}  # runs only its pilot
    table.loc[table["profile"] == "full", "status"] = "not run"
    assert shown.choose([spec])["ch"]["skipped"]["full"].startswith(
        "runs only its pilot (about 2 hours on one GPU (estimated), no GPU used), no sweep")
    spec.profiles = {"full": {"run_main": False}}  # no pilot of its own either: trains nothing
    assert shown.choose([spec])["ch"]["skipped"]["full"].startswith(
        "trains nothing (about 2 hours on one GPU (estimated), no GPU used), no sweep")
    spec.profiles = ("ci", "cpu", "long", "full")
    spec.cost = {}  # no cost entry: said so
    table.loc[table["profile"] == "full", "status"] = "not run"
    assert shown.choose([spec])["ch"]["skipped"]["full"].startswith(
        "not run: its .yml gives no cost")


def test_largest_refuses_changed_parameters():
    with pytest.raises(UsageError, match="-p seed: .*--profile largest picks a profile"):
        runner.plan(["levine2020_lemma1"], "largest", [("seed", "1")])


def test_a_chapter_shown_at_long_or_full_is_drawn_from_stored_results(monkeypatch):
    monkeypatch.setattr(runner, "choose", lambda specs: {
        s.stem: {"profile": "full" if s.stem == "levine2020_lemma1" else "cpu",
                 "skipped": {}} for s in specs})
    full, cpu = runner.plan(["levine2020_lemma1", "levine2020_separation_rank"], "largest")
    assert (full.profile, full.cache_only, full.parameters["profile"]) == ("full", True, "full")
    assert full.parameters == full.spec.parameters("full")
    assert (cpu.profile, cpu.cache_only) == ("cpu", False)
    assert cpu.shown == {"profile": "cpu", "skipped": {}}


def test_the_chapter_says_which_profile_it_shows(monkeypatch):
    import IPython.display

    from attnbook.book import notebook

    shown_ = {"profile": "long", "skipped": {"full": "2 of 2 claims not run (L-D, L-Tab2)"}}
    monkeypatch.setenv(notebook.ENV_SHOWN, json.dumps(shown_))
    displayed = []
    monkeypatch.setattr(IPython.display, "display", displayed.append)
    notebook._show_choice("long")
    (md,) = displayed
    out = md.data
    assert "shows its `long` results, the largest" in out and "`full`: 2 of 2 claims not run" in out
    with pytest.raises(Exception, match="ATTNBOOK_SHOWN"):
        notebook._show_choice("cpu")  # a run at another profile than the one chosen


def test_a_profile_whose_results_miss_what_its_parameters_ask_falls_back(sandbox, monkeypatch):
    """A .yml changed before its run (more seeds, say): the profile's ledger is complete but its
    stored results lack a table the notebook now asks for. The chapter is shown at the next
    profile, says why, and no failure is recorded; a failure at that profile is one."""
    from attnbook.book import profiles

    nbs = sandbox / "notebooks"
    write_notebook(nbs / "d_cached.ipynb", 'profile = "cpu"\nseed = 0',
                   "import attnbook as ab\nimport pandas as pd\n"
                   'run = ab.start("d_cached", profile=profile, seed=seed)\n'
                   'run.cached("t", {"seed": seed}, lambda: pd.DataFrame({"x": [seed]}))\n'
                   'run.record("L-Lem1", True, "x")')
    (nbs / "d_cached.yml").write_text("allowed:\n  seed: {min: 0, max: 9}\nprofiles:\n  ci: {}\n")
    spec = profiles.load_spec(nbs / "d_cached.ipynb")
    monkeypatch.setattr(shown, "status_table", lambda: pd.DataFrame([_row("L-Lem1", "full")]))
    monkeypatch.setattr(shown, "stored_results", lambda profile: iter([]))
    chosen = shown.choose([spec])["d_cached"]
    assert chosen["profile"] == "full"  # its one claim has a verdict there
    job = runner._shown_job(spec, chosen)
    build, said = sandbox / "build", []
    (entry,) = runner.execute([job], build_dir=build, log=said.append)
    assert (entry["profile"], entry["status"]) == ("cpu", "ok")  # long: none of its claims ran
    why = "its stored results lack table 't', which its parameters ask for"
    assert f"      full: {why}; shown at cpu instead" in said
    manifest = (build / "manifest.jsonl").read_text().splitlines()
    assert [json.loads(m)["profile"] for m in manifest] == ["cpu"]
    assert not list((build / "failed").iterdir())
    page = (build / "executed" / "d_cached.ipynb").read_text()
    assert f"`full`: {why}." in page and "shows its `cpu` results" in page
    # a chapter whose fallback misses too (everything drawn from the store) fails, once
    (entry,) = runner.execute([job], build_dir=build, log=said.append, cache_only=True)
    assert (entry["profile"], entry["status"]) == ("cpu", "ok")  # the cpu table is stored now
    (sandbox / "data" / "results" / "d_cached" / "cpu").rename(sandbox / "gone")
    (entry,) = runner.execute([job], build_dir=build, log=said.append, cache_only=True)
    assert (entry["profile"], entry["status"]) == ("cpu", "failed")
    assert entry["error"].startswith("CacheMiss: table 't'")
