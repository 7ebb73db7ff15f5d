"""Every notebook of the book has a valid parameters cell and profile file."""

import pytest

from attnbook import paths
from attnbook.book.profiles import check_value, load_spec, parse_value
from attnbook.errors import AttnbookError, ParameterError

NOTEBOOKS = sorted(paths.NOTEBOOKS.glob("*.ipynb"))


@pytest.mark.parametrize("nb", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_every_notebook_has_valid_parameters_and_profiles(nb):
    spec = load_spec(nb)  # raises on unknown keys, bad types or values out of range
    assert spec.defaults["profile"] == "cpu"
    assert "seed" in spec.defaults
    assert nb.with_suffix(".yml").exists(), "each notebook lists its profiles in <stem>.yml"
    for profile in ("ci", "cpu", "full"):
        assert spec.parameters(profile)["profile"] == profile


def test_values_are_checked_against_the_default_type_and_range():
    assert parse_value("xs", "[1, 2]", [3]) == [1, 2]
    with pytest.raises(ParameterError, match="has the wrong type"):
        check_value("n", 2.5, 3, {})
    with pytest.raises(ParameterError, match="has the wrong type"):
        check_value("flag", 1, True, {})
    with pytest.raises(ParameterError, match="allowed one of a, b"):
        check_value("task", "c", "a", {"choices": ["a", "b"]})
    with pytest.raises(ParameterError, match=r"allowed widths >= 1"):
        check_value("widths", [4, 0], [4], {"min": 1})
    assert check_value("lr", 1, 0.1, {"min": 0}) == 1  # an int is a valid float


def test_profile_file_errors_name_the_file(tmp_path):
    import shutil
    from pathlib import Path

    nb = tmp_path / "x.ipynb"
    shutil.copy(Path(__file__).parent / "fixtures" / "notebooks" / "a_ok.ipynb", nb)
    nb.with_suffix(".yml").write_text("profiles:\n  ci: {k: 50}\nallowed:\n  k: {min: 1, max: 5}\n"
                                      "  seed: {min: 0, max: 9}\n")
    with pytest.raises(AttnbookError, match=r"x.yml: profile ci: parameter k = 50 is out of range"):
        load_spec(nb)
    nb.with_suffix(".yml").write_text("profiles:\n  laptop: {}\n")
    with pytest.raises(AttnbookError, match=r"unknown profiles \['laptop'\]"):
        load_spec(nb)
    nb.with_suffix(".yml").write_text("allowed:\n  k: {min: 1}\n  seed: {min: 0, max: 9}\n")
    with pytest.raises(AttnbookError, match=r"numeric parameter 'k' needs both a min and a max"):
        load_spec(nb)
    for bad, what in [("__import__('os')", "calls something other than"),
                      ("k.real > 0", "uses Attribute"), ("j < k", "names 'j', not a parameter"),
                      ("k <", "is not an expression"),
                      ("all(_x > 0 for _x in [k])", "names starting with _ are reserved")]:
        nb.with_suffix(".yml").write_text(
            "allowed:\n  k: {min: 1, max: 5}\n  seed: {min: 0, max: 9}\n"
            f"rules:\n  - check: \"{bad}\"\n")
        with pytest.raises(AttnbookError, match=what):
            load_spec(nb)


@pytest.mark.parametrize("nb", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_every_numeric_parameter_is_bounded_above_and_below(nb):
    """Issue item 6: no parameter may take any number (steps = 1e10 would train for ever)."""
    spec = load_spec(nb)
    for name, default in spec.defaults.items():
        leaves = default if isinstance(default, list) else [default]
        while leaves and isinstance(leaves[0], list):
            leaves = [x for sub in leaves for x in sub]
        if name != "profile" and leaves and all(
                isinstance(v, (int, float)) and not isinstance(v, bool) for v in leaves):
            rule = spec.allowed.get(name) or {}
            assert "min" in rule and "max" in rule, f"{nb.stem}: {name} needs min and max"


# a check of the parameters alone is a rule or a range of the .yml, never a notebook's
# ab.require (tests/test_notebooks.py: test_a_parameter_rule_lives_in_the_yml_or_in_the_notebook_
# never_both)


@pytest.mark.parametrize("text, default, problem", [
    ("[a, b]", [4, 8], "has the wrong type: allowed a non-empty value of type list of int"),
    ("[[1,2]]", [4, 8], "has the wrong type"),
    ("[nan]", [0.5, 1.0], "is not a finite number"),
    ("[1e9]", [4, 8], "has the wrong type"),
    ("[]", [4, 8], "has the wrong type"),
    ("[1, 2.5]", [4, 8], "has the wrong type"),
    ("[[1, a]]", [[1, 2]], "has the wrong type"),
])
def test_list_elements_are_type_checked(text, default, problem):
    """Issue item 3: a list's elements are checked like the default's, recursively, as one
    line (not a TypeError from deep inside)."""
    with pytest.raises(ParameterError, match=problem.replace("[", r"\[")):
        check_value("xs", parse_value("xs", text, default), default, {"min": 0, "max": 100})
    assert parse_value("xs", "[1e-3, 2]", [0.5]) == [0.001, 2.0]
    assert check_value("xs", [[1, 2]], [[3, 4]], {"min": 0, "max": 5}) == [[1, 2]]


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "NaN"])
def test_floats_must_be_finite(value):
    """Issue item 4: NaN passes no range check."""
    with pytest.raises(ParameterError, match="is not a finite number"):
        check_value("min_gap", parse_value("min_gap", value, 3.0), 3.0, {"min": 1.0, "max": 12.0})


