"""Saved figures in the book (attnbook.book.figures) and the status page (attnbook.book.report):
the figure output a chapter's ``run.savefig`` leaves, what the book makes of it, the plotted
data beside it, the paper's formulas as math, the overview figure."""

import copy
import json
import re

import matplotlib.pyplot as plt
import pandas as pd
import pytest
from matplotlib.text import Text
from page_checks import parameter_differences

from attnbook import paths
from attnbook.book import display, figures, plotting, report
from attnbook.book.claims import status_table
from attnbook.book.figures import (
    GLUE_PREFIX,
    check_label,
    claim_label,
    provenance_markdown,
    rewrite_notebook,
)
from attnbook.book.notebook import start
from attnbook.book.text import paper_math
from attnbook.errors import AttnbookError

INFO = {"name": "demo_fig", "caption": "Demo: $x^2$ against $x$", "source": "demo", "claims":
        ["L-Lem1"], "notebook": "levine2020_lemma1", "profile": "ci",
        "profile_changes": {"max_depth": 3, "heads": [1, 2]}, "overrides": {},
        "run_id": "r1", "seed": 0, "commit": "abc123", "dirty": False,
        "device": "cpu: AMD EPYC (2 cores)", "computed_by": ["cuda: NVIDIA H100 80GB HBM3"],
        "computed_at": ["abc123"], "elapsed_s": 2.5, "data": "demo_fig.csv"}


def _notebook():
    fig_out = {"output_type": "display_data", "data": {"image/png": "iVBOR", "text/plain": "x"},
               "metadata": {plotting.FIGURE_KEY: INFO, "image/png": {"width": 500}}}
    return {"nbformat": 4, "nbformat_minor": 5,
            "metadata": {"papermill": {"parameters": {"profile": "ci"}}},
            "cells": [{"cell_type": "markdown", "id": "a", "metadata": {}, "source": "# T"},
                      {"cell_type": "code", "id": "b", "metadata": {}, "source": "plot()",
                       "outputs": [fig_out], "execution_count": 1},
                      {"cell_type": "code", "id": "c", "metadata": {}, "outputs": [],
                       "source": '# NBVAL_CHECK_OUTPUT\nrun.record("L-Lem1", True, "ok")\n'
                                 'run.record("L-Lem1", True, "ok", part="b")',
                       "execution_count": 2}]}


def test_the_book_turns_a_figure_output_into_a_captioned_labelled_figure(tmp_path):
    (tmp_path / "figures").mkdir()
    (tmp_path / "figures" / "demo_fig.csv").write_text("x,y\n1,1\n")
    nb, changed = rewrite_notebook(_notebook(), "levine2020_lemma1", run_walls={"r1": 12.5},
                                   root=tmp_path)
    assert changed
    kinds = [c["cell_type"] for c in nb["cells"]]
    assert kinds == ["markdown", "code", "markdown", "markdown", "code"]
    out = nb["cells"][1]["outputs"][0]  # glued, hidden where it stands
    assert set(out["data"]) == {GLUE_PREFIX + "image/png", GLUE_PREFIX + "text/plain"}
    assert out["metadata"]["scrapbook"] == {"name": "fig-demo_fig", "mime_prefix": GLUE_PREFIX}
    fig = nb["cells"][2]["source"]
    assert fig.startswith(":::{glue:figure} fig-demo_fig\n:name: fig-demo_fig\n")
    assert "Demo: $x^2$ against $x$" in fig
    for words in ("notebook `levine2020_lemma1`", "profile `ci`", "`max_depth = 3`",
                  "`heads = [1, 2]`", "commit `abc123`", "numbers computed on GPU (NVIDIA H100",
                  "drawn on CPU", "the whole run 12.5 s", "{claim}`L-Lem1@ci`",
                  "{download}`data </figures/demo_fig.csv>`"):
        assert words in fig, words
    check = nb["cells"][3]["source"]  # the claim check: labelled once, badge back to the row
    assert check.startswith(f"({check_label('levine2020_lemma1', 'L-Lem1')})=\n")
    assert check.count("{claim}`L-Lem1@ci`") == 1
    assert all(c.get("id") for c in nb["cells"])
    json.dumps(nb)  # still a notebook


