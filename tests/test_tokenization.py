"""BPE vocabularies and memory-mapped token arrays on a small corpus."""

import numpy as np
import pytest

from attnbook import ParameterError
from attnbook.data import corpus as C
from attnbook.data import tokenization as T

TEXT = ("the quick brown fox jumps over the lazy dog and the dog sleeps. " * 3).strip()


@pytest.fixture
def small(tmp_path):
    docs = [(f"d/{i}", f"{TEXT} Number {i}, café.") for i in range(80)]
    return C.build_corpus("small", root=tmp_path, documents=docs)


def test_byte_vocabulary_is_one_token_per_byte(small):
    arrays = T.tokenize_corpus(small, 257)
    n_bytes = sum(len(d.encode()) for d in small.documents("test"))
    n_docs = small.info["test_documents"]
    assert arrays.V == 257 and arrays.test.dtype == np.uint16
    assert isinstance(arrays.test, np.memmap)
    assert len(arrays.test) == n_bytes + n_docs  # + one end-of-text per document
    assert int((np.asarray(arrays.test) == 0).sum()) == n_docs  # EOT has id 0


def test_merges_shorten_and_decode_back(small):
    tok = T.train_bpe(small, 300)
    assert 257 < tok.get_vocab_size() <= 300
    doc = next(small.documents("train"))
    ids = tok.encode(doc).ids
    assert len(ids) < len(doc.encode()) and tok.decode(ids) == doc
    arrays = T.tokenize_corpus(small, 300)
    assert int(np.max(arrays.train)) < arrays.V
    assert len(arrays.train) < sum(len(d.encode()) + 1 for d in small.documents("train"))


def test_cached_and_deterministic(small, tmp_path):
    T.tokenize_corpus(small, 280)
    path = small.dir / "bpe-280.json"
    mtime = path.stat().st_mtime_ns
    a = np.array(T.tokenize_corpus(small, 280).train)
    assert path.stat().st_mtime_ns == mtime  # reused, not retrained
    other = C.build_corpus("copy", root=tmp_path / "b",
                           documents=[(f"d/{i}", f"{TEXT} Number {i}, café.") for i in range(80)])
    assert np.array_equal(np.array(T.tokenize_corpus(other, 280).train), a)
    assert (other.dir / "bpe-280.json").read_text() == path.read_text()


@pytest.mark.parametrize("V", [256, 70000, 2.5])
def test_bad_vocabulary_size(small, V):
    with pytest.raises(ParameterError, match="parameter V"):
        T.tokenize_corpus(small, V)
