"""Notebook parameters and profiles: what a run may set, and what each profile sets.

Each notebook ``notebooks/<stem>.ipynb`` has one cell tagged ``parameters`` (the ``cpu``
defaults) and a sibling ``notebooks/<stem>.yml`` (CONTRIBUTING.md, *Running notebooks*)::

    allowed:            # per parameter: {min, max} (both, for every number), {choices: [...]},
      max_depth: {min: 1, max: 5}     # or {path: directory|file, suffixes: [.png]}
    rules:              # checked on the complete parameter set, before anything runs
      - check: "line_max_depth <= max_depth"
        message: "the line test needs depths the network has"
        follow: {line_max_depth: "min(line_max_depth, max_depth)"}  # what -p did not set
    profiles: {ci: {max_depth: 3}, full: {max_depth: 5}}  # only what differs from the cell
    cost: {full: {where: gpu, minutes: 60, units: 30, flop: 5.0e17, measured: false, note: ""}}
    estimate: {work: "steps * N * N", memory_gb: "12 * N * N / 1e9"}  # attnbook.book.costs
    migrate: {rtol: 1e-6, atol: 0, why: "..."}                        # attnbook.book.migrate

Rules and estimates are small expressions (names, numbers, texts, comparisons, boolean and
arithmetic operators, conditionals, lists and comprehensions, and the functions of
:data:`_FUNCTIONS`), checked when the ``.yml`` loads and evaluated by simpleeval within its
bounds and :data:`MAX_INT_BITS`: what would exceed them is refused before it is computed
(:class:`ExpressionError`), since the values come from a command line.
"""

import ast
import functools
import math
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import simpleeval
import yaml

from .. import paths
from ..criteria import thresholds
from ..errors import AttnbookError, ParameterError
from .provenance import git
from .readers import yaml_loads
from .text import clip, quoted

__all__ = ["NotebookSpec", "Rule", "RuleError", "rule_error", "ExpressionError", "load_spec",
           "parse_value", "check_value", "evaluate_expression", "COST_KEYS", "ESTIMATE_KEYS",
           "MAX_INT_BITS", "PROFILES", "changed_parameters"]

PROFILES = ("ci", "cpu", "long", "full")

OPTIONAL_PROFILES = ("long",)  # a chapter has these only where its .yml defines them
RESERVED = ("profile",)  # set by the runner's --profile, never by -p
SECTIONS = ("allowed", "profiles", "rules", "cost", "estimate", "migrate")
ESTIMATE_KEYS = ("work", "memory_gb")  # the .yml's estimate section: expressions


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _finite(value) -> bool:
    return _is_number(value) and math.isfinite(value)


COST_KEYS = {  # key -> (what is allowed, in words; the check)
    "where": ("cpu or gpu", lambda v: v in ("cpu", "gpu")),
    "minutes": ("a number > 0", lambda v: _finite(v) and v > 0),
    "units": ("an integer >= 1", lambda v: isinstance(v, int) and not isinstance(v, bool)
              and v >= 1),
    "flop": ("a number > 0", lambda v: _finite(v) and v > 0),
    "measured": ("true or false", lambda v: isinstance(v, bool)),
    "note": ("text", lambda v: isinstance(v, str))}

# the bounds of one evaluation, besides simpleeval's (sequences of MAX_STRING_LENGTH =
# 100,000 items, MAX_COMPREHENSION_LENGTH = 10,000 comprehension items per evaluation): far
# above what any chapter's expressions need, far below what would take a second
MAX_INT_BITS = 4096  # the largest integer an expression may build, in bits (a float holds 1024)
MAX_EXPR_CHARS = 2000  # one expression's text
_NODES = (ast.Expression, ast.BoolOp, ast.And, ast.Or, ast.UnaryOp, ast.Not, ast.USub, ast.UAdd,
          ast.BinOp, ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Mod, ast.Pow,
          ast.Compare, ast.Eq, ast.NotEq, ast.Lt, ast.LtE, ast.Gt, ast.GtE, ast.In, ast.NotIn,
          ast.Name, ast.Load, ast.Store, ast.Constant, ast.Call, ast.List, ast.Tuple, ast.IfExp,
          ast.GeneratorExp, ast.ListComp, ast.comprehension)


