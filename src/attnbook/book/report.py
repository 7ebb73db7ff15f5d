"""Generated book pages: the reproduction status (from the ledger), the execution report (from
the stored results' provenance and the manifest) and the home page's summary.

Written to ``status/`` (git-ignored) before the book is built, next to the ``chapters/`` they
link to; ``book/intro.md`` includes ``status/summary.md``. What each page shows: CONTRIBUTING.md
(*The checks*, *Where things go*). Both pages mark a ledger entry or stored result whose library
modules changed since it was computed **stale**, one computed from uncommitted changes ``dirty``.
"""

import re
from collections import Counter
from pathlib import Path

import pandas as pd

from .. import paths
from .claims import (
    MIN_SEEDS,
    PARTLY_REPRODUCED,
    PROFILES,
    STATUSES,
    UNRUN,
    notebook_claims,
    recorded_ids,
    shown_profiles,
    status_table,
)
from .figures import badge_status, check_label, read_manifest, seconds_text
from .profiles import load_spec
from .publish import chapter_doc, toc_order
from .readers import notebook_cells
from .sites import counted, device_sites, not_run_text, sites_text
from .store import stored_results
from .text import escape, paper_math

__all__ = ["write_pages", "status_markdown", "execution_markdown", "summary_markdown",
           "stored_provenance", "work_text", "overview_figure", "chapter_plans", "profile_sites",
           "grouped_parts", "claim_checks"]

_WORK_TITLES = {
    "levine2020": "Depth-to-width interplay (Levine et al. 2020)",
    "wies2021": "Vocabulary bottleneck (Wies et al. 2021)",
    "bruna2024": "Rank versus heads (Bruna's talk: Zweig-Bruna 2022, Amsel-Yehudai-Bruna 2024)",
    "mahdavi2024": "Memorization capacity (Mahdavi et al. 2024)",
}
# the verdicts' colours, in the overview figure and on the badges (_static/custom.css);
# "stale": a result that ran but whose code has changed since (hatched in the figure)
COLOURS = {"reproduced": "#2e7d32", "fragile": "#827717", "not reproduced": "#c62828",
           "not testable": "#1565c0", "partly run": "#ef6c00",
           "partly reproduced": "#00838f",
           "stale": "#6a1b9a", "not run": "#9e9e9e", "no chapter yet": "#d9d9d9"}
OVERVIEW = "overview.png"


def _name(text) -> str:
    """A notebook's name from data: as it is where it is a plain name (``a_ok``, whose inner
    underscores Markdown reads as letters), else escaped."""
    text = str(text)
    return text if re.fullmatch(r"[A-Za-z0-9]([A-Za-z0-9_.-]*[A-Za-z0-9])?", text) \
        else escape(text)


def _md_cell(markdown: str) -> str:
    """Markdown made here (its data already escaped) in a table cell."""
    return str(markdown).replace("|", "\\|").replace("\n", " ")


def _code(text) -> str:
    """Text from data inside a code span (a commit, a profile): no backtick can close it."""
    return " ".join(str(text).replace("`", "'").split()) or "-"


# -- where each claim is checked ---------------------------------------------------------------
def _plain(title: str) -> str:
    """A heading as plain text (a reference's words): math delimiters and TeX commands out."""
    text = re.sub(r"\\([A-Za-z]+)", r"\1", title.replace("$", ""))
    return " ".join(re.sub(r"[{}`<>*\\]", "", text).split())


def claim_checks(notebooks: Path | None = None) -> dict:
    """claim id -> [(notebook, section title)] of the code cells that record it, in book order
    (the section: the last heading before the cell; one per notebook)."""
    out: dict = {}
    for nb in sorted(Path(notebooks or paths.NOTEBOOKS).glob("*.ipynb")):
        section = nb.stem
        for cell in notebook_cells(nb):
            text = "".join(cell.get("source", ""))
            if cell.get("cell_type") == "markdown":
                heads = re.findall(r"^#{1,6}\s+(.+)$", text, flags=re.M)
                if heads:
                    section = _plain(heads[-1])
            elif cell.get("cell_type") == "code":
                for cid in recorded_ids(text):
                    if all(n != nb.stem for n, _ in out.setdefault(cid, [])):
                        out[cid].append((nb.stem, section))
    return out


