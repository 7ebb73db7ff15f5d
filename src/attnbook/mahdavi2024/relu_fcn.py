"""Proposition 3 of mahdavi2024: the two-layer ReLU network compared with attention.

Its output Jacobian rank (at most its reduced parameter count), the reduction of Appendix F
(with the sign corrected), and a batched trainer with restarts.

Used by: mahdavi2024_theory.
"""

import math

import numpy as np
import torch

from ..engines.linalg import numerical_rank
from .attention import fcn_hard_dataset

__all__ = ["relu_fcn_jacobian_rank", "fcn_reduction_error", "train_relu_fcn"]

F64 = torch.float64


def _relu_fcn(X, W1, b1, W2, b2):
    return torch.relu(X @ W1 + b1) @ W2 + b2  # W_2^T ReLU(W_1^T x + b_1) + b_2, row form


def relu_fcn_jacobian_rank(X: torch.Tensor, m: int, d_out: int, *, points: int = 3,
                           seed: int = 0) -> list[int]:
    """Rank of d(outputs)/d(parameters) of a 2-layer ReLU net at random parameters (Prop. 3).

    The outputs on T inputs form a (T d_out)-vector; the rank bounds the dimension of the set of
    reachable label vectors near that point.

    >>> from attnbook.mahdavi2024.bounds import relu_fcn_parameter_count
    >>> X = torch.randn(6, 3, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    >>> max(relu_fcn_jacobian_rank(X, m=1, d_out=1)) <= relu_fcn_parameter_count(3, 1, 1)
    True
    """
    T, d_in = X.shape
    g = torch.Generator().manual_seed(seed)
    ranks = []
    for _ in range(points):
        W1 = torch.randn(d_in, m, generator=g, dtype=F64) / math.sqrt(d_in)
        b1 = torch.randn(m, generator=g, dtype=F64) * 0.1
        W2 = torch.randn(m, d_out, generator=g, dtype=F64) / math.sqrt(m)
        pre = X @ W1 + b1  # (T, m)
        act, mask = torch.relu(pre), (pre > 0).to(F64)
        I = torch.eye(d_out, dtype=F64)
        J_W1 = torch.einsum("ta,tj,jo->toaj", X, mask, W2).reshape(T * d_out, d_in * m)
        J_b1 = torch.einsum("tj,jo->toj", mask, W2).reshape(T * d_out, m)
        J_W2 = torch.einsum("tj,op->tojp", act, I).reshape(T * d_out, m * d_out)
        J_b2 = I.repeat(T, 1)  # (T d_out, d_out)
        J = torch.cat([J_W1, J_b1, J_W2, J_b2], dim=1)  # (T d_out, P): d outputs / d params
        ranks.append(int(numerical_rank(J)))
    return ranks


def fcn_reduction_error(n: int, d: int, m: int, d_out: int, *, sign: float = 1.0, T: int = 8,
                        seed: int = 0) -> float:
    """Max |f'(x_FCN) - f(x)| when Appendix F's bias is b'_1 + sign W'_1[:, :K] c_FCN (Prop. 3).

    Appendix F maps a net f' on x_FCN = [c_FCN; x] to a net f on x in R^n, keeping the last n
    input columns of W'_1 and folding the constant part into the bias. The right fold is
    sign = +1; the text writes b'_1 - W'_1[...]^T c_FCN (sign = -1).

    >>> fcn_reduction_error(3, 5, 4, 2) < 1e-12, fcn_reduction_error(3, 5, 4, 2, sign=-1.0) > 1e-3
    (True, True)
    """
    E, e = fcn_hard_dataset(T, n, d, seed=seed)
    X_fcn = torch.cat([E.reshape(T, -1), e], dim=1)  # (T, (n+1) d) = [c_FCN; 0_{d-n}; x]
    K = (n + 1) * d - n  # length of c_FCN (eq. 29)
    c_fcn, x = X_fcn[0, :K], X_fcn[:, K:]  # (K,), (T, n)
    g = torch.Generator().manual_seed(seed)
    W1p = torch.randn((n + 1) * d, m, generator=g, dtype=F64)  # W'_1, row form: x^T W'_1
    b1p = torch.randn(m, generator=g, dtype=F64)
    W2 = torch.randn(m, d_out, generator=g, dtype=F64)
    b2 = torch.randn(d_out, generator=g, dtype=F64)
    full = _relu_fcn(X_fcn, W1p, b1p, W2, b2)  # (T, d_out)
    reduced = _relu_fcn(x, W1p[K:], b1p + sign * (c_fcn @ W1p[:K]), W2, b2)
    return float((full - reduced).abs().max())


def train_relu_fcn(X: torch.Tensor, Y: torch.Tensor, m: int, *, restarts: int = 4,
                   steps: int = 2000, lr: float = 1e-2, seed: int = 0) -> np.ndarray:
    """Full-batch Adam on ``restarts`` stacked 2-layer ReLU nets; relative residual of each.

    Residual = ||f(X) - Y||_F / ||Y||_F after training (float64, one batched program).

    >>> X = torch.eye(3, dtype=torch.float64); Y = torch.ones(3, 1, dtype=torch.float64)
    >>> float(train_relu_fcn(X, Y, m=2, restarts=2, steps=1000, lr=3e-2).min()) < 1e-6
    True
    """
    T, d_in = X.shape
    d_out = Y.shape[1]
    g = torch.Generator().manual_seed(seed)
    R = restarts
    W1 = (torch.randn(R, d_in, m, generator=g, dtype=F64) / math.sqrt(d_in)).requires_grad_()
    b1 = torch.zeros(R, 1, m, dtype=F64).requires_grad_()
    W2 = (torch.randn(R, m, d_out, generator=g, dtype=F64) / math.sqrt(m)).requires_grad_()
    b2 = torch.zeros(R, 1, d_out, dtype=F64).requires_grad_()
    opt = torch.optim.Adam([W1, b1, W2, b2], lr=lr)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, steps)
    for _ in range(steps):
        opt.zero_grad()
        out = torch.relu(X @ W1 + b1) @ W2 + b2  # (R, T, d_out)
        loss = ((out - Y) ** 2).sum()
        loss.backward()
        opt.step()
        sched.step()
    with torch.no_grad():
        out = torch.relu(X @ W1 + b1) @ W2 + b2
        res = ((out - Y) ** 2).sum((1, 2)).sqrt() / Y.norm()
    return res.numpy()