def _threshold(claim_id: str, name: str) -> float:
    """The number ``name`` of ``claim_id``'s criterion (data/claims/*.csv), for rules."""
    numbers = thresholds(claim_id)
    if name not in numbers:
        raise AttnbookError(f"rule: {claim_id} has no threshold {name!r} (it has "
                            f"{', '.join(sorted(numbers)) or 'none'})")
    return numbers[name]


class ExpressionError(AttnbookError):
    """A .yml expression that fails or would exceed the bounds of an evaluation: one line
    naming the .yml, the expression and why."""


@dataclass
class Rule:
    """A condition over several parameters, e.g. ``line_max_depth <= max_depth``."""

    check: str
    message: str = ""
    follow: dict = field(default_factory=dict)  # name -> expression it may take instead
    names: tuple = ()  # the parameters the check reads, in order of appearance
    where: str = "rule"  # "<stem>.yml: rule 3", for errors

    def holds(self, params: dict) -> bool:
        return bool(evaluate_expression(self.check, params, self.where))


def _compile_rule(expr: str, where: str, parameters) -> tuple:
    """Check that ``expr`` uses only the whitelisted syntax; return the parameters it reads."""
    if not isinstance(expr, str) or len(expr) > MAX_EXPR_CHARS:
        raise AttnbookError(f"{where}: rule {quoted(expr, 120)} is not an expression of at most "
                            f"{MAX_EXPR_CHARS} characters")
    try:
        tree = ast.parse(expr, mode="eval")
    except SyntaxError as e:
        raise AttnbookError(f"{where}: rule {expr!r} is not an expression: {e.msg}") from None
    except (RecursionError, MemoryError, ValueError) as e:  # 20,000 unary minuses; a NUL
        raise AttnbookError(f"{where}: rule {quoted(expr, 120)} is not an expression Python can "
                            f"read ({type(e).__name__})") from None
    bound = {t.id for node in ast.walk(tree) if isinstance(node, ast.comprehension)
             for t in ast.walk(node.target) if isinstance(t, ast.Name)}
    names = []
    for node in ast.walk(tree):
        if not isinstance(node, _NODES):
            raise AttnbookError(f"{where}: rule {expr!r} uses {type(node).__name__}, which "
                                f"rules may not")
        if isinstance(node, ast.Call) and not (
                isinstance(node.func, ast.Name) and node.func.id in _FUNCTIONS
                and not node.keywords):
            raise AttnbookError(f"{where}: rule {expr!r} calls something other than "
                                f"{', '.join(_FUNCTIONS)}")
        if isinstance(node, ast.Constant) and not (
                node.value is None or isinstance(node.value, (bool, int, float, str))):
            raise AttnbookError(f"{where}: rule {expr!r} holds {node.value!r}"[:300]
                                + ": allowed constants are numbers, text, True, False and None")
        if isinstance(node, ast.Name) and node.id.startswith("_"):
            raise AttnbookError(f"{where}: rule {expr!r} names {node.id!r}: names starting with "
                                f"_ are reserved")
        if isinstance(node, ast.Name) and node.id not in bound and node.id not in _FUNCTIONS:
            if node.id not in parameters:
                raise AttnbookError(f"{where}: rule {expr!r} names {node.id!r}, not a parameter")
            if node.id not in names:
                names.append(node.id)
    return tuple(names)


def _int_bits(bits: float, what: str):
    if bits > MAX_INT_BITS:
        raise simpleeval.NumberTooHigh(f"{what} an integer of about {bits:.3g} bits, more than "
                                       f"the {MAX_INT_BITS} a .yml expression may build")


def _mul(a, b):
    if isinstance(a, int) and isinstance(b, int):
        _int_bits(a.bit_length() + b.bit_length(), "multiplies into")
    return simpleeval.safe_mult(a, b)


def _pow(a, b):
    if isinstance(a, int) and isinstance(b, int) and b > 0 and abs(a) > 1:
        _int_bits(b * math.log2(abs(a)) if b.bit_length() < 64 else math.inf, "raises to")
    return simpleeval.safe_power(a, b)


def _mod(a, b):
    if isinstance(a, (str, bytes)):
        raise simpleeval.FeatureNotAvailable("formats text with %, which a .yml expression "
                                             "may not")
    return a % b