def overview_figure(table: pd.DataFrame, path: Path) -> Path:
    """The status page's overview: claims per profile as bars coloured by verdict (hatched
    where stale), effects above consistency checks, so that it reads on a phone's width too."""
    import matplotlib.pyplot as plt  # matplotlib only where a figure is drawn
    from matplotlib.patches import Patch

    from .plotting import TEXT_PX_KEY, smallest_text_pt, style

    style()
    table = _whole(table)
    profiles = shown_profiles(table)
    stale = (table.apply(badge_status, axis=1) == "stale").tolist()
    count = Counter(zip(table["profile"], table["type"], table["status"], stale, strict=True))
    fig, axes = plt.subplots(2, 1, figsize=(6.4, 1.2 + 0.95 * len(profiles) * 2))
    for ax, kind, label in zip(axes, ("effect", "consistency"),
                               ("effects (the papers' findings)",
                                "consistency checks (proven bounds)"), strict=True):
        left = [0] * len(profiles)
        for status in STATUSES:
            for stale in (False, True):
                n = [count[p, kind, status, stale] for p in profiles]
                bars = ax.barh(list(profiles), n, left=left, color=COLOURS[status],
                               edgecolor="white", linewidth=0.8, hatch="///" if stale else None,
                               alpha=0.55 if stale else 1.0)
                for bar, k in zip(bars, n, strict=True):
                    if k:
                        ax.text(bar.get_x() + bar.get_width() / 2,
                                bar.get_y() + bar.get_height() / 2, str(k), ha="center",
                                va="center", fontsize=10, fontweight="bold",
                                color="0.15" if stale or status == "no chapter yet" else "white")
                left = [a + b for a, b in zip(left, n, strict=True)]
        ax.invert_yaxis()
        ax.set_title(label, fontsize=11, loc="left")
        ax.set_xlabel("claims", fontsize=10)
        ax.grid(False)
        ax.tick_params(axis="y", length=0, labelsize=11)
    handles = [Patch(color=COLOURS[s], label=s) for s in STATUSES]
    handles.append(Patch(facecolor="white", edgecolor="0.3", hatch="///",
                         label="stale (code changed since)"))
    fig.legend(handles=handles, loc="lower center", ncol=3, fontsize=9,
               bbox_to_anchor=(0.5, 0.0))
    fig.tight_layout(rect=(0, 0.1, 1, 1))
    path.parent.mkdir(parents=True, exist_ok=True)
    dpi = 130
    # its smallest text in the PNG's pixels, which the browser test scales to the width shown
    fig.savefig(path, dpi=dpi, metadata={
        TEXT_PX_KEY: f"{smallest_text_pt(fig) * dpi / 72:.1f}"})
    plt.close(fig)
    return path


def _whole(table: pd.DataFrame) -> pd.DataFrame:
    """The rows of whole claims (a table from ``status_table(parts=True)`` also has parts)."""
    return table[table["part"].isna()] if "part" in table else table


def _parts(table: pd.DataFrame) -> pd.DataFrame:
    """The rows of the parts of claims (none in a table without parts)."""
    return table[table["part"].notna()] if "part" in table else table.iloc[0:0]


def _profile_label(profile: str, kind: str = "profile") -> str:
    """A column's name at the head of a cell (a profile, or ``kind="column"``: words), shown
    only where the table is stacked into one column (a phone: ``_static/custom.css``)."""
    return f'<span class="attnbook-{kind}-label">{profile}</span> '


def grouped_parts(parts: pd.DataFrame) -> list[tuple]:
    """The parts of a claim as (status, [part names], measured, stability), parts that share
    their verdict and their words (a reason a part could not run, given for six of them) in
    one entry, in the order of their first part.

    >>> rows = pd.DataFrame({"part": ["a", "b", "c"], "status": ["not run"] * 2 + ["reproduced"],
    ...                      "measured": ["offline", "offline", "rank 5"]})
    >>> grouped_parts(rows)
    [('not run', ['a', 'b'], 'offline', ''), ('reproduced', ['c'], 'rank 5', '')]
    """
    out: dict = {}
    for _, q in parts.iterrows():
        key = (q["status"], str(q["measured"]), str(q.get("stability") or ""))
        out.setdefault(key, []).append(str(q["part"]))
    return [(status, names, measured, stability)
            for (status, measured, stability), names in out.items()]


def chapter_plans(notebooks_dir: Path | None = None) -> dict:
    """stem -> {"claims": the claim ids it records, "profiles": the profiles it defines,
    "cost": its ``.yml`` ``cost`` entries, "pilots": the profiles where it runs only its
    pilot}, for every chapter."""
    out = {}
    for nb in sorted(Path(notebooks_dir or paths.NOTEBOOKS).glob("*.ipynb")):
        spec = load_spec(nb)
        out[nb.stem] = {"claims": notebook_claims(nb),
                        "profiles": {p for p in PROFILES if spec.has_profile(p)},
                        "cost": dict(spec.cost or {}),
                        "pilots": {p for p, v in spec.profiles.items()
                                   if (v or {}).get("run_main") is False}}
    return out


