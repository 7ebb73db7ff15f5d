"""The claims ledger: every id is listed, nothing passes by default, parts aggregate."""

import json
import re

import pytest

from attnbook.book import claims
from attnbook.book.cli import main
from attnbook.errors import AttnbookError

MAP_IDS = {  # every item id of the reproduction map must have a ledger row
    "L-Lem1", "L-T1", "L-C3", "L-T3", "L-D", "L-Tab2",
    "W-T1", "W-T2", "W-F1", "W-F2", "W-F3", "W-F4", "W-F5", "W-F6", "W-F7", "W-Tab1", "W-Tab2-5",
    "B-NN", "B-FR", "B-LB", "B-MV", "B-ZB",
    "M-T1", "M-P2", "M-P3", "M-P4", "M-P5", "M-R1", "M-F2a", "M-F2b", "M-F2c", "M-F3", "M-F4",
    "M-F5", "M-F1", "M-T1tab", "M-T3tab",
}


def test_ledger_lists_every_item_once_with_paper_value_and_criterion():
    ledger = claims.load_ledger()
    assert set(ledger["id"]) == MAP_IDS
    assert set(ledger["type"]) == set(claims.TYPES)  # every claim is an effect or a check
    assert (ledger["criterion"].str.len() > 10).all()
    assert set(ledger["work"]) == {"levine2020", "wies2021", "bruna2024", "mahdavi2024"}


def test_untouched_claims_are_not_run_or_have_no_chapter(sandbox):
    table = claims.status_table(claims_dir=sandbox / "data/claims")
    assert len(table) == len(MAP_IDS) * len(claims.PROFILES)
    checked = claims.chapter_claims()
    assert set(table.loc[table["id"].isin(checked), "status"]) == {"not run"}
    assert set(table.loc[~table["id"].isin(checked), "status"]) <= {"no chapter yet"}


def test_no_chapter_yet_is_told_apart_from_not_run(sandbox, tmp_path):
    cell = {"cell_type": "code", "source": ["_ = run.record(\n", '    "M-T1", True, "x")']}
    (tmp_path / "ch.ipynb").write_text(json.dumps({"cells": [cell]}))
    table = claims.status_table("cpu", claims_dir=sandbox / "data/claims",
                                notebooks_dir=tmp_path).set_index("id")
    assert claims.chapter_claims(tmp_path) == {"M-T1"}
    assert table.loc["M-T1", "status"] == "not run"
    assert (table.drop(index="M-T1")["status"] == "no chapter yet").all()


def test_record_sets_only_that_claim_and_profile(sandbox):
    d = sandbox / "data/claims"
    claims.record("M-T1", False, "rank 5 < 7", profile="cpu", notebook="x", run={}, claims_dir=d)
    t = claims.status_table(claims_dir=d).set_index(["id", "profile"])
    assert t.loc[("M-T1", "cpu"), "status"] == "not reproduced"
    assert t.loc[("M-T1", "cpu"), "measured"] == "rank 5 < 7"
    assert t.loc[("M-T1", "ci"), "status"] == "not run"
    assert t.drop(index=("M-T1", "cpu"))["status"].isin(["not run", "no chapter yet"]).all()


def test_parts_aggregate_to_reproduced_only_when_all_are(sandbox):
    d = sandbox / "data/claims"
    kw = dict(profile="ci", notebook="x", run={}, claims_dir=d)
    claims.record("M-T3tab", True, "ok", part="GPT-2 random L0", **kw)
    assert claims.status_table("ci", claims_dir=d).set_index("id").loc["M-T3tab", "status"] \
        == "reproduced"
    claims.record("M-T3tab", None, "weights unavailable offline", part="GPT-2 trained L1", **kw)

    def whole():
        t = claims.status_table("ci", parts=True, claims_dir=d)
        return t[(t["id"] == "M-T3tab") & t["part"].isna()].iloc[0]

    assert whole()["status"] == "partly run"
    assert whole()["measured"] == "1 of 2 parts reproduced, 1 not run"
    claims.record("M-T3tab", False, "fraction 0.7", part="BERT trained L1", **kw)
    # some parts reproduced, one did not: partly reproduced, neither a reproduction nor a failure
    assert whole()["status"] == "partly reproduced"
    assert whole()["measured"] == "1 of 3 parts reproduced, 1 not reproduced, 1 not run"
    claims.record("M-T3tab", False, "fraction 0.9", part="GPT-2 random L0", **kw)
    assert whole()["status"] == "not reproduced"  # no part reproduced
    t = claims.status_table("ci", parts=True, claims_dir=d)
    assert len(t[(t["id"] == "M-T3tab") & t["part"].notna()]) == 3


