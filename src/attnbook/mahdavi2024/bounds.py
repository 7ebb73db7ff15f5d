"""The capacity bounds of mahdavi2024 and the parameter counts they are compared at.

Theorem 1 (H(min(n, d_h) - 1) + 1, and with queries of Kruskal rank Q < n, Remark 1),
Proposition 2 (shared context), Proposition 5 (constant-sum tokens), Proposition 3 (the
two-layer ReLU network), and the parameter counts of both models.

Used by: mahdavi2024_theory.
"""

from ..errors import check_int

__all__ = ["memorization_lower_bound", "shared_context_bound", "constant_sum_bound",
           "relu_fcn_bound", "mha_parameter_count", "relu_fcn_parameter_count"]



def memorization_lower_bound(H: int, n: int, d_h: int, Q: int | None = None) -> int:
    """H(min(n, d_h)-1)+1 (Theorem 1), or H(min(Q, d_h)-1)+1 for queries of Kruskal rank Q < n.

    Implements mahdavi2024, Theorem 1 and Remark 1; r = min(n, d_h) is the per-head gain plus one.

    >>> memorization_lower_bound(4, 8, 16), memorization_lower_bound(4, 8, 3)
    (29, 9)
    >>> memorization_lower_bound(4, 8, 16, Q=5)
    17
    """
    for name, v in (("H", H), ("n", n), ("d_h", d_h)):
        check_int(name, v, 1)
    r = min(n, d_h) if Q is None or Q >= n else min(Q, d_h)
    return H * (r - 1) + 1


def shared_context_bound(H: int, n: int) -> int:
    """Upper bound H(n-1)+1 on rank(Z) when all examples share one context (Proposition 2).

    >>> shared_context_bound(3, 5)
    13
    """
    check_int("H", H, 1), check_int("n", n, 1)
    return H * (n - 1) + 1


def constant_sum_bound(H: int, d: int) -> int:
    """Upper bound H(d-1)+1 on rank(Z) when all context tokens sum to one constant (Proposition 5).

    >>> constant_sum_bound(3, 5)
    13
    """
    check_int("H", H, 1), check_int("d", d, 1)
    return H * (d - 1) + 1


def relu_fcn_bound(n: int, m: int, d_out: int) -> float:
    """(n+1)m/d_out + m + 1: most examples of App. F a 2-layer ReLU net with m units fits (Prop. 3).

    >>> relu_fcn_bound(3, 2, 4)
    5.0
    """
    for name, v in (("n", n), ("m", m), ("d_out", d_out)):
        check_int(name, v, 1)
    return (n + 1) * m / d_out + m + 1


def mha_parameter_count(H: int, d: int, d_h: int, d_v: int, d_out: int, *,
                        with_W_O: bool = True) -> int:
    """2Hd d_h + Hd d_v (+ H d_v d for W_O) + d d_out; Theorem 1's text omits W_O.

    >>> mha_parameter_count(2, 4, 3, 1, 1), mha_parameter_count(2, 4, 3, 1, 1, with_W_O=False)
    (68, 60)
    """
    return 2 * H * d * d_h + H * d * d_v + (H * d_v * d if with_W_O else 0) + d * d_out


def relu_fcn_parameter_count(d_in: int, m: int, d_out: int) -> int:
    """Parameters of x -> W_2^T ReLU(W_1^T x + b_1) + b_2 with d_in inputs and m hidden units.

    >>> relu_fcn_parameter_count(3, 2, 1)   # (d_in + 1) m + (m + 1) d_out
    11
    """
    return (d_in + 1) * m + (m + 1) * d_out
