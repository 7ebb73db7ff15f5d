"""Offline sample images: shapes, determinism, interpolation (not pixel repetition), folders."""

import numpy as np
import pytest
import torch

from attnbook import AttnbookError, ParameterError
from attnbook.data.images import SKIMAGE_PHOTOS, sample_images, source_photos


def test_shape_range_and_determinism():
    a = sample_images(6, 40, seed=3)
    b = sample_images(6, 40, seed=3)
    c = sample_images(6, 40, seed=4)
    assert a.pixels.shape == (6, 3, 40, 40) and a.pixels.dtype == torch.float32
    assert 0.0 <= float(a.pixels.min()) and float(a.pixels.max()) <= 1.0
    assert torch.equal(a.pixels, b.pixels) and a.sources == b.sources
    assert not torch.equal(a.pixels, c.pixels)
    assert set(a.sources) <= set(SKIMAGE_PHOTOS)


def test_images_are_distinct():
    imgs = sample_images(30, 24, seed=0).pixels.reshape(30, -1)
    dist = torch.cdist(imgs, imgs) + torch.eye(30) * 1e9
    assert float(dist.min()) > 1e-3  # crops and flips give 30 different images


def test_upsampling_interpolates_instead_of_repeating_pixels():
    # a crop of 10% of a photo enlarged to 448 px: pixel repetition would make most neighbouring
    # columns identical, antialiased bilinear interpolation makes almost none identical
    x = sample_images(3, 448, seed=1, min_area=0.1).pixels
    same = (x[..., 1:] == x[..., :-1]).all(dim=(1, 2))  # (3, 447): columns equal to their left
    assert float(same.double().mean()) < 0.05


def test_folder_of_images(tmp_path):
    from PIL import Image

    rng = np.random.default_rng(0)
    for i in range(2):
        pixels = rng.integers(0, 255, (50, 60, 3), dtype=np.uint8)
        Image.fromarray(pixels).save(tmp_path / f"{i}.png")
    (tmp_path / "notes.txt").write_text("not an image")
    assert [name for name, _ in source_photos(tmp_path)] == ["0.png", "1.png"]
    imgs = sample_images(4, 16, folder=tmp_path)
    assert imgs.pixels.shape == (4, 3, 16, 16) and imgs.origin == str(tmp_path)


def test_bad_input_gives_one_clear_line(tmp_path):
    with pytest.raises(AttnbookError, match="holds no images"):
        sample_images(2, 16, folder=tmp_path)
    with pytest.raises(AttnbookError, match="does not exist"):
        sample_images(2, 16, folder=tmp_path / "missing")
    with pytest.raises(ParameterError, match="count"):
        sample_images(0, 16)
    with pytest.raises(ParameterError, match="size"):
        sample_images(2, 4)
