"""Shared fixtures: an isolated project root (ledger copy, fixture notebooks, build folder)."""

import shutil
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture
def sandbox(tmp_path, monkeypatch):
    """A throw-away project root: data/claims copied, fixture notebooks, empty build/.

    ATTNBOOK_ROOT points kernels started by the runner at it, so nothing touches the repo.
    """
    root = tmp_path / "root"
    (root / "data" / "claims").mkdir(parents=True)
    for csv in (REPO / "data" / "claims").glob("*.csv"):
        shutil.copy(csv, root / "data" / "claims")
    shutil.copytree(FIXTURES / "notebooks", root / "notebooks")
    monkeypatch.setenv("ATTNBOOK_ROOT", str(root))
    return root
