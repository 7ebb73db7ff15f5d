"""Writing small chapters for the runner's tests (on pytest's path via ``pythonpath`` in
pyproject.toml)."""

from pathlib import Path

import nbformat


def write_notebook(path: Path, parameters: str, *cells: str) -> Path:
    """A Python 3 notebook at ``path``: a cell tagged ``parameters``, then one code cell per
    source in ``cells``."""
    nb = nbformat.v4.new_notebook(metadata={"kernelspec": {
        "name": "python3", "display_name": "Python 3", "language": "python"}})
    params = nbformat.v4.new_code_cell(parameters)
    params.metadata["tags"] = ["parameters"]
    nb.cells = [params, *(nbformat.v4.new_code_cell(c) for c in cells)]
    nbformat.write(nb, path)
    return path
