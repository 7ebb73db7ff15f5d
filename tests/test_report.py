"""The generated pages say where each profile ran and why one did not, tally the verdicts per
paper and per claim type, and draw a claim that reproduced in part as partial."""

import pandas as pd

from attnbook.book import report
from attnbook.book.claims import combined_status

CPU = "cpu: AMD EPYC (2 cores, 1 threads)"


def _row(cid, profile, status, *, work="levine2020", type="effect", part=None, measured="",
         device=CPU):
    ran = status not in ("not run", "no chapter yet")
    return {"id": cid, "work": work, "kind": "figure", "type": type, "source": f"{work}, {cid}",
            "profile": profile, "paper_value": "rank 5", "criterion": "equal ranks",
            "damaged": "", "part": part, "status": status, "measured": measured,
            "stability": "", "notebook": "nb_a" if ran else "", "commit": "abc" if ran else "",
            "device": device if ran else "", "time": "", "stale": "", "dirty": ""}


def _table():
    """Two claims of levine2020 and one of wies2021 (with two parts); nothing at `long`, and
    `full` computed on the CPU for nb_a while nb_b never ran it."""
    rows = []
    for p in ("cpu", "long", "full"):
        ran = p != "long"
        rows.append(_row("L-A", p, "reproduced" if ran else "not run", measured="rank 5"))
        rows.append(_row("L-B", p, "not run" if p != "cpu" else "not reproduced",
                         type="consistency", measured="rank 4" if p == "cpu" else ""))
        statuses = ["reproduced", "not reproduced"] if p == "cpu" else ["not run", "not run"]
        rows.append(_row("W-P", p, combined_status(statuses), work="wies2021",
                         measured="1 of 2 parts reproduced, 1 not reproduced" if p == "cpu"
                         else ""))
        for name, s in zip(("size", "bottleneck"), statuses, strict=True):
            rows.append(_row("W-P", p, s, work="wies2021", part=name,
                             measured={"reproduced": "0.80 (asked 0.75)",
                                       "not reproduced": "+0.06 nats"}.get(s, "offline")))
    return pd.DataFrame(rows)


PLANS = {"nb_a": {"claims": ["L-A"], "profiles": {"ci", "cpu", "full"}, "cost": {},
                  "pilots": set()},
         "nb_b": {"claims": ["L-B", "W-P"], "profiles": {"ci", "cpu", "long", "full"},
                  "cost": {"full": {"where": "gpu", "minutes": 120, "measured": False},
                           "long": {"where": "cpu", "minutes": 245, "measured": True}},
                  "pilots": set()}}


def _status_page(table):
    return report.status_markdown(table, report.paths.ROOT / "nowhere", overview=None,
                                  checks={}, plans=PLANS)


def test_a_full_result_computed_on_the_cpu_is_said_to_be_on_the_cpu():
    sites = report.profile_sites(_table(), PLANS)
    assert sites["full"].startswith("1 claim with a verdict, computed on CPU (AMD EPYC, 2 cores)")
    page = _status_page(_table())
    legend = page.split("**Where each profile ran**")[1].split("\n\n", 2)[1]
    assert "- `full`: 1 claim with a verdict, computed on CPU (AMD EPYC, 2 cores);" in legend
    assert "`full`: one GPU" not in page and "needs one GPU" not in page
    home = report.summary_markdown(_table(), overview=None, plans=PLANS)
    assert "- `full`: 1 claim with a verdict, computed on CPU (AMD EPYC, 2 cores)" in home
    # a GPU says which
    table = _table()
    table.loc[(table["id"] == "L-A") & (table["profile"] == "full"), "device"] = \
        "cuda: NVIDIA H200"
    assert report.profile_sites(table, PLANS)["full"].startswith(
        "1 claim with a verdict, computed on GPU (NVIDIA H200)")


