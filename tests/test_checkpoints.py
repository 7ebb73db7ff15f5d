"""Checkpoints of long trainings: a unit stopped mid-way (time budget, preemption) resumes from
its saved state, and the resumed training equals the uninterrupted one, number for number."""

import io
import json
import time
import warnings
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
import torch

from attnbook import paths
from attnbook.book import checkpoints, provenance, report
from attnbook.book.checkpoints import Checkpoint, checkpoint_dir, in_flight, load_state, unit_key
from attnbook.book.costs import format_table
from attnbook.book.notebook import ENV_BUDGET_REPORT, ENV_DEADLINE, BudgetExhausted, Run, Sweep
from attnbook.book.provenance import function_modules
from attnbook.book.store import ResultStore
from attnbook.errors import AttnbookError
from attnbook.mahdavi2024.statistics import saturation_experiment
from attnbook.mahdavi2024.trained import MemorizationConfig, train_group, train_sweep

SMALL = dict(d=8, n=4, d_h=8, steps=60, batch=16, eval_every=10)
# the resume tests run on every device here: a GPU resumes what a GPU saved (on a GPU machine,
# `pytest tests/test_checkpoints.py -k resumed`)
DEVICES = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])


class Stop(Exception):
    pass


class MemoryCheckpoint:
    """Saves the state (through torch.save, as a file would) at step ``stop_at`` and stops."""

    def __init__(self, stop_at=None, saved=None):
        self.stop_at, self.blob, self.ticks = stop_at, saved, []

    def load(self, device=None):
        if self.blob is None:
            return None
        return load_state(io.BytesIO(self.blob), "cpu")  # as Checkpoint.load reads a file

    def tick(self, step, state):
        self.ticks.append(step)
        if step == self.stop_at:
            buf = io.BytesIO()
            torch.save(state(), buf)
            self.blob = buf.getvalue()
            raise Stop


def _same(a: dict, b: dict):
    assert a["steps_run"] == b["steps_run"]
    for k in ("metric", "final_loss", "trace", "evals"):
        np.testing.assert_array_equal(a[k], b[k], err_msg=k)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("task", ["classification", "regression"])
def test_stopped_and_resumed_training_equals_the_uninterrupted_one(task, device):
    cfgs = [MemorizationConfig(H=h, T=24, task=task, **SMALL) for h in (1, 2, 3)]
    whole = train_group(cfgs, device, trace_every=1, keep_models=True)
    first = MemoryCheckpoint(stop_at=37)  # between evaluations (every 10 steps)
    with pytest.raises(Stop):
        train_group(cfgs, device, trace_every=1, keep_models=True, checkpoint=first)
    second = MemoryCheckpoint(saved=first.blob)
    resumed = train_group(cfgs, device, trace_every=1, keep_models=True, checkpoint=second)
    assert second.ticks[0] == 38  # it went on from the saved step, not from 0
    _same(whole, resumed)
    for k, v in whole["model"].state_dict().items():  # the best weights too
        assert torch.equal(v, resumed["model"].state_dict()[k]), k


def _saved_state(train, stop_at):
    """The state a checkpoint holds after ``train(checkpoint)`` stopped at step ``stop_at``."""
    first = MemoryCheckpoint(stop_at=stop_at)
    with pytest.raises(Stop):
        train(first)
    return load_state(io.BytesIO(first.blob), "cpu")


def _as_checkpoint(state) -> "MemoryCheckpoint":
    """A checkpoint holding ``state`` (as edited by a forger), saved as a file would be."""
    buf = io.BytesIO()
    torch.save(state, buf)
    return MemoryCheckpoint(saved=buf.getvalue())


_LINE = {"kind": "attention", "d": 4, "N": 5, "rank_heads": 8, "seed": 2}


@pytest.mark.parametrize("task", ["classification", "regression"])
def test_a_forged_metric_in_a_checkpoint_never_becomes_the_result(task):
    """A checkpoint restores state only: its carried best metrics (here set to perfect
    memorization) and evaluations are not what the unit stores; the metric is recomputed from
    the best weights the checkpoint restored."""
    cfgs = [MemorizationConfig(H=h, T=24, task=task, **SMALL) for h in (1, 2)]
    state = _saved_state(lambda c: train_group(cfgs, checkpoint=c), 37)
    genuine = state["best"].clone()  # what the best weights at step 37 do compute
    perfect = 1.0 if task == "classification" else 0.0
    state["best"] = torch.full_like(state["best"], perfect)  # forged: memorized, seemingly
    state["evals"] = [torch.full_like(e, perfect) for e in state["evals"]]
    forged = train_group(cfgs, checkpoint=_as_checkpoint(state))
    # no later evaluation beats the forged value, so the restored best weights stay the best:
    # the result is what they compute, exactly, and not the number the checkpoint carried
    np.testing.assert_array_equal(forged["metric"], genuine.numpy())
    assert not np.any(forged["metric"] == perfect)


