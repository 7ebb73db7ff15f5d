"""Generated book pages: the reproduction status (from the ledger) and the execution report
(from the manifest). Written to ``status/`` (git-ignored, at the repository root) before the
book is built, so they are published as ``status/reproduction_status.html`` and
``status/execution_report.html``, next to the ``chapters/`` they link to.

The status page opens with an overview figure (``status/overview.png``: claims per profile,
coloured by verdict, effects apart from consistency checks), then gives per work one table
row per claim: its anchor ``#claim-<id>`` (chapters' badges link there), a link to each
chapter cell that checks it (:func:`claim_checks`), the paper's value with its formulas as
math (:func:`paper_math`), and a verdict badge per profile (the ``{verdict}`` and
``{claim-row}`` roles of :mod:`attnbook.book.figures`).

Both mark what no longer stands for the code as it is: a ledger entry or stored result whose
library modules changed since it was computed is **stale** (with the modules), never shown
as current; one computed from a tree with uncommitted changes says ``dirty`` (with the hash
of its diff).
"""

import json
import re
from pathlib import Path

import pandas as pd

from .. import paths
from .claims import PROFILES, STATUSES, recorded_ids, status_table
from .figures import badge_status, check_label
from .provenance import short_device
from .publish import chapter_doc
from .store import stored_counts

__all__ = ["write_pages", "status_markdown", "execution_markdown", "overview_figure",
           "paper_math", "claim_checks", "short_device"]

_WORK_TITLES = {
    "levine2020": "Depth-to-width interplay (Levine et al. 2020)",
    "wies2021": "Vocabulary bottleneck (Wies et al. 2021)",
    "bruna2024": "Rank versus heads (Bruna's talk: Zweig-Bruna 2022, Amsel-Yehudai-Bruna 2024)",
    "mahdavi2024": "Memorization capacity (Mahdavi et al. 2024)",
}
# the verdicts' colours, in the overview figure and on the badges (_static/custom.css);
# "stale": a result that ran but whose code has changed since (hatched in the figure)
COLOURS = {"reproduced": "#2e7d32", "not reproduced": "#c62828", "not testable": "#1565c0",
           "partly run": "#ef6c00",
           "stale": "#6a1b9a", "not run": "#9e9e9e", "no chapter yet": "#d9d9d9"}
OVERVIEW = "overview.png"


def _cell(text) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _link(notebook: str, executed: Path) -> str:
    if notebook and (executed / f"{notebook}.ipynb").exists():
        return f"[{notebook}](../{chapter_doc(notebook)}.ipynb)"  # status/ -> chapters/
    return _cell(notebook)


# -- the paper's values as math ----------------------------------------------------------------
_MATH_WORDS = {"log": r"\log", "log3": r"\log_3", "sep": r"\operatorname{sep}",
               "rank": r"\operatorname{rank}", "min": r"\min", "max": r"\max",
               "floor": "floor", "Theta": r"\Theta", "eps": r"\epsilon", "infinity": r"\infty"}
_ALWAYS_MATH = {"log", "sep", "eps", "infinity", "Theta"}  # math wherever they stand
_OPERATORS = {"<=", ">=", ">~", "~", "->", "=", "<", ">", "+", "-", "x", "/"}
_STRONG = re.compile(r"[\^_=<>/]|[A-Za-z0-9)]\(")


def _token_kind(token: str) -> str:
    """'strong' (surely a formula), 'weak' (a formula's part: a variable, a number, an
    operator) or 'word'."""
    if token in _OPERATORS:
        return "weak"
    bare = token.rstrip(",")
    for run in re.finditer(r"(?<![_A-Za-z])([A-Za-z]+)\d*(\(?)", bare):
        w, call = run.group(1), run.group(2)
        if len(w) > 1 and w not in _ALWAYS_MATH and not (call and w in _MATH_WORDS):
            return "word"
    if _STRONG.search(bare) or any(w in _ALWAYS_MATH for w in re.findall(r"[A-Za-z]+", bare)):
        return "strong"
    core = bare.strip("()")
    if re.fullmatch(r"[A-HJ-Za-z]\d*|\d+(\.\d+)?", core) and core not in ("a", "A"):
        return "weak"
    return "word"


def _group(text: str, i: int) -> int:
    """Index just past the parenthesized group that starts at ``text[i] == '('``."""
    depth = 0
    for j in range(i, len(text)):
        depth += {"(": 1, ")": -1}.get(text[j], 0)
        if depth == 0:
            return j + 1
    return len(text)


