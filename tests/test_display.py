"""What a reader sees under a cell (attnbook.book.display): tables with named columns and no
pandas index, a dash for a missing value; a verdict as a coloured admonition, a claim of
several parts with each part's value; the chapter's ledger, one block per claim; and, through
the runner and a kernel, that this is what an executed chapter holds and that the run log
says what was computed."""

import json

import numpy as np
import pandas as pd
from notebook_files import write_notebook

from attnbook.book import display
from attnbook.book.display import (
    DASH,
    LedgerView,
    combined_status,
    escape,
    install_formatters,
    shown_profiles,
    table_markdown,
    verdict_markdown,
)


def _rows(md: str) -> list[list[str]]:
    return [[c.strip() for c in line.strip("|").split("|")]
            for line in md.splitlines() if line.startswith("|")]


def test_a_default_index_is_dropped_and_a_named_one_becomes_columns():
    rows = _rows(table_markdown(pd.DataFrame({"a": [1, 2]})))
    assert rows[0] == ["a"] and [r[0] for r in rows[2:]] == ["1", "2"]
    named = pd.DataFrame({"y": [0.5, 0.25]}, index=pd.Index([4, 8], name="H"))
    assert _rows(table_markdown(named))[0] == ["H", "y"]
    multi = pd.DataFrame({"y": [1.0, 2.0]},
                         index=pd.MultiIndex.from_tuples([(False, 1), (True, 1)],
                                                         names=["residual", "L"]))
    rows = _rows(table_markdown(multi))
    assert rows[0] == ["residual", "L", "y"] and rows[2][:2] == ["no", "1"]


def test_missing_values_are_a_dash_with_a_note_and_columns_read_as_words():
    df = pd.DataFrame({"d_h": [1, 2], "wall_s": [0.5, np.nan], "note": ["ok", None],
                       "r": pd.array([pd.NA, 3], dtype="Int64")})
    md = table_markdown(df, missing="not measured at d_h = 2")
    rows = _rows(md)
    assert rows[0] == ["$d_h$", "wall (s)", "note", "r"]
    assert rows[3] == ["2", DASH, DASH, "3"] and rows[2][3] == DASH
    assert f"{DASH} not measured at d_h = 2" in md
    assert "nan" not in md.lower() and "None" not in md and "<NA>" not in md
    assert DASH not in table_markdown(pd.DataFrame({"a": [1.0]}))  # no gap, no note


def test_a_styler_keeps_its_number_formats_and_a_dict_becomes_a_table():
    df = pd.DataFrame({"x": [0.123456, np.nan], "flag": [True, False]})
    rows = _rows(table_markdown(df.style.format({"x": "{:.2f}"})))
    assert rows[2] == ["0.12", "yes"] and rows[3] == [DASH, "no"]
    nested = _rows(table_markdown({4: {"T": 58, "perfect": True}, 8: {"T": 171}}))
    assert nested[0][1:] == ["T", "perfect"] and nested[3] == ["8", "171", DASH]
    flat = _rows(table_markdown({"steps": 12000, "lr": 0.001}))
    assert flat[0] == ["quantity", "value"] and flat[2] == ["steps", "12,000"]


def test_markdown_special_characters_in_values_are_escaped():
    md = table_markdown(pd.DataFrame({"a": ["x|y", "3^L <= r_e"]}))
    assert "x\\|y" in md and "3\\^L \\<= r\\_e" in md
    assert escape("a  b\nc") == "a b c"


def test_the_table_rendering_replaces_pandas_html_in_a_shell():
    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell.instance()
    try:
        assert install_formatters(shell)
        data, _ = shell.display_formatter.format(pd.DataFrame({"a": [1]}))
        assert "text/html" not in data and data["text/markdown"].startswith("| a |")
        data, _ = shell.display_formatter.format({"T": 58})
        assert "| quantity | value |" in data["text/markdown"]
        data, _ = shell.display_formatter.format({object(): 1})  # not a table: left alone
        assert "text/markdown" not in data
    finally:
        InteractiveShell.clear_instance()


def test_a_verdict_is_a_coloured_admonition_with_each_part_and_the_paper():
    parts = [{"part": "H=4", "status": "not reproduced", "measured": "58 = 2.00 x H(n-1)+1"},
             {"part": "H=8", "status": "reproduced", "measured": "1295 = 5.20 x H(n-1)+1"}]
    md = verdict_markdown("M-F3", "full", parts, paper="H=8: T ~ 1300",
                          criterion="within a factor 1.25", source="Figure 3")
    first = md.splitlines()[0]
    assert first == "::::{admonition} M-F3 at full: partly reproduced (1 of 2 parts)"
    assert ":class: attnbook-verdict verdict-partly-reproduced" in md
    assert "{verdict}`reproduced <M-F3>` **H=8**: 1295 = 5.20 x H(n-1)+1" in md
    assert "**The paper** (Figure 3): $H=8$: T ~ 1300." in md
    assert "**Criterion** (holds for some parts and not for others): within a factor 1.25." in md
    one = verdict_markdown("X-1", "cpu", [{"part": None, "status": "not testable",
                                           "measured": "outside the regime"}])
    assert "verdict-not-testable" in one and "**Measured:** outside the regime." in one
    assert combined_status(["reproduced", "not testable"]) == "partly reproduced"
    assert combined_status(["not reproduced", "not testable"]) == "not reproduced"
    assert combined_status(["not run"]) == "not run"


