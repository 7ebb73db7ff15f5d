"""The criteria of the claims ledger, as code: each claim id's verdict function.

The paper side of a claim (``data/claims/<work>.csv``) states its criterion in words and its
numbers (thresholds, tolerances, ratios) once, in the ``thresholds`` column as
``name=value; name=value``. The function registered here for that id decides the verdict from
a measurement, and reads those numbers from the column, never from a literal of its own:

>>> thresholds("L-Tab2")
{'max_std': 0.01}
>>> decide("L-Tab2", [0.002, 0.004])
True
>>> decide("L-Tab2", [0.002, 0.03])
False

:func:`criterion` registers a function under a claim id; its keyword-only parameters are the
threshold names and must equal the column's names (checked when it is called), so the words,
the numbers and the check cannot drift apart. ``tests/test_criteria.py`` feeds every
registered function a measurement that satisfies the paper's statement and one that violates
it. A criterion no input can fail is a defect that test shows.

Beside each verdict, the sentence that says what was measured: :func:`description` registers
a function under a claim id that writes the numbers the criterion reads (the R^2 of its line
fits, its bootstrap intervals, its crossings) from the same measurement, and
:func:`describe` calls it with the ledger's numbers it names, so a claim cell is
``run.record(id, decide(id, m), describe(id, m))`` and the sentence cannot report other numbers
than those the verdict was decided from:

>>> describe("L-Tab2", [{"std": 0.002, "L": 1, "d_x": 8}, {"std": 0.004, "L": 2, "d_x": 8}],
...          n_seeds=3)
'largest seed std of test loss over 3 seeds: 4.0e-03 (L=2, d_x=8) among 2 points'

The functions take measurements (numbers, arrays, tables a chapter computed) and compute
nothing expensive; this package imports no science module and no book machinery, and a
change here makes no cached computation stale (the ledger entries it decided record the
criterion they were decided by, see :mod:`attnbook.book.claims`).
"""

import ast
import copy
import csv
import hashlib
import inspect
import math
import textwrap
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path

from ..errors import AttnbookError

__all__ = ["CRITERIA", "DESCRIPTIONS", "NOT_TESTABLE", "all_at_most", "code_sha", "criterion",
           "criterion_code", "crossing_text", "decide", "describe", "description", "missing",
           "named_code", "largest_seed_std", "package_sources", "parse_thresholds", "records",
           "thresholds"]

CRITERIA: dict[str, Callable] = {}
DESCRIPTIONS: dict[str, Callable] = {}  # claim id -> the sentence of what its verdict read
# the verdict of a criterion whose premise the measurement does not meet (the regime the paper
# states, or an effect that nothing measured could show): neither reproduced nor refuted
NOT_TESTABLE = "not testable"


def parse_thresholds(text: str) -> dict[str, float]:
    """``"a=0.5; b=3"`` -> ``{"a": 0.5, "b": 3}`` (ints stay ints; empty text -> {}).

    >>> parse_thresholds("r2_min=0.98; min_points=3")
    {'r2_min': 0.98, 'min_points': 3}
    """
    out: dict[str, float] = {}
    for item in filter(None, (s.strip() for s in (text or "").split(";"))):
        name, sep, value = (s.strip() for s in item.partition("="))
        if not sep or not name.isidentifier() or name in out:
            raise AttnbookError(f"thresholds {text!r}: each item is name=value with a new "
                                f"identifier as name, got {item!r}")
        try:
            number = int(value)
        except ValueError:
            try:
                number = float(value)
            except ValueError:
                raise AttnbookError(f"thresholds {text!r}: {name} = {value!r} is not a "
                                    f"number") from None
        if not math.isfinite(number):
            raise AttnbookError(f"thresholds {text!r}: {name} = {value!r} is not finite")
        out[name] = number
    return out


@lru_cache(maxsize=4)
def _table(claims_dir: Path, stamp: tuple = ()) -> dict[str, dict[str, float]]:
    out = {}
    for path in sorted(claims_dir.glob("*.csv")):
        with path.open(newline="") as f:
            for row in csv.DictReader(f):
                out[row["id"]] = parse_thresholds(row.get("thresholds", ""))
    return out


