"""Sphinx extension: each saved figure becomes a numbered, captioned figure with its provenance,
and each claim check links to the claim's row of the reproduction status page.

``run.savefig`` shows the saved PNG as a cell output whose metadata carries the figure's name,
caption, claims and provenance (:data:`~attnbook.book.plotting.FIGURE_KEY`). When the book reads
an executed chapter, :func:`rewrite_notebook` turns each such output into a MyST-NB glue output
and adds a ``{glue:figure}`` cell labelled ``fig-<name>`` with its caption and provenance, a
label ``check-<notebook>-<id>`` and badges before each claim check, and folds the code a reader
does not learn from (CONTRIBUTING.md, *Writing a chapter*). Roles, usable in any page:

- ``{claim}`ID``` or ``{claim}`ID@profile```: a badge with the claim's verdict at that profile
  (without one, the best-established), read from the ledger when the page is written, linking
  to the claim's row ``#claim-<id>`` of the status page;
- ``{verdict}`STATUS```: a coloured badge for a verdict, no link; ``{verdict}`STATUS <ID>```:
  the same badge linked to claim ID's row;
- ``{claim-row}`ID```: the claim id in bold, with the anchor ``claim-<id>`` (the status page).
"""

import ast
import hashlib
import json
import re

from docutils import nodes

from .. import paths
from .claims import UNRUN, recorded_ids, status_table
from .display import verdict_class
from .plotting import FIGURE_KEY, MIN_PHONE_TEXT_PX
from .readers import loads
from .sites import device_sites

__all__ = ["rewrite_notebook", "fold_input", "split_computing", "claim_label", "check_label",
           "strip_harness", "effective_parameters", "badge_status", "seconds_text",
           "read_manifest", "provenance_markdown", "STATUS_DOC", "setup"]

STATUS_DOC = "status/reproduction_status"
GLUE_PREFIX = "application/papermill.record/"  # MyST-NB's: a glued output hidden where it stands


def claim_label(claim_id: str) -> str:
    """The anchor of a claim's row on the status page.

    >>> claim_label("W-Tab2-5")
    'claim-w-tab2-5'
    """
    return "claim-" + re.sub(r"[^a-z0-9]+", "-", claim_id.lower()).strip("-")


def check_label(notebook: str, claim_id: str) -> str:
    """The label of the cell of ``notebook`` that records ``claim_id`` (its claim check).

    >>> check_label("levine2020_lemma1", "L-Lem1")
    'check-levine2020_lemma1-l-lem1'
    """
    return f"check-{notebook.lower()}-{claim_label(claim_id).removeprefix('claim-')}"


def badge_status(row) -> str:
    """A ledger row's badge: its status, or ``stale`` when a result that ran is stale or its
    ledger entry is damaged (its verdict unknown)."""
    status = row["status"]
    if str(row.get("damaged") or "") or (status not in UNRUN
                                         and str(row.get("stale") or "")):
        return "stale"
    return status


def seconds_text(s) -> str:
    """A wall time in seconds, minutes or hours.

    >>> seconds_text(9.14), seconds_text(600), seconds_text(36000)
    ('9.1 s', '10.0 min', '10.0 h')
    """
    s = float(s)
    return f"{s:.1f} s" if s < 100 else f"{s / 60:.1f} min" if s < 6000 else f"{s / 3600:.1f} h"


def small_on_phone(info: dict) -> bool:
    """Whether a figure's smallest text is under 9 CSS px on a 390 px phone (its
    ``phone_text_px``; a figure saved before it was measured is not)."""
    px = info.get("phone_text_px")
    return isinstance(px, (int, float)) and px < MIN_PHONE_TEXT_PX


