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
    # the paper's numbers (f_4 ~ 0.75, f_16 ~ 0.55, monotone) vs a ratio 16 no worse than ratio 2
    "W-F4": (({2: 0.9, 4: 0.75, 8: 0.62, 16: 0.55},), ({2: 0.6, 4: 0.75, 8: 0.7, 16: 0.8},)),
    "W-F6": (([(0.30, 0.05), (0.25, 0.1)],), ([(0.30, 0.05), (0.15, 0.1)],)),
    "W-Tab2-5": (([5e-4, 3e-3],), ([5e-4, 0.05],)),
}


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


def test_attention_ratio_criteria_edges():
    # W-F4: an unmatched ratio (NaN), a missing paper ratio, a break of monotonicity beyond
    # the tolerance, and a paper value missed by more than the tolerance each fail
    good = {2: 0.9, 4: 0.75, 8: 0.62, 16: 0.55}
    assert criteria.decide("W-F4", {**good, 8: float("nan")}) is False
    assert criteria.decide("W-F4", {k: v for k, v in good.items() if k != 16}) is False
    assert criteria.decide("W-F4", {**good, 8: 0.9}) is False  # 0.9 > f_4 + 0.1
    assert criteria.decide("W-F4", {**good, 8: 0.84}) is True  # within the tolerance
    assert criteria.decide("W-F4", {**good, 16: 0.35}) is False  # |0.35 - 0.55| > 0.15
    assert criteria.decide("W-F4", {**good, 2: 1.15}) is False  # above f_1 = 1 by > 0.1
    # W-F6: equality with 2x passes, NaN fails, no sizes fails
    assert criteria.decide("W-F6", [(0.2, 0.1)]) is True
    assert criteria.decide("W-F6", [(float("nan"), 0.1)]) is False
    assert criteria.decide("W-F6", []) is False