def profile_sites(table: pd.DataFrame, plans: dict | None = None) -> dict[str, str]:
    """profile -> where its results were computed (the ledger entries' devices, claims counted
    per machine) and, for each chapter none of whose claims has a verdict there, why: what the
    profile would take (:func:`.sites.not_run_text`), or that it runs only its pilot there.
    ``plans``: :func:`chapter_plans`. MyST Markdown."""
    verdicts = [s for s in STATUSES if s not in UNRUN]
    plans = chapter_plans() if plans is None else plans
    whole = _whole(table)
    out = {}
    for p in shown_profiles(whole):
        at = whole[(whole["profile"] == p) & whole["status"].isin(verdicts)]
        text = (f"{counted(len(at), 'claim')} with a verdict, computed on "
                f"{escape(sites_text(list(at['device'])) or 'an unrecorded device')}"
                if len(at) else "no claim has a verdict")
        ran = set(at["id"])
        unrun, pilots = [], []
        for stem, plan in plans.items():
            if p not in plan["profiles"] or not plan["claims"] or ran & set(plan["claims"]):
                continue
            if p in plan["pilots"]:
                pilots.append(_chapter_link(stem))
            else:
                why = not_run_text(plan["cost"].get(p)).removeprefix("not run: ")
                unrun.append(f"{_chapter_link(stem)}: {escape(why)}")
        if unrun:
            text += f"; not run by {counted(len(unrun), 'chapter')}: " + "; ".join(unrun)
        if pilots:
            text += (f"; {counted(len(pilots), 'chapter')} only "
                     f"run{'s' if len(pilots) == 1 else ''} a pilot here: " + ", ".join(pilots))
        out[p] = text
    return out


def _sites_lines(table: pd.DataFrame, plans: dict | None) -> list[str]:
    """The paragraph on where each profile ran (:func:`profile_sites`), one item per profile."""
    return (["**Where each profile ran**, from the ledger's provenance (the device recorded "
             "with each verdict) and, for a chapter that has not run a profile, its `.yml` "
             "cost entry:", ""]
            + [f"- `{p}`: {text}." for p, text in profile_sites(table, plans).items()] + [""])


def _works(whole: pd.DataFrame):
    """(title, rows) of each work with claims in ``whole``, in the book's order."""
    for work, title in _WORK_TITLES.items():
        if (whole["work"] == work).any():
            yield title, whole[whole["work"] == work]


def _tally_lines(whole: pd.DataFrame, profiles: list, status_page: bool = True) -> list[str]:
    """Claims counted per verdict, per profile and per paper, effects apart from consistency
    checks: each badge is followed by the number of claims with that verdict."""
    label = (lambda text: _profile_label(text, "column")) if status_page else (lambda text: "")
    lines = ["| profile | effects (claims per verdict) | consistency checks (claims per "
             "verdict) |", "|---|---|---|"]
    for p in profiles:
        at = whole[whole["profile"] == p]
        lines.append(f"| `{p}` | {label('effects:')}"
                     f"{_count_cell(at[at['type'] == 'effect'])} | "
                     f"{label('consistency checks:')}"
                     f"{_count_cell(at[at['type'] == 'consistency'])} |")
    lines += ["", "Per paper (claims per verdict at each profile):", "",
              "| paper | claims | " + " | ".join(f"`{p}`" for p in profiles) + " |",
              "|---|---|" + "---|" * len(profiles)]
    for title, sub in _works(whole):
        ids = sub.drop_duplicates("id")
        claims = ", ".join(counted(n, what) for what, n in (
            (w, int((ids["type"] == t).sum())) for t, w in (("effect", "effect"),
                                                           ("consistency", "consistency check")))
            if n)
        cells = []
        for p in profiles:
            at = sub[sub["profile"] == p]
            cells.append(_profile_label(p) * status_page
                         + "<br>".join(f"{kind}: {_count_cell(at[at['type'] == t])}"
                                       for t, kind in (("effect", "effects"),
                                                       ("consistency", "checks"))
                                       if (at["type"] == t).any()))
        lines.append(f"| {escape(title)} | {claims} | " + " | ".join(cells) + " |")
    return lines + [""]


