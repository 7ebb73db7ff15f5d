"""Throughput of the batched memorization engine against training the same models one by one.

Both sides run in one process on the same device, with the same thread count, interleaved and
repeated (the median ratio is reported), so the ratio is meaningful on a busy machine even when
the absolute times are not. The batched side groups the models as ``train_sweep`` does
(``plan_groups``); the other side trains each model alone with the same engine. Also prints
the engine's measured FLOP rate and the time the ``full`` profile would take at a given
sustained rate (mahdavi2024 Figures 2-5 at the paper's d, n, H, T and steps).

    .venv/bin/python benchmarks/bench_memorization_gd.py [--models 16] [--steps 200] [--threads 1]
        [--repeats 3] [--out benchmarks/results/memorization_gd_cpu.json]
"""

import argparse
import json
import statistics
import time
from pathlib import Path

import torch

from attnbook.book.provenance import provenance
from attnbook.device import pick_device
from attnbook.mahdavi2024.trained import (
    MemorizationConfig,
    plan_groups,
    train_group,
    training_flops,
)


def _configs(models: int, steps: int, d: int, context: str, mixed: bool
             ) -> list[MemorizationConfig]:
    Hs = [1, 2, 4, 6, 8] if mixed else [4]  # a heads panel, or a panel of T and seeds
    return [MemorizationConfig(H=Hs[i % len(Hs)], T=256 * (1 + i % 2), n=d // 2, d=d, d_h=d,
                               steps=steps, eval_every=10**9, context=context, seed=i)
            for i in range(models)]


def bench(models: int, steps: int, d: int, context: str, mixed: bool, device,
          repeats: int = 3) -> dict:
    cfgs = _configs(models, steps, d, context, mixed)
    groups = plan_groups(cfgs)
    train_group([MemorizationConfig(**{**cfgs[0].__dict__, "steps": 5})], device)  # warm-up
    batched, sequential = [], []
    for _ in range(repeats):  # interleaved, so that load changes hit both sides alike
        t0 = time.perf_counter()
        for g in groups:
            train_group(g, device)
        batched.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        for c in cfgs:
            train_group([c], device)
        sequential.append(time.perf_counter() - t0)
    ratios = [s / b for s, b in zip(sequential, batched, strict=True)]
    flops = sum(training_flops(c) for c in cfgs)
    return {"models": models, "steps": steps, "d": d, "context": context,
            "H": "1-8 mixed" if mixed else "4", "groups": [len(g) for g in groups],
            "batched_s": statistics.median(batched), "sequential_s": statistics.median(sequential),
            "speedup": statistics.median(ratios), "speedup_min": min(ratios),
            "speedup_max": max(ratios), "batched_gflops": flops / min(batched) / 1e9}


def full_profile_flops() -> float:
    """FLOPs of the full profile's sweeps (the notebooks' full settings, paper scale)."""
    def steps(T, base):
        return max(base, -(-500 * T // 256))

    total = 0.0
    for ctx, Ts_h, Ts_n in [("shared", (10_000, 20_000, 30_000, 40_000), (6000, 10_000, 14_000)),
                            ("per_example", (30_000, 50_000, 70_000), (20_000, 40_000, 60_000))]:
        for task in ("classification", "regression"):
            for T in Ts_h:
                for H in (1, 5, 10, 20, 30, 40, 50, 60):
                    total += training_flops(MemorizationConfig(
                        H=H, T=T, n=32, steps=steps(T, 50_000), task=task, context=ctx))
            for T in Ts_n:
                for n in (1, 5, 10, 20, 30, 40, 50, 60):
                    total += training_flops(MemorizationConfig(
                        H=20, T=T, n=n, steps=steps(T, 50_000), task=task, context=ctx))
    for T in (10_000, 15_000, 20_000):  # Fig. 2(c): H = 30, n = 32, 300k steps
        for d_h in (2, 4, 8, 16, 24, 32, 48, 64):
            total += training_flops(MemorizationConfig(H=30, T=T, d_h=d_h, steps=300_000))
    for H, Ts in ((4, (400, 550, 700)), (8, (1000, 1300, 1600))):  # Fig. 3, 300k steps
        for T in Ts:
            total += training_flops(MemorizationConfig(H=H, T=T, steps=300_000))
    return total


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", type=int, default=16)
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--d", type=int, default=16)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--threads", type=int, default=0, help="torch CPU threads (0: default)")
    ap.add_argument("--device", default="auto")
    ap.add_argument("--out", type=Path, help="also write the results here (JSON)")
    a = ap.parse_args()
    if a.threads:
        torch.set_num_threads(a.threads)
    dev = pick_device(a.device)
    meta = provenance(dev)
    print(meta["device"], "| commit", meta["commit"])
    rows = []
    for context, mixed in (("shared", False), ("shared", True), ("per_example", False)):
        r = bench(a.models, a.steps, a.d, context, mixed, dev, a.repeats)
        rows.append(r)
        print(f"{r['models']} models, d={r['d']}, H {r['H']}, {context}, {r['steps']} steps, "
              f"groups {r['groups']}: batched {r['batched_s']:.2f} s, one after another "
              f"{r['sequential_s']:.2f} s, speed-up {r['speedup']:.1f}x (median of {a.repeats}; "
              f"{r['speedup_min']:.1f}-{r['speedup_max']:.1f}x), "
              f"batched {r['batched_gflops']:.1f} GFLOP/s")
    F = full_profile_flops()
    print(f"full profile: {F / 1e15:.2f} PFLOP; at 10 TFLOP/s sustained: {F / 1e13 / 3600:.2f} h, "
          f"at 20 TFLOP/s: {F / 2e13 / 3600:.2f} h")
    if a.out:
        a.out.parent.mkdir(parents=True, exist_ok=True)
        a.out.write_text(json.dumps({**meta, "threads": torch.get_num_threads(),
                                     "results": rows, "full_profile_pflop": F / 1e15},
                                    indent=1) + "\n")
        print("wrote", a.out)
