"""Generated book pages: the reproduction status (from the ledger) and the execution report
(from the manifest). Written to ``status/`` (git-ignored, at the repository root) before the
book is built, so they are published as ``status/reproduction_status.html`` and
``status/execution_report.html``, next to the ``chapters/`` they link to.

Both mark what no longer stands for the code as it is: a ledger entry or stored result whose
library modules changed since it was computed is **stale** (with the modules), never shown
as current; one computed from a tree with uncommitted changes says ``dirty`` (with the hash
of its diff).
"""

import json
from pathlib import Path

import pandas as pd

from .. import paths
from .claims import PROFILES, STATUSES, status_table
from .publish import chapter_doc

__all__ = ["write_pages", "status_markdown", "execution_markdown"]

_MARK = {"reproduced": "**reproduced**", "not reproduced": "**not reproduced**",
         "partly run": "**partly run**", "not run": "not run",
         "no chapter yet": "*no chapter yet*"}
_WORK_TITLES = {
    "levine2020": "Depth-to-width interplay (Levine et al. 2020)",
    "wies2021": "Vocabulary bottleneck (Wies et al. 2021)",
    "bruna2024": "Rank versus heads (Bruna's talk: Zweig-Bruna 2022, Amsel-Yehudai-Bruna 2024)",
    "mahdavi2024": "Memorization capacity (Mahdavi et al. 2024)",
}


def _cell(text) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _link(notebook: str, executed: Path) -> str:
    if notebook and (executed / f"{notebook}.ipynb").exists():
        return f"[{notebook}](../{chapter_doc(notebook)}.ipynb)"  # status/ -> chapters/
    return _cell(notebook)


def _short_device(device: str) -> str:
    """'cuda: NVIDIA H100 80GB' -> 'NVIDIA H100 80GB'; any CPU -> 'CPU'."""
    parts = [d.strip() for d in str(device).split(";") if d.strip()]
    return ", ".join("CPU" if d.startswith("cpu") else d.removeprefix("cuda:").strip()
                     for d in parts)


def status_markdown(table: pd.DataFrame, executed: Path) -> str:
    """The reproduction status page: per work, each claim's paper value beside each profile."""
    lines = ["# Reproduction status", "",
             "Every figure, table and theorem of the four works, with the paper's value and what "
             "this book measured at each profile (`ci`: seconds on a CPU, a smoke test; `cpu`: "
             "minutes on a laptop; `full`: one GPU). A claim is *reproduced* only when the "
             "criterion listed under its table holds for the measured value; *partly run* means "
             "every part that ran reproduced but some parts could not run at that profile (their "
             "reasons are in the chapter); *not run* means a chapter checks it but no run at that "
             "profile has; *no chapter yet* means no chapter checks it. "
             "An entry marked **stale** was computed by library code that has changed since "
             "(the changed modules are listed): it is recomputed by the next build of its "
             "profile and does not count as current; `dirty` marks a result computed from "
             "uncommitted changes. "
             "Generated from `data/claims/` by "
             "`python -m attnbook report`.", ""]
    lines += ["Each claim is an *effect* (the paper's finding, which could be false at this "
              "book's scale) or a *consistency* check (a proven bound: a correct computation "
              "cannot violate it, so it tests the code more than the paper). They are counted "
              "apart.", "",
              "| profile | claims | " + " | ".join(STATUSES) + " |",
              "|---|---|" + "---|" * len(STATUSES)]
    for p in PROFILES:
        for kind in ("effect", "consistency"):
            sub = table[(table["profile"] == p) & (table["type"] == kind)]
            n = sub["status"].value_counts()
            label = "effects" if kind == "effect" else "consistency checks"
            lines.append(f"| `{p}` | {label} | " + " | ".join(str(int(n.get(s, 0))) for s in
                                                          STATUSES) + " |")
    if "stale" in table:
        stale = table[(table["stale"].fillna("") != "")
                      & ~table["status"].isin(["not run", "no chapter yet"])]
        if len(stale):
            per = stale.groupby("profile").size()
            lines += ["", "**Stale** (code changed since): " + ", ".join(
                f"{int(per[p])} at `{p}`" for p in PROFILES if p in per.index) + "."]
    for work, title in _WORK_TITLES.items():
        sub = table[table["work"] == work]
        if sub.empty:
            continue
        lines += ["", f"## {title}", "",
                  "| claim | paper | " + " | ".join(f"`{p}`" for p in PROFILES) + " |",
                  "|---|---|" + "---|" * len(PROFILES)]
        criteria = []
        for cid, rows in sub.groupby("id", sort=False):
            first = rows.iloc[0]
            cells = []
            for p in PROFILES:
                r = rows[rows["profile"] == p].iloc[0]
                txt = _MARK[r["status"]]
                if r["measured"]:
                    txt += f": {_cell(r['measured'])}"
                if r["notebook"]:
                    dirty = f" {r['dirty']}" if r.get("dirty") else ""
                    txt += (f" ({_link(r['notebook'], executed)}, `{r['commit']}`{dirty}, "
                            f"{_short_device(r['device'])})")
                if r.get("stale"):
                    txt += f" **stale** (changed: {_cell(r['stale'])})"
                cells.append(txt)
            lines.append(f"| **{cid}** *{first['type']}* ({_cell(first['source'])}) | "
                         f"{_cell(first['paper_value'])} | " + " | ".join(cells) + " |")
            criteria.append(f"**{cid}**: {_cell(first['criterion'])}")
        lines += ["", "Criteria:", ""] + [f"- {c}" for c in criteria]
    return "\n".join(lines) + "\n"