def thresholds(claim_id: str, claims_dir: Path | None = None) -> dict[str, float]:
    """The numbers of ``claim_id``'s criterion, as written in its ledger row."""
    from .. import paths

    claims_dir = Path(claims_dir or paths.CLAIMS)
    stamp = tuple((p.name, p.stat().st_mtime_ns, p.stat().st_size)
                  for p in sorted(claims_dir.glob("*.csv")))  # an edited ledger is re-read
    table = _table(claims_dir, stamp)
    if claim_id not in table:
        raise AttnbookError(f"unknown claim id {claim_id!r}: ids are those of "
                            f"data/claims/*.csv")
    return dict(table[claim_id])


def missing(x) -> bool:
    """Whether a measured scalar is absent: None, or NaN of any float type (what a table holds
    where nothing ran).

    >>> import numpy as np
    >>> [missing(v) for v in (None, float("nan"), np.float32("nan"), 0.0, 3, "x")]
    [True, True, True, False, False, False]
    """
    return x is None or bool(x != x)  # NaN is the one value unequal to itself


def all_at_most(values, limit) -> bool:
    """At least one value, and every one at most ``limit`` (a NaN is not).

    >>> all_at_most([0.1, 0.2], 0.2), all_at_most([], 1), all_at_most([float("nan")], 1)
    (True, False, False)
    """
    values = [float(v) for v in values]
    return bool(values) and all(v <= limit for v in values)


def records(table) -> list[dict]:
    """A table (a DataFrame or an iterable of dicts) as a list of dicts.

    >>> records([{"a": 1}])
    [{'a': 1}]
    """
    if hasattr(table, "to_dict"):
        return table.to_dict("records")
    return [dict(r) for r in table]


def largest_seed_std(table, n_seeds: int, where) -> str:
    """The sentence of a seed-noise criterion (L-Tab2, W-Tab2-5): the largest seed standard
    deviation of the test loss, where it is (``where(row)``), among how many points.
    ``table``: a ``std`` per point (a NaN is not read); ``n_seeds``: the seeds of each point.

    >>> largest_seed_std([{"std": 1e-3, "k": 1}, {"std": 4e-3, "k": 2}], 3, lambda r: r["k"])
    'largest seed std of test loss over 3 seeds: 4.0e-03 (2) among 2 points'

    A point without a finite std fails the criterion (:func:`all_at_most`), so it is named:

    >>> largest_seed_std([{"std": 1e-3, "k": 1}, {"std": float("nan"), "k": 2}], 3,
    ...                  lambda r: r["k"])
    'largest seed std of test loss over 3 seeds: 1.0e-03 (1) among 2 points; no finite std at 2'
    """
    rows = records(table)
    finite = [r for r in rows if math.isfinite(float(r["std"]))]
    worst = max(finite, key=lambda r: float(r["std"]), default=None)
    text = (f"largest seed std of test loss over {n_seeds} seeds: "
            + (f"{float(worst['std']):.1e} ({where(worst)})" if worst else "none finite")
            + f" among {len(rows)} points")
    bad = [str(where(r)) for r in rows if not math.isfinite(float(r["std"]))]
    return text + (f"; no finite std at {', '.join(bad)}" if bad else "")


def criterion(claim_id: str):
    """Register the decorated function as ``claim_id``'s verdict."""

    def register(fn):
        if claim_id in CRITERIA:
            raise AttnbookError(f"two criteria registered for {claim_id}")
        CRITERIA[claim_id] = fn
        return fn

    return register


def description(claim_id: str):
    """Register the decorated function as the sentence of ``claim_id``'s measurement: it takes
    the measurement its criterion takes (and what else the sentence names, by keyword), and
    those of the ledger's numbers it names as keyword-only parameters."""

    def register(fn):
        if claim_id in DESCRIPTIONS:
            raise AttnbookError(f"two descriptions registered for {claim_id}")
        DESCRIPTIONS[claim_id] = fn
        return fn

    return register


