"""Where things live: one module, so no notebook or script spells a path of its own.

The repository root is found from the installed package (an editable install), or from
``ATTNBOOK_ROOT`` when set; every other path derives from it.
"""

import os
from pathlib import Path

__all__ = ["ROOT", "NOTEBOOKS", "DATA", "CLAIMS", "RESULTS", "FIGURES", "BUILD", "EXECUTED"]


def _find_root() -> Path:
    if os.environ.get("ATTNBOOK_ROOT"):
        return Path(os.environ["ATTNBOOK_ROOT"]).resolve()
    here = Path(__file__).resolve().parents[2]  # src/attnbook/paths.py -> repository root
    if (here / "pyproject.toml").exists():
        return here
    return Path.cwd().resolve()


ROOT = _find_root()
NOTEBOOKS = ROOT / "notebooks"
DATA = ROOT / "data"
CLAIMS = DATA / "claims"  # the ledger: one CSV per work, and results/<profile>/ per claim
RESULTS = DATA / "results"  # cached computations: <notebook>/<profile>/...
FIGURES = ROOT / "figures"
BUILD = ROOT / "build"  # git-ignored: executed notebooks, manifest, generated pages, HTML
EXECUTED = BUILD / "executed"
