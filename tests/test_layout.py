"""The folder tree is the architecture: these tests keep it so.

* ``attnbook.book`` (the executable-book machinery) imports no science module, and no science
  module imports ``attnbook.book``;
* no attnbook module imports another one's private name;
* the modules of ``attnbook.book`` import one another without circles (imports inside
  functions count: a circle is a cycle whether or not Python notices it), and only downhill
  across its three wings: run time (what a notebook calls while it runs), pages (what the
  book shows of what it stored) and commands (what runs it); ``attnbook`` and ``Run`` load
  the run-time wing only;
* every sweep of every chapter runs through ``Sweep.run``: no notebook holds its own loop over
  configurations;
* the claims' criteria (``attnbook.criteria``) import neither science nor machinery;
* every science module says, in its docstring, which chapters use it ("Used by: ..."), and
  the list is what the notebooks' imports actually reach;
* every science module sits in its work's package (``levine2020``, ``wies2021``,
  ``bruna2024``, ``mahdavi2024``) or in ``engines``; the engines import no work, no work
  imports another, a chapter reaches only its own work's package and the engines, and every
  engine serves chapters of at least two works;
* no two public functions or classes of the science modules (the engines, the works, data)
  share a name: one contract has one implementation, and two contracts have two names.
"""

import ast
import json
import re
from functools import cache
from pathlib import Path

import pytest

from attnbook import paths

PKG = Path(__file__).resolve().parents[1] / "src" / "attnbook"
NOTEBOOKS = sorted((PKG.parents[1] / "notebooks").glob("*.ipynb"))
SHARED = {"attnbook", "attnbook.__main__", "attnbook.errors", "attnbook.progress",
          "attnbook.device", "attnbook.paths", "attnbook.registry"}  # what every layer may use


def _module_name(path: Path) -> str:
    parts = path.relative_to(PKG.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module_name(p): p for p in PKG.rglob("*.py")}


def _resolve(module: str, node: ast.ImportFrom) -> list[str]:
    """Absolute attnbook module names an ImportFrom brings in (modules, not attributes)."""
    if node.level:
        base = module.split(".")
        is_pkg = MODULES[module].name == "__init__.py"
        base = base if is_pkg else base[:-1]
        base = base[: len(base) - (node.level - 1)]
        target = ".".join(base + ([node.module] if node.module else []))
    else:
        target = node.module or ""
    if not target.startswith("attnbook"):
        return []
    found = [target] if target in MODULES else []
    found += [f"{target}.{a.name}" for a in node.names if f"{target}.{a.name}" in MODULES]
    return found or [target]


@cache
def imports(module: str) -> frozenset:
    tree = ast.parse(MODULES[module].read_text())
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            out.update(_resolve(module, node))
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names if a.name.startswith("attnbook"))
    return frozenset(m for m in out if m in MODULES)


def _is_book(m: str) -> bool:
    return m == "attnbook.book" or m.startswith("attnbook.book.")


def test_root_is_the_repository():
    assert (paths.ROOT / "pyproject.toml").exists() and (paths.NOTEBOOKS).is_dir()


@pytest.mark.parametrize("module", sorted(m for m in MODULES if _is_book(m)))
def test_book_machinery_imports_no_science(module):
    science = {m for m in imports(module) if not _is_book(m) and m not in SHARED
               and m != "attnbook.criteria"}  # the registry of the claims' verdict functions
    assert not science, f"{module} imports science modules {sorted(science)}"


@pytest.mark.parametrize("module", sorted(m for m in MODULES if not _is_book(m)
                                          and m not in ("attnbook", "attnbook.__main__")))
def test_science_never_imports_the_book(module):
    book = {m for m in imports(module) if _is_book(m)}
    assert not book, f"{module} imports {sorted(book)}"


def test_book_modules_import_one_another_without_circles():
    book = sorted(m for m in MODULES if _is_book(m) and m != "attnbook.book")
    graph = {m: {d for d in imports(m) if d in book} for m in book}
    circles = []

    def visit(m, path):
        for d in sorted(graph[m]):
            if d == path[0]:
                circles.append(" -> ".join([*path, d]))
            elif d not in path and d > path[0]:  # each circle once, from its smallest module
                visit(d, [*path, d])

    for m in book:
        visit(m, [m])
    assert not circles, f"import circles: {circles}"


# The book's machinery in three wings, each importing only its own and those before it. Run
# time reads a chapter's .yml (profiles) and shows its tables and verdicts (display) while it
# runs; a pilot section (pilot) draws the profiles that have run as the pages read them.
WINGS = {
    "run time": {"notebook", "store", "claims", "provenance", "checkpoints", "executors",
                 "profiles", "display", "plotting", "history", "readers", "text"},
    "pages": {"report", "figures", "shown", "publish", "sites", "page_scripts", "mathjax_local",
              "pilot"},
    "commands": {"cli", "costs", "runner", "slurm", "migrate"},
}


