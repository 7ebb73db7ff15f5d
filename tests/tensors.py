"""Small tensor helpers shared by the tests (on pytest's path via ``pythonpath`` in
pyproject.toml)."""

import torch

F64 = torch.float64


def gaussian(*shape, seed=0):
    """A float64 standard-normal tensor from its own seeded generator."""
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed), dtype=F64)
