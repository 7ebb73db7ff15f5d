"""Sweeps of language-model trainings: a table of configurations -> resumable, stored runs.

wies2021 (section 5, appendix C) trains hundreds of models, each one row of a table (vocabulary,
depth, width, ranks, seed). Here a sweep is a list of flat configuration dicts; every finished
run is stored at once through ``run.sweep(name)`` (config hash -> metrics, curves, device and
wall time), so an interrupted sweep resumes and loses no finished run. Runs are dispatched by
an :class:`Executor`; :class:`LocalExecutor` trains them one after another on this machine,
and a cluster executor only has to implement :meth:`Executor.map`.

:func:`lm_config` builds one configuration and :func:`train_config` trains it (a module-level
function of a plain dict, so an executor can ship it to another process).
"""

import time
from collections.abc import Callable, Iterator
from functools import cache
from typing import Protocol

import numpy as np
import pandas as pd
import torch

from .errors import ParameterError
from .lm import LanguageModel, LMConfig, reference_gpt2
from .training import TrainConfig, train_lm

__all__ = ["Executor", "LocalExecutor", "run_sweep", "lm_config", "train_config", "token_arrays",
           "matched_size"]

_MODEL_KEYS = ("V", "N", "L", "d_x", "H", "d_a", "r", "r_e", "dropout", "tie")
_TRAIN_KEYS = ("steps", "batch", "lr", "warmup", "weight_decay", "eval_tokens")
_OTHER_KEYS = ("corpus", "model", "seed")
MODELS = ("ours", "gpt2")


def lm_config(*, corpus: str, V: int, N: int, L: int, d_x: int, steps: int, batch: int,
              lr: float, warmup: int, seed: int, H: int = 2, d_a: int | None = None,
              r: int | None = None, r_e: int | None = None, dropout: float = 0.1,
              tie: bool = False, weight_decay: float = 0.01, eval_tokens: int = 0,
              model: str = "ours") -> dict:
    """One flat, JSON-able sweep configuration, checked by building its configs.

    >>> c = lm_config(corpus="english", V=500, N=32, L=2, d_x=64, r=8, steps=10, batch=4,
    ...               lr=1e-3, warmup=1, seed=0)
    >>> c["r"], c["model"], LMConfig(**{k: c[k] for k in _MODEL_KEYS}).embedding_rank
    (8, 'ours', 8)
    """
    if model not in MODELS:
        raise ParameterError("model", model, ", ".join(MODELS))
    c = dict(corpus=corpus, model=model, seed=seed, V=V, N=N, L=L, d_x=d_x, H=H, d_a=d_a, r=r,
             r_e=r_e, dropout=dropout, tie=tie, steps=steps, batch=batch, lr=lr, warmup=warmup,
             weight_decay=weight_decay, eval_tokens=eval_tokens)
    _split(c)  # validates
    return c


def _split(c: dict) -> tuple[LMConfig, TrainConfig]:
    unknown = set(c) - set(_MODEL_KEYS) - set(_TRAIN_KEYS) - set(_OTHER_KEYS)
    if unknown:
        raise ParameterError("config", sorted(unknown), "keys of lm_config", problem="is unknown")
    return (LMConfig(**{k: c[k] for k in _MODEL_KEYS}),
            TrainConfig(**{k: c[k] for k in _TRAIN_KEYS}))


@cache
def token_arrays(corpus: str, V: int, fetch: bool = True):
    """The token arrays of ``corpus`` at vocabulary size V (built once per process)."""
    from .data.corpus import build_corpus
    from .data.tokenization import tokenize_corpus

    return tokenize_corpus(build_corpus(corpus, fetch=fetch), V)


def train_config(config: dict, device: torch.device | str = "cpu") -> dict:
    """Train the model of one sweep configuration and return its metrics (see ``train_lm``)."""
    model_cfg, train_cfg = _split(config)
    data = token_arrays(config["corpus"], config["V"])
    if data.V != config["V"]:
        raise ParameterError("V", config["V"], f"a size the corpus supports (largest: {data.V})")
    make = (lambda: LanguageModel(model_cfg)) if config["model"] == "ours" else \
        (lambda: reference_gpt2(model_cfg))
    out = train_lm(make, data.train, data.test, model_cfg.N, train_cfg, seed=config["seed"],
                   device=device)
    return {**out, "embedding_rank": model_cfg.embedding_rank}


class Executor(Protocol):
    """Runs ``fn(config, device)`` for each configuration, yielding results as they finish."""

    def map(self, fn: Callable[[dict, torch.device], dict],
            configs: list[dict]) -> Iterator[tuple[dict, dict, float]]:
        """Yield (config, result, wall seconds) per configuration, in any order."""
        ...


class LocalExecutor:
    """One run after another in this process, on ``device``, with a progress bar over runs."""

    def __init__(self, device: torch.device | str = "cpu", progress: bool = True,
                 desc: str = "runs"):
        self.device, self.progress, self.desc = torch.device(device), progress, desc

    def map(self, fn, configs):
        it = configs
        if self.progress:
            from .progress import progress_bar

            it = progress_bar(configs, desc=self.desc, unit="run")
        for c in it:
            t0 = time.perf_counter()
            result = fn(c, self.device)
            yield c, result, time.perf_counter() - t0


def run_sweep(sweep, configs: list[dict], fn: Callable = train_config,
              executor: Executor | None = None) -> pd.DataFrame:
    """Run the configurations ``sweep`` (from ``run.sweep(name)``) lacks; return all as a frame.

    Each result is stored the moment it finishes, so stopping and re-running loses nothing.
    """
    if len({tuple(sorted(c.items(), key=str)) for c in map(_hashable, configs)}) != len(configs):
        raise ParameterError("configs", len(configs), "distinct configurations (duplicates found)")
    executor = executor or LocalExecutor(desc=getattr(sweep, "name", "runs"))
    todo = sweep.missing(configs)
    for config, result, wall_s in executor.map(fn, todo):
        sweep.put(config, result, round(wall_s, 3))
    return sweep.frame(configs)


def _hashable(c: dict) -> dict:
    return {k: (tuple(v) if isinstance(v, list) else v) for k, v in c.items()}


def matched_size(sizes, losses, loss: float) -> float:
    """Size of the baseline whose loss equals ``loss``, by log-size interpolation (wies2021 Fig. 2).

    The baselines (sizes, losses) are first made monotone: the loss at a size is the best loss
    of any baseline no larger. Returns 0.0 when ``loss`` is worse than every baseline (the
    match lies below the smallest one), and the largest size when it is better than all.

    >>> matched_size([100, 400], [3.0, 2.0], 2.5)  # halfway in log size
    200.0
    >>> matched_size([100, 400], [3.0, 2.0], 3.5), matched_size([100, 400], [3.0, 2.0], 1.0)
    (0.0, 400.0)
    """
    order = np.argsort(sizes)
    s = np.asarray(sizes, dtype=float)[order]
    l = np.minimum.accumulate(np.asarray(losses, dtype=float)[order])  # monotone envelope
    if loss > l[0]:
        return 0.0
    if loss <= l[-1]:
        return float(s[-1])
    i = int(np.argmax(l <= loss))  # first baseline at least as good
    if l[i] == loss or l[i - 1] == l[i]:
        return float(s[i])
    t = (l[i - 1] - loss) / (l[i - 1] - l[i])
    return float(np.round(np.exp(np.log(s[i - 1]) + t * (np.log(s[i]) - np.log(s[i - 1]))), 6))