def _assigned(code: str, names=None):
    """(name, node) of each top-level ``name = ...`` of ``code`` (in ``names``, if given);
    None when the code does not parse."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return None
    return [(n.targets[0].id, n) for n in tree.body
            if isinstance(n, ast.Assign) and len(n.targets) == 1
            and isinstance(n.targets[0], ast.Name) and (names is None or n.targets[0].id in names)]


def provenance_markdown(info: dict, *, run_wall_s=None, data_exists: bool = True,
                        png_exists: bool = False) -> str:
    """The provenance paragraph under a figure (MyST Markdown). A figure small on a phone
    (:func:`small_on_phone`) links to its full-size PNG (``png_exists``: it is in the build)."""
    parts = [f"notebook `{info.get('notebook', '')}`"]
    profile = info.get("profile", "")
    changes = info.get("profile_changes") or {}
    if changes:
        parts.append(f"profile `{profile}`, which changes " + _assignments(changes))
    else:
        parts.append(f"profile `{profile}` (the parameters cell as shown)")
    if info.get("overrides"):
        parts.append("changed by hand: " + _assignments(info["overrides"]))
    parts.append(f"commit `{info.get('commit', '') or 'unknown'}`"
                 + (" (with uncommitted changes)" if info.get("dirty") else ""))
    drawn = ", ".join(device_sites(info.get("device", "")))
    computed = sorted({", ".join(device_sites(d)) for d in info.get("computed_by") or []} - {""})
    if computed and computed != [drawn]:
        parts.append(f"numbers computed on {', '.join(computed)}, drawn on {drawn}")
    elif drawn:
        parts.append(f"device {drawn}")
    at = [c for c in info.get("computed_at") or [] if c and c != info.get("commit")]
    if at:
        parts.append("cached numbers from commit " + ", ".join(f"`{c}`" for c in at))
    wall = ([f"drawn {seconds_text(info['elapsed_s'])} into the run"]
            if info.get("elapsed_s") is not None else [])
    if run_wall_s is not None:
        wall.append(f"the whole run {seconds_text(run_wall_s)}")
    if wall:
        parts.append("wall time: " + ", ".join(wall))
    if info.get("claims"):
        parts.append("supports " + " ".join(f"{{claim}}`{c}@{profile}`" for c in info["claims"]))
    if info.get("data"):
        parts.append(f"{{download}}`data </figures/{info['data']}>` (CSV)" if data_exists
                     else f"data: `figures/{info['data']}` is not in this build")
    if small_on_phone(info) and png_exists and info.get("png"):
        parts.append(f"its smallest text is {info['phone_text_px']:g} px on a phone: "
                     f"{{download}}`open it full size </figures/{info['png']}>` (or tap it)")
    return " · ".join(parts)


def _assignments(values: dict) -> str:
    """``name = value`` code spans, a string, list or dict written as JSON."""
    return ", ".join(f"`{k} = {json.dumps(v) if isinstance(v, (list, dict, str)) else repr(v)}`"
                     for k, v in sorted(values.items()))


def _md_cell(source: str) -> dict:
    cell_id = "attnbook-" + hashlib.sha256(source.encode()).hexdigest()[:12]
    return {"cell_type": "markdown", "id": cell_id, "metadata": {}, "source": source}


SMALL_TEXT_CLASS = "attnbook-small-text"  # a figure whose text is under 9 px on a phone


def _figure_cell(info: dict, key: str, provenance: str) -> dict:
    caption = " ".join(str(info.get("caption") or info.get("source") or info.get("name", ""))
                       .split())  # one paragraph, MyST kept (math, roles)
    figclass = "attnbook-figure" + (" " + SMALL_TEXT_CLASS if small_on_phone(info) else "")
    return _md_cell(f":::{{glue:figure}} {key}\n:name: {key}\n:figclass: {figclass}\n\n"
                    f"{caption}\n\n{provenance}\n:::\n")


def _check_cell(notebook: str, claim_ids: list, profile: str) -> dict:
    labels = "".join(f"({check_label(notebook, c)})=\n" for c in claim_ids)
    badges = " ".join(f"{{claim}}`{c}@{profile}`" if profile else f"{{claim}}`{c}`"
                      for c in claim_ids)
    word = "claim" if len(claim_ids) == 1 else "claims"
    return _md_cell(f"{labels}The next cell decides the {word} {badges} "
                    "(each badge links to its row of the reproduction status page).\n")


# a code cell stays open when it calls one of these (the library computing a result) or
# records a claim (the criterion); every other code cell is folded under its outputs
_COMPUTES = re.compile(r"\b(run\.(cached|sweep|stored_sweep)|ap\.(units|across))\(")
# a cell that draws: a computing cell that also draws shows only its computing lines open
_DRAWS = re.compile(r"\b(run\.savefig|plt\.subplots|plt\.figure|ap\.(show|grows))\(")
_SHOWN_TAGS = {"parameters", "show-input"}  # open whatever they hold
_FOLD_TAGS = {"hide-input", "remove-input", "hide-cell", "remove-cell", "hide-output",
              "remove-output", "injected-parameters"}  # the chapter's own choice: kept


def fold_input(cell: dict) -> bool:
    """Whether the book folds this code cell's code under its outputs (jupyter-book's
    ``hide-input``): all but the parameters cell, a cell that computes through the library
    and a claim check; a cell with a tag of its own (hide-input, show-input, ...) is left as
    it is.

    >>> fold_input({"cell_type": "code", "source": "fig, ax = plt.subplots()"})
    True
    >>> fold_input({"cell_type": "code", "source": "t = run.cached('x', {}, f)"})
    False
    """
    if cell.get("cell_type") != "code":
        return False
    if set(cell.get("metadata", {}).get("tags", [])) & (_SHOWN_TAGS | _FOLD_TAGS):
        return False
    code = "".join(cell.get("source", ""))
    return not (_COMPUTES.search(code) or recorded_ids(code))


def split_computing(code: str) -> tuple[str, str] | None:
    r"""A cell that computes through the library *and* draws, as (its top-level statements that
    compute and draw nothing, shown open; the rest, folded with the outputs), each in its
    order, the comments above a statement going with it. None for any other cell (or one that
    does not parse).

    >>> split_computing("t = run.cached('t', {}, f)\nfig, ax = plt.subplots()\nax.plot(t)")
    ("t = run.cached('t', {}, f)", 'fig, ax = plt.subplots()\nax.plot(t)')
    >>> split_computing("fig, ax = plt.subplots()") is None
    True
    """
    if not (_COMPUTES.search(code) and _DRAWS.search(code)):
        return None
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return None
    lines = code.split("\n")
    computes, rest, start = [], [], 0
    for node in tree.body:
        segment = "\n".join(lines[start:node.end_lineno]).strip("\n")
        start = node.end_lineno
        (computes if _COMPUTES.search(segment) and not _DRAWS.search(segment)
         else rest).append(segment)
    if not computes or not rest:
        return None
    return "\n".join(computes).strip("\n"), "\n".join(rest).strip("\n")


def strip_harness(code: str) -> str:
    r"""A code cell's source without the lines that only steer nbval (``# NBVAL_...``).

    >>> strip_harness("# NBVAL_CHECK_OUTPUT\nrun.record('X', True, 'ok')")
    "run.record('X', True, 'ok')"
    >>> strip_harness("x = 1  # NBVAL_ in a comment stays")
    'x = 1  # NBVAL_ in a comment stays'
    """
    return re.sub(r"^[ \t]*# NBVAL_[A-Z_]+[ \t]*\n?", "", code, flags=re.M)


def effective_parameters(source: str, params: dict, profile: str) -> str:
    """The parameters cell as the run had it: each value the profile (or the runner) changed
    in place of the notebook's default, marked at the end of its line with that default.

    >>> print(effective_parameters("d = 16  # width\\nH = 4  # heads", {"d": 64, "H": 4}, "long"))
    d = 64  # width [long; the notebook's default: 16]
    H = 4  # heads
    """
    lines = source.split("\n")
    for name, node in reversed(_assigned(source, params) or []):
        try:
            default = ast.literal_eval(node.value)
        except ValueError:
            continue
        value = params[name]
        if value == default and type(value) is type(default):
            continue
        comment = lines[node.end_lineno - 1][node.end_col_offset:].strip()
        comment = comment[1:].strip() if comment.startswith("#") else comment
        mark = f"[{profile}; the notebook's default: {ast.get_source_segment(source, node.value)}]"
        lines[node.lineno - 1:node.end_lineno] = [
            f"{name} = {value!r}  # " + (f"{comment} {mark}" if comment else mark)]
    return "\n".join(lines)


def _hide_input(cell: dict, tags: list, **changes) -> dict:
    return {**cell, **changes, "metadata": {**cell.get("metadata", {}),
                                            "tags": [*tags, "hide-input"]}}


def rewrite_notebook(nb: dict, notebook: str = "", *, run_walls: dict | None = None,
                     root=None) -> tuple[dict, bool]:
    """The notebook as the book shows it, and whether that changed it. ``notebook``: its stem
    (default: papermill's input path); ``run_walls``: run id -> its run's wall time (the
    manifest); ``root``: where ``figures/`` is."""
    root = root or paths.ROOT
    run_walls = run_walls or {}
    papermill = nb.get("metadata", {}).get("papermill") or {}
    params = papermill.get("parameters") or {}
    if not notebook:
        notebook = (papermill.get("input_path") or "").rsplit("/", 1)[-1].removesuffix(".ipynb")
    profile = params.get("profile", "")
    cells, changed, labelled = [], False, set()
    for cell in nb.get("cells", []):
        if cell.get("cell_type") != "code":
            cells.append(cell)
            continue
        code = "".join(cell.get("source", ""))
        tags = cell.get("metadata", {}).get("tags", [])
        shown = strip_harness(code)
        if "parameters" in tags and params:  # the values this run had, not the defaults
            shown = effective_parameters(shown, params, profile)
        if shown != code:
            cell, changed = {**cell, "source": shown}, True
        split = None if set(tags) & (_SHOWN_TAGS | _FOLD_TAGS) else split_computing(shown)
        if split:  # its computing lines open, the plotting folded with the outputs
            cells.append({**cell, "id": f"{cell.get('id', 'cell')}-computes",
                          "source": split[0], "outputs": []})
            cell, changed = _hide_input(cell, tags, source=split[1]), True
        elif fold_input(cell):
            cell, changed = _hide_input(cell, tags), True
        ids = [c for c in ([] if "remove-cell" in tags else recorded_ids(code))
               if c not in labelled]
        added = []
        for output in cell.get("outputs", []):
            info = (output.get("metadata") or {}).get(FIGURE_KEY)
            if not isinstance(info, dict) or not info.get("name"):
                continue
            key = f"fig-{info['name']}"
            output["data"] = {GLUE_PREFIX + k: v for k, v in output.get("data", {}).items()}
            output["metadata"]["scrapbook"] = {"name": key, "mime_prefix": GLUE_PREFIX}
            exists = {k: bool(info.get(k)) and (root / "figures" / info[k]).exists()
                      for k in ("data", "png")}
            added.append(_figure_cell(info, key, provenance_markdown(
                info, run_wall_s=run_walls.get(info.get("run_id")), data_exists=exists["data"],
                png_exists=exists["png"])))
        if ids and notebook:
            labelled.update(ids)
            cells.append(_check_cell(notebook, ids, profile))
            changed = True
        cells.append(cell)
        cells.extend(added)
        changed = changed or bool(added)
    return ({**nb, "cells": cells} if changed else nb), changed


# -- Sphinx ------------------------------------------------------------------------------------
class claim_badge(nodes.Inline, nodes.Element):
    """A claim badge, resolved into a link when the page is written (the ledger as it is)."""


_STATE: dict = {}  # the ledger and the runs' wall times, read once per build


def _table():
    if "table" not in _STATE:
        _STATE["table"] = status_table()
    return _STATE["table"]


def read_manifest(manifest) -> tuple[list, int]:
    """(the entries of the runs in ``build/manifest.jsonl``, how many lines are no run's entry:
    cut short by a killed run, or not a run's)."""
    if not manifest.exists():
        return [], 0
    try:
        text = manifest.read_text(errors="replace")
    except OSError:
        return [], 1
    entries, damaged = [], 0
    for line in text.splitlines():
        try:
            entry = loads(line) if line.strip() else None
        except ValueError:
            entry, damaged = None, damaged + 1
        if not isinstance(entry, dict):
            continue
        wall = entry.get("wall_s", 0)
        if all(isinstance(entry.get(k), str) for k in ("notebook", "profile", "status")) \
                and isinstance(wall, (int, float)) and not isinstance(wall, bool):
            entries.append(entry)
        else:
            damaged += 1
    return entries, damaged


def _badge_text(claim_id: str, profile: str | None):
    """(text, status) of a claim's badge at ``profile`` (None: the most advanced profile with
    a result, else ``cpu``)."""
    table = _table()
    rows = table[table["id"] == claim_id]
    if rows.empty:
        return f"{claim_id}: unknown claim", "no chapter yet"
    if profile:
        sub = rows[rows["profile"] == profile]
        row = sub.iloc[0] if len(sub) else rows.iloc[0]
    else:
        ran = rows[~rows["status"].isin(UNRUN)]
        row = (ran.iloc[-1] if len(ran) else rows[rows["profile"] == "cpu"].iloc[0])
    status = badge_status(row)
    was = f" (was {row['status']})" if status == "stale" else ""
    return f"{claim_id} · {row['profile']}: {status}{was}", status


def _claim_role(name, rawtext, text, lineno, inliner, options=None, content=None):
    claim_id, _, profile = text.strip().partition("@")
    return [claim_badge(rawtext, claim_id=claim_id.strip(), profile=profile.strip() or None)], []


def _verdict_role(name, rawtext, text, lineno, inliner, options=None, content=None):
    """``{verdict}`STATUS``` (a badge, no link) or ``{verdict}`STATUS <ID>``` (the badge
    linked to claim ID's row of the status page: a part's verdict, a profile's)."""
    m = re.fullmatch(r"\s*(.*?)\s*<([^<>]+)>\s*", text)
    if m:
        return [claim_badge(rawtext, claim_id=m.group(2).strip(), profile=None,
                            status=m.group(1).strip())], []
    status = text.strip()
    return [nodes.inline(rawtext, status, classes=["attnbook-badge", "attnbook-plain",
                                                   verdict_class(status)])], []


def _claim_row_role(name, rawtext, text, lineno, inliner, options=None, content=None):
    claim_id = text.strip()
    return [nodes.strong(rawtext, claim_id, ids=[claim_label(claim_id)],
                         classes=["attnbook-claim-id"])], []


def _source_read(app, docname, source):
    if not docname.startswith("chapters/") or not source or not source[0].lstrip().startswith("{"):
        return
    try:
        nb = loads(source[0])
    except ValueError:
        return
    if "walls" not in _STATE:
        _STATE["walls"] = {e["run_id"]: e["wall_s"] for e in read_manifest(
            paths.BUILD / "manifest.jsonl")[0] if e.get("run_id") and e.get("wall_s") is not None}
    nb, changed = rewrite_notebook(nb, docname.rsplit("/", 1)[-1], run_walls=_STATE["walls"],
                                   root=paths.ROOT)
    if changed:
        source[0] = json.dumps(nb)
        app.env.attnbook_badge_docs = _docs(app.env) | {docname}


def _alt_from_caption(app, doctree, fromdocname):
    """Every figure's image gets its caption as alt text (the caption's words, its math as
    TeX), not the file's path: what a screen reader reads and what shows if it fails."""
    for figure in doctree.findall(nodes.figure):
        caption = next(iter(figure.findall(nodes.caption)), None)
        if caption is None:
            continue
        text = " ".join(caption.astext().split())
        for image in figure.findall(nodes.image):
            image["alt"] = text


def _link_small_figures(app, doctree, fromdocname):
    """A figure whose text is under 9 px on a phone (class ``attnbook-small-text``) becomes a
    link to its full-size PNG, the file its legend's "open it full size" downloads: a tap on
    a phone opens it at its own size, to zoom. Builders without pages leave it as it is."""
    from sphinx import addnodes
    from sphinx.util.osutil import relative_uri

    for figure in doctree.findall(nodes.figure):
        if SMALL_TEXT_CLASS not in figure.get("classes", []):
            continue
        link = next((d for d in figure.findall(addnodes.download_reference)
                     if str(d.get("reftarget", "")).endswith(".png") and d.get("filename")),
                    None)
        if link is None:
            continue
        try:
            downloads = relative_uri(app.builder.get_target_uri(fromdocname), "_downloads")
        except Exception:  # a builder without pages
            continue
        for image in list(figure.findall(nodes.image)):
            if isinstance(image.parent, nodes.reference):
                continue
            ref = nodes.reference("", "", refuri=f"{downloads}/{link['filename']}",
                                  reftitle="open the figure full size",
                                  classes=["attnbook-full-size"])
            image.replace_self(ref)
            ref.append(image)


def _resolve(app, doctree, fromdocname):
    for node in list(doctree.findall(claim_badge)):
        if node.get("status"):  # a verdict given as it is, linked to its claim
            text = status = node["status"]
        else:
            text, status = _badge_text(node["claim_id"], node["profile"])
        badge = nodes.inline("", text, classes=["attnbook-badge", verdict_class(status)])
        try:
            uri = app.builder.get_relative_uri(fromdocname, STATUS_DOC)
        except Exception:  # a builder without pages (e.g. linkcheck): the badge alone
            node.replace_self(badge)
            continue
        ref = nodes.reference("", "", badge, internal=True,
                              refuri=f"{uri}#{claim_label(node['claim_id'])}",
                              reftitle=f"{node['claim_id']}: its row of the reproduction "
                                       "status page")
        node.replace_self(ref)


def _docs(env) -> set:  # the pages with badges or rewritten figures: written on every build
    return getattr(env, "attnbook_badge_docs", set())


def _badge_docs(app, doctree):
    if doctree.next_node(claim_badge) is not None:
        app.env.attnbook_badge_docs = _docs(app.env) | {app.env.docname}


def _outdated(app, env, added, changed, removed):
    """Pages with badges are written again on every build: the ledger may have changed."""
    _STATE.clear()
    return sorted(d for d in _docs(env) if d in env.found_docs and d not in added | changed)


def _purge(app, env, docname):
    _docs(env).discard(docname)


def _merge(app, env, docnames, other):
    env.attnbook_badge_docs = _docs(env) | (_docs(other) & set(docnames))


def _visit_badge(self, node):  # an unresolved badge (never reached after doctree-resolved)
    raise nodes.SkipNode


_ROLES = {"claim": _claim_role, "verdict": _verdict_role, "claim-row": _claim_row_role}
_EVENTS = [("source-read", _source_read), ("doctree-read", _badge_docs),
           ("doctree-resolved", _resolve), ("doctree-resolved", _alt_from_caption),
           ("doctree-resolved", _link_small_figures), ("env-get-outdated", _outdated),
           ("env-purge-doc", _purge), ("env-merge-info", _merge)]


def setup(app):
    app.add_node(claim_badge, **{b: (_visit_badge, None) for b in ("html", "latex", "text")})
    for name, role in _ROLES.items():
        app.add_role(name, role)
    for event, handler in _EVENTS:
        app.connect(event, handler)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
