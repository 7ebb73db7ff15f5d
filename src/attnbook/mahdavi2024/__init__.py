"""Memorization capacity of multi-head attention (mahdavi2024), one module per object.

* :mod:`~attnbook.mahdavi2024.attention`: the MHA layer of eqs. (1)-(7) and its data;
* :mod:`~attnbook.mahdavi2024.bounds`: the capacity bounds and parameter counts;
* :mod:`~attnbook.mahdavi2024.construction`: the proof of Theorem 1 as an algorithm;
* :mod:`~attnbook.mahdavi2024.feature_ranks`: rank(Z) under many weight draws (Props. 2, 5);
* :mod:`~attnbook.mahdavi2024.relu_fcn`: the two-layer ReLU network of Proposition 3;
* :mod:`~attnbook.mahdavi2024.checks`: the theory chapter's tables;
* :mod:`~attnbook.mahdavi2024.assumptions`: Kruskal rank and Assumptions 1-3 on small sets;
* :mod:`~attnbook.mahdavi2024.trained`: many attention layers trained by gradient descent
  at once (Figures 2-5), with :mod:`~attnbook.mahdavi2024.statistics` for their read-outs;
* :mod:`~attnbook.mahdavi2024.token_ranks` and :mod:`~attnbook.mahdavi2024.real_models`:
  the assumptions tested on the tokens of real models (Tables 1 and 3, Figure 1).
"""
