"""Where a number came from: commit, device, library versions and time, recorded with it."""

import subprocess
from datetime import datetime, timezone

from ..device import describe_device, library_versions
from ..paths import ROOT

__all__ = ["git_commit", "now_iso", "provenance"]


def git_commit() -> str:
    """The current commit (short hash), with ``+dirty`` when the tree has uncommitted changes."""
    try:
        sha = subprocess.run(
            ["git", "rev-parse", "--short=12", "HEAD"], cwd=ROOT, capture_output=True, text=True,
            timeout=10,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT,
            capture_output=True, text=True, timeout=10,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return (sha or "unknown") + ("+dirty" if dirty else "")


def now_iso() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def provenance(device=None) -> dict:
    """Commit, device, versions and time, as stored beside every result and claim."""
    return {
        "commit": git_commit(),
        "device": describe_device(device),
        "versions": library_versions(),
        "time": now_iso(),
    }
