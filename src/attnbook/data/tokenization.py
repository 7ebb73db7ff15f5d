"""Byte-level BPE vocabularies and memory-mapped token arrays (wies2021 appendix C.2).

The paper tokenizes its corpus with GPT-2's vocabulary (V = 50257) and with three BPE
vocabularies of sizes V = 257, 500, 2000 trained on its training corpus with HuggingFace
``tokenizers``. Here every vocabulary is trained on the train split of the chosen corpus:
byte-level BPE with 256 byte symbols plus one end-of-text token, so V = 257 is the pure byte
vocabulary (no merges) and every larger V adds V - 257 merges, as in GPT-2. Offline there are
no GPT-2 merges, so the large vocabulary is the largest the corpus supports
(:data:`LARGE_VOCAB`: asked for 50257, capped by merges seen at least twice).

Tokenizers are cached as ``data/corpora/<corpus>/bpe-<V>.json``; token ids of each split as a
flat ``uint16`` memmap ``tokens-<V>-<split>.bin`` with an end-of-text token after every
document.

Used by: wies2021_rank_bottleneck.
"""

import json
import os
from dataclasses import dataclass

import numpy as np

from ..errors import AttnbookError, ParameterError
from .corpus import Corpus

__all__ = ["EOT", "LARGE_VOCAB", "train_bpe", "TokenArrays", "tokenize_corpus"]

EOT = "<|endoftext|>"  # id 0; documents are separated by it, as in GPT-2
BYTE_VOCAB = 257  # 256 byte symbols + EOT
LARGE_VOCAB = 50257  # GPT-2's size; the trained size may be smaller (see train_bpe)
_MIN_FREQUENCY = 2  # a merge must occur at least twice in the training documents


def _check_vocab(V):
    if not isinstance(V, int) or isinstance(V, bool) or not BYTE_VOCAB <= V < 2**16:
        raise ParameterError("V", V, f"an integer {BYTE_VOCAB} <= V < 65536 (byte-level BPE: "
                             f"256 bytes + {EOT}, ids stored as uint16)")


def train_bpe(corpus: Corpus, V: int):
    """The byte-level BPE tokenizer of at most V tokens trained on ``corpus``'s train split.

    Cached under the corpus folder; the file records the corpus content hash, and a tokenizer
    trained on other content is retrained. ``tokenizer.get_vocab_size()`` is the actual size.
    """
    _check_vocab(V)
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    path = corpus.dir / f"bpe-{V}.json"
    meta = corpus.dir / f"bpe-{V}.meta.json"
    if path.exists() and meta.exists() and \
            json.loads(meta.read_text()).get("content_sha256") == corpus.content_hash:
        return Tokenizer.from_file(str(path))
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=V, min_frequency=_MIN_FREQUENCY,
                                  special_tokens=[EOT], show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator(corpus.documents("train"), trainer=trainer)
    tmp = path.with_name(f".{path.name}.{os.getpid()}")
    tok.save(str(tmp))
    os.replace(tmp, path)
    meta.write_text(json.dumps({"V_requested": V, "V": tok.get_vocab_size(),
                                "content_sha256": corpus.content_hash}))
    return tok


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
