"""Language-model sweep configurations (attnbook.engines.lm_sweep)."""

import pytest

from attnbook import ParameterError
from attnbook.engines.lm_sweep import lm_config


def test_bad_configs():
    base = dict(corpus="english", V=500, N=32, L=2, d_x=64, steps=10, batch=4, lr=1e-3,
                warmup=1, seed=0)
    with pytest.raises(ParameterError, match="parameter r ="):
        lm_config(**base, r=501)
    with pytest.raises(ParameterError, match="parameter model"):
        lm_config(**base, model="llama")


def test_seed_groups_split_by_everything_but_the_seed():
    from attnbook.engines.lm_sweep import seed_groups

    base = dict(corpus="kjv", V=40, N=8, L=1, steps=2, batch=2, lr=1e-3, warmup=0)
    cs = [lm_config(**base, d_x=w, seed=s) for s in (0, 1, 2) for w in (4, 8)]
    groups = seed_groups(cs)
    assert [[c["seed"] for c in g] for g in groups] == [[0, 1, 2], [0, 1, 2]]
    assert [g[0]["d_x"] for g in groups] == [4, 8]


def test_train_stacked_equals_train_config_per_seed(monkeypatch):
    import numpy as np

    from attnbook.data.tokenization import TokenArrays
    from attnbook.engines import lm_sweep

    rng = np.random.default_rng(0)
    data = TokenArrays(rng.integers(0, 40, 4000).astype(np.uint16),
                       rng.integers(0, 40, 600).astype(np.uint16), 40, {})
    monkeypatch.setattr(lm_sweep, "token_arrays", lambda corpus, V: data)
    base = dict(corpus="kjv", V=40, N=8, L=1, d_x=8, steps=3, batch=2, lr=1e-3, warmup=1,
                eval_tokens=256)
    cs = [lm_config(**base, seed=s) for s in (3, 5)]
    stacked = lm_sweep.train_stacked(cs, device="cpu")
    single = [lm_sweep.train_config(c, device="cpu") for c in cs]
    assert len(stacked) == 2
    for a, b in zip(stacked, single, strict=True):
        assert a["test_loss"] == pytest.approx(b["test_loss"], abs=1e-4)
        assert a["params_non_embedding"] == b["params_non_embedding"]
    with pytest.raises(ParameterError, match="differ only in seed"):
        lm_sweep.train_stacked([cs[0], lm_config(**{**base, "d_x": 4}, seed=0)])
