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