def test_a_notebook_without_figures_or_claims_is_left_alone():
    nb = _notebook()
    nb["cells"] = nb["cells"][:1]
    assert rewrite_notebook(copy.deepcopy(nb), "x") == (nb, False)


def test_provenance_names_what_is_missing_and_what_was_changed():
    info = {**INFO, "overrides": {"steps": 10}, "dirty": True, "claims": [],
            "computed_by": ["cpu: AMD EPYC (2 cores)"]}
    text = provenance_markdown(info, data_exists=False)
    assert "changed by hand: `steps = 10`" in text
    assert "(with uncommitted changes)" in text
    assert "device CPU" in text and "computed on" not in text
    assert "{download}" not in text and "`figures/demo_fig.csv` is not in this build" in text
    assert "{claim}" not in text
    assert "the parameters cell as shown" in provenance_markdown({**INFO, "profile": "cpu",
                                                                  "profile_changes": {}})


def test_labels_and_badge_verdicts():
    assert claim_label("M-F2b") == "claim-m-f2b"
    assert check_label("wies2021_rank_bottleneck", "W-Tab2-5") == \
        "check-wies2021_rank_bottleneck-w-tab2-5"
    assert display.verdict_class("not reproduced") == "verdict-not-reproduced"
    assert figures.badge_status({"status": "reproduced", "stale": "attnbook.engines.lm"}) == "stale"
    assert figures.badge_status({"status": "not run", "stale": "x"}) == "not run"
    assert figures.badge_status({"status": "reproduced", "stale": ""}) == "reproduced"


def test_savefig_writes_the_plotted_data_and_checks_its_claims(tmp_path, monkeypatch):
    monkeypatch.setattr(paths, "FIGURES", tmp_path)
    run = start("doctest_example", profile="ci")
    frame = pd.DataFrame({"x": [1, 2], "y": [1, 4]})
    fig, _ = plt.subplots()
    shown = run.savefig(fig, "demo_one", source="demo", caption="A demo", claims=["L-Lem1"],
                        data=frame)
    assert shown is None  # nothing for a cell to print beside the figure
    assert (tmp_path / "demo_one.png").exists()
    assert (tmp_path / "demo_one.pdf").exists()
    assert pd.read_csv(tmp_path / "demo_one.csv").equals(frame)
    fig, _ = plt.subplots()
    run.savefig(fig, "demo_panels", data={"a": frame, "b": frame.assign(y=0)})
    panels = pd.read_csv(tmp_path / "demo_panels.csv")
    assert list(panels.columns) == ["panel", "x", "y"] and list(panels["panel"]) == list("aabb")
    fig, _ = plt.subplots()
    run.savefig(fig, "demo_plain", "demo")  # the signature before captions and claims
    assert not (tmp_path / "demo_plain.csv").exists()
    with pytest.raises(AttnbookError, match="unknown claim id"):
        run.savefig(fig, "demo_bad", claims=["NOT-A-CLAIM"])
    with pytest.raises(TypeError, match="DataFrame"):
        run.savefig(fig, "demo_bad", data=[1, 2])
    plt.close("all")


