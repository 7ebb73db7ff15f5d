"""Language-model sweep configurations (attnbook.lm_sweep)."""

import pytest

from attnbook import ParameterError
from attnbook.lm_sweep import lm_config


def test_bad_configs():
    base = dict(corpus="english", V=500, N=32, L=2, d_x=64, steps=10, batch=4, lr=1e-3,
                warmup=1, seed=0)
    with pytest.raises(ParameterError, match="parameter r ="):
        lm_config(**base, r=501)
    with pytest.raises(ParameterError, match="parameter model"):
        lm_config(**base, model="llama")
