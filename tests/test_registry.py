"""Pinned registry files: a missing or altered tarball is a clear error, never used silently."""

import hashlib

import pytest

from attnbook.errors import AttnbookError
from attnbook.registry import npm_tarball, sha256_file


def test_sha256_file_matches_hashlib(tmp_path):
    f = tmp_path / "x.bin"
    f.write_bytes(b"attnbook" * 300_000)  # several 1 MiB blocks
    assert sha256_file(f) == hashlib.sha256(f.read_bytes()).hexdigest()


def test_missing_tarball_without_fetch_says_how_to_get_it(tmp_path):
    expected = (r"pkg-1\.0\.tgz is missing: fetch it with `npm pack pkg@1\.0` inside .* "
                r"\(expected sha256 abc\)")
    with pytest.raises(AttnbookError, match=expected):
        npm_tarball("pkg", "1.0", "abc", tmp_path, fetch=False)


def test_tarball_with_another_hash_is_refused(tmp_path):
    (tmp_path / "pkg-1.0.tgz").write_bytes(b"not the pinned file")
    with pytest.raises(AttnbookError, match="does not have the pinned sha256"):
        npm_tarball("pkg", "1.0", "0" * 64, tmp_path, fetch=False)


def test_pinned_tarball_is_returned(tmp_path):
    tgz = tmp_path / "pkg-1.0.tgz"
    tgz.write_bytes(b"payload")
    assert npm_tarball("pkg", "1.0", sha256_file(tgz), tmp_path, fetch=False) == tgz