def _top_split(text: str) -> list[str]:
    parts, depth, last = [], 0, 0
    for j, ch in enumerate(text):
        depth += {"(": 1, ")": -1}.get(ch, 0)
        if ch == "," and depth == 0:
            parts.append(text[last:j])
            last = j + 1
    return parts + [text[last:]]


def _tex(span: str) -> str:
    """An ASCII formula in TeX: ``(d/r)^(1/eps)`` -> ``(d/r)^{1/\\epsilon}`` and so on."""
    out, i = [], 0
    while i < len(span):
        ch = span[i]
        if span.startswith("((", i):  # multiset coefficient ((n, k))
            end = _group(span, i)
            inner = span[i + 2:end - 2]
            parts = _top_split(inner)
            if span[end - 2:end] == "))" and len(parts) == 2:
                top, bottom = (_tex(part.strip()) for part in parts)
                out.append(r"\left(\!\!\binom{" + top + "}{" + bottom + r"}\!\!\right)")
                i = end
                continue
        if ch == "^":
            j = i + 1
            if j < len(span) and span[j] == "(":
                end = _group(span, j)
                out.append("^{" + _tex(span[j + 1:end - 1]) + "}")
            else:
                m = re.match(r"[A-Za-z0-9]+(_[A-Za-z0-9]+)?(\([^()]*\))?", span[j:])
                end = j + (m.end() if m else 0)
                out.append("^{" + _tex(span[j:end]) + "}")
            i = end
            continue
        if ch == "_":
            m = re.match(r"[A-Za-z0-9]+", span[i + 1:])
            end = i + 1 + (m.end() if m else 0)
            out.append("_{" + span[i + 1:end] + "}")
            i = end
            continue
        m = re.match(r"[A-Za-z]+\d*", span[i:])
        if m and (i == 0 or not span[i - 1].isalnum()):
            word = m.group()
            if word == "floor" and span[i + len(word):i + len(word) + 1] == "(":
                end = _group(span, i + len(word))
                out.append(r"\lfloor " + _tex(span[i + len(word) + 1:end - 1]) + r" \rfloor")
                i = end
                continue
            if word == "Theta" and span[i + 5:i + 6] == "~":
                out.append(r"\tilde{\Theta}")
                i += 6
                continue
            if word == "x" and span[i - 1:i] == " " and span[i + 1:i + 2] == " ":
                out.append(r"\times")
            else:
                out.append(_MATH_WORDS.get(word, word) + (" " if word in _MATH_WORDS
                                                          and word != "floor" else ""))
            i += len(word)
            continue
        for op, tex in (("<=", r"\le "), (">=", r"\ge "), (">~", r"\gtrsim "), ("->", r"\to "),
                        ("~", r"\sim ")):
            if span.startswith(op, i):
                out.append(tex)
                i += len(op)
                break
        else:
            out.append({"%": r"\%", "{": r"\{", "}": r"\}"}.get(ch, ch))
            i += 1
    return re.sub(r" +", " ", "".join(out)).strip()


def _math_run(run: list, kinds: list) -> list:
    """Tokens with no word among them: the formula in ``$...$``, operators at its ends and an
    unmatched opening parenthesis left as text."""
    lo, hi = 0, len(run)
    while lo < hi and run[lo] in _OPERATORS:
        lo += 1
    while hi > lo and run[hi - 1] in _OPERATORS:
        hi -= 1
    if lo >= hi or "strong" not in kinds[lo:hi]:
        return run
    core = " ".join(run[lo:hi])
    if core.count("(") > core.count(")"):  # "V (V=500": the parenthesis opens a remark
        for i in range(hi - 1, lo - 1, -1):
            if run[i].startswith("(") and i > lo:
                rest = run[i][1:]
                after = _math_run([rest, *run[i + 1:]], [_token_kind(rest), *kinds[i + 1:]])
                return _math_run(run[:i], kinds[:i]) + ["(" + after[0], *after[1:]]
    comma = core.endswith(",")
    return run[:lo] + [f"${_tex(core.removesuffix(','))}$" + ("," if comma else "")] + run[hi:]


