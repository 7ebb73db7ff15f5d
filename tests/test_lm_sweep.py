"""Sweeps: resumable storage of finished runs, the executor interface, configurations."""

import pytest

from attnbook import ParameterError
from attnbook.book.notebook import Sweep
from attnbook.book.store import ResultStore
from attnbook.lm_sweep import LocalExecutor, lm_config, run_sweep


def _sweep(tmp_path, name="s"):
    return Sweep(ResultStore("nb", "ci", root=tmp_path), name)


def test_resumes_without_recomputing(tmp_path):
    calls = []

    def fn(c, device):
        calls.append(c["x"])
        if c["x"] == 2 and len(calls) == 3:
            raise KeyboardInterrupt  # interrupted in the middle of the sweep
        return {"y": c["x"] ** 2}

    configs = [{"x": i} for i in range(4)]
    with pytest.raises(KeyboardInterrupt):
        run_sweep(_sweep(tmp_path), configs, fn, LocalExecutor(progress=False))
    assert calls == [0, 1, 2]
    df = run_sweep(_sweep(tmp_path), configs, fn, LocalExecutor(progress=False))
    assert calls == [0, 1, 2, 2, 3]  # finished runs 0 and 1 were not repeated
    assert df["y"].tolist() == [0, 1, 4, 9]


def test_custom_executor_is_used(tmp_path):
    class Reversed:
        def map(self, fn, configs):
            for c in reversed(configs):
                yield c, fn(c, "cpu"), 0.0

    df = run_sweep(_sweep(tmp_path), [{"x": 1}, {"x": 2}], lambda c, d: {"y": -c["x"]},
                   Reversed())
    assert df["y"].tolist() == [-1, -2]


def test_duplicates_and_bad_configs(tmp_path):
    with pytest.raises(ParameterError, match="duplicates"):
        run_sweep(_sweep(tmp_path), [{"x": 1}, {"x": 1}], lambda c, d: {})
    base = dict(corpus="english", V=500, N=32, L=2, d_x=64, steps=10, batch=4, lr=1e-3,
                warmup=1, seed=0)
    with pytest.raises(ParameterError, match="parameter r ="):
        lm_config(**base, r=501)
    with pytest.raises(ParameterError, match="parameter model"):
        lm_config(**base, model="llama")
