"""One training step of bruna2024_symmetric's trained separation at its ``full`` shape, on one
CPU thread: the library's models against the earlier formulation of the same functions.

The ``full`` profile trains 9 DeepSets models (H = 1 ... 96, width 1024) and the pairwise model
together on batches of 512 sets of N = 12 points in d = 64, 30000 steps; on a CPU that is the
longest training of the book. Two arms compute the same functions from the same weights:

* ``per_point`` (the earlier code, kept here as the reference): psi's last layer applied to
  every point (every pair, for the pairwise model) and the result summed; the first layer's
  bias added in a separate pass; the pairwise model's two halves and its bias in two
  broadcast additions over the (sets, N, N, width) hidden layer;
* ``summed_first`` (:class:`attnbook.bruna2024.symmetric.SetModels` today): the sum over the
  points (pairs) taken before psi's affine last layer, sum_i (h_i W + b) = (sum_i h_i) W + N b,
  so that layer runs once per set; the first layer's bias inside the product; the pairwise
  bias added to the smaller half before the broadcast;
* ``compiled``: ``summed_first`` with the step's forward pass and loss under ``torch.compile``
  (``SetTrainSettings(compile=True)``, the ``full`` profile's ``compile_step``), its elementwise
  work fused.

Timing: ``rounds`` rounds of ``steps`` Adam steps per arm, the arms one after another and their
order rotated each round, so a change of the machine's load hits every arm alike; the first
round is warm-up (it compiles); the median over the other rounds of the per-round ratios
per_point / summed_first and summed_first / compiled is reported with the seconds per step.
The arms start from the same weights and see the same batches; after the rounds the benchmark
reports the largest relative difference between the arms' outputs on one batch at the start
(float32 summation order only) and after training (their trajectories part by rounding).

    .venv/bin/python benchmarks/bench_symmetric_step.py [--quick]
        [--out benchmarks/results/symmetric_step_cpu_1thread.json]
"""

import argparse
import math
import os
import platform
import statistics
import time
from pathlib import Path

import torch
from _common import commit, max_rel_change, write_json
from torch import nn

from attnbook.bruna2024.symmetric import PowerSumTarget, SetModels, torus_angles, torus_embed

FULL = {"d": 64, "N": 12, "K": 64, "width": 1024, "batch": 512,
        "Hs": [1, 2, 4, 8, 16, 32, 48, 64, 96]}  # notebooks/bruna2024_symmetric.yml, full


class PerPoint(SetModels):
    """The same models, computed as the earlier code did (psi's last layer per point)."""

    def unary(self, x):
        B, N, _ = x.shape
        M, act = len(self.Hs), nn.functional.silu
        h = act(torch.matmul(x.reshape(1, B * N, -1), self.W_psi1) + self.b_psi1)
        psi = self._layer(h, "psi2") * self.mask
        phi = psi.reshape(M, B, N, -1).sum(2) / math.sqrt(N)
        rho = self._layer(act(self._layer(phi, "rho1")), "rho2") + self._layer(phi, "skip")
        return rho[..., 0]

    def pair_model(self, x):
        p, act = self.pair, nn.functional.silu
        e = x.shape[-1]
        h = act((x @ p["psi1"][:e])[:, :, None] + (x @ p["psi1"][e:])[:, None] + p["b_psi1"])
        phi = (h @ p["psi2"] + p["b_psi2"]).sum(dim=(1, 2)) / x.shape[1]
        return (phi @ p["skip"] + p["b_skip"])[:, 0]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="3 rounds of 1 step, batch 128")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--steps", type=int, default=2, help="steps per arm and round")
    ap.add_argument("--out", type=Path,
                    default=Path(__file__).parent / "results" / "symmetric_step_cpu_1thread.json")
    args = ap.parse_args()
    torch.set_num_threads(1)
    torch.set_flush_denormal(True)
    shape = dict(FULL, batch=128) if args.quick else FULL
    rounds, steps = (3, 1) if args.quick else (args.rounds, args.steps)
    target = PowerSumTarget("rotated", K=shape["K"], N=shape["N"], d=shape["d"], seed=0)
    arms = {}
    for name, cls in (("per_point", PerPoint), ("summed_first", SetModels),
                      ("compiled", SetModels)):
        net = cls(shape["d"], shape["Hs"], width=shape["width"], seed=0)

        def loss_of(theta, net=net):
            return ((net(torus_embed(theta)) - target(theta)) ** 2).mean(1).sum()

        arms[name] = {"net": net, "opt": torch.optim.Adam(net.parameters(), lr=1e-3),
                      "gen": torch.Generator().manual_seed(0), "times": [],
                      "loss": torch.compile(loss_of) if name == "compiled" else loss_of}
    probe = torus_angles(shape["batch"], shape["N"], shape["d"],
                         generator=torch.Generator().manual_seed(1))

    def outputs():
        with torch.no_grad():
            return {k: a["net"](torus_embed(probe)) for k, a in arms.items()}

    start = outputs()

    def run(arm):
        t0 = time.perf_counter()
        for _ in range(steps):
            theta = torus_angles(shape["batch"], shape["N"], shape["d"], generator=arm["gen"])
            loss = arm["loss"](theta)
            arm["opt"].zero_grad(set_to_none=True)
            loss.backward()
            arm["opt"].step()
        arm["times"].append((time.perf_counter() - t0) / steps)

    order = list(arms)
    for r in range(rounds):
        for name in order[r % 3:] + order[:r % 3]:
            run(arms[name])
    end = outputs()

    def ratios(slow, fast):
        return [a / b for a, b in zip(arms[slow]["times"][1:], arms[fast]["times"][1:],
                                      strict=True)]

    summed, fused = ratios("per_point", "summed_first"), ratios("summed_first", "compiled")
    out = {
        "what": "one Adam step of bruna2024_symmetric's trained separation, one CPU thread",
        "shape": shape, "rounds": rounds, "steps_per_round": steps,
        "s_per_step": {k: round(statistics.median(a["times"][1:]), 3) for k, a in arms.items()},
        "speedup_median": round(statistics.median(summed), 3),
        "speedup_per_round": [round(x, 3) for x in summed],
        "compile_speedup_median": round(statistics.median(fused), 3),
        "compile_speedup_per_round": [round(x, 3) for x in fused],
        "max_rel_output_difference_at_start": max_rel_change(start["summed_first"],
                                                             start["per_point"]),
        "max_rel_output_difference_after": max_rel_change(end["summed_first"], end["per_point"]),
        "compiled_max_rel_output_difference_after": max_rel_change(end["compiled"],
                                                                   end["summed_first"]),
        "machine": platform.processor() or platform.machine(), "cores": os.cpu_count(),
        "torch": torch.__version__, "commit": commit(),
    }
    for k, v in out.items():
        print(f"{k}: {v}")
    write_json(None if args.quick else args.out, out)


if __name__ == "__main__":
    main()