def _verdict_cell(r, unfinished: list | None = None, parts: pd.DataFrame | None = None,
                  profile: str = "", pilots: set | None = None, said: dict | None = None) -> str:
    """One claim at one profile; ``unfinished``: (notebook, results) of the chapters that check
    it and have current results of that profile stored (said where the claim is not run);
    ``pilots``: the (notebook, profile) pairs that run only their pilot; ``parts``: the rows of
    its parts at that profile, parts that share verdict and value in one line; ``said``: such
    groups already listed at a smaller profile of the same claim (filled here), which this one
    refers to instead."""
    txt = (_profile_label(profile) if profile else "") + f"{{verdict}}`{r['status']}`"
    if r["status"] == "not run" and unfinished:
        txt += " (" + "; ".join(
            f"`{nb}` runs only its pilot here ({n} results stored), and its chapter says what "
            "the pilot measured and why no sweep follows" if (nb, profile) in (pilots or ())
            else f"{n} results of `{nb}` stored by a run that recorded no verdict, such as one "
            "stopped by its time budget; the next run resumes from them"
            for nb, n in unfinished) + ")"
    stale = r.get("stale") and r["status"] not in UNRUN
    if stale:
        txt += " {verdict}`stale`"
    if parts is not None and len(parts):
        txt += f" {escape(r['measured'])}:"
        said = {} if said is None else said
        for status, names, measured, stability in grouped_parts(parts):
            txt += f"<br>{{verdict}}`{status}` "
            key = (status, tuple(names), measured)
            if len(names) == 1:
                txt += (f"**{escape(names[0])}**: {escape(measured)}"
                        + (f" (stability {escape(stability)})" if stability else ""))
            elif key in said:  # the same parts for the same reason at a smaller profile
                txt += f"**{len(names)} parts**: as at `{_code(said[key])}`"
            else:
                said[key] = profile
                txt += f"**{len(names)} parts** ({escape(', '.join(names))}): {escape(measured)}"
    elif r["measured"]:
        txt += f" {escape(r['measured'])}"
    if r.get("stability") and parts is None:
        txt += f" (stability {escape(r['stability'])})"
    if r["notebook"]:
        dirty = f" {r['dirty']}" if r.get("dirty") else ""  # 'dirty (diff <hash>)'
        where = ", ".join(device_sites(r["device"]))
        txt += f" <br>`{_code(r['commit'])}`{escape(dirty)}, {escape(where)}"
    if stale:
        txt += f"; changed since: {escape(r['stale'])}"
    if r.get("damaged"):  # its verdict is not used: python -m attnbook stale lists the file
        txt += f" {{verdict}}`stale` {escape(r['damaged'])}"
    return txt


def _count_cell(sub: pd.DataFrame) -> str:
    """The verdicts of some claims as counted badges: ``{verdict}`reproduced` 5 · ...``."""
    n = sub["status"].value_counts()
    return " · ".join(f"{{verdict}}`{s}` {int(n[s])}" for s in STATUSES if n.get(s, 0)) or "none"


def _figure_lines(path: str, name: str, caption: str) -> list[str]:
    """An overview figure of a generated page, its caption as alt text."""
    alt = " ".join(re.sub(r"[*`$]", "", caption).split())  # no emphasis marks, no math signs
    return [f":::{{figure}} {path}", f":name: {name}", f":alt: {alt}", ":width: 100%",
            ":class: attnbook-overview", "", caption, ":::", ""]