def paper_math(text: str) -> str:
    """The paper's value as MyST Markdown, its formulas as inline math (``$...$``), its words
    as they are.

    >>> paper_math("H >~ (d/r)^(1/eps)")
    '$H \\\\gtrsim (d/r)^{1/\\\\epsilon}$'
    >>> paper_math("degree 3^L; C(L)=(3^L-1)/2")
    'degree $3^{L}$; $C(L)=(3^{L}-1)/2$'
    >>> paper_math("monotone increasing in n")
    'monotone increasing in n'
    """
    out = []
    for seg in re.split(r"(; |: )", str(text)):
        if seg in ("; ", ": "):
            out.append(seg)
            continue
        tokens = seg.split(" ")
        kinds = [_token_kind(t) for t in tokens]
        pieces, k = [], 0
        while k < len(tokens):
            if kinds[k] == "word":
                pieces.append(tokens[k])
                k += 1
                continue
            j = k
            while j < len(tokens) and kinds[j] != "word":
                j += 1
                if tokens[j - 1].endswith(",") and tokens[j - 1].count("(") <= tokens[
                        j - 1].count(")") and " ".join(tokens[k:j]).count("(") <= " ".join(
                        tokens[k:j]).count(")"):
                    break  # a comma between formulas, not inside one
            pieces += _math_run(tokens[k:j], kinds[k:j])
            k = j
        out.append(" ".join(pieces))
    return "".join(out)


# -- where each claim is checked ---------------------------------------------------------------
def _plain(title: str) -> str:
    """A heading as plain text (a reference's words): math delimiters and TeX commands out."""
    text = re.sub(r"\\([A-Za-z]+)", r"\1", title.replace("$", ""))
    return " ".join(re.sub(r"[{}`<>*\\]", "", text).split())


def claim_checks(notebooks: Path | None = None) -> dict:
    """claim id -> [(notebook, section title)] of the code cells that record it, in book order
    (the section: the last heading before the cell)."""
    out: dict = {}
    for nb in sorted(Path(notebooks or paths.NOTEBOOKS).glob("*.ipynb")):
        section = nb.stem
        for cell in json.loads(nb.read_text()).get("cells", []):
            text = "".join(cell.get("source", ""))
            if cell.get("cell_type") == "markdown":
                heads = re.findall(r"^#{1,6}\s+(.+)$", text, flags=re.M)
                if heads:
                    section = _plain(heads[-1])
            elif cell.get("cell_type") == "code":
                for cid in recorded_ids(text):
                    if (nb.stem, section) not in out.setdefault(cid, []) and \
                            all(n != nb.stem for n, _ in out[cid]):
                        out[cid].append((nb.stem, section))
    return out


def _verdict_counts(table: pd.DataFrame) -> pd.DataFrame:
    """(profile, type) x (status, stale) counts: ``stale`` True for a result that ran but whose
    code has changed since."""
    stale = table.apply(badge_status, axis=1) == "stale"
    return (table.assign(is_stale=stale).groupby(["profile", "type", "status", "is_stale"])
            .size().unstack(["status", "is_stale"], fill_value=0))


def overview_figure(table: pd.DataFrame, path: Path) -> Path:
    """The status page's overview: claims per profile as bars coloured by verdict (hatched
    where stale), effects and consistency checks side by side."""
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch

    from .plotting import style

    style()
    counts = _verdict_counts(table)

    def count(p, kind, status, stale):
        key = (status, stale)
        return int(counts.loc[(p, kind), key]) if (p, kind) in counts.index \
            and key in counts.columns else 0

    fig, axes = plt.subplots(1, 2, figsize=(10, 2.6))
    for ax, kind, label in zip(axes, ("effect", "consistency"),
                               ("effects (the papers' findings)",
                                "consistency checks (proven bounds)"), strict=True):
        left = [0] * len(PROFILES)
        for status in STATUSES:
            for stale in (False, True):
                n = [count(p, kind, status, stale) for p in PROFILES]
                bars = ax.barh(list(PROFILES), n, left=left, color=COLOURS[status],
                               edgecolor="white", linewidth=0.8, hatch="///" if stale else None,
                               alpha=0.55 if stale else 1.0)
                for bar, k in zip(bars, n, strict=True):
                    if k:
                        ax.text(bar.get_x() + bar.get_width() / 2,
                                bar.get_y() + bar.get_height() / 2, str(k), ha="center",
                                va="center", fontsize=8, fontweight="bold",
                                color="0.15" if stale or status == "no chapter yet" else "white")
                left = [a + b for a, b in zip(left, n, strict=True)]
        ax.invert_yaxis()
        ax.set(title=label, xlabel="claims")
        ax.grid(False)
        ax.tick_params(axis="y", length=0)
    axes[0].set_ylabel("profile")
    handles = [Patch(color=COLOURS[s], label=s) for s in STATUSES]
    handles.append(Patch(facecolor="white", edgecolor="0.3", hatch="///",
                         label="stale (code changed since)"))
    fig.legend(handles=handles, loc="lower center", ncol=len(handles), fontsize=8,
               bbox_to_anchor=(0.5, -0.02))
    fig.tight_layout(rect=(0, 0.1, 1, 1))
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def _verdict_cell(r, unfinished: list | None = None) -> str:
    """One claim at one profile; ``unfinished``: (notebook, results) of the chapters that check
    it and have current results of that profile stored (said where the claim is not run)."""
    txt = f"{{verdict}}`{r['status']}`"
    if r["status"] == "not run" and unfinished:
        txt += " (" + ", ".join(f"{n} results of `{nb}`" for nb, n in unfinished) + " stored "
        txt += "by a run that recorded no verdict, such as one stopped by its time budget; "
        txt += "the next run resumes from them)"
    if r.get("stale") and r["status"] not in ("not run", "no chapter yet"):
        txt += " {verdict}`stale`"
    if r["measured"]:
        txt += f" {_cell(r['measured'])}"
    if r["notebook"]:
        dirty = f" {r['dirty']}" if r.get("dirty") else ""  # 'dirty (diff <hash>)'
        txt += f" <br>`{r['commit']}`{dirty}, {short_device(r['device'])}"
    if r.get("stale") and r["status"] not in ("not run", "no chapter yet"):
        txt += f"; changed since: {_cell(r['stale'])}"
    if r.get("damaged"):  # its verdict is not used: python -m attnbook stale lists the file
        txt += f" {{verdict}}`stale` {_cell(r['damaged'])}"
    return txt


