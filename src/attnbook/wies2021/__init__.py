"""Wies et al. 2021, the vocabulary and embedding-rank bottleneck: what only this work uses.

* :mod:`~attnbook.wies2021.rank_bottleneck`: Figure 2 and Tables 1-2, the cost of a low-rank
  input embedding against its factored control;
* :mod:`~attnbook.wies2021.positional_rank`: Figure 7, a low-rank positional embedding;
* :mod:`~attnbook.wies2021.attention_ratio`: section 5.3, the width bottlenecking H d_a;
* :mod:`~attnbook.wies2021.figures`: the figures and tables of these chapters, drawn from what
  the three above read.

Its vocabulary sweeps share :mod:`attnbook.engines.depth_sweep` with levine2020, and its
embedding-rank bounds the separation-rank engine (:mod:`attnbook.engines.separation_rank`).
"""
