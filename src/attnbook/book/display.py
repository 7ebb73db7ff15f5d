"""How a chapter's results read in the book: tables as tables, verdicts as sentences, never raw
Python.

:func:`table_markdown` writes a table (a DataFrame, a ``Styler`` with its number formats, a
Series, a dict) as a MyST Markdown table: named columns, a meaningful index as the first columns,
numbers to four significant digits, a dash for a missing value; :func:`install_formatters` makes
it what a cell's result shows (``ab.start`` calls it). :func:`verdict_markdown` is a claim
check's verdict as a coloured admonition. The book renders ``text/markdown`` outputs as MyST
(``_config.yml``), so the roles of :mod:`attnbook.book.figures` work inside them.
"""

import math
import numbers
import re

import pandas as pd
from pandas.io.formats.style import Styler

from .claims import (  # noqa: F401 - the pages show them
    NOT_TESTABLE,
    PARTLY_REPRODUCED,
    UNRUN,
    combined_status,
    short_of_seeds,
    shown_profiles,
)
from .text import escape, paper_math

__all__ = ["Table", "table_markdown", "FOLD_ROWS", "install_formatters", "verdict_markdown",
           "combined_status", "escape", "DASH", "MISSING_NOTE", "verdict_class", "banner"]

DASH = "—"
MISSING_NOTE = "no value: the quantity does not exist for that row (not computed there, or " \
               "undefined, such as a spread over a single seed)"
FOLD_ROWS = 15  # a longer table (per seed, per configuration) is folded under its summary
MANY_PARTS = 6  # a verdict with more parts lists those that did not reproduce, the rest folded
FAILED_FIRST = {"not reproduced": 0, "not testable": 1, "fragile": 2}  # in that order, then others
_UNIT_SUFFIXES = {"_s": "s", "_ms": "ms", "_min": "min", "_pct": "%", "_mb": "MB"}


def _header(name, units: dict | None = None) -> str:
    """A column name for a reader: ``d_h`` -> ``$d_h$``, ``wall_s`` -> ``wall (s)``,
    ``fitted_min`` -> ``fitted min``; ``units`` adds ``(unit)``."""
    if isinstance(name, tuple):
        name = " · ".join(str(n) for n in name if str(n))
    label = str(name)
    unit = (units or {}).get(label)
    if unit is None:
        for suffix, u in _UNIT_SUFFIXES.items():
            if label.endswith(suffix) and len(label) > len(suffix):
                label, unit = label[: -len(suffix)], u
                break
    if re.fullmatch(r"[A-Za-z]_\{?[A-Za-z0-9]{1,3}\}?", label):
        text = f"${label}$"
    elif "$" in label:
        text = label  # the chapter wrote math
    else:
        text = escape(label.replace("_", " "))
    return text + (f" ({escape(unit)})" if unit else "")


def _missing(value) -> bool:
    """None, NaN, pd.NA or NaT (a list or an array is a value)."""
    if value is None:
        return True
    if isinstance(value, (list, tuple, dict, set)) or getattr(value, "shape", ()) != ():
        return False

    try:
        return bool(pd.isna(value))
    except (TypeError, ValueError):
        return False


def _is_bool(value) -> bool:
    return isinstance(value, bool) or type(value).__name__ == "bool_"


def fmt_number(value) -> str:
    """A number as a reader reads it: integers whole (in groups of three digits from 10,000
    on), others to four significant digits.

    >>> [fmt_number(v) for v in (3, 50000.0, 0.98765, 1.5e-7, 1969, True)]
    ['3', '50,000', '0.9877', '1.5e-07', '1969', 'yes']
    """
    if _is_bool(value):
        return "yes" if value else "no"
    v = value
    if not isinstance(value, numbers.Integral):
        v = float(value)
        if math.isinf(v):
            return "∞" if v > 0 else "−∞"
        if not (v.is_integer() and abs(v) < 1e15):
            return f"{v:.4g}"
    n = int(v)
    return f"{n:,}" if abs(n) >= 10_000 else str(n)