def status_markdown(table: pd.DataFrame, executed: Path, overview: str | None = OVERVIEW,
                    checks: dict | None = None, stored: dict | None = None,
                    plans: dict | None = None) -> str:
    """The reproduction status page: the overview figure, the verdicts counted, then per work
    each claim's paper value beside its verdict at every profile shown, linked to where a
    chapter checks it.

    ``table``: :func:`~attnbook.book.claims.status_table`, with its parts or without;
    ``stored``: :func:`.store.stored_counts`, for what an unfinished run has stored;
    ``plans``: :func:`chapter_plans`.
    """
    checks = claim_checks() if checks is None else checks
    plans = chapter_plans() if plans is None else plans
    pilots = {(stem, p) for stem, plan in plans.items() for p in plan["pilots"]}
    stored = stored or {}
    whole = _whole(table)
    profiles = shown_profiles(whole)
    lines = ["# Reproduction status", ""]
    if overview:
        lines += _figure_lines(overview, "status-overview", (
            "Claims per profile, coloured by verdict: the papers' findings (*effects*, top) and "
            "the proven bounds checked as *consistency checks* (bottom). Hatched: *stale*, "
            "computed by code that has changed since."))
    lines += ["Each claim is an *effect* (the paper's finding, which could be false at this "
              "book's scale) or a *consistency* check (a proven bound: a correct computation "
              "cannot violate it, so it tests the code more than the paper). They are counted "
              "apart, each badge followed by the number of claims with that verdict.", ""]
    lines += _tally_lines(whole, profiles)
    if "stale" in whole:
        per = whole[(whole["stale"].fillna("") != "") & ~whole["status"].isin(UNRUN)][
            "profile"].value_counts()
        if len(per):
            lines += ["**Stale** (code changed since): " + ", ".join(
                f"{counted(int(per[p]), 'claim')} at `{p}`" for p in PROFILES if p in per.index)
                + ".", ""]
    lines += _sites_lines(table, plans)
    words = {"ci": "`ci`: seconds, a smoke test", "cpu": "`cpu`: minutes per chapter",
             "long": "`long`: hours per chapter, in the paper's regime",
             "full": "`full`: the closest to the paper's sizes"}
    lines += ["Every figure, table and theorem of the four works, with the paper's value and "
              "what this book measured at each profile ("
              + "; ".join(words[p] for p in profiles) + "; where each ran is listed above). "
              "A claim is {verdict}`reproduced` only when the criterion listed under its table "
              "holds for the measured value; {verdict}`not reproduced` gives the value "
              "measured; {verdict}`not testable` means the measurement does not meet the "
              "premise the criterion states (the paper's regime, or an effect nothing measured "
              "could show), so it neither reproduces nor refutes the claim; "
              "{verdict}`fragile` means the criterion holds but not on every resample of its "
              "evidence (each seed of the trained models left out in turn, or a bootstrap of "
              "random draws), so it is not counted as reproduced; a verdict from trained "
              f"models needs at least {MIN_SEEDS} seeds, and with fewer it is "
              "{verdict}`not testable`; the stability share beside a verdict says how many "
              "resamples agree with it; "
              "{verdict}`partly run` means every part that ran reproduced but some "
              "parts could not run at that profile (their reasons are in the chapter); "
              "{verdict}`partly reproduced` means some parts of a claim of several parts "
              "reproduced and others did not or could not be tested: neither a reproduction "
              "nor a failure as a whole (each part is listed with its verdict); "
              "{verdict}`not run` means a chapter checks it but no run at that profile has; "
              "{verdict}`no chapter yet` means no chapter checks it. A claim of several parts "
              "(the cells of a table, the values of a parameter) lists each part with its "
              "verdict and value. "
              "{verdict}`stale` marks an entry computed by library code that has changed since "
              "(the changed modules are listed), or decided by a criterion changed since (its "
              "words, numbers or code, or, for a claim from trained models or random draws, "
              "the stability rule), or decided under values of its profile's parameters that "
              "its chapter's `.yml` has changed since (more steps, more seeds: the values are "
              "listed): the next build of its profile recomputes it, "
              "and it does not count as current; `dirty` marks a result computed from "
              "uncommitted changes. Each claim links to the cell of the chapter that checks "
              "it, and that cell links back here. Generated from `data/claims/` by "
              "`python -m attnbook report`.", ""]
    if "ci" not in profiles:
        lines += ["The `ci` profile (a smoke test run by `make test`) is left out: its results "
                  "are never committed, and this book has none.", ""]
    part_rows = _parts(table)
    for title, sub in _works(whole):
        share = 66 // len(profiles)  # the profiles' columns share what claim and paper leave
        lines += ["", f"## {title}", "",
                  # column widths (a LaTeX table of long cells; the PDF): a longtable, which
                  # breaks across pages, rather than tabulary, which overflows TeX's dimensions
                  "::::{table}", f":widths: 14 20 {' '.join([str(share)] * len(profiles))}",
                  ":class: longtable attnbook-status-table", "",
                  "| claim | paper | " + " | ".join(f"`{p}`" for p in profiles) + " |",
                  "|---|---|" + "---|" * len(profiles)]
        criteria = []
        for cid, rows in sub.groupby("id", sort=False):
            first = rows.iloc[0]
            where = [f"{{ref}}`{_code(nb)} § {_code(sec).replace('<', '').replace('>', '')} "
                     f"<{check_label(nb, cid)}>`"
                     for nb, sec in checks.get(cid, [])
                     if (executed / f"{nb}.ipynb").exists()]
            claim = (f"{{claim-row}}`{_code(cid)}` *{escape(first['type'])}* "
                     f"({escape(first['source'])})"
                     + (" <br>checked in " + ", ".join(where) if where else ""))
            cells, said = [], {}
            for p in profiles:
                parts = part_rows[(part_rows["id"] == cid) & (part_rows["profile"] == p)]
                cells.append(_verdict_cell(
                    rows[rows["profile"] == p].iloc[0],
                    [(nb, stored[nb, p]) for nb, _ in checks.get(cid, []) if stored.get((nb, p))],
                    parts, profile=p, pilots=pilots, said=said))
            lines.append(f"| {claim} | {_md_cell(paper_math(first['paper_value']))} | "
                         + " | ".join(cells) + " |")
            criteria.append(f"**{escape(cid)}**: {escape(first['criterion'])}")
        lines += ["::::", "", "Criteria:", ""] + [f"- {c}" for c in criteria]
    return "\n".join(lines) + "\n"


def _stale_by_run(table: pd.DataFrame | None, stored: dict) -> dict:
    """(notebook, profile) -> changed modules of its stale ledger entries and stored results
    (``stored``: :func:`stored_provenance`)."""
    out: dict = {}
    if table is not None and "stale" in table:
        for _, r in table[table["stale"].fillna("") != ""].iterrows():
            if r["notebook"]:
                out.setdefault((r["notebook"], r["profile"]), set()).update(
                    r["stale"].split(", "))
    for key, info in stored.items():
        if info["changed"]:
            out.setdefault(key, set()).update(info["changed"])
    return out


