"""attnbook: the library behind an executable companion book on what self-attention can express.

Every notebook of the book is a thin argument over this library::

    import attnbook as ab
    run = ab.start("levine2020_lemma1", profile=profile, seed=seed)
    ab.require(max(widths) <= V, "V", V, "V >= every width")  # of what the kernel computed
    ...
    run.record("L-Lem1", reproduced, "degree 3^L at 12/12 settings")
    ab.table(frame, units={"wall_s": "s"})   # a table as the book shows it
"""

__version__ = "0.1.0"

from .errors import AttnbookError, ParameterError, require  # noqa: E402

# imported when first used: `python -m attnbook` starts (and takes Ctrl-C as one line) without
# waiting for torch, which a notebook's `ab.start` loads
_LAZY = {"table": ("book.display", "Table"), "Run": ("book.notebook", "Run"),
         "start": ("book.notebook", "start"), "progress_bar": ("progress", "progress_bar")}


def __getattr__(name):
    if name in _LAZY:
        import importlib

        module, attr = _LAZY[name]
        value = getattr(importlib.import_module(f"{__name__}.{module}"), attr)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

__all__ = ["AttnbookError", "ParameterError", "Run", "progress_bar", "require", "start",
           "table", "__version__"]
