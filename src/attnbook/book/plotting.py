"""Shared figure style and saving: one figure, one file, named for the paper figure it redraws."""

import base64
import os
import sys
from pathlib import Path

import matplotlib

# Scripts and tests have no screen: use Agg. Inside a Jupyter kernel keep its inline backend,
# so figures still show in the executed notebooks.
if "ipykernel" not in sys.modules and not os.environ.get("MPLBACKEND"):
    matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib.text import Annotation, Text  # noqa: E402
from PIL import Image  # noqa: E402

from .. import paths  # noqa: E402

__all__ = ["save_figure", "add_footer", "paper_trend", "figure_output", "figure_table", "style",
           "in_kernel", "FIGURE_KEY", "smallest_text_pt", "phone_text_px", "png_width_in",
           "PHONE_CONTENT_PX", "MIN_PHONE_TEXT_PX", "TEXT_PX_KEY", "png_text_px",
           "overlapping_labels", "spread_labels"]

FIGURE_KEY = "attnbook_figure"  # the output metadata the book turns into a captioned figure

PHONE_CONTENT_PX = 342  # a figure's width on a 390 px phone (CSS px; measured in chromium)
MIN_PHONE_TEXT_PX = 9.0  # smaller text on that phone: the figure links to its full-size PNG
# a PNG's text chunk: the height of its smallest text in the PNG's own pixels (a page's figure
# that is no chapter's, such as the overview: what the browser test scales to the shown width)
TEXT_PX_KEY = "attnbook smallest text px"

STYLE = {"figure.dpi": 110, "savefig.dpi": 150, "axes.grid": True, "grid.alpha": 0.3,
         "axes.spines.top": False, "axes.spines.right": False, "font.size": 10,
         "legend.frameon": False}


def style() -> None:
    """Apply the book's matplotlib style."""
    plt.rcParams.update(STYLE)


def figure_table(data):
    """The plotted numbers as one table: a DataFrame as it is; a dict of DataFrames (one per
    panel) stacked, with the panel's name in a first column ``panel``."""

    if isinstance(data, pd.DataFrame):
        return data
    if isinstance(data, dict) and data and all(isinstance(v, pd.DataFrame)
                                               for v in data.values()):
        return pd.concat([v.assign(panel=str(k))[["panel", *v.columns]]
                          for k, v in data.items()], ignore_index=True)
    raise TypeError("savefig(data=...) takes a DataFrame or a dict of DataFrames (one per "
                    f"panel), got {type(data).__name__}")


def save_figure(fig, name: str, footer: str = "", data=None):
    """Write figures/<name>.png and .pdf (and .csv, :func:`figure_table` of ``data``); return
    the PNG path."""
    table = figure_table(data) if data is not None else None
    if footer:
        add_footer(fig, footer)
    paths.FIGURES.mkdir(parents=True, exist_ok=True)
    png = paths.FIGURES / f"{name}.png"
    fig.savefig(png, bbox_inches="tight")
    fig.savefig(paths.FIGURES / f"{name}.pdf", bbox_inches="tight")
    if table is not None:
        table.to_csv(paths.FIGURES / f"{name}.csv", index=False)
    return png


def paper_trend(ax, text: str, direction: str = "up", span=(0.08, 0.62)) -> None:
    """Draw the paper's finding as its shape: a grey dashed arrow across the panel, ``"up"``,
    ``"down"`` or ``"flat"``, with ``text`` beside it (``span``: its x extent, in axes
    coordinates), over the data."""
    x0, x1 = span
    y0, y1 = {"up": (0.18, 0.62), "down": (0.62, 0.18), "flat": (0.5, 0.5)}[direction]
    ax.annotate("", xy=(x1, y1), xytext=(x0, y0), xycoords="axes fraction",
                arrowprops=dict(arrowstyle="->", color="0.45", lw=1.2, ls="--"), zorder=5)
    ax.text(x0, max(y0, y1) + 0.06, text, transform=ax.transAxes, fontsize=8, color="0.3",
            zorder=5, bbox=dict(facecolor="white", edgecolor="none", alpha=0.7, pad=1))


def add_footer(fig, text: str) -> None:
    """Write ``text`` small and right-aligned under everything the figure draws (axis labels,
    a legend below them), so that it never overlaps an axis label."""
    fig.canvas.draw()  # the layout as it will be saved
    box = fig.get_tightbbox(fig.canvas.get_renderer())  # inches
    width, height = fig.get_size_inches()
    fig.text(min(box.x1 / width, 1.0), box.y0 / height - 0.02 / height, text, ha="right",
             va="top", fontsize=7, color="0.45")