def current_counts(stored: dict) -> dict:
    """(notebook, profile) -> its intact, current stored results, from :func:`stored_provenance`
    (the counts of :func:`.store.stored_counts`, without walking the results again)."""
    return {key: info["results"] - info["stale"] - info["damaged"]
            for key, info in stored.items()}


def _add(items: list, item: str) -> None:
    if item and item not in items:
        items.append(item)


def stored_provenance(results: Path | None = None) -> dict:
    """(notebook, profile) -> where and how long its stored results were computed: ``results``
    (count), ``devices``, ``commits`` (with ``dirty``), ``compute_s`` (each unit's wall time
    once: the configurations of a group and the tables of one computation share theirs),
    ``first`` and ``last`` (dates), ``stale`` and ``damaged`` (counts), ``damaged_files``
    (paths under the notebook's profile folder) and ``changed`` (the modules that made its
    stale results stale, and "damaged result" for a damaged one)."""
    root = Path(results or paths.COMMITTED_RESULTS)
    out: dict = {}
    units: dict = {}
    for r in stored_results(root) if root.exists() else ():
        key = (r["notebook"], r["profile"])
        info = out.setdefault(key, {"results": 0, "devices": [], "commits": [],
                                    "compute_s": 0.0, "first": "", "last": "", "stale": 0,
                                    "damaged": 0, "damaged_files": [], "changed": []})
        info["results"] += 1
        record = r["record"]
        if r["problem"] or record is None:
            info["damaged"] += 1
            _add(info["changed"], "damaged result")
            info["damaged_files"].append(r["path"].relative_to(root / r["notebook"]
                                                               / r["profile"]).as_posix())
            continue
        info["stale"] += bool(r["changed"])
        for module in r["changed"] or ():
            _add(info["changed"], module)
        for d in [record.get("device", "")] + [
                s.get("device", "") for s in record.get("earlier_sittings") or []]:
            for site in device_sites(d):
                _add(info["devices"], site)
        _add(info["commits"], str(record.get("commit", "") or "unknown")
             + (" dirty" if record.get("dirty") else ""))
        wall = record.get("wall_s")
        if isinstance(wall, (int, float)) and (record.get("run_id"), wall) not in \
                units.setdefault(key, set()):
            units[key].add((record.get("run_id"), wall))
            info["compute_s"] += float(wall)
        day = str(record.get("time", ""))[:10]
        if day:
            info["first"] = min(info["first"] or day, day)
            info["last"] = max(info["last"], day)
    return out


def work_text(work: dict | None, status: str = "ok") -> str:
    """What a run computed (its manifest entry's ``work``): 'from cache', 'computed 12 of 36
    units', or '' (no cached table or sweep, or a run from before this was recorded). A run
    that did not end ``ok`` (one stopped on its time budget) says how many units it completed,
    since a unit it began and checkpointed is neither computed nor read from the cache.

    >>> work_text({"computed": 0, "total": 36}), work_text({"computed": 12, "total": 36})
    ('from cache', 'computed 12 of 36 units')
    >>> work_text({"computed": 0, "total": 2}, "partly run")
    'no unit completed of 2'
    """
    if not isinstance(work, dict) or not work.get("total"):
        return ""
    if status != "ok":
        done = int(work.get("computed") or 0)
        return (f"completed {done} of {work['total']} units" if done
                else f"no unit completed of {work['total']}")
    if not work.get("computed"):
        return "from cache"
    return f"computed {work['computed']} of {work['total']} units"


