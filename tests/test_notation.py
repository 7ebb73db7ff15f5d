"""book/notation.md: every dotted code name it gives for a symbol exists in attnbook."""

import importlib
import importlib.util
import re

from attnbook import paths

OBJECTS = ("wte",)  # dotted spans that name an attribute of a model, not a module


def _dotted_names(text: str) -> list[str]:
    """The `a.b.c` code spans of the page that start with a lower-case name (a module path
    inside attnbook), leaving out those of :data:`OBJECTS`."""
    names = re.findall(r"`([a-z_0-9]+(?:\.[A-Za-z_0-9]+)+)(?:\([^`]*\))?`", text)
    return [n for n in names if n.split(".")[0] not in OBJECTS]


def test_every_module_path_on_the_notation_page_resolves():
    text = (paths.ROOT / "book" / "notation.md").read_text()
    names = _dotted_names(text)
    assert len(names) >= 5  # the page names modules, and this test reads them
    missing = []
    for name in names:
        parts = name.split(".")
        for cut in range(len(parts), 0, -1):  # the longest importable module prefix
            try:
                obj = importlib.import_module("attnbook." + ".".join(parts[:cut]))
            except ModuleNotFoundError:
                continue
            try:
                for attr in parts[cut:]:
                    obj = getattr(obj, attr)
            except AttributeError:
                missing.append(name)
            break
        else:
            missing.append(name)
    assert not missing, f"notation.md names code that does not exist: {missing}"


def test_a_moved_module_path_is_read_and_would_fail():
    names = _dotted_names("| x | `memorization.statistics.f`, `wte.up.weight`, `LMConfig.V` |")
    assert names == ["memorization.statistics.f"]
    assert importlib.util.find_spec("attnbook.memorization") is None
