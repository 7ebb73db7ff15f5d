"""Training several seeds of one language model as one stacked program, against one at a time.

The stacked side is ``attnbook.engines.training.train_lm_stacked`` (M models of one ``LMConfig``,
one per seed, a leading model axis on every weight, one AdamW); the other side is what a sweep
does today, ``train_lm`` once per seed. Both train the same models on the same batches with
the same dropout masks (on the CPU they give the same numbers up to float rounding), include
the final test evaluation, run in one process on the same device with the same thread count,
and alternate within each repeat (which side goes first alternates too), so that a change of
machine load hits both alike; the median of the per-repeat ratios is reported, with the
tokens per second of each side.

Stacking removes per-op overhead (dispatch, allocation, launches), not arithmetic. Each case
therefore also times one model's training step at its size (``step_full_s``) and at B = 1,
T = 8 (``step_tiny_s``: the same ops on 8 tokens, i.e. the per-step overhead), and reports the
speed-up a perfect stack could reach, ``ceiling = M t_full / (M (t_full - t_tiny) + t_tiny)``
(every model's arithmetic kept, the overhead paid once). A measured speed-up near the ceiling
means the stack does its job; a ceiling below a goal means no stack reaches the goal at that
size on that device. Sizes are those of a 2-core CPU profile (wies2021 at a small
scale: V up to 256, N = 64, L 1-2, d_x 32-96, H = 2); ``--adamw`` also times the stack's
AdamW implementations (for-loop, foreach, fused).

    .venv/bin/python benchmarks/bench_lm_stacked.py [--threads 1,2] [--repeats 3] [--steps 40]
        [--device cpu] [--adamw] [--out benchmarks/results/lm_stacked_cpu.json]
"""

import argparse
import dataclasses
import json
import os
import statistics
import time
from pathlib import Path

import numpy as np
import torch
from _common import commit, sync

from attnbook.book.provenance import provenance
from attnbook.device import pick_device
from attnbook.engines.lm import LanguageModel, LMConfig
from attnbook.engines.training import (
    TrainConfig,
    _optimizer,
    train_lm,
    train_lm_stacked,
    train_step,
)
from attnbook.progress import progress_bar

# (name, LMConfig keywords, batch, models per stack)
CASES = [
    ("V64 L1 d32 B16 M8", dict(V=64, N=64, L=1, d_x=32), 16, 8),
    ("V128 L1 d32 r4 r_e8 B32 M6", dict(V=128, N=64, L=1, d_x=32, r=4, r_e=8), 32, 6),
    ("V128 L2 d64 B16 M4", dict(V=128, N=64, L=2, d_x=64), 16, 4),
    ("V128 L2 d64 B16 M4 dropout0", dict(V=128, N=64, L=2, d_x=64, dropout=0.0), 16, 4),
    ("V256 L2 d96 B32 M3", dict(V=256, N=64, L=2, d_x=96), 32, 3),
]


def _tokens(V: int, n: int, seed: int = 0) -> np.ndarray:
    """A corpus with structure (next token = previous + 1 mod V, 10% noise)."""
    rng = np.random.default_rng(seed)
    return ((np.arange(n) + rng.integers(0, V, n) * (rng.random(n) < 0.1)) % V).astype(np.uint16)


def step_time(cfg: LMConfig, batch: int, T: int, device, steps: int, repeats: int) -> float:
    """Median seconds of one ``train_step`` of one model (batch x T tokens), after warm-up."""
    torch.manual_seed(0)
    model = LanguageModel(cfg).to(device).train()
    opt = _optimizer(model, TrainConfig(steps=steps, batch=batch))
    x = torch.randint(0, cfg.V, (batch, T), device=device)
    y = torch.randint(0, cfg.V, (batch, T), device=device)
    for _ in range(3):
        train_step(model, opt, x, y, device)
    times = []
    for _ in range(repeats):
        sync(device)
        t0 = time.perf_counter()
        for _ in range(steps):
            train_step(model, opt, x, y, device)
        sync(device)
        times.append((time.perf_counter() - t0) / steps)
    return statistics.median(times)


def ceiling(cfg: LMConfig, batch: int, M: int, steps: int, repeats: int, device) -> dict:
    """The per-step overhead of one model and the speed-up a perfect stack of M could reach."""
    full = step_time(cfg, batch, cfg.N, device, steps, repeats)
    tiny = step_time(dataclasses.replace(cfg, N=8), 1, 8, device, steps, repeats)
    return {"step_full_s": full, "step_tiny_s": tiny, "overhead_share": tiny / full,
            "ceiling": M * full / (M * max(full - tiny, 0.0) + tiny)}


