"""The unary-versus-pairwise check of Zweig & Bruna's symmetric networks, read per instance.

Each trained instance (a seed: its own target rotation, initialisations and batches) holds
DeepSets (unary) models of several widths H and one pairwise model. :func:`read_instances`
turns the sweep's rows into what the B-ZB criterion reads per seed, and one sentence per
instance for the chapter's verdict.

Used by: bruna2024_symmetric.
"""

import pandas as pd

__all__ = ["read_instances"]


def read_instances(configs, runs: pd.DataFrame, K: int, chapter_seed: int):
    """``(instances, described)``: seed -> (pairwise test error, K, [(H, DeepSets test
    error), ...]) for every trained instance (``configs`` and the rows of ``runs`` in the same
    order, each row holding the columns ``model``, ``H`` and ``test_error`` of one instance),
    and one sentence per instance naming its errors and the fewest DeepSets features that
    match the pairwise one.

    >>> runs = pd.DataFrame({"model": [["unary", "unary", "pairwise"]], "H": [[1, 4, 1]],
    ...                      "test_error": [[0.5, 0.01, 0.02]]})
    >>> inst, said = read_instances([{"seed": 0}], runs, K=3, chapter_seed=0)
    >>> inst
    {0: (0.02, 3, [(1, 0.5), (4, 0.01)])}
    >>> said[0].endswith("fewest DeepSets features matching it: H = 4")
    True
    """
    instances, described = {}, []
    for c, (_, row) in zip(configs, runs.iterrows(), strict=True):
        tab = pd.DataFrame({k: row[k] for k in ("model", "H", "test_error")})
        uni = tab[tab["model"] == "unary"]
        pair = float(tab.loc[tab["model"] == "pairwise", "test_error"].item())
        instances[c["seed"]] = (pair, K, [(int(h), float(e)) for h, e in
                                          zip(uni["H"], uni["test_error"], strict=True)])
        beaten = uni[uni["test_error"] <= pair]  # DeepSets models as good as the pairwise one
        described.append(
            ("the chapter's target" if c["seed"] == chapter_seed else "a fresh target, fixed "
             "after the threshold") + f" (seed {c['seed']}): DeepSets error "
            + ", ".join(f"H = {h}: {e:.3f}" for h, e in zip(uni["H"], uni["test_error"],
                                                             strict=True))
            + f"; one pairwise feature {pair:.1e}; fewest DeepSets features matching it: "
            + (f"H = {int(beaten['H'].min())}" if len(beaten) else "none trained"))
    return instances, described