def execution_markdown(manifest: Path, table: pd.DataFrame | None = None, *,
                       provenance: dict | None = None) -> str:
    """The execution report: per chapter and profile, where and how long its stored results
    were computed beside this build's run of it, then the latest run of each notebook at each
    profile in this build's manifest. ``provenance``: the stored results'
    :func:`stored_provenance` (none: no section on them)."""
    lines = ["# Execution report", ""]
    entries, damaged = read_manifest(manifest)
    latest = {(e["notebook"], e["profile"]): e for e in entries
              if not e.get("overrides")}  # exploratory runs stand for no profile
    stored = provenance or {}
    if stored:
        lines += ["## Where the results were computed", "",
                  "Each chapter draws its numbers from results stored under "
                  "`data/results/<notebook>/<profile>/`, each with the commit, device and wall "
                  "time of the run that computed it. A build that finds them stored only "
                  "redraws the chapter (*this build*); the expensive part is the computation, "
                  "listed here per chapter and profile (compute time: the sum of the wall times "
                  "of its units, a unit being one configuration, one group of stacked models "
                  "or one table computation).", "",
                  "| chapter | profile | stored results: where, when, how long | this build |",
                  "|---|---|---|---|"]
        toc = toc_order()
        for (nb, prof), info in sorted(stored.items(), key=lambda kv: (
                toc.index(kv[0][0]) if kv[0][0] in toc else len(toc),
                PROFILES.index(kv[0][1]) if kv[0][1] in PROFILES else 9)):
            when = info["first"] + ("" if info["last"] == info["first"] else
                                    f" to {info['last']}")
            what = (f"{counted(info['results'], 'result')}, computed on "
                    f"{escape(', '.join(info['devices']))}"
                    f" at commit " + ", ".join(f"`{_code(c)}`" for c in info["commits"])
                    + (f", {escape(when)}" if when else "")
                    + f"; compute time {seconds_text(info['compute_s'])}")
            if info["stale"]:
                what += f"; **{info['stale']} stale** (code changed since)"
            if info["damaged"]:
                named = info.get("damaged_files") or []
                what += (f"; **{info['damaged']} damaged** ("
                         + ", ".join(_md_cell(f"`{_code(f)}`") for f in named[:3])
                         + (", ..." if len(named) > 3 else "")
                         + "; never used: `python -m attnbook stale` lists them)")
            e = latest.get((nb, prof))
            build = "not run in this build"
            if e is not None:
                work = work_text(e.get("work"), e.get("status", "ok"))
                build = (f"{escape(e['status'])} in {escape(seconds_text(e['wall_s']))}"
                         + (f", {escape(work)}" if work else ""))
            lines.append(f"| {_chapter_link(nb)} | `{_code(prof)}` | {what} | {build} |")
        lines.append("")
    lines += ["## This build's runs", "",
              "The latest run of each notebook at each profile on the machine that built this "
              "book, from `build/manifest.jsonl` (every run appends one line: parameters, "
              "commit, device, library versions, start and wall time, status, and what it "
              "computed against what it read from the cache).", ""]
    if not entries:
        return "\n".join(lines + ["No notebook has been run yet."]) + "\n"
    stale = _stale_by_run(table, stored)
    lines += ["| notebook | profile | status | wall time (s) | device | commit | started |",
              "|---|---|---|---|---|---|---|"]
    for (nb, prof), e in sorted(latest.items()):
        status = escape(e["status"]) + (f": {escape(e['error'])}" if e.get("error") else "")
        work = work_text(e.get("work"), e.get("status", "ok"))
        if work:
            status += f" ({escape(work)})"
        if (nb, prof) in stale:
            status += f"; results **stale** (changed: {escape(', '.join(sorted(stale[nb, prof])))})"
        commit = str(e.get("commit", "")) + (" dirty" + (f" (diff {e['diff_sha256']})"
                                            if e.get("diff_sha256") else "")
                                if e.get("dirty") else "")
        lines.append(f"| {_name(nb)} | `{_code(prof)}` | {status} | {escape(e['wall_s'])} | "
                     f"{escape(e.get('device', ''))} | {escape(commit)} | "
                     f"{escape(e.get('start', ''))} |")
    versions = entries[-1].get("versions", {})
    versions = versions if isinstance(versions, dict) else {}
    lines += ["", "Library versions of the latest run: "
              + ", ".join(f"{escape(k)} {escape(v)}" for k, v in versions.items()) + ".",
              "", f"{len(entries)} runs recorded in all"
              + (f"; {damaged} unreadable lines of {manifest.name} skipped." if damaged else ".")]
    return "\n".join(lines) + "\n"


def _chapter_link(notebook: str) -> str:
    return f"{{doc}}`{notebook} <../{chapter_doc(notebook)}>`" if (
        paths.ROOT / f"{chapter_doc(notebook)}.ipynb").exists() else _name(notebook)


# -- the home page's summary ------------------------------------------------------------------
def _claim_lines(rows) -> list[str]:
    """One line per claim of ``rows``: a badge per profile, then where the claim comes from."""
    by_id: dict = {}
    for r in rows:
        by_id.setdefault(r["id"], []).append(r)
    return ["- " + " ".join(f"{{claim}}`{_code(r['id'])}@{_code(r['profile'])}`" for r in rs)
            + f" {escape(rs[0]['source'])}" for rs in by_id.values()]


