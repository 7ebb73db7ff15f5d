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


def _lemma1(plain_error):
    """Two plain networks (one line-tested) and a residual control, as lemma1_table rows."""
    row = {"residual": False, "degree": 9, "fitted_degree": 9.0, "residual_at_degree": np.nan,
           "residual_below_degree": np.nan}
    return [{**row, "max_rel_error": plain_error, "residual_at_degree": 1e-15,
             "residual_below_degree": 1e-4},
            {**row, "max_rel_error": 1e-15},
            {**row, "residual": True, "fitted_degree": 7.5, "max_rel_error": 0.4}]


def _embedding_ranks(grown):
    """(L, H, d_x, r, r_e) -> exact rank rows: without a positional embedding the rank is
    1 + r at every width; with r_e = 1 it is 2 + r once d_x >= r + 1 (``grown``) or not."""
    rows = []
    for r_e in (0, 1):
        for d_x in (2, 3):
            for r in range(1, d_x + 1):
                rank = 1 + r + (r_e and (d_x >= r + r_e or not grown))
                rows.append({"L": 1, "H": 1, "d_x": d_x, "r": r, "r_e": r_e, "rank_exact": rank,
                             "grid_cap": 343 if r_e else 84, "wies_upper": 10**6})
    return rows


def _corollary1(rank):
    row = {"L": 3, "H": 1, "d_x": 7, "r": 7, "V": 21, "rank_exact": rank, "wies_lower": 10}
    return [row, {**row, "L": 1, "rank_exact": 2, "wies_lower": None}]


# claim id -> (a measurement the paper's statement holds for, one it fails)
CASES = {
    "L-Lem1": ((_lemma1(1e-15),), (_lemma1(1e-6),)),
    "L-T1": (([(3, 4, 48), (14, 10**6, 10**9)],), ([(3, 2, 48), (14, 10**6, 10**9)],)),
    "L-C3": (([(6, [5] * 10), (4, [3] * 3)],), ([(6, [5] * 9 + [6])],)),
    "L-T3": (([(3, 10, 5, 96)],), ([(3, 10, 2, 96)],)),
    "M-F2b": (([0.0, 0.004, -0.02],), ([0.0, 0.03],)),
    "W-F1": (([(32, 40.0), (64, 70.0)],), ([(32, 40.0), (64, None)],)),
    "W-F2": (([(1, 1000, 200.0), (2, 1000, 300.0)],), ([(1, 1000, 400.0), (2, 1000, 300.0)],)),
    "W-F7": (({1: 2.00, 4: 2.01}, {4: 2.15, 8: 1.95}, 1.99, 0.01, 32, 32),
             ({1: 1.90, 4: 2.01}, {4: 2.15, 8: 1.95}, 1.99, 0.01, 32, 32)),
    "W-T1": ((_embedding_ranks(grown=True),), (_embedding_ranks(grown=False),)),
    "W-T2": ((_corollary1(21),), (_corollary1(9),)),
    "W-Tab1": (([2.00, 2.01, 2.02], [2.005, 2.015, 1.995]),
               ([2.00, 2.01, 2.02], [2.2, 2.21, 2.19])),
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


def test_a_check_that_can_only_show_rank_at_least_1_does_not_pass():
    small = [{"L": 2, "H": 1, "d_x": 3, "r": 3, "V": 7, "rank_exact": 18, "wies_lower": 1}]
    assert criteria.decide("W-T2", small) is False


def test_saturation_across_widths_is_checked_not_only_growth():
    rows = _embedding_ranks(grown=True)
    rows[0]["rank_exact"] = 1  # r_e = 0, r = 1: rank 1 at d_x = 2 but 2 at d_x = 3
    assert criteria.decide("W-T1", rows) is False


def test_w_f7_names_a_missing_measurement():
    with pytest.raises(AttnbookError, match="r = 8"):
        criteria.decide("W-F7", {1: 2.0}, {4: 2.1}, 1.99, 0.01, 32, 32)
