"""Every claim's criterion can fail: a measurement that violates the paper's statement is
``not reproduced``, one that satisfies it is ``reproduced``.

``CASES`` holds, per claim id, one passing and one failing measurement (positional arguments
of the criterion registered in :mod:`attnbook.criteria`). The numbers of each criterion come
from the ledger's ``thresholds`` column, and each of them is written in the criterion's words.
"""

import math
import re

import numpy as np
import pytest

from attnbook import criteria
from attnbook.book.claims import load_ledger
from attnbook.errors import AttnbookError

LEDGER = load_ledger()

# claim id -> (a measurement the paper's statement holds for, one it fails)
CASES = {
    "M-F2b": (([0.0, 0.004, -0.02],), ([0.0, 0.03],)),
    "W-F1": (([(32, 40.0), (64, 70.0)],), ([(32, 40.0), (64, None)],)),
    "W-Tab2-5": (([5e-4, 3e-3],), ([5e-4, 0.05],)),
    # bruna2024 (the measurements the chapters pass; B-LB's tables are built below)
    "B-FR": (([0.79, 0.1, 1e-12, 0.0], 1.0), ([0.79, 0.8, 1e-12, 0.0], 1.0)),
    "B-NN": (([([1, 2, 4, 8, 16], [0.85, 0.8, 0.78, 0.72, 0.02]),
               ([1, 2, 4, 8, 16], [0.9, 0.88, 0.8, 0.75, 0.1])], 16),
             ([([1, 2, 4, 8, 16], [0.54, 0.53, 0.56, 0.45, 0.06]),
               ([1, 2, 4, 8, 16], [0.9, 0.88, 0.8, 0.75, 0.1])], 16)),
    "B-LB": None,  # filled in below
    "B-MV": (([(d, 0.3 * d**-0.5) for d in (8, 64, 1024)],
              [(d, math.exp(-0.2 * d) / d) for d in (8, 16, 32, 64)]),
             ([(d, 0.3 * d**-0.5) for d in (8, 64, 1024)],
              [(d, 1.5 * d**-0.5) for d in (8, 16, 32, 64)])),  # the all-input error's decay
    "B-ZB": (("unary vs pairwise", (0.005, 16, [(1, 0.93), (8, 0.5), (12, 0.3), (24, 0.003)])),
             ("unary vs pairwise", (0.005, 16, [(1, 0.93), (8, 0.004), (24, 0.003)]))),
}


def _bruna_lower_bound_case(exponents):
    """B-LB's tables: exact dimension counts, coefficients ~ 1/l (quadrature where l < 100),
    heads needed ~ (d/r)^k with k = exponents[eps]."""
    import pandas as pd

    dims = pd.DataFrame({"formula": ["1", "3", "5"], "difference": ["1", "3", "5"],
                         "laplacian": [1.0, 3.0, np.nan]})
    ls = np.arange(1, 2001, 2)
    coef = pd.DataFrame({"d": 16, "l": ls, "coefficient": (-1.0) ** (ls // 2) / ls})
    coef["quadrature"] = coef["coefficient"].where(coef["l"] < 100)
    needed = pd.DataFrame([{"d": d, "r": 1, "eps": e, "H_needed": d**k}
                           for e, k in exponents.items() for d in (16, 32, 64, 128)])
    return dims, coef, 16, needed


CASES["B-LB"] = ((_bruna_lower_bound_case({0.4: 1, 0.25: 3})),
                 (_bruna_lower_bound_case({0.4: 1, 0.25: 1.5})))


@pytest.mark.parametrize("good", [True, False])
def test_bruna_power_sum_basis_part_can_fail(good):
    counts = [([1, 1, 0], [1, 1, 0], 3, 3), ([2, 3, 0], [2, 3, 0], 6, 6)]
    if not good:
        counts[1] = ([2, 2, 0], [2, 3, 0], 5, 6)
    assert criteria.decide("B-ZB", "power-sum basis", counts) is good


@pytest.mark.parametrize("claim_id", sorted(CASES))
def test_a_violating_measurement_fails_and_a_satisfying_one_passes(claim_id):
    good, bad = CASES[claim_id]
    assert criteria.decide(claim_id, *good) is True
    assert criteria.decide(claim_id, *bad) is False


@pytest.mark.parametrize("claim_id", sorted(criteria.CRITERIA))
def test_every_criterion_has_its_falsification_case(claim_id):
    assert claim_id in CASES, f"{claim_id}: no passing/failing case in tests/test_criteria.py"


@pytest.mark.parametrize("claim_id", sorted(criteria.CRITERIA))
def test_criterion_reads_exactly_the_ledgers_numbers(claim_id):
    assert claim_id in set(LEDGER["id"])
    fn = criteria.CRITERIA[claim_id]
    names = {p for p, v in __import__("inspect").signature(fn).parameters.items()
             if v.kind is v.KEYWORD_ONLY}
    assert names == set(criteria.thresholds(claim_id))


def _literals(text: str) -> set[float]:
    return {float(x) for x in re.findall(r"(?<![\w.])-?\d+(?:\.\d+)?(?:e-?\d+)?", text)}


@pytest.mark.parametrize("claim_id", sorted(LEDGER["id"]))
def test_every_threshold_is_written_in_the_criterion(claim_id):
    row = LEDGER.loc[LEDGER["id"] == claim_id].iloc[0]
    written = _literals(row["criterion"])
    for name, value in criteria.thresholds(claim_id).items():
        assert any(math.isclose(value, w, rel_tol=1e-12) for w in written), (
            f"{claim_id}: threshold {name} = {value} does not appear in the criterion's words")


def test_a_threshold_name_the_code_does_not_read_is_refused(tmp_path):
    csv = tmp_path / "work.csv"
    csv.write_text("id,kind,type,source,statement,paper_value,criterion,thresholds\n"
                   "M-F2b,figure,effect,s,s,v,drop <= 0.01,max_drop=0.01; extra=2\n")
    with pytest.raises(AttnbookError, match="differ from the names"):
        criteria.decide("M-F2b", [0.0], claims_dir=tmp_path)


@pytest.mark.parametrize("text", ["a", "a=x", "1a=2", "a=1; a=2", "a=nan", "a=inf"])
def test_malformed_thresholds_are_refused(text):
    with pytest.raises(AttnbookError):
        criteria.parse_thresholds(text)


def test_nan_measurement_is_not_reproduced():
    assert criteria.decide("M-F2b", [np.nan]) is False
    assert criteria.decide("M-F2b", []) is False