@pytest.mark.parametrize("text, math", [
    ("H >~ (d/r)^(1/eps)", "$H \\gtrsim (d/r)^{1/\\epsilon}$"),
    ("R^2 >= 0.98 on the non-saturated part", "$R^{2} \\ge 0.98$ on the non-saturated part"),
    ("rises for d_h <= n, flat beyond", "rises for $d_{h} \\le n$, flat beyond"),
    ("H(n-1)+1", "$H(n-1)+1$"),
    ("positional rank 16 on par with full", "positional rank 16 on par with full"),
    ("eq. (14): sep >= ((floor((r-H)/2), 3^(L-2)))",
     "eq. (14): $\\operatorname{sep} \\ge \\left(\\!\\!\\binom{\\lfloor (r-H)/2 \\rfloor}"
     "{3^{L-2}}\\!\\!\\right)$"),
    ("transition near d_x ~ V (V=500: d_x ~ 408)",
     "transition near $d_{x} \\sim V$ ($V=500$: $d_{x} \\sim 408$)"),  # ")" closes the words
    ("H=8: T ~ 1300 at n=32 (4.4 and 5.22 x H(n-1)+1)",
     "$H=8$: T ~ 1300 at $n=32$ (4.4 and $5.22 \\times H(n-1)+1$)"),
    ("22.78 ppl (ours) vs 21.11 (GPT-2 117M)", "22.78 ppl (ours) vs 21.11 (GPT-2 117M)"),
    ("-", "-"),
])
def test_paper_values_as_math(text, math):
    assert paper_math(text) == math


def test_every_paper_value_gives_balanced_math():
    for value in status_table(profile="ci")["paper_value"]:
        md = paper_math(value)
        assert md.count("$") % 2 == 0, md
        for span in md.split("$")[1::2]:
            assert span == span.strip() and span.count("{") == span.count("}"), md


def test_status_page_opens_with_the_overview_and_links_claims_to_their_checks(tmp_path):
    table = status_table()
    png = report.overview_figure(table, tmp_path / "overview.png")
    assert png.read_bytes()[:4] == b"\x89PNG"
    assert plotting.png_text_px(png) == pytest.approx(9 * 130 / 72, abs=0.1)  # 9 pt legend
    executed = tmp_path / "executed"
    executed.mkdir()
    (executed / "levine2020_lemma1.ipynb").write_text("{}")
    md = report.status_markdown(table, executed)
    head = md.split("\n## ")[0]
    assert head.index(":::{figure} overview.png") < head.index("| profile |")
    assert ":name: status-overview" in head
    assert "{claim-row}`L-Lem1`" in md and "{claim-row}`M-F3`" in md
    assert f"<{check_label('levine2020_lemma1', 'L-Lem1')}>" in md  # built: linked
    assert "<check-mahdavi2024_fig3_saturation-m-f3>" not in md  # not built: no dead link
    assert "{verdict}`" in md
    checks = report.claim_checks()
    assert checks["L-Lem1"][0][0] == "levine2020_lemma1"


def test_code_is_folded_under_its_outputs_except_what_a_reader_learns_from(tmp_path):
    """hide-input on plotting and setup cells; the parameters, the library's computations
    and the claim checks stay open; a chapter's own tag wins."""
    def cell(source, tags=()):
        return {"cell_type": "code", "metadata": {"tags": list(tags)} if tags else {},
                "source": source, "outputs": []}

    cells = [cell("profile = 'cpu'", ["parameters"]),
             cell("import attnbook as ab\nrun = ab.start('x')"),
             cell("table = run.cached('t', {}, f)\ntable.round(2)"),
             cell("runs = train_sweep(run.sweep('models'), configs)"),
             cell("fig, ax = plt.subplots()\nrun.savefig(fig, 'x')"),
             cell("glue('a', 1, display=False)", ["remove-input"]),
             cell("print(3)", ["show-input"]),
             cell('run.record("L-Lem1", True, "ok")')]
    nb = {"metadata": {}, "cells": cells}
    out, changed = rewrite_notebook(copy.deepcopy(nb), "levine2020_lemma1", root=tmp_path)
    code = [c for c in out["cells"] if c["cell_type"] == "code"]
    folded = ["hide-input" in c["metadata"].get("tags", []) for c in code]
    assert changed and folded == [False, True, False, False, True, False, False, False]
    assert code[5]["metadata"]["tags"] == ["remove-input"]


