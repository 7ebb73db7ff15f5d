"""Tokens of real models: shapes, the queries' structure behind Tables 1 and 3, offline errors."""

import pytest
import torch

from attnbook import AttnbookError, ParameterError
from attnbook.data.images import sample_images
from attnbook.engines.linalg import batched_rank
from attnbook.mahdavi2024.real_models import (
    TABLE1,
    TABLE3,
    TextShape,
    VitShape,
    dinov2_small_tokens,
    kjv_verses,
    minilm_tokens,
    pretrained_text_tokens,
    pretrained_vit_tokens,
    random_text_tokens,
    random_vit_tokens,
    sentence_pair_ids,
)

TINY_VIT = VitShape(image_size=32, patch_size=8, d=48, heads=4, mlp=96)  # n = 17
TINY_TEXT = TextShape(d=32, heads=4, layers=2, max_positions=64)


@pytest.fixture(scope="module")
def tiny_images():
    return sample_images(12, 32, seed=0)


@pytest.fixture(scope="module")
def pairs():
    return sentence_pair_ids(40, 16, style="bert", seed=0)


def test_shapes_and_paper_tables():
    assert VitShape().n == 197 and TINY_VIT.n == 17
    with pytest.raises(ParameterError, match="patch_size"):
        VitShape(image_size=30, patch_size=8)
    assert len(TABLE1) == 13 and len(TABLE3) == 24
    assert not any(v for (s, t), v in TABLE3.items() if t == "General Position")
    assert [s for (s, t), v in TABLE3.items() if t == "Assumption 1" and v] == \
        ["GPT-2 random L1", "GPT-2 trained L1"]


def test_random_vit_stages(tiny_images):
    out = random_vit_tokens(tiny_images, TINY_VIT, seed=0)
    again = random_vit_tokens(tiny_images, TINY_VIT, seed=0)
    other = random_vit_tokens(tiny_images, TINY_VIT, seed=1)
    for stage in ("embedding", "random_attention", "random_vit"):
        s = out[stage]
        assert (s.T, s.n, s.d) == (12, 17, 48)
        assert torch.equal(s.queries, again[stage].queries)  # deterministic per seed
        assert not torch.equal(s.queries, other[stage].queries)
    # before attention every image has the same [CLS] query: Kruskal rank 1 (Table 1, row 1)
    assert int(batched_rank(out["embedding"].queries.float())) == 1
    # one attention layer mixes the patches into it: the queries become independent
    assert int(batched_rank(out["random_attention"].queries.float())) == 12
    assert (out["embedding"].context_ranks == 17).all()  # positions make contexts full rank


def test_image_size_must_match(tiny_images):
    with pytest.raises(ParameterError, match="image_size"):
        random_vit_tokens(tiny_images, VitShape(image_size=64, patch_size=8, d=48, heads=4))
    with pytest.raises(ParameterError, match="224"):
        dinov2_small_tokens(tiny_images)


def test_kjv_corpus():
    verses = kjv_verses()
    assert len(verses) > 20000
    assert not any(v[:1].isdigit() and ":" in v[:8] for v in verses[:100])


def test_sentence_pairs(pairs):
    ids, types = pairs
    assert ids.shape == types.shape == (40, 16)
    assert (ids[:, 0] == 101).all() and (ids[:, -1] == 102).all()
    assert ((ids == 102).sum(dim=1) == 2).all()
    first_sep = (ids == 102).int().argmax(dim=1)
    for t in range(40):  # segment 0 up to the first [SEP], segment 1 after it
        assert (types[t, :first_sep[t] + 1] == 0).all() and (types[t, first_sep[t] + 1:] == 1).all()
    assert torch.equal(ids, sentence_pair_ids(40, 16, seed=0)[0])
    gpt, _ = sentence_pair_ids(40, 16, style="gpt2", seed=0)
    assert not ((gpt == 101) | (gpt == 102)).any()
    with pytest.raises(ParameterError, match="style"):
        sentence_pair_ids(2, 16, style="t5")
    with pytest.raises(ParameterError, match="n"):
        sentence_pair_ids(2, 3)


def test_random_text_queries(pairs):
    ids, types = pairs
    bert = random_text_tokens("bert", ids, types, TINY_TEXT)
    # BERT's L0 query is [CLS] at position 0, segment 0: the same for every example
    assert int(batched_rank(bert["L0"].queries.float())) == 1
    assert int(batched_rank(bert["L1"].queries.float())) > 1
    gids, gtypes = sentence_pair_ids(40, 16, style="gpt2", seed=0)
    gpt = random_text_tokens("gpt2", gids, gtypes, TINY_TEXT)
    # GPT-2's L0 query is the last token's embedding: equal last tokens give equal queries
    last = gids[:, -1]
    dup = [(i, j) for i in range(40) for j in range(i) if last[i] == last[j]]
    assert dup, "the corpus should repeat some last token among 40 examples"
    i, j = dup[0]
    assert torch.equal(gpt["L0"].queries[i], gpt["L0"].queries[j])
    assert not torch.equal(gpt["L1"].queries[i], gpt["L1"].queries[j])  # context differs
    with pytest.raises(ParameterError, match="family"):
        random_text_tokens("t5", ids, types, TINY_TEXT)


def test_minilm_first_layer(pairs):
    ids, types = pairs
    out = minilm_tokens(ids, types)
    assert (out["L0"].d, out["L0"].n) == (384, 16)
    assert int(batched_rank(out["L0"].queries.float())) == 1  # [CLS] before attention
    assert (out["L1"].context_ranks == 16).all()


def test_dinov2_small_first_block():
    imgs = sample_images(2, 224, seed=0)
    out = dinov2_small_tokens(imgs)
    assert {k: (v.T, v.n, v.d) for k, v in out.items()} == {
        k: (2, 257, 384) for k in ("embedding", "attention", "first_layer")}
    e = out["embedding"].queries
    assert torch.allclose(e[0], e[1])  # [CLS] + position 0, image independent
    assert not torch.allclose(out["first_layer"].queries[0], out["first_layer"].queries[1])


def test_hub_models_fail_offline_with_one_line(tiny_images, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(AttnbookError, match="not available offline.*allow_download=True"):
        pretrained_vit_tokens(tiny_images, "attnbook-test/no-such-vit")
    with pytest.raises(AttnbookError, match="not available offline"):
        pretrained_text_tokens("gpt2", "attnbook-test/no-such-gpt2", 2, 8)


def test_missing_package_names_the_pip_install():
    from attnbook.mahdavi2024.real_models import _package_file

    with pytest.raises(AttnbookError, match="pip install some-data==1.0"):
        _package_file("attnbook_no_such_package", "x.bin", "some-data==1.0")


def test_examples_are_distinct():
    ids, _ = sentence_pair_ids(600, 12, seed=0)
    assert len({tuple(r) for r in ids.tolist()}) == 600  # no repeated example, no equal query
