"""What the benchmark scripts share (they import it as a sibling module: run them as scripts)."""

import json
import subprocess
from pathlib import Path

import numpy as np
import torch


def sync(device: torch.device) -> None:
    """Wait for the device's queued kernels, so a timer reads finished work (no-op on a CPU)."""
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def max_rel_change(values, ref) -> float:
    """The largest |values - ref| / |ref| (the denominator floored at 1e-12): how far a faster
    mode moved a result."""
    values, ref = np.asarray(values, dtype=float), np.asarray(ref, dtype=float)
    return float(np.max(np.abs(values - ref) / np.maximum(np.abs(ref), 1e-12)))


def write_json(path: Path | None, out: dict) -> None:
    """Write a benchmark's result to ``path`` (its folder made first); nothing when None."""
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(out, indent=1) + "\n")


def commit() -> str:
    """The checkout's commit (``git rev-parse HEAD``), or "unknown" outside a git checkout."""
    try:
        return subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True,
                              cwd=Path(__file__).parent, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown"
