"""Separation rank of self-attention networks, measured through grid tensors, and its bounds.

The separation rank sep(y; P, Q) of a function of N inputs is the least number of products
g(inputs in P) g'(inputs in Q) that sum to y (wies2021 section 3). Claim 1 of levine2020 and
wies2021 (appendix B.1.2) makes it measurable from below: evaluate y on the grid of Z
template inputs at every one of the N positions (the grid tensor A, Z^N values), arrange A
as a Z^(N/2) x Z^(N/2) matrix [[A]]_{P,Q} (rows: the inputs at P, columns: those at Q); then

    sep(y; P, Q) >= rank [[A]]_{P,Q}.

Claim 2 of levine2020 (after Sharir et al. 2016) adds that the rank reached by one draw of
the weights is reached for all weights but a set of measure zero, so random weights measure
the generic rank. This module computes grid tensors in batched torch code (no Python loop
over grid points), matricizes them for any balanced partition, takes a float64 numerical
rank with a stated tolerance, and evaluates the papers' bounds as exact Python integers:

* wies2021 Theorem 3, eq. (9): sep <= ((r+r_e, 3^L)) ((4, 3^L)) (3^L+1)^(r+r_e);
* wies2021 Corollary 1, eq. (14): sep >= (((r-H)/2, 3^(L-2))) for generic weights;
* levine2020 Theorem 1: sep <= (H (d_a+1))^C(L), Theorem 2, eq. (8): sep <= d_x (C(L)+1)
  ((d_x, 2C(L))) (2C(L)/d_x + 1)^d_x, and their residual versions, Theorems 3-4;

with ((n, k)) = binom(n+k-1, k) the multiset coefficient and C(L) = (3^L-1)/2 (Lemma 1).

A depth-L network is a polynomial of degree 3^L, and beyond L = 2 its grid matrices have
singular values spread over more decades than float64 holds. So the rank is also computed
exactly: with weights and embeddings drawn as random residues modulo a prime p, the network
is evaluated in exact modular arithmetic and the grid matrix is row-reduced over GF(p). That
rank never exceeds the generic rank over the reals (a k x k minor that is non-zero mod p is a
non-zero integer polynomial), and equals it unless the random point is a root of every
maximal minor, which has probability at most (degree / p) by the Schwartz-Zippel lemma.

Used by: levine2020_separation_rank, wies2021_embedding_rank.
"""

import itertools
import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
import torch

from ..errors import ParameterError
from .linalg import rank_with_gap
from .polynomial import attention_factor_count

__all__ = ["balanced_partitions", "check_partition", "grid_points", "grid_tensor", "matricize",
           "multiset",
           "wies2021_upper_bound", "wies2021_lower_bound",
           "levine2020_theorem1_bound", "levine2020_theorem2_bound",
           "levine2020_theorem3_bound", "levine2020_theorem4_bound",
           "PRIME", "rank_mod_p", "attention_mod_p", "GridSetting", "setting_grid_tensor",
           "measure_rank", "rank_sweep",
           "add_bounds", "worked_example"]


# -- partitions -----------------------------------------------------------------------------