def bench(name, kw, batch, M, steps, repeats, device, adamw=False) -> dict:
    cfg = LMConfig(H=2, **kw)
    train, test = _tokens(cfg.V, 200_000), _tokens(cfg.V, 4_000, seed=1)
    tc = TrainConfig(steps=steps, batch=batch, lr=1e-3, warmup=steps // 10, eval_tokens=2048)
    seeds = list(range(M))

    def stacked(opt=None):
        sync(device)
        t0 = time.perf_counter()
        train_lm_stacked(cfg, train, test, tc, seeds, device, optimizer=opt)
        sync(device)
        return time.perf_counter() - t0

    def one_at_a_time():
        sync(device)
        t0 = time.perf_counter()
        for s in seeds:
            train_lm(lambda: LanguageModel(cfg), train, test, cfg.N, tc, seed=s, device=device)
        sync(device)
        return time.perf_counter() - t0

    short = TrainConfig(steps=3, batch=batch, eval_tokens=256)  # warm-up of both code paths
    train_lm_stacked(cfg, train, test, short, seeds, device)
    train_lm(lambda: LanguageModel(cfg), train, test, cfg.N, short, seed=0, device=device)
    st, seq = [], []
    for r in range(repeats):
        if r % 2:
            seq.append(one_at_a_time())
            st.append(stacked())
        else:
            st.append(stacked())
            seq.append(one_at_a_time())
    ratios = [b / a for a, b in zip(st, seq, strict=True)]
    tokens = M * steps * batch * cfg.N
    out = {"case": name, "config": {**kw, "H": 2, "dropout": cfg.dropout}, "batch": batch,
           "models": M, "steps": steps, "stacked_s": statistics.median(st),
           "one_at_a_time_s": statistics.median(seq), "speedup": statistics.median(ratios),
           "speedup_min": min(ratios), "speedup_max": max(ratios), "ratios": ratios,
           "stacked_tokens_per_s": tokens / statistics.median(st),
           "one_at_a_time_tokens_per_s": tokens / statistics.median(seq),
           **ceiling(cfg, batch, M, steps, repeats, device)}
    if adamw:
        times = {k: [] for k in ("for-loop", "foreach", "fused")}
        for _ in range(repeats):
            for k in times:
                times[k].append(stacked(k))
        out["stacked_adamw_s"] = {k: statistics.median(v) for k, v in times.items()}
    return out


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=40)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--threads", default="0",
                    help="torch CPU threads, or a comma-separated list run one after another "
                         "(0: torch's default)")
    ap.add_argument("--device", default="cpu", help="cpu, cuda or auto")
    ap.add_argument("--cases", default="", help="comma-separated case indices (default: all)")
    ap.add_argument("--adamw", action="store_true", help="also time the stack's AdamW variants")
    ap.add_argument("--out", type=Path, help="also write the results here (JSON)")
    a = ap.parse_args()
    dev = pick_device(a.device)
    meta = provenance(dev)
    picked = [CASES[int(i)] for i in a.cases.split(",")] if a.cases else CASES
    runs = []

    def write():  # after every case, so that a stopped run keeps what it measured
        if not a.out:
            return
        a.out.parent.mkdir(parents=True, exist_ok=True)
        a.out.write_text(json.dumps({
            "commit": commit(), "commit_short": meta["commit"], "device": meta["device"],
            "threads": [r["threads"] for r in runs], "torch": torch.__version__,
            "versions": meta["versions"], "time": meta["time"], "steps": a.steps,
            "repeats": a.repeats, "runs": runs}, indent=1) + "\n")

    for threads in [int(t) for t in a.threads.split(",")]:
        if threads:
            torch.set_num_threads(threads)
        load = os.getloadavg()
        print(f"{meta['device']} | commit {meta['commit']} | {torch.get_num_threads()} threads "
              f"| load {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}", flush=True)
        run = {"threads": torch.get_num_threads(), "load_average_start": load, "results": []}
        runs.append(run)
        for case in progress_bar(picked, desc=f"cases ({torch.get_num_threads()} threads)"):
            r = bench(*case, a.steps, a.repeats, dev, a.adamw)
            run["results"].append(r)
            run["load_average_end"] = os.getloadavg()
            write()
            extra = "" if "stacked_adamw_s" not in r else " | AdamW " + ", ".join(
                f"{k} {v:.2f} s" for k, v in r["stacked_adamw_s"].items())
            print(f"{r['case']}, {a.steps} steps: stacked {r['stacked_s']:.2f} s "
                  f"({r['stacked_tokens_per_s']:.0f} tok/s), one at a time "
                  f"{r['one_at_a_time_s']:.2f} s ({r['one_at_a_time_tokens_per_s']:.0f} tok/s), "
                  f"speed-up {r['speedup']:.2f}x (median of {a.repeats}; "
                  f"{r['speedup_min']:.2f}-{r['speedup_max']:.2f}x); overhead "
                  f"{100 * r['overhead_share']:.0f}% of a step, ceiling "
                  f"{r['ceiling']:.2f}x{extra}", flush=True)
    if a.out:
        print("wrote", a.out)
