"""Checks of what a built page shows against what its run had (on pytest's path via
``pythonpath`` in pyproject.toml)."""

import ast


def literal_assignments(code: str) -> dict | None:
    """name -> value of each top-level ``name = <literal>`` of a cell's code; None when the
    code does not parse."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return None
    out = {}
    for n in tree.body:
        if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0],
                                                                             ast.Name):
            try:
                out[n.targets[0].id] = ast.literal_eval(n.value)
            except ValueError:
                continue
    return out


def same_value(a, b) -> bool:
    """Equal values of the same kind (a bool is not the number 1; 4 and 4.0 are the same)."""
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(same_value(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same_value(a[k], b[k]) for k in a)
    return isinstance(a, bool) == isinstance(b, bool) and a == b


def parameter_differences(code: str, expected: dict) -> list[str]:
    """How a parameters cell as the page shows it differs from the values the run had
    (``expected``), one line per parameter; [] when it shows exactly those values."""
    shown = literal_assignments(code)
    if shown is None:
        return [f"the parameters cell does not parse as Python: {code[:80]!r}"]
    out = []
    for name, value in expected.items():
        if name not in shown:
            out.append(f"{name} is not shown (the run had {name} = {value!r})")
        elif not same_value(shown[name], value):
            out.append(f"{name} = {shown[name]!r} is shown; the run had {name} = {value!r}")
    return out + [f"{name} = {shown[name]!r} is shown but is not a parameter of the run"
                  for name in shown if name not in expected]
