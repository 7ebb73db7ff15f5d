"""Cheaper steps for the long CPU trainings, on one thread: bf16 autocast and ``torch.compile``.

The ``long`` profiles train on a 2-core CPU for hours, one thread per worker (two workers give
1.77x over one process, ``executor_cpu.json``; the memorization chapters flush subnormals).
This measures, on one thread, whether the step itself gets cheaper, on one unit of each long
trainer at its ``long`` shape:

* ``lm_rank_bottleneck``: the language model of wies2021_rank_bottleneck ``long`` (V 257,
  N 128, L 4, d_x 64, H 2, batch 16, lr 2e-3, warm-up 20, English corpus), one net per unit
  (its sweep trains one net at a time, its pilot stacks of one);
* ``lm_attention_ratio``: a seed stack of wies2021_attention_ratio ``long`` (ratio 4, L 4:
  d_x 25, H 25, d_a 4; V 128, N 32, batch 32, lr 2e-3, warm-up 20, KJV), its 2 seeds;
* ``memorization_shared`` and ``memorization_per_example``: a unit of
  mahdavi2024_fig2_heads_context ``long`` (d 64, n 32, d_h 64, H 20; T 10,000 with a shared
  context, T 20,000 with a context per example; batch 256, lr 1e-3), its 2 seeds as
  ``plan_groups(max_group=2)`` stacks them; subnormals flushed, as that profile does.

Four arms, each the same training from the same seeds:

* ``fp32``: today's path, float32 eager;
* ``bf16``: ``torch.autocast("cpu", dtype=torch.bfloat16)`` around the forward pass (the loss
  in float32 on the forward's output cast to float32; weights, gradients and the optimizer in
  float32), as the language-model trainer already does on CUDA;
* ``compile``: the forward pass and loss under ``torch.compile`` (the backward compiled with
  it; batches, dropout masks and the optimizer step outside, as ``bench_compile.py``);
* ``bf16+compile``: both.

Timing: every arm trains ``steps`` steps in ``rounds`` equal blocks; each round runs one block
of every arm, the arms one after another and the order rotated each round (ABCD, BCDA, ...),
so a change of the machine's load hits every arm alike. The first round (it compiles) is
warm-up; of the others the per-round ratio fp32 time / arm time is taken, and its median over
the rounds is reported with the milliseconds per model-step (a stack's step over its models).

Results: after the last round every arm's models are evaluated in float32 eager (the language
models: test loss on the first ``eval_tokens`` held-out tokens; memorization: training-set
accuracy and the last step's loss) and compared with the fp32 arm. The tolerance is fixed here,
before any measurement (:data:`TOLERANCE`): a quarter of the median seed standard deviation of
the same metric over the points of the committed ``long`` results of the chapter, so a change
inside it is well inside the seeds' spread. The fp32 arm's own seeds give the spread at this
budget too (``seed_sd_in_run``), for scale.

Where the benchmark's step differs from the trainers' (no library module is changed: their
fingerprints date hours of stored results): the loops here re-implement ``train_lm_stacked``'s
and ``train_group``'s steps with the library's parts (model, batches, dropout streams, loss,
optimizer, schedule), because CPU autocast has to reach the forward pass (``training._autocast``
disables it on the CPU), and because the arms advance block by block; the fp32 arm is checked
to give exactly the library trainer's numbers (``fidelity``). Left out: the evaluations during
training (memorization every 500 steps, with the best checkpoint; none in the language models'
long runs but the final one) and checkpoint ticks; the evaluation at the end is on a subset of
the language models' held-out tokens. In the bf16 arms the memorization loss is computed on the
forward's output cast to float32 (``_loss`` alone would take bf16 logits).

Goal (the issue): at least 2x less time per model-step than today's one-thread path.

    .venv/bin/python benchmarks/bench_cheaper_step.py [--quick] [--units a,b] [--steps-scale 1]
        [--out benchmarks/results/cheaper_step_cpu_1thread.json]
"""

import argparse
import os
import statistics
import time
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from _common import commit, write_json

from attnbook.book.provenance import provenance
from attnbook.engines.lm import LMConfig, StackedLanguageModel
from attnbook.engines.lm_sweep import token_arrays
from attnbook.engines.training import (
    _STACKED_CPU_ADAMW,
    TrainConfig,
    _device_tokens,
    _evaluate_stacked,
    _optimizer,
    lr_at,
    train_lm_stacked,
)
from attnbook.mahdavi2024.trained import (
    MemorizationConfig,
    StackedAttention,
    _batch_indices,
    _evaluate,
    _loss,
    _Stack,
    lr_factor,
    train_group,
)

