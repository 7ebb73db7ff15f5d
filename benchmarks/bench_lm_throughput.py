"""Training throughput of attnbook's language model versus HuggingFace GPT2LMHeadModel.

Both models are built from the same configuration (``attnbook.engines.lm.LMConfig``, untied head,
dropout 0.1), trained with the same optimizer step (AdamW of appendix C of wies2021, bf16
autocast on CUDA) on the same batches, on the same device, in the same process. Timed rounds
alternate between the two models so that a change of machine load hits both alike. The script
reports tokens per second of each, their ratio, and the peak memory of one training run
(``torch.cuda.max_memory_allocated`` on CUDA; on CPU the process's peak resident memory after
each model's run, which includes everything loaded before it). On CUDA it also reports the
model-FLOP utilization 6 * params * tokens/s / peak (``--peak-tflops``); on CPU there is no
reliable peak figure, so it is not reported.

Usage: ``.venv/bin/python benchmarks/bench_lm_throughput.py [--quick] [--device cpu|cuda]
[--out benchmarks/results/lm_throughput_<device>.json]``; ``--only attnbook`` times our model
alone (the MFU of a model too large to train twice in one process, e.g. the largest ``full``
one: ``--V 2000 --L 4 --d_x 3000 --batch 64``).
Timings depend on the machine and its load; the ratio is the robust number. On a CPU shared
with other jobs, set ``OMP_NUM_THREADS=1``: with two intra-op threads competing for two busy
cores, every parallel op waits for a descheduled thread and both models slow down 10-100x.
"""

import argparse
import json
import resource
import time
from pathlib import Path

import numpy as np
import torch
from _common import sync

from attnbook.device import describe_device, pick_device
from attnbook.engines.lm import LanguageModel, LMConfig, count_parameters, reference_gpt2
from attnbook.engines.training import TrainConfig, _optimizer, sample_batch, train_step


def benchmark(cfg: LMConfig, batch: int, steps: int, rounds: int, warmup: int, device,
              only: str | None = None) -> dict:
    rng = np.random.default_rng(0)
    tokens = rng.integers(0, cfg.V, size=200_000).astype(np.uint16)
    gen = torch.Generator().manual_seed(0)
    batches = [tuple(t.to(device) for t in sample_batch(tokens, cfg.N, batch, gen))
               for _ in range(steps)]
    tc = TrainConfig(steps=steps, batch=batch)
    out = {}
    models = {}
    for name, make in (("attnbook", lambda: LanguageModel(cfg)),
                       ("hf_gpt2", lambda: reference_gpt2(cfg))):
        if only is not None and name != only:
            continue
        torch.manual_seed(0)
        model = make().to(device).train()
        opt = _optimizer(model, tc)
        if device.type == "cuda":
            torch.cuda.reset_peak_memory_stats(device)
        for x, y in batches[:warmup]:
            train_step(model, opt, x, y, device)
        sync(device)
        models[name] = (model, opt)
        out[name] = {"params": count_parameters(model)["total"], "seconds": 0.0,
                     "peak_mem_bytes": (torch.cuda.max_memory_allocated(device)
                                        if device.type == "cuda" else
                                        resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024)}
    for _ in range(rounds):  # alternate, so load changes hit both models alike
        for name, (model, opt) in models.items():
            sync(device)
            t0 = time.perf_counter()
            for x, y in batches:
                train_step(model, opt, x, y, device)
            sync(device)
            out[name]["seconds"] += time.perf_counter() - t0
    n_tokens = rounds * steps * batch * cfg.N
    for name in out:
        out[name]["tokens_per_s"] = n_tokens / out[name]["seconds"]
    if only is None:
        out["ratio"] = out["attnbook"]["tokens_per_s"] / out["hf_gpt2"]["tokens_per_s"]
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--quick", action="store_true", help="the ci-sized model, few steps")
    p.add_argument("--device", default="auto")
    p.add_argument("--V", type=int, default=2000)
    p.add_argument("--N", type=int, default=128)
    p.add_argument("--L", type=int, default=4)
    p.add_argument("--d_x", type=int, default=128)
    p.add_argument("--batch", type=int, default=16)
    p.add_argument("--steps", type=int, default=10, help="steps per timed round")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--dropout", type=float, default=0.1)
    p.add_argument("--H", type=int, default=2)
    p.add_argument("--only", choices=["attnbook", "hf_gpt2"], help="time one model only")
    p.add_argument("--out", type=Path, help="also write the results here (JSON)")
    p.add_argument("--peak-tflops", type=float, default=989.0,
                   help="device peak (bf16 dense) for the MFU; 989 is an H100/H200 SXM")
    a = p.parse_args()
    device = pick_device(a.device)
    if a.quick:
        a.V, a.N, a.L, a.d_x, a.batch, a.steps, a.rounds = 257, 32, 2, 32, 8, 5, 2
    cfg = LMConfig(V=a.V, N=a.N, L=a.L, d_x=a.d_x, H=a.H, dropout=a.dropout)
    print(f"device: {describe_device(device)}")
    print(f"config: {cfg}, batch {a.batch}, {a.rounds} rounds of {a.steps} steps")
    res = benchmark(cfg, a.batch, a.steps, a.rounds, warmup=2, device=device, only=a.only)
    for name in [n for n in ("attnbook", "hf_gpt2") if n in res]:
        r = res[name]
        line = (f"{name:9s} params {r['params']:,}  {r['tokens_per_s']:,.0f} tokens/s  "
                f"peak memory {r['peak_mem_bytes'] / 2**20:,.0f} MiB")
        if device.type == "cuda":
            mfu = 6 * r["params"] * r["tokens_per_s"] / (a.peak_tflops * 1e12)
            line += f"  MFU {100 * mfu:.1f}% (6 N tokens/s over {a.peak_tflops:g} TFLOP/s)"
            r["mfu"] = mfu
        print(line)
    if device.type != "cuda":
        print("MFU: not reported on CPU (no reliable peak FLOP/s figure)")
    if "ratio" in res:
        print(f"throughput ratio attnbook / hf_gpt2: {res['ratio']:.2f}x")
    if a.out:
        from attnbook.book.provenance import provenance

        meta = provenance(device)
        a.out.parent.mkdir(parents=True, exist_ok=True)
        a.out.write_text(json.dumps({
            **{k: meta[k] for k in ("commit", "device", "versions", "time")},
            "config": {k: getattr(cfg, k) for k in ("V", "N", "L", "d_x", "H", "dropout")},
            "batch": a.batch, "steps": a.steps, "rounds": a.rounds,
            "peak_tflops": a.peak_tflops if device.type == "cuda" else None, **res},
            indent=1) + "\n")
        print("wrote", a.out)


if __name__ == "__main__":
    main()
