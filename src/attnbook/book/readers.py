"""Bounded readers of the JSON the book receives: result records, ledger entries, manifests,
``build/time-budget.json``, notebooks.

Python's own ``json.loads`` raises :class:`RecursionError` on a deeply nested text (a
100,000-deep ``[[[...]]]`` is 200 kB), which no reader expects; :func:`loads` turns that, a
text over :data:`MAX_BYTES` and undecodable bytes into a :class:`ValueError`, which every
reader already reports as a damaged file, naming it.
"""

import json

__all__ = ["loads", "MAX_BYTES", "MAX_DEPTH"]

MAX_BYTES = 256 << 20  # one JSON file read by the book: a notebook with its outputs is MiBs
MAX_DEPTH = 200  # nesting: a result record or ledger entry is a few levels deep


def _deeper(value, limit: int) -> bool:
    """Whether ``value`` (parsed JSON) nests deeper than ``limit`` (walked without recursion)."""
    stack = [(value, 1)]
    while stack:
        v, d = stack.pop()
        if isinstance(v, (dict, list)):
            if d > limit:
                return True
            stack.extend((x, d + 1) for x in (v.values() if isinstance(v, dict) else v))
    return False


def loads(text: str | bytes, *, max_bytes: int = MAX_BYTES, max_depth: int = MAX_DEPTH):
    """``json.loads`` with bounded size and nesting: a text longer than ``max_bytes``, nested
    deeper than ``max_depth`` or not UTF-8 raises :class:`ValueError` (never
    :class:`RecursionError` or :class:`MemoryError`).

    >>> loads('{"a": [1, 2]}')
    {'a': [1, 2]}
    >>> loads("[" * 100000 + "]" * 100000)
    Traceback (most recent call last):
    ...
    ValueError: nested deeper than 200 levels
    """
    if len(text) > max_bytes:
        raise ValueError(f"{len(text)} bytes, over the {max_bytes} a JSON file may have here")
    if isinstance(text, (bytes, bytearray)):
        text = bytes(text).decode("utf-8")  # UnicodeDecodeError is a ValueError
    try:
        value = json.loads(text)
    except RecursionError:  # deeper than Python's own stack
        raise ValueError(f"nested deeper than {max_depth} levels") from None
    if _deeper(value, max_depth):
        raise ValueError(f"nested deeper than {max_depth} levels")
    return value


_NAMED: set = set()  # notebooks already named as unreadable in this process


def notebook_cells(path) -> list[dict]:
    """The cells of the notebook at ``path`` (each a dict, its ``source`` text), or [] when it
    cannot be read as a notebook, which is then named once on stderr: the ledger, ``stale``
    and the pages go on without it (``run`` refuses it before any kernel starts).

    >>> notebook_cells("/nonexistent.ipynb")
    []
    """
    from pathlib import Path

    path = Path(path)
    try:
        nb = loads(path.read_bytes())
        cells = nb.get("cells", []) if isinstance(nb, dict) else None
        if not isinstance(cells, list):
            raise ValueError("no list of cells")
    except (OSError, ValueError) as e:
        if path.exists() and str(path) not in _NAMED:
            _NAMED.add(str(path))
            import sys

            print(f"attnbook: warning: {path}: not a notebook, left out "
                  f"({type(e).__name__}: {str(e).splitlines()[0][:120] if str(e) else ''})",
                  file=sys.stderr)
        return []
    out = []
    for c in cells:
        if isinstance(c, dict):
            src = c.get("source", "")
            src = "".join(x for x in src if isinstance(x, str)) if isinstance(src, list) \
                else src if isinstance(src, str) else ""
            out.append({**c, "source": src})
    return out


MAX_YAML_BYTES = 1 << 20  # a chapter's .yml is a few kB
MAX_YAML_VALUES = 100_000  # values a YAML text may expand to, aliases counted at each use


def yaml_loads(text: str | bytes, *, max_bytes: int = MAX_YAML_BYTES,
               max_values: int = MAX_YAML_VALUES, max_depth: int = MAX_DEPTH):
    """``yaml.safe_load`` with bounded size, nesting and expansion: a text over ``max_bytes``,
    not UTF-8, not YAML (a ``!!python/object`` tag among it), nested deeper than
    ``max_depth`` or expanding to more than ``max_values`` values (an alias bomb, whose
    aliases are counted at each use) raises :class:`ValueError` in one line.

    >>> yaml_loads("a: [1, 2]")
    {'a': [1, 2]}
    >>> names = "abcdefghijklmnopqrstuvwxyz"
    >>> bomb = "a: &a [x, x]\\n" + "".join(f"{c}: &{c} [*{p}, *{p}]\\n"
    ...                                     for p, c in zip(names, names[1:]))
    >>> yaml_loads(bomb)
    Traceback (most recent call last):
    ...
    ValueError: expands to more than 100000 values (aliases repeat what they name)
    """
    import yaml

    if len(text) > max_bytes:
        raise ValueError(f"{len(text)} bytes, over the {max_bytes} a YAML text may have here")
    if isinstance(text, (bytes, bytearray)):
        text = bytes(text).decode("utf-8")
    try:
        value = yaml.safe_load(text)
    except RecursionError:
        raise ValueError(f"nested deeper than {max_depth} levels") from None
    except yaml.YAMLError as e:
        raise ValueError("not YAML: " + " ".join(str(e).split())[:200]) from None
    stack, seen = [(value, 1)], 0
    while stack:
        v, d = stack.pop()
        seen += 1
        if seen > max_values:
            raise ValueError(f"expands to more than {max_values} values (aliases repeat what "
                             "they name)")
        if isinstance(v, (dict, list)):
            if d > max_depth:
                raise ValueError(f"nested deeper than {max_depth} levels")
            items = list(v.items()) if isinstance(v, dict) else v
            stack.extend((x, d + 1) for x in items)
        elif isinstance(v, tuple):
            stack.extend((x, d) for x in v)
    return value
