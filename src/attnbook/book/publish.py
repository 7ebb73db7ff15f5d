"""Clean chapter addresses: the book reads each executed notebook as ``chapters/<work>/<stem>``.

The runner writes executed notebooks to ``build/executed/<stem>.ipynb`` (the one copy: nbval
re-executes them there, the report links to them). Built from there, a chapter would be
published as ``build/executed/<stem>.html``, the build folder leaking into its address. So
``python -m attnbook report`` (the ``pages`` step before every book build) also links each
executed notebook into ``chapters/<work>/<stem>.ipynb``, where ``<work>`` is the part of the
stem before its first underscore (``levine2020_lemma1`` -> ``chapters/levine2020/``).
``_toc.yml`` lists those paths, and the chapter is published as
``chapters/<work>/<stem>.html``.

``chapters/`` is git-ignored and holds only relative symbolic links into ``build/executed/``
(no second copy that could go stale): links whose notebook is gone (a failed run) are removed.
"""

import os
from pathlib import Path

from .. import paths

__all__ = ["CHAPTERS", "work_of", "chapter_doc", "publish_chapters"]

CHAPTERS = "chapters"  # the published folder, at the repository root (git-ignored)


def work_of(stem: str) -> str:
    """The work a notebook belongs to: its stem up to the first underscore.

    >>> work_of("mahdavi2024_fig3_saturation")
    'mahdavi2024'
    """
    return stem.split("_", 1)[0]


def chapter_doc(stem: str) -> str:
    """The chapter's document name in the book (``_toc.yml``), without suffix.

    >>> chapter_doc("levine2020_lemma1")
    'chapters/levine2020/levine2020_lemma1'
    """
    return f"{CHAPTERS}/{work_of(stem)}/{stem}"


def publish_chapters(root: Path | None = None, executed: Path | None = None) -> list[Path]:
    """Link every ``build/executed/<stem>.ipynb`` to ``chapters/<work>/<stem>.ipynb``.

    Links to notebooks that no longer exist are removed, so a chapter whose last run failed
    is missing from the book rather than stale. Returns the links, in name order.
    """
    root = Path(root or paths.ROOT)
    executed = Path(executed or paths.BUILD / "executed")
    top = root / CHAPTERS
    wanted = {}
    for nb in sorted(executed.glob("*.ipynb")):
        wanted[root / f"{chapter_doc(nb.stem)}.ipynb"] = nb
    if top.exists():
        for old in top.rglob("*.ipynb"):
            if old not in wanted or not old.is_symlink() \
                    or old.resolve() != wanted[old].resolve():
                old.unlink()
    for link, nb in wanted.items():
        if link.is_symlink():
            continue
        link.parent.mkdir(parents=True, exist_ok=True)
        link.symlink_to(os.path.relpath(nb, link.parent))
    if top.exists():
        for d in sorted(top.iterdir()):
            if d.is_dir() and not any(d.iterdir()):
                d.rmdir()
    return sorted(wanted)