def test_a_checkpoint_at_an_evaluation_step_resumes_exactly():
    cfgs = [MemorizationConfig(H=2, T=20, **SMALL)]
    whole = train_group(cfgs, trace_every=1)
    first = MemoryCheckpoint(stop_at=20)  # right after the second evaluation
    with pytest.raises(Stop):
        train_group(cfgs, trace_every=1, checkpoint=first)
    _same(whole, train_group(cfgs, trace_every=1, checkpoint=MemoryCheckpoint(saved=first.blob)))


def test_checkpoint_saves_then_stops_before_the_deadline_and_loads(tmp_path):
    path = tmp_path / "u.pt"
    ck = Checkpoint(path, every_s=3600, deadline=time.time() + 0.5, label="group")
    state = {"x": torch.arange(3)}
    with pytest.raises(BudgetExhausted, match="group checkpointed at step 5"):
        ck.tick(5, lambda: state)
    assert path.exists() and ck.saves == 1
    again = Checkpoint(path)
    assert torch.equal(again.load()["x"], state["x"]) and again.resumed_step == 5
    again.clear()
    assert not path.exists() and Checkpoint(path).load() is None


def test_checkpoint_saves_on_its_period_and_never_without_a_path(tmp_path):
    ck = Checkpoint(tmp_path / "u.pt", every_s=0.0)
    calls = []
    ck.tick(1, lambda: calls.append(1) or {"s": 1})
    ck.tick(2, lambda: calls.append(2) or {"s": 2})
    assert calls == [1, 2] and Checkpoint(tmp_path / "u.pt").load() == {"s": 2}
    quiet = Checkpoint(None, every_s=0.0)  # a read-only run: nothing is written
    quiet.tick(1, lambda: pytest.fail("state requested with nowhere to save it"))
    quiet_stop = Checkpoint(None, deadline=time.time() - 1)
    with pytest.raises(BudgetExhausted):
        quiet_stop.tick(1, lambda: pytest.fail("state requested with nowhere to save it"))


def test_a_checkpoint_of_changed_code_is_discarded(tmp_path, monkeypatch):
    path = tmp_path / "u.pt"
    Checkpoint(path).save(3, {"x": 1})
    saved = load_state(path)
    assert saved["fingerprint"] and all(m.startswith("attnbook.") for m in saved["fingerprint"])
    monkeypatch.setattr(checkpoints, "code_fingerprint",
                        lambda modules=None: {m: "changed" for m in saved["fingerprint"]})
    with pytest.warns(UserWarning, match="changed since"):
        assert Checkpoint(path).load() is None


def test_a_unit_checkpoint_is_judged_by_the_code_its_unit_runs(tmp_path, monkeypatch):
    """A sweep unit's checkpoint records and compares only the modules its unit can run (the
    fingerprint its stored result gets): an edit elsewhere (the book, an analysis module)
    resumes it, an edit inside starts it over. A checkpoint that recorded every module loaded
    is judged by the unit's modules too, and by all it recorded where no unit code is known."""
    import attnbook.engines.pilots  # noqa: F401 - loaded, so a full fingerprint records it

    unit = ["attnbook.engines.schedules", "attnbook.errors"]
    narrow, full = tmp_path / "narrow.pt", tmp_path / "full.pt"
    Checkpoint(narrow, modules=unit).save(3, {"x": 1})
    Checkpoint(full).save(4, {"x": 2})
    assert sorted(load_state(narrow)["fingerprint"]) == unit
    assert {"attnbook.engines.pilots", *unit} <= set(load_state(full)["fingerprint"])
    real = provenance._module_hash

    def edit(module):
        monkeypatch.setattr(provenance, "_module_hash",
                            lambda m: "edited" if m == module else real(m))

    edit("attnbook.engines.pilots")  # outside the unit
    assert Checkpoint(narrow, modules=unit).load() == {"x": 1}
    assert Checkpoint(full, modules=unit).load() == {"x": 2}
    with pytest.warns(UserWarning, match="changed since: set aside as full.pt.set-aside-"):
        assert Checkpoint(full).load() is None
    assert not full.exists()  # set aside, not left to be overwritten
    monkeypatch.setattr(provenance, "_module_hash", real)
    Checkpoint(full).save(4, {"x": 2})
    edit("attnbook.engines.schedules")  # inside it
    for path in (narrow, full):
        with pytest.warns(UserWarning, match="changed since"):
            assert Checkpoint(path, modules=unit).load() is None
    monkeypatch.setattr(provenance, "_module_hash", real)
    Checkpoint(narrow, modules=unit).save(3, {"x": 1})
    with pytest.warns(UserWarning, match="changed since"):  # a module it never recorded
        assert Checkpoint(narrow, modules=[*unit, "attnbook.device"]).load() is None


