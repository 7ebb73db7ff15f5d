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


@pytest.mark.parametrize("V", [T.MIN_CHAR_VOCAB - 1, 2, 70000, 2.5, True])
def test_bad_vocabulary_size(small, V):
    with pytest.raises(ParameterError, match="parameter V") as e:
        T.tokenize_corpus(small, V)
    assert "\n" not in str(e.value)  # one line


@pytest.mark.parametrize("V", [T.MIN_CHAR_VOCAB, 40, 64])
def test_character_vocabulary_has_exactly_V_tokens(small, V):
    assert T.vocab_kind(V) == "char"
    tok = T.train_bpe(small, V)
    arrays = T.tokenize_corpus(small, V)
    assert tok.get_vocab_size() == V and arrays.V == V
    assert int(np.max(arrays.train)) < V and tok.token_to_id(T.EOT) == 0
    assert (small.dir / f"charbpe-{V}.json").exists()
    n_docs = small.info["test_documents"]
    assert int((np.asarray(arrays.test) == 0).sum()) == n_docs  # one EOT per document
    if V == T.MIN_CHAR_VOCAB:  # no merges: one token per character, + EOT per document
        n_chars = sum(len(d) for d in small.documents("test"))
        assert len(arrays.test) == n_chars + n_docs


def test_character_alphabet_is_the_most_frequent(small):
    alphabet = T.char_alphabet(small)
    assert len(alphabet) == T.CHAR_ALPHABET and T.UNK not in alphabet
    assert alphabet == "".join(sorted(alphabet))
    assert " " in alphabet and "é" in alphabet and "7" not in alphabet  # digits are rare
    assert all(c == c.lower() for c in alphabet)


def test_character_vocabulary_round_trip_and_unknowns(small):
    tok = T.train_bpe(small, 48)
    text = "the lazy dog sleeps over the brown fox."
    assert set(text) <= set(T.char_alphabet(small))
    ids = tok.encode(text).ids
    assert len(ids) < len(text) and tok.decode(ids) == text  # merges shorten, decode exact
    assert tok.decode(tok.encode("The DOG").ids) == "the dog"  # lowercased
    unk = tok.token_to_id(T.UNK)
    ids = tok.encode("dog 7~ dog").ids
    assert ids.count(unk) == 2 and tok.decode(ids) == f"dog {T.UNK}{T.UNK} dog"


def test_character_vocabulary_is_deterministic(small, tmp_path):
    docs = [(f"d/{i}", f"{TEXT} Number {i}, café.") for i in range(80)]
    other = C.build_corpus("copy", root=tmp_path / "b", documents=docs)
    a = np.array(T.tokenize_corpus(small, 50).train)
    assert np.array_equal(np.array(T.tokenize_corpus(other, 50).train), a)
    assert (other.dir / "charbpe-50.json").read_text() == \
        (small.dir / "charbpe-50.json").read_text()


def test_byte_vocabulary_unchanged_by_kind(small):
    assert T.vocab_kind(257) == "byte" and T.vocab_kind(256) == "char"
    assert T.train_bpe(small, 257).get_vocab_size() == 257