def _comb(n, k):
    if isinstance(n, int) and isinstance(k, int) and 0 < k < n:
        j = min(k, n - k)  # comb(n, j) < (e n / j)^j
        _int_bits(j * (math.log2(n / j) + math.log2(math.e)), "computes")
    return math.comb(n, k)


_OPERATORS = {**simpleeval.DEFAULT_OPERATORS, ast.Mult: _mul, ast.Pow: _pow, ast.Mod: _mod}
_FUNCTIONS = {"min": min, "max": max, "len": len, "all": all, "any": any,
              "sum": lambda items: sum(items), "comb": _comb, "threshold": _threshold,
              "log2": math.log2}


def evaluate_expression(expr: str, params: dict, where: str = "expression"):
    """The value of an expression of the .yml (a rule, an estimate) that passed
    :func:`_compile_rule`, at ``params``, computed by simpleeval within its bounds and
    :data:`MAX_INT_BITS`; ``where`` names it in an :class:`ExpressionError`
    (``"<stem>.yml: estimate work"``)."""
    evaluator = simpleeval.EvalWithCompoundTypes(operators=_OPERATORS, functions=_FUNCTIONS,
                                                 names=params)
    try:
        return evaluator.eval(expr)
    except (simpleeval.InvalidExpression, ArithmeticError, ValueError, TypeError,
            AttnbookError, RecursionError, MemoryError, KeyError, IndexError) as e:
        # 1 / 0, log2(0), max([]), 'a' < 1, [0] * 1.5, 10.0 ** 400, [0] * 10 ** 9,
        # a threshold the ledger lacks
        why = " ".join(str(e).split())[:200]
        raise ExpressionError(f"{where}: {quoted(expr, 120)} cannot be evaluated at these "
                              f"parameters ({type(e).__name__}: {why})") from None


@dataclass
class NotebookSpec:
    """A notebook's parameters (name -> default), allowed ranges, rules and profiles."""

    path: Path
    defaults: dict
    allowed: dict = field(default_factory=dict)
    profiles: dict = field(default_factory=dict)
    rules: list = field(default_factory=list)
    cost: dict = field(default_factory=dict)  # profile -> {where, minutes, units, flop, ...}
    estimate: dict = field(default_factory=dict)  # work, memory_gb: expressions of parameters
    migrate: dict = field(default_factory=dict)  # rtol, atol, why: a migration's tolerance

    @property
    def stem(self) -> str:
        return self.path.stem

    def has_profile(self, profile: str) -> bool:
        """Whether this chapter runs at ``profile``: ci, cpu and full always (a profile the
        .yml leaves out is the parameters cell); ``long`` only where the .yml defines it."""
        return profile not in OPTIONAL_PROFILES or profile in self.profiles

    def parameters(self, profile: str, overrides: dict | None = None,
                   notes: list | None = None) -> dict:
        """The parameters papermill injects: the profile's values, then the overrides.

        Every value and every rule is checked on the complete set. A parameter a rule may
        ``follow`` with, and that ``overrides`` does not set, takes the followed value when
        the rule fails otherwise; ``notes`` (a list) receives one line per such change.
        """
        if profile not in PROFILES:
            raise ParameterError("profile", profile, ", ".join(PROFILES), problem="is unknown")
        if not self.has_profile(profile):
            raise ParameterError("profile", profile, "a profile this chapter's .yml defines ("
                                 + ", ".join(p for p in PROFILES if self.has_profile(p)) + ")",
                                 problem="is not defined for this chapter")
        overrides = overrides or {}
        params = {**(self.profiles.get(profile) or {}), **overrides}
        for name, value in params.items():
            self.check(name, value)
        full = {**self.defaults, **params}
        for rule in self.rules:
            if rule.holds(full):
                continue
            movable = {k: e for k, e in rule.follow.items() if k not in overrides}
            if movable and overrides:
                trial = {**full, **{k: evaluate_expression(e, full, rule.where)
                                    for k, e in movable.items()}}
                if rule.holds(trial) and all(r.holds(trial) for r in self.rules):
                    for k in movable:
                        self.check(k, trial[k])
                        if trial[k] != full[k]:
                            if notes is not None:
                                notes.append(f"{self.stem}: {k} = {trial[k]!r} (profile "
                                             f"{profile} has {full[k]!r}), to keep {rule.check}")
                            params[k] = full[k] = trial[k]
                    continue
            raise rule_error(rule, full, overrides)
        params["profile"] = profile
        return params

    def effective(self, profile: str, overrides: dict | None = None) -> dict:
        """Every parameter as a run at ``profile`` has it (what the chapter's page shows)."""
        return {**self.defaults, **self.parameters(profile, overrides)}

    def absolute(self, name: str, value):
        """``value`` of a ``path`` parameter made absolute; any other value as it is."""
        if isinstance(value, str) and value and "path" in (self.allowed.get(name) or {}):
            return str(Path(value).expanduser().absolute())
        return value

    def check(self, name: str, value):
        if name in RESERVED:
            raise ParameterError(name, value, "set it with --profile, not -p",
                                 problem="cannot be set directly")
        if name not in self.defaults:
            raise ParameterError(
                name, value, ", ".join(n for n in self.defaults if n not in RESERVED),
                problem=f"is not a parameter of {self.stem}")
        return check_value(name, value, self.defaults[name], self.allowed.get(name) or {})