ARMS = ("fp32", "bf16", "compile", "bf16+compile")
GOAL = 2.0  # the goal: at least 2x less time per model-step than fp32 eager
CPU = torch.device("cpu")
COMPILE = {"backend": "inductor"}  # --quick: "eager" (traced by dynamo, run eagerly: seconds)

# The tolerance, stated before any measurement: a quarter of the median seed standard
# deviation of the metric over the points of the committed long results (sample sd of each
# point's seeds; memorization: points short of saturation, accuracy below 0.99 for every seed).
TOLERANCE = {
    "lm_rank_bottleneck": {
        "test_loss": 0.0033,
        "seed_sd": 0.01333, "points": 4, "seeds": "3 (2 for one point)",
        "source": "data/results/wies2021_rank_bottleneck/long/lm/*.json: test_loss, sample sd "
                  "over seeds of the 4 configurations with 2 or more seeds (0.0047, 0.0097, "
                  "0.0170, 0.0321 nats), median 0.01333 nats"},
    "lm_attention_ratio": {
        "test_loss": 0.00084,
        "seed_sd": 0.003351, "points": 27, "seeds": 2,
        "source": "data/results/wies2021_attention_ratio/long/lm/*.json: test_loss, sample sd "
                  "of the 2 seeds of each of the 27 nets (0.0001 to 0.0112 nats), median "
                  "0.003351 nats"},
    "memorization_shared": {
        "accuracy": 0.0035, "loss": 0.020,
        "seed_sd": {"accuracy": 0.01391, "loss": 0.08057}, "points": 9, "seeds": 2,
        "source": "data/results/mahdavi2024_fig2_heads_context/long/models/*.json, "
                  "classification with a shared context: metric (best training accuracy) and "
                  "final_loss, sample sd of the 2 seeds of each of the 9 points short of "
                  "saturation (1 saturated point left out), medians 0.01391 and 0.08057"},
    "memorization_per_example": {
        "accuracy": 0.0157, "loss": 0.070,
        "seed_sd": {"accuracy": 0.06299, "loss": 0.2823}, "points": 8, "seeds": 2,
        "source": "data/results/mahdavi2024_fig2_heads_context/long/models/*.json, "
                  "classification with a context per example: metric and final_loss, sample "
                  "sd of the 2 seeds of each of the 8 points short of saturation (2 saturated "
                  "points left out), medians 0.06299 and 0.2823"},
}
DIFFERS = [
    "the steps are re-implemented here from the library's parts (StackedLanguageModel and its "
    "dropout streams, the stack's for-loop AdamW, lr_at; StackedAttention, _Stack, "
    "_batch_indices, _loss, fused Adam, lr_factor), because attnbook.engines.training._autocast "
    "disables autocast on the CPU and the arms advance block by block; the fp32 arm gives the "
    "library trainer's numbers exactly (fidelity, per unit)",
    "no evaluation during training and no checkpoint ticks (train_group evaluates the whole "
    "training set every 500 steps and keeps the best; the language models' long runs evaluate "
    "only at the end); every arm is evaluated once, at the end, in float32 eager",
    "lm_rank_bottleneck: the test loss on the first 65,536 held-out tokens (the long runs: all "
    "529,595); its long sweep trains each net with train_lm (LanguageModel), its pilot with "
    "train_stacked (a stack of one, timed here)",
    "bf16 arms, memorization: the loss on the forward's output cast to float32 (the trainer "
    "has no autocast; _loss on bf16 logits would compute the cross-entropy in bf16)",
    "the runs are short (a few hundred steps over their own warm-up cosine schedule), not the "
    "long profiles' 2000-20,000 steps",
]
TOLERANCE_RULE = ("a quarter of the median seed standard deviation of the metric over the "
                  "points of the chapter's committed long results: a change inside it is well "
                  "inside the seeds' spread")

