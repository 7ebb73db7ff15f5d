"""Memorization capacity of multi-head attention (mahdavi2024), one module per object.

* :mod:`~attnbook.memorization.attention`: the MHA layer of eqs. (1)-(7) and its data;
* :mod:`~attnbook.memorization.bounds`: the capacity bounds and parameter counts;
* :mod:`~attnbook.memorization.construction`: the proof of Theorem 1 as an algorithm;
* :mod:`~attnbook.memorization.feature_ranks`: rank(Z) under many weight draws (Props. 2, 5);
* :mod:`~attnbook.memorization.relu_fcn`: the two-layer ReLU network of Proposition 3;
* :mod:`~attnbook.memorization.checks`: the theory chapter's tables;
* :mod:`~attnbook.memorization.assumptions`: Kruskal rank and Assumptions 1-3 on small sets;
* :mod:`~attnbook.memorization.trained`: many attention layers trained by gradient descent
  at once (Figures 2-5), with :mod:`~attnbook.memorization.statistics` for their read-outs;
* :mod:`~attnbook.memorization.token_ranks` and :mod:`~attnbook.memorization.real_models`:
  the assumptions tested on the tokens of real models (Tables 1 and 3, Figure 1).
"""