def _stale_by_run(table: pd.DataFrame | None, results: Path | None) -> dict:
    """(notebook, profile) -> changed modules of its stale ledger entries and stored results."""
    out: dict = {}
    if table is not None and "stale" in table:
        for _, r in table[table["stale"].fillna("") != ""].iterrows():
            if r["notebook"]:
                out.setdefault((r["notebook"], r["profile"]), set()).update(
                    r["stale"].split(", "))
    if results is not None and results.exists():
        from .store import stored_results

        for r in stored_results(results):
            if r["changed"] or r["problem"]:
                out.setdefault((r["notebook"], r["profile"]), set()).update(
                    r["changed"] or ["damaged result"])
    return out


def execution_markdown(manifest: Path, table: pd.DataFrame | None = None,
                       results: Path | None = None) -> str:
    """The execution report: the latest run of each notebook at each profile."""
    lines = ["# Execution report", "",
             "The latest run of each notebook at each profile on the machine that built this "
             "book, from `build/manifest.jsonl` (every run appends one line: parameters, "
             "commit, device, library versions, start and wall time, status).", ""]
    if not manifest.exists():
        return "\n".join(lines + ["No notebook has been run yet."]) + "\n"
    entries, damaged = [], 0
    for line in manifest.read_text().splitlines():
        try:
            entry = json.loads(line) if line.strip() else None
        except ValueError:  # a line cut short by a killed run: counted, not fatal
            entry, damaged = None, damaged + 1
        if isinstance(entry, dict) and {"notebook", "profile", "status"} <= set(entry):
            entries.append(entry)
    if not entries:
        return "\n".join(lines + ["No notebook has been run yet."]) + "\n"
    latest = {}
    for e in entries:
        if not e.get("overrides"):  # exploratory runs stand for no profile
            latest[(e["notebook"], e["profile"])] = e
    stale = _stale_by_run(table, results)
    lines += ["| notebook | profile | status | wall time (s) | device | commit | started |",
              "|---|---|---|---|---|---|---|"]
    for (nb, prof), e in sorted(latest.items()):
        status = e["status"] + (f": {_cell(e['error'])}" if e.get("error") else "")
        if (nb, prof) in stale:
            status += f"; results **stale** (changed: {_cell(', '.join(sorted(stale[nb, prof])))})"
        commit = e["commit"] + (" dirty" + (f" (diff {e['diff_sha256']})"
                                            if e.get("diff_sha256") else "")
                                if e.get("dirty") else "")
        lines.append(f"| {nb} | `{prof}` | {status} | {e['wall_s']} | {_cell(e['device'])} | "
                     f"{commit} | {e['start']} |")
    versions = entries[-1].get("versions", {})
    lines += ["", "Library versions of the latest run: "
              + ", ".join(f"{k} {v}" for k, v in versions.items()) + ".",
              "", f"{len(entries)} runs recorded in all"
              + (f"; {damaged} unreadable lines of {manifest.name} skipped." if damaged else ".")]
    return "\n".join(lines) + "\n"


STATUS = "status"  # the generated pages' folder, at the repository root (git-ignored)


def write_pages(build_dir: Path | None = None, root: Path | None = None) -> list[Path]:
    """Write status/reproduction_status.md and status/execution_report.md."""
    build = Path(build_dir or paths.BUILD)
    pages = Path(root or paths.ROOT) / STATUS
    pages.mkdir(parents=True, exist_ok=True)
    out = [pages / "reproduction_status.md", pages / "execution_report.md"]
    table = status_table()
    out[0].write_text(status_markdown(table, build / "executed"))
    out[1].write_text(execution_markdown(build / "manifest.jsonl", table, paths.COMMITTED_RESULTS))
    return out
