"""Verified migration: stale stored results re-stamped only when a recomputed sample agrees."""

import json
import subprocess

import nbformat
import pytest

from attnbook import paths
from attnbook.book import provenance
from attnbook.book.checkpoints import BudgetExhausted
from attnbook.book.migrate import compare, compare_tables, migrate
from attnbook.book.store import (
    ENV_MIGRATE,
    CacheMiss,
    ResultStore,
    check_record,
    config_key,
    write_record,
)
from attnbook.errors import AttnbookError

NOTEBOOK = """
import pandas as pd
import attnbook as ab
run = ab.start("m_migrates", profile=profile, seed=seed)


def unit(c):
    return {"y": c["n"] * 0.1, "k": c["n"]}


res = run.sweep("s").run(unit, [{"n": i} for i in range(5)])
t = run.cached("t", {"m": 1}, lambda: pd.DataFrame({"x": [0.5, 1.0], "i": [1, 2]}))
run.record("L-Lem1", bool(res["k"].sum() == 10), f"sum {res['y'].sum():.3f}")
"""


def _git(root, *args):
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)


def _project(sandbox, monkeypatch, text=None):
    """The sandbox as a git checkout with one chapter whose 5 sweep units and one table are
    stored, then made stale (their fingerprint names an old version of a module)."""
    nb = nbformat.v4.new_notebook()
    params = nbformat.v4.new_code_cell('profile = "cpu"  # set by the runner\nseed = 0  # seed')
    params.metadata["tags"] = ["parameters"]
    nb.cells = [nbformat.v4.new_markdown_cell("# m"), params,
                nbformat.v4.new_code_cell(text or NOTEBOOK)]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    nb.metadata["language_info"] = {"name": "python"}
    nbformat.write(nb, sandbox / "notebooks" / "m_migrates.ipynb")
    (sandbox / "notebooks" / "m_migrates.yml").write_text("allowed:\n  seed: {min: 0, max: 9}\n")
    for name, value in (("ROOT", sandbox), ("NOTEBOOKS", sandbox / "notebooks"),
                        ("BUILD", sandbox / "build"), ("COMMITTED_RESULTS",
                                                       sandbox / "data/results"),
                        ("RESULTS", sandbox / "data/results"), ("CLAIMS", sandbox / "data/claims")):
        monkeypatch.setattr(paths, name, value)
    monkeypatch.setattr(provenance, "ROOT", sandbox)
    (sandbox / "src").mkdir()
    _git(sandbox, "init", "-q")
    _git(sandbox, "-c", "user.name=t", "-c", "user.email=t@t", "add", "-A")
    _git(sandbox, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "start")
    from attnbook.book.runner import execute, plan

    (entry,) = execute(plan(["m_migrates"], "cpu", []), log=lambda *_: None)
    assert entry["status"] == "ok", entry["error"]
    for f in (sandbox / "data/results/m_migrates/cpu").rglob("*.json"):
        record = json.loads(f.read_text())
        record["fingerprint"] = {**record["fingerprint"], "attnbook.engines.linalg": "0" * 16}
        write_record(f, record)  # as if stored by the code before the change
    return sandbox


@pytest.fixture
def project(sandbox, monkeypatch):
    return _project(sandbox, monkeypatch)


STACKED = """
import attnbook as ab
run = ab.start("m_migrates", profile=profile, seed=seed)


def pairs(todo):  # two models per stacked program, as a trainer stacks them
    return [todo[i:i + 2] for i in range(0, len(todo), 2)]


def train(chunk):  # each number depends on how many models share the program (as rounding does)
    return [{"y": c["n"] + 0.001 * len(chunk), "group_size": len(chunk)} for c in chunk]


res = run.sweep("s").run(train, [{"n": i} for i in range(10)], groups=pairs)
run.record("L-Lem1", bool(len(res) == 10), f"sum {res['y'].sum():.3f}")
"""


