"""Where things live: one module, so no notebook or script spells a path of its own.

The repository root is found from the installed package (an editable install), or from
``ATTNBOOK_ROOT`` when set; every other path derives from it. The runner points a notebook's
kernel elsewhere for two of them: ``ATTNBOOK_RESULTS`` (an exploratory ``-p`` run stores its
results under ``build/explore/``, apart from the committed ones) and ``ATTNBOOK_FIGURES``
(figures are written to a scratch folder and moved into place only when the run succeeds).
"""

import os
from pathlib import Path

__all__ = ["ROOT", "NOTEBOOKS", "DATA", "CLAIMS", "RESULTS", "FIGURES", "BUILD", "EXECUTED",
           "EXPLORE", "ENV_RESULTS", "ENV_FIGURES"]

ENV_RESULTS = "ATTNBOOK_RESULTS"
ENV_FIGURES = "ATTNBOOK_FIGURES"


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
COMMITTED_RESULTS = DATA / "results"  # cached computations: <notebook>/<profile>/...
COMMITTED_FIGURES = ROOT / "figures"
RESULTS = Path(os.environ[ENV_RESULTS]) if os.environ.get(ENV_RESULTS) else COMMITTED_RESULTS
FIGURES = Path(os.environ[ENV_FIGURES]) if os.environ.get(ENV_FIGURES) else COMMITTED_FIGURES
BUILD = ROOT / "build"  # git-ignored: executed notebooks, manifest, generated pages, HTML
EXECUTED = BUILD / "executed"
EXPLORE = BUILD / "explore"  # exploratory (-p) runs: <notebook>-<profile>-<key>/{results,figures}
