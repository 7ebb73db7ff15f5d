"""The training recipe: schedule, batches, evaluation, determinism, learning, errors."""

import numpy as np
import pytest
import torch

from attnbook import ParameterError
from attnbook.engines.lm import LanguageModel, LMConfig
from attnbook.engines.training import TrainConfig, evaluate, lr_at, sample_batch, train_lm

V, N = 20, 16
# a text with structure: token t+1 follows t (mod V), with some noise
_rng = np.random.default_rng(0)
TRAIN = ((np.arange(6000) + (_rng.random(6000) < 0.1)) % V).astype(np.uint16)
TEST = ((np.arange(800) * 1) % V).astype(np.uint16)


def _run(seed=0, steps=30, **kw):
    cfg = LMConfig(V=V, N=N, L=1, d_x=16, **kw)
    tc = TrainConfig(steps=steps, batch=8, lr=3e-3, warmup=3, eval_every=10)
    return train_lm(lambda: LanguageModel(cfg), TRAIN, TEST, N, tc, seed=seed)


def test_schedule_warmup_peak_and_zero():
    c = TrainConfig(steps=100, batch=1, lr=2.0, warmup=10)
    lrs = [lr_at(s, c) for s in range(100)]
    assert lrs[9] == 2.0 and lrs[-1] == pytest.approx(0.0, abs=1e-12)
    assert (np.diff(lrs[:10]) > 0).all()  # rising warm-up
    assert (np.diff(lrs[9:]) <= 0).all()  # then non-increasing


def test_batches_are_next_token_shifted():
    x, y = sample_batch(TRAIN, N, 4, torch.Generator().manual_seed(0))
    assert x.shape == y.shape == (4, N) and x.dtype == torch.long
    assert torch.equal(x[:, 1:], y[:, :-1])


def test_deterministic_on_cpu():
    a, b = _run(seed=3), _run(seed=3)
    assert a["curve_train"] == b["curve_train"] and a["test_loss"] == b["test_loss"]
    assert _run(seed=4)["test_loss"] != a["test_loss"]


def test_learns_below_uniform_and_curves():
    out = _run(steps=60)
    assert out["curve_step"] == [10, 20, 30, 40, 50, 60] and len(out["curve_test"]) == 6
    assert out["test_loss"] < 0.8 * np.log(V)
    assert out["tokens_seen"] == 60 * 8 * N


def test_evaluate_uniform_model_is_log_V():
    class Uniform(torch.nn.Module):
        def forward(self, idx):
            return torch.zeros(*idx.shape, V)

    assert evaluate(Uniform(), TEST, N) == pytest.approx(np.log(V))


def test_bad_recipe():
    with pytest.raises(ParameterError, match="warmup"):
        TrainConfig(steps=5, batch=1, warmup=6)
    with pytest.raises(ParameterError, match="parameter batch"):
        TrainConfig(steps=5, batch=0)
    with pytest.raises(ParameterError, match="parameter N"):
        sample_batch(TRAIN[:10], N, 2, torch.Generator())
