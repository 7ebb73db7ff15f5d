"""Levine et al. 2020, the depth-to-width interplay of self-attention: what only this work uses.

* :mod:`~attnbook.levine2020.depth_transition`: from which width one more layer pays off
  (section 5, Tables 1-2).

Its separation-rank and polynomial machinery (Lemma 1, Claims 1-2) is shared with wies2021 and
lives in :mod:`attnbook.engines` (``polynomial``, ``separation_rank``, ``attention_net``).
"""
