"""Linear algebra every chapter shares: one numerical rank, one batched rank, multi-indices.

* :func:`numerical_rank`: the rank of a matrix or of a batch ``(..., M, N)`` from a float64
  SVD, counting singular values above ``sigma_max * max(M, N) * eps`` (NumPy's
  ``matrix_rank`` rule, :func:`rank_tolerance`), or above a given absolute ``tol`` or relative
  ``rtol``;
* :func:`rank_with_gap`: the same rank of one matrix with the evidence that decides it (the
  tolerance, the singular values and the gap the rank sits on);
* :func:`batched_rank`: the same rule for large stacks of model outputs, chunked, on the run's
  device, with ``eps`` of the input's own precision (float32 outputs are judged at float32
  resolution);
* :func:`multi_indices`: the exponent vectors alpha in N^d of a given total degree (stars and
  bars).

Used by: bruna2024_furthest_neighbour, bruna2024_lower_bound, bruna2024_symmetric,
levine2020_separation_rank, mahdavi2024_real_models, mahdavi2024_theory, wies2021_embedding_rank.
"""

import itertools
from dataclasses import dataclass

import numpy as np
import torch

from ..device import default_device
from ..errors import AttnbookError, ParameterError, check_int

__all__ = ["EPS64", "rank_tolerance", "numerical_rank", "RankResult", "rank_with_gap",
           "batched_rank", "machine_eps", "multi_indices"]

EPS64 = float(np.finfo(np.float64).eps)
F64 = torch.float64
_BYTES = 2e8  # float64 bytes per batched SVD chunk


def rank_tolerance(svals: torch.Tensor, shape: tuple[int, int]) -> torch.Tensor:
    """Singular values above ``sigma_max * max(rows, cols) * eps(float64)`` count (numpy's rule).

    >>> float(rank_tolerance(torch.tensor([2.0, 1.0], dtype=torch.float64), (2, 3)))
    1.3322676295501878e-15
    """
    return svals.amax(dim=-1) * max(shape) * EPS64


def numerical_rank(X, tol: float | None = None, *, rtol: float | None = None) -> torch.Tensor:
    """Rank of a matrix, or of a batch ``(..., M, N)``, from a float64 SVD.

    By default the tolerance is :func:`rank_tolerance`; ``tol`` gives an absolute one and
    ``rtol`` one relative to the largest singular value.

    >>> int(numerical_rank(torch.tensor([[1.0, 2.0], [2.0, 4.0], [0.0, 1.0]])))
    2
    >>> numerical_rank(torch.zeros(2, 3, 3)).tolist()
    [0, 0]
    >>> int(numerical_rank(np.diag([1.0, 1e-10]), rtol=1e-9))
    1
    """
    X = X if isinstance(X, torch.Tensor) else torch.as_tensor(np.asarray(X))
    X = X.to(F64)
    if X.ndim < 2:
        raise ParameterError("X", f"array of shape {tuple(X.shape)}", "a matrix or a batch of them")
    if X.shape[-1] == 0 or X.shape[-2] == 0:
        return torch.zeros(X.shape[:-2], dtype=torch.long)
    s = torch.linalg.svdvals(X)  # (..., min(M, N))
    if rtol is not None:
        cut = s.amax(dim=-1) * rtol
    else:
        cut = rank_tolerance(s, tuple(X.shape[-2:])) if tol is None else torch.as_tensor(tol)
    return (s > cut[..., None] if cut.ndim else s > cut).sum(dim=-1)


@dataclass(frozen=True)
class RankResult:
    """Numerical rank of a matrix, with the evidence that decides it."""

    rank: int  # number of singular values above tol
    tol: float  # sigma_1 * max(m, n) * eps * safety
    sigma: np.ndarray  # all singular values, descending
    gap: float  # sigma_rank / sigma_(rank+1): the jump the rank sits on (inf if none below)

    @property
    def gap_decades(self) -> float:
        """log10 of the gap: how many orders of magnitude separate signal from rounding."""
        return float(np.log10(self.gap)) if np.isfinite(self.gap) else float("inf")