def crossing_text(label: str, located: str, row, digits: int = 1) -> str:
    """One crossing of a depth-efficiency sweep in words: ``label``, then ``located`` (the
    crossing's width as the chapter names it) with its bootstrap interval over seeds, at the
    level of the row's ``crossing`` (95% where the row keeps none), and the share of replicates
    that found a crossing (``located`` is not read where none was found: pass "" there); ``row``
    holds ``found``, ``reason``, ``width_low``, ``width_high``, ``low_open``, ``high_open`` and
    ``found_fraction`` (a dict or a named tuple). No interval (one seed, or a NaN bound) and no
    crossing say so.

    >>> crossing_text("V=64", "shallow width 60 = 0.94 V", dict(found=True, width_low=40.0,
    ...               width_high=90.0, low_open=False, high_open=True, found_fraction=0.9), 0)
    'V=64: shallow width 60 = 0.94 V (95% bootstrap 40 .. >=90, crossing in 90% of replicates)'
    >>> crossing_text("L=1|2", "d* 9.0", dict(found=False, reason="deeper never ahead"))
    'L=1|2: no crossing (deeper never ahead)'
    """
    get = row.get if isinstance(row, dict) else lambda k: getattr(row, k, None)
    if not get("found"):
        return f"{label}: no crossing ({get('reason')})"
    low, high = get("width_low"), get("width_high")
    if missing(low):
        return f"{label}: {located} (no interval)"
    level = getattr(get("crossing"), "level", 0.95)  # the estimate's own level where it is kept
    return (f"{label}: {located} ({level:.0%} bootstrap {'<=' if get('low_open') else ''}"
            f"{low:.{digits}f} .. {'>=' if get('high_open') else ''}{high:.{digits}f}, "
            f"crossing in {get('found_fraction'):.0%} of replicates)")


def tie_band_rule(claim_id: str, winner: str = "the deep family",
                  claims_dir: Path | None = None) -> str:
    """The tie band and the share of bootstrap replicates by which ``claim_id``'s criterion
    (one that locates a depth-efficiency point with ``tie_se`` and ``min_found``) reads a
    crossing, in words with the ledger's numbers; ``winner`` names the side that starts to win.

    >>> tie_band_rule("W-F1")  # doctest: +NORMALIZE_WHITESPACE
    "A gap within 2 standard errors of zero (from the seeds) is a tie, not a win: the point is
    where the deep family starts to win beyond that band, and a point that fewer than 80% of
    the bootstrap replicates find is not established (the criterion's tie_se and
    min_found)."
    """
    numbers = thresholds(claim_id, claims_dir)
    return (f"A gap within {numbers['tie_se']:g} standard errors of zero (from the seeds) is a "
            f"tie, not a win: the point is where {winner} starts to win beyond that band, and a "
            f"point that fewer than {numbers['min_found']:.0%} of the bootstrap replicates find "
            "is not established (the criterion's tie_se and min_found).")


def _registered(node: ast.AST, claim_id: str) -> bool:
    """Whether ``node`` is a function decorated ``@criterion(claim_id)``."""
    return isinstance(node, ast.FunctionDef) and any(
        isinstance(d, ast.Call) and getattr(d.func, "id", getattr(d.func, "attr", "")) ==
        "criterion" and d.args and isinstance(d.args[0], ast.Constant)
        and d.args[0].value == claim_id for d in node.decorator_list)


def _bare(node: ast.AST) -> str:
    """A top-level definition's syntax tree without its docstring, as text (a module of it)."""
    body = getattr(node, "body", None)
    if isinstance(body, list) and body and isinstance(body[0], ast.Expr) \
            and isinstance(body[0].value, ast.Constant):
        node = copy.copy(node)
        node.body = body[1:] or [ast.Pass()]
    return ast.dump(ast.Module(body=[node], type_ignores=[]))


