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
published under ``chapters/<work>/``, not under the build folder. A full-page screenshot of
each page at both widths goes to ``build/screenshots/`` (``<page>.png`` at 1400 px,
``<page>-phone.png`` at 390 px).

Run after the book is built (``make browser``, the last step of ``make test``); skipped when
``build/book/_build/html`` does not exist. Playwright drives the system chromium
(``/usr/bin/chromium``; ``apt-get install chromium``): it never downloads a browser.
"""

import functools
import http.server
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


def _check_phone(page, name, kind) -> list[str]:
    """The page at a phone's width: no sideways scroll; on the status page, every verdict
    badge on the screen; a full-page screenshot ``<name>-phone.png``."""
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
    page.screenshot(path=str(SHOTS / f"{name}-phone.png"), full_page=True)
    page.set_viewport_size({"width": WIDTH, "height": HEIGHT})
    return problems


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
        if "NBVAL_" in (page.text_content("main") or ""):  # folded code included
            problems.append("a test-harness comment (# NBVAL_...) is shown")

    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)
    problems += _check_phone(page, name, kind)
    page.close()
    problems += console
    return url, problems


@pytest.mark.parametrize("name", list(PAGES))
def test_page_in_a_real_browser(name, server, browser):
    path, kind = PAGES[name]
    t0 = time.perf_counter()
    url, problems = _check_page(browser, server, name, path, kind)
    assert not problems, f"{url} ({time.perf_counter() - t0:.1f} s):\n" + "\n".join(problems)
