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
    "W-F3": (([(32, 36.0)],), ([(32, 70.0)],)),
    "W-F5": (([40.0, 52.0],), ([40.0, 90.0],)),
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