def test_a_stacked_model_is_recomputed_with_the_models_it_was_stacked_with(sandbox, monkeypatch):
    """Recomputed alone, a model of a stacked program would differ (here by design, in real
    trainings by rounding); with its program's other models it agrees exactly."""
    root = _project(sandbox, monkeypatch, STACKED)
    lines = []
    assert migrate("m_migrates", "cpu", seed=3, log=lines.append) == 0, "\n".join(lines)
    records = [json.loads(f.read_text()) for f in _results(root)]
    assert all(check_record(f)[2] == [] for f in _results(root))
    m = next(r["migrated"] for r in records if "migrated" in r)
    assert m["largest_difference"] == 0.0 and len(m["sampled"]) % 2 == 0  # whole programs
    assert all(r["result"]["group_size"] == 2 for r in records)


PARTWAY = """
import attnbook as ab
run = ab.start("m_migrates", profile=profile, seed=seed)
pilot = run.sweep("pilot").run(lambda c: {"y": c["n"] * 0.5}, [{"n": i} for i in range(8)])
long = run.sweep("long").run(lambda c: {"y": c["n"] * 0.25}, [{"n": i} for i in range(3)])
run.record("L-Lem1", bool(len(long) == 3), f"sum {long['y'].sum():.3f}")
"""


def test_a_chapter_stored_partway_migrates_what_it_stored(sandbox, monkeypatch):
    """A long chapter its time budget stopped after its pilot (the rest to come in another
    session): the pilot's stale results migrate, the pass ends where the stored results end,
    nothing beyond them is computed, and the next run resumes from the migrated pilot."""
    root = _project(sandbox, monkeypatch, PARTWAY)
    out = root / "data/results/m_migrates/cpu"
    for f in (out / "long").glob("*.json"):
        f.unlink()  # as if the time budget stopped the run before the long sweep
    (root / "data/claims/results/cpu/L-Lem1.json").unlink(missing_ok=True)
    lines = []
    assert migrate("m_migrates", "cpu", seed=5, log=lines.append) == 0, "\n".join(lines)
    text = "\n".join(lines)
    assert "end partway" in text and "not re-drawn" in text
    assert not list((out / "long").glob("*.json"))  # nothing beyond the sample computed
    pilot = sorted((out / "pilot").glob("*.json"))
    assert len(pilot) == 8 and all(check_record(f)[2] == [] for f in pilot)  # all current
    moved = [json.loads(f.read_text()).get("migrated") for f in pilot]
    assert sum(m is not None for m in moved) == 8 - len(next(m for m in moved if m)["sampled"])
    assert not (root / "data/claims/results/cpu/L-Lem1.json").exists()  # no verdict drawn
    from attnbook.book.runner import execute, plan

    (entry,) = execute(plan(["m_migrates"], "cpu", []), log=lambda *_: None)
    assert entry["status"] == "ok"  # the pilot served, not recomputed: only the long sweep
    assert entry["work"] == {"computed": 3, "total": 11}


def test_a_changed_number_refuses_in_a_chapter_stored_partway(sandbox, monkeypatch):
    root = _project(sandbox, monkeypatch, PARTWAY)
    out = root / "data/results/m_migrates/cpu"
    for f in (out / "long").glob("*.json"):
        f.unlink()
    for f in (out / "pilot").glob("*.json"):
        record = json.loads(f.read_text())
        record["result"]["y"] += 1.0
        write_record(f, record)
    lines = []
    assert migrate("m_migrates", "cpu", seed=5, log=lines.append) == 1
    assert "the sample disagrees" in "\n".join(lines)
    assert not any("migrated" in json.loads(f.read_text()) for f in (out / "pilot").glob("*"))


def _results(root):
    return sorted((root / "data/results/m_migrates/cpu").rglob("*.json"))