# (name, chapter, what, steps, rounds, build keywords)
UNITS = {
    "lm_rank_bottleneck": dict(
        chapter="wies2021_rank_bottleneck", kind="lm", steps=160, rounds=8,
        model=dict(V=257, N=128, L=4, d_x=64, H=2), corpus="english", seeds=[0],
        train=dict(batch=16, lr=0.002, warmup=20), eval_tokens=65536,
        what="the long profile's full-rank net (V 257, N 128, L 4, d_x 64, H 2, dropout 0.1), "
             "batch 16, lr 2e-3, warm-up 20, one net (the sweep trains one net per unit, "
             "train_lm; its pilot stacks of one, train_stacked)"),
    "lm_attention_ratio": dict(
        chapter="wies2021_attention_ratio", kind="lm", steps=160, rounds=8,
        model=dict(V=128, N=32, L=4, d_x=25, H=25, d_a=4), corpus="kjv", seeds=[0, 1],
        train=dict(batch=32, lr=0.002, warmup=20), eval_tokens=0,
        what="the long sweep's ratio-4 net at depth 4 and size 64k (d_x 25, H 25, d_a 4; V 128, "
             "N 32, dropout 0.1), batch 32, lr 2e-3, warm-up 20, its 2 seeds as one stack "
             "(train_stacked)"),
    "memorization_shared": dict(
        chapter="mahdavi2024_fig2_heads_context", kind="memorization", steps=4800, rounds=8,
        config=dict(H=20, T=10000, n=32, d=64, d_h=64, context="shared"), seeds=[0, 1],
        what="the long heads panel's H = 20 point (d 64, n 32, d_h 64, T 10,000, shared "
             "context, 100 classes, batch 256, lr 1e-3), its 2 seeds as one group "
             "(train_group; plan_groups(max_group=2))"),
    "memorization_per_example": dict(
        chapter="mahdavi2024_fig2_heads_context", kind="memorization", steps=1000, rounds=8,
        config=dict(H=20, T=20000, n=32, d=64, d_h=64, context="per_example"), seeds=[0, 1],
        what="the long general-position panel's H = 20 point (d 64, n 32, d_h 64, T 20,000, "
             "a context per example, 100 classes, batch 256, lr 1e-3), its 2 seeds as one "
             "group (train_group)"),
}


def _compiled(fn, arm: str):
    """``fn`` under ``torch.compile`` in the compile arms, as it is in the others."""
    return torch.compile(fn, **COMPILE) if "compile" in arm else fn


class LMArm:
    """``train_lm_stacked``'s CPU step (per-model batches and dropout masks, the stack's
    for-loop AdamW, the warm-up cosine schedule), advanced block by block."""

    def __init__(self, cfg: LMConfig, data, tc: TrainConfig, seeds, arm: str, tokens=None):
        self.cfg, self.data, self.tc, self.arm = cfg, data, tc, arm
        self.net = StackedLanguageModel(cfg, seeds).to(CPU)
        self.gens = [torch.Generator().manual_seed(s + 1) for s in seeds]
        self.opt = _optimizer(self.net, tc, model_axis=1, impl=_STACKED_CPU_ADAMW)
        self.tokens = tokens if tokens is not None else _device_tokens(data.train, CPU)
        self.offsets = torch.arange(cfg.N + 1)
        self.noise = cfg.dropout > 0
        if self.noise:
            self.net.reset_dropout_streams()
        self.M, self.step = len(seeds), 0
        self.running = torch.zeros(len(seeds), dtype=torch.float64)  # as the trainer's sum
        net = self.net

        def forward_loss(x, noise, y):
            logits = net(x, noise)  # (M, B, N, V)
            return F.cross_entropy(logits.float().flatten(0, 2), y.flatten(),
                                   reduction="none").view(len(seeds), -1).mean(1)

        if "bf16" in arm:  # autocast around the forward only; the loss in float32
            def forward_loss(x, noise, y, net=net):
                with torch.autocast("cpu", dtype=torch.bfloat16):
                    logits = net(x, noise)
                return F.cross_entropy(logits.float().flatten(0, 2), y.flatten(),
                                       reduction="none").view(len(seeds), -1).mean(1)
        self.forward_loss = _compiled(forward_loss, arm)
        self.net.train()

    def advance(self, k: int):
        N, B = self.cfg.N, self.tc.batch
        for _ in range(k):
            lr = lr_at(self.step, self.tc)
            for group in self.opt.param_groups:
                group["lr"] = lr
            starts = torch.stack([torch.randint(0, len(self.tokens) - N - 1, (B,), generator=g)
                                  for g in self.gens])
            win = self.tokens[starts[..., None] + self.offsets].long()
            x, y = win[..., :-1], win[..., 1:]
            noise = self.net.draw_noise(B, N, CPU) if self.noise else None
            losses = self.forward_loss(x, noise, y)
            self.opt.zero_grad(set_to_none=True)
            losses.sum().backward()
            self.opt.step()
            self.running += losses.detach().to(torch.float64)
            self.step += 1

    def evaluate(self, eval_tokens: int) -> dict:
        """float32 eager, every arm alike: test loss per model; mean training loss."""
        test = _evaluate_stacked(self.net, self.data.test, self.cfg.N, max_tokens=eval_tokens,
                                 batch=self.tc.eval_batch, device=CPU)
        train = [v / max(self.step, 1) for v in self.running.tolist()]
        return {"test_loss": test, "train_loss": train}


