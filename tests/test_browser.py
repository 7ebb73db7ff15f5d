"""The built book in a real browser: Debian's chromium, headless, driven by Playwright.

For the home page, the reproduction status page, the execution report and every chapter:
MathJax typeset every formula without an error, every image loaded and its alt text is its
figure's caption, every local link (and its ``#anchor``) resolves, the page does not scroll
sideways at 1400 px (and the status tables show every column) nor on a 390 px phone, and the
console shows no error. The home page summarizes what the book found (the overview figure,
the verdicts per profile, links to the claims' rows). The status page opens with its overview
figure and shows each verdict as a coloured badge, one anchored row per claim of the ledger,
the paper's formulas typeset; on the phone every verdict is on the screen, with no sideways
scroll. Every verdict's text shows whole (no badge or verdict box clips it). Every figure a
chapter saved is a numbered, captioned figure with its provenance (notebook, profile, commit)
beneath, and every claim badge names a verdict. No output block is raw Python: a dict's repr
or a pandas table with its index. Chapters leave out the cell papermill injects and are
published under ``chapters/<work>/``, not under the build folder. A chapter's parameters cell
shows the values its run had: the notebook's defaults with its profile's changes from
``notebooks/<stem>.yml`` (:meth:`~attnbook.book.profiles.NotebookSpec.effective`). No page
shows a test-harness comment (``# NBVAL_...``), folded code included. At 390 px no formula is
cut off (one wider than the screen scrolls in its own box), and every figure's smallest text
is at least 9 CSS px as shown (the size ``run.savefig`` recorded, or the overview's PNG
records, scaled to the width the image is shown at) or a tap on it opens its full-size PNG,
where it is. No figure prints labels over each other (the pairs ``run.savefig`` found and
recorded, ``overlapping_labels``). A failure names the page, its screenshots and each element
at fault. A full-page screenshot of each page at both widths goes to ``build/screenshots/``
(``<page>.png`` at 1400 px, ``<page>-phone.png`` at 390 px), listed at the end of the
test's output.

Run after the book is built (``make browser``, the last step of ``make test``); skipped when
``build/book/_build/html`` does not exist. Playwright drives the system chromium
(``/usr/bin/chromium``; ``apt-get install chromium``): it never downloads a browser.
"""

import functools
import http.server
import json
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from html.parser import HTMLParser
from pathlib import Path

import pytest

from attnbook import paths

HTML = paths.BUILD / "book" / "_build" / "html"
SHOTS = paths.BUILD / "screenshots"
CHROMIUM = Path("/usr/bin/chromium")
WIDTH, HEIGHT = 1400, 900
PHONE = (390, 844)  # a phone's viewport (CSS pixels)
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]
# name -> (path in the built book, kind)
PAGES = {
    "home": ("index.html", "page"),
    "status": ("status/reproduction_status.html", "status"),
    "execution": ("status/execution_report.html", "page"),
    "theorem": ("chapters/levine2020/levine2020_lemma1.html", "theorem"),
    "figure": ("chapters/mahdavi2024/mahdavi2024_fig3_saturation.html", "figure"),
}
# every other chapter of the built book: images, figures, badges, links, width, console
PAGES.update({f"chapter-{p.stem}": (p.relative_to(HTML).as_posix(), "chapter")
              for p in sorted(HTML.glob("chapters/*/*.html"))
              if p.relative_to(HTML).as_posix() not in {v[0] for v in PAGES.values()}})