def test_a_profile_not_run_names_its_cost_and_where_it_needs_to_run():
    sites = report.profile_sites(_table(), PLANS)
    assert "not run by 1 chapter: nb_b: about 2 hours on one GPU (estimated), no GPU used" \
        in sites["full"]
    assert sites["long"] == ("no claim has a verdict; not run by 1 chapter: nb_b: about 4.1 "
                             "hours on the CPU (measured)")  # nb_a defines no long profile
    plans = {**PLANS, "nb_b": {**PLANS["nb_b"], "cost": {}}}
    assert "nb_b: its .yml gives no cost" in report.profile_sites(_table(), plans)["full"]
    plans = {**PLANS, "nb_b": {**PLANS["nb_b"], "pilots": {"long"}}}
    assert "1 chapter only runs a pilot here: nb_b" in report.profile_sites(_table(), plans)["long"]


def test_a_claim_reproduced_in_part_is_drawn_as_partial():
    assert combined_status(["reproduced", "not reproduced"]) == "partly reproduced"
    assert report.COLOURS["partly reproduced"] not in (
        report.COLOURS["reproduced"], report.COLOURS["not reproduced"])
    page = _status_page(_table())
    row = next(line for line in page.splitlines() if line.startswith("| {claim-row}`W-P`"))
    assert "{verdict}`partly reproduced` 1 of 2 parts reproduced, 1 not reproduced:" in row
    assert "{verdict}`reproduced` **size**: 0.80 (asked 0.75)" in row
    assert "{verdict}`partly reproduced` means some parts" in page
    home = report.summary_markdown(_table(), overview=None, plans=PLANS)
    strong = home.split("**The papers' findings that reproduced**")[1].split("\n\n", 2)[1]
    assert "W-P" not in strong and "{claim}`L-A@full`" in strong
    partial = home.split("**What reproduced in part**")[1].split("\n\n", 2)[1]
    assert partial == ("- {claim}`W-P@cpu` wies2021, W-P; at `cpu` part size reproduced: 0.80 "
                       "(asked 0.75)")
    assert "**What did not reproduce**" not in home  # a partial claim is no failure either


def test_the_tally_counts_claims_per_paper_and_type():
    page = _status_page(_table())
    assert page.index("Per paper") < page.index("## Depth-to-width")  # at the top
    levine = next(line for line in page.splitlines()
                  if line.startswith("| Depth-to-width interplay"))
    assert "| 1 effect, 1 consistency check |" in levine
    cpu = levine.split(" | ")[2]
    assert "effects: {verdict}`reproduced` 1<br>checks: {verdict}`not reproduced` 1" in cpu
    wies = next(line for line in page.splitlines() if line.startswith("| Vocabulary"))
    assert "| 1 effect |" in wies and "effects: {verdict}`partly reproduced` 1" in wies
    assert "| profile | effects (claims per verdict) | consistency checks (claims per verdict) |" \
        in page


def test_a_reason_shared_by_parts_is_said_once_per_claim():
    table = _table()
    table.loc[(table["id"] == "W-P") & table["part"].notna() & (table["profile"] == "full"),
              "measured"] = "weights unavailable offline"
    table.loc[(table["id"] == "W-P") & table["part"].notna() & (table["profile"] == "long"),
              "measured"] = "weights unavailable offline"
    row = next(line for line in _status_page(table).splitlines()
               if line.startswith("| {claim-row}`W-P`"))
    assert row.count("weights unavailable offline") == 1
    assert "{verdict}`not run` **2 parts** (size, bottleneck): weights unavailable offline" in row
    assert "{verdict}`not run` **2 parts**: as at `long`" in row


def test_an_unfinished_claim_with_parts_lists_both():
    """A claim not run at a profile whose chapter stored results there without a verdict, and
    whose parts share one reason, says both (this combination once ended in a TypeError)."""
    r = _row("W-F4", "long", "not run", work="wies2021")
    parts = pd.DataFrame([_row("W-F4", "long", "not run", work="wies2021", part=p,
                               measured="its sweep stopped") for p in ("a", "b")])
    said: dict = {}
    cell = report._verdict_cell(r, unfinished=[("nb_w", 12)], parts=parts, profile="long",
                                said=said)
    assert "12 results of `nb_w` stored by a run that recorded no verdict" in cell
    assert "**2 parts** (a, b): its sweep stopped" in cell
    again = report._verdict_cell(r, unfinished=[("nb_w", 12)], parts=parts, profile="full",
                                 said=said)
    assert "**2 parts**: as at `long`" in again