def test_code_that_keeps_every_number_migrates_with_exact_agreement(project):
    stale = ["attnbook.engines.linalg"]
    assert all(check_record(f)[2] == stale for f in _results(project))
    assert migrate("m_migrates", "cpu", seed=1, log=lambda *_: None) == 0
    records = [json.loads(f.read_text()) for f in _results(project)]
    assert all(check_record(f)[2] == [] for f in _results(project))  # all current now
    moved = [r["migrated"] for r in records if "migrated" in r]
    assert len(moved) == 6 - len(moved[0]["sampled"]) >= 1  # the rest re-stamped
    m = moved[0]
    assert m["seed"] == 1 and m["largest_difference"] == 0.0 and m["tolerance"]["rtol"] == 0
    assert m["from_fingerprint"]["attnbook.engines.linalg"] == "0" * 16
    assert "table t" not in " ".join(m["sampled"]) or len(m["sampled"]) >= 4
    ledger = json.loads((project / "data/claims/results/cpu/L-Lem1.json").read_text())
    assert ledger["status"] == "reproduced"  # re-recorded from the cache after the migration


def test_a_module_moved_to_another_package_migrates_with_exact_agreement(project):
    """A pure move: the stored fingerprints name the code where it was (a module that no
    longer exists), the current code gives every number again, so the chapter migrates and its
    records name the code where it is now."""
    for f in _results(project):
        record = json.loads(f.read_text())
        record["fingerprint"] = {("attnbook.before_the_move" if m == "attnbook.engines.linalg"
                                  else m): h for m, h in record["fingerprint"].items()}
        write_record(f, record)
    assert all(check_record(f)[2] == ["attnbook.before_the_move"] for f in _results(project))
    assert migrate("m_migrates", "cpu", seed=2, log=lambda *_: None) == 0
    records = [json.loads(f.read_text()) for f in _results(project)]
    assert all(check_record(f)[2] == [] for f in _results(project))
    assert all("attnbook.before_the_move" not in r["fingerprint"] for r in records)
    moved = [r["migrated"] for r in records if "migrated" in r]
    assert moved and all(m["largest_difference"] == 0.0 for m in moved)
    assert all("attnbook.before_the_move" in m["from_fingerprint"] for m in moved)


def test_a_changed_number_refuses_and_names_the_unit(project, capsys):
    for f in _results(project):  # every stored y differs from what the code computes now
        record = json.loads(f.read_text())
        if "result" in record:
            record["result"]["y"] += 0.5
            write_record(f, record)
    before = {f: f.read_text() for f in _results(project)}
    lines = []
    assert migrate("m_migrates", "cpu", seed=1, log=lines.append) == 1
    text = "\n".join(lines)
    assert "the sample disagrees" in text and "nothing re-stamped" in text
    assert "data/results/m_migrates/cpu/s/" in text and "result.y:" in text
    sampled = [f for f in _results(project) if f.read_text() != before[f]]
    for f in _results(project):
        if f not in sampled:  # no record outside the sample was re-stamped
            assert "migrated" not in json.loads(f.read_text())
            assert check_record(f)[2] == ["attnbook.engines.linalg"]


def test_a_sample_stored_on_another_processor_says_so(project):
    for f in _results(project):  # stored elsewhere, and rounded differently there
        record = json.loads(f.read_text())
        record["device"] = "cpu: Other Processor 9 (64 cores, 1 threads)"
        if "result" in record:
            record["result"]["y"] += 1e-12
        write_record(f, record)
    lines = []
    assert migrate("m_migrates", "cpu", seed=1, log=lines.append) == 1
    text = "\n".join(lines)
    note = next(line for line in lines if "note:" in line)
    assert "stored on cpu: Other Processor 9 and is recomputed here on cpu: " in note
    assert "(64 cores" not in note and "this chapter's tolerance is exact" in note
    assert "or migrate on cpu: Other Processor 9, where the stored results were computed" in text


def test_a_tolerance_not_committed_is_refused(project):
    yml = project / "notebooks" / "m_migrates.yml"
    yml.write_text(yml.read_text() + "migrate: {rtol: 0.5, why: seeds' spread}\n")
    with pytest.raises(AttnbookError, match="tolerance .* uncommitted changes: commit it"):
        migrate("m_migrates", "cpu", log=lambda *_: None)
    assert all("migrated" not in json.loads(f.read_text()) for f in _results(project))