def test_unknown_claim_and_bad_verdict_are_errors(sandbox):
    d = sandbox / "data/claims"
    with pytest.raises(AttnbookError, match="unknown claim id 'X-1'"):
        claims.record("X-1", True, "", profile="ci", notebook="x", run={}, claims_dir=d)
    with pytest.raises(AttnbookError, match="reproduced must be True, False, None or 'not "):
        claims.record("M-T1", "yes", "", profile="ci", notebook="x", run={}, claims_dir=d)


def test_cli_claims_json(capsys):
    assert main(["claims", "--profile", "full", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert {r["id"] for r in rows} == MAP_IDS
    assert {r["status"] for r in rows} <= set(claims.STATUSES)
    assert {"paper_value", "measured", "notebook", "commit", "profile"} <= set(rows[0])


def test_status_page_lists_every_claim_with_its_verdict_per_profile(sandbox, tmp_path):
    from attnbook.book.report import execution_markdown, status_markdown

    d = sandbox / "data/claims"
    claims.record("B-FR", True, "error 3e-9 at c = 64", profile="cpu", notebook="nb", run={},
                  claims_dir=d)
    page = status_markdown(claims.status_table(claims_dir=d), tmp_path)
    for cid in MAP_IDS:
        assert f"**{cid}**" in page
    row = next(line for line in page.splitlines() if line.startswith("| {claim-row}`B-FR`"))
    assert row.count("{verdict}`not run`") == 2  # long, full: ci, never run, is left out
    assert "| claim | paper | `cpu` | `long` | `full` |" in page
    assert "{verdict}`reproduced` error 3e-9 at c = 64" in row
    ledger = claims.load_ledger().set_index("id")
    assert ledger.loc["B-FR", "type"] == "consistency" and "{claim-row}`B-FR` *consistency*" in row
    ids = {t: set(ledger.index[ledger["type"] == t]) for t in claims.TYPES}
    unchecked = {t: len(ids[t] - claims.chapter_claims()) for t in claims.TYPES}
    n_eff, n_con = len(ids["effect"]), len(ids["consistency"])
    assert claims.STATUSES[:5] == ("reproduced", "fragile", "not reproduced", "not testable",
                                   "partly run")
    effects = f"{{verdict}}`not run` {n_eff - unchecked['effect']}" + (
        f" · {{verdict}}`no chapter yet` {unchecked['effect']}" if unchecked["effect"] else "")
    checks = (f"{{verdict}}`reproduced` 1 · {{verdict}}`not run` "
              f"{n_con - 1 - unchecked['consistency']}")
    counts = next(line for line in page.splitlines() if line.startswith("| `cpu` | "))
    assert f"{effects} | " in counts and counts.endswith(f"{checks} |")
    # a ci result brings the ci column back
    claims.record("B-FR", True, "error 1e-8", profile="ci", notebook="nb", run={}, claims_dir=d)
    page = status_markdown(claims.status_table(claims_dir=d), tmp_path)
    assert "| claim | paper | `ci` | `cpu` | `long` | `full` |" in page
    assert "No notebook has been run yet" in execution_markdown(tmp_path / "none.jsonl")


def test_an_unchanged_verdict_keeps_the_run_that_established_it(sandbox):
    d = sandbox / "data/claims"
    kw = dict(profile="cpu", notebook="nb", claims_dir=d)
    claims.record("B-FR", True, "error 1e-9", run={"run_id": "first"}, **kw)
    kept = claims.record("B-FR", True, "error 1e-9", run={"run_id": "redraw"}, **kw)
    assert kept["run"]["run_id"] == "first"
    changed = claims.record("B-FR", False, "error 1e-3", run={"run_id": "third"}, **kw)
    assert changed["run"]["run_id"] == "third"
    saved = json.loads((d / "results/cpu/B-FR.json").read_text())
    assert saved["run"]["run_id"] == "third" and saved["status"] == "not reproduced"


def test_an_entry_decided_by_a_criterion_changed_since_is_stale(sandbox):
    d = sandbox / "data/claims"
    entry = claims.record("M-F2b", True, "drop 0.004", profile="cpu", notebook="nb", run={},
                          claims_dir=d)
    assert entry["criterion"] == claims.criterion_sha("M-F2b", d)
    assert claims.CRITERION_CHANGED not in claims.stale_modules(entry, d)
    _change_m_f2b_criterion(d)
    assert claims.CRITERION_CHANGED in claims.stale_modules(entry, d)
    row = claims.status_table("cpu", claims_dir=d).set_index("id").loc["M-F2b"]
    assert claims.CRITERION_CHANGED in row["stale"]


def test_an_entry_whose_criterion_helper_changed_since_is_stale(sandbox, monkeypatch):
    """M-F2b's criterion calls the package's trend helpers: an entry it decided goes stale when
    one of them changes (not only when its own function or its ledger row does)."""
    from attnbook import criteria

    d = sandbox / "data/claims"
    entry = claims.record("M-F2b", True, "drop 0.004", profile="cpu", notebook="nb", run={},
                          claims_dir=d)
    assert claims.CRITERION_CHANGED not in claims.stale_modules(entry, d)
    sources = criteria.package_sources()
    helper = "def se_difference("
    assert helper in sources["mahdavi2024"]
    text = sources["mahdavi2024"]
    body = text[text.index(helper):]
    changed = text.replace(body, body.replace("return round(diff / se, 12)",
                                              "return round(2 * diff / se, 12)", 1), 1)
    assert changed != text
    monkeypatch.setattr(criteria, "package_sources", lambda: {**sources, "mahdavi2024": changed})
    assert claims.CRITERION_CHANGED in claims.stale_modules(entry, d)


def test_an_entry_decided_under_another_stability_rule_is_stale(sandbox, monkeypatch):
    """The stability rule (claims.RULE) is part of what decides a claim from trained models or
    random draws: a weaker rule (2 seeds where it asks 3) makes such an entry stale, reworded
    docstrings do not, and an entry decided from computation keeps its hash."""
    from pathlib import Path

    d = sandbox / "data/claims"
    evidence = claims.load_ledger(d).set_index("id")["evidence"]
    assert evidence["M-F2b"] == "trained models" and evidence["B-FR"] == "computation"
    kw = dict(profile="cpu", notebook="nb", run={}, claims_dir=d)
    trained = claims.record("M-F2b", True, "drop 0.004", **kw)
    exact = claims.record("B-FR", True, "error 1e-9", **kw)
    text = Path(claims.__file__).read_text()
    doc = '"""Why a verdict from trained models on these seeds is not testable, or None.'
    reworded, weaker = text.replace(doc, '"""Other words.'), text.replace(
        "MIN_SEEDS = 3  #", "MIN_SEEDS = 2  #")
    assert text != reworded and text != weaker
    assert claims.rule_code(reworded) == claims.rule_code() != claims.rule_code(weaker)
    real = claims.rule_code
    monkeypatch.setattr(claims, "rule_code", lambda t=None: real(reworded if t is None else t))
    assert claims.CRITERION_CHANGED not in claims.stale_modules(trained, d)
    monkeypatch.setattr(claims, "rule_code", lambda t=None: real(weaker if t is None else t))
    assert claims.CRITERION_CHANGED in claims.stale_modules(trained, d)
    assert claims.CRITERION_CHANGED not in claims.stale_modules(exact, d)


def test_the_stability_rule_names_every_definition_it_reads():
    """claims.RULE holds every top-level definition of claims.py that the rule's functions
    read, so that no part of the rule can change outside the hash."""
    import ast
    from pathlib import Path

    body = ast.parse(Path(claims.__file__).read_text()).body
    defs = {n.name: n for n in body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    defs |= {t.id: n for n in body if isinstance(n, ast.Assign) for t in n.targets
             if isinstance(t, ast.Name)}
    assert set(claims.RULE) <= set(defs)
    for name in claims.RULE:
        read = {n.id for n in ast.walk(defs[name]) if isinstance(n, ast.Name)}
        assert read & set(defs) <= set(claims.RULE), name


def test_every_committed_verdict_says_what_the_rule_gives_on_its_own_stability():
    """Each committed ledger entry's status is the one the stability rule gives on the
    resamples it stores: a reproduced that a resample overturns is fragile, a fragile has a
    resample that overturns it, a leave-one-seed-out covers at least MIN_SEEDS seeds, and an
    entry with a stability comes from trained models or random draws."""
    from pathlib import Path

    from attnbook import paths

    evidence = claims.load_ledger().set_index("id")["evidence"]
    seen = 0
    for path in sorted(Path(paths.CLAIMS).glob("results/*/*.json")):
        entry, problem = claims.check_entry(path)
        assert problem is None, path
        stable = entry.get("stability")
        if not stable:
            assert entry["status"] != claims.FRAGILE, path
            continue
        seen += 1
        assert evidence[entry["id"]] in claims.SAMPLED, path
        assert 0 <= stable["agree"] <= stable["of"] == stable["agree"] + len(
            stable["overturned_by"]), path
        if stable["kind"] == "leave one seed out":
            assert stable["of"] >= claims.MIN_SEEDS, path
        if entry["status"] in ("reproduced", claims.FRAGILE):
            assert entry["status"] == claims.status_word(True, stable), path
    assert seen > 0


def test_every_claim_of_the_ledger_is_checked_by_a_chapter():
    assert set(claims.load_ledger()["id"]) <= claims.chapter_claims()


def test_a_claim_not_run_says_what_an_unfinished_run_has_stored(sandbox, tmp_path):
    from attnbook.book.report import status_markdown

    table = claims.status_table(claims_dir=sandbox / "data/claims")
    checks = {"B-FR": [("nb_a", "Section")]}
    page = status_markdown(table, tmp_path, overview=None, checks=checks,
                           stored={("nb_a", "full"): 12, ("nb_b", "full"): 3})
    row = next(line for line in page.splitlines() if line.startswith("| {claim-row}`B-FR`"))
    cpu, long, full = row.split(" | ")[-3:]
    assert "12 results of `nb_a` stored by a run that recorded no verdict" in full
    assert "stored" not in cpu + long and "nb_b" not in row


def test_a_chapter_that_runs_only_its_pilot_says_so_where_its_claim_is_not_run(sandbox,
                                                                             tmp_path):
    """A chapter whose pilot put the effect beyond the profile stores only the pilot: its
    claim's cell says that, not that a later run resumes a sweep."""
    from attnbook.book.report import chapter_plans, status_markdown

    table = claims.status_table(claims_dir=sandbox / "data/claims")
    checks = {"B-FR": [("nb_a", "Section")]}
    page = status_markdown(table, tmp_path, overview=None, checks=checks,
                           stored={("nb_a", "long"): 7, ("nb_a", "full"): 12},
                           plans={"nb_a": {"claims": ["B-FR"], "profiles": {"long", "full"},
                                           "cost": {}, "pilots": {"long"}}})
    row = next(line for line in page.splitlines() if line.startswith("| {claim-row}`B-FR`"))
    long, full = row.split(" | ")[-2:]
    assert "`nb_a` runs only its pilot here (7 results stored)" in long
    assert "resumes" not in long and "12 results of `nb_a` stored by a run" in full
    # which chapters run only their pilot, read from the .yml files (run_main: false)
    found = {(stem, p) for stem, plan in chapter_plans().items() for p in plan["pilots"]}
    assert ("bruna2024_furthest_neighbour", "long") in found
    assert not any(p in ("ci", "cpu") for _, p in found)


def _cli_on(sandbox, monkeypatch):
    """Point the command line at the sandbox's ledger and an empty results folder."""
    from attnbook import paths

    monkeypatch.setattr(paths, "CLAIMS", sandbox / "data/claims")
    monkeypatch.setattr(paths, "COMMITTED_RESULTS", sandbox / "data/results")
    monkeypatch.setattr(paths, "ROOT", sandbox)


def _change_m_f2b_criterion(claims_dir):
    """Ask M-F2b for three standard errors instead of two, as an edit of its criterion would."""
    csv = claims_dir / "mahdavi2024.csv"
    csv.write_text(csv.read_text().replace("n_se=2; saturated_at=0.98; min_points=3",
                                           "n_se=3; saturated_at=0.98; min_points=3"))


def test_an_edited_ledger_entry_is_damaged_listed_and_marked(sandbox, monkeypatch, capsys):
    """Editing an entry's verdict by hand breaks its sha256: its verdict is not used, `stale`
    lists the file, `claims` and the status page mark it."""
    from attnbook.book.report import status_markdown

    d = sandbox / "data/claims"
    entry = claims.record("B-FR", False, "error 1e-3", profile="cpu", notebook="nb", run={},
                          claims_dir=d)
    assert entry["sha256"] == claims.entry_sha(entry)
    path = d / "results/cpu/B-FR.json"
    path.write_text(path.read_text().replace('"not reproduced"', '"reproduced"'))
    row = claims.status_table("cpu", claims_dir=d).set_index("id").loc["B-FR"]
    assert row["status"] == "not run" and "does not match its recorded sha256" in row["damaged"]
    page = status_markdown(claims.status_table(claims_dir=d), sandbox, overview=None, checks={})
    line = next(x for x in page.splitlines() if x.startswith("| {claim-row}`B-FR`"))
    assert "{verdict}`stale` B-FR.json: content does not match its recorded sha256" in line
    assert "{verdict}`reproduced`" not in line
    _cli_on(sandbox, monkeypatch)
    assert main(["stale", "--profile", "cpu"]) == 0
    out, err = capsys.readouterr()
    assert "data/claims/results/cpu/B-FR.json\tdamaged ledger entry: content does not match" \
        in out and "1 stale or damaged" in err
    assert main(["claims", "--profile", "cpu"]) == 0
    out, err = capsys.readouterr()
    assert next(x for x in out.splitlines() if x.lstrip().startswith("B-FR")).split()[2:5] \
        == ["not", "run", "(damaged"]
    assert "1 has a damaged ledger entry" in err


def test_a_damaged_entry_is_reported_for_its_own_claim_alone(sandbox, monkeypatch, capsys,
                                                             tmp_path):
    """A truncated entry: every other claim is read, and claims, stale and report all go on."""
    from attnbook.book.report import write_pages

    d = sandbox / "data/claims"
    kw = dict(profile="cpu", notebook="nb", run={}, claims_dir=d)
    claims.record("L-Lem1", True, "degree 3^L", **kw)
    claims.record("B-FR", True, "error 3e-9", **kw)
    path = d / "results/cpu/L-Lem1.json"
    path.write_text(path.read_text()[:50])
    table = claims.status_table("cpu", claims_dir=d).set_index("id")
    assert table.loc["B-FR", "status"] == "reproduced" and table.loc["B-FR", "damaged"] == ""
    assert table.loc["L-Lem1", "status"] == "not run"
    assert "cannot be read as a ledger entry (JSONDecodeError" in table.loc["L-Lem1", "damaged"]
    assert (table.drop(index="L-Lem1")["damaged"] == "").all()
    _cli_on(sandbox, monkeypatch)
    assert main(["claims"]) == 0 and main(["claims", "--json"]) == 0
    assert main(["stale"]) == 0
    assert "L-Lem1.json\tdamaged ledger entry: cannot be read" in capsys.readouterr().out
    (sandbox / "build").mkdir()
    pages = write_pages(build_dir=sandbox / "build", root=tmp_path)
    assert "L-Lem1.json: cannot be read as a ledger entry" in pages[0].read_text()


def test_claims_marks_a_stale_verdict(sandbox, monkeypatch, capsys):
    d = sandbox / "data/claims"
    claims.record("M-F2b", True, "drop 0.004", profile="cpu", notebook="nb", run={},
                  claims_dir=d)
    _change_m_f2b_criterion(d)
    _cli_on(sandbox, monkeypatch)
    assert main(["claims", "--profile", "cpu"]) == 0
    out, err = capsys.readouterr()
    line = next(x for x in out.splitlines() if x.lstrip().startswith("M-F2b"))
    assert "reproduced (stale)" in line and "1 verdict is stale" in err
    assert main(["claims", "--profile", "cpu", "--json"]) == 0
    rows = {r["id"]: r for r in json.loads(capsys.readouterr().out)}
    assert claims.CRITERION_CHANGED in rows["M-F2b"]["stale"]
    assert rows["B-FR"]["stale"] == "" and rows["M-F2b"]["status"] == "reproduced"


def test_claims_counts_a_stale_claim_once_when_it_lists_its_parts(sandbox, monkeypatch, capsys):
    d = sandbox / "data/claims"
    for part in ("T = 10k", "T = 20k"):
        claims.record("M-F2b", True, "drop 0.004", part=part, profile="cpu", notebook="nb",
                      run={}, claims_dir=d)
    _change_m_f2b_criterion(d)
    _cli_on(sandbox, monkeypatch)
    for flags in ([], ["--parts"]):
        assert main(["claims", "--profile", "cpu", *flags]) == 0
        out, err = capsys.readouterr()
        assert "1 verdict is stale" in err, flags
    assert out.count("reproduced (stale)") == 3  # the claim and its two parts


def test_an_entry_without_its_hash_is_damaged_until_recorded_anew(sandbox):
    d = sandbox / "data/claims"
    kw = dict(profile="cpu", notebook="nb", claims_dir=d)
    claims.record("B-FR", False, "error 0.3", run={"run_id": "first"}, **kw)
    path = d / "results/cpu/B-FR.json"
    old = json.loads(path.read_text())
    del old["sha256"]
    old["status"], old["measured"] = "reproduced", "error 1e-9"  # edited by hand
    path.write_text(json.dumps(old))
    row = claims.status_table("cpu", claims_dir=d).set_index("id").loc["B-FR"]
    assert "has no sha256" in row["damaged"] and row["status"] != "reproduced"
    (bad,) = claims.damaged_entries("cpu", claims_dir=d)
    assert bad["path"] == path and "has no sha256" in bad["problem"]
    new = claims.record("B-FR", True, "error 1e-9", run={"run_id": "redraw"}, **kw)
    assert new["run"]["run_id"] == "redraw" and new["sha256"] == claims.entry_sha(new)
    assert claims.status_table("cpu", claims_dir=d).set_index("id").loc["B-FR", "stale"] == ""


@pytest.mark.parametrize("tail, why", [
    ('X-9,theorem,effect,"src,statement,value,criterion,\n', "is never closed"),
    ("X-9,theorem,effect,src,statement,value,criterion,t,computation,extra\n", "10 fields where"),
])
def test_a_malformed_claims_csv_is_one_line_naming_file_and_line(sandbox, monkeypatch, capsys,
                                                                  tail, why):
    csv = sandbox / "data/claims/levine2020.csv"
    text = csv.read_text()
    csv.write_text(text + tail)
    where = len(text.splitlines()) + 1  # the appended line
    _cli_on(sandbox, monkeypatch)
    assert main(["claims"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert f"levine2020.csv: line {where}: " in err and why in err


@pytest.fixture
def run(sandbox, monkeypatch):
    """A Run whose ledger is the sandbox's."""
    import torch

    from attnbook import paths
    from attnbook.book.notebook import Run

    monkeypatch.setattr(paths, "CLAIMS", sandbox / "data/claims")
    return Run("nb", "cpu", 0, torch.device("cpu"), "r1", False)


def test_a_verdict_one_seed_overturns_is_fragile_and_not_counted(sandbox, run, tmp_path):
    """The stability rule: every seed left out in turn; one that overturns a reproduced
    verdict makes it fragile, on the status page and in claims, and it is not counted."""
    from attnbook.book.report import status_markdown

    d = sandbox / "data/claims"
    losses = {0: 0.1, 1: 0.1, 2: 0.9}  # seed 2 alone carries the effect
    line = run.record("W-F2", True, "cost 0.37", part="bottleneck", seeds=[0, 1, 2],
                      decide_seeds=lambda kept: sum(losses[s] for s in kept) / len(kept) > 0.3)
    assert line.startswith("W-F2 / bottleneck [cpu] fragile: cost 0.37 [stability 2/3")
    entry = json.loads((d / "results/cpu/W-F2__bottleneck.json").read_text())
    assert entry["status"] == "fragile" and entry["stability"]["overturned_by"] == [
        "without seed 2"]
    table = claims.status_table("cpu", parts=True, claims_dir=d)
    whole = table[(table["id"] == "W-F2") & table["part"].isna()].iloc[0]
    assert whole["status"] == "fragile" and whole["stability"] == "2/3 leave one seed out"
    page = status_markdown(claims.status_table(claims_dir=d), tmp_path)
    counts = next(line for line in page.splitlines() if line.startswith("| `cpu` | "))
    assert "{verdict}`fragile` 1" in counts and "{verdict}`reproduced`" not in counts
    # every resample agrees: reproduced, with its stability
    run.record("W-F2", True, "cost 0.9", part="bottleneck", seeds=[0, 1, 2],
               decide_seeds=lambda kept: True)
    entry = json.loads((d / "results/cpu/W-F2__bottleneck.json").read_text())
    assert entry["status"] == "reproduced" and entry["stability"]["share"] == 1.0


def test_a_verdict_from_fewer_than_three_seeds_is_not_testable(sandbox, run):
    d = sandbox / "data/claims"
    called = []
    line = run.record("W-F2", True, "cost 0.37", part="size", seeds=[0, 1, 1],
                         decide_seeds=lambda kept: called.append(kept) or True)
    assert not called
    assert line == ("W-F2 / size [cpu] not testable: 2 seeds at this profile, at least 3 needed "
                    "for a verdict from trained models (on these the criterion says reproduced): "
                    "cost 0.37")
    entry = json.loads((d / "results/cpu/W-F2__size.json").read_text())
    assert entry["status"] == "not testable" and "stability" not in entry


def test_resampled_draws_give_a_stability_share(sandbox, run):
    d = sandbox / "data/claims"
    run.record("M-F1", True, "4990 of 5000", resamples={"draw 0": True, "draw 1": False},
                  resample_kind="bootstrap of the draws")
    entry = json.loads((d / "results/cpu/M-F1.json").read_text())
    assert entry["status"] == "fragile"
    assert entry["stability"]["kind"] == "bootstrap of the draws"


def _raw_html(markdown: str) -> list[str]:
    """The raw HTML a Markdown page would pass to the browser, but for the line breaks the
    pages write themselves."""
    from markdown_it import MarkdownIt

    md = MarkdownIt("commonmark").enable("table")
    out = []
    for tok in md.parse(markdown):
        for t in [tok, *(tok.children or [])]:
            ours = r'<br>|<span class="attnbook-(column|profile)-label">|</span>'
            if t.type in ("html_inline", "html_block") and not re.fullmatch(
                    ours, t.content.strip()):
                out.append(t.content)
    return out


def test_every_text_from_data_is_escaped_on_the_pages(sandbox, tmp_path):
    """A measured text, a paper value, a criterion, a commit, a device or a manifest entry
    holding HTML reaches the status page, the execution report and the home page's summary
    as text, never as markup."""
    import csv
    import io

    from attnbook.book.report import execution_markdown, status_markdown, summary_markdown

    d = sandbox / "data/claims"
    path = d / "bruna2024.csv"
    rows = list(csv.reader(io.StringIO(path.read_text())))
    head = rows[0]
    for r in rows[1:]:
        if r[head.index("id")] == "B-FR":
            r[head.index("paper_value")] = "x <img src=x onerror=alert(1)> `{doc}`y`"
            r[head.index("criterion")] = "holds <script>alert(2)</script> [a](javascript:x)"
            r[head.index("source")] = "Figure <b onmouseover=alert(3)>1</b>"
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerows(rows)
    path.write_text(buf.getvalue())
    claims.record("B-FR", True, "<script>alert(4)</script> error *3e-9* $x$", profile="cpu",
                  notebook="nb", run={"commit": "abc`<i>x</i>", "device": "<svg onload=1>"},
                  claims_dir=d)
    table = claims.status_table(claims_dir=d)
    page = status_markdown(table, tmp_path, overview=None)
    assert _raw_html(page) == [], _raw_html(page)
    assert "\\<script\\>alert(4)" in page and "onerror" in page  # kept, as text
    assert _raw_html(summary_markdown(claims.status_table(claims_dir=d, parts=True),
                                      overview=None)) == []
    manifest = tmp_path / "manifest.jsonl"
    manifest.write_text(json.dumps(
        {"notebook": "<img src=x onerror=alert(5)>", "profile": "cpu", "status": "<b>ok</b>",
         "wall_s": 1.0, "device": "<svg onload=6>", "commit": "<i>c</i>",
         "start": "<u>t</u>", "error": "<script>7</script>",
         "versions": {"<x>": "<y onclick=8>"}}) + "\n" + json.dumps(
        {"notebook": "nb", "profile": "cpu", "status": "ok", "wall_s": "<script>"}) + "\n"
        + "[" * 100000 + "]" * 100000 + "\n")
    report = execution_markdown(manifest)
    assert _raw_html(report) == [], _raw_html(report)
    assert "2 unreadable lines of manifest.jsonl skipped" in report


def _git_commit(root) -> str:
    import subprocess
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t", "PATH": __import__("os").environ["PATH"]}
    for args in (["add", "-A"], ["commit", "-q", "-m", "c"]):
        subprocess.run(["git", *args], cwd=root, check=True, env=env)
    return subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], cwd=root, check=True,
                          capture_output=True, text=True).stdout.strip()


def test_an_entry_decided_under_other_values_of_its_profile_is_stale(cli_sandbox):
    """A verdict stands for its profile as the .yml defines it: once a value the profile sets
    changes (more steps, more seeds), the entry recorded before says so, naming the value;
    a parameter added since (with its default) is no change of the profile's values."""
    import subprocess
    root, d = cli_sandbox, cli_sandbox / "data/claims"
    yml = root / "notebooks" / "a_ok.yml"
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=root, check=True)
    yml.write_text(yml.read_text().replace("ci: {k: 1}", "ci: {k: 1}\n  full: {k: 2}"))
    commit = _git_commit(root)
    entry = claims.record("M-F2b", False, "drop 0.01", profile="full", notebook="a_ok",
                          run={"commit": commit}, claims_dir=d)
    assert claims.stale_modules(entry, d) == []
    yml.write_text(yml.read_text().replace("full: {k: 2}", "full: {k: 3}"))
    stale = claims.stale_modules(entry, d)
    assert stale == ["(the full profile's values: k 2 -> 3)"]
    row = claims.status_table("full", claims_dir=d).set_index("id").loc["M-F2b"]
    assert row["stale"] == stale[0]
    assert claims.stale_modules({**entry, "profile": "cpu"}, d) == []  # cpu's k: unchanged
    yml.write_text(yml.read_text().replace("full: {k: 3}", "full: {k: 2}"))
    nb = root / "notebooks" / "a_ok.ipynb"
    cells = json.loads(nb.read_text())
    tagged = next(c for c in cells["cells"] if "parameters" in c["metadata"].get("tags", []))
    tagged["source"] = "".join(tagged["source"]) + "\nextra = 1\n"
    nb.write_text(json.dumps(cells))
    assert claims.stale_modules(entry, d) == []
    unknown = {**entry, "run": {**entry["run"], "commit": "0" * 12}}  # not in this history
    assert claims.stale_modules(unknown, d) == []


def test_the_parameters_an_entry_records_are_what_its_staleness_reads(cli_sandbox):
    """A run records the values its profile set; those decide, not git (a run from uncommitted
    values, a copy without history)."""
    import torch

    from attnbook.book.notebook import Run
    from attnbook.book.profiles import load_spec

    root, d = cli_sandbox, cli_sandbox / "data/claims"
    run = Run("a_ok", "ci", 0, torch.device("cpu"), "r1", False)
    run.record("M-F2b", False, "drop 0.01")
    entry = json.loads((d / "results/ci/M-F2b.json").read_text())
    assert entry["run"]["parameters"] == load_spec(root / "notebooks/a_ok.ipynb").effective("ci")
    assert entry["run"]["parameters"]["k"] == 1 and claims.stale_modules(entry, d) == []
    earlier = {**entry, "run": {**entry["run"], "parameters": {**entry["run"]["parameters"],
                                                               "k": 4}}}
    assert claims.stale_modules(earlier, d) == [
        "(the ci profile's values: k 4 -> 1)"]
