"""Every claim's criterion can fail: a measurement that violates the paper's statement is
``not reproduced``, one that satisfies it is ``reproduced``.

``CASES`` holds, per claim id, one passing and one failing measurement (positional arguments
of the criterion registered in :mod:`attnbook.criteria`). The numbers of each criterion come
from the ledger's ``thresholds`` column, and each of them is written in the criterion's words.
"""

import math
import re

import numpy as np
import pandas as pd
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
def _pts(x, by_T):
    """Per-point table of a gradient-descent sweep: {T: [(x, metric), ...]} -> DataFrame."""
    return pd.DataFrame([{"T": T, x: a, "metric": m} for T, pts in by_T.items() for a, m in pts])


_T1 = pd.DataFrame({"rank": [3, 5], "bound": [3, 5], "max_rel_err": [1e-12, 3e-10],
                    "increments_ok": [True, True], "saturated_within_delta": [True, True]})
_UB = pd.DataFrame({"bound": [4, 7], "max_rank": [4, 7], "adv_max_rank": [np.nan, 7],
                    "adv_max_ratio": [np.nan, 1e-15]})
_P3 = pd.DataFrame({"model": ["MHA H=2", "ReLU m=1", "ReLU m=9"], "T": [19, 19, 19],
                    "params": [300, 40, 290], "bound": [np.nan, 2.1, 12.6],
                    "residual": [1e-12, 0.8, 0.05], "jacobian_rank": [np.nan, 20, 150],
                    "reduced_params": [np.nan, 21, 180], "T_d_out": [190, 190, 190]})
_P4 = pd.DataFrame({"in_asm1": [False, False], "in_asm2": [True, True],
                    "in_asm3": [True, True], "out_asm1": [True, True], "out_asm2": [True, True]})
# M-F3 at n = 8: H(n-1)+1 = 29 (H = 4), 57 (H = 8); the paper's ratios 4.4 and 5.22
_ACC3 = pd.DataFrame({"H": [4, 4, 4], "T": [116, 145, 174], "metric": [1.0, 1.0, 0.99]})
_SAT = np.where(np.arange(145 * 4).reshape(145, 4) % 4 == 0, 0.5, 0.999)  # 3 of 4 heads saturated
_LINEAR = {256: [(1, 0.1), (2, 0.2), (4, 0.4), (8, 0.79)]}
_BENT = {256: [(1, 0.1), (2, 0.5), (4, 0.55), (8, 0.6)]}

def _cross(pairs, L_shallow=5, max_width=128, found_fraction=1.0, band=2, **extra):
    """A crossings table as attnbook.depth_sweep.crossings gives it: one row per (V, width)."""
    return pd.DataFrame([{"V": V, "width": w, "found_fraction": found_fraction, "band": band,
                          "L_shallow": L_shallow, "max_width": max_width, **extra}
                         for V, w in pairs])


_GAPS = pd.DataFrame({"size": [1e4, 1e5], "diff": [0.01, -0.01], "se": [0.01, 0.01]})


