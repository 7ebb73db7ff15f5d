"""attnbook: the library behind an executable companion book on what self-attention can express.

Every notebook of the book is a thin argument over this library::

    import attnbook as ab
    run = ab.start("levine2020_lemma1", profile=profile, seed=seed)
    ab.require(n < d, "n", n, f"n < d = {d}")
    ...
    run.record("L-Lem1", reproduced, "degree 3^L at 12/12 settings")
    ab.table(frame, units={"wall_s": "s"})   # a table as the book shows it
"""

__version__ = "0.1.0"

from .book.display import Table as table  # noqa: E402
from .book.notebook import Run, start  # noqa: E402
from .errors import AttnbookError, ParameterError, require  # noqa: E402
from .progress import progress_bar  # noqa: E402

__all__ = ["AttnbookError", "ParameterError", "Run", "progress_bar", "require", "start",
           "table", "__version__"]
