"""Grid-tensor evaluation: batched versus point by point, and the largest grid in a minute.

The grid evaluation is the cost of every separation-rank measurement (Z^N network calls).
This script measures, in one run on one machine:

1. the speed-up of :func:`attnbook.engines.separation_rank.grid_tensor` (batches of grid points in
   one tensor program) over calling the network on one grid point at a time (the per-point
   time is measured on a sample of points and compared per point);
2. the largest grid Z^N (N = 6, the book's ``cpu`` setting) whose full measurement, as the
   chapters make it (float64 grid + SVD, and the exact grid mod p + elimination over GF(p)),
   finishes within ``--budget`` seconds.

Usage: ``.venv/bin/python benchmarks/bench_grid_tensor.py [--quick] [--budget 60]``.
Timings depend on the machine and its load; the ratio is the robust number.
"""

import argparse
import time

import torch

from attnbook.device import pick_device
from attnbook.engines import separation_rank as sr
from attnbook.engines.linalg import rank_with_gap


def _time(fn):
    t0 = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t0


def speedup(setting: sr.GridSetting, sample: int, device) -> dict:
    f = setting.function(seed=0, device=device)
    A, t_batched = _time(lambda: sr.grid_tensor(f, setting.V, setting.N, device=device))
    points = sr.grid_points(setting.V, setting.N, 0, sample, device=device)  # (sample, N)
    with torch.no_grad():
        one, t_single = _time(lambda: torch.stack([f(d[None])[0] for d in points]))
    # the same numbers either way, up to rounding (batched BLAS sums in another order)
    assert torch.allclose(one.cpu(), A.reshape(-1)[:sample], rtol=1e-10, atol=0)
    total = setting.V**setting.N
    per_point_batched, per_point_single = t_batched / total, t_single / sample
    return {"points": total, "batched_s": t_batched, "single_s_per_point": per_point_single,
            "speedup": per_point_single / per_point_batched}


def largest_grid(budget: float, device, Zs) -> list[dict]:
    rows = []
    for Z in Zs:
        s = sr.GridSetting(L=2, d_x=4, H=2, d_a=2, r=4, N=6, V=Z)
        P = range(s.N // 2)
        A, t_grid = _time(lambda s=s: sr.setting_grid_tensor(s, 0, device))
        R, t_svd = _time(lambda A=A, P=P: rank_with_gap(sr.matricize(A, P)))
        B, t_grid_p = _time(lambda s=s: sr.grid_tensor(s.function_mod_p(0, device), s.V, s.N,
                                                       device=device))
        k, t_elim = _time(lambda B=B, P=P: sr.rank_mod_p(sr.matricize(B, P).to(torch.int64)
                                                         .numpy()))
        total = t_grid + t_svd + t_grid_p + t_elim
        rows.append({"Z": Z, "points": Z**s.N, "matrix": Z ** (s.N // 2), "rank": R.rank,
                     "rank_exact": k, "total_s": total})
        print(f"  Z = {Z:2d}: {Z**s.N:>10,d} points, {Z**3:>5d}^2 matrix, rank {R.rank:4d} "
              f"(exact {k:4d}): float grid {t_grid:5.1f} s + SVD {t_svd:5.1f} s, exact grid "
              f"{t_grid_p:5.1f} s + elimination {t_elim:5.1f} s = {total:6.1f} s", flush=True)
        if total > budget:
            break
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small sizes (seconds)")
    ap.add_argument("--budget", type=float, default=60.0, help="seconds for one measurement")
    args = ap.parse_args()
    device = pick_device("auto")
    print(f"device: {device}, torch threads: {torch.get_num_threads()}")
    s = sr.GridSetting(L=2, d_x=4, H=2, d_a=2, r=4, N=6, V=6 if args.quick else 8)
    r = speedup(s, sample=500 if args.quick else 2000, device=device)
    print(f"batched grid of {r['points']:,d} points: {r['batched_s']:.2f} s; one point at a "
          f"time: {1e3 * r['single_s_per_point']:.3f} ms/point -> speed-up x{r['speedup']:.0f}")
    Zs = (6, 8) if args.quick else (8, 10, 12, 14, 16, 18, 20)
    rows = largest_grid(args.budget, device, Zs)
    ok = [row for row in rows if row["total_s"] <= args.budget]
    if ok:
        b = ok[-1]
        print(f"largest within {args.budget:.0f} s: Z = {b['Z']}, N = 6: {b['points']:,d} "
              f"grid points, {b['matrix']} x {b['matrix']} matrix ({b['total_s']:.1f} s)")


if __name__ == "__main__":
    main()