def _wing(m: str) -> int:
    """The rank of a book module's wing: 0 run time, 1 pages, 2 commands."""
    name = m.removeprefix("attnbook.book.")
    return next(i for i, members in enumerate(WINGS.values()) if name in members)


def test_every_book_module_is_in_one_wing():
    book = {m.removeprefix("attnbook.book.") for m in MODULES
            if _is_book(m) and m != "attnbook.book"}
    placed = [n for members in WINGS.values() for n in members]
    assert sorted(placed) == sorted(book), "a book module in no wing, or in two"


@pytest.mark.parametrize("module", sorted(m for m in MODULES
                                          if _is_book(m) and m != "attnbook.book"))
def test_the_book_imports_only_downhill(module):
    up = sorted(d for d in imports(module)
                if _is_book(d) and d != "attnbook.book" and _wing(d) > _wing(module))
    assert not up, f"{module} ({list(WINGS)[_wing(module)]}) imports {up} from a wing above it"


def test_the_package_loads_only_the_run_time_wing():
    """``attnbook`` names the book's ``start``, ``Run`` and ``table`` lazily: from the run-time
    wing, whose ``notebook`` (``Run``) imports nothing above it (the test above)."""
    lazy = re.findall(r'"book\.(\w+)"', (PKG / "__init__.py").read_text())
    assert lazy and all(_wing(f"attnbook.book.{m}") == 0 for m in lazy), lazy
    assert _wing("attnbook.book.notebook") == 0


# what a book module may import inside a function: a dependency that is heavy to load (torch,
# matplotlib, the notebook and Sphinx machinery), optional (cloudpickle, submitit) or named
# differently across its versions (numpy's internals), and the attnbook modules that load torch
# or matplotlib when imported; everything else is imported at the top of the module
LAZY = ("torch", "matplotlib", "IPython", "sphinx", "papermill", "jupyter_client", "ipykernel",
        "nbformat", "cloudpickle", "submitit", "numpy", "attnbook.device", "attnbook.book.runner",
        "attnbook.book.report", "attnbook.book.plotting")


def _in_function_imports(module: str) -> list[str]:
    tree = ast.parse(MODULES[module].read_text())
    found = []
    for f in ast.walk(tree):
        if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for n in ast.walk(f):
                if isinstance(n, ast.Import):
                    found += [a.name for a in n.names]
                elif isinstance(n, ast.ImportFrom) and not n.level:
                    found.append(n.module)
                elif isinstance(n, ast.ImportFrom):  # "from . import runner": the module named
                    found += [m for m in _resolve(module, n) if n.module or m != "attnbook.book"]
    return found


@pytest.mark.parametrize("module", sorted(m for m in MODULES if _is_book(m)))
def test_the_book_imports_inside_a_function_only_what_is_heavy(module):
    light = sorted({m for m in _in_function_imports(module)
                    if not any(m == h or m.startswith(h + ".") for h in LAZY)})
    assert not light, f"{module} imports {light} inside a function: import it at the top"


def test_a_light_import_inside_a_function_is_found(tmp_path, monkeypatch):
    path = tmp_path / "m.py"
    path.write_text("def f():\n    import json\n    from .store import dumps\n"
                    "    from . import runner\n")
    monkeypatch.setitem(MODULES, "attnbook.book.m", path)
    assert _in_function_imports("attnbook.book.m") == ["json", "attnbook.book.store",
                                                       "attnbook.book.runner"]


@pytest.mark.parametrize("module", sorted(MODULES))
def test_no_private_name_crosses_a_module(module):
    tree = ast.parse(MODULES[module].read_text())
    private = [a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)
               and (n.level or (n.module or "").startswith("attnbook"))
               for a in n.names if a.name.startswith("_") and a.name != "__version__"]
    assert not private, f"{module} imports private names {private}"


def _code(nb: Path) -> str:
    cells = json.loads(nb.read_text())["cells"]
    return "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")


@pytest.mark.parametrize("nb", NOTEBOOKS, ids=lambda p: p.stem)
def test_no_notebook_loops_over_configurations(nb):
    code = _code(nb)
    for sign in (".missing(", ".put(", "perf_counter", "progress_bar(", "__import__"):
        assert sign not in code, f"{nb.stem}: '{sign}' (sweeps run through run.sweep().run)"
    loops = re.findall(r"^\s*for .* in .*\b(?:configs|grid|settings)\b.*:", code, flags=re.M)
    assert not loops, f"{nb.stem}: a loop over configurations: {loops}"


