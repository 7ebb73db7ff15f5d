"""Where a number came from: commit, device, library versions, time, and the code it ran on.

:func:`provenance` is stored beside every result and claim; the code fingerprint
(:func:`code_fingerprint`, ``{module: sha256[:12]}`` of each ``attnbook`` module's syntax tree
without docstrings, the same on every Python; :data:`_SKIP` left out: they draw, store, judge
and fetch numbers but do not compute them) when a result is stored. A sweep unit of a library
function counts only that function's import closure (:func:`function_modules`).
:func:`changed_modules` says which modules changed since: such a result is stale.
"""

import ast
import functools
import hashlib
import re
import subprocess
import sys
from datetime import datetime, timezone
from functools import lru_cache
from pathlib import Path

from ..paths import ROOT

__all__ = ["git", "git_state", "now_iso", "provenance", "code_fingerprint",
           "changed_modules", "module_closure", "function_modules",
           "NO_FINGERPRINT"]

NO_FINGERPRINT = "(no code fingerprint: recorded before fingerprints)"
_PACKAGE = "attnbook"
_PACKAGE_DIR = Path(__file__).resolve().parent.parent  # src/attnbook
_SKIP = ("attnbook.book", "attnbook.paths", "attnbook.progress", "attnbook.registry",
         "attnbook.criteria")  # criteria judge numbers: see claims.criterion_sha


def git(*args: str, root: Path | None = None) -> str | None:
    """git's output in ``root`` (default: the repository), or None where it fails (no git, no
    history, no such file)."""
    try:
        out = subprocess.run(["git", *args], cwd=root or ROOT, capture_output=True, text=True,
                             timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout if out.returncode == 0 else None


CODE_PATHS = ("src", "notebooks", "pyproject.toml", "requirements-lock.txt",
              "requirements-data.txt")  # what decides a number; data/ and the book's pages do not


def git_state() -> dict:
    """``{"commit": short sha, "dirty": bool}``, plus ``diff_sha256`` of ``git diff HEAD`` of
    :data:`CODE_PATHS` when dirty (what a run writes under ``data/`` does not count)."""
    sha = (git("rev-parse", "--short=12", "HEAD") or "").strip() or "unknown"
    dirty = bool((git("status", "--porcelain", "--", *CODE_PATHS) or "").strip())
    state = {"commit": sha, "dirty": dirty}
    if dirty:
        diff = git("diff", "HEAD", "--no-color", "--no-ext-diff", "--", *CODE_PATHS) or ""
        state["diff_sha256"] = hashlib.sha256(diff.encode()).hexdigest()[:16]
    return state


def now_iso() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def _source_path(module: str) -> Path | None:
    """Where ``module``'s source is now, or None (gone, or not a dotted name of this package: a
    fingerprint read from a file is never followed to a path elsewhere)."""
    if not isinstance(module, str) or not _MODULE.fullmatch(module):
        return None
    parts = module.split(".")[1:]
    base = _PACKAGE_DIR.joinpath(*parts) if parts else _PACKAGE_DIR / "__init__"
    for p in (base.with_suffix(".py"), base / "__init__.py"):
        if p.is_file():
            return p
    return None


_MODULE = re.compile(r"attnbook(\.[A-Za-z_][A-Za-z0-9_]*)*")  # a dotted name, no path


# Fields that later Pythons added to the syntax tree (3.12: ``type_params`` of functions and
# classes): left out of the dump while empty, so that a module hashes the same on every Python.
_LATER_FIELDS = frozenset({"type_params"})
# The fields whose value None is a value, not an absent option (``x = None``, ``case None:``).
_NONE_IS_VALUE = frozenset({("Constant", "value"), ("MatchSingleton", "value")})


def _dump(node) -> str:
    """A syntax tree as Python 3.11's :func:`ast.dump` writes it, whatever Python runs it
    (``ast.dump`` itself differs between versions)."""
    if isinstance(node, ast.AST):
        name = type(node).__name__
        fields = []
        for field in node._fields:
            value = getattr(node, field, None)
            if value is None and (name, field) not in _NONE_IS_VALUE:
                continue
            if field in _LATER_FIELDS and not value:
                continue
            fields.append(f"{field}={_dump(value)}")
        return f"{name}({', '.join(fields)})"
    if isinstance(node, list):
        return "[" + ", ".join(_dump(x) for x in node) + "]"
    return repr(node)


def source_hash(source: bytes) -> str:
    """sha256[:12] of a module's syntax tree without docstrings (:func:`_dump`)."""
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if not isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef,
                                 ast.AsyncFunctionDef)) or not node.body:
            continue
        first = node.body[0]
        if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) \
                and isinstance(first.value.value, str):
            node.body = node.body[1:] or [ast.Pass()]
    return hashlib.sha256(_dump(tree).encode()).hexdigest()[:12]