def test_figure_images_take_their_caption_as_alt_text():
    from docutils import nodes

    figure = nodes.figure()
    figure += nodes.image(uri="a/b.png", alt="a/b.png")
    caption = nodes.caption()
    caption += nodes.Text("Accuracy against ")
    caption += nodes.math(text="d_h")
    figure += caption
    doctree = nodes.document(None, None)
    doctree += figure
    figures._alt_from_caption(None, doctree, "x")
    assert next(iter(doctree.findall(nodes.image)))["alt"] == "Accuracy against d_h"


def test_home_summary_counts_verdicts_and_links_strong_and_failed_claims():
    table = status_table(parts=True)
    table = table[table["profile"] != "ci"]  # as published: ci results (a `make test`) left out
    md = report.summary_markdown(table)
    assert md.startswith(":::{figure} ../status/overview.png\n:name: home-overview")
    assert "| profile | effects (claims per verdict) |" in md and "| `ci` |" not in md
    failed = md.split("**What did not reproduce**")[1].split("**What this book")[0]
    assert re.search(r"\{claim\}`M-F2a@cpu`", failed)  # not reproduced at cpu, 3 seeds
    strong = md.split("**The papers' findings that reproduced**")[1].split("**What")[0]
    assert "{claim}`M-F1@full` mahdavi2024, Figure 1" in strong
    # a claim reproduced in part is listed apart, with the part that reproduced and its value
    assert "B-ZB" not in strong
    partial = md.split("**What reproduced in part**")[1].split("**What did not")[0]
    assert re.search(r"\{claim\}`B-ZB@full` Bruna talk .*; at `full` part power-sum basis "
                     r"reproduced: power sums", partial)
    assert "**Where each profile ran**" in md
    untestable = md.split("**What this book's runs could not test**")[1]
    assert "{claim}`W-F1@cpu`" in untestable  # a premise the cpu scale does not meet
    assert re.search(r"\{claim\}`M-F3@full` .*; at `full` part H=8 reproduced: largest T", partial)
    assert re.search(r"\{claim\}`M-F3@cpu`", failed)  # 3 seeds: decided


def test_execution_report_says_where_and_how_long_each_stored_result_was_computed(tmp_path):
    from attnbook.book.store import ResultStore, stored_counts

    root = tmp_path / "results"
    store = ResultStore("levine2020_lemma1", "full", root=root,
                        provenance={"commit": "abc", "device": "cuda: NVIDIA H100 80GB HBM3",
                                    "run_id": "r1"})
    store.put("s", {"x": 1}, {"y": 1}, wall_s=100.0)
    store.put("s", {"x": 2}, {"y": 4}, wall_s=100.0)  # one group of two: counted once
    store.put("s", {"x": 3}, {"y": 9}, wall_s=20.0)
    info = report.stored_provenance(root)[("levine2020_lemma1", "full")]
    assert info["results"] == 3 and info["devices"] == ["GPU (NVIDIA H100 80GB HBM3)"]
    assert info["commits"] == ["abc"] and info["compute_s"] == 120.0
    manifest = tmp_path / "manifest.jsonl"
    manifest.write_text(json.dumps({"notebook": "levine2020_lemma1", "profile": "full",
                                    "status": "ok", "wall_s": 9.1, "device": "cpu",
                                    "commit": "def", "start": "s", "overrides": {},
                                    "work": {"computed": 0, "total": 3}}) + "\n")
    page = report.execution_markdown(manifest, provenance=report.stored_provenance(root))
    row = next(line for line in page.splitlines() if "`full`" in line and "3 results" in line)
    assert "NVIDIA H100 80GB HBM3" in row and "`abc`" in row and "compute time 2.0 min" in row
    assert row.endswith("| ok in 9.1 s, from cache |")
    assert "| ok (from cache) | 9.1 |" in page
    assert report.work_text({"computed": 12, "total": 36}) == "computed 12 of 36 units"
    # one walk of the results feeds the status page's counts and the report's stale column
    sorted((root / "levine2020_lemma1" / "full").rglob("*.json"))[0].write_text("{")
    stored = report.stored_provenance(root)
    assert report.current_counts(stored) == {("levine2020_lemma1", "full"): 2}
    assert stored_counts(root) == {("levine2020_lemma1", "full"): 2}
    assert stored[("levine2020_lemma1", "full")]["changed"] == ["damaged result"]
    assert "results **stale** (changed: damaged result)" in report.execution_markdown(
        manifest, provenance=stored)