class MemArm:
    """``train_group``'s step (hashed batches, fused Adam, the warm-up cosine schedule),
    advanced block by block; evaluated once, at the end."""

    def __init__(self, cfgs, data: _Stack, arm: str):
        self.cfgs, self.data, self.arm = cfgs, data, arm
        c0 = cfgs[0]
        self.net = StackedAttention(cfgs).to(CPU)
        self.streams = torch.tensor([c.init_seed() for c in cfgs], dtype=torch.int64)
        self.opt = torch.optim.Adam(self.net.parameters(), lr=c0.lr, fused=True)
        self.sched = torch.optim.lr_scheduler.LambdaLR(self.opt,
                                                       lambda s: lr_factor(s, c0.steps))
        self.M, self.step, self.loss = len(cfgs), 0, None
        net, task = self.net, c0.task

        def forward_loss(q, ctx, y):
            return _loss(net(q, ctx), y, task)

        if "bf16" in arm:  # autocast around the forward only; the loss on float32 outputs
            def forward_loss(q, ctx, y):
                with torch.autocast("cpu", dtype=torch.bfloat16):
                    out = net(q, ctx)
                return _loss(out.float(), y, task)
        self.forward_loss = _compiled(forward_loss, arm)

    def advance(self, k: int):
        c0 = self.cfgs[0]
        for _ in range(k):
            q, ctx, y = self.data.batch(_batch_indices(self.streams, self.step, c0.batch,
                                                       self.data.T_m))
            loss = self.forward_loss(q, ctx, y)
            self.opt.zero_grad(set_to_none=True)
            loss.sum().backward()
            self.opt.step()
            self.sched.step()
            self.loss = loss.detach()
            self.step += 1

    def evaluate(self) -> dict:
        acc = _evaluate(self.net, self.data, self.cfgs[0].task)
        return {"accuracy": acc.tolist(),
                "loss": self.loss.tolist() if self.loss is not None else None}