def rule_error(rule: Rule, params: dict, overrides: dict) -> "RuleError":
    """One line naming every parameter the rule reads, their values, and what to change."""
    values = ", ".join(f"{n} = {params[n]!r}" for n in rule.names)
    set_here = [n for n in rule.names if n in overrides]
    others = [n for n in rule.names if n not in overrides]
    if set_here and others:
        fix = (f"change {' or '.join(set_here)}, or also set "
               + " / ".join(f"-p {n} ..." for n in others))
    else:
        fix = "change " + " or ".join(f"-p {n}" for n in rule.names)
    return RuleError(rule, f"parameters {values} break the rule {rule.check}"
                     + (f" ({rule.message})" if rule.message else "") + f": {fix}")


class RuleError(ParameterError):
    """A rule that links parameters does not hold: the message names all of them."""

    def __init__(self, rule: Rule, message: str):
        self.rule = rule
        self.name = rule.names[0] if rule.names else ""
        self.value, self.allowed = None, rule.check
        Exception.__init__(self, message)


def _type_name(default) -> str:
    if isinstance(default, (list, tuple)) and default:
        return f"list of {_type_name(default[0])}"
    return type(default).__name__


def _element_default(default):
    """The value a list default's elements are checked against (float if any is a float)."""
    if not default:
        return None
    if any(isinstance(v, float) for v in default) and all(_is_number(v) for v in default):
        return float(default[0])
    return default[0]


def _coerce(value, default):
    """YAML reads ``1e-3`` and ``nan`` inside a list as strings: parse them as the default's
    element type, so that the type and finiteness checks see numbers."""
    if isinstance(default, (list, tuple)) and isinstance(value, list):
        elem = _element_default(default)
        return [_coerce(v, elem) for v in value] if elem is not None else value
    if isinstance(value, str) and type(default) in (int, float):
        try:
            return type(default)(value)
        except ValueError:
            return value
    return value


_BOOLS = {"true": True, "1": True, "yes": True, "false": False, "0": False, "no": False}


def parse_value(name: str, text: str, default):
    """Parse a command-line value as the type of the parameter's default.

    >>> parse_value("n", "8", 4), parse_value("lr", "1e-3", 0.1), parse_value("go", "no", True)
    (8, 0.001, False)
    """
    kind = type(default)
    try:
        if kind is bool:
            return _BOOLS[text.strip().lower()]
        if kind in (int, float, str):
            return kind(text)
        if kind in (list, tuple):
            value = yaml_loads(text, max_bytes=100_000, max_values=10_000)
            if isinstance(value, list):
                return _coerce(value, default)
    except (KeyError, ValueError, yaml.YAMLError):
        pass
    shown = text if len(text) <= 100 else f"{text[:100]}... ({len(text)} characters)"
    raise ParameterError(name, shown, f"a value of type {_type_name(default)}",
                         problem="has the wrong type")


def _leaves(value):
    if isinstance(value, (list, tuple)):
        for v in value:
            yield from _leaves(v)
    else:
        yield value


def _type_ok(value, default) -> bool:
    """Whether ``value`` has the default's type; list elements recursively, lists non-empty."""
    kind = type(default)
    if kind is bool:
        return isinstance(value, bool)
    if kind in (int, float):
        return _is_number(value) and (kind is float or isinstance(value, int))
    if kind in (list, tuple):
        if not isinstance(value, (list, tuple)):
            return False
        elem = _element_default(default)
        return not default or (len(value) > 0 and all(_type_ok(v, elem) for v in value))
    return isinstance(value, str) if kind is str else True


