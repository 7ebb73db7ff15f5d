"""Memorization capacity of multi-head attention (mahdavi2024), one module per object.

* :mod:`~attnbook.memorization.theory`: the proof's construction, the bounds, the ReLU
  comparison and the theory chapter's tables;
* :mod:`~attnbook.memorization.assumptions`: Kruskal rank and Assumptions 1-3 on small sets;
* :mod:`~attnbook.memorization.trained`: many attention layers trained by gradient descent
  at once (Figures 2-5);
* :mod:`~attnbook.memorization.token_ranks` and :mod:`~attnbook.memorization.real_models`:
  the assumptions tested on the tokens of real models (Tables 1 and 3, Figure 1).
"""