@pytest.mark.parametrize("nb", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_every_notebook_states_what_cpu_and_full_cost(nb):
    """``plan`` prints where, units and minutes for every chapter at cpu and full, each with
    the arithmetic (or the measurement) behind it in the note."""
    cost = load_spec(nb).cost
    for profile in ("cpu", "full"):
        entry = cost.get(profile) or {}
        assert entry.get("where") in ("cpu", "gpu"), f"{nb.stem}: cost of {profile} has no where"
        for key in ("minutes", "units", "note"):
            assert entry.get(key), f"{nb.stem}: cost of {profile} has no {key}"
    assert cost["cpu"]["where"] == "cpu", "the cpu profile runs here"


def test_a_rule_reads_a_criterion_number_from_the_ledger(tmp_path):
    """W-F7's divisors live in data/claims/wies2021.csv only; the rank-bottleneck rules read
    them there, so a profile without the ranks W-F7 reads fails before anything runs."""
    import shutil
    from pathlib import Path

    from attnbook.criteria import thresholds

    spec = load_spec(paths.NOTEBOOKS / "wies2021_rank_bottleneck.ipynb")
    cpu = {**spec.defaults, **spec.parameters("cpu")}
    high = cpu["d_x"] // int(thresholds("W-F7")["high_divisor"])
    with pytest.raises(ParameterError, match="W-F7 reads vocabulary ranks"):
        spec.parameters("cpu", {"ranks": [r for r in cpu["ranks"] if r != high]})
    nb = tmp_path / "x.ipynb"
    shutil.copy(Path(__file__).parent / "fixtures" / "notebooks" / "a_ok.ipynb", nb)
    nb.with_suffix(".yml").write_text(
        "allowed:\n  k: {min: 1, max: 50}\n  seed: {min: 0, max: 9}\n"
        "rules:\n  - check: \"k >= threshold('W-F7', 'no_such_number')\"\n")
    with pytest.raises(AttnbookError, match="W-F7 has no threshold 'no_such_number'"):
        load_spec(nb).parameters("cpu")


@pytest.mark.parametrize("T_factors, ok", [
    ([1.0, 2.0, 3.0, 4.0, 5.0], False),  # 5.0 is in the H = 8 window, nothing above it
    ([1.0, 2.0, 3.0, 7.0], False),       # above both windows, nothing inside the H = 8 one
    ([4.0, 5.0, 7.0], True),
])
def test_saturation_grid_must_bracket_the_papers_capacity(T_factors, ok):
    """M-F3 reads the largest T memorized perfectly inside a window around the paper's ratio;
    a grid with no multiple above the window could only report a lower bound there."""
    spec = load_spec(paths.NOTEBOOKS / "mahdavi2024_fig3_saturation.ipynb")
    if ok:
        assert spec.parameters("cpu", {"T_factors": T_factors})["T_factors"] == T_factors
    else:
        with pytest.raises(ParameterError, match="M-F3 needs a multiple"):
            spec.parameters("cpu", {"T_factors": T_factors})


# expressions whose value would take hours or all the memory to compute
HOSTILE = ["k < 9 ** 9 ** 9", "k < 10 ** 10 ** 10", "len([0] * 10 ** 10) > k",
           "sum([1] * 10 ** 6) > k", "comb(10 ** 9, 10 ** 8) > k",
           "0.5 in [0] * 10 ** 5 * 10 ** 5", "range(10 ** 12) and k",
           "all(a >= 0 for a in [0] * 10 ** 5 for b in [0] * 10 ** 5)",
           "k < len('%0999999999d' % k)"]
_HOSTILE_SCRIPT = r'''
import json, shutil, sys
from pathlib import Path
from attnbook.book.costs import estimate
from attnbook.book.profiles import load_spec
from attnbook.book.runner import plan
from attnbook.errors import AttnbookError

tmp, fixture, exprs = Path(sys.argv[1]), sys.argv[2], json.loads(sys.argv[3])
for i, expr in enumerate(exprs):
    for kind in ("rule", "estimate"):
        stem = f"x{i}{kind[0]}"
        nb = tmp / f"{stem}.ipynb"
        shutil.copy(fixture, nb)
        text = "allowed:\n  k: {min: 1, max: 5}\n  seed: {min: 0, max: 9}\n"
        text += (f"rules:\n  - check: {json.dumps(expr)}\n" if kind == "rule" else
                 f"estimate:\n  work: {json.dumps(expr)}\n  memory_gb: {json.dumps(expr)}\n")
        nb.with_suffix(".yml").write_text(text)
        try:
            if kind == "rule":
                load_spec(nb)
            else:
                estimate(plan([stem], "ci", [("k", "3")], notebooks_dir=tmp)[0])
            error = None
        except AttnbookError as e:
            error = str(e)
        print(json.dumps({"expr": expr, "kind": kind, "stem": stem, "error": error}), flush=True)
'''


def test_a_hostile_expression_is_refused_in_one_line_not_computed(tmp_path):
    """A rule or an estimate whose value would hang the runner or exhaust its memory is
    refused before it is computed, in one line naming the .yml and the expression. Run in a
    subprocess with a time limit, so that a regression fails instead of hanging the suite."""
    import json
    import subprocess
    import sys
    from pathlib import Path

    fixture = Path(__file__).parent / "fixtures" / "notebooks" / "a_ok.ipynb"
    try:
        out = subprocess.run([sys.executable, "-c", _HOSTILE_SCRIPT, str(tmp_path), str(fixture),
                              json.dumps(HOSTILE)], capture_output=True, text=True, timeout=120)
    except subprocess.TimeoutExpired as e:
        done = (e.stdout or b"").decode().count("\n")
        pytest.fail(f"still evaluating after 120 s, at {HOSTILE[done // 2]!r}")
    assert out.returncode == 0, out.stderr[-2000:]
    rows = [json.loads(line) for line in out.stdout.splitlines()]
    assert len(rows) == 2 * len(HOSTILE)
    for row in rows:
        error = row["error"]
        assert error is not None, row
        assert "\n" not in error and f"{row['stem']}.yml" in error and repr(row["expr"]) in error
        assert ("rule 1" if row["kind"] == "rule" else "estimate ") in error
