"""Shared figure style and saving: one figure, one file, named for the paper figure it redraws."""

import os
import sys

import matplotlib

# Scripts and tests have no screen: use Agg. Inside a Jupyter kernel keep its inline backend,
# so figures still show in the executed notebooks.
if "ipykernel" not in sys.modules and not os.environ.get("MPLBACKEND"):
    matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from .. import paths  # noqa: E402

__all__ = ["save_figure", "add_footer", "paper_trend", "figure_output", "figure_table", "style",
           "in_kernel", "FIGURE_KEY", "smallest_text_pt", "phone_text_px", "png_width_in",
           "PHONE_CONTENT_PX", "MIN_PHONE_TEXT_PX", "TEXT_PX_KEY", "png_text_px"]

FIGURE_KEY = "attnbook_figure"  # the output metadata the book turns into a captioned figure

PHONE_CONTENT_PX = 342  # the width a figure is shown at on a 390 px phone (CSS px; the browser test
#                        measures it in chromium)
MIN_PHONE_TEXT_PX = 9.0  # smaller text on that phone: the figure links to its full-size PNG
# a PNG's text chunk: the height of its smallest text in the PNG's own pixels (a page's figure
# that is no chapter's, such as the overview: what the browser test scales to the shown width)
TEXT_PX_KEY = "attnbook smallest text px"

STYLE = {
    "figure.dpi": 110,
    "savefig.dpi": 150,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "font.size": 10,
    "legend.frameon": False,
}


def style() -> None:
    """Apply the book's matplotlib style."""
    plt.rcParams.update(STYLE)


def figure_table(data):
    """The plotted numbers as one table: a DataFrame as it is; a dict of DataFrames (one per
    panel) stacked, with the panel's name in a first column ``panel``."""
    import pandas as pd

    if isinstance(data, pd.DataFrame):
        return data
    if isinstance(data, dict) and data and all(isinstance(v, pd.DataFrame)
                                               for v in data.values()):
        return pd.concat([v.assign(panel=str(k))[["panel", *v.columns]]
                          for k, v in data.items()], ignore_index=True)
    raise TypeError("savefig(data=...) takes a DataFrame or a dict of DataFrames (one per "
                    f"panel), got {type(data).__name__}")


def save_figure(fig, name: str, footer: str = "", data=None):
    """Write figures/<name>.png and figures/<name>.pdf (and figures/<name>.csv, the plotted
    numbers, when ``data`` is given: see :func:`figure_table`); return the PNG path."""
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
    """Draw the paper's finding on a redrawn figure as its shape: a grey dashed arrow across
    the panel, rising (``"up"``), falling (``"down"``) or level (``"flat"``), with ``text``
    ("paper: linear in H until saturation") beside it, in axes coordinates (``span``: where the
    arrow starts and ends along x), over the data."""
    x0, x1 = span
    y0, y1 = {"up": (0.18, 0.62), "down": (0.62, 0.18), "flat": (0.5, 0.5)}[direction]
    ax.annotate("", xy=(x1, y1), xytext=(x0, y0), xycoords="axes fraction",
                arrowprops=dict(arrowstyle="->", color="0.45", lw=1.2, ls="--"), zorder=5)
    ax.text(x0, max(y0, y1) + 0.06, text, transform=ax.transAxes, fontsize=8, color="0.3",
            zorder=5, bbox=dict(facecolor="white", edgecolor="none", alpha=0.7, pad=1))


def add_footer(fig, text: str) -> None:
    """Write ``text`` small under everything the figure draws (its axes' labels and tick
    labels, a legend below them), right-aligned, so that it never overlaps an axis label."""
    fig.canvas.draw()  # the layout as it will be saved
    box = fig.get_tightbbox(fig.canvas.get_renderer())  # inches
    width, height = fig.get_size_inches()
    fig.text(min(box.x1 / width, 1.0), box.y0 / height - 0.02 / height, text, ha="right",
             va="top", fontsize=7, color="0.45")


def smallest_text_pt(fig) -> float | None:
    """The smallest font size (points) of the text ``fig`` draws: every visible, non-empty
    Text artist (tick labels, axis labels, legend entries, titles, annotations, ``fig.text``).
    None when it draws no text."""
    from matplotlib.text import Text

    sizes = [t.get_fontsize() for t in fig.findobj(Text)
             if t.get_visible() and t.get_text().strip()]
    return min(sizes) if sizes else None


def phone_text_px(points: float, width_in: float, dpi: float = STYLE["figure.dpi"],
                  content_px: float = PHONE_CONTENT_PX) -> float:
    """How tall (CSS px) text of ``points`` is on a phone, in a figure ``width_in`` inches
    wide: the page shows the figure at ``width_in * dpi`` CSS px, narrowed to the content
    width (``content_px``, 342 px on a 390 px screen), so ``points * shown / (72 *
    width_in)``.

    >>> round(phone_text_px(8, 4), 1)  # a 4-inch figure with 8 pt text
    9.5
    >>> round(phone_text_px(7, 15), 1)  # four panels side by side, 7 pt legends
    2.2
    """
    shown = min(content_px, width_in * dpi)
    return points * shown / (72 * width_in)


def png_text_px(png) -> float | None:
    """The height of a PNG's smallest text in its own pixels, as recorded under
    :data:`TEXT_PX_KEY` in its text chunk (None when it records none)."""
    from PIL import Image

    with Image.open(png) as im:
        value = (getattr(im, "text", None) or im.info).get(TEXT_PX_KEY)
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None


def png_width_in(png) -> float:
    """The width in inches of a PNG saved at the style's ``savefig.dpi`` (its header's
    width in pixels over that dpi): the width the page shows it at, at ``figure.dpi``."""
    from pathlib import Path

    raw = Path(png).read_bytes()[:24]
    dpi = plt.rcParams["savefig.dpi"]
    dpi = STYLE["savefig.dpi"] if dpi == "figure" else float(dpi)
    return int.from_bytes(raw[16:20], "big") / dpi


def in_kernel() -> bool:
    """Whether this runs in a Jupyter kernel (a notebook), where outputs are displayed."""
    if "ipykernel" not in sys.modules:
        return False
    from IPython import get_ipython

    shell = get_ipython()
    return shell is not None and getattr(shell, "kernel", None) is not None


def figure_output(fig, png, info: dict) -> bool:
    """In a Jupyter kernel: show the saved PNG as the cell's output, carrying ``info`` (name,
    caption, claims, provenance) in its metadata under :data:`FIGURE_KEY`, and close ``fig`` so
    that the inline backend does not show it a second time. The book
    (:mod:`attnbook.book.figures`) turns that output into a numbered, captioned figure with its
    provenance. Outside a kernel it does nothing and returns False."""
    if not in_kernel():
        return False
    import base64

    from IPython.display import display

    raw = png.read_bytes()
    saved_dpi = plt.rcParams["savefig.dpi"]
    saved_dpi = fig.dpi if saved_dpi == "figure" else float(saved_dpi)
    width = round(int.from_bytes(raw[16:20], "big") * fig.dpi / saved_dpi)  # PNG header: IHDR
    bundle = {"image/png": base64.b64encode(raw).decode("ascii"),
              "text/plain": f"<figure {info.get('name', '')}: {info.get('caption', '')}>"}
    display(bundle, raw=True, metadata={FIGURE_KEY: info, "image/png": {"width": width}})
    plt.close(fig)
    return True


style()
