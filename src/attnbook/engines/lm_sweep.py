"""Sweeps of language-model trainings: one flat configuration per model, trained by one function.

wies2021 (section 5, appendix C) trains hundreds of models, each one row of a table (vocabulary,
depth, width, ranks, seed). :func:`lm_config` builds one configuration (a flat, JSON-able dict)
and :func:`train_config` trains it: a module-level function of a plain dict, so an executor can
ship it to another process. A chapter runs a sweep as
``run.sweep(name).run(partial(train_config, device=run.device), configs)``, which stores every
finished model at once, so an interrupted sweep resumes and loses no finished run.
:func:`matched_size` reads the size of the baseline that matches a loss (wies2021 Fig. 2).

The seeds of one configuration train as one stack, one program
(:func:`attnbook.engines.training.train_lm_stacked`; on a GPU this removes the per-model launch
overhead, on a 2-core CPU it is about as fast as one model at a time: there one model's
per-step overhead, all that a stack removes, is only 7-21% of a step at the cpu profiles'
sizes, benchmarks/results/lm_stacked_cpu.json). :func:`seed_groups` splits configurations
into groups that differ only in seed, and :func:`train_stacked` trains one such group, one
result per configuration, so a chapter runs
``run.sweep(name).run(partial(train_stacked, device=run.device), configs, groups=seed_groups,
checkpoint=True)``: a stack longer than one sitting saves its state and resumes from it
(:mod:`attnbook.book.checkpoints`).

Used by: levine2020_depth_transition, wies2021_attention_ratio, wies2021_depth_efficiency,
wies2021_rank_bottleneck, wies2021_vocab_rank.
"""

from functools import cache

import numpy as np
import torch

from ..device import default_device
from ..errors import ParameterError
from .lm import LanguageModel, LMConfig, reference_gpt2
from .training import TrainConfig, train_lm, train_lm_stacked

__all__ = ["lm_config", "train_config", "token_arrays", "matched_size", "seed_groups",
           "train_stacked"]

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
    from ..data.corpus import build_corpus
    from ..data.tokenization import tokenize_corpus

    return tokenize_corpus(build_corpus(corpus, fetch=fetch), V)


def train_config(config: dict, device: torch.device | str | None = None) -> dict:
    """Train the model of one sweep configuration and return its metrics (see ``train_lm``),
    on ``device`` (default: :func:`attnbook.device.default_device`, so a cluster node uses
    its GPU)."""
    device = default_device(str(device) if device is not None else None)
    model_cfg, train_cfg = _split(config)
    data = token_arrays(config["corpus"], config["V"])
    if data.V != config["V"]:
        raise ParameterError("V", config["V"], f"a size the corpus supports (largest: {data.V})")
    make = (lambda: LanguageModel(model_cfg)) if config["model"] == "ours" else \
        (lambda: reference_gpt2(model_cfg))
    out = train_lm(make, data.train, data.test, model_cfg.N, train_cfg, seed=config["seed"],
                   device=device)
    return {**out, "embedding_rank": model_cfg.embedding_rank}


def seed_groups(configs) -> list[list[dict]]:
    """The configurations grouped by everything but ``seed`` (first-seen order), for stacking.

    >>> seed_groups([{"a": 1, "seed": 0}, {"a": 2, "seed": 0}, {"a": 1, "seed": 1}])
    [[{'a': 1, 'seed': 0}, {'a': 1, 'seed': 1}], [{'a': 2, 'seed': 0}]]
    """
    groups: dict = {}
    for c in configs:
        key = tuple(sorted((k, repr(v)) for k, v in c.items() if k != "seed"))
        groups.setdefault(key, []).append(c)
    return list(groups.values())


def train_stacked(configs, checkpoint=None, device: torch.device | str | None = None
                  ) -> list[dict]:
    """Train the models of configurations that differ only in seed as one stack
    (:func:`attnbook.engines.training.train_lm_stacked`); one ``train_config``-style result per
    configuration, in order. Only the ``ours`` model stacks. ``checkpoint``: where the
    training saves its state and resumes from (``run.sweep(name).run(partial(train_stacked,
    device=...), configs, groups=seed_groups, checkpoint=True)`` passes one per group)."""
    configs = list(configs)
    if not configs or len(seed_groups(configs)) != 1:
        raise ParameterError("configs", len(configs), "configurations that differ only in seed")
    if configs[0]["model"] != "ours":
        raise ParameterError("model", configs[0]["model"], "ours (the stacked model)")
    device = default_device(str(device) if device is not None else None)
    model_cfg, train_cfg = _split(configs[0])
    data = token_arrays(configs[0]["corpus"], configs[0]["V"])
    if data.V != configs[0]["V"]:
        raise ParameterError("V", configs[0]["V"], f"a size the corpus supports (largest: "
                             f"{data.V})")
    outs = train_lm_stacked(model_cfg, data.train, data.test, train_cfg,
                            [c["seed"] for c in configs], device=device, checkpoint=checkpoint)
    return [{**o, "embedding_rank": model_cfg.embedding_rank} for o in outs]


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