@lru_cache(maxsize=512)
def _hash_file(path: Path, mtime_ns: int, size: int) -> str:
    """:func:`source_hash` of a module's file (cached while the file is unchanged)."""
    return source_hash(path.read_bytes())


def _module_hash(module: str) -> str | None:
    path = _source_path(module)
    if path is None:
        return None
    st = path.stat()
    return _hash_file(path, st.st_mtime_ns, st.st_size)


def _counted(name: str) -> bool:
    return name.startswith(_PACKAGE + ".") and not any(
        name == s or name.startswith(s + ".") for s in _SKIP)


def code_fingerprint(modules=None) -> dict:
    """``{module: sha256[:12]}`` of the ``attnbook`` modules loaded now (or of ``modules``)."""
    names = sorted(n for n in (modules if modules is not None else list(sys.modules))
                   if _counted(n))
    out = {}
    for n in names:
        h = _module_hash(n)
        if h is not None:
            out[n] = h
    return out


def _imported(module: str) -> set[str]:
    """The ``attnbook`` modules that ``module``'s source imports anywhere (functions too)."""
    path = _source_path(module)
    if path is None:
        return set()
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    out = set()
    for node in ast.walk(ast.parse(path.read_bytes())):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            out.add(target)
            # ``from . import x`` / ``from .memorization import trained``: x may be a module
            out.update(f"{target}.{a.name}" for a in node.names
                       if _source_path(f"{target}.{a.name}") is not None)
    return {m for m in out if m == _PACKAGE or m.startswith(_PACKAGE + ".")}


def module_closure(module: str) -> list[str]:
    """``module`` and every ``attnbook`` module it imports, directly or not, with their parent
    packages, as the fingerprint counts them.

    >>> "attnbook.engines.lm" in module_closure("attnbook.engines.lm_sweep")
    True
    >>> "attnbook.engines.depth_efficiency" in module_closure("attnbook.engines.lm_sweep")
    False
    """
    seen, todo = set(), [module]
    while todo:
        m = todo.pop()
        if m in seen or _source_path(m) is None:
            continue
        seen.add(m)
        parts = m.split(".")
        todo += [".".join(parts[:i]) for i in range(2, len(parts))]  # parent packages
        todo += sorted(_imported(m) - seen)
    return sorted(m for m in seen if _counted(m))


def function_modules(fn) -> list[str] | None:
    """The modules a unit computed by ``fn`` can run (:func:`module_closure` of its module,
    through ``functools.partial`` and ``fn.fn`` wrappers), or None for a notebook's function."""
    for _ in range(8):
        if isinstance(fn, functools.partial):
            fn = fn.func
        elif hasattr(fn, "fn") and callable(fn.fn):
            fn = fn.fn
        else:
            break
    module = getattr(fn, "__module__", None) or ""
    if not module.startswith(_PACKAGE + ".") or not _counted(module):
        return None
    return module_closure(module)


def changed_modules(fingerprint) -> list[str]:
    """The modules of a recorded fingerprint whose source differs now or is gone (no
    fingerprint at all: :data:`NO_FINGERPRINT`)."""
    if not isinstance(fingerprint, dict):
        return [NO_FINGERPRINT]
    return sorted(m for m, h in fingerprint.items() if _module_hash(m) != h)


def provenance(device=None) -> dict:
    """Commit (and dirty state), device, versions and time (not the fingerprint)."""
    from ..device import describe_device, library_versions

    return {
        **git_state(),
        "device": describe_device(device),
        "versions": library_versions(),
        "time": now_iso(),
    }
