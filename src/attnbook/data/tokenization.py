"""BPE vocabularies (byte-level, and character-level below 257) and memory-mapped token arrays
(wies2021 appendix C.2).

The paper tokenizes its corpus with GPT-2's vocabulary (V = 50257) and with three BPE
vocabularies of sizes V = 257, 500, 2000 trained on its training corpus with HuggingFace
``tokenizers``. Here every vocabulary is trained on the train split of the chosen corpus:
byte-level BPE with 256 byte symbols plus one end-of-text token, so V = 257 is the pure byte
vocabulary (no merges) and every larger V adds V - 257 merges, as in GPT-2. Offline there are
no GPT-2 merges, so the large vocabulary is the largest the corpus supports
(:data:`LARGE_VOCAB`: asked for 50257, capped by merges seen at least twice).

**Vocabularies below 257** (the vocabulary kind is chosen by V): wies2021's depth-efficiency
transition sits at a shallow width d_x ~ V, out of a CPU's reach at V >= 257, so V < 257 gets a
character-level BPE: the text is lowercased, the :data:`CHAR_ALPHABET` most frequent characters
of the (lowercased) train split form the base alphabet, every other character is mapped to one
unknown symbol :data:`UNK` (U+FFFD), and V = 1 (end-of-text) + :data:`CHAR_ALPHABET` + 1
(unknown) + merges, so V = :data:`MIN_CHAR_VOCAB` is the pure character vocabulary and V = 64,
128, 256 add merges (trained with HuggingFace ``tokenizers``, pre-split into words with their
leading space, as GPT-2 does). Ties among equally frequent characters are broken by code point,
so the alphabet and the tokenizer are deterministic; text in the alphabet decodes back exactly
(``tokenizer.decode``), other characters decode as U+FFFD. Byte-level BPE for V >= 257 is
unchanged.

Tokenizers are cached as ``data/corpora/<corpus>/bpe-<V>.json`` (``charbpe-<V>.json`` below 257);
token ids of each split as a flat ``uint16`` memmap ``tokens-<V>-<split>.bin`` with an
end-of-text token after every document.

Used by: levine2020_depth_transition, wies2021_attention_ratio, wies2021_depth_efficiency,
wies2021_rank_bottleneck, wies2021_vocab_rank.
"""

import json
import os
from dataclasses import dataclass

import numpy as np

from ..errors import AttnbookError, ParameterError
from .corpus import Corpus

__all__ = ["EOT", "UNK", "LARGE_VOCAB", "CHAR_ALPHABET", "MIN_CHAR_VOCAB", "vocab_kind",
           "train_bpe", "char_alphabet", "TokenArrays", "tokenize_corpus"]

EOT = "<|endoftext|>"  # id 0; documents are separated by it, as in GPT-2
BYTE_VOCAB = 257  # 256 byte symbols + EOT
LARGE_VOCAB = 50257  # GPT-2's size; the trained size may be smaller (see train_bpe)
_MIN_FREQUENCY = 2  # a merge must occur at least twice in the training documents
UNK = "\ufffd"  # the one symbol of every character outside a character-level alphabet
CHAR_ALPHABET = 30  # characters kept by a character-level vocabulary (the most frequent)
MIN_CHAR_VOCAB = CHAR_ALPHABET + 2  # + end-of-text + unknown: no merges
_WORDS = r" ?[^ ]+| +"  # character-level pre-split: words with their leading space, space runs


def _check_vocab(V):
    if not isinstance(V, int) or isinstance(V, bool) or not MIN_CHAR_VOCAB <= V < 2**16:
        raise ParameterError("V", V, f"an integer {MIN_CHAR_VOCAB} <= V < 65536 (character-level "
                             f"BPE below {BYTE_VOCAB}: {CHAR_ALPHABET} characters + unknown + "
                             f"{EOT}; byte-level from {BYTE_VOCAB}; ids stored as uint16)")


def vocab_kind(V: int) -> str:
    """"char" (character-level BPE) for V < 257, "byte" (byte-level BPE) from 257 on.

    >>> vocab_kind(64), vocab_kind(257)
    ('char', 'byte')
    """
    _check_vocab(V)
    return "char" if V < BYTE_VOCAB else "byte"


def char_alphabet(corpus: Corpus, size: int = CHAR_ALPHABET) -> str:
    """The ``size`` most frequent characters of the lowercased train split (ties by code point),
    in order of code point, without :data:`UNK`."""
    from collections import Counter

    counts: Counter = Counter()
    for doc in corpus.documents("train"):
        counts.update(doc.lower())
    counts.pop(UNK, None)
    ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:size]
    return "".join(sorted(c for c, _ in ranked))


def _cached_tokenizer(corpus: Corpus, stem: str):
    """The tokenizer cached as ``<stem>.json`` for this corpus content, or None."""
    from tokenizers import Tokenizer

    path, meta = corpus.dir / f"{stem}.json", corpus.dir / f"{stem}.meta.json"
    if path.exists() and meta.exists() and \
            json.loads(meta.read_text()).get("content_sha256") == corpus.content_hash:
        return Tokenizer.from_file(str(path))
    return None