def smallest_text_pt(fig) -> float | None:
    """The smallest font size (points) of the visible, non-empty texts ``fig`` draws; None when
    it draws none."""

    sizes = [t.get_fontsize() for t in fig.findobj(Text)
             if t.get_visible() and t.get_text().strip()]
    return min(sizes) if sizes else None


def _drawn_texts(fig) -> list:
    """(text, its own box on the canvas as last drawn) of each Text artist ``fig`` draws: a tick
    label only where its tick is in the axis' view (matplotlib keeps the others, undrawn), an
    annotation only where its point is in view, without its arrow."""

    renderer = fig.canvas.get_renderer()
    hidden = set()
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            lo, hi = sorted(axis.get_view_interval())
            eps = 1e-9 * (hi - lo)
            for tick in axis.get_major_ticks() + axis.get_minor_ticks():
                if not (axis.get_visible() and lo - eps <= tick.get_loc() <= hi + eps):
                    hidden.update((id(tick.label1), id(tick.label2)))
    out = []
    for t in fig.findobj(Text):
        if (id(t) in hidden or not t.get_visible() or not t.get_text().strip()
                or (t.axes is not None and not t.axes.get_visible())):
            continue
        if isinstance(t, Annotation):
            if tuple(t.get_window_extent(renderer).bounds) == (0, 0, 1, 1):
                continue  # not drawn: its point lies outside the axes
            t.update_positions(renderer)
        out.append((t, Text.get_window_extent(t, renderer)))
    return out


def overlapping_labels(fig, tol_pt: float = 0.5) -> list[tuple[str, str]]:
    """The pairs of strings of ``fig`` whose boxes overlap by more than ``tol_pt`` points both
    across and up (the same text twice in the same place prints as one: no pair). Draws the
    figure.

    >>> fig, ax = plt.subplots()
    >>> _ = ax.text(0.5, 0.5, "r=16"), ax.text(0.51, 0.5, "r=96"), ax.text(0.5, 0.2, "r=32")
    >>> overlapping_labels(fig)
    [('r=16', 'r=96')]
    >>> plt.close(fig)
    """

    fig.canvas.draw()
    tol = tol_pt * fig.dpi / 72
    texts = _drawn_texts(fig)
    return [(a.get_text(), b.get_text())
            for i, (a, box_a) in enumerate(texts) for b, box_b in texts[i + 1:]
            if min(box_a.x1, box_b.x1) - max(box_a.x0, box_b.x0) > tol
            and min(box_a.y1, box_b.y1) - max(box_a.y0, box_b.y0) > tol
            and not (a.get_text() == b.get_text()
                     and np.abs(box_a.extents - box_b.extents).max() <= tol)]