def _cell(value, shown: str | None = None) -> tuple[str, bool]:
    """(Markdown of one cell, whether it is a missing value); ``shown``: the Styler's text."""
    if _missing(value):
        return DASH, True
    if _is_bool(value):
        return fmt_number(value), False  # yes / no, whatever format the column has
    if shown is not None:
        return escape(shown), False
    if isinstance(value, numbers.Number):
        return fmt_number(value), False
    if isinstance(value, (list, tuple)):
        return escape(", ".join(fmt_number(v) if isinstance(v, numbers.Number) else str(v)
                                for v in value)), False
    return escape(value), False


def _index_columns(df):
    """(the frame with a meaningful index moved into columns and a default one dropped, how
    many columns the index became)."""

    index = df.index
    names = [n if n is not None else "" for n in index.names]
    if (isinstance(index, pd.RangeIndex) and index.start == 0 and index.step == 1
            and index.name is None) or (all(n == "" for n in names) and index.nlevels == 1
                                        and list(index) == list(range(len(index)))):
        return df.reset_index(drop=True), 0  # 0..N-1
    flat = df.copy()
    flat.index = index.set_names([n or f"level_{i}" for i, n in enumerate(names)])
    return flat.reset_index(), index.nlevels


def _frame_rows(df, formats=None, units=None):
    """(headers, rows, any missing) of a DataFrame; ``formats``: (row, col) -> formatter."""
    headers = ["" if not isinstance(c, tuple) and re.fullmatch(r"level_\d+|", str(c))
               else _header(c, units) for c in df.columns]
    rows, missing = [], False
    values = df.to_numpy(dtype=object)
    for i in range(values.shape[0]):
        row = []
        for j in range(values.shape[1]):
            shown = None
            if formats is not None and (i, j) in formats:
                try:
                    shown = str(formats[i, j](values[i, j]))
                except Exception:  # noqa: BLE001 - a format that does not apply: the plain value
                    shown = None
                if shown is not None and _styler_default(values[i, j], shown):
                    shown = None  # a column the chapter did not format: formatted as numbers are
            text, gap = _cell(values[i, j], shown)
            missing |= gap
            row.append(text)
        rows.append(row)
    return headers, rows, missing


def _styler_default(value, shown: str) -> bool:
    """Whether ``shown`` is a Styler's default rendering of ``value`` (no format given)."""

    if isinstance(value, bool) or not isinstance(value, numbers.Number):
        return False
    precision = pd.get_option("styler.format.precision")
    return shown in (f"{value:.{precision}f}", str(value))


def _styler_rows(styler, units=None):
    hidden = set(getattr(styler, "hidden_columns", []) or [])
    keep = [j for j in range(styler.data.shape[1]) if j not in hidden]
    formats = {(int(i), keep.index(int(j))): f
               for (i, j), f in getattr(styler, "_display_funcs", {}).items() if int(j) in keep}
    frame = styler.data.iloc[:, keep]
    if all(getattr(styler, "hide_index_", [False]) or [False]):
        return _frame_rows(frame.reset_index(drop=True), formats, units)
    flat, levels = _index_columns(frame)
    return _frame_rows(flat, {(i, j + levels): f for (i, j), f in formats.items()}, units)


def _as_frame(obj):
    """A dict, a list of row dicts or a Series as a DataFrame (None: not a table)."""

    if isinstance(obj, pd.Series):
        return obj.to_frame(name=obj.name if obj.name is not None else "value")
    if isinstance(obj, (list, tuple)) and obj and all(isinstance(r, dict) for r in obj):
        return pd.DataFrame(list(obj))  # rows
    if isinstance(obj, dict) and obj:
        values = list(obj.values())
        if all(isinstance(v, dict) for v in values):
            frame = pd.DataFrame.from_dict(obj, orient="index")
            frame.index.name = frame.index.name or ""
            return frame
        return pd.DataFrame({"quantity": [str(k) for k in obj], "value": [
            ", ".join(map(str, v)) if isinstance(v, (list, tuple)) else v for v in values]})
    return None


