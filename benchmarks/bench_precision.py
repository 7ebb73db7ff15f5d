"""Lower precision for the stacked trainings: time saved against what it changes in the results.

The furthest-neighbour lines (bruna2024) and the memorization groups (mahdavi2024) train in
plain float32. On a GPU, TF32 matmuls or bf16 autocast may be much faster, but both models are
judged on fine numbers (a minimum MSE that differs by a factor between ranks, exact 100%
memorization), so a faster mode is only usable if it leaves those numbers as they are. This
trains the same models in each mode, in one process, interleaved and repeated, and reports per
mode the median time ratio to float32 and the largest change of the result:

* ``line``: one furthest-neighbour line (``train_line_config``), its min held-out MSE per
  model, relative change;
* ``memorization``: one stacked group (``train_group``), its training accuracy per model,
  absolute change.

Modes: ``fp32``; ``tf32`` (CUDA only: ``torch.backends.cuda.matmul.allow_tf32``); ``bf16``
(``torch.autocast`` around the training, on the device's type). On the CPU only fp32 and bf16
run (bf16 is slower there; the CPU run checks the script, the GPU run decides).

    .venv/bin/python benchmarks/bench_precision.py [--device auto] [--repeats 3] [--scale 1.0]
        [--out benchmarks/results/precision_<device>.json]
"""

import argparse
import contextlib
import json
import statistics
import time
from pathlib import Path

import numpy as np
import torch
from _common import sync

from attnbook.book.provenance import provenance
from attnbook.bruna2024 import furthest_neighbour as fn
from attnbook.device import pick_device
from attnbook.mahdavi2024.trained import MemorizationConfig, train_group


@contextlib.contextmanager
def precision(mode: str, device):
    """Run the block in ``mode`` ("fp32", "tf32", "bf16"), restoring torch's settings after."""
    old = torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = mode == "tf32"
    try:
        if mode == "bf16":
            with torch.autocast(device.type, dtype=torch.bfloat16):
                yield
        else:
            yield
    finally:
        torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = old


def _line(device, scale):
    config = {"kind": "attention", "d": 16, "N": 16, "rank_heads": 64, "seed": 0}
    settings = fn.TrainSettings(steps=max(20, int(2000 * scale)), batch=256, warmup=10,
                                eval_every=max(10, int(200 * scale)), eval_size=2048)

    def run():
        return np.asarray(fn.train_line_config(config, settings, device=device)["min_loss"])
    return run, "relative"


def _memorization(device, scale):
    cfgs = [MemorizationConfig(H=H, T=T, n=16, d=64, d_h=64, steps=max(20, int(3000 * scale)),
                               eval_every=max(10, int(500 * scale)), seed=s)
            for H in (2, 4, 8) for T in (40, 80) for s in (0, 1)]

    def run():
        return np.asarray(train_group(cfgs, device)["metric"])
    return run, "absolute"


CASES = {"line": _line, "memorization": _memorization}


def bench(case: str, device, modes, repeats: int, scale: float) -> dict:
    run, kind = CASES[case](device, scale)
    times = {m: [] for m in modes}
    values = {}
    for r in range(repeats):  # interleaved, rotating the order, so load hits every mode alike
        for m in modes[r % len(modes):] + modes[:r % len(modes)]:
            with precision(m, device):
                sync(device)
                t0 = time.perf_counter()
                values[m] = run()
                sync(device)
            times[m].append(time.perf_counter() - t0)
    ref = values["fp32"]
    out = {"case": case, "change": kind, "modes": {}}
    for m in modes:
        diff = np.abs(values[m] - ref)
        change = diff / np.maximum(np.abs(ref), 1e-12) if kind == "relative" else diff
        out["modes"][m] = {"seconds": statistics.median(times[m]),
                           "speedup_vs_fp32": statistics.median(
                               [a / b for a, b in zip(times["fp32"], times[m], strict=True)]),
                           "max_change": float(change.max()), "values": values[m].tolist()}
    return out


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default="auto", help="cpu, cuda or auto")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--scale", type=float, default=1.0, help="steps x scale (0.01: a smoke run)")
    ap.add_argument("--cases", default="line,memorization")
    ap.add_argument("--out", type=Path, help="also write the results here (JSON)")
    a = ap.parse_args()
    dev = pick_device(a.device)
    modes = ["fp32", "tf32", "bf16"] if dev.type == "cuda" else ["fp32", "bf16"]
    meta = provenance(dev)
    print(f"{meta['device']} | commit {meta['commit']} | modes {', '.join(modes)}", flush=True)
    results = []
    for case in a.cases.split(","):
        r = bench(case, dev, modes, a.repeats, a.scale)
        results.append(r)
        for m, v in r["modes"].items():
            print(f"{case:13s} {m}: {v['seconds']:.2f} s, {v['speedup_vs_fp32']:.2f}x fp32, "
                  f"largest {r['change']} change of the result {v['max_change']:.2e}", flush=True)
        if a.out:
            a.out.parent.mkdir(parents=True, exist_ok=True)
            a.out.write_text(json.dumps({**{k: meta[k] for k in ("commit", "device", "versions",
                                                                    "time")},
                                         "repeats": a.repeats, "scale": a.scale,
                                         "results": results}, indent=1) + "\n")
    if a.out:
        print("wrote", a.out)