def check_value(name: str, value, default, rule: dict):
    """Check ``value`` against the default's type and ``rule`` ({min, max, choices, path}).

    >>> check_value("n", 3, 4, {"min": 1, "max": 5})
    3
    >>> check_value("n", 9, 4, {"min": 1, "max": 5})
    Traceback (most recent call last):
    ...
    attnbook.errors.ParameterError: parameter n = 9 is out of range: allowed 1 <= n <= 5
    >>> check_value("lr", float("nan"), 0.1, {"min": 0, "max": 1})
    Traceback (most recent call last):
    ...
    attnbook.errors.ParameterError: parameter lr = nan is not a finite number: allowed 0 <= lr <= 1
    """
    if not _type_ok(value, default):
        what = ("a non-empty " if isinstance(default, (list, tuple)) and default else "a ") \
            + f"value of type {_type_name(default)}"
        raise ParameterError(name, value, what, problem="has the wrong type")
    if "path" in rule:
        return _check_path(name, value, rule)
    lo, hi, choices = rule.get("min"), rule.get("max"), rule.get("choices")
    rng = (f"{lo} <= {name} <= {hi}" if lo is not None and hi is not None
           else f"{name} >= {lo}" if lo is not None else f"{name} <= {hi}")
    for v in _leaves(value):
        if isinstance(v, float) and not math.isfinite(v):
            raise ParameterError(name, value, rng if (lo, hi) != (None, None) else
                                 "finite numbers", problem="is not a finite number")
        if choices is not None and v not in choices:
            raise ParameterError(name, value, "one of " + ", ".join(map(str, choices)))
        if (lo is not None and v < lo) or (hi is not None and v > hi):
            raise ParameterError(name, value, rng)
    return value


def _check_path(name: str, value, rule: dict):
    """A ``{path: directory|file, suffixes: [...]}`` parameter: empty, or an existing path."""
    kind, suffixes = rule["path"], [str(x).lower() for x in rule.get("suffixes") or []]
    listed = "/".join(suffixes)
    what = ("a directory" + (f" holding {listed} files" if suffixes else "")
            if kind == "directory" else "a file" + (f" ending in {listed}" if suffixes else ""))
    allowed = f"'' (none) or {what}"
    if not isinstance(value, str) or "\0" in value:
        raise ParameterError(name, value, allowed, problem="has the wrong type")
    if not value:
        return value
    path = Path(value).expanduser()
    try:
        exists = path.is_dir() if kind == "directory" else path.is_file()
        if exists and suffixes:
            exists = any(p.suffix.lower() in suffixes for p in path.iterdir()) \
                if kind == "directory" else path.suffix.lower() in suffixes
            if not exists:
                raise ParameterError(name, value, allowed,
                                     problem=f"holds no {listed} files"
                                     if kind == "directory" else "has another suffix")
    except OSError as e:
        raise ParameterError(name, value, allowed,
                             problem=f"cannot be read ({type(e).__name__})") from None
    if not exists:
        raise ParameterError(name, value, allowed, problem=f"is not a {kind}"
                             if path.exists() else "does not exist")
    return value


def _parameters_cell(nb_path: Path) -> dict:
    """The defaults the notebook's ``parameters`` cell assigns (literals only)."""
    import nbformat

    try:
        nb = nbformat.read(nb_path, as_version=4)
        for c in nb.cells:
            c.get("metadata", {}).get("tags", [])
    except Exception as e:  # noqa: BLE001 - not JSON, not a notebook, too deep, not UTF-8
        why = " ".join(str(e).split())[:120]
        raise AttnbookError(f"{nb_path}: cannot be read as a notebook ({type(e).__name__}: "
                            f"{why})") from None
    cells = [c for c in nb.cells if "parameters" in c.get("metadata", {}).get("tags", [])]
    if len(cells) != 1:
        raise AttnbookError(f"{nb_path}: needs exactly one cell tagged 'parameters', "
                            f"found {len(cells)}")
    for i, line in enumerate(cells[0].source.splitlines(), 1):
        if not line.lstrip().startswith("#") and line.count("=") > 1:
            raise AttnbookError(f"{nb_path}: parameters cell line {i} has more than one '=' "
                                f"(papermill cannot parse it; keep '=' out of comments): {line!r}")
    defaults = {}
    try:
        body = ast.parse(cells[0].source).body
    except (SyntaxError, ValueError, RecursionError, MemoryError) as e:
        raise AttnbookError(f"{nb_path}: the parameters cell is not Python "
                            f"({type(e).__name__})") from None
    for node in body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 \
                and isinstance(node.targets[0], ast.Name):
            try:
                defaults[node.targets[0].id] = ast.literal_eval(node.value)
            except ValueError as e:
                raise AttnbookError(f"{nb_path}: parameter {node.targets[0].id} must be a "
                                    f"literal in the parameters cell") from e
    if "profile" not in defaults:
        raise AttnbookError(f"{nb_path}: the parameters cell must set profile = \"cpu\"")
    return defaults