def test_the_paper_trend_and_the_source_stamp_sit_where_they_do_not_hide_data():
    fig, ax = plt.subplots(figsize=(4, 3))
    ax.plot([1, 2, 3], [0.1, 0.5, 0.9])
    ax.set_xlabel("heads $H$")
    plotting.paper_trend(ax, "paper: linear in H", "up")
    assert any(t.get_text() == "paper: linear in H" for t in ax.texts)
    plotting.add_footer(fig, "stamp · profile cpu")
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    stamp = next(t for t in fig.texts if t.get_text() == "stamp · profile cpu")
    label = ax.xaxis.label.get_window_extent(renderer)
    assert stamp.get_window_extent(renderer).y1 <= label.y0 + 1  # below the axis label
    plt.close(fig)


def test_the_page_shows_the_parameters_the_run_had_and_no_harness_comment(tmp_path):
    nb = _notebook()
    nb["metadata"]["papermill"]["parameters"] = {"profile": "long", "d": 64, "H": 4}
    nb["cells"].insert(1, {"cell_type": "code", "id": "p", "metadata": {"tags": ["parameters"]},
                           "outputs": [], "execution_count": 0,
                           "source": 'profile = "cpu"  # set by the runner\n'
                                     "d = 16  # width d\nH = 4  # heads H"})
    out, _ = rewrite_notebook(nb, "levine2020_lemma1", root=tmp_path)
    params = next(c for c in out["cells"] if c.get("id") == "p")["source"]
    assert params.splitlines() == [
        "profile = 'long'  # set by the runner [long; the notebook's default: \"cpu\"]",
        "d = 64  # width d [long; the notebook's default: 16]", "H = 4  # heads H"]
    check = next(c for c in out["cells"] if c.get("id") == "c")["source"]
    assert "NBVAL_" not in check and check.startswith('run.record("L-Lem1", True, "ok")')
    assert "NBVAL_CHECK_OUTPUT" in nb["cells"][3]["source"]  # the notebook itself keeps it


def test_parameter_differences_name_each_value_the_page_gets_wrong():
    """What the browser test reports for a chapter's parameters cell: the cell as the page
    shows it against the values of the run (the notebook's defaults with the profile's
    changes)."""
    expected = {"profile": "long", "d": 64, "H": 4, "flush": True, "T": [1.0, 4.0]}
    shown = ("profile = 'long'  # [long; the notebook's default: \"cpu\"]\n"
             "d = 64  # width [long; the notebook's default: 16]\nH = 4\nflush = True\n"
             "T = [1, 4]")
    assert parameter_differences(shown, expected) == []  # 1 and 1.0: the same
    # the page shows the notebook's cpu defaults beside results at long
    defaults = "profile = 'cpu'\nd = 16\nH = 4\nflush = 1\nT = [1.0, 4.0]\nextra = 2"
    assert parameter_differences(defaults, expected) == [
        "profile = 'cpu' is shown; the run had profile = 'long'",
        "d = 16 is shown; the run had d = 64",
        "flush = 1 is shown; the run had flush = True",
        "extra = 2 is shown but is not a parameter of the run"]
    assert parameter_differences("d = 64", {"d": 64, "H": 4}) == [
        "H is not shown (the run had H = 4)"]
    assert "does not parse" in parameter_differences("d = (", {"d": 1})[0]


