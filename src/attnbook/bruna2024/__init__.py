"""Rank versus heads (Zweig & Bruna 2022; Amsel, Yehudai & Bruna 2024, as in Bruna's talk).

* :mod:`~attnbook.bruna2024.harmonics`: spherical harmonics and the rank-separation lower bound;
* :mod:`~attnbook.bruna2024.furthest_neighbour`: the furthest-neighbour task, trained at
  rank r against the embedding dimension;
* :mod:`~attnbook.bruna2024.symmetric` and :mod:`~attnbook.bruna2024.unary_pairwise`:
  symmetric networks, unary (DeepSets) against pairwise, and their per-instance read-out.
"""
