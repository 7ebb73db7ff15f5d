"""Sphinx extension: each inline script appears once per page.

Sphinx 7.4 can register an extension's inline script twice (file name ``None`` and ``''``), so
sphinx-thebe's ``const THEBE_JS_URL`` runs twice and every page logs a SyntaxError (the browser
test fails on it). This keeps the first of any scripts with the same file and attributes.
"""

__all__ = ["unique_scripts", "setup"]


def unique_scripts(scripts) -> list:
    """The scripts in order, without repeats (same file, or same inline body and attributes)."""
    seen, unique = set(), []
    for js in scripts:
        attributes = getattr(js, "attributes", {}) or {}
        key = (getattr(js, "filename", js) or "", repr(sorted(attributes.items())))
        if key not in seen:
            seen.add(key)
            unique.append(js)
    return unique


def _dedupe(app, pagename, templatename, context, doctree):
    if "script_files" in context:
        context["script_files"] = unique_scripts(context["script_files"])


def setup(app):
    app.connect("html-page-context", _dedupe)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