CASES = {
    "M-T1": ((_T1,), (_T1.assign(rank=[3, 4]),)),
    "M-R1": ((_T1,), (_T1.assign(max_rel_err=[1e-12, 1e-6]),)),
    "M-P2": ((_UB,), (_UB.assign(adv_max_rank=[np.nan, 8]),)),
    "M-P5": ((_UB,), (_UB.assign(max_rank=[4, 6]),)),
    "M-P3": ((_P3, "ReLU m=9"), (_P3.assign(residual=[1e-12, 0.8, 1e-6]), "ReLU m=9")),
    "M-P4": ((_P4,), (_P4.assign(out_asm1=[True, False]),)),
    "M-F2a": ((_pts("H", _LINEAR),), (_pts("H", _BENT),)),
    "M-F2c": ((pd.DataFrame({"gain_to_n": [0.4, 0.3], "gain_beyond_n": [0.01, -0.02]}),),
              (pd.DataFrame({"gain_to_n": [0.4, 0.1], "gain_beyond_n": [0.01, 0.2]}),)),
    "M-F3": ((_ACC3, _SAT, 4, 8),  # 145 / 29 = 5.0, within 1.25 of 4.4, bracketed by 174
             (_ACC3.assign(T=[58, 87, 116], metric=[1.0, 0.9, 0.8]), _SAT[:58], 4, 8)),  # 2.0
    "M-F4": ((_pts("H", _LINEAR), _pts("n", _LINEAR), _pts("n", _BENT)),
             (_pts("H", _LINEAR), _pts("n", _LINEAR), _pts("n", _LINEAR))),
    "M-F5": ((_pts("H", {64: [(1, 0.05), (2, 0.01), (4, 2e-3), (8, 5e-5)]}),
              _pts("n", {64: [(2, 0.05), (4, 9e-3), (6, 1e-3), (8, 2e-5)]})),
             (_pts("H", {64: [(1, 0.05), (2, 0.01), (4, 2e-3), (8, 5e-5)]}),
              _pts("n", {64: [(2, 0.05), (4, 0.02), (8, 0.03)]}))),
    "M-F1": ((199, 197, 768), (420, 197, 768)),
    "M-T1tab": (("Assumption 1", 0.995, True), ("Assumption 2", 0.998, True)),
    "M-T3tab": (("General Position", 0.0, False), ("Assumption 1", 0.97, True)),
    "L-D": (([(1, 2, 10.0, 1.0, 2), (2, 3, 30.0, 1.0, 2), (3, 4, 90.0, 1.0, 2)],),
            ([(1, 2, 10.0, 1.0, 2), (2, 3, 30.0, 1.0, 2), (3, 4, None, 0.0, 2)],)),
    "L-Tab2": (([6.5e-4, 2.1e-3],), ([6.5e-4, 0.02],)),
    "M-F2b": (([0.0, 0.004, -0.02], _pts("n", _LINEAR)), ([0.0, 0.03], _pts("n", _LINEAR))),
    "W-F1": ((_cross([(32, 40.0), (64, 70.0)]),), (_cross([(32, 40.0), (64, None)]),)),
    # the paper's numbers (f_4 ~ 0.75, f_16 ~ 0.55, monotone) vs a ratio 16 no worse than ratio 2
    "W-F4": (({2: 0.9, 4: 0.75, 8: 0.62, 16: 0.55},), ({2: 0.6, 4: 0.75, 8: 0.7, 16: 0.8},)),
    "W-F6": (([(0.30, 0.05), (0.25, 0.1)],), ([(0.30, 0.05), (0.15, 0.1)],)),
    "L-Lem1": ((_lemma1(1e-15),), (_lemma1(1e-6),)),
    "L-T1": (([(3, 4, 48), (14, 10**6, 10**9)],), ([(3, 2, 48), (14, 10**6, 10**9)],)),
    "L-C3": (([(6, [5] * 10), (4, [3] * 3)],), ([(6, [5] * 9 + [6])],)),
    "L-T3": (([(3, 10, 5, 96)],), ([(3, 10, 2, 96)],)),
    "W-F2": (([(1, 1000, 200.0), (2, 1000, 300.0)],), ([(1, 1000, 400.0), (2, 1000, 300.0)],)),
    "W-F7": (({1: 2.00, 4: 2.01}, {4: 2.15, 8: 1.95}, 1.99, 0.01, 32, 32),
             ({1: 1.90, 4: 2.01}, {4: 2.15, 8: 1.95}, 1.99, 0.01, 32, 32)),
    "W-T1": ((_embedding_ranks(grown=True),), (_embedding_ranks(grown=False),)),
    "W-T2": ((_corollary1(21),), (_corollary1(9),)),
    "W-Tab1": (([2.00, 2.01, 2.02], [2.005, 2.015, 1.995]),
               ([2.00, 2.01, 2.02], [2.2, 2.21, 2.19])),
    "W-F3": ((_cross([(256, 36.0)], r=32, control_width=None, did=-0.1, did_se_value=0.01),),
             (_cross([(256, 70.0)], r=32, control_width=None, did=-0.1, did_se_value=0.01),)),
    "W-F5": ((_cross([(256, 40.0), (1024, 52.0)]), _GAPS),
             (_cross([(256, 40.0), (1024, 90.0)]), _GAPS)),
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
    assert criteria.decide("M-F2b", [np.nan], _pts("n", _LINEAR)) is False
    assert criteria.decide("M-F2b", [], _pts("n", _LINEAR)) is False


def test_mahdavi_saturation_needs_each_part():
    """M-F3 fails on saturation alone, on an unbracketed limit, and refuses an H the paper
    does not report; M-F4 fails on the line in H alone."""
    assert criteria.decide("M-F3", _ACC3, np.full((145, 4), 0.999), 4, 8) is False  # none free
    assert criteria.decide("M-F3", _ACC3, np.full((145, 4), 0.5), 4, 8) is False  # none saturated
    top = _ACC3.assign(metric=[1.0, 1.0, 1.0])  # 174 / 29 = 6.0 memorized at the top of the grid
    assert criteria.decide("M-F3", top, _SAT[:1].repeat(174, axis=0), 4, 8) is False
    with pytest.raises(AttnbookError, match="not H = 2"):
        criteria.decide("M-F3", _ACC3.assign(H=2), _SAT[:, :2], 2, 8)
    assert criteria.decide("M-F4", _pts("H", _BENT), _pts("n", _LINEAR),
                           _pts("n", _BENT)) is False


def test_mahdavi_line_fit_leaves_out_saturated_points():
    from attnbook.criteria.mahdavi2024 import line_r2_by

    pts = _pts("H", {32: [(1, 0.3), (2, 0.6), (4, 0.99), (8, 1.0)], 64: [(1, 0.1), (2, 0.2),
                                                                          (4, 0.4)]})
    r2 = line_r2_by(pts, "H", saturated_at=0.98, min_points=3)
    assert math.isnan(r2[32]) and r2[64] == 1.0


def test_head_size_curve_must_rise_up_to_n():
    # M-F2c: a curve that falls up to n (and falls more beyond) has no rise to speak of, even
    # though it "gains" more up to n than beyond
    falling = pd.DataFrame({"gain_to_n": [-0.01, 0.2], "gain_beyond_n": [-0.03, 0.0]})
    assert criteria.decide("M-F2c", falling) is False
    assert criteria.decide("M-F2c", falling.assign(gain_to_n=[0.01, 0.2])) is True


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


def test_every_claim_of_the_ledger_has_a_registered_criterion():
    assert set(criteria.CRITERIA) == set(LEDGER["id"])


def test_not_testable_is_a_verdict_of_its_own(tmp_path):
    """A criterion may answer NOT_TESTABLE (its premise fails); decide passes it through, the
    ledger records it as its own status, and a claim with such a part is not testable."""
    from attnbook.book import claims as book_claims
    from attnbook.criteria import CRITERIA, NOT_TESTABLE, decide

    def verdict(m):
        return NOT_TESTABLE if m is None else m > 0

    CRITERIA["X-NT"] = verdict
    try:
        d = tmp_path / "claims"
        d.mkdir()
        (d / "x.csv").write_text("id,kind,type,source,statement,paper_value,criterion,"
                                 "thresholds\nX-NT,figure,effect,s,t,v,c,\n")
        assert decide("X-NT", None, claims_dir=d) == NOT_TESTABLE
        assert decide("X-NT", 1, claims_dir=d) is True
        book_claims.record("X-NT", NOT_TESTABLE, "outside the regime", profile="cpu",
                           notebook="nb", run={}, part="a", claims_dir=d)
        book_claims.record("X-NT", True, "fine", profile="cpu", notebook="nb", run={},
                           part="b", claims_dir=d)
        row = book_claims.status_table("cpu", claims_dir=d).iloc[0]
        assert row["status"] == "not testable"
        assert book_claims.verdict_line("X-NT", "cpu", NOT_TESTABLE, "m") == \
            "X-NT [cpu] not testable: m"
    finally:
        del CRITERIA["X-NT"]


# -- the depth-efficiency criteria on each side of every threshold -------------------------

def test_wf1_each_side_of_its_thresholds():
    t = criteria.thresholds("W-F1")
    f, m = t["factor"], t["min_found"]
    ok = criteria.decide
    assert ok("W-F1", _cross([(32, 32 * f)])) is True
    assert ok("W-F1", _cross([(32, 32 * f * 1.01)])) is False
    assert ok("W-F1", _cross([(32, 32 / f)])) is True
    assert ok("W-F1", _cross([(32, 32 / f / 1.01)])) is False
    assert ok("W-F1", _cross([(32, 32.0)], found_fraction=m)) is True
    assert ok("W-F1", _cross([(32, 32.0)], found_fraction=m - 0.01)) is False  # not established
    assert ok("W-F1", _cross([(32, 32.0)], found_fraction=None)) is False  # one seed
    # the premise: L_shallow > log3 of the widest shallow net
    assert ok("W-F1", _cross([(32, 32.0)], L_shallow=5, max_width=3**5 - 1)) is True
    assert ok("W-F1", _cross([(32, 32.0)], L_shallow=5, max_width=3**5)) == criteria.NOT_TESTABLE
    assert ok("W-F1", _cross([(32, 32.0)], L_shallow=1, max_width=64)) == criteria.NOT_TESTABLE
    with pytest.raises(AttnbookError, match="tie band"):  # located with another band
        ok("W-F1", _cross([(32, 32.0)], band=t["tie_se"] / 2))


def test_the_tie_band_decides_whether_deep_wins():
    """The estimator's band: a deep family ahead by 1.5 standard errors of the gap at the
    largest sizes ties (no crossing), ahead by 2.5 wins (a crossing), at tie_se = 2."""
    from attnbook.depth_efficiency import depth_efficiency_point

    band = criteria.thresholds("W-F1")["tie_se"]
    sizes = [1e4, 1e5, 1e6]
    spread = np.array([-1.0, 0.0, 1.0]) * 0.01  # three seeds: sd 0.01, se of the gap 0.00816
    se = math.sqrt(2 * 0.01**2 / 3)
    shallow = [[2.0 + e for e in spread]] * 3
    for ahead, found in ((1.5, False), (2.5, True)):
        deep = [[2.0 + 0.05 + e for e in spread], [2.0 - ahead * se + e for e in spread],
                [2.0 - ahead * se + e for e in spread]]
        c = depth_efficiency_point(sizes, shallow, sizes, deep, n_boot=0, band=band)
        assert c.found is found, (ahead, c.reason)
        assert c.se[1] == pytest.approx(se)
        plain = depth_efficiency_point(sizes, shallow, sizes, deep, n_boot=0, band=0)
        assert plain.found  # without the band both would count as a win


def test_wf3_each_side_of_its_thresholds():
    t = criteria.thresholds("W-F3")
    f, k = t["factor"], t["did_se"]

    def wf3(width=32.0, control_width=None, did=0.0, se=0.01, **kw):
        return criteria.decide("W-F3", _cross([(256, width)], r=32, control_width=control_width,
                                              did=did, did_se_value=se, **kw))

    assert wf3() is True  # the control does not cross at all
    assert wf3(width=32 * f * 1.01) is False
    assert wf3(control_width=32 * f * 1.01) is True  # the control crosses outside the window
    assert wf3(control_width=32.0, did=-(k + 0.1) * 0.01) is True  # inside, but the rank moved it
    assert wf3(control_width=32.0, did=-(k - 0.1) * 0.01) is False
    assert wf3(found_fraction=t["min_found"] - 0.01) is False
    assert wf3(L_shallow=1, max_width=64) == criteria.NOT_TESTABLE


def test_wf5_each_side_of_its_thresholds():
    t = criteria.thresholds("W-F5")
    r, a = t["max_ratio"], t["agree_se"]
    gaps = lambda d: pd.DataFrame({"size": [1.0, 2.0], "diff": [0.0, d], "se": [0.01, 0.01]})  # noqa: E731
    wf5 = criteria.decide
    assert wf5("W-F5", _cross([(256, 40.0), (1024, 40.0 * r)]), gaps(0.0)) is True
    assert wf5("W-F5", _cross([(256, 40.0), (1024, 40.0 * r * 1.01)]), gaps(0.0)) is False
    assert wf5("W-F5", _cross([(256, 40.0), (1024, None)]), gaps(0.0)) is False  # one crosses
    none = _cross([(256, None), (1024, None)])
    assert wf5("W-F5", none, gaps((a - 0.1) * 0.01)) == criteria.NOT_TESTABLE  # curves agree
    assert wf5("W-F5", none, gaps((a + 0.1) * 0.01)) is False  # the vocabulary moved the curve
    assert wf5("W-F5", _cross([(256, 40.0), (1024, 40.0)], found_fraction=t["min_found"] - 0.01),
               gaps(0.0)) is False


def test_ld_each_side_of_its_thresholds():
    t = criteria.thresholds("L-D")
    n, q, m, b = t["min_pairs"], t["max_rate_ratio"], t["min_found"], t["tie_se"]

    def ld(widths, frac=1.0, band=b):
        return criteria.decide("L-D", [(L, L + 1, w, frac, band)
                                       for L, w in enumerate(widths, start=1)])

    assert ld([10.0, 30.0, 90.0][:n]) is True
    assert ld([10.0, 30.0, 90.0][:n - 1]) is False
    assert ld([10.0, 30.0, 30.0 * 3**q]) is True  # rates 1 and q: the largest q times the least
    assert ld([10.0, 30.0, 30.0 * 3**(q * 1.05)]) is False
    assert ld([10.0, 30.0, 90.0], frac=m) is True
    assert ld([10.0, 30.0, 90.0], frac=m - 0.01) is False
    with pytest.raises(AttnbookError, match="tie band"):
        ld([10.0, 30.0, 90.0], band=0)


# -- the memorization trends: tested only where models have not all saturated ---------------

def test_mf2a_and_mf4_are_not_testable_when_every_model_saturated():
    from attnbook.criteria import NOT_TESTABLE

    th = criteria.thresholds("M-F2a")
    at, k = th["saturated_at"], th["min_points"]
    full = _pts("H", {256: [(1, 1.0), (2, at), (4, 1.0), (8, 1.0)]})
    assert criteria.decide("M-F2a", full) == NOT_TESTABLE
    # min_points - 1 points below saturation: still nothing to fit; min_points: a line
    below = [(1, 0.1), (2, 0.2), (4, 0.4), (8, 0.8)]
    assert criteria.decide("M-F2a", _pts("H", {256: below[:k - 1] + [(8, 1.0)]})) \
        == NOT_TESTABLE
    assert criteria.decide("M-F2a", _pts("H", {256: below[:k] + [(8, 1.0)]})) is True
    # M-F4: any of its three sweeps without a fit is not testable, else it decides
    sat_n = _pts("n", {256: [(1, 1.0), (2, 1.0), (4, 1.0)]})
    assert criteria.decide("M-F4", _pts("H", _LINEAR), sat_n, _pts("n", _BENT)) \
        == NOT_TESTABLE
    assert criteria.decide("M-F4", _pts("H", _LINEAR), _pts("n", _LINEAR), sat_n) \
        == NOT_TESTABLE
    assert criteria.decide("M-F4", full, _pts("n", _LINEAR), _pts("n", _BENT)) == NOT_TESTABLE


def test_mf2b_each_side_of_its_thresholds():
    from attnbook.criteria import NOT_TESTABLE

    th = criteria.thresholds("M-F2b")
    at, k, drop = th["saturated_at"], th["min_points"], th["max_drop"]
    rising = [(1, 0.1), (2, 0.2), (4, 0.4), (8, 0.8)]
    pts = _pts("n", {256: rising})
    assert criteria.decide("M-F2b", [drop], pts) is True  # a drop at the tolerance
    assert criteria.decide("M-F2b", [drop * 1.01], pts) is False  # just beyond it
    # saturated: k - 1 accuracies below saturated_at is not testable, k is
    few = _pts("n", {256: rising[:k - 1] + [(16, at), (32, 1.0)]})
    assert criteria.decide("M-F2b", [0.0], few) == NOT_TESTABLE
    enough = _pts("n", {256: rising[:k] + [(16, at)]})
    assert criteria.decide("M-F2b", [0.0], enough) is True
    # an accuracy just below saturated_at counts as not saturated
    edge = _pts("n", {256: rising[:k - 1] + [(16, at - 1e-9)]})
    assert criteria.decide("M-F2b", [0.0], edge) is True


def test_mf5_each_side_of_its_thresholds():
    from attnbook.criteria import NOT_TESTABLE

    th = criteria.thresholds("M-F5")
    floor, k = th["mse_floor"], th["min_points"]
    falling = [(1, 0.05), (2, 0.01), (4, 2e-3), (8, floor / 2)]
    ok_n = _pts("n", {64: [(2, 0.05), (4, 9e-3), (6, 1e-3), (8, floor / 5)]})
    assert criteria.decide("M-F5", _pts("H", {64: falling}), ok_n) is True
    # every model at or below the floor: equal, a vacuous pass before; now not testable
    flat = _pts("H", {64: [(1, floor), (2, floor / 2), (4, floor / 10), (8, 0.0)]})
    assert criteria.decide("M-F5", flat, ok_n) == NOT_TESTABLE
    assert criteria.decide("M-F5", _pts("H", {64: falling}), flat.rename(columns={"H": "n"})) \
        == NOT_TESTABLE
    # k - 1 models above the floor: not testable; k: tested
    few = _pts("H", {64: falling[:k - 1] + [(8, floor)]})
    assert criteria.decide("M-F5", few, ok_n) == NOT_TESTABLE
    # a rise above the floor fails, one below the floor is equal
    rise = _pts("H", {64: [(1, 0.05), (2, 0.01), (4, 2e-3), (8, 2.1e-3)]})
    assert criteria.decide("M-F5", rise, ok_n) is False
    below = _pts("H", {64: [(1, 0.05), (2, 0.01), (4, 2e-3), (8, floor / 4), (16, floor / 2)]})
    assert criteria.decide("M-F5", below, ok_n) is True
