"""Shared fixtures: an isolated project root (ledger copy, fixture notebooks, build folder)."""

import os
import shutil
from pathlib import Path

import pytest

os.environ.setdefault("MPLBACKEND", "Agg")  # figures drawn by tests never open a window

from attnbook import paths

REPO = Path(__file__).resolve().parents[1]
FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture(autouse=True)
def _close_figures():
    """Every test leaves no matplotlib figure open behind it."""
    yield
    import sys

    if "matplotlib.pyplot" in sys.modules:
        sys.modules["matplotlib.pyplot"].close("all")


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


def pytest_sessionstart(session):
    import time

    session.config.attnbook_started = time.time()


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    """After the browser test: the screenshots it took (build/screenshots/), the phone's one
    per page, so a reader of the test's output finds them."""
    ran = any("test_browser.py" in getattr(r, "nodeid", "")
              for key in ("passed", "failed", "error") for r in terminalreporter.stats.get(key, []))
    shots = paths.BUILD / "screenshots"
    if not ran or not shots.is_dir():
        return
    started = getattr(config, "attnbook_started", 0)
    taken = sorted(p for p in shots.glob("*.png") if p.stat().st_mtime >= started)
    phone = [p for p in taken if p.stem.endswith("-phone")]
    if not taken:
        return
    terminalreporter.write_sep("-", f"screenshots: {len(taken)} in {shots}/ (<page>.png at "
                                    f"1400 px, <page>-phone.png at 390 px)")
    for p in phone:
        terminalreporter.write_line(f"  {p.relative_to(paths.ROOT)}"
                                    if p.is_relative_to(paths.ROOT) else f"  {p}")