def _cache_tokenizer(corpus: Corpus, stem: str, tok, **info):
    """Save ``tok`` as ``<stem>.json`` (atomically) with its meta: ``info``, the actual size and
    the corpus content hash; return it."""
    path = corpus.dir / f"{stem}.json"
    tmp = path.with_name(f".{path.name}.{os.getpid()}")
    tok.save(str(tmp))
    os.replace(tmp, path)
    (corpus.dir / f"{stem}.meta.json").write_text(json.dumps(
        {**info, "V": tok.get_vocab_size(), "content_sha256": corpus.content_hash}))
    return tok


def _train_char_bpe(corpus: Corpus, V: int):
    from tokenizers import Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, trainers

    cached = _cached_tokenizer(corpus, f"charbpe-{V}")
    if cached is not None:
        return cached
    alphabet = char_alphabet(corpus)
    if len(alphabet) < CHAR_ALPHABET:
        raise AttnbookError(f"corpus {corpus.name!r} has {len(alphabet)} distinct characters; "
                            f"a character-level vocabulary needs {CHAR_ALPHABET}")
    outside = "[^" + "".join(f"\\x{{{ord(c):x}}}" for c in alphabet) + "]"
    tok = Tokenizer(models.BPE(unk_token=UNK))
    tok.normalizer = normalizers.Sequence([normalizers.Lowercase(),
                                           normalizers.Replace(Regex(outside), UNK)])
    tok.pre_tokenizer = pre_tokenizers.Split(Regex(_WORDS), behavior="isolated")
    tok.decoder = decoders.Fuse()
    trainer = trainers.BpeTrainer(vocab_size=V, min_frequency=_MIN_FREQUENCY,
                                  special_tokens=[EOT], show_progress=False,
                                  initial_alphabet=list(alphabet) + [UNK],
                                  limit_alphabet=CHAR_ALPHABET + 1)
    tok.train_from_iterator(corpus.documents("train"), trainer=trainer)
    if tok.get_vocab_size() != V:
        raise AttnbookError(f"corpus {corpus.name!r} supports {tok.get_vocab_size()} "
                            f"character-level tokens, not V = {V} (too few repeated pairs)")
    if tok.token_to_id(UNK) is None:  # the trainer keeps initial symbols; make sure
        raise AttnbookError(f"the character-level vocabulary of {corpus.name!r} lacks {UNK!r}")
    return _cache_tokenizer(corpus, f"charbpe-{V}", tok, V_requested=V, kind="char",
                            alphabet=alphabet)


def train_bpe(corpus: Corpus, V: int):
    """The BPE tokenizer of V tokens trained on ``corpus``'s train split: byte-level for
    V >= 257 (at most V tokens), character-level below (exactly V; module docstring).

    Cached under the corpus folder; the file records the corpus content hash, and a tokenizer
    trained on other content is retrained. ``tokenizer.get_vocab_size()`` is the actual size.
    """
    if vocab_kind(V) == "char":
        return _train_char_bpe(corpus, V)
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    cached = _cached_tokenizer(corpus, f"bpe-{V}")
    if cached is not None:
        return cached
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=V, min_frequency=_MIN_FREQUENCY,
                                  special_tokens=[EOT], show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator(corpus.documents("train"), trainer=trainer)
    return _cache_tokenizer(corpus, f"bpe-{V}", tok, V_requested=V)


@dataclass(frozen=True)
class TokenArrays:
    """Token ids of the train and test splits (memory-mapped), and the vocabulary size V."""

    train: np.ndarray  # (n_train,) uint16
    test: np.ndarray  # (n_test,) uint16
    V: int  # actual vocabulary size (ids are < V)
    info: dict

    def __repr__(self):
        return (f"TokenArrays(V={self.V}, train={len(self.train):,} tokens, "
                f"test={len(self.test):,} tokens)")


def tokenize_corpus(corpus: Corpus, V: int, *, batch: int = 256) -> TokenArrays:
    """Train (or reuse) the BPE of size V and return memory-mapped token arrays of both splits."""
    tok = train_bpe(corpus, V)
    V_actual = tok.get_vocab_size()
    eot = tok.token_to_id(EOT)
    info_path = corpus.dir / f"tokens-{V}.json"
    info = json.loads(info_path.read_text()) if info_path.exists() else {}
    if info.get("content_sha256") != corpus.content_hash or info.get("V") != V_actual:
        info = {"V_requested": V, "V": V_actual, "content_sha256": corpus.content_hash}
        for split in ("train", "test"):
            ids: list[int] = []
            docs = list(corpus.documents(split))
            for i in range(0, len(docs), batch):
                for enc in tok.encode_batch(docs[i:i + batch]):
                    ids.extend(enc.ids)
                    ids.append(eot)
            arr = np.asarray(ids, dtype=np.uint16)
            path = corpus.dir / f"tokens-{V}-{split}.bin"
            tmp = path.with_name(f".{path.name}.{os.getpid()}")
            arr.tofile(tmp)
            os.replace(tmp, path)
            info[f"{split}_tokens"] = int(arr.size)
            info[f"{split}_documents"] = len(docs)
        info_path.write_text(json.dumps(info, indent=1))
    arrays = {}
    for split in ("train", "test"):
        path = corpus.dir / f"tokens-{V}-{split}.bin"
        if not path.exists():
            raise AttnbookError(f"{path} is missing; delete {info_path} and tokenize again")
        arrays[split] = np.memmap(path, dtype=np.uint16, mode="r")
    return TokenArrays(arrays["train"], arrays["test"], V_actual, info)