@pytest.mark.parametrize("stem", sorted(p.stem for p in paths.NOTEBOOKS.glob("*.ipynb")))
def test_every_chapter_page_shows_its_profiles_values(stem, tmp_path):
    """At each profile a chapter defines, the parameters cell its page shows (the notebook's
    cell rewritten with the values papermill injected) holds the profile's effective values:
    the notebook's defaults with the profile's changes from its .yml."""
    import nbformat

    from attnbook.book.profiles import PROFILES, load_spec

    nb_path = paths.NOTEBOOKS / f"{stem}.ipynb"
    spec = load_spec(nb_path)
    cell = next(c for c in nbformat.read(nb_path, as_version=4).cells
                if "parameters" in c.metadata.get("tags", []))
    for profile in (p for p in PROFILES if spec.has_profile(p)):
        nb = {"metadata": {"papermill": {"parameters": spec.parameters(profile)}},
              "cells": [{"cell_type": "code", "id": "p", "metadata": {"tags": ["parameters"]},
                         "outputs": [], "source": cell.source}]}
        out, _ = rewrite_notebook(nb, stem, root=tmp_path)
        shown = next(c for c in out["cells"] if c.get("id") == "p")["source"]
        assert parameter_differences(shown, spec.effective(profile)) == [], \
            f"{stem} at {profile}:\n{shown}"


def test_a_cell_that_computes_and_draws_shows_only_its_computing_lines(tmp_path):
    """A pilot cell (its units, the profiles that have run, then the plotting) is split on the
    page: the computing statements open, the plotting folded with the cell's outputs."""
    source = ("p = ap.units(run, pilot, lambda sweep: sweep.run(f, configs), unit='nets')\n"
              "stats = summarise(p.runs)\n"
              "profiles = ap.across(run, 'lm', read)\n"
              "fig, ax = plt.subplots()\nax.plot(stats)\nrun.savefig(fig, 'x_pilot')")
    out = {"output_type": "display_data", "data": {"image/png": "iVBOR"},
           "metadata": {plotting.FIGURE_KEY: {**INFO, "name": "x_pilot"}}}
    nb = {"metadata": {}, "cells": [{"cell_type": "code", "id": "p", "metadata": {},
                                     "source": source, "outputs": [out]}]}
    rewritten, changed = rewrite_notebook(copy.deepcopy(nb), "levine2020_lemma1", root=tmp_path)
    code = [c for c in rewritten["cells"] if c["cell_type"] == "code"]
    assert changed and len(code) == 2
    assert "hide-input" not in code[0]["metadata"].get("tags", []) and not code[0]["outputs"]
    assert "ap.units(" in code[0]["source"] and "ap.across(" in code[0]["source"]
    assert "plt." not in code[0]["source"] and "stats" not in code[0]["source"]
    assert "hide-input" in code[1]["metadata"]["tags"] and code[1]["outputs"]
    assert code[1]["source"].startswith("stats = summarise(p.runs)")
    assert figures.split_computing("t = run.cached('t', {}, f)\nt.round(2)") is None
    tagged = copy.deepcopy(nb)
    tagged["cells"][0]["metadata"]["tags"] = ["show-input"]  # a chapter's own choice wins
    assert len(rewrite_notebook(tagged, "levine2020_lemma1", root=tmp_path)[0]["cells"]) == 2


def test_no_chapter_shows_plotting_code_unfolded(tmp_path):
    """In every chapter as the book shows it, the code left open draws nothing: plotting is
    folded, and a cell that computes and draws shows only its computing lines."""
    for path in sorted((paths.ROOT / "notebooks").glob("*.ipynb")):
        nb, _ = rewrite_notebook(json.loads(path.read_text()), path.stem, root=tmp_path)
        for cell in nb["cells"]:
            tags = set(cell.get("metadata", {}).get("tags", []))
            if cell["cell_type"] != "code" or tags & {"hide-input", "remove-input",
                                                      "remove-cell", "hide-cell"}:
                continue
            code = "".join(cell["source"])
            assert not figures._DRAWS.search(code), f"{path.name}: open code draws:\n{code}"