def status_markdown(table: pd.DataFrame, executed: Path, overview: str | None = OVERVIEW,
                    checks: dict | None = None, stored: dict | None = None) -> str:
    """The reproduction status page: the overview figure, then per work each claim's paper
    value beside its verdict at every profile, each claim linked to where a chapter checks it.

    ``stored``: (notebook, profile) -> current results stored (:func:`.store.stored_counts`);
    a claim not run at a profile says what an unfinished run of its chapter has stored.
    """
    checks = claim_checks() if checks is None else checks
    stored = stored or {}
    lines = ["# Reproduction status", ""]
    if overview:
        lines += [f":::{{figure}} {overview}", ":name: status-overview",
                  ":alt: bars of claims per profile, coloured by verdict", ":width: 100%", "",
                  "Claims per profile, coloured by verdict: the papers' findings (*effects*, "
                  "left) and the proven bounds checked as *consistency checks* (right). "
                  "Hatched: *stale*, computed by code that has changed since.", ":::", ""]
    lines += ["Every figure, table and theorem of the four works, with the paper's value and "
              "what this book measured at each profile (`ci`: seconds on a CPU, a smoke test; "
              "`cpu`: minutes on a laptop; `long`: hours on a laptop, in the paper's regime; "
              "`full`: one GPU). "
              "A claim is {verdict}`reproduced` only when the criterion listed under its table "
              "holds for the measured value; {verdict}`not reproduced` gives the value "
              "measured; {verdict}`not testable` means the measurement does not meet the "
              "premise the criterion states (the paper's regime, or an effect nothing measured "
              "could show), so it neither reproduces nor refutes the claim; "
              "{verdict}`partly run` means every part that ran reproduced but some "
              "parts could not run at that profile (their reasons are in the chapter); "
              "{verdict}`not run` means a chapter checks it but no run at that profile has; "
              "{verdict}`no chapter yet` means no chapter checks it. "
              "{verdict}`stale` marks an entry computed by library code that has changed since "
              "(the changed modules are listed): the next build of its profile recomputes it, "
              "and it does not count as current; `dirty` marks a result computed from "
              "uncommitted changes. Each claim links to the cell of the chapter that checks "
              "it, and that cell links back here. Generated from `data/claims/` by "
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
            where = [f"{{ref}}`{nb} § {_cell(sec)} <{check_label(nb, cid)}>`"
                     for nb, sec in checks.get(cid, [])
                     if (executed / f"{nb}.ipynb").exists()]
            claim = (f"{{claim-row}}`{cid}` *{first['type']}* ({_cell(first['source'])})"
                     + (" <br>checked in " + ", ".join(where) if where else ""))
            cells = [_verdict_cell(rows[rows["profile"] == p].iloc[0],
                                   [(nb, stored[nb, p]) for nb, _ in checks.get(cid, [])
                                    if stored.get((nb, p))]) for p in PROFILES]
            lines.append(f"| {claim} | {_cell(paper_math(first['paper_value']))} | "
                         + " | ".join(cells) + " |")
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
    overview_figure(table, pages / OVERVIEW)
    out[0].write_text(status_markdown(table, build / "executed", stored=stored_counts()))
    out[1].write_text(execution_markdown(build / "manifest.jsonl", table, paths.COMMITTED_RESULTS))
    return out
