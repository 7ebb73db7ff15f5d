"""Generated book pages: the reproduction status (from the ledger) and the execution report
(from the manifest). Written to ``build/pages/`` before the book is built."""

import json
from pathlib import Path

import pandas as pd

from .. import paths
from .claims import PROFILES, STATUSES, status_table

__all__ = ["write_pages", "status_markdown", "execution_markdown"]

_MARK = {"reproduced": "**reproduced**", "not reproduced": "**not reproduced**",
         "partly run": "**partly run**", "not run": "not run"}
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
        return f"[{notebook}](../executed/{notebook}.ipynb)"
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
             "reasons are in the chapter); *not run* means no run at that profile has touched it. "
             "Generated from `data/claims/` by "
             "`python -m attnbook report`.", ""]
    counts = table.groupby(["profile", "status"]).size().unstack(fill_value=0)
    lines += ["| profile | reproduced | not reproduced | partly run | not run |",
              "|---|---|---|---|---|"]
    for p in PROFILES:
        row = counts.loc[p] if p in counts.index else {}
        lines.append(f"| `{p}` | " + " | ".join(str(int(row.get(s, 0))) for s in
                                              STATUSES) + " |")
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
                    txt += (f" ({_link(r['notebook'], executed)}, `{r['commit']}`, "
                            f"{_short_device(r['device'])})")
                cells.append(txt)
            lines.append(f"| **{cid}** ({_cell(first['source'])}) | "
                         f"{_cell(first['paper_value'])} | " + " | ".join(cells) + " |")
            criteria.append(f"**{cid}**: {_cell(first['criterion'])}")
        lines += ["", "Criteria:", ""] + [f"- {c}" for c in criteria]
    return "\n".join(lines) + "\n"


def execution_markdown(manifest: Path) -> str:
    """The execution report: the latest run of each notebook at each profile."""
    lines = ["# Execution report", "",
             "The latest run of each notebook at each profile on the machine that built this "
             "book, from `build/manifest.jsonl` (every run appends one line: parameters, "
             "commit, device, library versions, start and wall time, status).", ""]
    if not manifest.exists():
        return "\n".join(lines + ["No notebook has been run yet."]) + "\n"
    entries = [json.loads(line) for line in manifest.read_text().splitlines() if line.strip()]
    latest = {}
    for e in entries:
        latest[(e["notebook"], e["profile"])] = e
    lines += ["| notebook | profile | status | wall time (s) | device | commit | started |",
              "|---|---|---|---|---|---|---|"]
    for (nb, prof), e in sorted(latest.items()):
        status = e["status"] + (f": {_cell(e['error'])}" if e.get("error") else "")
        lines.append(f"| {nb} | `{prof}` | {status} | {e['wall_s']} | {_cell(e['device'])} | "
                     f"{e['commit']} | {e['start']} |")
    versions = entries[-1].get("versions", {})
    lines += ["", "Library versions of the latest run: "
              + ", ".join(f"{k} {v}" for k, v in versions.items()) + ".",
              "", f"{len(entries)} runs recorded in all."]
    return "\n".join(lines) + "\n"


def write_pages(build_dir: Path | None = None) -> list[Path]:
    """Write build/pages/reproduction_status.md and build/pages/execution_report.md."""
    build = Path(build_dir or paths.BUILD)
    pages = build / "pages"
    pages.mkdir(parents=True, exist_ok=True)
    out = [pages / "reproduction_status.md", pages / "execution_report.md"]
    out[0].write_text(status_markdown(status_table(), build / "executed"))
    out[1].write_text(execution_markdown(build / "manifest.jsonl"))
    return out