def test_a_long_table_is_folded_under_its_summary():
    """A per-seed table of 36 rows shows a line saying what it holds, its rows in a dropdown;
    a short table shows as it is."""
    from attnbook.book import display

    long = pd.DataFrame({"seed": range(36), "gain": [0.5] * 36})
    text = display.table_markdown(long)
    head, _, folded = text.partition(":::{dropdown} All 36 rows\n")
    assert head.startswith("*A table of 36 rows (seed, gain)") and "|" not in head
    assert folded.rstrip().endswith(":::") and folded.count("| 0.5 |\n") == 36
    short = display.table_markdown(long.head(display.FOLD_ROWS))
    assert "dropdown" not in short and short.startswith("| seed | gain |")


def test_savefig_measures_the_smallest_text_a_phone_shows(tmp_path, monkeypatch):
    """A 4-inch figure with 8 pt text: 8 * 342 / (72 * 4) = 9.5 px on a 390 px phone; every
    Text artist counts (a 6 pt legend wins over 10 pt tick labels), the source footer not."""
    assert round(plotting.phone_text_px(8, 4), 1) == 9.5
    assert plotting.phone_text_px(8, 2) == pytest.approx(8 * 110 / 72)  # narrower than the phone
    fig = plt.figure(figsize=(4, 3))
    fig.text(0.0, 0.5, "eight points", fontsize=8)  # from edge to edge: the PNG is 4 in wide
    fig.text(1.0, 0.5, "to the edge", fontsize=8, ha="right")
    fig.text(0.1, 0.2, "", fontsize=3)  # empty: not drawn
    assert plotting.smallest_text_pt(fig) == 8
    monkeypatch.setattr(paths, "FIGURES", tmp_path)
    shown = []
    monkeypatch.setattr(plotting, "figure_output", lambda fig, png, info: shown.append(info))
    run = start("doctest_example", profile="ci")
    run.savefig(fig, "demo_known", source="demo")
    width = plotting.png_width_in(tmp_path / "demo_known.png")
    assert shown[-1]["png"] == "demo_known.png"
    assert width == pytest.approx(4.2, abs=0.05)  # 0.1 in of padding each side
    assert shown[-1]["phone_text_px"] == round(plotting.phone_text_px(8, width), 1) == 9.0
    assert shown[-1]["phone_content_px"] == plotting.PHONE_CONTENT_PX  # the width it assumes
    fig, ax = plt.subplots(figsize=(6, 3))
    ax.plot([1, 2], [1, 2], label="a line")
    ax.legend(fontsize=6)
    run.savefig(fig, "demo_legend", source="demo")
    assert shown[-1]["phone_text_px"] == round(plotting.phone_text_px(
        6, plotting.png_width_in(tmp_path / "demo_legend.png")), 1)
    plt.close("all")


def _crowded(ax):
    """Figure 2.5 as it was: the curve's last points close together, each labelled 14 pt to
    its right, where the labels print over each other."""
    points = {"r=16": (2.2e5, 2.040), "r=96 (control)": (2.5e5, 2.049), "r=32": (2.3e5, 2.045)}
    ax.plot(*zip(*points.values(), strict=True), "s-")
    ax.plot([2.5e4, 2.4e5], [2.39, 1.99], "o-")
    ax.set(xscale="log", xlabel="parameters (all)", ylabel="test loss")
    return points