def test_a_claim_not_testable_for_its_seeds_says_so_not_that_its_premise_failed():
    from attnbook.book.claims import seed_rule

    few = verdict_markdown("W-F5", "cpu", [{"part": None, "status": "not testable",
                                            "measured": f"{seed_rule([0, 1])} (on these the "
                                                        "criterion says not reproduced): x"}],
                           criterion="the two points agree")
    assert "**Criterion** (the run has fewer seeds than a verdict" in few
    assert "premise" not in few
    premise = verdict_markdown("W-T2", "cpu", [{"part": None, "status": "not testable",
                                                "measured": "no setting meets the premises"}],
                               criterion="rank at most the bound")
    assert "**Criterion** (its premise does not hold here" in premise
    both = verdict_markdown("X-2", "cpu", [
        {"part": "a", "status": "not testable", "measured": f"{seed_rule([0])}: x"},
        {"part": "b", "status": "not testable", "measured": "outside the regime"}],
        criterion="c")
    assert "for some parts the run has fewer seeds" in both and "premise does not hold" in both


def test_the_chapter_ledger_lists_each_profile_and_each_part():
    from attnbook.book.claims import status_table

    table = status_table(parts=True)
    table = table[table["profile"] != "ci"]  # as committed: ci results (a `make test`) left out
    view = LedgerView(table[table["id"].isin(["M-F3", "L-Lem1"])], ["L-Lem1", "M-F3"],
                      shown_profiles(table))
    md = view._repr_markdown_()
    assert md.index("**L-Lem1**") < md.index("**M-F3**")
    assert "- `cpu`: {verdict}`" in md and "- `ci`" not in md  # ci results are not committed
    assert "  - {verdict}`" in md and "**H=8**" in md  # M-F3's parts with their values
    assert "L-Lem1 [cpu]" in repr(view)


def test_an_executed_chapter_shows_verdicts_and_tables_rendered(sandbox):
    """Through the runner: the check cell's output is one admonition per claim (its plain
    text the verdict lines nbval compares), a DataFrame is a Markdown table, and the manifest
    and log say what the run computed and what it read from the cache."""
    from attnbook.book.runner import execute, plan

    write_notebook(
        sandbox / "notebooks" / "f_shows.ipynb",
        'profile = "ci"  # set by the runner\nseed = 0  # seed',
        "import attnbook as ab\nimport pandas as pd\n"
        "run = ab.start('f_shows', profile=profile, seed=seed)\n"
        "df = run.sweep('s').run(lambda c: {'y': c['x'] ** 2}, [{'x': 1}, {'x': 2}],"
        " progress=False)\ndf",
        "_ = run.record('M-F3', False, '58 = 2.00 x', part='H=4')\n"
        "_ = run.record('M-F3', True, '1295 = 5.20 x', part='H=8')\n"
        "_ = run.record('L-Lem1', True, 'degree 3^L')")
    (sandbox / "notebooks" / "f_shows.yml").write_text(
        "allowed:\n  seed: {min: 0, max: 1000000}\nprofiles:\n  ci: {}\n")
    build, logged = sandbox / "build", []
    jobs = plan(["f_shows"], "ci", notebooks_dir=sandbox / "notebooks")
    (entry,) = execute(jobs, build_dir=build, log=logged.append)
    assert entry["status"] == "ok", entry["error"]
    assert entry["work"] == {"computed": 2, "total": 2}
    assert any("ok in" in line and "computed 2 of 2 units" in line for line in logged)
    nb = json.loads((build / "executed" / "f_shows.ipynb").read_text())
    table_cell, check_cell = nb["cells"][-2], nb["cells"][-1]
    (out,) = [o for o in table_cell["outputs"] if o["output_type"] == "execute_result"]
    assert "text/html" not in out["data"] and "".join(out["data"]["text/markdown"]).startswith(
        "| x | y |")
    shown = [o for o in check_cell["outputs"] if o["output_type"] == "display_data"]
    assert len(shown) == 2 and not [o for o in check_cell["outputs"]
                                    if o["output_type"] == "stream"]
    md = "".join(shown[0]["data"]["text/markdown"])
    assert md.startswith("::::{admonition} M-F3 at ci: partly reproduced (1 of 2 parts)")
    assert "".join(shown[0]["data"]["text/plain"]).splitlines() == [
        "M-F3 / H=4 [ci] not reproduced: 58 = 2.00 x",
        "M-F3 / H=8 [ci] reproduced: 1295 = 5.20 x"]
    assert "verdict-reproduced" in "".join(shown[1]["data"]["text/markdown"])
    # again: everything comes from the cache
    logged.clear()
    (entry,) = execute(jobs, build_dir=build, log=logged.append)
    assert entry["work"] == {"computed": 0, "total": 2}
    assert any("ok in" in line and line.endswith("from cache") for line in logged)


def test_verdict_words_and_profiles():
    table = pd.DataFrame({"profile": ["ci", "cpu"], "status": ["not run", "reproduced"]})
    assert shown_profiles(table) == ["cpu", "long", "full"]
    table.loc[0, "status"] = "reproduced"
    assert shown_profiles(table) == ["ci", "cpu", "long", "full"]


def test_a_verdict_of_many_parts_shows_those_that_failed_and_folds_the_rest():
    parts = [{"part": f"cell {i}", "status": "not reproduced" if i == 3 else "reproduced",
              "measured": f"fraction 0.{i}"} for i in range(display.MANY_PARTS + 2)]
    md = verdict_markdown("M-T1tab", "cpu", parts)
    shown, folded = md.split(":::{dropdown}")
    assert "**cell 3**: fraction 0.3" in shown and "**cell 2**" not in shown
    assert f"All {len(parts)} parts" in folded and "**cell 2**: fraction 0.2" in folded