def summary_markdown(table: pd.DataFrame, overview: str | None = f"../status/{OVERVIEW}",
                     pdf: str | None = None, plans: dict | None = None) -> str:
    """What the book found, for its home page: the overview figure, the verdicts counted, where
    each profile ran (``plans``: :func:`chapter_plans`), the effects that reproduced at the
    largest scale run, in part (with the parts that did), did not or could not be tested, each
    a badge linking to its row of the status page; ``pdf``: the book as one PDF (``make pdf``).
    Links are relative to ``book/``."""
    whole = _whole(table)
    lines = []
    if overview:
        lines += _figure_lines(overview, "home-overview", (
            "What this book found: the claims of the four works per profile, coloured by "
            "verdict, the papers' findings (effects, top) apart from the proven bounds checked "
            "as consistency checks (bottom)."))
    lines += _tally_lines(whole, shown_profiles(whole), status_page=False)
    lines += _sites_lines(table, plans)
    if pdf:
        lines += [f"The whole book is also one PDF: {{download}}`attnbook.pdf <{pdf}>` (from "
                  "jupyter-book's LaTeX builder).", ""]
    effects = whole[whole["type"] == "effect"]
    ran = [r for _, r in effects[~effects["status"].isin(UNRUN)].iterrows()]
    order = {p: i for i, p in enumerate(PROFILES)}
    best = {}  # the largest profile at which each effect has a verdict
    for r in ran:
        if r["id"] not in best or order[r["profile"]] > order[best[r["id"]]["profile"]]:
            best[r["id"]] = r
    strongest = sorted((r for r in best.values() if r["status"] == "reproduced"),
                       key=lambda r: (-order[r["profile"]], r["id"]))
    if strongest:
        lines += ["**The papers' findings that reproduced**, each at the largest scale this "
                  "book ran it (a badge links to the claim's row of the status page, with the "
                  "value measured and the chapter that checks it):", "",
                  *_claim_lines(strongest), ""]

    def at(status):
        return sorted((r for r in ran if r["status"] == status),
                      key=lambda r: (r["id"], order[r["profile"]]))

    # a claim some of whose parts reproduced and others not: at each profile where it did, and
    # the parts that reproduced at the largest of them (the values of a parameter, not the
    # many cells of a table, which are counted)
    partial = at(PARTLY_REPRODUCED)
    if partial:
        parts = _parts(table)
        lines += ["**What reproduced in part**: claims of several parts some of which "
                  "reproduced and others did not, at each profile where they did; the parts "
                  "that reproduced at the largest of them:", ""]
        for line, cid in zip(_claim_lines(partial), dict.fromkeys(r["id"] for r in partial),
                             strict=True):
            top = [r for r in partial if r["id"] == cid][-1]
            mine = parts[(parts["id"] == cid) & (parts["profile"] == top["profile"])]
            good = mine[mine["status"] == "reproduced"]
            if len(mine) > 4 or good.empty:
                line += f"; at `{_code(top['profile'])}`: {escape(top['measured'])}"
            else:
                line += "".join(f"; at `{_code(top['profile'])}` part {escape(q['part'])} "
                                f"reproduced: {escape(q['measured'])}"
                                for _, q in good.iterrows())
            lines.append(line)
        lines.append("")
    failed = at("not reproduced")
    if failed:
        lines += ["**What did not reproduce**, at each profile where it did not:", "",
                  *_claim_lines(failed), ""]
    untestable = [r for r in ran if r["status"] == "not testable"]
    if untestable:
        lines += ["**What this book's runs could not test** (the measurement does not meet the "
                  "premise of the claim's criterion, or has fewer seeds than a verdict from "
                  "trained models needs):", "", *_claim_lines(untestable), ""]
    return "\n".join(lines) + "\n"


STATUS = "status"  # the generated pages' folder, at the repository root (git-ignored)
SUMMARY = "summary.md"  # the home page's generated part (status/summary.md)


def write_pages(build_dir: Path | None = None, root: Path | None = None) -> list[Path]:
    """Write status/reproduction_status.md, status/execution_report.md and status/summary.md."""
    build = Path(build_dir or paths.BUILD)
    pages = Path(root or paths.ROOT) / STATUS
    pages.mkdir(parents=True, exist_ok=True)
    out = [pages / "reproduction_status.md", pages / "execution_report.md", pages / SUMMARY]
    table = status_table(parts=True)
    plans = chapter_plans()
    overview_figure(table, pages / OVERVIEW)
    stored = stored_provenance(paths.COMMITTED_RESULTS)  # one walk of the stored results
    out[0].write_text(status_markdown(table, build / "executed", stored=current_counts(stored),
                                      plans=plans))
    out[1].write_text(execution_markdown(build / "manifest.jsonl", _whole(table),
                                         provenance=stored))
    pdf = build / "pdf" / "_build" / "latex" / "attnbook.pdf"  # make pdf, before the HTML
    out[2].write_text(summary_markdown(table, pdf=f"../{pdf.relative_to(pages.parent).as_posix()}"
                                       if pdf.exists() and pdf.is_relative_to(pages.parent)
                                       else None, plans=plans))
    return out
