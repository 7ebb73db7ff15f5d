"""The one resumable loop (Sweep.run), its executors, and tables computed together."""

import pandas as pd
import pytest

from attnbook import AttnbookError, ParameterError
from attnbook.book.executors import LocalExecutor
from attnbook.book.notebook import Run, Sweep
from attnbook.book.store import ResultStore


def _sweep(tmp_path, name="s"):
    return Sweep(ResultStore("nb", "ci", root=tmp_path), name)


def test_resumes_without_recomputing(tmp_path):
    calls = []

    def fn(c):
        calls.append(c["x"])
        if c["x"] == 2 and len(calls) == 3:
            raise KeyboardInterrupt  # interrupted in the middle of the sweep
        return {"y": c["x"] ** 2}

    configs = [{"x": i} for i in range(4)]
    with pytest.raises(KeyboardInterrupt):
        _sweep(tmp_path).run(fn, configs, progress=False)
    assert calls == [0, 1, 2]
    df = _sweep(tmp_path).run(fn, configs, progress=False)
    assert calls == [0, 1, 2, 2, 3]  # finished runs 0 and 1 were not repeated
    assert df["y"].tolist() == [0, 1, 4, 9]


def test_groups_are_computed_together_and_stored_per_configuration(tmp_path):
    seen = []

    def fn(group):
        seen.append([c["x"] for c in group])
        if len(seen) == 2:
            raise KeyboardInterrupt  # the second group is lost, the first is kept
        return [{"y": 10 * c["x"]} for c in group]

    configs = [{"x": i} for i in range(5)]

    def pairs(todo):
        return [todo[i:i + 2] for i in range(0, len(todo), 2)]

    with pytest.raises(KeyboardInterrupt):
        _sweep(tmp_path).run(fn, configs, groups=pairs, progress=False)
    df = _sweep(tmp_path).run(fn, configs, groups=pairs, progress=False)
    assert seen == [[0, 1], [2, 3], [2, 3], [4]]  # only the missing ones, regrouped
    assert df["y"].tolist() == [0, 10, 20, 30, 40]


def test_group_result_count_must_match(tmp_path):
    with pytest.raises(AttnbookError, match="1 results for a group of 2"):
        _sweep(tmp_path).run(lambda g: [{"y": 0}], [{"x": 1}, {"x": 2}],
                             groups=lambda todo: [todo], progress=False)


def test_custom_executor_is_used(tmp_path):
    class Reversed:
        def map(self, fn, configs):
            for c in reversed(list(configs)):
                yield c, fn(c), 0.0

    df = _sweep(tmp_path).run(lambda c: {"y": -c["x"]}, [{"x": 1}, {"x": 2}],
                              executor=Reversed())
    assert df["y"].tolist() == [-1, -2]


def test_duplicates_are_rejected_before_anything_runs(tmp_path):
    calls = []
    with pytest.raises(ParameterError, match="duplicates"):
        _sweep(tmp_path).run(lambda c: calls.append(c) or {}, [{"x": 1}, {"x": 1}])
    assert calls == []


def test_local_executor_yields_wall_time():
    (unit, result, wall), = LocalExecutor(progress=False).map(lambda c: c + 1, [1])
    assert (unit, result) == (1, 2) and wall >= 0


def _run(tmp_path):
    import torch

    run = Run("nb", "ci", 0, torch.device("cpu"), "r1", recompute=False)
    run.store = ResultStore("nb", "ci", root=tmp_path)
    return run


def test_cached_tables_computed_once_and_stored_by_name(tmp_path):
    calls = []

    def compute():
        calls.append(1)
        return {"a": pd.DataFrame({"x": [1, 2]}), "b": pd.DataFrame({"y": [3]})}

    first = _run(tmp_path).cached(("a", "b"), {"p": 1}, compute)
    again = _run(tmp_path).cached(("a", "b"), {"p": 1}, compute)
    assert calls == [1]  # one computation for both tables, none on the second read
    assert first["a"]["x"].tolist() == again["a"]["x"].tolist() == [1, 2]
    assert again["b"]["y"].tolist() == [3]
    # each table is an ordinary cached table under its own name
    assert _run(tmp_path).cached("a", {"p": 1}, compute)["x"].tolist() == [1, 2]


def test_cached_tables_must_return_the_named_tables(tmp_path):
    with pytest.raises(AttnbookError, match="exactly the keys"):
        _run(tmp_path).cached(("a", "b"), {"p": 1}, lambda: {"a": pd.DataFrame()})


