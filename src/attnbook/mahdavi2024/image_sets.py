"""Image sets without near-duplicates for the rank tests on vision models (mahdavi2024, Sec. 5.1).

:func:`attnbook.data.images.sample_images` draws independent random crops and flips of a few
photographs, and two of them can coincide: among its 2000 crops at seed 0, two crops of
``chelsea.png`` are the same image to the pixel. Two equal inputs give two equal queries at
every stage, so every k-subset that holds both has rank below k; at T = 2000 images and
k = n = 197 that is a share k (k - 1) / (T (T - 1)) = 0.97% of the subsets, the whole gap
between the randomized Kruskal test's plateau (0.99) and 1 in ``mahdavi2024_real_models``.

:func:`distinct_crops` draws the crops the same way, from the same random stream, and redraws
any crop whose thumbnail lies within ``min_distance`` (relative Euclidean distance) of an
earlier crop's, so that no two inputs are near-duplicates; with nothing redrawn its images are
those of ``sample_images``. :func:`nearest_pair` measures how close the two closest images of a
set are; :func:`attnbook.mahdavi2024.real_models.image_stages` runs the stages of Table 1 on
such a set.

Used by: mahdavi2024_real_models.
"""

import numpy as np
import torch
import torch.nn.functional as F

from ..data.images import ImageSet, random_crop, resize_crop, source_photos
from ..errors import AttnbookError, ParameterError

__all__ = ["thumbnails", "distinct_crops", "nearest_pair"]


def thumbnails(pixels: torch.Tensor, thumb: int = 32) -> torch.Tensor:
    """Each image (T, 3, s, s) averaged down to thumb x thumb pixels, flattened: (T, 3 thumb^2).

    >>> thumbnails(torch.ones(2, 3, 64, 64), 4).shape
    torch.Size([2, 48])
    """
    return F.interpolate(pixels, size=(thumb, thumb), mode="area").reshape(len(pixels), -1)


def distinct_crops(count: int, size: int = 224, *, seed: int = 0, folder=None,
                   min_area: float = 0.1, min_distance: float = 0.005, thumb: int = 32,
                   max_redraws: int | None = None) -> tuple[ImageSet, int]:
    """``count`` random crops and flips of the source photos, resized (antialiased) to
    size x size, none within ``min_distance`` of another: a crop whose thumb x thumb thumbnail
    lies closer than that (Euclidean distance relative to its own thumbnail's norm) to an
    earlier crop's is redrawn (thumbnails no larger than the images). Returns the images and
    how many crops were redrawn.

    The crops come from the random stream of :func:`attnbook.data.images.sample_images` (same
    seed, same order of draws), so with nothing redrawn the images are the same.

    >>> imgs, redrawn = distinct_crops(3, size=32)
    >>> tuple(imgs.pixels.shape), redrawn
    ((3, 3, 32, 32), 0)
    """
    if not isinstance(count, int) or count < 1:
        raise ParameterError("count", count, "an integer >= 1")
    if not isinstance(size, int) or size < 8:
        raise ParameterError("size", size, "an integer >= 8 (pixels per side)")
    thumb = min(thumb, size)
    if not 0 < min_area <= 1:
        raise ParameterError("min_area", min_area, "0 < min_area <= 1 (fraction of the photo)")
    if not min_distance >= 0:
        raise ParameterError("min_distance", min_distance, "a relative distance >= 0")
    limit = 10 * count if max_redraws is None else max_redraws
    photos = source_photos(folder)
    rng = np.random.default_rng(seed)
    out = torch.empty(count, 3, size, size)
    small = torch.empty(count, 3 * thumb * thumb)
    names: list[str] = []
    redrawn = 0
    while len(names) < count:
        name, img = photos[int(rng.integers(len(photos)))]
        x = resize_crop(random_crop(img, rng, min_area), size)
        t = thumbnails(x[None], thumb)[0]
        i = len(names)
        if i and float((small[:i] - t).norm(dim=1).min()) < min_distance * float(t.norm()):
            redrawn += 1
            if redrawn > limit:
                raise AttnbookError(f"{redrawn} crops redrawn for {count} images at "
                                    f"min_distance {min_distance}: the photos do not give that "
                                    "many distinct crops (lower count or min_distance, or add "
                                    "photos with image_folder)")
            continue
        out[i], small[i] = x, t
        names.append(name)
    return ImageSet(out, tuple(names), "scikit-image" if folder is None else str(folder)), redrawn


def nearest_pair(images: ImageSet, thumb: int = 32) -> tuple[int, int, float]:
    """The two images of the set with the closest thumbnails and their distance, relative to
    the norm of the first one's thumbnail (distances computed exactly, not through the
    expansion |a|^2 + |b|^2 - 2ab, which loses the small ones to rounding).

    >>> px = torch.rand(3, 3, 32, 32)
    >>> nearest_pair(ImageSet(torch.cat([px, px[:1]]), ("a",) * 4, "x"))[2]
    0.0
    """
    t = thumbnails(images.pixels, thumb).double()
    if len(t) < 2:
        raise ParameterError("images", len(t), "at least two images")
    dist = torch.cdist(t, t, compute_mode="donot_use_mm_for_euclid_dist")
    dist.fill_diagonal_(float("inf"))
    rel = dist / t.norm(dim=1, keepdim=True)
    flat = int(rel.argmin())
    i, j = divmod(flat, len(t))
    return i, j, float(rel[i, j])
