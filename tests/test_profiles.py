"""Every notebook of the book has a valid parameters cell and profile file."""

import pytest

from attnbook.book import paths
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
    nb.with_suffix(".yml").write_text("profiles:\n  ci: {k: 50}\nallowed:\n  k: {max: 5}\n")
    with pytest.raises(AttnbookError, match=r"x.yml: profile ci: parameter k = 50 is out of range"):
        load_spec(nb)
    nb.with_suffix(".yml").write_text("profiles:\n  laptop: {}\n")
    with pytest.raises(AttnbookError, match=r"unknown profiles \['laptop'\]"):
        load_spec(nb)