def test_a_sweep_gives_its_units_checkpoints_the_units_code(tmp_path):
    """Sweep.run(checkpoint=True) hands each unit a checkpoint judged by the modules its
    function can run, the fingerprint its stored result records; for a function of the
    notebook's own, which may call anything loaded, by every module."""
    seen = []

    def unit_fn(unit, checkpoint):
        seen.append(checkpoint.modules)
        return {"y": unit["x"]}

    sweep = Sweep(ResultStore("nb", "ci", root=tmp_path), "s")
    sweep.run(unit_fn, [{"x": 0}], progress=False, checkpoint=True)
    unit_fn.__module__ = "attnbook.engines.pilots"  # as if the library defined it
    sweep.run(unit_fn, [{"x": 1}], progress=False, checkpoint=True)
    assert seen[0] is None
    assert seen[1] == function_modules(unit_fn) and "attnbook.engines.pilots" in seen[1]
    (record,) = [r for r in (json.loads(f.read_text()) for f in tmp_path.rglob("*.json"))
                 if r["config"] == {"x": 1}]
    assert sorted(record["fingerprint"]) == sorted(seen[1])


def test_a_damaged_checkpoint_starts_over(tmp_path):
    path = tmp_path / "u.pt"
    path.write_bytes(b"not a checkpoint")
    with pytest.warns(UserWarning, match="unreadable"):
        assert Checkpoint(path).load() is None


class _Runs:
    """A pickle that calls ``open(marker, "w")`` when unpickled: code in a data file."""

    def __init__(self, marker):
        self.marker = str(marker)

    def __reduce__(self):
        return (open, (self.marker, "w"))


@pytest.mark.parametrize("payload", ["code", "object array"])
def test_a_checkpoint_that_would_run_code_is_refused_unread(tmp_path, payload):
    """A checkpoint is data: one that holds a callable (or any type beyond tensors, numbers,
    strings, containers and numeric arrays) is never unpickled; it is discarded with one
    warning line and the unit starts over."""
    path, marker = tmp_path / "u.pt", tmp_path / "ran"
    Checkpoint(path).save(3, {"x": 1})
    good = load_state(path)
    evil = _Runs(marker) if payload == "code" else np.array([{"a": 1}], dtype=object)
    torch.save({**good, "state": {"x": evil}}, path)  # the fingerprint is the current code's
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert Checkpoint(path, label="unit u").load() is None
    assert not marker.exists(), "the checkpoint ran code"
    (w,) = caught
    message = str(w.message)
    assert "\n" not in message and "discarded unread; unit u starts over" in message
    assert ("open" if payload == "code" else "ObjectDType") in message
    assert not path.exists()  # discarded: the next sitting does not meet it again


def test_every_trainer_state_loads_as_data(tmp_path):
    """What the trainers save (tensors, optimizer and scheduler states, numpy curves, random
    states) loads under the checkpoint allow-list."""
    import random

    model = torch.nn.Linear(2, 2)
    opt = torch.optim.AdamW(model.parameters())
    model(torch.ones(1, 2)).sum().backward()
    opt.step()
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: 1.0)
    state = {"model": model.state_dict(), "opt": opt.state_dict(), "sched": sched.state_dict(),
             "rng": torch.Generator().get_state(), "curve": [np.arange(3.0, dtype=np.float32)],
             "best": np.float64(0.5), "n": np.int64(3), "py": random.getstate(),
             "np": np.random.get_state(), "none": None}
    path = tmp_path / "u.pt"
    Checkpoint(path).save(1, state)
    back = Checkpoint(path).load()
    assert back["curve"][0].dtype == np.float32 and back["best"] == 0.5
    assert torch.equal(back["model"]["weight"], model.state_dict()["weight"])


def test_checkpoint_folders():
    assert checkpoint_dir(paths.COMMITTED_RESULTS / "nb" / "full", "s") == \
        paths.DATA / "checkpoints" / "nb" / "full" / "s"
    assert unit_key({"a": 1}) != unit_key([{"a": 1}]) == unit_key([{"a": 1}])


