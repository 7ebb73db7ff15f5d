"""A line of constant rH in one tensor program versus its models one by one.

``attnbook.bruna2024.furthest_neighbour.RankedAttention`` evaluates the M models of a line (per-head
ranks r = 1, 2, ..., d with H = rH / r heads) as one batched program. This script measures,
in one run on one machine, the time of a training step (forward + backward on one batch) of
the batched line against the sum of the steps of the same M models built and stepped one at
a time, and the step of the line of off-the-shelf ``nn.TransformerEncoderLayer`` models.

Usage: ``.venv/bin/python benchmarks/bench_ranked_attention.py [--d 16] [--N 8] [--batch 128]
[--device auto] [--out benchmarks/results/ranked_attention_<device>.json]``.
Timings depend on the machine and its load; the ratio is the robust number.
"""

import argparse
import json
import time
from pathlib import Path

import torch

from attnbook.book.provenance import provenance
from attnbook.bruna2024 import furthest_neighbour as fn
from attnbook.device import pick_device


def _step_time(model, X, Y, repeats):
    def step():
        loss = ((model(X) - Y) ** 2).sum(-1).mean(dim=(-1, -2)).sum()
        loss.backward()

    step()  # warm-up
    if X.is_cuda:
        torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(repeats):
        step()
    if X.is_cuda:
        torch.cuda.synchronize()
    return (time.perf_counter() - t0) / repeats


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--d", type=int, default=16)
    ap.add_argument("--N", type=int, default=8)
    ap.add_argument("--batch", type=int, default=128)
    ap.add_argument("--width", type=int, default=1, help="line rH = width x d")
    ap.add_argument("--repeats", type=int, default=10)
    ap.add_argument("--device", default="auto", help="cpu, cuda or auto")
    ap.add_argument("--out", type=Path, help="also write the results here (JSON)")
    args = ap.parse_args()
    dev = pick_device(args.device)
    configs = fn.line_configs(args.d, args.width * args.d)
    ranks, heads = [r for r, _ in configs], [H for _, H in configs]
    g = torch.Generator().manual_seed(0)
    X = fn.sphere_points(args.batch, args.N, args.d, generator=g).to(dev)
    Y = fn.furthest_neighbour(X)[0]
    line = fn.RankedAttention(args.d, ranks, heads).to(dev)
    t_line = _step_time(line, X, Y, args.repeats)
    t_alone = sum(_step_time(fn.RankedAttention(args.d, [r], [H]).to(dev), X, Y, args.repeats)
                  for r, H in configs)
    # the encoder line needs H | d: only lines with rH = d (width 1) have one
    t_enc = _step_time(fn.EncoderLine(args.d, heads).to(dev), X, Y, args.repeats) \
        if all(args.d % H == 0 for H in heads) else None
    print(f"device {dev}, d {args.d}, N {args.N}, batch {args.batch}, rH {args.width * args.d}, "
          f"{len(configs)} models (r = {ranks})")
    print(f"batched line step     {t_line * 1e3:8.1f} ms")
    print(f"models one by one     {t_alone * 1e3:8.1f} ms  (ratio {t_alone / t_line:.2f})")
    if t_enc is not None:
        print(f"encoder line (M layers){t_enc * 1e3:7.1f} ms  (ratio {t_enc / t_line:.2f})")
    if args.out:
        meta = provenance(dev)
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps({
            **{k: meta[k] for k in ("commit", "device", "versions", "time")},
            "d": args.d, "N": args.N, "batch": args.batch, "rH": args.width * args.d,
            "ranks": ranks, "heads": heads, "repeats": args.repeats,
            "line_step_s": t_line, "one_by_one_step_s": t_alone, "encoder_step_s": t_enc,
            "speedup_vs_one_by_one": t_alone / t_line}, indent=1) + "\n")
        print("wrote", args.out)


if __name__ == "__main__":
    main()