def spread_labels(ax, points, labels, *, offset=(10.0, 0.0), gap_pt: float = 1.0,
                  fontsize: float = 8, colors=None,
                  column: bool = False) -> list:
    """Label each of ``points`` (data coordinates) with its text in ``labels``, ``offset``
    points from it, then move labels up or down, each as little as it can, so that none
    overlaps another (``gap_pt`` apart) where they share a stretch of x, in the order of their
    points' heights; with ``column``, such labels also line up right of the rightmost of their
    points; a thin grey line joins each to its point. The one way a chapter
    names points that lie close together. Call it once the layout is set (after
    ``tight_layout``): the labels are spread on the canvas. Returns the annotations.
    """

    fig = ax.figure
    colors = ["black"] * len(labels) if colors is None else list(colors)
    arrow = dict(arrowstyle="-", color="0.6", lw=0.6, shrinkA=0, shrinkB=2)
    notes = [ax.annotate(text, xy, xytext=offset, textcoords="offset points", va="center",
                         ha="left", fontsize=fontsize, color=c, arrowprops=arrow)
             for xy, text, c in zip(points, labels, colors, strict=True)]
    if not notes:
        return notes
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    boxes = [Text.get_window_extent(n, renderer) for n in notes]
    wish = [b.y0 + b.height / 2 for b in boxes]  # where each label's centre sits unmoved
    gap = gap_pt * fig.dpi / 72
    shift = [0.0] * len(notes)  # how far right a label moves, on the canvas
    while True:
        groups, right = [], -float("inf")  # labels whose x extents overlap, directly or not
        for i in sorted(range(len(notes)), key=lambda i: boxes[i].x0 + shift[i]):
            if boxes[i].x0 + shift[i] > right:
                groups.append([])
                right = -float("inf")
            groups[-1].append(i)
            right = max(right, boxes[i].x1 + shift[i])
        lined = list(shift)
        for group in groups if column else ():  # each group's labels at its rightmost's x
            left = max(boxes[i].x0 for i in group)
            for i in group:
                lined[i] = left - boxes[i].x0
        if lined == shift:  # lined up, the groups stay as they are
            break
        shift = lined
    placed = list(wish)

    def base(stack):  # where a stack's first label goes: its members' wishes, on average
        members, above = stack
        return sum(wish[j] - a for j, a in zip(members, above, strict=True)) / len(members)

    for group in groups:
        # bottom to top, stacks of labels one gap apart: a stack that reaches into the one
        # below is merged with it, the merged stack centred on its members' wishes
        stacks = []  # (members, each one's height above the first)
        for i in sorted(group, key=lambda i: wish[i]):
            stacks.append(([i], [0.0]))
            while len(stacks) > 1:
                low, high = stacks[-2], stacks[-1]
                need = (boxes[low[0][-1]].height + boxes[high[0][0]].height) / 2 + gap
                if base(high) - (base(low) + low[1][-1]) >= need:
                    break
                step = low[1][-1] + need
                stacks[-2:] = [(low[0] + high[0], low[1] + [step + a for a in high[1]])]
        for stack in stacks:
            for j, a in zip(*stack, strict=True):
                placed[j] = base(stack) + a
    for note, x, y, w in zip(notes, shift, placed, wish, strict=True):
        note.xyann = (offset[0] + x * 72 / fig.dpi, offset[1] + (y - w) * 72 / fig.dpi)
    return notes


def phone_text_px(points: float, width_in: float, dpi: float = STYLE["figure.dpi"],
                  content_px: float = PHONE_CONTENT_PX) -> float:
    """How tall (CSS px) text of ``points`` is on a phone, in a figure ``width_in`` inches wide
    that the page shows at ``width_in * dpi`` CSS px narrowed to ``content_px``.

    >>> round(phone_text_px(8, 4), 1)  # a 4-inch figure with 8 pt text
    9.5
    >>> round(phone_text_px(7, 15), 1)  # four panels side by side, 7 pt legends
    2.2
    """
    shown = min(content_px, width_in * dpi)
    return points * shown / (72 * width_in)


def png_text_px(png) -> float | None:
    """The height of a PNG's smallest text in its own pixels, as its text chunk records under
    :data:`TEXT_PX_KEY` (None when it records none)."""

    with Image.open(png) as im:
        value = (getattr(im, "text", None) or im.info).get(TEXT_PX_KEY)
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None


def png_width_in(png) -> float:
    """The width in inches of a PNG saved at the style's ``savefig.dpi``: the width the page
    shows it at, at ``figure.dpi``."""
    dpi = plt.rcParams["savefig.dpi"]
    return _png_px(Path(png).read_bytes()) / (STYLE["savefig.dpi"] if dpi == "figure"
                                               else float(dpi))


def _png_px(raw: bytes) -> int:
    return int.from_bytes(raw[16:20], "big")  # the width in the PNG header's IHDR chunk


def in_kernel() -> bool:
    """Whether this runs in a Jupyter kernel (a notebook), where outputs are displayed."""
    if "ipykernel" not in sys.modules:
        return False
    from IPython import get_ipython

    shell = get_ipython()
    return shell is not None and getattr(shell, "kernel", None) is not None


def figure_output(fig, png, info: dict) -> bool:
    """In a Jupyter kernel: show the saved PNG as the cell's output, ``info`` in its metadata
    under :data:`FIGURE_KEY` (:mod:`attnbook.book.figures` reads it), and close ``fig`` so the
    inline backend does not show it again. Outside a kernel: False, nothing done."""
    if not in_kernel():
        return False

    from IPython.display import display

    raw = png.read_bytes()
    saved_dpi = plt.rcParams["savefig.dpi"]
    width = round(_png_px(raw) * fig.dpi / (fig.dpi if saved_dpi == "figure" else float(saved_dpi)))
    bundle = {"image/png": base64.b64encode(raw).decode("ascii"),
              "text/plain": f"<figure {info.get('name', '')}: {info.get('caption', '')}>"}
    display(bundle, raw=True, metadata={FIGURE_KEY: info, "image/png": {"width": width}})
    plt.close(fig)
    return True


style()