def test_the_plan_lists_the_units_in_flight_with_their_steps_and_sittings(tmp_path):
    """A unit stopped in two sittings is listed at its last step with both sittings' seconds;
    an unreadable file is named as such; one set aside or half written is not listed."""
    folder = checkpoint_dir(tmp_path / "nb" / "full", "s")
    first = Checkpoint(folder / "a1b2c3d4e5f60718.pt")
    first.save(100, {"w": torch.zeros(2)})
    second = Checkpoint(first.path)
    second.load()
    second.save(250, {"w": torch.ones(2)})
    (folder / "ffff0000ffff0000.pt").write_bytes(b"not a checkpoint")
    (folder / "a1b2c3d4e5f60718.pt.set-aside-20261204T000000-1").write_bytes(b"x")
    (folder / "a1b2c3d4e5f60718.tmp123").write_bytes(b"x")
    rows = in_flight("nb", "full", results_root=tmp_path)
    assert [(r["unit"], r.get("step"), r.get("sittings")) for r in rows] == [
        ("a1b2c3d4e5f60718", 250, 2), ("ffff0000ffff0000", None, None)]
    assert "error" not in rows[0] and rows[1]["error"]
    assert rows[0]["s"] >= 0 and rows[0]["saved"].endswith("Z")
    assert in_flight("nb", "cpu", results_root=tmp_path) == []
    text = format_table([{"notebook": "nb", "where": "gpu", "units": 3, "minutes": 11,
                          "flop": None, "measured": False, "note": "", "stored": 1,
                          "last_budget": "", "in_flight": rows}], "full")
    assert "in flight: s/a1b2c3d4 at step 250 (saved " in text and "in 2 sittings)" in text
    assert f"s/ffff0000 unreadable ({rows[1]['error']})" in text


def test_budgeted_sweep_stops_inside_a_group_and_resumes_it(tmp_path, monkeypatch):
    """train_sweep under a deadline: the group starts (a minute is not needed: nothing is
    known of its length), saves its state and stops; the next run resumes it and stores what
    an uninterrupted sweep stores."""
    cfgs = [MemorizationConfig(H=h, T=24, **{**SMALL, "steps": 200}) for h in (1, 2)]
    reference = train_sweep(Sweep(ResultStore("nb", "ci", root=tmp_path / "a"), "m"), cfgs,
                            progress=False)
    report = tmp_path / "report.jsonl"
    monkeypatch.setenv(ENV_BUDGET_REPORT, str(report))
    monkeypatch.setenv(ENV_DEADLINE, repr(time.time() + 0.5))
    store = ResultStore("nb", "ci", root=tmp_path / "b")
    with pytest.raises(BudgetExhausted, match="checkpointed at step"):
        train_sweep(Sweep(store, "m"), cfgs, progress=False)
    assert store.budget_stop and '"checkpointed": true' in report.read_text()
    (saved,) = (tmp_path / "b" / ".checkpoints" / "nb" / "ci" / "m").glob("*.pt")
    step = load_state(saved)["step"]
    assert 0 < step < 200
    monkeypatch.delenv(ENV_DEADLINE)
    resumed = train_sweep(Sweep(ResultStore("nb", "ci", root=tmp_path / "b"), "m"), cfgs,
                          progress=False)
    assert not saved.exists()  # deleted once the group's results are stored
    cols = ["H", "metric", "steps_run", "final_loss"]
    assert resumed[cols].equals(reference[cols])
    # the records say the group took two sittings, and wall_s counts both
    for record in (json.loads(f.read_text()) for f in (tmp_path / "b" / "m").glob("*.json")):
        (first,) = record["earlier_sittings"]
        assert first["step"] == step and first["device"].startswith("cpu")
        assert record["wall_s"] >= first["s"] > 0
    for record in (json.loads(f.read_text()) for f in (tmp_path / "a" / "m").glob("*.json")):
        assert "earlier_sittings" not in record  # computed in one sitting


def test_a_budget_leaves_a_checkpointed_sweep_a_minute(tmp_path, monkeypatch):
    """A checkpointed group longer than what is left still starts when a minute is left."""
    store = ResultStore("nb", "ci", root=tmp_path)
    store.put("s", {"x": 0}, {"y": 0}, wall_s=3600.0)
    monkeypatch.setenv(ENV_DEADLINE, repr(time.time() + 120))
    seen = []

    def fn(unit, checkpoint):
        seen.append((unit["x"], checkpoint.path.parent.name))
        return {"y": unit["x"]}

    Sweep(ResultStore("nb", "ci", root=tmp_path), "s").run(
        fn, [{"x": 0}, {"x": 1}], progress=False, checkpoint=True)
    assert seen == [(1, "s")]


