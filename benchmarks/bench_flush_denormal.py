"""Subnormal floats in the stacked memorization step on a CPU: IEEE against flushed to zero.

Once the heads of a memorization model saturate (mahdavi2024, Appendix H), its softmax
coefficients off the attended token underflow towards zero and the training step meets many
subnormal floats (below 1.2e-38), which x86 CPUs process far more slowly than normal ones.
``torch.set_flush_denormal(True)`` flushes them to zero. This times the training step of the
``full`` group of ``mahdavi2024_fig3_saturation`` (its .yml: 2 H x 8 T, d 64, n 32) both ways, each
measurement in a fresh process, interleaved and repeated from the same state, and reports the
median milliseconds per step, the speed-up, and the largest relative change of the models'
losses after the timed steps.

The state timed is either the group's initialisation with its query weights scaled by
``--saturate`` (a stand-in: the softmax saturates from the first step, though less like a
trained model's; 1 leaves it as initialised) or a checkpoint of the chapter's own training
(``--checkpoint``, a file under ``data/checkpoints/mahdavi2024_fig3_saturation/full/``, kept
only while that training runs). The chapter's numbers (61 against 19 ms per step at step
28,716, two threads) come from such a checkpoint. A GPU is unaffected.

    .venv/bin/python benchmarks/bench_flush_denormal.py [--steps 50] [--repeats 3]
        [--saturate 1000] [--checkpoint PATH] [--out benchmarks/results/flush_denormal_cpu.json]
"""

import argparse
import multiprocessing
import statistics
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np
import torch
from _common import max_rel_change, write_json

from attnbook import paths
from attnbook.book.checkpoints import load_state
from attnbook.book.profiles import load_spec
from attnbook.book.provenance import provenance
from attnbook.mahdavi2024.trained import (
    MemorizationConfig,
    StackedAttention,
    _batch_indices,
    _loss,
    _Stack,
    lr_factor,
)

MODES = ("ieee", "flushed")


def group() -> list[MemorizationConfig]:
    """The full profile's group of mahdavi2024_fig3_saturation, from the chapter's parameters:
    every H by every multiple of H(n-1)+1."""
    spec = load_spec(paths.NOTEBOOKS / "mahdavi2024_fig3_saturation.ipynb")
    p = {**spec.defaults, **spec.parameters("full")}  # what papermill injects overrides
    return [MemorizationConfig(H=H, T=max(1, round(f * (H * (p["n"] - 1) + 1))), n=p["n"],
                               d=p["d"], d_h=p["d_h"], n_classes=p["n_classes"],
                               steps=p["steps"], batch=p["batch"], lr=p["lr"],
                               eval_every=p["eval_every"], seed=p["seed"])
            for H in p["heads"] for f in p["T_factors"]]


def start_state(cfgs, saturate: float, checkpoint: Path | None):
    """The models, Adam and its schedule to time from, and their step."""
    net = StackedAttention(cfgs)
    opt = torch.optim.Adam(net.parameters(), lr=cfgs[0].lr, fused=True)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: lr_factor(s, cfgs[0].steps))
    step = 0
    if checkpoint is not None:
        saved = load_state(checkpoint, "cpu")["state"]  # data only, as the book reads it
        net.load_state_dict(saved["net"])
        opt.load_state_dict(saved["opt"])
        sched.load_state_dict(saved["sched"])
        step = saved["step"]
    else:
        with torch.no_grad():
            net.W_Q.mul_(saturate)
    return net, opt, sched, step


def measure(mode: str, saturate: float, checkpoint: Path | None, steps: int,
            threads: int) -> tuple[float, np.ndarray, int]:
    """``steps`` training steps in ``mode`` from the start state: (ms per step, final losses,
    the step they started from).

    Run in a fresh process: the flag lives in each thread's floating-point control register,
    and threads inherit it only when they start, so torch's worker threads must start after
    it is set (set later, it reaches the calling thread alone)."""
    torch.set_flush_denormal(mode == "flushed")
    torch.set_num_threads(threads)
    cfgs = group()
    c0 = cfgs[0]
    net, opt, sched, step = start_state(cfgs, saturate, checkpoint)
    data = _Stack(cfgs, torch.device("cpu"))
    streams = torch.tensor([c.init_seed() for c in cfgs], dtype=torch.int64)
    t0 = time.perf_counter()
    for s in range(step, step + steps):
        q, ctx, y = data.batch(_batch_indices(streams, s, c0.batch, data.T_m))
        loss = _loss(net(q, ctx), y, c0.task)
        opt.zero_grad(set_to_none=True)
        loss.sum().backward()
        opt.step()
        sched.step()
    return 1e3 * (time.perf_counter() - t0) / steps, loss.detach().numpy(), step


def in_fresh_process(*args):
    """:func:`measure` in a new interpreter (spawned, so no thread of this one carries over)."""
    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
        return pool.submit(measure, *args).result()


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--steps", type=int, default=50, help="timed steps per mode and repeat")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--saturate", type=float, default=1000.0,
                    help="factor on the initial query weights (ignored with --checkpoint)")
    ap.add_argument("--checkpoint", type=Path, default=None)
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args(argv)
    if args.steps < 1 or args.repeats < 1:
        ap.error("--steps and --repeats: allowed whole numbers >= 1")
    if not args.saturate > 0:
        ap.error(f"--saturate {args.saturate}: allowed a number > 0")
    if args.checkpoint is not None and not args.checkpoint.is_file():
        ap.error(f"--checkpoint {args.checkpoint}: no such file")
    if not torch.set_flush_denormal(False):
        ap.error("this CPU cannot flush subnormals (torch.set_flush_denormal needs x86 SSE3)")
    threads = torch.get_num_threads()
    times = {m: [] for m in MODES}
    losses = {}
    for _ in range(args.repeats):
        for m in MODES:
            ms, losses[m], step = in_fresh_process(m, args.saturate, args.checkpoint,
                                                   args.steps, threads)
            times[m].append(ms)
    ref = losses["ieee"]
    change = max_rel_change(losses["flushed"], ref)
    med = {m: statistics.median(t) for m, t in times.items()}
    out = {"benchmark": "flush_denormal", "device": "cpu", "threads": threads,
           "models": len(group()), "start": (f"checkpoint at step {step}" if args.checkpoint
                                             else f"initialisation, W_Q x {args.saturate:g}"),
           "steps": args.steps, "repeats": args.repeats,
           "provenance": provenance(torch.device("cpu")),
           "ms_per_step": {m: round(v, 3) for m, v in med.items()},
           "speedup": round(med["ieee"] / med["flushed"], 3), "max_rel_loss_change": change}
    print(f"{out['start']}: IEEE {med['ieee']:.2f} ms/step, flushed {med['flushed']:.2f} ms/step "
          f"(x{out['speedup']:.2f}); largest relative loss change {change:.2e}")
    write_json(args.out, out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