@lru_cache(maxsize=512)
def _definitions(text: str) -> tuple[dict, dict]:
    """A module's top-level definitions (name -> node: functions, classes, assignments) and
    its names imported from this package (name -> (module, name); ``from . import x`` is the
    package's ``__init__``)."""
    defs: dict = {}
    imported: dict = {}
    try:
        body = ast.parse(text).body
    except SyntaxError:
        return defs, imported
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            defs[node.name] = node
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            for target in getattr(node, "targets", [getattr(node, "target", None)]):
                if isinstance(target, ast.Name):
                    defs[target.id] = node
        elif isinstance(node, ast.ImportFrom) and node.level == 1:
            for alias in node.names:
                imported[alias.asname or alias.name] = (node.module or "__init__", alias.name)
    return defs, imported


def _read_names(node: ast.AST) -> set[str]:
    """The names a definition reads (its decorators apart: registration decides nothing); a
    function's own arguments and local variables are not read from the package, whatever their
    names (a local ``missing`` is not the helper ``missing``).

    >>> tree = ast.parse("def f(v):\\n    missing = [k for k in v]\\n    return missing, g(v)")
    >>> sorted(_read_names(tree.body[0]))
    ['g', 'k']
    """
    local: set[str] = set()
    if isinstance(node, ast.FunctionDef):
        parts = [node.args, *node.body] + ([node.returns] if node.returns else [])
        local = {a.arg for a in ast.walk(node.args) if isinstance(a, ast.arg)}
        local |= _bound_here(node.body) - {n for s in ast.walk(node) if isinstance(s, ast.Global)
                                          for n in s.names}
    elif isinstance(node, ast.ClassDef):
        parts = [*node.bases, *node.keywords, *node.body]
    else:
        parts = [node]
    return {n.id for p in parts for n in ast.walk(p) if isinstance(n, ast.Name)} - local


