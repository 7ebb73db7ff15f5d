"""Clean chapter addresses: the book reads each executed notebook as ``chapters/<work>/<stem>``
(``<work>``: the stem up to its first underscore), not as ``build/executed/<stem>``.

``chapters/`` is git-ignored and holds only relative symbolic links into ``build/executed/``
(no second copy that could go stale), written by ``python -m attnbook report``.
"""

import os
import re
from pathlib import Path

from .. import paths

__all__ = ["CHAPTERS", "chapter_doc", "publish_chapters", "toc_order"]

CHAPTERS = "chapters"  # the published folder, at the repository root (git-ignored)


def chapter_doc(stem: str) -> str:
    """The chapter's document name in the book (``_toc.yml``), without suffix: under its work.

    >>> chapter_doc("levine2020_lemma1")
    'chapters/levine2020/levine2020_lemma1'
    """
    return f"{CHAPTERS}/{stem.split('_', 1)[0]}/{stem}"


def toc_order() -> list[str]:
    """Notebook stems in the order _toc.yml lists their chapters (``chapters/<work>/<stem>``)."""
    toc = paths.ROOT / "_toc.yml"
    return re.findall(r"chapters/[A-Za-z0-9.-]+/([A-Za-z0-9_.-]+)",
                      toc.read_text() if toc.exists() else "")


def publish_chapters(root: Path | None = None, executed: Path | None = None) -> list[Path]:
    """Link every ``build/executed/<stem>.ipynb`` to ``chapters/<work>/<stem>.ipynb``; return
    the links, in name order. Other links are removed: a chapter whose last run failed is
    missing from the book rather than stale."""
    root = Path(root or paths.ROOT)
    executed = Path(executed or paths.BUILD / "executed")
    top = root / CHAPTERS
    wanted = {root / f"{chapter_doc(nb.stem)}.ipynb": nb for nb in sorted(executed.glob("*.ipynb"))}
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
