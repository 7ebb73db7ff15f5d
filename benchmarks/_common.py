"""What the benchmark scripts share (they import it as a sibling module: run them as scripts)."""

import torch


def sync(device: torch.device) -> None:
    """Wait for the device's queued kernels, so a timer reads finished work (no-op on a CPU)."""
    if device.type == "cuda":
        torch.cuda.synchronize(device)