def _yaml_float(section: dict, key: str, default=None):
    """``section[key]``, where YAML 1.1 read a number (``5.0e17``, ``1e-6``) as a string,
    parsed (and stored back) as a float."""
    value = section.get(key, default)
    if isinstance(value, str):
        try:
            value = section[key] = float(value)
        except ValueError:
            pass
    return value


def _check_cost(cost, yml: Path) -> dict:
    """The ``cost`` section: profile -> {where, minutes, units, flop, measured, note}."""
    if cost is None:
        return {}
    if not isinstance(cost, dict) or set(cost) - set(PROFILES):
        raise AttnbookError(f"{yml}: cost must map profiles ({', '.join(PROFILES)}) to "
                            f"{{where, minutes, units, flop, measured, note}}")
    for profile, entry in cost.items():
        where = f"{yml}: cost of profile {profile}"
        if not isinstance(entry, dict) or "where" not in entry:
            raise AttnbookError(f"{where} must be a mapping with at least 'where' (cpu or gpu)")
        for key in list(entry):
            if key not in COST_KEYS:
                raise AttnbookError(f"{where}: unknown key {key!r}: allowed "
                                    f"{', '.join(COST_KEYS)}")
            value = _yaml_float(entry, key) if key in ("minutes", "flop") else entry[key]
            if not COST_KEYS[key][1](value):
                raise AttnbookError(f"{where}: {key} = {value!r}: allowed {COST_KEYS[key][0]}")
    return cost


def _check_migrate(section, yml: Path) -> dict:
    """The ``migrate`` section (:mod:`attnbook.book.migrate`): ``rtol`` and ``atol`` (numbers
    >= 0, default 0: exact) and ``why`` (required with a tolerance)."""
    if section is None:
        return {}
    if not isinstance(section, dict) or set(section) - {"rtol", "atol", "why"}:
        raise AttnbookError(f"{yml}: migrate must be a mapping of rtol, atol (numbers >= 0) "
                            "and why (the tolerance's justification)")
    for key in ("rtol", "atol"):
        value = _yaml_float(section, key, 0.0)
        if not _finite(value) or value < 0:
            raise AttnbookError(f"{yml}: migrate {key} = {value!r}: allowed a number >= 0")
    if (section.get("rtol") or section.get("atol")) and not str(section.get("why") or ""):
        raise AttnbookError(f"{yml}: migrate: a tolerance needs its 'why' (from the seeds' "
                            "spread, say)")
    return section


def _read_yml(yml: Path) -> dict:
    """A chapter's ``.yml`` as a mapping of its known sections (empty where there is none)."""
    if not yml.exists():
        return {}
    try:
        raw = yaml_loads(yml.read_bytes())
    except (OSError, ValueError) as e:  # not UTF-8: a UnicodeDecodeError
        why = " ".join(str(e).split())[:200]
        raise AttnbookError(f"{yml}: cannot be read as the chapter's YAML ({type(e).__name__}: "
                            f"{why})") from None
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise AttnbookError(f"{yml}: allowed a YAML mapping of sections (allowed, rules, "
                            f"profiles, cost, estimate, migrate), not a {type(raw).__name__}")
    extra = set(raw) - set(SECTIONS)
    if extra:
        raise AttnbookError(f"{yml}: unknown sections {sorted(extra)}: allowed: allowed, "
                            f"rules, profiles, cost, estimate, migrate")
    return raw