def test_cached_table_resumes_from_its_checkpoint(tmp_path, monkeypatch):
    """Run.cached(..., checkpoint=True), as the saturation chapter calls it."""
    monkeypatch.setattr(paths, "RESULTS", tmp_path / "results")
    cfgs = [MemorizationConfig(H=h, T=t, **{**SMALL, "steps": 200}) for h in (1, 2)
            for t in (6, 12)]
    whole = saturation_experiment(cfgs, progress=False)
    params = {"configs": [c.__dict__ for c in cfgs]}

    def compute(ckpt):
        return saturation_experiment(cfgs, progress=False, checkpoint=ckpt)

    run = Run("nb", "ci", 0, torch.device("cpu"), "r1", False)
    monkeypatch.setenv(ENV_DEADLINE, repr(time.time() + 0.5))
    with pytest.raises(BudgetExhausted, match="spent before"):  # less than a minute left
        run.cached(("accuracy", "max_coef"), params, compute, checkpoint=True)
    import attnbook.book.notebook as nb

    monkeypatch.setattr(nb, "MIN_SLICE_S", 0.0)
    run = Run("nb", "ci", 0, torch.device("cpu"), "r1", False)
    with pytest.raises(BudgetExhausted, match="checkpointed"):
        run.cached(("accuracy", "max_coef"), params, compute, checkpoint=True)
    folder = tmp_path / "results" / ".checkpoints" / "nb" / "ci" / "accuracy+max_coef"
    assert len(list(folder.glob("*.pt"))) == 1
    monkeypatch.delenv(ENV_DEADLINE)
    run = Run("nb", "ci", 0, torch.device("cpu"), "r2", False)
    tables = run.cached(("accuracy", "max_coef"), params, compute, checkpoint=True)
    assert not list(folder.glob("*.pt"))
    for k in ("accuracy", "max_coef"):
        np.testing.assert_allclose(tables[k].to_numpy(float), whole[k].to_numpy(float))
        (meta,) = (tmp_path / "results" / "nb" / "ci").glob(f"{k}-*.json")
        record = json.loads(meta.read_text())
        (first,) = record["earlier_sittings"]
        assert record["wall_s"] >= first["s"] > 0 and first["step"] > 0


def test_a_cached_table_with_its_code_named_fingerprints_that_code_alone(tmp_path, monkeypatch):
    """Run.cached(..., code=f): the record's fingerprint is f's import closure, not every module
    the notebook loaded, so a change to an analysis module leaves the table current."""
    monkeypatch.setattr(paths, "RESULTS", tmp_path / "results")
    import attnbook.mahdavi2024.sweeps  # noqa: F401  (loaded, as a chapter loads it)

    cfgs = [MemorizationConfig(H=1, T=6, **{**SMALL, "steps": 20})]

    def compute(ckpt):
        return saturation_experiment(cfgs, progress=False, checkpoint=ckpt)

    def fingerprint(notebook, **code):
        Run(notebook, "ci", 0, torch.device("cpu"), "r1", False).cached(
            ("accuracy", "max_coef"), {"configs": [c.__dict__ for c in cfgs]}, compute,
            checkpoint=True, **code)
        (meta,) = (tmp_path / "results" / notebook / "ci").glob("accuracy-*.json")
        return set(json.loads(meta.read_text())["fingerprint"])

    narrow = fingerprint("nb1", code=saturation_experiment)
    assert narrow == set(function_modules(saturation_experiment))
    assert "attnbook.mahdavi2024.sweeps" not in narrow
    assert "attnbook.mahdavi2024.sweeps" in fingerprint("nb2")  # every module loaded
    with pytest.raises(AttnbookError, match="code must be a function of the attnbook library"):
        Run("nb", "ci", 0, torch.device("cpu"), "r1", False).cached(
            "t", {"k": 1}, lambda: None, code=compute)


def test_a_table_stopped_mid_way_is_reported_as_not_computed(tmp_path, monkeypatch):
    """The work report counts a table as computed once its computation returns: one that its
    time budget stopped (checkpointed) reports 0 of 1, and the run's line says no unit
    completed rather than 'computed 1 of 1' or 'from cache'."""
    monkeypatch.setattr(paths, "RESULTS", tmp_path / "results")
    work = tmp_path / "work.jsonl"
    monkeypatch.setenv("ATTNBOOK_WORK_REPORT", str(work))
    run = Run("nb", "ci", 0, torch.device("cpu"), "r1", False)

    def stopped():
        raise BudgetExhausted("group checkpointed at step 5")

    with pytest.raises(BudgetExhausted):
        run.cached("t", {"k": 1}, stopped)
    run.cached("u", {"k": 1}, lambda: pd.DataFrame({"x": [1.0]}))
    reports = [json.loads(line) for line in work.read_text().splitlines()]
    assert [(r["name"], r["computed"], r["total"]) for r in reports] == [("t", 0, 1), ("u", 1, 1)]
    assert report.work_text({"computed": 0, "total": 1}, "partly run") == "no unit completed of 1"


