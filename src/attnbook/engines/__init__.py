"""The engines more than one work of the book uses, one module per idea.

* :mod:`~attnbook.engines.lm`, :mod:`~attnbook.engines.training` and
  :mod:`~attnbook.engines.lm_sweep`: the Transformer language model, its trainer (many seeds
  stacked in one program) and the sweeps of trained models (levine2020, wies2021);
* :mod:`~attnbook.engines.depth_sweep` and :mod:`~attnbook.engines.depth_efficiency`: a shallow
  and a deep family over matched sizes, and the size from which the deep one wins (levine2020,
  wies2021);
* :mod:`~attnbook.engines.pilots`: the budgets a pilot trains at and what its statistic does;
* :mod:`~attnbook.engines.attention_net`, :mod:`~attnbook.engines.polynomial`,
  :mod:`~attnbook.engines.embeddings` and :mod:`~attnbook.engines.separation_rank`: the
  unnormalized attention networks, their polynomial structure, their input embeddings and
  their separation rank through grid tensors (levine2020, wies2021);
* :mod:`~attnbook.engines.linalg`: numerical ranks with their gaps and batched ranks (every
  work); :mod:`~attnbook.engines.schedules`: the one learning-rate schedule of every trainer.

A work's own objects are in its package (:mod:`attnbook.levine2020`, :mod:`attnbook.wies2021`,
:mod:`attnbook.bruna2024`, :mod:`attnbook.mahdavi2024`); the engines import none of them.
"""