def table_markdown(obj, *, units: dict | None = None, missing: str | None = None,
                   max_rows: int = 200) -> str:
    """A DataFrame, Styler, Series, dict or list of row dicts as a MyST Markdown table.

    ``units``: column name -> unit, shown as ``name (unit)``; ``missing``: what a dash means
    in this table (default :data:`MISSING_NOTE`). A table of more than :data:`FOLD_ROWS` rows
    is folded in a dropdown under a line naming its rows and columns, so that it does not push
    the page's argument out of view.

    >>> import pandas as pd
    >>> frame = pd.DataFrame({"d_h": [1, 2], "wall_s": [0.5, float("nan")]})
    >>> print(table_markdown(frame, missing="not computed"))
    | $d_h$ | wall (s) |
    |---:|---:|
    | 1 | 0.5 |
    | 2 | — |
    <BLANKLINE>
    <small>— not computed</small>
    <BLANKLINE>
    """

    if isinstance(obj, Styler):
        headers, rows, gap = _styler_rows(obj, units)
        columns = None  # aligned by the text shown
    else:
        frame = obj if isinstance(obj, pd.DataFrame) else _as_frame(obj)
        if frame is None:
            raise TypeError(f"not a table: {type(obj).__name__}")
        frame, _ = _index_columns(frame)
        headers, rows, gap = _frame_rows(frame, None, units)
        columns = [frame[c] for c in frame.columns]
    shown = rows[:max_rows]
    align = []
    for j in range(len(headers)):
        if columns is not None and j < len(columns):
            is_num = (pd.api.types.is_numeric_dtype(columns[j])
                      and not pd.api.types.is_bool_dtype(columns[j]))
        else:
            texts = [r[j] for r in shown if r[j] != DASH]
            is_num = bool(texts) and all(re.fullmatch(r"[−+-]?[\d.,]+(e[+-]?\d+)?%?|∞|−∞", t)
                                         for t in texts)
        align.append("---:" if is_num else "---")
    lines = ["| " + " | ".join(h or " " for h in headers) + " |", "|" + "|".join(align) + "|"]
    lines += ["| " + " | ".join(r) + " |" for r in shown]
    notes = [f"the first {len(shown)} of {len(rows)} rows"] if len(rows) > len(shown) else []
    if gap:
        notes.append(f"{DASH} {missing or MISSING_NOTE}")
    text = "\n".join(lines) + "\n"
    if notes:
        text += "\n" + "\n\n".join(f"<small>{n}</small>" for n in notes) + "\n"
    if len(rows) > FOLD_ROWS:  # its summary in view, the rows folded under it
        names = ", ".join(h for h in headers if h)
        text = (f"*A table of {len(rows)} rows ({names}), folded: open it to read every "
                f"row.*\n\n:::{{dropdown}} All {len(rows)} rows\n{text}:::\n")
    return text


class Table:
    """A table as the book shows it: ``ab.table(df, units={"wall_s": "s"}, missing="...")``
    as a cell's last expression (the rendering of :func:`table_markdown`)."""

    def __init__(self, data, *, units: dict | None = None, missing: str | None = None):
        self.data, self.units, self.missing = data, units, missing

    def _repr_markdown_(self) -> str:
        return table_markdown(self.data, units=self.units, missing=self.missing)

    def __repr__(self) -> str:
        return repr(getattr(self.data, "data", self.data))  # a Styler's frame


def install_formatters(shell=None) -> bool:
    """Show DataFrames, Stylers, Series and dicts left as a cell's result as Markdown tables
    (and leave out their HTML), in the running IPython (``shell``, default: the current one).
    Returns whether there was one."""
    if shell is None:
        try:
            from IPython import get_ipython
        except ImportError:
            return False
        shell = get_ipython()
    if shell is None or getattr(shell, "display_formatter", None) is None:
        return False

    formatters = shell.display_formatter.formatters
    md, html = formatters["text/markdown"], formatters["text/html"]

    def as_table(obj):
        try:
            return table_markdown(obj)
        except Exception:  # noqa: BLE001 - a display must never fail a chapter
            return None

    def dict_table(obj):
        return as_table(obj) if obj and all(isinstance(k, (str, int, float, tuple))
                                            for k in obj) else None

    for kind in (pd.DataFrame, Styler, pd.Series):
        md.for_type(kind, as_table)
        html.for_type(kind, lambda obj: None)  # the Markdown table stands for it
    md.for_type(dict, dict_table)
    formatters["text/latex"].for_type(Styler, lambda obj: None)
    return True


# -- verdicts -------------------------------------------------------------------------------------
_WHY = {"reproduced": "holds",
        "not reproduced": "does not hold",
        "not testable": "its premise does not hold here, so the measurement neither confirms "
                        "nor refutes the claim",
        "partly run": "holds for every part that ran",
        "partly reproduced": "holds for some parts and not for others",
        "fragile": "holds, but not on every resample of the evidence (a seed left out), so it "
                   "does not count as reproduced",
        "not run": "not checked at this profile"}