def test_a_checkpoint_from_another_device_kind_resumes_with_a_warning(tmp_path):
    """A GPU's checkpoint resumed on a CPU: allowed, but said, and the sittings name both."""
    path = tmp_path / "u.pt"
    gpu = Checkpoint(path)
    gpu.device = "cuda: NVIDIA H100"
    gpu.save(7, {"x": 1})
    with pytest.warns(UserWarning, match="written on cuda and unit resumes on cpu"):
        cpu = Checkpoint(path)
        assert cpu.load("cpu") == {"x": 1}
    assert [s["device"] for s in cpu.earlier] == ["cuda: NVIDIA H100"]
    cpu.save(9, {"x": 2})  # a second sitting adds its own entry
    with pytest.warns(UserWarning, match="written on cuda"):  # the mix is said every time
        again = Checkpoint(path)
        again.load(torch.device("cpu"))
    assert [s["step"] for s in again.earlier] == [7, 9]
    assert again.earlier[1]["device"].startswith("cpu: ")
    only_cpu = Checkpoint(tmp_path / "v.pt")
    only_cpu.load()
    only_cpu.save(3, {"x": 3})
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # one kind throughout (threads may differ): no warning
        assert Checkpoint(tmp_path / "v.pt").load("cpu") == {"x": 3}


def test_resume_keeps_early_stopping():
    """A group that stops early (all models at 100%) does so at the same step when resumed."""
    cfgs = [replace(MemorizationConfig(H=2, T=3, **SMALL), steps=1000)]
    whole = train_group(cfgs)
    assert whole["steps_run"] < 1000  # it stopped early
    first = MemoryCheckpoint(stop_at=123)
    with pytest.raises(Stop):
        train_group(cfgs, checkpoint=first)
    _same({**whole, "trace": [], "evals": whole["evals"]},
          {**train_group(cfgs, checkpoint=MemoryCheckpoint(saved=first.blob)), "trace": []})


# -- the stacked language-model trainer ------------------------------------------------------
LM_V, LM_N = 24, 16
_rng = np.random.default_rng(0)
LM_TRAIN = ((np.arange(5000) + (_rng.random(5000) < 0.1)) % LM_V).astype(np.uint16)
LM_TEST = ((np.arange(700) * 5) % LM_V).astype(np.uint16)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("per_model_dropout", [True, False])
def test_stopped_and_resumed_lm_stack_equals_the_uninterrupted_one(per_model_dropout, device):
    """Dropout from each model's own stream, or from the global generator: both resume."""
    from attnbook.engines.lm import LMConfig
    from attnbook.engines.training import TrainConfig, train_lm_stacked

    cfg = LMConfig(V=LM_V, N=LM_N, L=2, d_x=16, H=2, r=4, dropout=0.1)
    tc = TrainConfig(steps=30, batch=6, lr=3e-3, warmup=3, eval_every=10, eval_tokens=400,
                     eval_batch=5)
    kw = dict(device=device, per_model_dropout=per_model_dropout, return_model=True)
    torch.manual_seed(123)
    whole, net_whole = train_lm_stacked(cfg, LM_TRAIN, LM_TEST, tc, [3, 7], **kw)
    first = MemoryCheckpoint(stop_at=14)  # between evaluations, after the first one
    torch.manual_seed(123)
    with pytest.raises(Stop):
        train_lm_stacked(cfg, LM_TRAIN, LM_TEST, tc, [3, 7], checkpoint=first, **kw)
    torch.manual_seed(999)  # the global stream is restored from the checkpoint, not reused
    second = MemoryCheckpoint(saved=first.blob)
    resumed, net_resumed = train_lm_stacked(cfg, LM_TRAIN, LM_TEST, tc, [3, 7],
                                            checkpoint=second, **kw)
    assert second.ticks[0] == 15
    for a, b in zip(whole, resumed, strict=True):
        for k in ("test_loss", "train_loss", "curve_step", "curve_train", "curve_test"):
            assert a[k] == b[k], k
    for k, v in net_whole.state_dict().items():
        assert torch.equal(v, net_resumed.state_dict()[k]), k


