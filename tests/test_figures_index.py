"""figures/README.md names every figure a notebook saves, and the notebook that saves it."""

import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_every_saved_figure_is_indexed_with_its_notebook():
    index = (ROOT / "figures" / "README.md").read_text()
    saved = {}
    for nb in sorted((ROOT / "notebooks").glob("*.ipynb")):
        code = "\n".join("".join(c["source"]) for c in json.loads(nb.read_text())["cells"]
                          if c["cell_type"] == "code")
        calls = re.findall(r'savefig\(\s*\w+,\s*"([A-Za-z0-9_]+)"', code)  # calls may span lines
        assert code.count("savefig(") == len(calls), f"{nb.name}: a savefig call not understood"
        for name in calls:
            saved[name] = nb.name
    assert saved, "no notebook saves a figure"
    for name, nb in saved.items():
        row = next((line for line in index.splitlines() if f"`{name}`" in line), None)
        assert row is not None, f"figures/README.md lacks {name} (saved by {nb})"
        assert nb in row, f"figures/README.md: {name} is saved by {nb}"
