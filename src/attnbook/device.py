"""Device choice and description: CUDA when present, CPU otherwise, and always recorded."""

import os
import platform
from functools import cache

import torch

__all__ = ["ENV_DEVICE", "pick_device", "default_device", "describe_device", "library_versions"]

ENV_DEVICE = "ATTNBOOK_DEVICE"  # auto (default), cpu or cuda: the device every computation uses


def pick_device(prefer: str = "auto") -> torch.device:
    """``cuda`` when available (or asked for), else ``cpu``.

    >>> pick_device("cpu")
    device(type='cpu')
    """
    if prefer not in ("auto", "cpu", "cuda"):
        from .errors import ParameterError

        raise ParameterError("device", prefer, "auto, cpu or cuda")
    if prefer == "cpu" or (prefer == "auto" and not torch.cuda.is_available()):
        return torch.device("cpu")
    if not torch.cuda.is_available():
        from .errors import AttnbookError

        raise AttnbookError("device 'cuda' was asked for but torch sees no CUDA device")
    return torch.device("cuda")


def default_device(device: str | None = None) -> torch.device:
    """The device a computation uses: ``device`` if given, else ``ATTNBOOK_DEVICE``, else CUDA
    when present and the CPU otherwise.

    >>> default_device("cpu")
    device(type='cpu')
    """
    return pick_device(device or os.environ.get(ENV_DEVICE, "auto"))


@cache
def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def describe_device(device: torch.device | None = None) -> str:
    """A human-readable name: the GPU's name, or the CPU model and core count."""
    device = device or pick_device()
    if device.type == "cuda":
        return f"cuda: {torch.cuda.get_device_name(device)}"
    return f"cpu: {_cpu_model()} ({os.cpu_count()} cores, {torch.get_num_threads()} threads)"


def library_versions() -> dict:
    """Versions of the libraries whose numbers could change a result."""
    import matplotlib
    import numpy
    import pandas
    import scipy

    from . import __version__

    return {
        "python": platform.python_version(),
        "attnbook": __version__,
        "torch": torch.__version__,
        "numpy": numpy.__version__,
        "scipy": scipy.__version__,
        "pandas": pandas.__version__,
        "matplotlib": matplotlib.__version__,
    }