VERDICTS = {"reproduced", "fragile", "not-reproduced", "not-testable", "partly-run",
            "partly-reproduced", "stale", "not-run", "no-chapter-yet"}

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not (HTML / "index.html").exists(),
                       reason=f"the book is not built ({HTML}/index.html is missing): run "
                              "`make book-ci` (or `make book`) first"),
]


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def server():
    """The built book on a loopback port, served from a thread of this process."""
    httpd = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(_Quiet, directory=str(HTML)))
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/"
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    """One headless chromium with a fresh profile folder."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.fail("playwright is not installed: `make venv` installs it (requirements-lock)")
    if not CHROMIUM.exists():
        pytest.fail(f"{CHROMIUM} is missing: `apt-get install chromium` (Debian's package)")
    with sync_playwright() as pw:
        context = pw.chromium.launch_persistent_context(
            str(tmp_path_factory.mktemp("chromium-profile")), executable_path=str(CHROMIUM),
            headless=True, args=ARGS, viewport={"width": WIDTH, "height": HEIGHT})
        yield context
        context.close()


class _Ids(HTMLParser):
    def __init__(self):
        super().__init__()
        self.ids = set()

    def handle_starttag(self, tag, attrs):
        for k, v in attrs:
            if k == "id" or (k == "name" and tag == "a"):
                self.ids.add(v)


@functools.cache
def _fetch(url: str) -> tuple[int, frozenset]:
    """HTTP status of a local URL and, for an HTML page, the ids it defines."""
    try:
        with urllib.request.urlopen(url, timeout=10) as r:
            status, body, ctype = r.status, r.read(), r.headers.get_content_type()
    except urllib.error.HTTPError as e:
        return e.code, frozenset()
    ids = _Ids()
    if ctype == "text/html":
        ids.feed(body.decode("utf-8", "replace"))
    return status, frozenset(ids.ids)


_IMAGES = """async () => {
  const imgs = [...document.images];
  imgs.forEach(i => { i.loading = 'eager'; });
  await Promise.all(imgs.map(i => i.complete ? null :
      new Promise(r => { i.addEventListener('load', r); i.addEventListener('error', r); })));
  return imgs.map(i => ({src: i.currentSrc || i.src, w: i.naturalWidth}));
}"""

_MATHJAX = """async () => {
  const scripts = [...document.scripts].map(s => s.src).filter(s => /mathjax/i.test(s));
  if (!scripts.length) return {scripts, containers: 0, errors: 0};
  const t0 = Date.now();
  while (!(window.MathJax && MathJax.startup && MathJax.startup.promise)) {
    if (Date.now() - t0 > 20000) return {scripts, started: false};
    await new Promise(r => setTimeout(r, 50));
  }
  await MathJax.startup.promise;
  if (MathJax.typesetPromise) await MathJax.typesetPromise();
  return {scripts, started: true,
          containers: document.querySelectorAll('mjx-container').length,
          errors: document.querySelectorAll('mjx-merror').length,
          raw: [...document.querySelectorAll('.math')].filter(
                 e => !e.querySelector('mjx-container')).map(e => e.textContent.slice(0, 60))};
}"""


_FIGURES = """() => [...document.querySelectorAll('figure.attnbook-figure')].map(f => ({
  id: f.id, img: f.querySelector('img') ? f.querySelector('img').naturalWidth : -1,
  number: (f.querySelector('.caption-number') || {}).textContent || '',
  caption: (f.querySelector('.caption-text') || {}).textContent || '',
  legend: (f.querySelector('.legend') || {}).textContent || ''}))"""

_BADGES = """() => [...document.querySelectorAll('.attnbook-badge')].map(b => ({
  text: b.textContent, classes: [...b.classList],
  href: b.closest('a') ? b.closest('a').href : ''}))"""


# every figure's images: their alt text, and their caption's text with each formula as the TeX
# MathJax typeset it from (the alt text is the caption as Sphinx reads it: math as TeX)
_ALTS = """() => {
  const tex = new Map();
  if (window.MathJax && MathJax.startup && MathJax.startup.document) {
    for (const item of MathJax.startup.document.math) tex.set(item.typesetRoot, item.math);
  }
  const text = n => tex.has(n) ? tex.get(n) : n.nodeType === 3 ? n.textContent
      : [...n.childNodes].map(text).join('');
  return [...document.querySelectorAll('article figure')].filter(f => f.querySelector('img'))
    .map(f => { const c = f.querySelector('.caption-text');
                return {id: f.id, caption: c ? text(c) : null,
                        alts: [...f.querySelectorAll('img')].map(i => i.getAttribute('alt'))}; });
}"""

# what no chapter shows: a dict's repr, a pandas table with its index column (HTML, or the
# text repr that starts rows with 0, 1, 2 ...)
_RAW_OUTPUTS = r"""() => {
  const out = [];
  for (const o of document.querySelectorAll('.cell_output')) {
    for (const t of o.querySelectorAll('table')) {
      if (t.classList.contains('dataframe') || t.querySelector('tbody th'))
        out.push('an indexed pandas table: ' + t.innerText.slice(0, 80));
    }
    for (const pre of o.querySelectorAll('pre')) {
      const txt = pre.innerText;
      if (/\{\s*(['"][^'"]*['"]|-?\d+(\.\d+)?)\s*:\s*/.test(txt))
        out.push('a dict printed raw: ' + txt.slice(0, 80));
      if (/^\s*\S.*\n0\s{2,}\S.*\n1\s{2,}\S/m.test(txt))
        out.push('a pandas table printed with its index: ' + txt.slice(0, 80));
    }
  }
  return out;
}"""

# verdicts whose text a box cuts (badges, verdict admonitions and what they hold), and, on the
# status page at a phone's width, verdict badges outside the screen
_CLIPPED = """(width) => {
  const out = [];
  const els = [...document.querySelectorAll(
      '.attnbook-badge, div.attnbook-verdict, div.attnbook-verdict p, div.attnbook-verdict li')];
  for (const e of els) {
    if (e.scrollWidth > e.clientWidth + 1)
      out.push(`clipped (${e.scrollWidth} > ${e.clientWidth}): ${e.textContent.slice(0, 60)}`);
    const r = e.getBoundingClientRect();
    if (width && r.width && (r.right > width + 1 || r.left < -1))
      out.push(`off the screen (${Math.round(r.left)}..${Math.round(r.right)} of ${width}): `
               + e.textContent.slice(0, 60));
  }
  return out;
}"""


# at a phone's width, every figure's image: the width it is shown at, its own width in pixels,
# and the link around it (a tap opens its full-size PNG)
_PHONE_FIGURES = """() => [...document.querySelectorAll('article figure')]
  .filter(f => f.querySelector('img')).map(f => {
    const i = f.querySelector('img'), a = i.closest('a[href]');
    return {id: f.id, classes: [...f.classList], shown: i.getBoundingClientRect().width,
            natural: i.naturalWidth, href: a ? a.href : '', src: i.currentSrc || i.src};
  })"""

# formulas cut off on the right (or left): a formula wider than a box around it that does not
# scroll, or than the screen, with no scroll container of its own within the article; folded
# parts of the page (dropdowns, folded code) unfolded to measure. Each: its TeX, the section it
# is in, its extent and what cuts it
_FORMULAS_CUT = """() => {
  const tex = new Map();
  if (window.MathJax && MathJax.startup && MathJax.startup.document) {
    for (const item of MathJax.startup.document.math) tex.set(item.typesetRoot, item.math);
  }
  const article = document.querySelector('article') || document.body;
  const screen = document.documentElement.clientWidth;
  const name = e => e.tagName.toLowerCase() + (e.id ? '#' + e.id : '')
      + [...e.classList].slice(0, 2).map(c => '.' + c).join('');
  const out = [];
  const folded = [...article.querySelectorAll('details:not([open])')];
  folded.forEach(d => { d.open = true; });  // what a reader unfolds is measured too
  for (const c of article.querySelectorAll('mjx-container')) {
    const inner = c.querySelector('mjx-math, svg') || c;
    let r = inner.getBoundingClientRect();
    if (!r.width) continue;  // not drawn (a label shown only in another layout)
    let cut = '';
    for (let e = c; e && e !== article.parentElement; e = e.parentElement) {
      const b = e.getBoundingClientRect();
      if (!b.width && !b.height) continue;  // display: contents
      if (r.left >= b.left - 1 && r.right <= b.right + 1) continue;  // it holds the formula
      const o = getComputedStyle(e).overflowX;
      if ((o === 'auto' || o === 'scroll') && e !== article) {  // a box of its own scrolls
        r = b;  // what shows is that box, which must show whole in turn
        continue;
      }
      if (o !== 'visible') { cut = `cut by ${name(e)} (overflow-x: ${o}, `
                               + `${Math.round(b.left)}..${Math.round(b.right)} px)`; break; }
    }
    if (!cut && (r.right > screen + 1 || r.left < -1))
      cut = `off the screen (${screen} px wide) with no scroll box of its own`;
    if (cut) {
      const inner_r = inner.getBoundingClientRect();
      const section = c.closest('section[id]');
      const src = (tex.get(c) || '').trim();
      const text = src && !src.startsWith('<') ? src : c.textContent;  // TeX, else as shown
      out.push(`formula ${JSON.stringify(text.slice(0, 70))} in `
               + `#${section ? section.id : '?'} (${Math.round(inner_r.left)}..`
               + `${Math.round(inner_r.right)} px): ${cut}`);
    }
  }
  folded.forEach(d => { d.open = false; });
  return out;
}"""

# each piece of the page's text that holds "NBVAL_" (a test-harness comment), with the cell or
# section it is in: folded code counts (a reader unfolds it), scripts and styles do not
_HARNESS_TEXT = """() => {
  const out = [];
  const walk = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let n = walk.nextNode(); n; n = walk.nextNode()) {
    if (!n.textContent.includes('NBVAL_')) continue;
    const e = n.parentElement;
    if (e.closest('script, style, noscript')) continue;
    const cell = e.closest('.cell, section[id]');
    out.push(`"${n.textContent.trim().slice(0, 60)}" in `
             + (cell ? cell.tagName.toLowerCase() + '#' + (cell.id || '')
                       + '.' + [...cell.classList].join('.') : e.tagName.toLowerCase()));
  }
  return out;
}"""


def _check_phone(page, name, kind, recorded: dict) -> list[str]:
    """The page at a phone's width: no sideways scroll; on the status page, every verdict
    badge on the screen; no formula cut off (one wider than the screen scrolls in its own
    box); every figure's text at least 9 px as shown, or the figure a link to its full-size
    PNG, where it is (``recorded``: :func:`_recorded_figures`); a full-page screenshot
    ``<name>-phone.png``."""
    width, height = PHONE
    page.set_viewport_size({"width": width, "height": height})
    page.wait_for_timeout(400)  # the layout, and MathJax's, settle at the new width
    problems = []
    scroll_width = page.evaluate("document.documentElement.scrollWidth")
    if scroll_width > width + 1:
        wide = page.evaluate(f"""() => [...document.querySelectorAll('body *')]
            .filter(e => e.getBoundingClientRect().right > {width + 1})
            .slice(0, 5).map(e => e.tagName + '.' + e.className)""")
        problems.append(f"scrolls sideways at {width} px: scrollWidth {scroll_width} ({wide})")
    problems += [f"at {width} px: {p}" for p in page.evaluate(
        _CLIPPED, width if kind == "status" else 0)]
    problems += [f"at {width} px: {p}" for p in page.evaluate(_FORMULAS_CUT)]
    problems += [f"at {width} px: {p}" for p in _small_figures(page.evaluate(_PHONE_FIGURES),
                                                                recorded)]
    page.screenshot(path=str(SHOTS / f"{name}-phone.png"), full_page=True)
    page.set_viewport_size({"width": WIDTH, "height": HEIGHT})
    return problems


def _executed(path: str) -> dict:
    """The executed notebook a chapter's page was built from ({} for a page that is not one):
    ``chapters/<work>/<stem>.ipynb``, which ``python -m attnbook report`` links."""
    nb = paths.ROOT / Path(path).with_suffix(".ipynb")
    return json.loads(nb.read_text()) if nb.exists() else {}


def _recorded_figures(path: str) -> dict:
    """The figures a chapter saved (``run.savefig``), by the id of their figure on the page:
    the text size ``run.savefig`` recorded (``phone_text_px``: its smallest text, in CSS px
    with the figure shown ``phone_content_px`` wide, or its own width if narrower) and the
    width in CSS px the page is meant to show the image at (its output's ``image/png``
    width)."""
    from docutils.nodes import make_id

    from attnbook.book.plotting import FIGURE_KEY

    out = {}
    for cell in _executed(path).get("cells", []):
        for output in cell.get("outputs") or []:
            meta = output.get("metadata") or {}
            info = meta.get(FIGURE_KEY)
            if isinstance(info, dict) and info.get("name"):
                out[make_id(f"fig-{info['name']}")] = {
                    **({"phone_text_px": info["phone_text_px"]} if "phone_text_px" in info
                       else {}), "content_px": info.get("phone_content_px"),
                    "width": (meta.get("image/png") or {}).get("width"),
                    "overlapping_labels": info.get("overlapping_labels")}
    return out


def _overlapping_labels(recorded: dict) -> list[str]:
    """The figures whose labels print over each other, each pair named (what ``run.savefig``
    recorded, :func:`~attnbook.book.plotting.overlapping_labels`), and those saved before it
    recorded them."""
    out = []
    for fid, rec in recorded.items():
        pairs = rec.get("overlapping_labels")
        if pairs is None:
            out.append(f"figure #{fid}: no check of its labels recorded (run.savefig records "
                       "overlapping_labels)")
        elif pairs:
            out.append(f"figure #{fid}: labels print over each other: "
                       + "; ".join(f"{a!r} and {b!r}" for a, b in pairs))
    return out


def _png_text_px(src: str) -> float | None:
    """The smallest text, in the PNG's own pixels, that a PNG of the built book records
    (:data:`~attnbook.book.plotting.TEXT_PX_KEY`: the overview figures); None otherwise."""
    from attnbook.book.plotting import png_text_px

    path = urllib.parse.unquote(urllib.parse.urlsplit(src).path).lstrip("/")
    png = HTML / path
    return png_text_px(png) if path.lower().endswith(".png") and png.is_file() else None


def _small_figures(figures: list, recorded: dict) -> list[str]:
    """The figures whose smallest text is under 9 CSS px as the phone shows them (the recorded
    size scaled to the width the image is shown at) and that no tap opens full size (no link
    around the image to its PNG), or whose full-size PNG has that text under 9 px too. A
    chapter's figure: the size ``run.savefig`` recorded (``recorded``); another figure (the
    overview): the size its PNG records, or none to check."""
    from attnbook.book.plotting import MIN_PHONE_TEXT_PX

    out = []
    for f in figures:
        if "attnbook-figure" not in f["classes"]:
            px = _png_text_px(f["src"])
            if px is None or not f["natural"]:
                continue  # an image that records no text size
            scale = px / f["natural"]
        else:
            rec = recorded.get(f["id"])
            if rec is None or "phone_text_px" not in rec:
                out.append(f"figure #{f['id']}: no text size recorded for it (run.savefig "
                           "records phone_text_px)")
                continue
            if rec["phone_text_px"] is None:
                continue  # a figure without text
            content = rec["content_px"] or 358  # what savefig assumed before it said so
            scale = rec["phone_text_px"] / min(content, rec["width"] or content)
        shown, full = scale * f["shown"], scale * f["natural"]
        if shown >= MIN_PHONE_TEXT_PX:
            continue
        where = (f"figure #{f['id']}: its smallest text is {shown:.1f} px as shown "
                 f"({f['shown']:.0f} px wide)")
        if not f["href"].partition("#")[0].lower().endswith(".png"):
            out.append(f"{where}, under {MIN_PHONE_TEXT_PX:g} px, and no tap opens it full "
                       f"size (its image is no link to its PNG: {f['href'] or 'no link'})")
        elif full < MIN_PHONE_TEXT_PX:
            out.append(f"{where}, and {full:.1f} px full size ({f['natural']} px wide): "
                       f"under {MIN_PHONE_TEXT_PX:g} px even there")
    return out


def _parameter_problems(page, path: str) -> list[str]:
    """The chapter's parameters cell as the page shows it against the values its run had:
    the notebook's defaults with its profile's changes from ``notebooks/<stem>.yml`` (and any
    value changed by hand for that run, from the executed notebook's papermill parameters)."""
    from page_checks import parameter_differences, same_value

    from attnbook.book.profiles import load_spec

    cell = page.locator(".tag_parameters .cell_input pre")
    if cell.count() != 1:
        return []  # reported as "not shown once"
    stem = Path(path).stem
    ran = ((_executed(path).get("metadata") or {}).get("papermill") or {}).get("parameters")
    if not ran or "profile" not in ran:
        return [f"no papermill parameters in {Path(path).with_suffix('.ipynb')}: which "
                "profile ran is unknown"]
    spec = load_spec(paths.NOTEBOOKS / f"{stem}.ipynb")
    profile = ran["profile"]
    planned = spec.profiles.get(profile) or {}
    by_hand = {k: v for k, v in ran.items() if k != "profile"
               and not (k in planned and same_value(v, planned[k]))}
    expected = spec.effective(profile, by_hand or None)
    return [f"parameters cell (profile {profile}): {d}"
            for d in parameter_differences(cell.text_content(), expected)]


def _check_home(page) -> list[str]:
    """The home page says what the book found: the overview figure, the verdicts counted per
    profile, and links to the claims' rows of the status page."""
    problems = []
    overview = page.evaluate("""() => { const i = document.querySelector('#home-overview img');
        return i ? i.naturalWidth : -1; }""")
    if overview <= 0:
        problems.append("the home page has no overview figure (#home-overview img)")
    counts = page.evaluate("""() => [...document.querySelectorAll('article table')].filter(
        t => /effects/.test(t.innerText) && t.querySelector('.attnbook-badge')).length""")
    if not counts:
        problems.append("the home page counts no verdicts per profile (a table of badges)")
    links = page.eval_on_selector_all(
        "a[href*='reproduction_status.html#claim-'] .attnbook-badge", "bs => bs.length")
    if links < 3:
        problems.append(f"the home page links {links} claims to their status rows")
    text = page.inner_text("article")
    for words in ("reproduced", "did not reproduce"):
        if words not in text:
            problems.append(f"the home page summary does not say what {words!r}")
    return problems


def _check_badges_and_figures(page, kind) -> list[str]:
    """Saved figures numbered, captioned, with provenance; badges naming a verdict; the
    status page's overview figure and one anchored row per claim."""
    problems = []
    figures = page.evaluate(_FIGURES)
    for f in figures:
        if f["img"] <= 0:
            problems.append(f"figure {f['id']}: image not loaded")
        if not f["number"].startswith("Fig.") or not f["caption"].strip():
            problems.append(f"figure {f['id']}: no numbered caption ({f['number']!r})")
        if not all(w in f["legend"] for w in ("notebook", "profile", "commit")):
            problems.append(f"figure {f['id']}: no provenance under it ({f['legend'][:80]!r})")
    if kind == "figure" and not figures:
        problems.append("a figure chapter with no captioned figure (figure.attnbook-figure)")
    badges = page.evaluate(_BADGES)
    for b in badges:
        verdicts = [c.removeprefix("verdict-") for c in b["classes"] if c.startswith("verdict-")]
        if len(verdicts) != 1 or verdicts[0] not in VERDICTS:
            problems.append(f"badge {b['text']!r} names no verdict ({b['classes']})")
        if kind != "status" and "attnbook-plain" not in b["classes"] \
                and "status/reproduction_status.html#claim-" not in b["href"]:
            problems.append(f"badge {b['text']!r} does not link to its status row")
    if kind == "theorem" and not badges:
        problems.append("a chapter with no claim badge (its claim check links to the ledger)")
    if kind == "status":
        overview = page.evaluate("""() => { const i = document.querySelector(
            '#status-overview img'); return i ? i.naturalWidth : -1; }""")
        if overview <= 0:
            problems.append("the status page has no overview figure (#status-overview img)")
        from attnbook.book.claims import load_ledger
        from attnbook.book.figures import claim_label

        ids = set(page.eval_on_selector_all("strong.attnbook-claim-id", "s => s.map(e => e.id)"))
        missing = sorted(c for c in load_ledger()["id"] if claim_label(c) not in ids)
        if missing:
            problems.append(f"claims with no anchored row on the status page: {missing}")
        if len(badges) < len(load_ledger()) * 3:
            problems.append(f"{len(badges)} verdict badges for {len(load_ledger())} claims x 3 "
                            "profiles")
        first = page.evaluate("""() => { const a = document.querySelector('article');
            const f = a && a.querySelector('figure, table'); return f ? f.tagName : ''; }""")
        if first != "FIGURE":
            problems.append(f"the status page does not open with its overview figure ({first})")
    return problems


def _check_page(context, server, name, path, kind):
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    page = context.new_page()
    console = []
    page.on("console", lambda m: console.append(f"console.{m.type}: {m.text}")
            if m.type == "error" else None)
    page.on("pageerror", lambda e: console.append(f"pageerror: {e}"))
    page.on("response", lambda r: console.append(f"HTTP {r.status}: {r.url}")
            if r.status >= 400 else None)
    page.on("requestfailed", lambda r: console.append(f"request failed: {r.url} ({r.failure})"))
    page.goto(urllib.parse.urljoin(server, path), wait_until="load")
    try:  # the checks below wait for what they check (images, MathJax) themselves
        page.wait_for_load_state("networkidle", timeout=15_000)
    except PlaywrightTimeout:  # chromium can report a page's network busy with nothing pending
        pass
    url = page.url
    problems = []

    # MathJax: loaded from the book itself, started, every formula typeset, none in error
    mj = page.evaluate(_MATHJAX)
    if mj["scripts"]:
        if not mj.get("started"):
            problems.append(f"MathJax did not start ({mj['scripts']})")
        if mj.get("errors"):
            problems.append(f"{mj['errors']} MathJax errors (mjx-merror)")
        if mj.get("raw"):
            problems.append(f"formulas left as TeX: {mj['raw'][:5]}")
        remote = [s for s in mj["scripts"] if not s.startswith(server)]
        if remote:
            problems.append(f"MathJax loaded from outside the book: {remote}")
    if kind in ("theorem", "status") and not mj.get("containers"):
        problems.append(f"a {kind} page with no typeset formula (mjx-container)")

    # every figure's image: its caption as alt text (not the file's path)
    for f in page.evaluate(_ALTS):
        if f["caption"] is None:
            continue
        caption = " ".join(f["caption"].split())
        for alt in f["alts"]:
            if " ".join((alt or "").split()) != caption:
                problems.append(f"figure {f['id']}: alt text {alt!r:.80} is not its caption "
                                f"{caption!r:.80}")

    # images: every one loaded
    images = page.evaluate(_IMAGES)
    problems += [f"image not loaded: {i['src']}" for i in images if not i["w"]]
    if kind == "figure" and not images:
        problems.append("a figure chapter with no image")

    # links: every local one resolves, and so does its #anchor
    hrefs = page.eval_on_selector_all("a[href]", "as => as.map(a => a.href)")
    for href in sorted(set(hrefs)):
        if not href.startswith(server):
            continue  # external, mailto:, javascript: ...
        target, _, anchor = href.partition("#")
        status, ids = _fetch(target)
        if status != 200:
            problems.append(f"link {href} -> HTTP {status}")
        elif anchor and urllib.parse.unquote(anchor) not in ids:
            problems.append(f"link {href}: no element with id {anchor!r} in {target}")
    if any("build/executed" in h for h in hrefs):
        problems.append("a link into build/executed/ (chapters are published under chapters/)")

    # layout: no sideways scrolling at the book's width
    scroll_width = page.evaluate("document.documentElement.scrollWidth")
    problems += _check_badges_and_figures(page, kind)
    if scroll_width > WIDTH + 1:
        wide = page.evaluate(f"""() => [...document.querySelectorAll('body *')]
            .filter(e => e.getBoundingClientRect().right > {WIDTH + 1})
            .slice(0, 5).map(e => e.tagName + '.' + e.className)""")
        problems.append(f"scrolls sideways: scrollWidth {scroll_width} > {WIDTH} ({wide})")

    # the status page: every column of its tables visible (none cut behind a scroll bar)
    if kind == "status":
        cut = page.evaluate("""() => [...document.querySelectorAll('article table')]
            .map(t => [t.parentElement.clientWidth, t.parentElement.scrollWidth])
            .filter(([client, scroll]) => scroll > client + 1)""")
        if cut:
            problems.append(f"status tables wider than the page (client, scroll widths): {cut}")

    problems += [f"verdict {c}" for c in page.evaluate(_CLIPPED, 0)]
    if kind in ("theorem", "figure", "chapter"):
        problems += page.evaluate(_RAW_OUTPUTS)
    if name == "home":
        problems += _check_home(page)

    if "build/" in url:  # no page's address shows the build folder
        problems.append(f"page address contains the build folder: {url}")
    # chapters: the injected-parameters cell left out, the parameters kept
    if kind in ("theorem", "figure", "chapter"):
        if page.locator(".tag_injected-parameters").count():
            problems.append("the papermill injected-parameters cell is shown")
        if "# Parameters" in page.inner_text("main"):
            problems.append("the injected '# Parameters' cell text is shown")
        if page.locator(".tag_parameters").count() != 1:
            problems.append("the chapter's parameters cell is not shown once")
        problems += _parameter_problems(page, path)
    # no test-harness comment (# NBVAL_...) on any page, folded code included
    problems += [f"a test-harness comment is shown: {h}" for h in page.evaluate(_HARNESS_TEXT)]

    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)
    recorded = _recorded_figures(path)
    problems += _check_phone(page, name, kind, recorded)
    problems += _overlapping_labels(recorded)
    page.close()
    problems += console
    return url, problems


