"""Progress bars (tqdm) for anything longer than a few seconds.

``progress_bar(iterable, desc=...)`` is a tqdm bar: a widget in Jupyter where ipywidgets is
installed, plain text otherwise (``tqdm.auto`` would first warn that the widget is missing, a
warning that then lands in every executed notebook). The HTML book leaves these bars out: it
drops stderr from the pages (``nb_output_stderr: remove`` in ``_config.yml``), and the runner
lists the warnings a notebook printed in its log and manifest instead.
"""

import importlib.util
from functools import cache

__all__ = ["progress_bar"]


@cache
def _bar():
    if importlib.util.find_spec("ipywidgets") is not None:
        from tqdm.auto import tqdm
    else:
        from tqdm.std import tqdm
    return tqdm


def progress_bar(iterable=None, **kwargs):
    """``tqdm(iterable, **kwargs)`` with the bar class chosen as above.

    >>> list(progress_bar(range(3), disable=True))
    [0, 1, 2]
    """
    return _bar()(iterable, **kwargs)
