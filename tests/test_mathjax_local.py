"""The book's own MathJax: unpacked once from the pinned tarball, only what the entry point
needs, and a build without the package falls back to the CDN instead of failing."""

import io
import tarfile
from types import SimpleNamespace

import pytest

from attnbook.book import mathjax_local
from attnbook.errors import AttnbookError
from attnbook.registry import sha256_file

FILES = {"package/es5/tex-mml-chtml.js": b"entry", "package/es5/tex-svg.js": b"other combo",
         "package/es5/output/chtml/fonts/woff-v2/MathJax_Main-Regular.woff": b"font",
         "package/es5/input/tex/extensions/ams.js": b"ams", "package/LICENSE": b"Apache-2.0",
         "package/package.json": b"{}"}


@pytest.fixture
def fake_package(tmp_path, monkeypatch):
    vendor = tmp_path / "vendor"
    vendor.mkdir()
    tgz = vendor / f"mathjax-{mathjax_local.MATHJAX_VERSION}.tgz"
    with tarfile.open(tgz, "w:gz") as tar:
        for name, data in FILES.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    monkeypatch.setattr(mathjax_local, "MATHJAX_TGZ_SHA256", sha256_file(tgz))
    return vendor


def test_install_unpacks_the_entry_and_its_parts_once(tmp_path, fake_package):
    static = tmp_path / "static"
    target = mathjax_local.install(static, fake_package, fetch=False)
    assert target == static / "mathjax"
    files = {p.relative_to(target).as_posix() for p in target.rglob("*") if p.is_file()}
    assert files == {"tex-mml-chtml.js", "output/chtml/fonts/woff-v2/MathJax_Main-Regular.woff",
                     "input/tex/extensions/ams.js", "LICENSE", ".source"}  # no tex-svg.js
    stamp = (target / ".source").stat().st_mtime_ns
    (target / "tex-mml-chtml.js").write_bytes(b"kept")
    assert mathjax_local.install(static, fake_package, fetch=False) == target
    assert (target / ".source").stat().st_mtime_ns == stamp  # not unpacked again
    assert (target / "tex-mml-chtml.js").read_bytes() == b"kept"


def test_altered_package_is_refused(tmp_path, fake_package, monkeypatch):
    monkeypatch.setattr(mathjax_local, "MATHJAX_TGZ_SHA256", "0" * 64)
    with pytest.raises(AttnbookError, match="pinned sha256"):
        mathjax_local.install(tmp_path / "static", fake_package, fetch=False)
    assert not (tmp_path / "static" / "mathjax").exists()


def test_sphinx_hook_points_at_the_local_copy_or_keeps_the_cdn(tmp_path, monkeypatch):
    config = SimpleNamespace(html_static_path=["_static"], mathjax_path="https://cdn/x.js")
    monkeypatch.setattr(mathjax_local, "install", lambda: tmp_path / "static" / "mathjax")
    mathjax_local._use_local_mathjax(None, config)
    assert config.html_static_path == ["_static", str(tmp_path / "static")]
    assert config.mathjax_path == "mathjax/tex-mml-chtml.js"

    def offline():
        raise AttnbookError("mathjax-3.2.2.tgz is missing")

    config = SimpleNamespace(html_static_path=["_static"], mathjax_path="https://cdn/x.js")
    monkeypatch.setattr(mathjax_local, "install", offline)
    mathjax_local._use_local_mathjax(None, config)
    assert config.html_static_path == ["_static"] and config.mathjax_path == "https://cdn/x.js"