_FEW_SEEDS = ("the run has fewer seeds than a verdict from trained models needs, so the "
              "measurement neither confirms nor refutes the claim")


def why(status: str, parts: list[dict]) -> str:
    """Whether a criterion holds, in words, for a claim whose ``parts`` (``{"status",
    "measured"}``) combine to ``status``; a claim not testable says for which reason: its
    premise, too few seeds (:func:`~attnbook.book.claims.short_of_seeds`), or both.

    >>> why("not testable", [{"status": "not testable", "measured": "2 seeds at this profile, "
    ...     "at least 3 needed for a verdict from trained models: gap 0.1"}])[:39]
    'the run has fewer seeds than a verdict '
    >>> why("not testable", [{"status": "not testable", "measured": "no crossing"}])[:26]
    'its premise does not hold '
    """
    if status != NOT_TESTABLE:
        return _WHY.get(status, status)
    short = {short_of_seeds(p["measured"]) for p in parts if p["status"] == NOT_TESTABLE}
    if short == {True}:
        return _FEW_SEEDS
    if short == {True, False}:
        return ("for some parts the run has fewer seeds than a verdict from trained models "
                "needs, for others the criterion's premise does not hold here, so the "
                "measurement neither confirms nor refutes the claim")
    return _WHY[status]


def verdict_markdown(claim_id: str, profile: str, parts: list[dict], *, paper: str = "",
                     criterion: str = "", source: str = "", note: str = "") -> str:
    """One claim's verdict as a MyST admonition coloured by its verdict: what was measured
    (each part with its verdict and value), what the paper says, and the criterion with
    whether it holds. ``parts``: ``{"part", "status", "measured"}`` for each part recorded
    (``part`` None for a claim of one part).

    >>> print(verdict_markdown("X-1", "cpu", [{"part": None, "status": "reproduced",
    ...                                        "measured": "rank 5"}], paper="rank 5",
    ...                        criterion="equal ranks", source="Thm 1"))
    ::::{admonition} X-1 at cpu: reproduced
    :class: attnbook-verdict verdict-reproduced
    <BLANKLINE>
    **Measured:** rank 5. **The paper** (Thm 1): rank 5.
    <BLANKLINE>
    **Criterion** (holds): equal ranks.
    ::::
    <BLANKLINE>
    """
    status = combined_status([p["status"] for p in parts])
    title = f"{claim_id} at {profile}: {status}"
    paper_text = ""
    if paper:
        paper_text = (f"**The paper** ({escape(source)}): {paper_math(paper)}." if source
                      else f"**The paper:** {paper_math(paper)}.")
    body = []
    if len(parts) == 1 and parts[0].get("part") is None:
        body.append(f"**Measured:** {escape(parts[0]['measured']).rstrip('.')}. {paper_text}"
                    .strip())
    else:
        k = sum(p["status"] == "reproduced" for p in parts)
        title += (f" ({k} of {len(parts)} parts)" if status == PARTLY_REPRODUCED
                  else f", {k} of {len(parts)} parts reproduced")

        def items(rows):
            return "\n".join(
                f"- {{verdict}}`{p['status']} <{claim_id}>` "
                f"**{escape(p['part'] if p.get('part') is not None else claim_id)}**: "
                f"{escape(p['measured'])}" for p in rows)

        if len(parts) <= MANY_PARTS:
            body += ["**Measured**, part by part:", items(parts)]
        else:  # the parts that decide in view, every part one click away
            other = sorted((p for p in parts if p["status"] != "reproduced"),
                           key=lambda p: FAILED_FIRST.get(p["status"], len(FAILED_FIRST)))
            body += [f"**Measured**: {len(parts) - len(other)} parts reproduced"
                     + (", and these not:" if other else "."), *([items(other)] if other else []),
                     f":::{{dropdown}} All {len(parts)} parts\n{items(parts)}\n:::"]
        if paper_text:
            body.append(paper_text)
    if criterion:
        body.append(f"**Criterion** ({why(status, parts)}): "
                    f"{escape(criterion).rstrip('.')}.")
    if note:
        body.append(note)
    return (f"::::{{admonition}} {escape(title)}\n"
            f":class: attnbook-verdict {verdict_class(status)}\n\n"
            + "\n\n".join(body) + "\n::::\n")


