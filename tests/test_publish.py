"""What the book publishes: chapter addresses and the injected-parameters cell."""

import re

import nbformat

from attnbook import paths
from attnbook.book.publish import chapter_doc, publish_chapters, toc_order
from attnbook.book.runner import available_notebooks, hide_injected_parameters


def test_toc_lists_every_notebook_under_chapters_in_runner_order():
    toc = (paths.ROOT / "_toc.yml").read_text()
    stems = [p.stem for p in sorted(paths.NOTEBOOKS.glob("*.ipynb"))]
    for stem in stems:
        assert f"file: {chapter_doc(stem)}\n" in toc
    assert "build/executed" not in re.sub(r"#.*", "", toc), "chapters are not read from build/"
    assert sorted(toc_order()) == stems
    assert list(available_notebooks()) == toc_order()


def test_publish_links_executed_notebooks_and_drops_stale_ones(tmp_path):
    executed = tmp_path / "build" / "executed"
    executed.mkdir(parents=True)
    for stem in ("levine2020_lemma1", "mahdavi2024_fig3_saturation"):
        (executed / f"{stem}.ipynb").write_text("{}")
    links = publish_chapters(tmp_path, executed)
    assert [p.relative_to(tmp_path).as_posix() for p in links] == [
        "chapters/levine2020/levine2020_lemma1.ipynb",
        "chapters/mahdavi2024/mahdavi2024_fig3_saturation.ipynb"]
    assert all(p.is_symlink() and p.read_text() == "{}" for p in links)
    assert not links[0].readlink().is_absolute()  # the tree can move
    (executed / "mahdavi2024_fig3_saturation.ipynb").unlink()  # its last run failed
    assert publish_chapters(tmp_path, executed) == links[:1]
    assert not (tmp_path / "chapters" / "mahdavi2024").exists()
    assert publish_chapters(tmp_path, executed) == links[:1]  # idempotent


def test_injected_parameters_cell_is_tagged_remove_cell(tmp_path):
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("k = 3", metadata={"tags": ["parameters"]}),
                nbformat.v4.new_code_cell("# Parameters\nk = 1\n",
                                          metadata={"tags": ["injected-parameters"]}),
                nbformat.v4.new_code_cell("print(k)")]
    path = tmp_path / "nb.ipynb"
    nbformat.write(nb, path)
    hide_injected_parameters(path)
    hide_injected_parameters(path)  # twice: still one tag
    tags = [c.metadata.get("tags", []) for c in nbformat.read(path, as_version=4).cells]
    assert tags == [["parameters"], ["injected-parameters", "remove-cell"], []]