def check_partition(P, Q, N: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Validate a balanced partition (P, Q) of the positions 0..N-1; return sorted tuples.

    >>> check_partition([2, 0], None, 4)
    ((0, 2), (1, 3))
    >>> check_partition([0, 1], [1, 2], 4)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    attnbook.errors.ParameterError: parameter (P, Q) = ([0, 1], [1, 2]) is not a partition: ...
    """
    if not isinstance(N, int) or N < 2 or N % 2:
        raise ParameterError("N", N, "an even integer >= 2 (a balanced partition needs N/2 "
                                     "positions on each side)")
    allowed = f"disjoint P, Q of size N/2 = {N // 2} whose union is 0..{N - 1}"
    try:
        Ps = tuple(sorted(int(p) for p in P))
        Qs = tuple(sorted(set(range(N)) - set(Ps))) if Q is None else \
            tuple(sorted(int(q) for q in Q))
    except (TypeError, ValueError):
        raise ParameterError("(P, Q)", (P, Q), allowed, problem="is not a partition") from None
    if (len(Ps) != N // 2 or len(Qs) != N // 2 or len(set(Ps) | set(Qs)) != N
            or set(Ps) | set(Qs) != set(range(N))):
        raise ParameterError("(P, Q)", (P, Q), allowed, problem="is not a partition")
    return Ps, Qs


def balanced_partitions(N: int) -> list[tuple[int, ...]]:
    """Every balanced partition of 0..N-1, each named by its side P holding position 0.

    (P, Q) and (Q, P) give transposed matrices of the same rank, so half of the
    binom(N, N/2) subsets suffice.

    >>> balanced_partitions(4)
    [(0, 1), (0, 2), (0, 3)]
    """
    check_partition(range(N // 2), None, N)
    return [(0, *rest) for rest in itertools.combinations(range(1, N), N // 2 - 1)]


# -- grid tensors ---------------------------------------------------------------------------

def grid_points(Z: int, N: int, start: int = 0, stop: int | None = None,
                device=None) -> torch.Tensor:
    """Grid points start..stop-1 of [Z]^N in row-major order, as template indices (B, N).

    >>> grid_points(2, 3, 5, 8).tolist()  # points 5, 6, 7 of {0,1}^3
    [[1, 0, 1], [1, 1, 0], [1, 1, 1]]
    """
    stop = Z**N if stop is None else stop
    flat = torch.arange(start, stop, device=device)  # (B,)
    radix = Z ** torch.arange(N - 1, -1, -1, device=device)  # (N,): Z^(N-1), ..., 1
    return (flat[:, None] // radix) % Z  # (B, N): digit n is the template at position n


@torch.no_grad()
def grid_tensor(f, Z: int, N: int, *, chunk: int = 1 << 16, device=None,
                progress: bool = False) -> torch.Tensor:
    """The grid tensor A[d_1, ..., d_N] = f(d_1, ..., d_N) over [Z]^N (levine2020 B.1.2).

    ``f`` maps template indices of shape (B, N) to values of shape (B,); it is called on
    batches of ``chunk`` grid points, never point by point.

    >>> A = grid_tensor(lambda d: (d[:, 0] + 1.0) * (d[:, 1] + 1.0), Z=3, N=2)
    >>> A.shape, A[2, 1].item()
    (torch.Size([3, 3]), 6.0)
    """
    if not isinstance(Z, int) or Z < 1:
        raise ParameterError("Z", Z, "an integer >= 1 (number of template inputs)")
    if not isinstance(N, int) or N < 1:
        raise ParameterError("N", N, "an integer >= 1")
    total = Z**N
    if total > 1 << 31:
        raise ParameterError("Z^N", total, "at most 2^31 grid points")
    out = []
    starts = range(0, total, chunk)
    if progress:
        from ..progress import progress_bar
        starts = progress_bar(starts, desc=f"grid {Z}^{N}", leave=False)
    for s in starts:
        d = grid_points(Z, N, s, min(s + chunk, total), device=device)  # (B, N)
        out.append(f(d).reshape(-1).to(torch.float64).cpu())
    return torch.cat(out).reshape((Z,) * N)  # (Z, ..., Z)


def matricize(A: torch.Tensor, P, Q=None) -> torch.Tensor:
    """[[A]]_{P,Q}: rows indexed by the modes in P, columns by those in Q (levine2020 B.1.1).

    Row index sum_t d_{p_t} Z^(N/2-t), column index likewise over Q (0-based), as in the
    paper's definition.

    >>> A = torch.arange(16.).reshape(2, 2, 2, 2)
    >>> matricize(A, [0, 2]).shape, matricize(A, [0, 2])[1, 2].item()  # A[0, 1, 1, 0]
    (torch.Size([4, 4]), 6.0)
    """
    N = A.dim()
    Ps, Qs = check_partition(P, Q, N)
    if len(set(A.shape)) != 1:
        raise ParameterError("A.shape", tuple(A.shape), "equal dimension Z in every mode")
    Z = A.shape[0]
    half = Z ** (N // 2)
    return A.permute(*Ps, *Qs).reshape(half, half)  # (Z^(N/2), Z^(N/2))


# -- exact rank over a prime field --------------------------------------------------------

PRIME = 2097143  # the largest prime below 2^21: products of residues stay below 2^42, so a
# float64 sum of up to 2^11 of them is exact (all contractions here are far shorter)


def rank_mod_p(M, p: int = PRIME) -> int:
    """Exact rank over GF(p) of an integer matrix, by Gaussian elimination (vectorized rows).

    >>> rank_mod_p([[1, 2], [2, 4]]), rank_mod_p([[1, 2], [3, 4]]), rank_mod_p([[7, 0], [0, 1]], 7)
    (1, 2, 1)
    """
    A = np.array(M, dtype=np.int64) % p  # (m, n), entries in [0, p)
    if A.ndim != 2:
        raise ParameterError("M.shape", A.shape, "a matrix")
    if p >= 1 << 31:
        raise ParameterError("p", p, "a prime below 2^31 (products must fit in int64)")
    m, n = A.shape
    rank = 0
    for col in range(n):
        if rank == m:
            break
        nz = np.nonzero(A[rank:, col])[0]
        if nz.size == 0:
            continue
        piv = rank + int(nz[0])
        A[[rank, piv]] = A[[piv, rank]]
        A[rank] = A[rank] * pow(int(A[rank, col]), p - 2, p) % p  # pivot -> 1 (Fermat inverse)
        below = A[rank + 1:, col].copy()  # (m - rank - 1,)
        A[rank + 1:] = (A[rank + 1:] - below[:, None] * A[rank][None, :]) % p
        rank += 1
    return rank


# -- bounds (exact integers) ----------------------------------------------------------------

def _nat(name, v, lo=0):
    if not isinstance(v, int) or isinstance(v, bool) or v < lo:
        raise ParameterError(name, v, f"an integer >= {lo}")


def multiset(n: int, k: int) -> int:
    """The multiset coefficient ((n, k)) = binom(n+k-1, k): k-element multisets of n symbols.

    >>> multiset(3, 2), multiset(2, 9), multiset(0, 0), multiset(0, 1)
    (6, 10, 1, 0)
    """
    _nat("n", n)
    _nat("k", k)
    if n == 0:
        return 1 if k == 0 else 0
    return math.comb(n + k - 1, k)


def wies2021_upper_bound(L: int, r: int, r_e: int = 0) -> int:
    """wies2021 Theorem 3, eq. (9): sep <= ((r+r_e, 3^L)) ((4, 3^L)) (3^L+1)^(r+r_e).

    Independent of N, d_x and H: width enters only through r <= d_x. In the appendix text the
    double brackets of the multiset coefficients are printed as plain binomials; the proof
    (the power-counting argument before eq. (9)) shows they are multisets.

    >>> wies2021_upper_bound(1, 1)  # ((1,3)) ((4,3)) 4^1 = 1 * 20 * 4
    80
    """
    _nat("L", L, 1)
    _nat("r", r, 1)
    _nat("r_e", r_e)
    D = 3**L  # the degree of Lemma 1
    return multiset(r + r_e, D) * multiset(4, D) * (D + 1) ** (r + r_e)


def wies2021_lower_bound(L: int, r: int, H: int) -> int:
    """wies2021 Corollary 1, eq. (14): sep >= (((r-H)/2, 3^(L-2))) for generic weights.

    Needs L >= 2 (the exponent 3^(L-2) is an integer) and H < r (Theorem 2). The paper writes
    (r-H)/2, a whole number only where r - H is even; where it is odd this takes the floor, as
    the paper's footnote 3 does for the d = (r-1-H)/2 of its eq. (16). The corollary's other
    premise (V >= 2 ((., .)) + 1 tokens, Lemma 6) is about whether a grid can show it; see the
    chapter.

    >>> wies2021_lower_bound(3, 8, 2)  # ((3, 3)) = binom(5, 3)
    10
    """
    _nat("L", L, 2)
    _nat("r", r, 1)
    _nat("H", H, 1)
    if H >= r:
        raise ParameterError("H", H, f"H < r = {r} (wies2021 Theorem 2)")
    return multiset((r - H) // 2, 3 ** (L - 2))


def levine2020_theorem1_bound(L: int, H: int, d_a: int) -> int:
    """levine2020 Theorem 1: sep <= (H (d_a + 1))^C(L), C(L) = (3^L-1)/2.

    >>> levine2020_theorem1_bound(2, 1, 1)  # (1 * 2)^4
    16
    """
    _nat("H", H, 1)
    _nat("d_a", d_a, 1)
    return (H * (d_a + 1)) ** attention_factor_count(L)


def levine2020_theorem2_bound(L: int, d_x: int) -> int:
    """levine2020 Theorem 2, eq. (8): sep <= d_x (C+1) ((d_x, 2C)) (2C/d_x + 1)^d_x, C = C(L).

    The last factor bounds a product of integers (Lemma 3), so its floor is used.

    >>> levine2020_theorem2_bound(1, 2)  # 2 * 2 * ((2, 2)) * (2/2 + 1)^2 = 2 * 2 * 3 * 4
    48
    """
    _nat("d_x", d_x, 1)
    C = attention_factor_count(L)
    return d_x * (C + 1) * multiset(d_x, 2 * C) * ((2 * C + d_x) ** d_x // d_x**d_x)


def levine2020_theorem3_bound(L: int, N: int, d_x: int, H: int, form: str = "proof") -> int:
    """levine2020 Theorem 3 (residual network), from Lemma 2's factor K = N d_x^4 / H.

    ``form="proof"``: the recursion of the proof, sep <= (L+1) s_L with s_1 = K and
    s_l = K (l s_(l-1))^3. ``form="stated"``: the theorem's closed form,
    log3 sep <= L log3 L + log3(K) (3^L-1)/2, i.e. sep <= L^L K^C(L). The closed form is
    smaller than what the recursion gives, at every L (the branch count l is cubed by each
    later layer); the chapter shows this. Returned as floor.

    >>> levine2020_theorem3_bound(1, 2, 1, 1), levine2020_theorem3_bound(1, 2, 1, 1, "stated")
    (4, 2)
    """
    _nat("N", N, 1)
    _nat("d_x", d_x, 1)
    _nat("H", H, 1)
    C = attention_factor_count(L)
    K = Fraction(N * d_x**4, H)
    if form == "stated":
        return math.floor(Fraction(L**L) * K**C)
    if form != "proof":
        raise ParameterError("form", form, "'proof' or 'stated'")
    s = K
    for l in range(2, L + 1):
        s = K * (l * s) ** 3
    return math.floor((L + 1) * s)


def levine2020_theorem4_bound(L: int, d_x: int) -> int:
    """levine2020 Theorem 4 (residual network): (C(L) + 1) times the Theorem 2 bound.

    The proof adds a sum over the C(L) lower-degree branches and one term for the input.

    >>> levine2020_theorem4_bound(1, 2)  # 2 * 48
    96
    """
    return (attention_factor_count(L) + 1) * levine2020_theorem2_bound(L, d_x)


# -- measuring a network's grid-tensor rank -------------------------------------------------

@dataclass(frozen=True)
class GridSetting:
    """One network + vocabulary embedding + grid, in the papers' symbols.

    The V vocabulary tokens are the Z = V templates, so the grid covers every input sequence
    of [V]^N: the grid tensor is the whole function and its matricization rank is the
    separation rank itself (Claim 1 holds with equality on a finite domain).
    """

    L: int  # depth
    d_x: int  # width
    H: int  # heads per layer
    d_a: int  # attention dimension per head
    r: int  # rank of the vocabulary matrix M_V, eq. (3)
    N: int  # sequence length (even: balanced partitions)
    V: int  # vocabulary size = number of templates Z
    r_e: int = 0  # rank of the positional embedding (0: none, as in levine2020)
    residual: bool = False  # levine2020 A.4
    i: int = 0  # output position (in P, which holds position 0)
    p: int = 0  # output entry

    def __post_init__(self):
        for name in ("L", "d_x", "H", "d_a", "r", "N", "V"):
            _nat(name, getattr(self, name), 1)
        check_partition(range(self.N // 2), None, self.N)
        if self.r > min(self.d_x, self.V):
            raise ParameterError("r", self.r, f"r <= min(d_x, V) = {min(self.d_x, self.V)} "
                                              "(wies2021 eq. (3))")
        if not (0 <= self.i < self.N and 0 <= self.p < self.d_x):
            raise ParameterError("(i, p)", (self.i, self.p), "0 <= i < N, 0 <= p < d_x")

    @property
    def grid_cap(self) -> int:
        """The largest rank the grid allows: V^(N/2), the side of the matrix, or less.

        Without a positional embedding the network is symmetric under permutations of the
        positions other than i (the symmetry behind levine2020 Claim 3). Its columns are then
        functions of the multiset of the N/2 tokens at Q, and its rows of the token at i and
        the multiset of the other N/2 - 1 tokens at P, which caps the rank at
        min(((V, N/2)), V ((V, N/2 - 1))).

        >>> GridSetting(L=1, d_x=2, H=1, d_a=1, r=2, N=6, V=7).grid_cap  # ((7, 3)) = 84
        84
        """
        half = self.N // 2
        if self.r_e:
            return self.V**half
        return min(multiset(self.V, half), self.V * multiset(self.V, half - 1))

    def build(self, seed: int = 0, device=None):
        """Draw the embedding and network of this setting from ``seed`` (float64)."""
        from .attention_net import AttentionNetConfig, SelfAttentionNet
        from .embeddings import vocabulary_embedding

        g = torch.Generator().manual_seed(seed)
        emb = vocabulary_embedding(self.V, self.d_x, self.r, self.N, self.r_e, generator=g)
        net = SelfAttentionNet(AttentionNetConfig(self.L, self.d_x, self.H, self.d_a,
                                                  self.residual), generator=g)
        if device is not None:
            net = net.to(device)
            emb = type(emb)(emb.M_low.to(device), emb.M_vocab.to(device),
                            emb.positional.to(device))
        return emb, net

    def function(self, seed: int = 0, device=None):
        """The scalar function y_p^i of template indices (B, N) -> (B,)."""
        emb, net = self.build(seed, device)
        return lambda d: net(emb(d))[:, self.i, self.p]

    def function_mod_p(self, seed: int = 0, device=None, p: int = PRIME):
        """y_p^i in exact arithmetic modulo p, for weights drawn uniformly from GF(p).

        The same network as :class:`attnbook.engines.attention_net.SelfAttentionNet` (eq. 5 of
        wies2021), with every contraction reduced mod p; values are integers in [0, p) held in
        float64, exact because no contraction sums 2^11 or more products of residues.
        """
        L, d_x, H, d_a, r, N, V = self.L, self.d_x, self.H, self.d_a, self.r, self.N, self.V
        if max(d_x, H * d_a, N, r, self.r_e) >= 1 << 11:
            raise ParameterError("max(d_x, H d_a, N, r)", max(d_x, H * d_a, N, r),
                                 "below 2048 for exact float64 sums of residues")
        g = torch.Generator().manual_seed(seed)

        def draw(*shape):
            w = torch.randint(0, p, shape, generator=g, dtype=torch.int64)
            return w.to(device=device, dtype=torch.float64)

        table = ((draw(d_x, r) @ draw(r, V)) % p).T  # (V, d_x): M_V = M_low M_vocab mod p
        pos = ((draw(d_x, self.r_e) @ draw(self.r_e, N)) % p).T if self.r_e else \
            torch.zeros(N, d_x, dtype=torch.float64, device=device)  # (N, d_x)
        W_Q, W_K, W_V = (draw(L, H, d_a, d_x) for _ in range(3))  # (L, H, d_a, d_x)
        W_O = draw(L, H, d_x, d_a)  # (L, H, d_x, d_a)

        def f(d):
            y = attention_mod_p((table[d] + pos) % p, W_Q, W_K, W_V, W_O, p, self.residual)
            return y[:, self.i, self.p]

        return f


def attention_mod_p(y, W_Q, W_K, W_V, W_O, p: int = PRIME, residual: bool = False):
    """SelfAttentionNet's forward pass (wies2021 eq. 5) in exact arithmetic modulo p.

    y: (B, N, d_x) residues; W_Q, W_K, W_V: (L, H, d_a, d_x); W_O: (L, H, d_x, d_a); all
    integer-valued float64 tensors in [0, p). Every contraction is reduced mod p.

    >>> W = torch.ones(1, 1, 1, 1, dtype=torch.float64)
    >>> attention_mod_p(torch.tensor([[[2.], [3.]]], dtype=torch.float64), W, W, W, W, 7)
    tensor([[[5.],
             [4.]]], dtype=torch.float64)
    """
    for l in range(W_Q.shape[0]):
        q = torch.einsum("had,bnd->bhna", W_Q[l], y) % p  # (B, H, N, d_a)
        k = torch.einsum("had,bnd->bhna", W_K[l], y) % p
        v = torch.einsum("had,bnd->bhna", W_V[l], y) % p
        scores = (q @ k.transpose(-1, -2)) % p  # (B, H, N, N)
        out = torch.einsum("hxa,bhna->bnx", W_O[l], (scores @ v) % p) % p  # (B, N, d_x)
        y = (y + out) % p if residual else out
    return y


def setting_grid_tensor(s: GridSetting, seed: int = 0, device=None, chunk: int = 1 << 15):
    """The grid tensor (V,)*N of the setting's y_p^i, evaluated in batches on ``device``."""
    return grid_tensor(s.function(seed, device), s.V, s.N, chunk=chunk, device=device)


def measure_rank(s: GridSetting, seed: int = 0, partitions=None, device=None,
                 safety: float = 1.0) -> dict:
    """Exact (mod p) and float64 numerical rank of [[A]]_{P,Q} for each partition P.

    The default partition is P = {0, ..., N/2-1}. Returns ``rank_exact`` and ``rank`` (float)
    of the first partition, both per partition (``ranks_exact``, ``ranks``), the smallest
    float gap in decades, and the leading singular values of the first partition.
    """
    parts = partitions or [tuple(range(s.N // 2))]
    A = grid_tensor(s.function_mod_p(seed, device), s.V, s.N, device=device)
    exact = [rank_mod_p(matricize(A, P).to(torch.int64).numpy()) for P in parts]
    A = setting_grid_tensor(s, seed, device)
    results = [rank_with_gap(matricize(A, P), safety=safety) for P in parts]
    first = results[0]
    return {"rank_exact": exact[0], "ranks_exact": exact,
            "rank": first.rank, "ranks": [r.rank for r in results],
            "gap_decades": min(r.gap_decades for r in results),
            "sigma_rel": (first.sigma / first.sigma[0]).tolist() if first.sigma[0] else []}


def rank_sweep(settings, sweep, *, seed: int = 0, device=None, partitions: str = "first",
               progress: bool = True):
    """Measure every setting into a DataFrame, resumably: ``sweep`` is a ``run.sweep(name)``
    (any object with ``run(fn, configs, desc=...)``), which stores each setting as it finishes.

    ``partitions="all"`` measures every balanced partition (Claim 3); ``"first"`` only
    P = {0, ..., N/2-1}. Rows carry the setting, ``rank`` (first partition), ``ranks``,
    ``rank_exact``, ``ranks_exact``, ``gap_decades`` and ``grid_cap`` (see GridSetting).
    """
    if partitions not in ("first", "all"):
        raise ParameterError("partitions", partitions, "'first' or 'all'")
    # "measure" names what a stored result holds, so results of an older measurement are redone
    configs = [{**s.__dict__, "seed": seed, "partitions": partitions, "measure": "exact+float64"}
               for s in settings]

    def measure(c):
        s = GridSetting(**{k: v for k, v in c.items() if k in GridSetting.__dataclass_fields__})
        parts = balanced_partitions(s.N) if partitions == "all" else None
        m = measure_rank(s, seed, parts, device)
        m["sigma_rel"] = m["sigma_rel"][: m["rank"] + 8]  # enough to show the gap
        return m

    df = sweep.run(measure, configs, desc="grid ranks", progress=progress)
    df["grid_cap"] = [GridSetting(**{k: row[k] for k in GridSetting.__dataclass_fields__})
                      .grid_cap for _, row in df.iterrows()]
    return df


def add_bounds(df):
    """Add each paper's bound for every row's setting, as exact ints and as log10 floats.

    Columns: ``wies_upper`` (Theorem 3, eq. (9)), ``wies_lower`` (Corollary 1, eq. (14);
    None where it does not apply: L < 2 or H >= r), ``levine_t1``, ``levine_t2`` (Theorems
    1-2), ``levine_t3`` (Theorem 3, the proof's recursion), ``levine_t3_stated`` (its closed
    form) and ``levine_t4`` (Theorem 4), each with a ``log10_`` twin for plotting.
    """
    import pandas as pd

    df = df.copy()
    cols = {k: [] for k in ("wies_upper", "wies_lower", "levine_t1", "levine_t2", "levine_t3",
                            "levine_t3_stated", "levine_t4")}
    for _, s in df.iterrows():
        L, r, H = int(s["L"]), int(s["r"]), int(s["H"])
        cols["wies_upper"].append(wies2021_upper_bound(L, r, int(s["r_e"])))
        cols["wies_lower"].append(wies2021_lower_bound(L, r, H) if L >= 2 and H < r else None)
        cols["levine_t1"].append(levine2020_theorem1_bound(L, H, int(s["d_a"])))
        cols["levine_t2"].append(levine2020_theorem2_bound(L, int(s["d_x"])))
        cols["levine_t3"].append(levine2020_theorem3_bound(L, int(s["N"]), int(s["d_x"]), H))
        cols["levine_t3_stated"].append(
            levine2020_theorem3_bound(L, int(s["N"]), int(s["d_x"]), H, form="stated"))
        cols["levine_t4"].append(levine2020_theorem4_bound(L, int(s["d_x"])))
    for k, v in cols.items():
        df[k] = pd.Series(v, dtype=object, index=df.index)  # Python ints: exact however large
        df["log10_" + k] = [(math.log10(x) if x else float("-inf")) if x is not None else
                            float("nan") for x in v]
    return df



@torch.no_grad()
def worked_example(t) -> dict:
    """The smallest case of Claims 1-2, by hand and by the network: L = H = d_x = d_a = 1, N = 2.

    With all weights 1 and token v embedded as the scalar t_v, y^1 = t_a (t_a^2 + t_b^2) for
    tokens (a, b): the sum of two products t_a^3 * 1 + t_a * t_b^2, so sep = 2 whenever the
    t_v^2 are not all equal, and the grid matrix is [[A]]_{ab} = t_a^3 + t_a t_b^2.

    >>> ex = worked_example([1.0, 2.0, 3.0])
    >>> ex["rank"], ex["max_abs_diff"]
    (2, 0.0)
    >>> worked_example([-1.0, 1.0])["rank"]  # t^2 constant: a measure-zero choice, rank 1
    1
    """
    from .attention_net import AttentionNetConfig, SelfAttentionNet
    from .embeddings import VocabularyEmbedding

    t = torch.as_tensor(t, dtype=torch.float64).reshape(-1)  # (V,): the scalar embeddings
    V = t.numel()
    emb = VocabularyEmbedding(torch.ones(1, 1, dtype=torch.float64), t[None, :],
                              torch.zeros(2, 1, dtype=torch.float64))
    net = SelfAttentionNet(AttentionNetConfig(depth=1, d_x=1, heads=1, d_a=1))
    for W in (net.W_Q, net.W_K, net.W_V, net.W_O):
        W.fill_(1.0)
    A = grid_tensor(lambda d: net(emb(d))[:, 0, 0], V, 2)  # (V, V): rows a = token at 0
    by_hand = t[:, None] ** 3 + t[:, None] * t[None, :] ** 2  # t_a^3 + t_a t_b^2
    return {"grid": matricize(A, [0]), "by_hand": by_hand,
            "max_abs_diff": float((matricize(A, [0]) - by_hand).abs().max()),
            "rank": rank_with_gap(matricize(A, [0])).rank}