def test_worker_processes_store_what_one_process_stores(tmp_path, monkeypatch):
    """ATTNBOOK_WORKERS=2: the units of a sweep run in two spawned worker processes of one
    thread each, and every stored number equals the in-process run's (each trainer seeds its
    own generators, so neither the process nor the order enters a result)."""
    from functools import partial

    from attnbook.book.executors import ProcessExecutor, default_executor
    from attnbook.engines.lm_sweep import lm_config, seed_groups, train_stacked

    configs = [lm_config(corpus="kjv-mini", V=32, N=8, L=L, d_x=8, H=2, steps=3, batch=2,
                         lr=1e-3, warmup=0, seed=s, eval_tokens=256)
               for L in (1, 2) for s in (0, 1)]
    fn = partial(train_stacked, device="cpu")
    monkeypatch.setenv("ATTNBOOK_WORKERS", "2")
    assert isinstance(default_executor(), ProcessExecutor)
    par = Sweep(ResultStore("nb", "ci", root=tmp_path / "a"), "lm").run(
        fn, configs, groups=seed_groups, progress=False)
    monkeypatch.delenv("ATTNBOOK_WORKERS")
    assert isinstance(default_executor(), LocalExecutor)
    one = Sweep(ResultStore("nb", "ci", root=tmp_path / "b"), "lm").run(
        fn, configs, groups=seed_groups, progress=False)
    cols = ["L", "seed", "test_loss", "train_loss"]
    pd.testing.assert_frame_equal(par[cols], one[cols])


def test_worker_process_errors_reach_the_sweep(tmp_path):
    from attnbook.book.executors import ProcessExecutor

    with pytest.raises(ValueError):
        list(ProcessExecutor(workers=2, progress=False).map(int, ["1", "x", "3"]))
    with pytest.raises(ParameterError, match="workers"):
        ProcessExecutor(workers=0)
    import threading

    lock = threading.Lock()  # holds a lock: cannot be sent, even by value
    with pytest.warns(UserWarning, match="cannot be sent to worker processes"):
        out = list(ProcessExecutor(workers=2, progress=False).map(
            lambda u: (lock.locked(), u + 1)[1], [1, 2]))
    assert [r for _, r, _ in out] == [2, 3]


def test_closures_and_a_notebooks_functions_run_in_the_workers(recwarn):
    """A closure and a function defined in a notebook (module ``__main__``) do not pickle by
    reference; they are sent by value (cloudpickle) and computed in the worker processes, with
    the values they close over, and no warning."""
    import os

    from attnbook.book.executors import ProcessExecutor

    offset = 10
    namespace = {"__name__": "__main__"}  # as a notebook's kernel defines a function
    exec("import os\ndef cell(u):\n    return u * 2, os.getpid()\n", namespace)
    ex = ProcessExecutor(workers=2, progress=False)
    closure = sorted(r for _, r, _ in ex.map(lambda u: (u + offset, os.getpid()), [1, 2, 3]))
    notebook = sorted(r for _, r, _ in ex.map(namespace["cell"], [1, 2, 3]))
    assert [r for r, _ in closure] == [11, 12, 13]
    assert [r for r, _ in notebook] == [2, 4, 6]
    assert os.getpid() not in {p for _, p in closure + notebook}  # computed in the workers
    assert not [w for w in recwarn if "cannot be sent" in str(w.message)]


def test_a_chapter_reads_what_another_profile_has_stored(tmp_path, monkeypatch):
    """run.stored_sweep: the intact, current units a larger profile's unfinished sweep has
    stored, whatever their configuration; nothing computed, nothing written."""
    import json

    from attnbook import paths

    monkeypatch.setattr(paths, "COMMITTED_RESULTS", tmp_path)
    long = ResultStore("nb", "long", root=tmp_path)
    long.put("pilot", {"steps": 10}, {"gap": 0.1})
    long.put("pilot", {"steps": 20}, {"gap": -0.1})
    long.put("pilot", {"steps": 40}, {"gap": 0.5})
    damaged = sorted((tmp_path / "nb" / "long" / "pilot").glob("*.json"))[0]
    record = json.loads(damaged.read_text())
    record["result"]["gap"] = 9.9
    damaged.write_text(json.dumps(record))
    run = Run("nb", "cpu", 0, "cpu", "r", False, {}, True, {}, False)
    with pytest.warns(UserWarning, match="sha256"):
        got = run.stored_sweep("pilot", "long")
    assert len(got) == 2 and 9.9 not in set(got["gap"])
    assert run.stored_sweep("lm", "long").empty
    with pytest.raises(ParameterError):
        run.stored_sweep("pilot", "huge")
    monkeypatch.setattr(paths, "NOTEBOOKS", tmp_path)
    (tmp_path / "nb.ipynb").write_text("{}")
    other = Run("sibling", "cpu", 0, "cpu", "r", False, {}, True, {}, False)
    with pytest.warns(UserWarning, match="sha256"):  # a sibling chapter's pilot, as stored
        assert len(other.stored_sweep("pilot", "long", notebook="nb")) == 2
    with pytest.raises(ParameterError, match="notebook"):
        other.stored_sweep("pilot", "long", notebook="no_such_chapter")


