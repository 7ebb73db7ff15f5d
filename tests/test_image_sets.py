"""Image sets without near-duplicates: the same crops as sample_images until a crop comes
within min_distance of an earlier one, which is redrawn; the stages run on a given set."""

import pytest
import torch

from attnbook import AttnbookError, ParameterError
from attnbook.data.images import ImageSet, sample_images
from attnbook.mahdavi2024.image_sets import distinct_crops, nearest_pair, thumbnails
from attnbook.mahdavi2024.real_models import VitShape, image_stages


def test_same_crops_as_sample_images_when_none_is_redrawn():
    a = sample_images(20, 32, seed=5)
    b, redrawn = distinct_crops(20, 32, seed=5)
    assert redrawn == 0 and torch.equal(a.pixels, b.pixels) and a.sources == b.sources


def test_a_near_duplicate_is_redrawn():
    # with a threshold above every distance, each crop after the first comes too close
    with pytest.raises(AttnbookError, match="redrawn"):
        distinct_crops(3, 32, seed=0, min_distance=10.0, max_redraws=5)
    # at a threshold just above the closest pair of an undeduplicated set, that pair goes
    plain = sample_images(40, 32, seed=1)
    i, j, dist = nearest_pair(plain)
    imgs, redrawn = distinct_crops(40, 32, seed=1, min_distance=dist * 1.001)
    assert redrawn >= 1 and nearest_pair(imgs)[2] >= dist * 1.001 * 0.999


def test_nearest_pair_finds_an_exact_duplicate():
    px = torch.rand(5, 3, 32, 32)
    px[3] = px[1]
    i, j, dist = nearest_pair(ImageSet(px, ("p",) * 5, "x"))
    assert {i, j} == {1, 3} and dist == 0.0
    assert thumbnails(px, 8).shape == (5, 192)


def test_bad_input():
    with pytest.raises(ParameterError, match="count"):
        distinct_crops(0, 32)
    with pytest.raises(ParameterError, match="min_distance"):
        distinct_crops(2, 32, min_distance=-1.0)


def test_stages_on_a_given_set():
    imgs, _ = distinct_crops(4, 16, seed=0)
    out = image_stages(imgs, VitShape(16, 8, 32, 2, 64))
    assert sorted(out) == ["Embedding", "Random ViT", "Random attention"]
    assert out["Random attention"].queries.shape == (4, 32)
    with pytest.raises(ParameterError, match="224"):
        image_stages(imgs, VitShape(16, 8, 32, 2, 64), trained_count=2)
