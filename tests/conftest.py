"""Shared fixtures: an isolated project root (ledger copy, fixture notebooks, build folder)."""

import shutil
from pathlib import Path

import pytest

from attnbook import paths

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


@pytest.fixture
def cli_sandbox(sandbox, monkeypatch):
    """The sandbox as the CLI's project: notebooks, build, results and figures inside it."""
    monkeypatch.setattr(paths, "ROOT", sandbox)
    monkeypatch.setattr(paths, "CLAIMS", sandbox / "data" / "claims")
    monkeypatch.setattr(paths, "NOTEBOOKS", sandbox / "notebooks")
    monkeypatch.setattr(paths, "BUILD", sandbox / "build")
    monkeypatch.setattr(paths, "EXPLORE", sandbox / "build" / "explore")
    monkeypatch.setattr(paths, "COMMITTED_RESULTS", sandbox / "data" / "results")
    monkeypatch.setattr(paths, "COMMITTED_FIGURES", sandbox / "figures")
    return sandbox