def _train_cfg(u: dict, steps: int, eval_tokens: int) -> TrainConfig:
    """The unit's recipe over ``steps`` steps (the warm-up cut to half of a shorter run)."""
    return TrainConfig(steps=steps, eval_tokens=eval_tokens,
                       **{**u["train"], "warmup": min(u["train"]["warmup"], steps // 2)})


def _lm_setup(u: dict, steps: int):
    cfg = LMConfig(**u["model"])
    tc = _train_cfg(u, steps, u["eval_tokens"])
    data = token_arrays(u["corpus"], cfg.V)
    return cfg, tc, data


def _mem_cfgs(u: dict, steps: int):
    return [MemorizationConfig(**u["config"], steps=steps, eval_every=steps, seed=s)
            for s in u["seeds"]]


def fidelity(name: str, u: dict, steps: int = 4) -> dict:
    """The fp32 arm's loop against the library trainer, ``steps`` steps from the same seeds:
    the largest absolute difference of the results (0.0: the same numbers)."""
    if u["kind"] == "lm":
        cfg, data = LMConfig(**u["model"]), token_arrays(u["corpus"], u["model"]["V"])
        tc = _train_cfg(u, steps, 4096)
        ref = train_lm_stacked(cfg, data.train, data.test, tc, u["seeds"], CPU)
        arm = LMArm(cfg, data, tc, u["seeds"], "fp32")
        arm.advance(steps)
        got = arm.evaluate(4096)
        diff = max(max(abs(r["test_loss"] - t) for r, t in zip(ref, got["test_loss"],
                                                                strict=True)),
                   max(abs(r["train_loss"] - t) for r, t in zip(ref, got["train_loss"],
                                                                 strict=True)))
        against = "attnbook.engines.training.train_lm_stacked (test and mean training loss)"
    else:
        cfgs = _mem_cfgs(u, steps)
        ref = train_group(cfgs, CPU)
        arm = MemArm(cfgs, _Stack(cfgs, CPU), "fp32")
        arm.advance(steps)
        got = arm.evaluate()
        diff = float(max(np.max(np.abs(ref["metric"] - np.asarray(got["accuracy"]))),
                         np.max(np.abs(ref["final_loss"] - np.asarray(got["loss"])))))
        against = "attnbook.mahdavi2024.trained.train_group (accuracy and final loss)"
    return {"steps": steps, "against": against, "max_abs_diff": float(diff)}


def bench_unit(name: str, u: dict, steps: int, rounds: int) -> dict:
    load_start = os.getloadavg()
    block = steps // rounds
    steps = block * rounds
    t0 = time.perf_counter()
    if u["kind"] == "lm":
        cfg, tc, data = _lm_setup(u, steps)
        tokens = _device_tokens(data.train, CPU)
        arms = {a: LMArm(cfg, data, tc, u["seeds"], a, tokens) for a in ARMS}
    else:
        cfgs = _mem_cfgs(u, steps)
        stack = _Stack(cfgs, CPU)  # the same data for every arm (read only)
        arms = {a: MemArm(cfgs, stack, a) for a in ARMS}
    M = len(u["seeds"])
    start = (arms["fp32"].evaluate(u["eval_tokens"]) if u["kind"] == "lm"
             else {"accuracy": arms["fp32"].evaluate()["accuracy"]})  # before any step
    start.pop("train_loss", None)
    times = {a: [] for a in ARMS}
    for r in range(rounds):
        order = ARMS[r % len(ARMS):] + ARMS[:r % len(ARMS)]
        for a in order:
            t = time.perf_counter()
            arms[a].advance(block)
            times[a].append(time.perf_counter() - t)
        print(f"  {name} round {r + 1}/{rounds}: " + ", ".join(
            f"{a} {1e3 * times[a][-1] / (block * M):.1f}" for a in ARMS) + " ms per model-step",
              flush=True)
    results = {a: (arm.evaluate(u["eval_tokens"]) if u["kind"] == "lm" else arm.evaluate())
               for a, arm in arms.items()}
    tol = TOLERANCE[name]
    metrics = ["test_loss"] if u["kind"] == "lm" else ["accuracy", "loss"]
    ref = results["fp32"]
    out = {"unit": name, "chapter": u["chapter"], "what": u["what"], "models": M,
           "steps": steps, "rounds": rounds, "steps_per_round": block,
           "timed_rounds": rounds - 1, "flush_denormal": u["kind"] == "memorization",
           "load_average_start": load_start, "load_average_end": os.getloadavg(),
           "wall_s": round(time.perf_counter() - t0, 1),
           "fp32_at_start": start,
           "seed_sd_in_run": ({m: float(np.std(ref[m], ddof=1)) for m in metrics}
                              if M > 1 else None),
           "arms": {}}
    for a in ARMS:
        ratios = [f / t for f, t in zip(times["fp32"][1:], times[a][1:], strict=True)]
        ms = [1e3 * t / (block * M) for t in times[a][1:]]
        changes = {m: float(np.max(np.abs(np.asarray(results[a][m]) -
                                          np.asarray(ref[m])))) for m in metrics}
        out["arms"][a] = {
            "ms_per_model_step": round(statistics.median(ms), 3),
            "ratio_to_fp32": round(statistics.median(ratios), 3),
            "ratio_min": round(min(ratios), 3), "ratio_max": round(max(ratios), 3),
            "ratios": [round(x, 3) for x in ratios],
            "first_round_s": round(times[a][0], 2),
            "result": results[a], "change": changes,
            "tolerance": {m: tol[m] for m in metrics},
            "within_tolerance": all(changes[m] <= tol[m] for m in metrics),
            "reaches_goal": statistics.median(ratios) >= GOAL,
        }
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true",
                    help="a smoke run of the script: 4 steps in 2 rounds per unit, the compile "
                         "arms traced by torch.compile (dynamo) and run by its eager backend "
                         "instead of Inductor (no code generated); its numbers mean nothing")
    ap.add_argument("--units", default=",".join(UNITS), help="comma-separated, of " +
                    ", ".join(UNITS))
    ap.add_argument("--steps-scale", type=float, default=1.0,
                    help="every unit's steps x this (rounds kept)")
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args(argv)
    names = [n for n in args.units.split(",") if n]
    bad = [n for n in names if n not in UNITS]
    if bad or not names:
        ap.error(f"--units {args.units}: allowed {', '.join(UNITS)}")
    if not args.steps_scale > 0:
        ap.error("--steps-scale: a factor > 0")
    torch.set_num_threads(1)
    if args.quick:
        COMPILE["backend"] = "eager"
    meta = provenance(CPU)
    from torch._inductor.runtime.cache_dir_utils import cache_dir
    cache = Path(cache_dir())
    load = os.getloadavg()
    flags = open("/proc/cpuinfo").read() if os.path.exists("/proc/cpuinfo") else ""
    print(f"{meta['device']} | commit {meta['commit']} | torch {torch.__version__} | 1 thread | "
          f"load {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} | avx512_bf16 "
          f"{'avx512_bf16' in flags}", flush=True)
    out = {"benchmark": "cheaper_step", "device": "cpu", "threads": torch.get_num_threads(),
           "torch": torch.__version__, "commit": commit(), "provenance": meta,
           "cpu_avx512_bf16": "avx512_bf16" in flags, "quick": args.quick,
           "compile_backend": COMPILE["backend"],
           "inductor_cache": {"dir": str(cache), "warm_at_start": cache.is_dir() and any(
               cache.iterdir())},  # a warm cache shortens the first round's compiling
           "arms": {"fp32": "today's path: float32 eager",
                    "bf16": "torch.autocast('cpu', dtype=torch.bfloat16) around the forward; "
                            "loss, gradients and optimizer in float32",
                    "compile": "torch.compile of the forward pass and loss (backward compiled "
                               "with it); batches, dropout masks and optimizer step eager",
                    "bf16+compile": "both"},
           "goal": f"at least {GOAL:g}x less time per model-step than fp32 eager (ratio >= "
                   f"{GOAL:g})",
           "differs_from_trainer": DIFFERS,
           "tolerance_rule": TOLERANCE_RULE,
           "tolerance": {n: TOLERANCE[n] for n in names},
           "timing": "per unit, every arm trains the same steps in equal rounds; each round "
                     "runs every arm's block, order rotated per round; the first round "
                     "(compiling) is warm-up; ratio = median over the other rounds of fp32 "
                     "time / arm time",
           "load_average_start": load, "units": []}
    for n in names:
        u = UNITS[n]
        steps, rounds = (4, 2) if args.quick else (
            max(u["rounds"], round(u["steps"] * args.steps_scale)), u["rounds"])
        torch.set_flush_denormal(u["kind"] == "memorization")  # as each chapter's long profile
        print(f"{n}: {u['what']}", flush=True)
        fid = fidelity(n, u)
        print(f"  fidelity: fp32 loop against the library trainer, {fid['steps']} steps: largest "
              f"difference {fid['max_abs_diff']:.3g}", flush=True)
        r = bench_unit(n, u, steps, rounds)
        r["fidelity"] = fid
        out["units"].append(r)
        for a, v in r["arms"].items():
            ch = ", ".join(f"{m} change {c:.2g} (tol {v['tolerance'][m]:g})"
                           for m, c in v["change"].items())
            print(f"  {a:13s} {v['ms_per_model_step']:8.2f} ms/model-step  "
                  f"x{v['ratio_to_fp32']:.2f} ({v['ratio_min']:.2f}-{v['ratio_max']:.2f})  {ch}  "
                  f"{'inside' if v['within_tolerance'] else 'OUTSIDE'}", flush=True)
        out["load_average_end"] = os.getloadavg()
        write_json(args.out, out)  # after every unit, so a stopped run keeps what it measured
    out["verdict"] = {a: {
        "ratio_per_unit": {r["unit"]: r["arms"][a]["ratio_to_fp32"] for r in out["units"]},
        "within_tolerance_per_unit": {r["unit"]: r["arms"][a]["within_tolerance"]
                                      for r in out["units"]},
        "reaches_goal_per_unit": {r["unit"]: r["arms"][a]["reaches_goal"]
                                  for r in out["units"]}} for a in ARMS if a != "fp32"}
    out["load_average_end"] = os.getloadavg()
    write_json(args.out, out)
    if args.out:
        print("wrote", args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