def test_a_sweep_with_its_code_named_fingerprints_that_code_alone(tmp_path):
    """Sweep.run(fn, ..., code=f): a notebook's fn around the library function f records f's
    import closure, not every module loaded (an analysis module's change leaves it current);
    a code that is not the library's is refused before anything runs."""
    import json

    import attnbook.mahdavi2024.theory_figures  # noqa: F401  (loaded, as a chapter loads it)
    from attnbook.book.provenance import function_modules
    from attnbook.mahdavi2024 import bounds

    fn = lambda c: {"p": bounds.mha_parameter_count(c["H"], 4, 3, 1, 1)}  # noqa: E731
    _sweep(tmp_path, "narrow").run(fn, [{"H": 1}], progress=False,
                                   code=bounds.mha_parameter_count)
    _sweep(tmp_path, "wide").run(fn, [{"H": 1}], progress=False)
    (narrow,) = (tmp_path / "nb" / "ci" / "narrow").glob("*.json")
    (wide,) = (tmp_path / "nb" / "ci" / "wide").glob("*.json")
    narrow, wide = (set(json.loads(p.read_text())["fingerprint"]) for p in (narrow, wide))
    assert narrow == set(function_modules(bounds.mha_parameter_count))
    assert "attnbook.mahdavi2024.theory_figures" in wide - narrow
    with pytest.raises(AttnbookError, match="code must be a function of the attnbook library"):
        _sweep(tmp_path, "bad").run(fn, [{"H": 2}], progress=False, code=fn)
    assert not (tmp_path / "nb" / "ci" / "bad").exists()
    from attnbook.mahdavi2024 import token_ranks  # a chain of two: the union of both closures

    _sweep(tmp_path, "two").run(fn, [{"H": 1}], progress=False,
                                code=(bounds.mha_parameter_count, token_ranks.assumption_table))
    (two,) = (tmp_path / "nb" / "ci" / "two").glob("*.json")
    assert set(json.loads(two.read_text())["fingerprint"]) == (
        set(function_modules(bounds.mha_parameter_count))
        | set(function_modules(token_ranks.assumption_table)))
    with pytest.raises(AttnbookError, match="or a tuple of them, not 'test_a_sweep"):
        _sweep(tmp_path, "bad").run(fn, [{"H": 2}], progress=False,
                                    code=(bounds.mha_parameter_count, fn))
    assert not (tmp_path / "nb" / "ci" / "bad").exists()


def test_compile_without_its_compiler_is_refused_in_one_line(tmp_path, monkeypatch):
    """A parameter that turns torch.compile on is refused, naming it and the missing compiler,
    where no compiler for its kernels is on the PATH; off, in a run that only draws stored
    results, or with the compiler there, it passes. The GPU's (Triton's C compiler) is looked
    up by the same rule."""
    from types import SimpleNamespace

    import torch

    from attnbook.book.executors import compile_toolchain

    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("CC", raising=False)
    monkeypatch.setenv("CXX", "g++")
    on_cpu = SimpleNamespace(device=torch.device("cpu"), cache_only=False)
    with pytest.raises(ParameterError) as e:
        Run.require_compiler(on_cpu, "compile_step", True)
    message = str(e.value)
    assert "\n" not in message and message.startswith("parameter compile_step = True ")
    assert "'g++' on the PATH" in message
    Run.require_compiler(on_cpu, "compile_step", False)  # off: nothing to build
    drawing = SimpleNamespace(device=torch.device("cpu"), cache_only=True)
    Run.require_compiler(drawing, "compile_step", True)  # the book drawing stored results
    assert compile_toolchain("cuda") == "a C compiler on the PATH (gcc or clang, or set $CC)"
    for name in ("g++", "gcc"):
        (tmp_path / name).write_text("#!/bin/sh\n")
        (tmp_path / name).chmod(0o755)
    Run.require_compiler(on_cpu, "compile_step", True)
    assert compile_toolchain("cpu") == compile_toolchain("cuda") == ""
    monkeypatch.setenv("CXX", "clang++-99")  # $CXX names the compiler, found or not
    assert compile_toolchain("cpu") == "the C++ compiler 'clang++-99' on the PATH (or set $CXX)"