def test_savefig_records_the_labels_that_print_over_each_other(tmp_path, monkeypatch):
    """Three labels stacked where their points lie close together print over each other:
    savefig records each pair (the browser test reports them); spread apart by
    ``spread_labels``, in a column right of the points, none does. The same text twice in one
    place prints as one, and a tick label whose tick lies outside the axis' view is not drawn:
    neither counts."""
    monkeypatch.setattr(paths, "FIGURES", tmp_path)
    shown = []
    monkeypatch.setattr(plotting, "figure_output", lambda fig, png, info: shown.append(info))
    run = start("doctest_example", profile="ci")
    fig, ax = plt.subplots(figsize=(6.4, 4))
    for text, xy in _crowded(ax).items():
        ax.annotate(text, xy, xytext=(14, 0), textcoords="offset points", fontsize=8)
    fig.tight_layout()
    run.savefig(fig, "demo_crowded", source="demo")
    assert sorted(map(sorted, shown[-1]["overlapping_labels"])) == [
        ["r=16", "r=32"], ["r=16", "r=96 (control)"], ["r=32", "r=96 (control)"]]

    fig, ax = plt.subplots(figsize=(6.4, 4))
    points = _crowded(ax)
    fig.tight_layout()
    notes = plotting.spread_labels(ax, list(points.values()), list(points), column=True)
    run.savefig(fig, "demo_spread", source="demo")
    assert shown[-1]["overlapping_labels"] == []
    renderer = fig.canvas.get_renderer()
    assert len({round(Text.get_window_extent(n, renderer).x0) for n in notes}) == 1  # a column
    heights = [Text.get_window_extent(n, renderer).y0 for n in notes]
    assert [n.get_text() for _, n in sorted(zip(heights, notes, strict=True))] == [
        "r=16", "r=32", "r=96 (control)"]  # in the order of their points

    fig, ax = plt.subplots(figsize=(4, 3))
    ax.plot([1, 2], [1, 2])
    ax.text(1.5, 1.5, "cpu"), ax.text(1.5, 1.5, "cpu")  # two curves' points that coincide
    ax.set_xticks([0.85, 0.95], ["out of view", "in view"])
    ax.set_xlim(0.9, 2.1)  # the tick at 0.85 lies outside: its label is not drawn
    assert plotting.overlapping_labels(fig) == []
    ax.set_xlim(0.8, 2.1)
    assert plotting.overlapping_labels(fig) == [("out of view", "in view")]
    ax.text(1.52, 1.5, "long")
    assert sorted(plotting.overlapping_labels(fig)) == [("cpu", "long"), ("cpu", "long"),
                                                        ("out of view", "in view")]
    plt.close("all")


def test_a_figure_too_small_for_a_phone_links_to_its_full_size_png(tmp_path):
    """Under 9 px: the figure gets the class attnbook-small-text and its legend a link to the
    PNG; at 9 px or more, neither."""
    (tmp_path / "figures").mkdir()
    (tmp_path / "figures" / "demo_fig.png").write_bytes(b"png")
    for px, small in ((4.3, True), (9.9, False), (None, False)):
        nb = _notebook()
        nb["cells"][1]["outputs"][0]["metadata"][plotting.FIGURE_KEY] = {
            **INFO, "png": "demo_fig.png", "phone_text_px": px}
        out, _ = rewrite_notebook(nb, "levine2020_lemma1", root=tmp_path)
        md = next(c["source"] for c in out["cells"] if "glue:figure" in c.get("source", ""))
        assert (figures.SMALL_TEXT_CLASS in md) is small
        assert ("{download}`open it full size </figures/demo_fig.png>`" in md) is small


def test_the_image_of_a_small_text_figure_is_a_link_to_the_png():
    from docutils import nodes
    from sphinx import addnodes

    def page(classes):
        figure = nodes.figure(classes=classes)
        figure += nodes.image(uri="jupyter_execute/x.png")
        legend = nodes.legend()
        legend += addnodes.download_reference("", "", reftarget="/figures/x.png",
                                              filename="0abc/x.png")
        figure += legend
        doc = nodes.document(None, None)
        doc += figure
        return doc

    class App:
        class builder:
            @staticmethod
            def get_target_uri(docname):
                return docname + ".html"

    doc = page(["attnbook-figure", figures.SMALL_TEXT_CLASS])
    figures._link_small_figures(App, doc, "chapters/levine2020/lemma1")
    image = next(iter(doc.findall(nodes.image)))
    assert isinstance(image.parent, nodes.reference)
    assert image.parent["refuri"] == "../../_downloads/0abc/x.png"
    doc = page(["attnbook-figure"])
    figures._link_small_figures(App, doc, "chapters/levine2020/lemma1")
    assert not isinstance(next(iter(doc.findall(nodes.image))).parent, nodes.reference)