def test_the_store_recomputes_only_the_sample_and_lists_what_it_serves(tmp_path, monkeypatch):
    from attnbook.book.notebook import Sweep

    Sweep(ResultStore("nb", "cpu", root=tmp_path), "s").run(
        lambda c: {"y": c["n"]}, [{"n": 1}, {"n": 2}], progress=False)
    paths_ = sorted((tmp_path / "nb/cpu/s").glob("*.json"))
    for f in paths_:
        record = json.loads(f.read_text())
        record["fingerprint"] = {"attnbook.engines.linalg": "0" * 16}
        write_record(f, record)
    log = tmp_path / "asked.txt"
    monkeypatch.setenv(ENV_MIGRATE, json.dumps({"sample": [str(paths_[0])], "log": str(log)}))
    store = ResultStore("nb", "cpu", root=tmp_path)
    assert store.migrating
    out = Sweep(store, "s").run(lambda c: {"y": 10 * c["n"]}, [{"n": 1}, {"n": 2}],
                                progress=False)
    sampled_n = json.loads(paths_[0].read_text())["config"]["n"]
    assert dict(zip(out["n"], out["y"], strict=True)) == {
        n: 10 * n if n == sampled_n else n for n in (1, 2)}  # only the sample is recomputed
    assert list(store.served_stale) == [str(paths_[1])]
    assert {p.strip() for p in log.read_text().split()} == {str(p.resolve()) for p in paths_}
    with pytest.raises(BudgetExhausted, match="1 of 1 configurations never stored"):
        Sweep(store, "s").run(lambda c: {"y": 0}, [{"n": 3}], progress=False)
    assert not (tmp_path / "nb/cpu/s").joinpath(f"{config_key({'n': 3})}.json").exists()
    with pytest.raises(CacheMiss, match="a migration recomputes only its sample"):
        store.get("s", {"n": 3})  # read directly, a result never stored is named


def test_compare_reads_integers_exactly_and_floats_within_the_tolerance():
    assert compare([1, 2.0], [1, 2.0], 0, 0) == ([], 0.0)
    assert compare({"a": 1}, {"a": 1.0}, 0, 0)[0] == []  # equal numbers
    assert compare({"a": True}, {"a": 1}, 0, 0)[0] == ["a: True -> 1"]
    assert compare({"a": 1}, {"a": 2}, 1, 1)[0] == ["a: 1 -> 2"]  # integers exactly
    assert compare({"a": float("nan")}, {"a": float("nan")}, 0, 0)[0] == []
    assert compare({"a": None}, {"a": 0.0}, 1, 1)[0] == ["a: None -> 0.0"]
    assert compare({"a": [1]}, {"a": [1, 2]}, 0, 0)[0] == ["a: length 1 -> 2"]
    diffs, worst = compare({"x": 1.0}, {"x": 1.1}, rtol=0.2, atol=0)
    assert diffs == [] and worst == pytest.approx(0.1)
    assert compare_tables("a,b\n1,x\n", "a,b\n2,x\n", 0, 0)[0] == ["row 0.a: 1 -> 2"]
    assert compare_tables("a\n1\n", "b\n1\n", 0, 0)[0][0].startswith("table shape or columns")


def test_a_timing_is_not_compared_but_every_computed_number_is():
    """How fast a unit ran is a measurement of the machine: a recomputation never repeats it."""
    old = {"result": {"test_loss": [2.5, 2.4], "tokens_per_s": 46295.1, "train_s": 3.2,
                      "peak_mem_bytes": None}}
    faster = {"result": {"test_loss": [2.5, 2.4], "tokens_per_s": 90987.3, "train_s": 1.1,
                         "peak_mem_bytes": None}}
    assert compare(old, faster, rtol=0, atol=0)[0] == []
    other = {"result": {**faster["result"], "test_loss": [2.5, 2.41]}}
    assert compare(old, other, rtol=0, atol=0)[0] == [
        "result.test_loss.1: 2.4 -> 2.41 (difference 0.01 above 0)"]
    gone = {"result": {"test_loss": [2.5, 2.4]}}
    assert len(compare(old, gone, rtol=0, atol=0)[0]) == 3  # a timing must still be there