def _bound_here(body) -> set[str]:
    """The names a function body binds in its own scope (not in a nested function, lambda or
    comprehension, whose bindings do not hide a package name from the rest of the body)."""
    bound, todo = set(), list(body)
    while todo:
        n = todo.pop()
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(n.name)
            continue
        if isinstance(n, (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            continue
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
            bound.add(n.id)
        todo.extend(ast.iter_child_nodes(n))
    return bound


def named_code(text: str | None, names) -> list[str]:
    """The syntax trees of the top-level definitions ``names`` of a module's ``text``, each
    without its docstring, as ``name: tree`` (a name the text lacks is left out).

    >>> named_code("A = 1\\ndef f():\\n    'Doc.'\\n    return A\\n", ["f", "B"])[0][:12]
    'f: Module(bo'
    """
    defs = _definitions(text)[0] if text is not None else {}
    return [f"{name}: {_bare(defs[name])}" for name in names if name in defs]


def criterion_code(claim_id: str, sources: dict[str, str | None]) -> list[str]:
    """What decides ``claim_id``'s verdict in the package's ``sources`` (module name, as
    ``__init__`` or ``mahdavi2024``, -> its text): the syntax tree of its registered function,
    then, by name, those of every function, class and constant of the package it reads,
    transitively (the helpers a verdict runs, e.g. a memorization limit or a seed guard), each
    without its docstring; [] where no function is registered for it.

    >>> code = {"w": "from . import helper\\n@criterion('X')\\ndef x(v):\\n    return helper(v)\\n",
    ...         "__init__": "def helper(v):\\n    'Doc.'\\n    return v > 0\\n"}
    >>> [part[:19] for part in criterion_code("X", code)]
    ['Module(body=[Functi', '__init__.helper: Mo']
    >>> criterion_code("X", code) == criterion_code("X", {**code, "__init__": code["__init__"]
    ...                                                   .replace("Doc.", "Other words.")})
    True
    >>> criterion_code("X", code) == criterion_code("X", {**code, "__init__": code["__init__"]
    ...                                                   .replace("v > 0", "v >= 0")})
    False
    """
    parsed = {m: _definitions(t) for m, t in sources.items() if t is not None}
    roots = [(m, node) for m, (defs, _) in sorted(parsed.items()) for node in defs.values()
             if _registered(node, claim_id)]
    if not roots:
        return []
    module, root = roots[0]
    seen, todo, helpers = {(module, root.name)}, [(module, root)], {}
    while todo:
        module, node = todo.pop()
        defs, imported = parsed[module]
        for name in sorted(_read_names(node)):
            where = (module, name) if name in defs else imported.get(name)
            if where is None or where in seen or where[1] not in parsed.get(where[0], ({},))[0]:
                continue
            seen.add(where)
            helper = parsed[where[0]][0][where[1]]
            helpers[f"{where[0]}.{where[1]}"] = _bare(helper)
            todo.append((where[0], helper))
    return [_bare(root)] + [f"{name}: {helpers[name]}" for name in sorted(helpers)]


@lru_cache(maxsize=1)
def package_sources() -> dict[str, str]:
    """This package's modules' texts, for :func:`criterion_code`."""
    return {p.stem: p.read_text() for p in sorted(Path(__file__).parent.glob("*.py"))}


def code_sha(claim_id: str) -> str | None:
    """sha256[:12] of what decides ``claim_id``'s verdict (:func:`criterion_code`: its
    criterion and every helper of this package it reaches; None when none is registered),
    recorded with each verdict it decides. A function registered from outside this package's
    files (a test's) is hashed alone."""
    fn = CRITERIA.get(claim_id)
    if fn is None:
        return None
    parts = criterion_code(claim_id, package_sources()) or \
        [_bare(ast.parse(textwrap.dedent(inspect.getsource(fn))).body[0])]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:12]


def _threshold_names(fn) -> set[str]:
    return {p.name for p in inspect.signature(fn).parameters.values()
            if p.kind is inspect.Parameter.KEYWORD_ONLY}


def decide(claim_id: str, *measurement, claims_dir: Path | None = None, **named):
    """The verdict of ``claim_id``'s criterion on a measurement, with the ledger's numbers:
    True, False, or :data:`NOT_TESTABLE` where the criterion says its premise does not hold."""
    if claim_id not in CRITERIA:
        raise AttnbookError(f"no criterion registered for {claim_id!r} in attnbook.criteria")
    fn = CRITERIA[claim_id]
    numbers = thresholds(claim_id, claims_dir)
    if set(numbers) != _threshold_names(fn):
        raise AttnbookError(
            f"{claim_id}: the ledger's thresholds {sorted(numbers)} differ from the names its "
            f"criterion reads {sorted(_threshold_names(fn))}")
    clash = set(named) & set(numbers)
    if clash:
        raise AttnbookError(f"{claim_id}: {sorted(clash)} come from the ledger, not the caller")
    out = fn(*measurement, **named, **numbers)
    return NOT_TESTABLE if isinstance(out, str) and out == NOT_TESTABLE else bool(out)


def describe(claim_id: str, *measurement, claims_dir: Path | None = None, **named) -> str:
    """The sentence of what ``claim_id``'s verdict was decided from: the function registered
    with :func:`description`, given the measurement, ``named`` and the ledger's numbers it
    names (each of its keyword-only parameters that the caller does not give must be one)."""
    if claim_id not in DESCRIPTIONS:
        raise AttnbookError(f"no description registered for {claim_id!r} in attnbook.criteria")
    fn = DESCRIPTIONS[claim_id]
    numbers = thresholds(claim_id, claims_dir)
    clash = set(named) & set(numbers)
    if clash:
        raise AttnbookError(f"{claim_id}: {sorted(clash)} come from the ledger, not the caller")
    wanted = _threshold_names(fn) - set(named)
    if wanted - set(numbers):
        raise AttnbookError(f"{claim_id}: its description reads {sorted(wanted - set(numbers))},"
                            f" which the ledger's thresholds {sorted(numbers)} lack")
    return fn(*measurement, **named, **{k: numbers[k] for k in wanted})


from . import bruna2024, levine2020, mahdavi2024, wies2021  # noqa: E402,F401  (register)
