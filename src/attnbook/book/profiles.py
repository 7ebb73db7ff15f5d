"""Notebook parameters and profiles: what a run may set, and what each profile sets.

Each notebook ``notebooks/<stem>.ipynb`` has a cell tagged ``parameters`` whose values are
the default (``cpu``) profile, and a sibling ``notebooks/<stem>.yml``::

    allowed:            # ranges the runner checks before anything executes
      max_depth: {min: 1, max: 5}
      task: {choices: [classification, regression]}
    profiles:           # each lists only what differs from the parameters cell
      ci: {max_depth: 3}   # why, with the arithmetic
      cpu: {}
      full: {max_depth: 5}

Every value, from a profile or from ``-p NAME VALUE``, is checked against the type of the
default in the parameters cell and the ``allowed`` range; a bad one is a one-line
:class:`~attnbook.errors.ParameterError`, raised before any notebook runs.
"""

import ast
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from ..errors import AttnbookError, ParameterError
from .claims import PROFILES

__all__ = ["NotebookSpec", "load_spec", "parse_value", "check_value"]

RESERVED = ("profile",)  # set by the runner's --profile, never by -p


@dataclass
class NotebookSpec:
    """A notebook's parameters (name -> default), allowed ranges and profiles."""

    path: Path
    defaults: dict
    allowed: dict = field(default_factory=dict)
    profiles: dict = field(default_factory=dict)

    @property
    def stem(self) -> str:
        return self.path.stem

    def parameters(self, profile: str, overrides: dict | None = None) -> dict:
        """The parameters papermill injects: the profile's values, then the overrides."""
        if profile not in PROFILES:
            raise ParameterError("profile", profile, ", ".join(PROFILES), problem="is unknown")
        params = dict(self.profiles.get(profile) or {})
        for name, value in (overrides or {}).items():
            params[name] = value
        for name, value in params.items():
            self.check(name, value)
        params["profile"] = profile
        return params

    def check(self, name: str, value):
        if name in RESERVED:
            raise ParameterError(name, value, "set it with --profile, not -p",
                                 problem="cannot be set directly")
        if name not in self.defaults:
            raise ParameterError(
                name, value, ", ".join(n for n in self.defaults if n not in RESERVED),
                problem=f"is not a parameter of {self.stem}")
        return check_value(name, value, self.defaults[name], self.allowed.get(name) or {})


def _type_name(default) -> str:
    return type(default).__name__


def parse_value(name: str, text: str, default):
    """Parse a command-line value as the type of the parameter's default.

    >>> parse_value("n", "8", 4), parse_value("lr", "1e-3", 0.1), parse_value("go", "no", True)
    (8, 0.001, False)
    """
    kind = type(default)
    try:
        if kind is bool:
            low = text.strip().lower()
            if low in ("true", "1", "yes"):
                return True
            if low in ("false", "0", "no"):
                return False
            raise ValueError
        if kind is int:
            return int(text)
        if kind is float:
            return float(text)
        if kind in (list, tuple):
            value = yaml.safe_load(text)
            if not isinstance(value, list):
                raise ValueError
            return value
        if kind is str:
            return text
    except ValueError:
        pass
    raise ParameterError(name, text, f"a value of type {_type_name(default)}",
                         problem="has the wrong type")


def check_value(name: str, value, default, rule: dict):
    """Check ``value`` against the default's type and ``rule`` ({min, max, choices}).

    >>> check_value("n", 3, 4, {"min": 1, "max": 5})
    3
    >>> check_value("n", 9, 4, {"min": 1, "max": 5})
    Traceback (most recent call last):
    ...
    attnbook.errors.ParameterError: parameter n = 9 is out of range: allowed 1 <= n <= 5
    """
    kind = type(default)
    ok_type = (
        isinstance(value, bool) if kind is bool
        else isinstance(value, int) and not isinstance(value, bool) if kind is int
        else isinstance(value, (int, float)) and not isinstance(value, bool) if kind is float
        else isinstance(value, (list, tuple)) if kind in (list, tuple)
        else isinstance(value, str) if kind is str
        else True
    )
    if not ok_type:
        raise ParameterError(name, value, f"a value of type {_type_name(default)}",
                             problem="has the wrong type")
    items = value if isinstance(value, (list, tuple)) else [value]
    lo, hi, choices = rule.get("min"), rule.get("max"), rule.get("choices")
    for v in items:
        if choices is not None and v not in choices:
            raise ParameterError(name, value, "one of " + ", ".join(map(str, choices)))
        if (lo is not None and v < lo) or (hi is not None and v > hi):
            rng = (f"{lo} <= {name} <= {hi}" if lo is not None and hi is not None
                   else f"{name} >= {lo}" if lo is not None else f"{name} <= {hi}")
            raise ParameterError(name, value, rng)
    return value


def _parameters_cell(nb_path: Path) -> dict:
    import nbformat

    nb = nbformat.read(nb_path, as_version=4)
    cells = [c for c in nb.cells if "parameters" in c.get("metadata", {}).get("tags", [])]
    if len(cells) != 1:
        raise AttnbookError(f"{nb_path}: needs exactly one cell tagged 'parameters', "
                            f"found {len(cells)}")
    for i, line in enumerate(cells[0].source.splitlines(), 1):
        if not line.lstrip().startswith("#") and line.count("=") > 1:
            raise AttnbookError(f"{nb_path}: parameters cell line {i} has more than one '=' "
                                f"(papermill cannot parse it; keep '=' out of comments): {line!r}")
    defaults = {}
    for node in ast.parse(cells[0].source).body:
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


def load_spec(nb_path: Path) -> NotebookSpec:
    """Read a notebook's parameters cell and its ``.yml`` profiles, checking both."""
    nb_path = Path(nb_path)
    defaults = _parameters_cell(nb_path)
    yml = nb_path.with_suffix(".yml")
    raw = yaml.safe_load(yml.read_text()) if yml.exists() else {}
    raw = raw or {}
    extra = set(raw) - {"allowed", "profiles"}
    if extra:
        raise AttnbookError(f"{yml}: unknown sections {sorted(extra)}: allowed: allowed, profiles")
    allowed = raw.get("allowed") or {}
    profiles = raw.get("profiles") or {}
    for name in allowed:
        if name not in defaults:
            raise AttnbookError(f"{yml}: 'allowed' names {name!r}, not a parameter of "
                                f"{nb_path.stem}")
    unknown = set(profiles) - set(PROFILES)
    if unknown:
        raise AttnbookError(f"{yml}: unknown profiles {sorted(unknown)}: allowed "
                            f"{', '.join(PROFILES)}")
    spec = NotebookSpec(nb_path, defaults, allowed, profiles)
    for name, value in defaults.items():
        if name not in RESERVED:
            check_value(name, value, value, allowed.get(name) or {})
    for profile in PROFILES:
        try:
            spec.parameters(profile)
        except ParameterError as e:
            raise AttnbookError(f"{yml}: profile {profile}: {e}") from e
    return spec