def _chapter_modules(nb: Path) -> set:
    """attnbook modules a notebook imports, and everything they import in turn."""
    tree = ast.parse(re.sub(r"^\s*[%!].*$", "", _code(nb), flags=re.M))
    todo = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("attnbook"):
            todo.update(_resolve("attnbook", node))
        elif isinstance(node, ast.Import):
            todo.update(a.name for a in node.names if a.name.startswith("attnbook"))
    seen = set()
    while todo:
        m = todo.pop()
        if m in seen or m not in MODULES:
            continue
        seen.add(m)
        todo |= imports(m)
    return seen


def _is_criteria(m: str) -> bool:
    return m == "attnbook.criteria" or m.startswith("attnbook.criteria.")


@pytest.mark.parametrize("module", sorted(m for m in MODULES if _is_criteria(m)))
def test_criteria_only_judge(module):
    """The claims' criteria judge measurements: they compute with no science module and draw
    on no book machinery (and a change to them stales no cached computation)."""
    other = {m for m in imports(module) if not _is_criteria(m) and m not in SHARED}
    assert not other, f"{module} imports {sorted(other)}"


SCIENCE = sorted(m for m in MODULES if not _is_book(m) and m not in SHARED
                 and not _is_criteria(m)
                 and m not in {f"attnbook.{p}" for p in ("mahdavi2024", "levine2020", "wies2021",
                                                         "bruna2024", "engines", "data")}
                 and m != "attnbook.__main__")


@pytest.mark.parametrize("module", SCIENCE)
def test_docstring_names_the_chapters_that_use_it(module):
    doc = ast.get_docstring(ast.parse(MODULES[module].read_text())) or ""
    m = re.search(r"Used by:(.*?)(?:\n\n|$)", doc, flags=re.S)
    assert m, f"{module}: the docstring has no 'Used by:' paragraph"
    stems = {nb.stem for nb in NOTEBOOKS}
    named = set(re.findall(r"[a-z]+\d{4}_\w+", m.group(1))) & stems
    actual = {nb.stem for nb in NOTEBOOKS if module in _chapter_modules(nb)}
    assert named == actual, (f"{module}: 'Used by' names {sorted(named)}, the notebooks reach "
                             f"it from {sorted(actual)}")


# One package per work, and the engines more than one work uses: a reader goes from a chapter
# (its stem starts with its work) to its code in one hop.
WORKS = ("levine2020", "wies2021", "bruna2024", "mahdavi2024")
TOP_LEVEL = SHARED | {"attnbook.resampling"}  # the stability rule's bootstrap, for any claim cell


def _package(m: str) -> str | None:
    """The package of attnbook a module belongs to (``engines``, a work, ``book``, ...), or
    None for a top-level module."""
    parts = m.split(".")
    top = ".".join(parts[:2])
    return parts[1] if len(parts) >= 2 and MODULES.get(top, Path()).name == "__init__.py" \
        else None


def test_every_science_module_is_in_a_work_package_or_the_engines():
    loose = sorted(m for m in MODULES if m.count(".") == 1 and m not in TOP_LEVEL
                   and _package(m) is None)
    assert not loose, f"modules outside a work's package or attnbook.engines: {loose}"


@pytest.mark.parametrize("module", sorted(m for m in MODULES if _package(m) == "engines"))
def test_engines_import_no_work(module):
    works = {m for m in imports(module) if _package(m) in WORKS}
    assert not works, f"{module} imports {sorted(works)}"


@pytest.mark.parametrize("module", sorted(m for m in MODULES if _package(m) in WORKS))
def test_a_work_imports_no_other_work(module):
    other = {m for m in imports(module) if _package(m) in WORKS and _package(m) != _package(module)}
    assert not other, f"{module} imports {sorted(other)}"


@pytest.mark.parametrize("nb", NOTEBOOKS, ids=lambda p: p.stem)
def test_a_chapter_reaches_its_own_work_and_the_engines_only(nb):
    work = nb.stem.split("_")[0]
    other = sorted(m for m in _chapter_modules(nb) if _package(m) in WORKS and _package(m) != work)
    assert not other, f"{nb.stem} reaches another work's modules {other}"


@pytest.mark.parametrize("module", sorted(m for m in MODULES if _package(m) == "engines"
                                          and m != "attnbook.engines"))
def test_an_engine_serves_more_than_one_work(module):
    works = {nb.stem.split("_")[0] for nb in NOTEBOOKS if module in _chapter_modules(nb)}
    assert len(works) >= 2, (f"{module} is reached only from {sorted(works)}: it belongs in that "
                             "work's package")


def test_no_two_science_functions_share_a_name():
    """A name says what its function computes: where two modules define one public name, the
    contracts are one (keep one implementation) or two (name each after what it computes)."""
    where = {}
    for module in SCIENCE:
        for node in ast.parse(MODULES[module].read_text()).body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) \
                    and not node.name.startswith("_"):
                where.setdefault(node.name, []).append(module)
    shared = {name: mods for name, mods in where.items() if len(mods) > 1}
    assert not shared, f"public names defined in more than one module: {shared}"