def rank_with_gap(M, *, safety: float = 1.0) -> RankResult:
    """Rank of M from a float64 SVD, counting singular values above sigma_1 max(m, n) eps.

    The tolerance is scale-aware (relative to sigma_1, so rescaling M does not change the
    rank) and is the rounding level of a float64 SVD of M (the LAPACK / NumPy default of
    ``matrix_rank``); ``safety`` multiplies it. It is only as good as the entries: the
    returned ``gap`` is the ratio of the last kept to the first dropped singular value, and
    a rank is trustworthy when that gap spans many decades (see ``gap_decades``).

    >>> r = rank_with_gap(np.diag([1.0, 1e-3, 1e-20]))  # tol = 1 * 3 * 2.2e-16
    >>> r.rank, round(r.gap_decades, 1)  # 1e-3 / 1e-20
    (2, 17.0)
    >>> rank_with_gap(np.outer([1., 2.], [3., 4.])).rank
    1
    """
    M = torch.as_tensor(M).detach().to("cpu", F64)
    if M.dim() != 2 or M.numel() == 0:
        raise ParameterError("M.shape", tuple(M.shape), "a non-empty matrix")
    if not torch.isfinite(M).all():
        raise AttnbookError("the matrix has non-finite entries (inf/nan): the grid values "
                            "overflowed; use smaller weights or a shallower network")
    sigma = torch.linalg.svdvals(M).numpy()
    if sigma[0] == 0:
        return RankResult(0, 0.0, sigma, float("inf"))
    tol = float(sigma[0]) * max(M.shape) * EPS64 * safety
    rank = int((sigma > tol).sum())
    gap = float(sigma[rank - 1] / sigma[rank]) if rank < len(sigma) and sigma[rank] > 0 \
        else float("inf")
    return RankResult(rank, tol, sigma, gap)


def machine_eps(dtype) -> float:
    """Machine epsilon of a floating dtype (float64's for any other dtype)."""
    return float(torch.finfo(dtype if dtype in (torch.float16, torch.bfloat16, torch.float32,
                                                 torch.float64) else F64).eps)


def batched_rank(X: torch.Tensor, eps: float | None = None, *, device=None) -> torch.Tensor:
    """Ranks of a batch (..., M, N): singular values above sigma_max * max(M, N) * eps count.

    ``eps`` defaults to the machine epsilon of ``X``'s dtype, so float32 model outputs are
    judged at float32 resolution (the decomposition itself runs in float64). The chunks run on
    ``device``, by default the run's device (:func:`attnbook.device.default_device`).

    >>> batched_rank(torch.tensor([[[1.0, 2.0], [2.0, 4.0]], [[1.0, 0.0], [0.0, 1.0]]])).tolist()
    [1, 2]
    """
    eps = machine_eps(X.dtype) if eps is None else eps
    device = torch.device(device) if device is not None else default_device()
    X = X.to(F64)
    M, N = X.shape[-2:]
    flat = X.reshape(-1, M, N)
    out = torch.empty(flat.shape[0], dtype=torch.long)
    step = max(1, int(_BYTES // max(1, M * N * 8)))
    for i in range(0, flat.shape[0], step):
        out[i:i + step] = _rank_chunk(flat[i:i + step].to(device), eps)
    return out.reshape(X.shape[:-2])


def _rank_chunk(A: torch.Tensor, eps: float) -> torch.Tensor:
    """Ranks of a (b, M, N) float64 chunk under the rule sigma > sigma_max * max(M, N) * eps.

    At float32 resolution (eps >= 1e-10) the singular values come from the eigenvalues of the
    smaller Gram matrix: its float64 rounding, about sqrt(min(M, N) * 2.2e-16) * sigma_max, lies
    two orders of magnitude below the cut, and it is several times faster than an SVD.
    """
    M, N = A.shape[-2:]
    if eps >= 1e-10:
        G = A @ A.transpose(-1, -2) if M <= N else A.transpose(-1, -2) @ A
        s = torch.linalg.eigvalsh(G).clamp(min=0).sqrt().flip(-1)  # descending
    else:
        s = torch.linalg.svdvals(A)  # (b, min(M, N))
    return (s > s[:, :1] * max(M, N) * eps).sum(dim=-1).cpu()


def multi_indices(d: int, degree: int, exact: bool = False) -> list[tuple[int, ...]]:
    """All alpha in N^d with |alpha| <= degree (or == degree), graded, by enumeration.

    >>> multi_indices(2, 2)
    [(0, 0), (0, 1), (1, 0), (0, 2), (1, 1), (2, 0)]
    >>> multi_indices(3, 1, exact=True)
    [(0, 0, 1), (0, 1, 0), (1, 0, 0)]
    """
    d, degree = check_int("d", d, 1), check_int("degree", degree, 0)
    out = []
    for k in ([degree] if exact else range(degree + 1)):  # stars and bars: C(k+d-1, d-1) each
        for bars in itertools.combinations(range(k + d - 1), d - 1):
            edges = (-1,) + bars + (k + d - 1,)
            out.append(tuple(edges[i + 1] - edges[i] - 1 for i in range(d)))
    return out