def test_train_stacked_takes_the_sweep_checkpoint():
    """``partial(train_stacked, device=...)`` is called ``fn(unit, checkpoint)`` by a
    checkpointed sweep."""
    import inspect
    from functools import partial

    from attnbook.engines.lm_sweep import train_stacked

    fn = partial(train_stacked, device="cpu")
    bound = inspect.signature(fn).bind([{"seed": 0}], "ckpt")
    assert bound.arguments["checkpoint"] == "ckpt"


@pytest.mark.parametrize("device", DEVICES)
def test_stopped_and_resumed_furthest_neighbour_line_equals_the_uninterrupted_one(device):
    from attnbook.bruna2024 import furthest_neighbour as fn

    config = {"kind": "attention", "d": 4, "N": 5, "rank_heads": 8, "seed": 2}
    settings = fn.TrainSettings(steps=40, batch=16, warmup=4, eval_every=10, eval_size=64)
    whole = fn.train_line_config(config, settings, device=device)
    first = MemoryCheckpoint(stop_at=17)
    with pytest.raises(Stop):
        fn.train_line_config(config, settings, device=device, checkpoint=first)
    second = MemoryCheckpoint(saved=first.blob)
    resumed = fn.train_line_config(config, settings, device=device, checkpoint=second)
    assert second.ticks[0] == 18
    np.testing.assert_array_equal(whole["curve"], resumed["curve"])
    np.testing.assert_array_equal(whole["min_loss"], resumed["min_loss"])


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("stop_at", [7, 10])  # between evaluations, and right after one
def test_stopped_and_resumed_set_models_equal_the_uninterrupted_ones(device, stop_at):
    from attnbook.bruna2024 import symmetric as sy

    target = sy.PowerSumTarget("rotated", 4, 4, 4)
    settings = sy.SetTrainSettings(steps=25, batch=16, lr=0.01, warmup=5, eval_every=5,
                                   eval_size=32, test_size=64, chunk=20)

    def train(checkpoint=None):
        return sy.unary_pairwise_result(target, [1, 3], settings, width=16, seed=2,
                                        device=device, checkpoint=checkpoint)

    whole = train()
    first = MemoryCheckpoint(stop_at=stop_at)
    with pytest.raises(Stop):
        train(first)
    second = MemoryCheckpoint(saved=first.blob)
    resumed = train(second)
    assert second.ticks[0] == stop_at + 1  # it went on from the saved step, not from 0
    for k in ("test_error", "curve", "curve_step", "H", "model"):
        np.testing.assert_array_equal(whole[k], resumed[k], err_msg=k)
    state = load_state(io.BytesIO(first.blob), "cpu")  # the state saved above, claiming the end
    state["step"] = settings.steps
    with pytest.raises(AttnbookError, match="a checkpoint at step 25 of 25"):
        train(_as_checkpoint(state))


def test_a_checkpoint_at_the_last_step_is_refused_by_its_trainer(tmp_path):
    """No training is saved at its last step (it ends there and is stored), so a checkpoint
    that claims it is made up: the trainer refuses it before any step, and the book sets it
    aside and trains the unit from the start (Checkpoint.run)."""
    from attnbook.bruna2024 import furthest_neighbour as fn

    cfgs = [MemorizationConfig(H=1, T=24, **SMALL)]
    state = _saved_state(lambda c: train_group(cfgs, checkpoint=c), 37)
    state["step"] = SMALL["steps"]
    with pytest.raises(AttnbookError, match="a checkpoint at step 60 of 60"):
        train_group(cfgs, checkpoint=_as_checkpoint(state))
    settings = fn.TrainSettings(steps=40, batch=16, warmup=4, eval_every=10, eval_size=64)
    state = _saved_state(lambda c: fn.train_line_config(_LINE, settings, checkpoint=c), 27)
    state["step"] = 40
    with pytest.raises(AttnbookError, match="a checkpoint at step 40 of 40"):
        fn.train_line_config(_LINE, settings, checkpoint=_as_checkpoint(state))


def _lm_stack(checkpoint=None):
    from attnbook.engines.lm import LMConfig
    from attnbook.engines.training import TrainConfig, train_lm_stacked

    cfg = LMConfig(V=LM_V, N=LM_N, L=1, d_x=8, H=2)
    tc = TrainConfig(steps=20, batch=4, lr=3e-3, warmup=2, eval_every=5, eval_tokens=200,
                     eval_batch=5)
    return train_lm_stacked(cfg, LM_TRAIN, LM_TEST, tc, [0, 1], checkpoint=checkpoint)


