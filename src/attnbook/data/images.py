"""Offline natural images for the assumption tests on vision models (mahdavi2024, Section 5.1).

The paper feeds 2000 ImageNet images to ViT models. ImageNet cannot be fetched offline, so
this module draws images from the colour photographs shipped with scikit-image (astronaut,
cat, coffee, rocket, retina, ...) or from any folder of images a user points to. Distinct
images come from random crops (a random fraction of the area and aspect ratio) and random
horizontal flips, resized to the model's input size with antialiased bilinear interpolation.
Interpolation matters: enlarging by pixel repetition makes neighbouring pixels equal, so
patches become linearly dependent and the rank tests would measure the resizing, not the model.

Used by: mahdavi2024_real_models.
"""

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

from ..errors import AttnbookError, ParameterError

__all__ = ["IMAGE_SUFFIXES", "SKIMAGE_PHOTOS", "ImageSet", "source_photos", "random_crop",
           "resize_crop", "sample_images"]

IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".bmp", ".tif", ".tiff", ".webp")
# Colour photographs in skimage/data that need no download (synthetic test patterns left out).
SKIMAGE_PHOTOS = ("astronaut.png", "chelsea.png", "coffee.png", "hubble_deep_field.jpg",
                  "ihc.png", "motorcycle_left.png", "motorcycle_right.png", "retina.jpg",
                  "rocket.jpg")


@dataclass(frozen=True)
class ImageSet:
    """A batch of RGB images in [0, 1], shape (T, 3, size, size), and where they came from."""

    pixels: torch.Tensor  # (T, 3, size, size), float32
    sources: tuple[str, ...]  # file name of the photo each image was cropped from
    origin: str  # "scikit-image" or the folder

    def __len__(self) -> int:
        return self.pixels.shape[0]


def _read_rgb(path: Path) -> np.ndarray:
    from PIL import Image

    with Image.open(path) as im:
        return np.asarray(im.convert("RGB"), dtype=np.float32) / 255.0  # (h, w, 3)


def source_photos(folder: str | Path | None = None) -> list[tuple[str, np.ndarray]]:
    """The photos images are cropped from: scikit-image's colour photos, or those in ``folder``.

    >>> [name for name, _ in source_photos()][:2]
    ['astronaut.png', 'chelsea.png']
    """
    if folder is None:
        try:
            import skimage.data
        except ImportError:
            raise AttnbookError("scikit-image is not installed: pip install scikit-image, or "
                                "pass an image folder") from None
        root = Path(skimage.data.__file__).parent
        files = [root / name for name in SKIMAGE_PHOTOS if (root / name).exists()]
        if not files:
            raise AttnbookError(f"no sample photos found in {root}: reinstall scikit-image, or "
                                "pass an image folder")
    else:
        root = Path(folder).expanduser()
        if not root.is_dir():
            raise AttnbookError(f"image folder {root} does not exist: pass a folder holding "
                                f"images ({', '.join(IMAGE_SUFFIXES)})")
        files = sorted(p for p in root.iterdir() if p.suffix.lower() in IMAGE_SUFFIXES)
        if not files:
            raise AttnbookError(f"image folder {root} holds no images ({', '.join(IMAGE_SUFFIXES)})"
                                ": put some there, or leave the folder unset to use scikit-image's "
                                "sample photos")
    return [(p.name, _read_rgb(p)) for p in files]


def random_crop(img: np.ndarray, rng: np.random.Generator, min_area: float) -> np.ndarray:
    """A random crop of ``img`` (h, w, 3): a fraction of the area in [min_area, 1], an aspect
    ratio in [3/4, 4/3], then a horizontal flip with probability 1/2, drawn from ``rng`` in
    that order (the draws every image set of the book makes, so one stream gives one set).

    >>> crop = random_crop(np.zeros((40, 60, 3)), np.random.default_rng(0), 0.5)
    >>> crop.shape, 0.5 <= crop.shape[0] * crop.shape[1] / (40 * 60) <= 1
    ((40, 41, 3), True)
    """
    h, w, _ = img.shape
    area = rng.uniform(min_area, 1.0) * h * w
    aspect = np.exp(rng.uniform(np.log(3 / 4), np.log(4 / 3)))
    ch = int(round(min(h, np.sqrt(area / aspect))))
    cw = int(round(min(w, np.sqrt(area * aspect))))
    top, left = rng.integers(0, h - ch + 1), rng.integers(0, w - cw + 1)
    crop = img[top:top + ch, left:left + cw]
    return crop[:, ::-1] if rng.random() < 0.5 else crop


def resize_crop(crop: np.ndarray, size: int) -> torch.Tensor:
    """A crop (h, w, 3) resized to (3, size, size) with antialiased bilinear interpolation,
    clamped to [0, 1].

    >>> tuple(resize_crop(np.ones((10, 20, 3), dtype=np.float32), 8).shape)
    (3, 8, 8)
    """
    x = torch.from_numpy(np.ascontiguousarray(crop)).permute(2, 0, 1)[None]  # (1, 3, h, w)
    return F.interpolate(x, size=(size, size), mode="bilinear", antialias=True,
                         align_corners=False)[0].clamp(0.0, 1.0)


def sample_images(count: int, size: int = 224, *, seed: int = 0, folder=None,
                  min_area: float = 0.1) -> ImageSet:
    """``count`` random crops of the source photos, each resized (antialiased) to size x size.

    >>> imgs = sample_images(3, size=32)
    >>> tuple(imgs.pixels.shape), 0.0 <= float(imgs.pixels.min()) <= float(imgs.pixels.max()) <= 1.0
    ((3, 3, 32, 32), True)
    """
    if not isinstance(count, int) or count < 1:
        raise ParameterError("count", count, "an integer >= 1")
    if not isinstance(size, int) or size < 8:
        raise ParameterError("size", size, "an integer >= 8 (pixels per side)")
    if not 0 < min_area <= 1:
        raise ParameterError("min_area", min_area, "0 < min_area <= 1 (fraction of the photo)")
    photos = source_photos(folder)
    rng = np.random.default_rng(seed)
    out = torch.empty(count, 3, size, size)
    names = []
    for i in range(count):
        name, img = photos[int(rng.integers(len(photos)))]
        out[i] = resize_crop(random_crop(img, rng, min_area), size)
        names.append(name)
    return ImageSet(out, tuple(names), "scikit-image" if folder is None else str(folder))
