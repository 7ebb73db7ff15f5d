"""Wall time per model of a long sweep: one process against worker processes, on a CPU.

The units timed are those of a `long` sweep of this book: the pilot of
``wies2021_depth_efficiency`` (its .yml: V 32, depth 5 against 10, shallow widths 0.5, 1 and 2
V, one seed), each net cut to ``--steps`` optimizer steps with its schedule. Every mode computes
the same units from scratch, in a fresh process each:

* ``one``: one process, one torch thread, one unit after another (what a sweep did before
  worker processes: :class:`attnbook.book.executors.LocalExecutor`);
* ``threads``: one process whose torch uses every core for each unit;
* ``workers``: :class:`attnbook.book.executors.ProcessExecutor`, one worker process with one
  thread per core (what ``ATTNBOOK_WORKERS`` turns on).

It reports seconds per model, the ratio of each mode to ``one`` (measured in the same run, on
the same machine), and the largest relative change of the nets' test losses against ``one``
(0: the executors compute the same numbers). Run it on an otherwise idle machine: a busy core
counts against the mode that uses it.

    .venv/bin/python benchmarks/bench_executor.py [--steps 200] [--units 4]
        [--out benchmarks/results/executor_cpu.json]
"""

import argparse
import json
import os
import subprocess
import sys
import time
from functools import partial
from pathlib import Path

from _common import max_rel_change, write_json

from attnbook import paths
from attnbook.book.profiles import load_spec
from attnbook.book.provenance import provenance

MODES = ("one", "threads", "workers")


def units(steps: int, count: int) -> list[list[dict]]:
    """The first ``count`` units (seed groups) of the long pilot, at ``steps`` steps each."""
    from attnbook.engines import depth_sweep as ds
    from attnbook.engines.lm_sweep import seed_groups

    spec = load_spec(paths.NOTEBOOKS / "wies2021_depth_efficiency.ipynb")
    p = {**spec.defaults, **spec.parameters("long")}
    cs = ds.sweep_configs(vocabs=p["vocabs"][:1], width_factors=p["pilot_width_factors"],
                          L_shallow=p["L_shallow"], L_deep=p["L_deep"], steps=steps,
                          seeds=[p["seed"]], H=p["H"], corpus=p["corpus"], N=p["N"],
                          batch=p["batch"], lr=p["lr"], warmup=min(p["warmup"], steps // 10),
                          eval_tokens=p["eval_tokens"] or 65536)
    return seed_groups(cs)[:count]


def child(mode: str, steps: int, count: int, cores: int) -> dict:
    """Compute the units in this (fresh) process the way ``mode`` says; wall time and losses."""
    import torch

    from attnbook.book.executors import LocalExecutor, ProcessExecutor
    from attnbook.engines.lm_sweep import train_stacked

    torch.set_num_threads(cores if mode == "threads" else 1)
    todo = units(steps, count)
    fn = partial(train_stacked, device="cpu")
    ex = (ProcessExecutor(workers=cores, threads=1, progress=False) if mode == "workers"
          else LocalExecutor(progress=False))
    t0 = time.perf_counter()
    done = {json.dumps(u, sort_keys=True): r for u, r, _ in ex.map(fn, todo)}
    wall = time.perf_counter() - t0
    losses = [r["test_loss"] for u in todo for r in done[json.dumps(u, sort_keys=True)]]
    return {"wall_s": wall, "models": len(losses), "test_losses": losses}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=200, help="optimizer steps per net")
    ap.add_argument("--units", type=int, default=4, help="units (seed groups) timed")
    ap.add_argument("--out", type=Path, default=None, help="JSON file for the result")
    ap.add_argument("--child", choices=MODES, help=argparse.SUPPRESS)
    a = ap.parse_args()
    cores = os.cpu_count() or 1
    if a.child:
        print(json.dumps(child(a.child, a.steps, a.units, cores)))
        return
    res = {}
    for mode in MODES:  # each in a fresh interpreter: no torch state carries over
        out = subprocess.run([sys.executable, __file__, "--child", mode, "--steps", str(a.steps),
                              "--units", str(a.units)], check=True, capture_output=True,
                             text=True, env={**os.environ, "ATTNBOOK_THREADS": "1"})
        res[mode] = json.loads(out.stdout.strip().splitlines()[-1])
        print(f"{mode:8s} {res[mode]['wall_s']:8.1f} s for {res[mode]['models']} nets",
              flush=True)
    base = res["one"]
    table = {m: {"s_per_model": round(r["wall_s"] / r["models"], 3),
                 "ratio_to_one": round(base["wall_s"] / r["wall_s"], 3),
                 "max_rel_loss_change": max_rel_change(r["test_losses"], base["test_losses"])}
             for m, r in res.items()}
    for m, t in table.items():
        print(f"{m:8s} {t['s_per_model']:7.2f} s per net, {t['ratio_to_one']:5.2f}x faster than "
              f"one, losses within {t['max_rel_loss_change']:.1e}")
    write_json(a.out, {"benchmark": "executor", "device": "cpu", "cores": cores,
                       "units": "wies2021_depth_efficiency long pilot, first seed groups",
                       "steps": a.steps, "models": base["models"],
                       "provenance": provenance(), "modes": table})


if __name__ == "__main__":
    main()
