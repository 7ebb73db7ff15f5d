"""The pages name code that exists: every module path of book/notation.md, and every
`attnbook.<...>` name in the book's pages, the README, CONTRIBUTING and the chapters."""

import importlib.util
import pkgutil
import re

from attnbook import paths

OBJECTS = ("wte",)  # dotted spans that name an attribute of a model, not a module


def _dotted_names(text: str) -> list[str]:
    """The `a.b.c` code spans of the page that start with a lower-case name (a module path
    inside attnbook), leaving out those of :data:`OBJECTS`."""
    names = re.findall(r"`([a-z_0-9]+(?:\.[A-Za-z_0-9]+)+)(?:\([^`]*\))?`", text)
    return [n for n in names if n.split(".")[0] not in OBJECTS]


def _missing(names) -> list[str]:
    """The dotted names (inside attnbook) that :func:`pkgutil.resolve_name` cannot find."""
    missing = []
    for name in names:
        try:
            pkgutil.resolve_name("attnbook." + name)
        except (ImportError, AttributeError):
            missing.append(name)
    return missing


def test_every_module_path_on_the_notation_page_resolves():
    names = _dotted_names((paths.ROOT / "book" / "notation.md").read_text())
    assert len(names) >= 5  # the page names modules, and this test reads them
    missing = _missing(names)
    assert not missing, f"notation.md names code that does not exist: {missing}"


def test_every_attnbook_name_in_the_pages_and_chapters_resolves():
    root = paths.ROOT
    files = [*sorted((root / "book").glob("*.md")), root / "README.md", root / "CONTRIBUTING.md",
             *sorted((root / "notebooks").glob("*.ipynb"))]
    found = {}
    for f in files:
        for name in re.findall(r"attnbook\.([a-z_0-9]+(?:\.[A-Za-z_0-9]+)*)", f.read_text()):
            if name != "pdf":  # the PDF's file name, build/pdf/.../attnbook.pdf
                found.setdefault(name, f.name)
    assert len(found) >= 20
    missing = {n: found[n] for n in _missing(found)}
    assert not missing, f"pages name code that does not exist: {missing}"


def test_a_moved_module_path_is_read_and_would_fail():
    names = _dotted_names("| x | `memorization.statistics.f`, `wte.up.weight`, `LMConfig.V` |")
    assert names == ["memorization.statistics.f"]
    assert importlib.util.find_spec("attnbook.memorization") is None