def _verdict_roles(row) -> str:
    """A ledger row's verdict badge (and a ``stale`` one), linked to the claim's status row."""
    text = f"{{verdict}}`{row['status']} <{row['id']}>`"
    if str(row.get("stale") or "") and row["status"] not in UNRUN:
        text += f" {{verdict}}`stale <{row['id']}>`"
    return text


def ledger_markdown(table, claim_ids, profiles=None) -> str:
    """A chapter's claims, one block each: the paper's value, then per profile the verdict
    and the measured value, a claim of several parts with each part and its value.
    ``table``: :func:`attnbook.book.claims.status_table` rows (``parts=True``)."""
    profiles = list(profiles or shown_profiles(table))
    blocks = []
    for cid in claim_ids:
        rows = table[table["id"] == cid]
        if rows.empty:
            continue
        first = rows.iloc[0]
        lines = [f"**{escape(cid)}** ({escape(first['type'])}, {escape(first['source'])}). "
                 f"The paper: {paper_math(first['paper_value'])}", ""]
        for p in profiles:
            at = rows[rows["profile"] == p]
            whole = at[at["part"].isna()]
            if whole.empty:
                continue
            w = whole.iloc[0]
            parts = at[at["part"].notna()]
            item = f"- `{p}`: {_verdict_roles(w)}"
            if parts.empty:
                lines.append(item + (f" {escape(w['measured'])}" if w["measured"] else ""))
                continue
            lines.append(item + f" ({escape(w['measured'])})")
            shown = parts
            if len(parts) > MANY_PARTS:  # those that did not reproduce; all on the status page
                shown = parts[parts["status"] != "reproduced"].sort_values(
                    "status", key=lambda s: s.map(FAILED_FIRST).fillna(len(FAILED_FIRST)),
                    kind="stable")
                lines[-1] += (f"; {len(parts) - len(shown)} parts reproduced"
                              + (", and these not:" if len(shown) else ""))
            lines += [f"  - {_verdict_roles(r)} **{escape(r['part'])}**: {escape(r['measured'])}"
                      for _, r in shown.iterrows()]
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks) + "\n"


class LedgerView:
    """``run.ledger(...)`` as a cell's result: :func:`ledger_markdown`; ``.frame``: the rows."""

    def __init__(self, frame, claim_ids, profiles=None):
        self.frame, self.claim_ids, self.profiles = frame, list(claim_ids), profiles

    def _repr_markdown_(self) -> str:
        return ledger_markdown(self.frame, self.claim_ids, self.profiles)

    def __repr__(self) -> str:
        rows = self.frame[self.frame["part"].isna()]
        return "\n".join(f"{r['id']} [{r['profile']}] {r['status']}"
                         + (f": {r['measured']}" if r["measured"] else "")
                         for _, r in rows.iterrows())


def verdict_class(status: str) -> str:
    """CSS class of a verdict badge: ``verdict-not-reproduced``, ..."""
    return "verdict-" + re.sub(r"[^a-z]+", "-", status.lower()).strip("-")


def banner(shown: dict) -> str:
    """The chapter's note on the profile it shows (MyST Markdown).

    >>> text = banner({"profile": "cpu", "skipped": {"full": "3 of 5 claims not run (A, B, C)",
    ...                                              "long": "not defined for this chapter"},
    ...                "where": "CPU (AMD EPYC, 2 cores)"})
    >>> print(text.replace(". ", ".\\n").replace("; ", ";\\n"))
    ```{note}
    This chapter shows its `cpu` results, the largest profile with complete and current results;
    they were computed on CPU (AMD EPYC, 2 cores).
    `full`: 3 of 5 claims not run (A, B, C).
    `long`: not defined for this chapter.
    The status page lists every profile's verdicts.
    ```
    """
    why = " ".join(f"`{p}`: {escape(w)}." for p, w in shown.get("skipped", {}).items())
    where = (f"; they were computed on {escape(shown['where'])}" if shown.get("where")
             else "")
    return ("```{note}\n"
            f"This chapter shows its `{shown['profile']}` results, the largest profile with "
            f"complete and current results{where}. {why}"
            + (" " if why else "") + "The status page lists every profile's verdicts.\n```")
