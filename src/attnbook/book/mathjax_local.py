"""Sphinx extension: the HTML book carries its own MathJax, so its formulas render offline.

It unpacks the pinned npm package mathjax@3.2.2 (checked by sha256: :mod:`attnbook.registry`)
once under ``build/static/mathjax/`` and points ``mathjax_path`` at its ``tex-mml-chtml.js``
(Sphinx's CDN default). Where the package cannot be had, the build says so and uses the CDN.
"""

import shutil
import tarfile
from pathlib import Path

from .. import paths
from ..errors import AttnbookError
from ..registry import npm_tarball

__all__ = ["MATHJAX_VERSION", "MATHJAX_TGZ_SHA256", "install", "setup"]

MATHJAX_PACKAGE, MATHJAX_VERSION = "mathjax", "3.2.2"
MATHJAX_TGZ_SHA256 = "1b9c0a1c44df864e915690558e72adb9cc5203360daefd385084ced3b6c64c09"
ENTRY = "tex-mml-chtml.js"  # Sphinx's default component: TeX and MathML in, CHTML out
_SKIP = {"tex-chtml.js", "tex-chtml-full.js", "tex-chtml-full-speech.js", "tex-svg.js",
         "tex-svg-full.js", "tex-mml-svg.js", "mml-chtml.js", "mml-svg.js", "node-main.js"}


def install(static: Path | None = None, vendor: Path | None = None, fetch: bool = True) -> Path:
    """Unpack the pinned MathJax ``es5`` build into ``static/mathjax`` (once); return that folder.
    The combined components other than :data:`ENTRY` are left out (it loads its parts itself)."""
    static = Path(static or paths.BUILD / "static")
    target = static / "mathjax"
    stamp = target / ".source"
    source = f"{MATHJAX_PACKAGE}@{MATHJAX_VERSION} sha256 {MATHJAX_TGZ_SHA256}"
    if stamp.exists() and stamp.read_text() == source and (target / ENTRY).exists():
        return target
    tgz = npm_tarball(MATHJAX_PACKAGE, MATHJAX_VERSION, MATHJAX_TGZ_SHA256,
                      Path(vendor or paths.BUILD / "vendor"), fetch=fetch)
    shutil.rmtree(target, ignore_errors=True)
    tmp = static / "mathjax.partial"
    shutil.rmtree(tmp, ignore_errors=True)
    prefix = "package/es5/"
    with tarfile.open(tgz) as tar:
        members = [m for m in tar.getmembers() if m.isfile() and m.name.startswith(prefix)
                   and m.name[len(prefix):] not in _SKIP]
        for m in members:
            m.name = m.name[len(prefix):]
        tar.extractall(tmp, members=members, filter="data")
        license_ = tar.extractfile("package/LICENSE").read()
    (tmp / "LICENSE").write_bytes(license_)
    (tmp / ".source").write_text(source)
    tmp.rename(target)  # complete or absent: an interrupted unpack is redone next time
    return target


def _use_local_mathjax(app, config):
    from sphinx.util import logging

    log = logging.getLogger(__name__)
    try:
        folder = install()
    except AttnbookError as e:
        log.info(f"MathJax: no local copy ({e}); the pages load it from its CDN")
        return
    config.html_static_path = [*config.html_static_path, str(folder.parent)]
    config.mathjax_path = f"{folder.name}/{ENTRY}"  # relative to the book's _static folder
    log.info(f"MathJax: served from the book ({folder})")


def setup(app):
    app.connect("config-inited", _use_local_mathjax, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