def _check_sections(allowed, profiles, rules, yml: Path) -> None:
    """The shapes of ``allowed`` (parameter -> {min, max, choices, path, suffixes}, min and
    max finite numbers), ``profiles`` (profile -> parameter -> value) and ``rules`` (a list)."""
    if not isinstance(allowed, dict) or not isinstance(profiles, dict):
        raise AttnbookError(f"{yml}: allowed and profiles must be mappings")
    for name, rule in allowed.items():
        if rule is None:
            continue
        if not isinstance(rule, dict) or set(rule) - {"min", "max", "choices", "path",
                                                      "suffixes"}:
            raise AttnbookError(f"{yml}: allowed {name!r}: allowed a mapping of min, max, "
                                "choices, path, suffixes"[:300])
        for key in ("min", "max"):
            if key in rule and not _finite(rule[key]):
                raise AttnbookError(f"{yml}: allowed {name!r}: {key} = {quoted(rule[key], 120)}: "
                                    "allowed a finite number")
        for key, kinds, what in (("choices", (bool, int, float, str), "numbers or texts"),
                                 ("suffixes", str, "texts")):
            if key in rule and not (isinstance(rule[key], list)
                                    and all(isinstance(x, kinds) for x in rule[key])):
                raise AttnbookError(f"{yml}: allowed {name!r}: {key} must be a list of {what}")
    for profile, values in profiles.items():
        if values is not None and not isinstance(values, dict):
            raise AttnbookError(f"{yml}: profile {profile!r} must map parameters to values")
    if rules is not None and not isinstance(rules, list):
        raise AttnbookError(f"{yml}: rules must be a list")


def load_spec(nb_path: Path) -> NotebookSpec:
    """Read a notebook's parameters cell and its ``.yml`` ranges, rules and profiles, checking
    all of them (every profile must satisfy every rule as it stands)."""
    nb_path = Path(nb_path)
    defaults = _parameters_cell(nb_path)
    yml = nb_path.with_suffix(".yml")
    raw = _read_yml(yml)
    allowed = raw.get("allowed") or {}
    profiles = raw.get("profiles") or {}
    _check_sections(allowed, profiles, raw.get("rules"), yml)
    for name in allowed:
        if name not in defaults:
            raise AttnbookError(f"{yml}: 'allowed' names {name!r}, not a parameter of "
                                f"{nb_path.stem}")
    unknown = set(profiles) - set(PROFILES)
    if unknown:
        raise AttnbookError(f"{yml}: unknown profiles {sorted(unknown)}: allowed "
                            f"{', '.join(PROFILES)}")
    for name, default in defaults.items():
        rule = allowed.get(name) or {}
        if "path" in rule and (rule["path"] not in ("directory", "file")
                               or not isinstance(default, str)
                               or set(rule) - {"path", "suffixes"}):
            raise AttnbookError(f"{yml}: parameter {name!r}: a path rule is {{path: directory "
                                f"or file, suffixes: [...]}} on a text parameter")
        numeric = _is_number(default) or (isinstance(default, (list, tuple)) and bool(default)
                                          and all(_is_number(v) for v in _leaves(default)))
        if name not in RESERVED and numeric and not (
                "min" in rule and "max" in rule or "choices" in rule):
            raise AttnbookError(f"{yml}: numeric parameter {name!r} needs both a min and a "
                                f"max under 'allowed'")
    rules = []
    for i, r in enumerate(raw.get("rules") or [], 1):
        if not isinstance(r, dict) or not isinstance(r.get("check"), str) \
                or set(r) - {"check", "message", "follow"}:
            raise AttnbookError(f"{yml}: rule {i} must be a mapping with 'check' (an "
                                f"expression), optional 'message' and 'follow'")
        where = f"{yml}: rule {i}"
        names = _compile_rule(r["check"], where, defaults)
        follow = dict(r.get("follow") or {})
        for k, e in follow.items():
            if k not in names:
                raise AttnbookError(f"{where}: follow names {k!r}, which the check does not")
            _compile_rule(str(e), where, defaults)
        rules.append(Rule(r["check"], str(r.get("message") or ""), follow, names, where))
    estimate = raw.get("estimate") or {}
    if not isinstance(estimate, dict) or set(estimate) - set(ESTIMATE_KEYS) \
            or not all(isinstance(e, str) for e in estimate.values()):
        raise AttnbookError(f"{yml}: estimate must map {' and '.join(ESTIMATE_KEYS)} to "
                            "expressions of the parameters")
    for key, expr in estimate.items():
        _compile_rule(expr, f"{yml}: estimate {key}", defaults)
    spec = NotebookSpec(nb_path, defaults, allowed, profiles, rules,
                        _check_cost(raw.get("cost"), yml), estimate,
                        _check_migrate(raw.get("migrate"), yml))
    for name, value in defaults.items():
        if name not in RESERVED:
            check_value(name, value, value, allowed.get(name) or {})
    for profile in filter(spec.has_profile, PROFILES):
        try:
            params = spec.parameters(profile)
        except ParameterError as e:
            raise AttnbookError(f"{yml}: profile {profile}: {e}") from e
        for key, expr in estimate.items():  # an estimate that fails is never skipped unseen
            value = evaluate_expression(expr, {**defaults, **params},
                                        f"{yml}: estimate {key} at profile {profile}")
            if not (_is_number(value) and (isinstance(value, int) and value.bit_length() < 1000
                                           or math.isfinite(value))):
                raise ExpressionError(f"{yml}: estimate {key} {quoted(expr, 120)} gives "
                                      f"{quoted(value, 120)} at profile {profile}: allowed a "
                                      "finite number")
    return spec


