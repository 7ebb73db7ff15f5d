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

__all__ = ["save_figure", "style"]

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


def save_figure(fig, name: str, footer: str = ""):
    """Write figures/<name>.png and figures/<name>.pdf; return the PNG path."""
    if footer:
        fig.text(0.995, 0.005, footer, ha="right", va="bottom", fontsize=7, color="0.45")
    paths.FIGURES.mkdir(parents=True, exist_ok=True)
    png = paths.FIGURES / f"{name}.png"
    fig.savefig(png, bbox_inches="tight")
    fig.savefig(paths.FIGURES / f"{name}.pdf", bbox_inches="tight")
    return png


style()