@pytest.mark.parametrize("name", list(PAGES))
def test_page_in_a_real_browser(name, server, browser):
    path, kind = PAGES[name]
    t0 = time.perf_counter()
    url, problems = _check_page(browser, server, name, path, kind)
    assert not problems, (f"{url} ({time.perf_counter() - t0:.1f} s; screenshots "
                          f"{SHOTS / name}.png, {SHOTS / name}-phone.png):\n"
                          + "\n".join(problems))


def test_the_phone_checks_find_what_they_look_for(browser):
    """The checks of a page at 390 px, on a page made for them: a formula cut by a box that
    does not scroll, one that runs off the screen and one cut inside a closed dropdown are
    found, one that scrolls in its own box and one that fits are not; a harness comment in
    folded code is found; a figure with small text and no tap to its PNG, and one with no
    recorded text size, are found."""
    import base64
    import io

    from PIL import Image

    buf = io.BytesIO()
    Image.new("RGB", (1200, 40), "white").save(buf, format="PNG")
    png = "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode()
    wide = '<mjx-container><mjx-math style="display:inline-block;width:{}px">x</mjx-math>' \
           '</mjx-container>'
    page = browser.new_page()
    page.set_viewport_size({"width": PHONE[0], "height": PHONE[1]})
    page.set_content(f"""<html><body style="margin:8px; overflow-x:hidden"><article>
      <style>figure {{ margin: 0 40px; }}</style>
      <section id="cut"><div style="overflow:hidden;width:300px">{wide.format(500)}</div></section>
      <section id="off"><p>{wide.format(600)}</p></section>
      <section id="scrolls"><div style="overflow-x:auto;width:300px">{wide.format(500)}</div>
      </section>
      <section id="fits"><p>{wide.format(100)}</p></section>
      <section id="folded-math"><details><summary>table</summary>
        <div style="overflow:hidden;width:200px">{wide.format(300)}</div></details></section>
      <div class="cell" id="folded"><details><summary>code</summary>
        <pre># NBVAL_CHECK_OUTPUT\nrun.record("X", True, "ok")</pre></details></div>
      <figure class="attnbook-figure" id="fig-small"><img src="{png}" style="width:100%"></figure>
      <figure class="attnbook-figure" id="fig-linked"><a href="/_images/linked.png">
        <img src="{png}" style="width:100%"></a></figure>
      <figure class="attnbook-figure" id="fig-big"><img src="{png}" style="width:100%"></figure>
      <figure class="attnbook-figure" id="fig-unrecorded"><img src="{png}" style="width:100%">
      </figure>
    </article></body></html>""")
    try:
        cut = page.evaluate(_FORMULAS_CUT)
        assert len(cut) == 3, cut
        assert "in #cut" in cut[0] and "cut by div (overflow-x: hidden" in cut[0]
        assert "in #off" in cut[1] and "off the screen" in cut[1]
        assert "in #folded-math" in cut[2]  # in a dropdown a reader opens
        assert not page.evaluate("document.querySelector('#folded-math details').open")
        harness = page.evaluate(_HARNESS_TEXT)
        assert len(harness) == 1 and "# NBVAL_CHECK_OUTPUT" in harness[0] \
            and "div#folded.cell" in harness[0], harness
        small = {"phone_text_px": 4.0, "content_px": 342, "width": 800}
        recorded = {"fig-small": small, "fig-linked": small,
                    "fig-big": {**small, "phone_text_px": 12.0}}  # 12 * 294 / 342 px
        problems = _small_figures(page.evaluate(_PHONE_FIGURES), recorded)
        assert len(problems) == 2, problems
        assert problems[0].startswith("figure #fig-small: its smallest text is 3.4 px as shown")
        assert "no tap opens it full size" in problems[0]
        assert problems[1].startswith("figure #fig-unrecorded: no text size recorded")
        assert _overlapping_labels({"fig-clear": {"overlapping_labels": []},
                                    "fig-crowded": {"overlapping_labels": [["r=16", "r=96"]]},
                                    "fig-old": {}}) == [
            "figure #fig-crowded: labels print over each other: 'r=16' and 'r=96'",
            "figure #fig-old: no check of its labels recorded (run.savefig records "
            "overlapping_labels)"]
    finally:
        page.close()