@functools.lru_cache(maxsize=256)
def _spec_at(root: Path, notebook: str, commit: str) -> NotebookSpec | None:
    """The spec of ``notebook`` (a path relative to ``root``) as committed at ``commit`` (None
    where git, the commit or one of its two files is missing, or they do not load: then
    nothing can be said)."""
    texts = [git("show", f"{commit}:{notebook}{ext}", root=root) for ext in (".ipynb", ".yml")]
    if None in texts:
        return None
    with tempfile.TemporaryDirectory() as tmp:
        stem = Path(notebook).name
        for ext, text in zip((".ipynb", ".yml"), texts, strict=True):
            (Path(tmp) / f"{stem}{ext}").write_text(text)
        try:
            return load_spec(Path(tmp) / f"{stem}.ipynb")
        except AttnbookError:
            return None


@functools.lru_cache(maxsize=64)
def _spec_now(path: Path, stamp: tuple) -> NotebookSpec | None:
    try:
        return load_spec(path)
    except AttnbookError:
        return None


def chapter_spec(stem: str) -> NotebookSpec | None:
    """The chapter's parameters and profiles as its notebook and ``.yml`` are now (None outside
    ``notebooks/`` or where they do not load), read once per change of either file."""
    path = paths.NOTEBOOKS / f"{stem}.ipynb"
    if not stem or not path.exists():
        return None
    stamp = tuple((p.stat().st_mtime_ns, p.stat().st_size) if p.exists() else None
                  for p in (path, path.with_suffix(".yml")))
    return _spec_now(path, stamp)


def changed_parameters(stem: str, profile: str, commit: str,
                       recorded: dict | None = None) -> list[str]:
    """The parameters whose value at ``profile`` differs between a run's and the chapter as it
    is now, as ``name then -> now``. The run's are ``recorded`` (what a ledger entry keeps since
    it records them), else read from git at the run's ``commit``; [] where none differs, and
    where either side cannot be read (no git history, a chapter renamed). A parameter added or
    removed since is not a change of the profile's values and is not listed."""
    path = paths.NOTEBOOKS / f"{stem}.ipynb"
    if not stem or not path.exists() or not path.is_relative_to(paths.ROOT) \
            or not (commit or isinstance(recorded, dict)):
        return []
    now = chapter_spec(stem)
    if now is None or not now.has_profile(profile):
        return []
    try:
        new = now.effective(profile)
        if isinstance(recorded, dict):
            old = recorded
        else:
            rel = path.relative_to(paths.ROOT).with_suffix("").as_posix()
            then = _spec_at(paths.ROOT, rel, str(commit).removesuffix("+dirty"))
            if then is None or not then.has_profile(profile):
                return []
            old = then.effective(profile)
    except ParameterError:
        return []
    return [f"{k} {clip(str(old[k]), 60)} -> {clip(str(new[k]), 60)}"
            for k in sorted(old.keys() & new.keys()) if old[k] != new[k]]