@pytest.mark.parametrize("forge", ["last step", "beyond", "curve added", "curve dropped"])
def test_a_language_model_checkpoint_that_does_not_fit_its_step_is_refused(forge):
    """The language-model trainer, as the others: no checkpoint at or after the last step
    (its curves would become the result without a step computed), and the curves must hold
    exactly the evaluations made before its step."""
    state = _saved_state(_lm_stack, 12)  # evaluations at steps 5 and 10
    if forge in ("last step", "beyond"):
        state["step"] = 20 if forge == "last step" else 25
    elif forge == "curve added":
        state["curve_step"] = [*state["curve_step"], 15]
    else:
        state["curve_train"] = state["curve_train"][:1]
    with pytest.raises(AttnbookError, match="a checkpoint at step"):
        _lm_stack(_as_checkpoint(state))


def test_a_forged_curve_in_a_furthest_neighbour_checkpoint_never_becomes_the_result():
    """The attack of B-NN: a checkpoint whose held-out curve (and lowest losses) say 0.00 for
    every model. The line's min_loss is what the kept best weights compute at the end."""
    from attnbook.bruna2024 import furthest_neighbour as fn

    settings = fn.TrainSettings(steps=40, batch=16, warmup=4, eval_every=10, eval_size=64)
    state = _saved_state(lambda c: fn.train_line_config(_LINE, settings, checkpoint=c), 27)
    genuine = state["lowest"].numpy().astype(np.float32)  # what the kept weights compute
    state["curve"] = [np.zeros_like(c) for c in state["curve"]]
    state["lowest"] = torch.zeros_like(state["lowest"])
    forged = fn.train_line_config(_LINE, settings, checkpoint=_as_checkpoint(state))
    np.testing.assert_array_equal(forged["min_loss"], genuine)  # no later eval beats 0.00
    assert (forged["min_loss"] > 0).all()


def test_a_resumed_state_comes_back_on_the_cpu_whatever_the_device(tmp_path):
    """The trainer places what it resumes (weights through load_state_dict, the rest with
    .to(device)): what it keeps on the CPU, a GPU run's list of evaluations, must come back
    there, or its final torch.stack of earlier and new evaluations mixes two devices."""
    path = tmp_path / "u.pt"
    first = Checkpoint(path)
    first.load("cpu")
    first.save(5, {"evals": [torch.ones(3)], "best": torch.zeros(2), "step": 5})
    back = Checkpoint(path).load(torch.device("meta"))  # any device but the CPU
    assert [t.device.type for t in (*back["evals"], back["best"])] == ["cpu", "cpu"]
    assert torch.equal(back["evals"][0], torch.ones(3))


def _linear_unit(unit, checkpoint):
    """A trainer as the library's are: it loads what the checkpoint holds without checking."""
    model = torch.nn.Linear(2, 2)
    state = checkpoint.load()
    start = 0
    if state is not None:
        model.load_state_dict(state["model"])
        start = checkpoint.resumed_step
    for step in range(start, 3):
        checkpoint.tick(step + 1, lambda: {"model": model.state_dict()})
    return {"steps": 3 - start}


@pytest.mark.parametrize("case", ["wrong shapes", "missing key", "a directory", "damaged"])
def test_a_checkpoint_that_does_not_fit_is_set_aside_and_the_unit_runs(tmp_path, case):
    """A checkpoint whose tensors have other shapes, that lacks a key, or a directory at its
    path: named in one line and set aside, and the unit computes from the start, instead of
    failing the notebook on every run."""
    from attnbook.book.notebook import _Checkpointed

    fn = _Checkpointed(_linear_unit, tmp_path, None, "unit")
    unit = {"x": 1}
    path = fn.checkpoint(unit).path
    if case == "a directory":
        path.mkdir(parents=True)
    elif case == "damaged":
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"\x80not a checkpoint")
    else:
        state = {"model": torch.nn.Linear(3, 3).state_dict()} if case == "wrong shapes" \
            else {"weights": torch.zeros(2)}
        fn.checkpoint(unit).save(1, state)
    with pytest.warns(UserWarning) as caught:
        out = fn(unit)
    assert out.value == {"steps": 3}
    lines = [str(w.message) for w in caught if "set aside" in str(w.message)]
    assert len(lines) == 1 and str(path) in lines[0], [str(w.message) for w in caught]
    assert not path.exists() or path.is_file()
    (aside,) = list(path.parent.glob(f"{path.name}.set-aside-*"))
    assert aside.exists()
    fn.clear(unit)
