"""Bounded readers of the JSON and YAML the book receives (result records, ledger entries,
manifests, notebooks, a chapter's ``.yml``): a text too long, too deep, not UTF-8 or (YAML) an
alias bomb raises :class:`ValueError`, which every reader reports as a damaged file, never
:class:`RecursionError` or :class:`MemoryError`.
"""

import json
import sys
from pathlib import Path

import yaml

__all__ = ["loads", "MAX_BYTES", "MAX_DEPTH"]

MAX_BYTES = 256 << 20  # one JSON file read by the book: a notebook with its outputs is MiBs
MAX_DEPTH = 200  # nesting: a result record or ledger entry is a few levels deep
MAX_YAML_BYTES = 1 << 20  # a chapter's .yml is a few kB
MAX_YAML_VALUES = 100_000  # values a YAML text may expand to, aliases counted at each use


def _text(text: str | bytes, max_bytes: int, what: str) -> str:
    """``text`` decoded, refusing more than ``max_bytes``."""
    if len(text) > max_bytes:
        raise ValueError(f"{len(text)} bytes, over the {max_bytes} a {what} may have here")
    if isinstance(text, (bytes, bytearray)):
        text = bytes(text).decode("utf-8")  # UnicodeDecodeError is a ValueError
    return text


def _check_shape(value, max_depth: int, max_values: int | None = None) -> None:
    """Refuse a parsed value nested deeper than ``max_depth`` or of more than ``max_values``
    values (walked without recursion)."""
    stack, seen = [(value, 1)], 0
    while stack:
        v, d = stack.pop()
        seen += 1
        if max_values is not None and seen > max_values:
            raise ValueError(f"expands to more than {max_values} values (aliases repeat what "
                             "they name)")
        if isinstance(v, (dict, list)):
            if d > max_depth:
                raise ValueError(f"nested deeper than {max_depth} levels")
            stack.extend((x, d + 1) for x in (list(v.items()) if isinstance(v, dict) else v))
        elif isinstance(v, tuple):
            stack.extend((x, d) for x in v)


def loads(text: str | bytes, *, max_bytes: int = MAX_BYTES, max_depth: int = MAX_DEPTH):
    """``json.loads`` with bounded size and nesting.

    >>> loads('{"a": [1, 2]}')
    {'a': [1, 2]}
    >>> loads("[" * 100000 + "]" * 100000)
    Traceback (most recent call last):
    ...
    ValueError: nested deeper than 200 levels
    """
    text = _text(text, max_bytes, "JSON file")
    try:
        value = json.loads(text)
    except RecursionError:  # deeper than Python's own stack
        raise ValueError(f"nested deeper than {max_depth} levels") from None
    _check_shape(value, max_depth)
    return value


_NAMED: set = set()  # notebooks already named as unreadable in this process


def notebook_cells(path) -> list[dict]:
    """The cells of the notebook at ``path`` (each with its ``source`` as text), or [] when it
    cannot be read as a notebook, which is then named once on stderr.

    >>> notebook_cells("/nonexistent.ipynb")
    []
    """
    path = Path(path)
    try:
        nb = loads(path.read_bytes())
        cells = nb.get("cells", []) if isinstance(nb, dict) else None
        if not isinstance(cells, list):
            raise ValueError("no list of cells")
    except (OSError, ValueError) as e:
        if path.exists() and str(path) not in _NAMED:
            _NAMED.add(str(path))
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


def yaml_loads(text: str | bytes, *, max_bytes: int = MAX_YAML_BYTES,
               max_values: int = MAX_YAML_VALUES, max_depth: int = MAX_DEPTH):
    """``yaml.safe_load`` with bounded size, nesting and expansion (aliases counted at each
    use); a text that is not YAML (a ``!!python/object`` tag) raises :class:`ValueError` too.

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
    text = _text(text, max_bytes, "YAML text")
    try:
        value = yaml.safe_load(text)
    except RecursionError:
        raise ValueError(f"nested deeper than {max_depth} levels") from None
    except yaml.YAMLError as e:
        raise ValueError("not YAML: " + " ".join(str(e).split())[:200]) from None
    _check_shape(value, max_depth, max_values)
    return value
