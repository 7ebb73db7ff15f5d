"""Launch overhead of the stacked memorization step: eager, ``torch.compile``, CUDA graphs.

A stacked memorization group (mahdavi2024, ``train_group``) is a few hundred small kernels per
step, so on a GPU its 300,000-step groups are bound by kernel launches, not arithmetic. This
times the same group's training step, in one process, three ways:

* ``eager``: the library's step as ``train_group`` runs it;
* ``compile``: the forward pass and loss under ``torch.compile`` (Inductor fuses the small
  element-wise kernels; the backward pass is compiled with it);
* ``graphs``: the same with ``mode="reduce-overhead"``, which also replays it as a CUDA graph
  (CUDA only).

The batches (a hash of model and step) and the fused Adam step stay outside the compiled part,
as in the library. Per mode it reports the milliseconds per step after warm-up, the speed-up
over eager, the seconds spent compiling (the warm-up), and the largest relative change of the
models' losses after the timed steps: a mode is only worth adopting in ``train_group`` if it
is much faster and leaves the losses as they are (to float32 rounding). The library does not
use either yet; this measurement decides whether it should.

    .venv/bin/python benchmarks/bench_compile.py [--device auto] [--steps 300] [--warmup 30]
        [--modes eager,compile,graphs] [--out benchmarks/results/compile_<device>.json]
"""

import argparse
import time
from pathlib import Path

import torch
from _common import max_rel_change, sync, write_json

from attnbook.book.provenance import provenance
from attnbook.device import pick_device
from attnbook.mahdavi2024.trained import (
    MemorizationConfig,
    StackedAttention,
    _batch_indices,
    _loss,
    _Stack,
    lr_factor,
)

MODES = ("eager", "compile", "graphs")


def group(scale_steps: int):
    """The group timed: 2 head counts x 6 dataset sizes, as the saturation chapter stacks."""
    return [MemorizationConfig(H=H, T=T, n=16, d=64, d_h=64, steps=scale_steps, eval_every=500)
            for H in (4, 8) for T in (40, 80, 160, 320, 640, 1280)]


def measure(mode: str, cfgs, device, warmup: int, steps: int) -> dict:
    """Train ``warmup`` then ``steps`` steps of the group in ``mode``; time the latter."""
    c0 = cfgs[0]
    net = StackedAttention(cfgs).to(device)
    data = _Stack(cfgs, device)
    streams = torch.tensor([c.init_seed() for c in cfgs], dtype=torch.int64, device=device)
    opt = torch.optim.Adam(net.parameters(), lr=c0.lr, fused=True)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: lr_factor(s, c0.steps))

    def loss_fn(q, ctx, y):
        return _loss(net(q, ctx), y, c0.task)

    if mode == "compile":
        loss_fn = torch.compile(loss_fn)
    elif mode == "graphs":
        loss_fn = torch.compile(loss_fn, mode="reduce-overhead")

    def run(start, n):
        loss = None
        for s in range(start, start + n):
            if mode == "graphs":
                torch.compiler.cudagraph_mark_step_begin()
            q, ctx, y = data.batch(_batch_indices(streams, s, c0.batch, data.T_m))
            # gradients dropped before the forward pass (train_group drops them after it: the
            # same numbers), so no graph replay can overwrite memory a .grad still holds
            opt.zero_grad(set_to_none=True)
            loss = loss_fn(q, ctx, y)
            loss.sum().backward()
            opt.step()
            sched.step()
        return loss.detach().clone()

    t0 = time.perf_counter()
    run(0, warmup)
    sync(device)
    t1 = time.perf_counter()
    loss = run(warmup, steps)
    sync(device)
    t2 = time.perf_counter()
    return {"ms_per_step": 1e3 * (t2 - t1) / steps, "warmup_s": t1 - t0,
            "loss": loss.float().cpu().numpy()}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--device", default="auto")
    ap.add_argument("--steps", type=int, default=300, help="timed steps per mode")
    ap.add_argument("--warmup", type=int, default=30, help="steps before timing (compiles)")
    ap.add_argument("--modes", default=",".join(MODES), help="comma-separated, of " +
                    ", ".join(MODES))
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args(argv)
    modes = [m for m in args.modes.split(",") if m]
    bad = [m for m in modes if m not in MODES]
    if bad or "eager" not in modes:
        ap.error(f"--modes {args.modes}: allowed {', '.join(MODES)}, eager included")
    if args.steps < 1 or args.warmup < 1:
        ap.error("--steps and --warmup: allowed whole numbers >= 1")
    device = pick_device(args.device)
    if device.type != "cuda" and "graphs" in modes:
        modes.remove("graphs")
        print("graphs: CUDA graphs need a GPU; not run on", device.type)
    cfgs = group(args.warmup + args.steps)
    rows = {m: measure(m, cfgs, device, args.warmup, args.steps) for m in modes}
    ref = rows["eager"]["loss"]
    out = {"benchmark": "compile", "device": str(device), "models": len(cfgs),
           "group": "H in (4, 8) x T in (40, ..., 1280), n 16, d 64, d_h 64, batch "
                    f"{cfgs[0].batch}", "warmup": args.warmup, "steps": args.steps,
           "provenance": provenance(device), "modes": {}}
    for m, r in rows.items():
        change = max_rel_change(r["loss"], ref)
        out["modes"][m] = {"ms_per_step": round(r["ms_per_step"], 4),
                           "speedup": round(rows["eager"]["ms_per_step"] / r["ms_per_step"], 3),
                           "warmup_s": round(r["warmup_s"], 2),
                           "max_rel_loss_change": change}
        print(f"{m:8s} {r['ms_per_step']:8.3f} ms/step  x{out['modes'][m]['speedup']:.2f}  "
              f"warm-up {r['warmup_s']:.1f} s  largest relative loss change {change:.2e}")
    write_json(args.out, out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
